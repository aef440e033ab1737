// The graph pane: the Mermaid text of `GET /dm/v1/scenarios/{name}/graph` (the text of
// `mgc graph`, drawn by interpreter/graph.py) parsed, laid out in layers and drawn as SVG.
//
// In: that text (only the lines graph.py writes: nodes, edges, class lines). Out: an <svg>
// whose nodes are <g class="node" data-node="ID"> and whose edges are <g class="edge"
// data-source data-target>, so `highlight` can mark the current node and the transitions
// just taken by name. Layout (a small Sugiyama): cycles broken by a depth-first search from
// the first node, layers by longest path, long edges through dummy points, crossings reduced
// by barycentre sweeps, x by the mean of the neighbours. The "any node" pseudo-node sits in
// a left gutter and its dashed rules run down the gutter and along the gaps between layers,
// so they never cross a node.

export const ANY_NODE = "__any_node__";
const SVG = "http://www.w3.org/2000/svg";
const NODE_LINE = /^\s+(\S+?)(\["(.*)"\]|\(\["(.*)"\]\)|\{\{"(.*)"\}\})$/;
const EDGE_LINE = /^\s+(\S+) (-->|-\.->)(?:\|"(.*)"\|)? (\S+)$/;
const GAP_X = 28, GAP_Y = 64, PAD_X = 14, LINE_H = 18, MARGIN = 16, GUTTER = 40;
const FONT = "14px system-ui, 'Noto Sans CJK KR', sans-serif";
const SMALL_FONT = "12px ui-monospace, monospace";

/** Nodes [{id, lines, end, any}] and edges [{source, target, label, dashed}] of the text. */
export function parseMermaid(text) {
  const nodes = [], edges = [];
  for (const line of text.split("\n")) {
    let found = EDGE_LINE.exec(line);
    if (found) {
      edges.push({source: found[1], target: found[4], label: unquote(found[3] || ""),
                  dashed: found[2] === "-.->", index: edges.length});
      continue;
    }
    found = NODE_LINE.exec(line);
    if (found) {
      const label = unquote(found[3] ?? found[4] ?? found[5]);
      nodes.push({id: found[1], lines: label.split("<br/>"), end: found[4] !== undefined,
                  any: found[1] === ANY_NODE});
    }
  }
  return {nodes, edges};
}

function unquote(text) {
  return text.replaceAll("#quot;", '"');
}

/** Positions: {width, height, nodes: Map id -> {x, y, w, h}, edges: [{edge, points}]}. */
export function layout(graph, measure = textWidth) {
  const real = graph.nodes.filter(n => !n.any);
  const sizes = new Map(real.map(n => [n.id, nodeSize(n, measure)]));
  const inner = graph.edges.filter(e => e.source !== ANY_NODE && e.source !== e.target &&
                                        sizes.has(e.source) && sizes.has(e.target));
  const rank = layers(real, inner);
  const {order, chains, links} = withDummies(real, inner, rank);
  reduceCrossings(order, links);
  const x = placeX(order, links, sizes);
  const depth = order.length;
  const rowY = [];
  let y = MARGIN + (graph.nodes.some(n => n.any) ? 44 + GAP_Y / 2 : 0);
  for (let r = 0; r < depth; r++) {
    const tallest = Math.max(...order[r].map(v => sizes.get(v)?.h ?? 0), 0);
    rowY.push(y + tallest / 2);
    y += tallest + GAP_Y;
  }
  const placed = new Map();
  for (let r = 0; r < depth; r++) {
    for (const v of order[r]) {
      const size = sizes.get(v) ?? {w: 0, h: 0};
      placed.set(v, {x: x.get(v), y: rowY[r], w: size.w, h: size.h, rank: r});
    }
  }
  shiftRight(placed, GUTTER + MARGIN);
  const width = Math.max(...[...placed.values()].map(p => p.x + p.w / 2 + 48), 240);
  const result = {width, height: y - GAP_Y + MARGIN + 24, nodes: new Map(), edges: [],
                  rowY, placed};
  for (const n of real) result.nodes.set(n.id, placed.get(n.id));
  if (graph.nodes.some(n => n.any)) {
    result.nodes.set(ANY_NODE, {x: MARGIN + 44, y: MARGIN + 22, w: 88, h: 44});
  }
  for (const edge of graph.edges) result.edges.push({edge, points: route(edge, result, chains)});
  return result;
}

function nodeSize(node, measure) {
  const widths = node.lines.map((line, i) => measure(line, i === 1 ? SMALL_FONT : FONT));
  return {w: Math.ceil(Math.max(...widths, 40)) + 2 * PAD_X,
          h: node.lines.length * LINE_H + 14};
}

let canvas = null;
function textWidth(text, font) {
  canvas = canvas || document.createElement("canvas");
  const context = canvas.getContext("2d");
  context.font = font;
  return context.measureText(text).width;
}

/** Layer of every node: longest path over the edges once back edges are reversed. */
function layers(nodes, edges) {
  const ids = nodes.map(n => n.id);
  const next = new Map(ids.map(id => [id, []]));
  for (const e of edges) next.get(e.source).push(e);
  const state = new Map(), back = new Set();
  const visit = start => {  // iterative DFS: a 2000-node chain must not overflow the stack
    const stack = [[start, 0]];
    state.set(start, 1);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const out = next.get(top[0]);
      if (top[1] >= out.length) { state.set(top[0], 2); stack.pop(); continue; }
      const e = out[top[1]++];
      if (state.get(e.target) === 1) back.add(e);
      else if (!state.has(e.target)) { state.set(e.target, 1); stack.push([e.target, 0]); }
    }
  };
  ids.forEach(id => state.has(id) || visit(id));
  const forward = edges.map(e => back.has(e) ? {source: e.target, target: e.source} : e);
  const incoming = new Map(ids.map(id => [id, 0]));
  const out = new Map(ids.map(id => [id, []]));
  for (const e of forward) {
    incoming.set(e.target, incoming.get(e.target) + 1);
    out.get(e.source).push(e.target);
  }
  const rank = new Map(ids.map(id => [id, 0]));
  const ready = ids.filter(id => incoming.get(id) === 0);
  while (ready.length) {
    const v = ready.shift();
    for (const w of out.get(v)) {
      rank.set(w, Math.max(rank.get(w), rank.get(v) + 1));
      incoming.set(w, incoming.get(w) - 1);
      if (incoming.get(w) === 0) ready.push(w);
    }
  }
  return rank;
}

/** Layers as ordered lists of vertex names (dummies `~i~k` for edges over several layers),
 * for each edge the vertices it passes through, top to bottom, and each vertex's
 * neighbours in the layer above (`up`) and below (`down`). */
function withDummies(nodes, edges, rank) {
  const depth = Math.max(0, ...rank.values()) + 1;
  const order = Array.from({length: depth}, () => []);
  nodes.forEach(n => order[rank.get(n.id)].push(n.id));
  const chains = new Map();
  for (const e of edges) {
    const down = rank.get(e.source) <= rank.get(e.target);
    const [top, bottom] = down ? [e.source, e.target] : [e.target, e.source];
    const chain = [top];
    for (let r = rank.get(top) + 1; r < rank.get(bottom); r++) {
      const dummy = `~${e.index}~${r}`;
      order[r].push(dummy);
      chain.push(dummy);
    }
    chain.push(bottom);
    chains.set(e.index, chain);
  }
  return {order, chains, links: neighbours(chains)};
}

function neighbours(chains) {
  const up = new Map(), down = new Map();
  const add = (map, key, value) => (map.get(key) || map.set(key, []).get(key)).push(value);
  for (const chain of chains.values()) {
    for (let i = 1; i < chain.length; i++) {
      add(up, chain[i], chain[i - 1]);
      add(down, chain[i - 1], chain[i]);
    }
  }
  return {up, down};
}

function reduceCrossings(order, {up, down}) {
  for (let sweep = 0; sweep < 6; sweep++) {
    const downward = sweep % 2 === 0;
    const ranks = [...order.keys()];
    for (const r of downward ? ranks.slice(1) : ranks.slice(0, -1).reverse()) {
      const other = order[downward ? r - 1 : r + 1];
      const at = new Map(other.map((v, i) => [v, i]));
      const links = downward ? up : down;
      const centre = v => {
        const seen = (links.get(v) || []).filter(w => at.has(w)).map(w => at.get(w));
        return seen.length ? seen.reduce((a, b) => a + b, 0) / seen.length : null;
      };
      const keyed = order[r].map((v, i) => [v, centre(v) ?? i]);
      keyed.sort((a, b) => a[1] - b[1]);
      order[r] = keyed.map(k => k[0]);
    }
  }
}

/** x of every vertex: packed, then pulled towards the mean of its neighbours, in order. */
function placeX(order, {up, down}, sizes) {
  const width = v => sizes.get(v)?.w ?? 8;
  const x = new Map();
  for (const row of order) {
    let at = 0;
    for (const v of row) { x.set(v, at + width(v) / 2); at += width(v) + GAP_X; }
  }
  for (let pass = 0; pass < 8; pass++) {
    const links = pass % 2 === 0 ? up : down;
    const ranks = pass % 2 === 0 ? order : [...order].reverse();
    for (const row of ranks) {
      const wanted = row.map(v => {
        const near = (links.get(v) || []).map(w => x.get(w));
        return near.length ? near.reduce((a, b) => a + b, 0) / near.length : x.get(v);
      });
      settle(row, wanted, width, x);
    }
  }
  return x;
}

/** Each vertex of a row as near its wanted x as the order and the gaps allow. */
function settle(row, wanted, width, x) {
  const placed = wanted.slice();
  for (let i = 1; i < row.length; i++) {
    const least = placed[i - 1] + (width(row[i - 1]) + width(row[i])) / 2 + GAP_X;
    placed[i] = Math.max(placed[i], least);
  }
  const drift = placed.reduce((sum, p, i) => sum + p - wanted[i], 0) / Math.max(row.length, 1);
  row.forEach((v, i) => x.set(v, placed[i] - drift));
}

function shiftRight(placed, left) {
  const least = Math.min(...[...placed.values()].map(p => p.x - p.w / 2));
  for (const p of placed.values()) p.x += left - least;
}

/** The points an edge is drawn through, from its source to its target. */
function route(edge, result, chains) {
  const from = result.nodes.get(edge.source), to = result.nodes.get(edge.target);
  if (!from || !to) return [];
  if (edge.source === edge.target) return [[from.x + from.w / 2, from.y]];  // a loop
  if (edge.source === ANY_NODE) {
    const above = to.y - to.h / 2 - GAP_Y / 2 + 6 + 4 * (edge.index % 5);
    return [[from.x - 20, from.y + from.h / 2], [MARGIN + 4, above], [to.x, above],
            [to.x, to.y - to.h / 2]];
  }
  const chain = chains.get(edge.index).map(v => {
    const p = result.placed.get(v);
    return [p.x, p.y];
  });
  const downward = from.y < to.y;
  if (!downward) chain.reverse();
  const sign = downward ? 1 : -1;
  chain[0] = [from.x, from.y + sign * from.h / 2];
  chain[chain.length - 1] = [to.x, to.y - sign * to.h / 2];
  return chain;
}

/** The <svg> of a laid-out graph; `title` labels it for screen readers. */
export function drawGraph(graph, placed, title) {
  const svg = element("svg", {viewBox: `0 0 ${placed.width} ${placed.height}`, role: "img",
                              width: placed.width, height: placed.height,
                              "aria-labelledby": "graph-svg-title", class: "graph"});
  svg.append(element("title", {id: "graph-svg-title"}, title), markers());
  const edges = element("g", {class: "edges"}), nodes = element("g", {class: "nodes"});
  for (const {edge, points} of placed.edges) edges.append(drawEdge(edge, points));
  for (const node of graph.nodes) {
    const at = placed.nodes.get(node.id);
    if (at) nodes.append(drawNode(node, at));
  }
  svg.append(edges, nodes);
  return svg;
}

function markers() {
  const defs = element("defs");
  for (const [id, kind] of [["arrow", "plain"], ["arrow-taken", "taken"]]) {
    const marker = element("marker", {id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
                                      markerHeight: 7, orient: "auto-start-reverse"});
    marker.append(element("path", {d: "M0,0 L10,5 L0,10 z", class: `arrowhead ${kind}`}));
    defs.append(marker);
  }
  return defs;
}

function drawEdge(edge, points) {
  const kind = `edge${edge.dashed ? " dashed" : ""}${edge.source === ANY_NODE ? " any" : ""}`;
  const g = element("g", {class: kind, "data-source": edge.source, "data-target": edge.target,
                          "data-index": edge.index});
  const path = element("path", {d: pathOf(edge, points), "marker-end": "url(#arrow)"});
  const text = edge.label || "(always)";
  g.append(element("title", {}, `${edge.source} → ${edge.target}: ${text}`), path);
  if (edge.label && points.length) {
    const [lx, ly] = labelPoint(edge, points);
    const shown = edge.label.length > 32 ? edge.label.slice(0, 31) + "…" : edge.label;
    g.append(element("text", {x: lx, y: ly, class: "edge-label"}, shown));
  }
  return g;
}

function pathOf(edge, points) {
  if (!points.length) return "";
  if (edge.source === edge.target) {
    const [x, y] = points[0];
    return `M${x},${y - 8} C${x + 34},${y - 26} ${x + 34},${y + 26} ${x},${y + 8}`;
  }
  if (edge.source === ANY_NODE) return "M" + points.map(p => p.join(",")).join(" L");
  let d = `M${points[0][0]},${points[0][1]}`;
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1], [x1, y1] = points[i];
    const bend = (y1 - y0) / 2;
    d += ` C${x0},${y0 + bend} ${x1},${y1 - bend} ${x1},${y1}`;
  }
  return d;
}

function labelPoint(edge, points) {
  if (edge.source === edge.target) return [points[0][0] + 38, points[0][1] + 4];
  if (edge.source === ANY_NODE) return [points[2][0] + 6, points[2][1] - 4];
  const i = Math.floor((points.length - 1) / 2);
  const [x0, y0] = points[i], [x1, y1] = points[i + 1] || points[i];
  return [(x0 + x1) / 2 + 6, (y0 + y1) / 2];
}

function drawNode(node, at) {
  const kind = node.any ? "any" : node.end ? "end" : "plain";
  const g = element("g", {class: `node ${kind}`, "data-node": node.id,
                          transform: `translate(${at.x - at.w / 2},${at.y - at.h / 2})`});
  const shape = node.any
    ? element("polygon", {points: hexagon(at.w, at.h)})
    : element("rect", {width: at.w, height: at.h, rx: node.end ? at.h / 2 : 6});
  const text = element("text", {x: at.w / 2, y: 7 + LINE_H * 0.75});
  node.lines.forEach((line, i) => {
    const kind = i === 1 ? "node-id" : i ? "node-note" : "node-name";
    text.append(element("tspan", {x: at.w / 2, dy: i ? LINE_H : 0, class: kind}, line));
  });
  g.append(element("title", {}, node.lines.join(" · ")), shape, text);
  return g;
}

function hexagon(w, h) {
  const c = 12;
  return `${c},0 ${w - c},0 ${w},${h / 2} ${w - c},${h} ${c},${h} 0,${h / 2}`;
}

function element(name, attributes = {}, text = null) {
  const made = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, value);
  if (text !== null) made.textContent = text;
  return made;
}

/** Mark the current node, the nodes visited and the edges of the last turn. */
export function highlight(svg, {current = null, visited = new Set(), taken = []} = {}) {
  for (const g of svg.querySelectorAll("g.node")) {
    const id = g.dataset.node;
    g.classList.toggle("current", id === current);
    g.classList.toggle("visited", visited.has(id) && id !== current);
    if (id === current) g.setAttribute("aria-current", "step");
    else g.removeAttribute("aria-current");
  }
  const marked = new Set(taken.map(e => String(e.index)));
  for (const g of svg.querySelectorAll("g.edge")) {
    const on = marked.has(g.dataset.index);
    g.classList.toggle("taken", on);
    g.querySelector("path").setAttribute("marker-end", on ? "url(#arrow-taken)" : "url(#arrow)");
    if (on) g.parentNode.append(g);  // drawn last: on top of the others
  }
}

/** The edge of a hop `from -> to` left for `reason` (null when the graph has none):
 * globals and safety rules come from "any node", a stay is a loop, and of several edges
 * between two nodes the one whose label is the fired rule's condition. */
export function edgeOf(graph, from, to, reason, condition) {
  if (to === null || to === undefined) return null;
  const rule = reason.replace(/^stay:/, "");
  if (/^(global[:[]|safety:)/.test(reason)) {
    const named = label => label === rule || label.startsWith(rule + ":") ||
                           label.startsWith(rule + " ");  // `global:x: ...`, `safety:c (first)`
    return graph.edges.find(e => e.source === ANY_NODE && e.target === to && named(e.label)) ||
           null;
  }
  const between = graph.edges.filter(e => e.source === from && e.target === to);
  if (between.length < 2 || condition === undefined) return between[0] || null;
  const label = reason.startsWith("stay:") ? `stay ${condition || ""}`.trim() : condition || "";
  return between.find(e => e.label === label) || between[0];
}
