// The playground's Analytics view (SPEC 16): what happened in a scenario's conversations.
//
// In: the answer of GET /dm/v1/report?scenario=NAME (the JSON of `mgi report`) and the
// scenario's Mermaid graph text. Out: DOM for the analytics pane: the summary figures, the
// funnel (sessions started, visits of each node in graph order, completions), bars per node
// (drop-offs, fallback rate) and the scenario's graph (drawn by graph.js, as in the graph
// pane) with each node shaded by its drop-off share, plus the figures as tables.
// After: nothing here calls the API; every chart is an <svg role="img"> with a title and its
// figures in a table with a caption; the graph's nodes take the keyboard focus and say their
// figures; the shades are classes (drop-0 .. drop-4), styled by playground.css (the page's
// Content-Security-Policy allows no inline style).

import {drawGraph, layout, parseMermaid} from "./graph.js";
import {h} from "./panes.js";

const SVG = "http://www.w3.org/2000/svg";
const BAR = 22, LABEL = 180, WIDTH = 560;
const percent = v => (v === null || v === undefined ? "-" : `${(100 * v).toFixed(1)}%`);

function svg(name, attributes = {}, text = null) {
  const made = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, value);
  if (text !== null) made.textContent = text;
  return made;
}

/** A horizontal bar chart of rows [label, value, text], bars of `kind`. */
function bars(id, title, rows, top, kind) {
  const height = BAR * rows.length + 10, span = WIDTH - LABEL - 60;
  const chart = svg("svg", {viewBox: `0 0 ${WIDTH} ${height}`, role: "img", class: "bars",
                            "aria-labelledby": id, width: WIDTH, height});
  chart.append(svg("title", {id}, title));
  rows.forEach(([label, value, text], i) => {
    const y = 5 + i * BAR, length = top ? Math.max(value ? 1 : 0, span * value / top) : 0;
    chart.append(svg("text", {x: LABEL - 6, y: y + 15, "text-anchor": "end"}, label),
                 svg("rect", {class: `bar ${kind}`, x: LABEL, y: y + 3, width: length,
                              height: BAR - 6}),
                 svg("text", {x: LABEL + length + 5, y: y + 15}, text));
  });
  return chart;
}

function table(caption, head, rows) {
  return h("table", {class: "figures"}, h("caption", {}, caption),
           h("thead", {}, h("tr", {}, head.map(c => h("th", {scope: "col"}, c)))),
           h("tbody", {}, rows.map(([first, ...rest]) =>
             h("tr", {}, h("th", {scope: "row"}, first), rest.map(c => h("td", {}, String(c)))))));
}

/** The report's version of the scenario the page shows (its IR hash), else the newest. */
function versionOf(report, irHash) {
  return report.scenarios.find(v => v.ir_hash === irHash) || report.scenarios.at(-1) || null;
}

export function analyticsView(report, graphText, irHash) {
  const version = versionOf(report, irHash);
  if (!version) return [h("p", {class: "help"}, `No events yet for ${report.scenario}.`)];
  const graph = parseMermaid(graphText);
  const nodes = new Map(version.nodes.map(n => [n.node, n]));
  const order = graph.nodes.map(n => n.id).filter(id => nodes.has(id));
  const s = version.sessions;
  const summary = [["Sessions started", s.started], ["Completed", s.completed],
                   ["Abandoned", s.abandoned], ["Active", s.active],
                   ["Completion rate", percent(version.completion_rate)],
                   ["Median turns to complete", version.median_turns_to_complete ?? "-"]];
  const funnel = [["sessions started", s.started, String(s.started)],
                  ...order.map(id => [id, nodes.get(id).visits, String(nodes.get(id).visits)]),
                  ["completed", s.completed, String(s.completed)]];
  const top = Math.max(0, ...funnel.map(r => r[1]));
  const drops = order.map(id => [id, nodes.get(id).drop_offs, String(nodes.get(id).drop_offs)]);
  const falls = order.map(id => [id, nodes.get(id).fallback_rate,
                                 percent(nodes.get(id).fallback_rate)]);
  return [
    h("p", {class: "help"}, `IR ${version.ir_hash.slice(0, 12)}, ${version.events} events, ` +
      `${version.first_event} to ${version.last_event}`),
    h("dl", {class: "summary-figures"}, summary.map(([name, value]) =>
      h("div", {}, h("dt", {}, name), h("dd", {}, String(value))))),
    h("h3", {}, "Funnel"),
    bars("analytics-funnel", "Funnel: sessions started, visits of each node, completions",
         funnel, top, "visits"),
    h("h3", {}, "Per node"),
    bars("analytics-drops", "Drop-offs per node", drops,
         Math.max(0, ...drops.map(r => r[1])), "drops"),
    bars("analytics-falls", "Fallback rate per node", falls, 1, "falls"),
    h("h3", {}, "The graph by drop-off"),
    h("div", {class: "graph-box fit analytics-graph"}, droppedGraph(graph, nodes)),
    table("Nodes", ["node", "visits", "turns", "drop-offs", "fallback rate"],
          order.map(id => { const n = nodes.get(id);
                            return [id, n.visits, n.turns, n.drop_offs, percent(n.fallback_rate)]; })),
    table("Transitions taken", ["from", "to", "times"],
          version.transitions.map(e => [e.from, e.to, e.count])),
    table("Safety events", ["category", "events"], Object.entries(version.safety)),
  ];
}

/** The scenario's graph, each node shaded by the share of its visits that ended there. */
function droppedGraph(graph, nodes) {
  const drawn = drawGraph(graph, layout(graph), "The graph coloured by drop-off");
  const title = drawn.querySelector("title");
  title.id = "analytics-graph-title";
  drawn.setAttribute("aria-labelledby", title.id);
  drawn.classList.add("by-drop-off");
  for (const g of drawn.querySelectorAll("g.node")) {
    const n = nodes.get(g.dataset.node);
    const share = n && n.visits ? n.drop_offs / n.visits : 0;
    g.classList.add(`drop-${Math.min(4, Math.ceil(share * 4))}`);
    g.setAttribute("tabindex", "0");
    g.setAttribute("aria-label", n ? `${g.dataset.node}: ${n.visits} visits, ${n.drop_offs} ` +
                                     `drop-offs (${percent(share)})` : `${g.dataset.node}: no visit`);
  }
  return drawn;
}
