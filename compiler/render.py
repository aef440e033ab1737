"""Views of a compiled program: `mgc graph` (Mermaid, DOT) and `mgc inspect`.

In: an `ir.Program` (from a scenario just compiled, or from an IR file). Out: text.
The graph text is drawn by `interpreter.graph` (the service serves the same text without
loading the compiler); it is re-exported here for `mgc graph`. `inspect_data` and
`inspect_text` are `mgc inspect`: everything about a program, as data and as text.
"""

from __future__ import annotations

import json

from interpreter import ir
from interpreter.views.graph import ANY_NODE, dot, edges, mermaid, node_label, safety_edges

from .diagnostics import printable
from .skilldecls import inspect_skills, skill_lines

__all__ = ["ANY_NODE", "dot", "edges", "inspect_data", "inspect_text", "mermaid", "node_label",
           "safety_edges"]


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
        "profile": {f.name: f.value_type for f in program.profile},
        "defaults": {s.name: s.default if s.default_profile is None
                     else "{profile." + s.default_profile + "}"
                     for s in program.slots if s.default is not None or s.default_profile},
        "lists": {s.name: s.items for s in program.slots if s.value_type == "list"},
        "skills": inspect_skills(program),  # SPEC 14.7, 17.24
        "dates": _dates_data(program),  # SPEC 14.1, 17.18
    }


def _dates_data(program: ir.Program) -> dict:
    """The date and time slots with their bounds as written, and how dates are read."""
    slots = {s.name: {"type": s.value_type, "min": s.min_bound, "max": s.max_bound}
             for s in program.slots if s.value_type in ir.TEMPORAL_KINDS}
    if not slots:
        return {}
    from interpreter.understanding.dates import default_order

    order = program.date_order or default_order(program.language)
    return {"date_order": order, "timezone": program.timezone or None, "slots": slots}


def _date_lines(dates: dict) -> list[str]:
    if not dates:
        return []
    out = [f"  dates read {dates['date_order']}, today in {dates['timezone'] or 'the server timezone'}"]
    for name, slot in dates["slots"].items():
        bounds = " ".join(f"{k} {slot[k]}" for k in ("min", "max") if slot[k])
        out.append(f"  slot {name} ({slot['type']}){': ' + bounds if bounds else ''}")
    return out


def _node_data(program: ir.Program, node: ir.Node) -> dict:
    return {
        "id": node.id, "executor": ir.EXECUTOR_NAMES[node.executor],
        "end": ir.END_NAMES[node.end] or None,
        "collect_slots": [program.slots[i].name for i in node.collect_slots],
        "required_slots": [program.slots[i].name for i in node.required_slots],
        "responses": {kind: list(texts) for kind, texts in node.responses.items()},
        "transitions": [_rule_data(program, t) for t in node.transitions],
        "transient": node.transient, "skip_if_filled": node.skip_if_filled,
        "clear_slots": [program.slots[i].name for i in node.clear_slots],
        "on_enter": _sets_data(program, node.on_enter),
        "lines": {kind: {"join": made.join, "lines": [list(line.texts) for line in made.lines]}
                  for kind, made in node.lines.items()},
        # SPEC 17.21: a skill argument written as lines, each with whether it has a `when`
        "skill_lines": {arg: {"join": made.join, "lines": [
            {"text": line.texts[0], "conditional": line.when is not None} for line in made.lines]}
            for arg, made in node.skill_lines.items()},
    }


def _rule_data(program: ir.Program, rule) -> dict:
    entry = program.source_map[rule.source]
    target = "(stay)" if rule.target == ir.STAY else program.nodes[rule.target].id
    return {"label": entry.label, "target": target, "condition": entry.display or None,
            "at": entry.pointer, "set": _sets_data(program, getattr(rule, "sets", ()))}


def _sets_data(program: ir.Program, sets) -> dict:
    """A `set` as written (SPEC 14.5): slot -> literal, {"copy": SLOT} or {"add": N}."""
    shown = {}
    for a in sets:
        name = program.slots[a.slot].name
        shown[name] = {"copy": program.slots[a.value].name} if a.kind == ir.SET_COPY else \
            {"add": a.value} if a.kind == ir.SET_ADD else a.value
    return shown


def _sets_text(sets: dict) -> str:
    return ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in sets.items())


def _response_lines(responses: dict[str, list[str]]) -> list[str]:
    """`says KIND: TEXT`, one line a variant (numbered when there are several, SPEC 9)."""
    lines = []
    for kind, texts in responses.items():
        for i, text in enumerate(texts):
            label = kind if len(texts) == 1 else f"{kind} {i + 1}/{len(texts)}"
            lines.append(f"    says {label + ':':<20} {printable(' '.join(text.split()))}")
    return lines


def _task_lines(data: dict) -> list[str]:
    """The profile, slot defaults and list slots (SPEC 8.1, 8.2), when there are any."""
    out = []
    if data["profile"]:
        out.append("  profile: " + ", ".join(f"{k} ({v})" for k, v in data["profile"].items()))
    for name, value in data["defaults"].items():
        out.append(f"  slot default: {name} = {json.dumps(value, ensure_ascii=False)}")
    for name, items in data["lists"].items():
        out.append(f"  list slot: {name} of {items}")
    return out


def _node_flags(node: dict) -> str:
    """`, transient`, `, asks even when filled`, `, clears ...` (SPEC 8.3, 8.5)."""
    flags = [", transient"] if node["transient"] else []
    if not node["skip_if_filled"] and node["collect_slots"]:
        flags.append(", asks even when filled")
    if node["clear_slots"]:
        flags.append(", clears " + ", ".join(node["clear_slots"]))
    return "".join(flags)


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
    out += _task_lines(data) + _date_lines(data.get("dates", {})) + skill_lines(data["skills"])
    for node in data["nodes"]:
        end = f", end ({node['end']})" if node["end"] else ""
        slots = f", collects {', '.join(node['collect_slots'])}" if node["collect_slots"] else ""
        out.append(f"\n  {node['id']} [{node['executor']}{end}{slots}{_node_flags(node)}]")
        out += _response_lines(node["responses"])
        for kind, made in node["lines"].items():  # SPEC 14.4: one line of text per line
            for i, texts in enumerate(made["lines"]):
                out.append(f"    says {kind} line {i + 1}: "
                           f"{printable(' / '.join(' '.join(t.split()) for t in texts))}")
        for arg, made in node["skill_lines"].items():
            for i, line in enumerate(made["lines"]):
                when = " (conditional)" if line["conditional"] else ""
                out.append(f"    sends {arg} line {i + 1}{when}: "
                           f"{printable(' '.join(line['text'].split()))}")
        if node["on_enter"]:
            out.append(f"    on_enter set {_sets_text(node['on_enter'])}")
        for rule in node["transitions"]:
            when = f" when {rule['condition']}" if rule["condition"] else ""
            sets = f" set {_sets_text(rule['set'])}" if rule["set"] else ""
            out.append(f"    {rule['label']:<16} -> {rule['target']}{when}{sets}")
    return "\n".join(out) + "\n"
