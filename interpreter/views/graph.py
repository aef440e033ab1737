"""Graph views of a program: the Mermaid and DOT text of `mgc graph` and of the service's
`GET /dm/v1/scenarios/{name}/graph` (SPEC 12).

In: an `ir.Program` (from a scenario just compiled, or from an IR file). Out: text.
Static edges (`next_nodes` targets, `default_next`) are solid; runtime rules are dashed:
stays as self-loops and global transitions from a pseudo-node "any node", as in the seed
diagrams; `graph.safety` rules (SPEC 10) likewise, from "any node", labelled
`safety:CATEGORY (first)`, dashed (bold red in DOT). End nodes are drawn as stadiums (Mermaid)
or double circles (DOT) and say whether they are explicit (`terminal: true`) or inferred (no
outgoing edge). A transient node (SPEC 8.3: it never waits) has a dashed border and says so;
a node with a skill names it, and a node that clears slots on entry says which (SPEC 8.5).
After: pure functions of the program, importing nothing but `ir`: the compiler's `mgc graph`
and the service draw the same text, and the service never loads the compiler for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from .. import ir

ANY_NODE = "__any_node__"


def edges(program: ir.Program) -> Iterator[tuple[str, str, str, bool]]:
    """(source, target, label, dashed) for every transition of the program (safety rules:
    `safety_edges`)."""
    for node in program.nodes:
        for row in node.transitions:
            entry = program.source_map[row.source]
            target = node.id if row.target == ir.STAY else program.nodes[row.target].id
            label = entry.display if row.target != ir.STAY else f"stay {entry.display}".strip()
            yield node.id, target, label, row.target == ir.STAY
    for rule in program.global_transitions:
        entry = program.source_map[rule.source]
        label = f"{entry.label}: {entry.display}"
        yield ANY_NODE, program.nodes[rule.target].id, label, True


def safety_edges(program: ir.Program) -> Iterator[tuple[str, str]]:
    """(target, label) for every safety rule: it fires first, from any node."""
    for rule in program.safety:
        name = f" {rule.name}" if rule.name else ""
        yield program.nodes[rule.target].id, f"{ir.SAFETY_REASON}{rule.category}{name} (first)"


def webhook_nodes(program: ir.Program) -> set[str]:
    """The ids of the nodes whose skill is a declared webhook (SPEC 15): drawn as a call out
    (a subroutine box in Mermaid, a component in DOT), labelled `webhook: NAME`."""
    hooks = {d.name for d in program.skills if d.kind == "webhook"}
    return {n.id for n in program.nodes if n.skill in hooks} if hooks else set()


def node_label(node: ir.Node, webhook: bool = False) -> str:
    title = node.name if node.name and node.name != node.id else node.id
    text = f"{title}<br/>{node.id}" if title != node.id else node.id
    if node.end:
        text += f"<br/>end ({ir.END_NAMES[node.end]})"
    if node.transient:
        text += "<br/>transient"
    if node.skill:
        text += f"<br/>{'webhook' if webhook else 'skill'}: {node.skill}"
    if node.clear_slots:
        text += "<br/>clears slots"
    return text


def mermaid(program: ir.Program) -> str:
    lines = ["flowchart TD"]
    hooks = webhook_nodes(program)
    for node in program.nodes:
        label = _mermaid_text(node_label(node, node.id in hooks))
        shape = '(["{}"])' if node.end else '[["{}"]]' if node.id in hooks else '["{}"]'
        lines.append(f"    {node.id}{shape.format(label)}")
    if program.global_transitions or program.safety:
        lines.append(f'    {ANY_NODE}{{{{"any node"}}}}')
    for source, target, label, dashed in edges(program):
        arrow = "-.->" if dashed else "-->"
        text = f'|"{_mermaid_text(label)}"|' if label else ""
        lines.append(f"    {source} {arrow}{text} {target}")
    for target, label in safety_edges(program):
        lines.append(f'    {ANY_NODE} -.->|"{_mermaid_text(label)}"| {target}')
    lines.append("    classDef endNode stroke-width:3px")
    ends = [n.id for n in program.nodes if n.end]
    if ends:
        lines.append(f"    class {','.join(ends)} endNode")
    passing = [n.id for n in program.nodes if n.transient]
    if passing:
        lines.append("    classDef transientNode stroke-dasharray:5 5")
        lines.append(f"    class {','.join(passing)} transientNode")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Text inside a quoted Mermaid label: a quote or a line break in a name must not end
    the label or the line (it would inject lines into the diagram)."""
    return " ".join(text.replace('"', "#quot;").splitlines())


def dot(program: ir.Program) -> str:
    lines = [f"digraph {json.dumps(program.name)} {{", "    rankdir=TB;", "    node [shape=box];"]
    hooks = webhook_nodes(program)
    for node in program.nodes:
        label = node_label(node, node.id in hooks).replace("<br/>", "\\n")
        shape = ", shape=doublecircle" if node.end else ", shape=component" \
            if node.id in hooks else ""
        shape += ", style=dashed" if node.transient else ""
        lines.append(f"    {json.dumps(node.id)} [label={json.dumps(label, ensure_ascii=False)}{shape}];")
    if program.global_transitions or program.safety:
        lines.append(f'    {json.dumps(ANY_NODE)} [label="any node", shape=hexagon, style=dashed];')
    for source, target, label, dashed in edges(program):
        attrs = [f"label={json.dumps(label, ensure_ascii=False)}"] if label else []
        if dashed:
            attrs.append("style=dashed")
        lines.append(f"    {json.dumps(source)} -> {json.dumps(target)} [{', '.join(attrs)}];")
    for target, label in safety_edges(program):
        lines.append(f"    {json.dumps(ANY_NODE)} -> {json.dumps(target)} "
                     f"[label={json.dumps(label, ensure_ascii=False)}, style=\"dashed,bold\", color=red];")
    lines.append("}")
    return "\n".join(lines) + "\n"


RENDERERS = {"mermaid": mermaid, "dot": dot}  # `mgc graph --format` and the service's `format`
