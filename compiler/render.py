"""Views of a compiled program: `mgc graph` (Mermaid, DOT) and `mgc inspect`.

In: an `ir.Program` (from a scenario just compiled, or from an IR file). Out: text.
Static edges (`next_nodes` targets, `default_next`) are solid; runtime rules are dashed:
stays as self-loops and global transitions from a pseudo-node "any node", as in the seed
diagrams; `graph.safety` rules (SPEC 10) likewise, from "any node", labelled
`safety:CATEGORY (first)`, dashed (bold red in DOT). End nodes are drawn as stadiums (Mermaid) or double circles (DOT) and say whether
they are explicit (`terminal: true`) or inferred (no outgoing edge).
"""

from __future__ import annotations

import json

from interpreter import ir

from .diagnostics import printable

ANY_NODE = "__any_node__"


def edges(program: ir.Program):
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


def safety_edges(program: ir.Program):
    """(target, label) for every safety rule: it fires first, from any node."""
    for rule in program.safety:
        name = f" {rule.name}" if rule.name else ""
        yield program.nodes[rule.target].id, f"{ir.SAFETY_REASON}{rule.category}{name} (first)"


def node_label(node: ir.Node) -> str:
    title = node.name if node.name and node.name != node.id else node.id
    text = f"{title}<br/>{node.id}" if title != node.id else node.id
    if node.end:
        text += f"<br/>end ({ir.END_NAMES[node.end]})"
    return text


def mermaid(program: ir.Program) -> str:
    lines = ["flowchart TD"]
    for node in program.nodes:
        label = _mermaid_text(node_label(node))
        lines.append(f'    {node.id}(["{label}"])' if node.end else f'    {node.id}["{label}"]')
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
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;")


def dot(program: ir.Program) -> str:
    lines = [f"digraph {json.dumps(program.name)} {{", "    rankdir=TB;", "    node [shape=box];"]
    for node in program.nodes:
        label = node_label(node).replace("<br/>", "\\n")
        shape = ", shape=doublecircle" if node.end else ""
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


def inspect_data(envelope: ir.Envelope, program: ir.Program) -> dict:
    """Everything `mgc inspect` shows, as plain data."""
    static_edges = sum(1 for n in program.nodes for t in n.transitions if t.target != ir.STAY)
    return {
        "name": program.name, "version": program.version, "language": program.language,
        "format_version": ir.FORMAT_VERSION, "compiler_version": envelope.compiler_version,
        "source_sha256": envelope.source_sha256, "body_sha256": envelope.body_sha256,
        "entry": program.nodes[program.entry].id, "bot_first": program.bot_first,
        "closing_acts": [ir.ACTS[a] for a in program.closing_acts],
        "counts": {"nodes": len(program.nodes), "edges": static_edges,
                   "global_transitions": len(program.global_transitions),
                   "slots": len(program.slots), "intents": len(program.intents),
                   "safety_rules": len(program.safety),
                   "safety_patterns": len(program.safety_patterns)},
        "end_nodes": {n.id: ir.END_NAMES[n.end] for n in program.nodes if n.end},
        "nodes": [_node_data(program, n) for n in program.nodes],
        "global_transitions": [_rule_data(program, g) for g in program.global_transitions],
        "safety": [{**_rule_data(program, rule), "category": rule.category, "name": rule.name}
                   for rule in program.safety],
        "safety_patterns": [{"category": p.category, "pattern": p.pattern}
                            for p in program.safety_patterns],
    }


def _node_data(program: ir.Program, node: ir.Node) -> dict:
    return {
        "id": node.id, "executor": ir.EXECUTOR_NAMES[node.executor],
        "end": ir.END_NAMES[node.end] or None,
        "collect_slots": [program.slots[i].name for i in node.collect_slots],
        "required_slots": [program.slots[i].name for i in node.required_slots],
        "responses": {kind: list(texts) for kind, texts in node.responses.items()},
        "transitions": [_rule_data(program, t) for t in node.transitions],
    }


def _rule_data(program: ir.Program, rule) -> dict:
    entry = program.source_map[rule.source]
    target = "(stay)" if rule.target == ir.STAY else program.nodes[rule.target].id
    return {"label": entry.label, "target": target, "condition": entry.display or None,
            "at": entry.pointer}


def _response_lines(responses: dict[str, list[str]]) -> list[str]:
    """`says KIND: TEXT`, one line a variant (numbered when there are several, SPEC 9)."""
    lines = []
    for kind, texts in responses.items():
        for i, text in enumerate(texts):
            label = kind if len(texts) == 1 else f"{kind} {i + 1}/{len(texts)}"
            lines.append(f"    says {label + ':':<20} {printable(' '.join(text.split()))}")
    return lines


def inspect_text(data: dict) -> str:
    counts = data["counts"]
    out = [
        f"{data['name']} {data['version']} ({data['language']})",
        f"  source sha256  {data['source_sha256']}",
        f"  IR format {data['format_version']}, compiled by mgc {data['compiler_version']}",
        f"  entry {data['entry']}, bot first: {'yes' if data['bot_first'] else 'no'}, "
        f"closing acts: {', '.join(data['closing_acts'])}",
        f"  {counts['nodes']} nodes, {counts['edges']} static edges, "
        f"{counts['global_transitions']} global transitions, {counts['slots']} slots, "
        f"{counts['intents']} intents",
        "  end nodes: " + ", ".join(f"{k} ({v})" for k, v in data["end_nodes"].items()),
        "",
    ]
    for rule in data["safety"]:  # SPEC 10: first, at every node
        out.append(f"  {rule['label']:<24} -> {rule['target']:<24} first, at every node")
    for item in data["safety_patterns"]:
        out.append(f"  safety pattern ({item['category']}): {item['pattern']}")
    for rule in data["global_transitions"]:
        out.append(f"  {rule['label']:<24} -> {rule['target']:<24} when {rule['condition']}")
    for node in data["nodes"]:
        end = f", end ({node['end']})" if node["end"] else ""
        slots = f", collects {', '.join(node['collect_slots'])}" if node["collect_slots"] else ""
        out.append(f"\n  {node['id']} [{node['executor']}{end}{slots}]")
        out += _response_lines(node["responses"])
        for rule in node["transitions"]:
            when = f" when {rule['condition']}" if rule["condition"] else ""
            out.append(f"    {rule['label']:<16} -> {rule['target']}{when}")
    return "\n".join(out) + "\n"
