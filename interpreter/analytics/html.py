"""The report as one self-contained HTML page with charts drawn here, as SVG (SPEC 16).

In: the figures of `Aggregator.report()`. Out: one HTML document: per scenario version the
summary, the funnel (visits per node in path order from the start, then completions), bars per
node (visits, drop-offs, fallback rate), the graph of the transitions taken with each node
coloured by its drop-off share, the transitions, safety and confidence, and kept utterances.
After: the page loads nothing (a Content-Security-Policy of `default-src 'none'` says so: it
opens offline, from a file or a mail attachment) and runs no script. Every chart is an
`<svg role="img">` with a title, and its figures are also a table, for a screen reader; the
graph's nodes take the keyboard focus and name themselves.

Why SVG drawn on the server rather than a charting library shipped as package data: the
charts are bars and one layered graph, a few dozen lines each; a library (Chart.js, Vega)
would add 200 KB or more of JavaScript to every page, a script to allow in the CSP, and a
dependency to keep up to date, for nothing a static picture does not show.
"""

from __future__ import annotations

from collections import deque
from html import escape
from typing import Any

from .render import percent

BAR = 22  # height of one bar, pixels
LABEL = 190  # width of the label column
WIDTH = 720
NODE_W, NODE_H, COL, ROW = 150, 40, 200, 64

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:980px;padding:1rem 1.5rem;
color:#1b1f24;background:#fff}h1{font-size:1.5rem}h2{font-size:1.25rem;margin-top:2.5rem;
border-top:2px solid #d0d7de;padding-top:1rem}h3{font-size:1.05rem;margin:1.6rem 0 .4rem}
dl.summary{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:.5rem}
dl.summary div{background:#f6f8fa;border-radius:6px;padding:.5rem .7rem}
dl.summary dt{font-size:.8rem;color:#57606a}dl.summary dd{margin:0;font-size:1.3rem;
font-weight:600}svg{max-width:100%;height:auto;display:block}svg text{font-size:12px;
fill:#1b1f24}.bar{fill:#0969da}.drop{fill:#cf222e}.fall{fill:#bf8700}.done{fill:#1a7f37}
table{border-collapse:collapse;margin:.4rem 0;font-size:.9rem}caption{text-align:left;
font-weight:600;padding:.3rem 0}th,td{border:1px solid #d0d7de;padding:.2rem .5rem;
text-align:left}td.n{text-align:right}g.node:focus{outline:none}g.node:focus rect{
stroke:#0969da;stroke-width:3}a:focus,summary:focus{outline:3px solid #0969da}
.edge{stroke:#8c959f;fill:none}.muted{color:#57606a}
"""


def render_html(report: dict[str, Any]) -> str:
    versions = report["scenarios"]
    nav = "".join(f'<li><a href="#v{i}">{escape(v["scenario"])} '
                  f'<span class="muted">({v["ir_hash"][:12]})</span></a></li>'
                  for i, v in enumerate(versions))
    lost = (f'<p role="alert">{report["events_lost"]} events were lost: a store stream '
            "reached its cap.</p>" if report["events_lost"] else "")
    body = "".join(version_html(i, v) for i, v in enumerate(versions)) or \
        "<p>No events.</p>"
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\"><meta name=\"viewport\" "
        "content=\"width=device-width, initial-scale=1\">"
        f"<title>Mago report</title><style>{STYLE}</style></head><body>"
        f"<header><h1>What happened</h1><p>{report['events']} events, since "
        f"{escape(report['since'] or 'the first')}, as of {escape(report['now'])}; a session "
        f"quiet for {report['abandon_after_seconds'] / 60:g} minutes and not complete is "
        f"abandoned.</p>{lost}<nav aria-label=\"Scenario versions\"><ul>{nav}</ul></nav>"
        f"</header><main>{body}</main></body></html>")


def version_html(index: int, version: dict[str, Any]) -> str:
    sessions = version["sessions"]
    figures = [("Sessions started", sessions["started"]), ("Completed", sessions["completed"]),
               ("Abandoned", sessions["abandoned"]), ("Active", sessions["active"]),
               ("Completion rate", percent(version["completion_rate"])),
               ("Median turns to complete", version["median_turns_to_complete"] or "-")]
    summary = "".join(f"<div><dt>{name}</dt><dd>{escape(str(value))}</dd></div>"
                      for name, value in figures)
    key = f"v{index}"
    return (f'<section id="{key}" aria-labelledby="{key}h"><h2 id="{key}h">'
            f'{escape(version["scenario"])} <span class="muted">IR {version["ir_hash"][:12]}'
            f"</span></h2><p class=\"muted\">{escape(version['first_event'] or '')} to "
            f"{escape(version['last_event'] or '')}</p><dl class=\"summary\">{summary}</dl>"
            + funnel(key, version) + node_bars(key, version) + graph(key, version)
            + details(key, version) + "</section>")


def path_order(version: dict[str, Any]) -> list[str]:
    """Nodes in breadth-first order along the transitions taken from the most visited node
    that sessions start in; nodes never reached from it after them."""
    edges: dict[str, list[str]] = {}
    for edge in version["transitions"]:
        edges.setdefault(edge["from"], []).append(edge["to"])
    names = [n["node"] for n in version["nodes"]]
    entered = {edge["to"] for edge in version["transitions"]}
    starts = [n for n in names if n not in entered] or names[:1]
    seen: list[str] = []
    queue = deque(starts)
    while queue:
        node = queue.popleft()
        if node in seen:
            continue
        seen.append(node)
        queue.extend(edges.get(node, []))
    return seen + [n for n in names if n not in seen]


def bars(title: str, key: str, rows: list[tuple[str, float, str, str]], top: float) -> str:
    """A horizontal bar chart: (label, value, class, value text) per row."""
    height = BAR * len(rows) + 10
    span = WIDTH - LABEL - 70
    parts = [f'<svg role="img" aria-labelledby="{key}" viewBox="0 0 {WIDTH} {height}" '
             f'width="{WIDTH}" height="{height}"><title id="{key}">{escape(title)}</title>']
    for i, (label, value, kind, text) in enumerate(rows):
        y = 5 + i * BAR
        length = 0 if not top else max(1.0, span * value / top) if value else 0
        parts.append(f'<text x="{LABEL - 6}" y="{y + 15}" text-anchor="end">{escape(label)}'
                     f'</text><rect class="{kind}" x="{LABEL}" y="{y + 3}" width="'
                     f'{length:.1f}" height="{BAR - 6}"/><text x="{LABEL + length + 5:.1f}" '
                     f'y="{y + 15}">{escape(text)}</text>')
    return "".join(parts) + "</svg>"


def funnel(key: str, version: dict[str, Any]) -> str:
    nodes = {n["node"]: n for n in version["nodes"]}
    rows = [("sessions started", version["sessions"]["started"], "bar",
             str(version["sessions"]["started"]))]
    rows += [(node, nodes[node]["visits"], "bar", str(nodes[node]["visits"]))
             for node in path_order(version)]
    rows.append(("completed", version["sessions"]["completed"], "done",
                 str(version["sessions"]["completed"])))
    top = max((value for _, value, _, _ in rows), default=0)
    return ("<h3>Funnel</h3>" + bars("Funnel: sessions started, visits of each node in path "
                                     "order, sessions completed", f"{key}f", rows, top))


def node_bars(key: str, version: dict[str, Any]) -> str:
    named = {n["node"]: n for n in version["nodes"]}
    nodes = [named[node] for node in path_order(version)]
    drops = [(n["node"], n["drop_offs"], "drop", str(n["drop_offs"])) for n in nodes]
    falls = [(n["node"], n["fallback_rate"], "fall", percent(n["fallback_rate"]))
             for n in nodes]
    table = "".join(f'<tr><th scope="row">{escape(n["node"])}</th><td class="n">{n["visits"]}'
                    f'</td><td class="n">{n["turns"]}</td><td class="n">{n["drop_offs"]}</td>'
                    f'<td class="n">{percent(n["fallback_rate"])}</td><td>'
                    + escape(", ".join(f"{r} {c}" for r, c in n["exits"].items()))
                    + "</td></tr>" for n in nodes)
    return ("<h3>Per node</h3><p>Drop-offs: where abandoned sessions stopped.</p>"
            + bars("Drop-offs per node (the last node of abandoned sessions)", f"{key}d",
                   drops, max((n["drop_offs"] for n in nodes), default=0))
            + "<p>Fallback rate: the share of a node's turns that were silent or not "
              "understood.</p>"
            + bars("Fallback rate per node (turns not understood or silent)", f"{key}r",
                   falls, 1.0)
            + '<table><caption>Nodes</caption><thead><tr><th scope="col">node</th>'
              '<th scope="col">visits</th><th scope="col">turns</th><th scope="col">'
              'drop-offs</th><th scope="col">fallback rate</th><th scope="col">exits by '
              f"reason</th></tr></thead><tbody>{table}</tbody></table>")


def colour(share: float) -> str:
    """White to red as the drop-off share goes from 0 to 1."""
    fade = round(255 - 180 * min(1.0, share))
    return f"rgb(255,{fade},{fade})"


def graph(key: str, version: dict[str, Any]) -> str:
    """The nodes in columns by their distance from the start, the transitions taken between
    them (the width says how often), each node filled by its drop-off share."""
    order = path_order(version)
    depth = {order[0]: 0} if order else {}
    for edge in version["transitions"]:  # breadth-first order: a source is placed first
        if edge["from"] in depth and edge["to"] not in depth:
            depth[edge["to"]] = depth[edge["from"]] + 1
    rows: dict[int, int] = {}
    place: dict[str, tuple[int, int]] = {}
    for node in order:
        column = depth.setdefault(node, max(depth.values(), default=0) + 1)
        place[node] = (20 + column * COL, 20 + rows.get(column, 0) * ROW)
        rows[column] = rows.get(column, 0) + 1
    width = max((x for x, _ in place.values()), default=0) + NODE_W + 20
    height = max((y for _, y in place.values()), default=0) + NODE_H + 20
    top = max((e["count"] for e in version["transitions"]), default=1)
    parts = [f'<svg class="flow" role="img" aria-labelledby="{key}g" viewBox="0 0 {width} '
             f'{height}" width="{width}" height="{height}"><title id="{key}g">The graph of '
             "the transitions taken; a redder node lost more of its visitors</title><defs>"
             f'<marker id="{key}a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" '
             'markerHeight="9" markerUnits="userSpaceOnUse" orient="auto">'
             '<path d="M0 0L10 5L0 10z" fill="#8c959f"/>'
             "</marker></defs>"]
    for edge in version["transitions"]:
        (x1, y1), (x2, y2) = place[edge["from"]], place[edge["to"]]
        start = (x1 + NODE_W, y1 + NODE_H / 2) if x2 > x1 else (x1, y1 + NODE_H / 2)
        end = (x2, y2 + NODE_H / 2) if x2 > x1 else (x2 + NODE_W, y2 + NODE_H / 2)
        bend = (start[0] + end[0]) / 2, min(start[1], end[1]) - (0 if x2 > x1 else 30)
        stroke = 1 + 5 * edge["count"] / top
        parts.append(f'<path class="edge" data-from="{escape(edge["from"])}" data-to="'
                     f'{escape(edge["to"])}" d="M{start[0]:.0f} {start[1]:.0f} Q{bend[0]:.0f} '
                     f'{bend[1]:.0f} {end[0]:.0f} {end[1]:.0f}" stroke-width="{stroke:.1f}" '
                     f'marker-end="url(#{key}a)"><title>{escape(edge["from"])} to '
                     f'{escape(edge["to"])}: {edge["count"]}</title></path>')
    for node in version["nodes"]:
        x, y = place[node["node"]]
        share = node["drop_offs"] / node["visits"] if node["visits"] else 0.0
        name = escape(node["node"])
        parts.append(f'<g class="node" tabindex="0" role="img" data-node="{name}" '
                     f'aria-label="{name}: {node["visits"]} visits, {node["drop_offs"]} '
                     f'drop-offs ({percent(share)})"><rect x="{x}" y="{y}" width="{NODE_W}" '
                     f'height="{NODE_H}" rx="6" fill="{colour(share)}" stroke="#57606a"/>'
                     f'<text x="{x + 8}" y="{y + 16}">{escape(node["node"][:22])}</text>'
                     f'<text x="{x + 8}" y="{y + 32}">{node["visits"]} in, '
                     f'{node["drop_offs"]} lost</text></g>')
    return "<h3>Graph coloured by drop-off</h3>" + "".join(parts) + "</svg>"


def details(key: str, version: dict[str, Any]) -> str:
    edges = "".join(f'<tr><td>{escape(e["from"])}</td><td>{escape(e["to"])}</td><td class="n">'
                    f'{e["count"]}</td><td>' + escape(", ".join(
                        f"{r} {c}" for r, c in e["reasons"].items())) + "</td></tr>"
                    for e in version["transitions"])
    safety = "".join(f'<tr><td>{escape(c)}</td><td class="n">{n}</td></tr>'
                     for c, n in version["safety"].items()) or \
        '<tr><td colspan="2">none</td></tr>'
    bins = version["confidence"]["bins"]
    confidence = [(f"{b['from']:.1f} to {b['to']:.1f}", b["count"], "bar", str(b["count"]))
                  for b in bins] + [("not given", version["confidence"]["none"], "bar",
                                     str(version["confidence"]["none"]))]
    kept = "".join(f"<h4>{escape(node)}</h4><ol>" + "".join(
        f"<li>{escape(t['text'])} <span class=\"muted\">x{t['count']}</span></li>"
        for t in texts) + "</ol>" for node, texts in version["unmatched"].items())
    return ('<h3>Transitions</h3><table><caption>Times each transition was taken</caption>'
            '<thead><tr><th scope="col">from</th><th scope="col">to</th><th scope="col">'
            f'times</th><th scope="col">reasons</th></tr></thead><tbody>{edges}</tbody>'
            '</table><h3>Safety</h3><table><caption>Safety events by category</caption>'
            '<thead><tr><th scope="col">category</th><th scope="col">events</th></tr></thead>'
            f"<tbody>{safety}</tbody></table><h3>Confidence</h3>"
            + bars("Confidence of the NLU's readings", f"{key}c", confidence,
                   max((c for _, c, _, _ in confidence), default=0))
            + (f"<h3>Not understood (kept, masked)</h3>{kept}" if kept else ""))
