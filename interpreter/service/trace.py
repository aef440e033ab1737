"""A turn's trace as data (SPEC 12): what `mgi run --output-level detailed` prints of it.

In: the `Runtime` a session runs on, the engine's `TurnResult` of one user turn (and its JSON
line), and whether the request gave its own NLU result. Out: an `api.Trace`: which NLU read the turn, every
transition routing evaluated (its source-map label, its condition, the facts it read and its
result), the slots stored or offered for confirmation, what was dropped, the nodes passed,
the tier that fired, the NLU corrections and the detailed level's own lines.
After: nothing is re-decided: the transitions are replayed by `routing.evaluations` from the
facts the decision kept (conditions are pure), so a traced turn and an untraced one route
alike, and the lines are `routing.trace_lines`, the very text of the CLI.
"""

from __future__ import annotations

import json
from typing import Any

from .. import ir
from ..engine import TurnResult
from ..loader import Runtime, display_value
from ..routing import evaluations, trace_lines
from .api import Evaluated, PassedNode, SlotChange, Trace


def turn_trace(runtime: Runtime, result: TurnResult, line: dict[str, Any],
               nlu_given: bool) -> Trace:
    """The trace of one user turn (`result.decision` is never None for one); `line` is its
    `json_line()`, whose `passed` list the trace repeats."""
    decision = result.decision
    passed = [PassedNode(node=p["node"], reason=p["reason"]) for p in line.get("passed", [])]
    lines = trace_lines(runtime, decision, detailed=True)
    lines[1:1] = result.understanding_lines()
    source = nlu_source(result, nlu_given)
    if result.nlu_source:  # as `mgi run` shows it: which NLU read the turn, first
        lines.insert(0, "nlu: " + result.nlu_source)
    return Trace(nlu_source=source, evaluated=evaluated(runtime, decision),
                 slot_updates=slot_changes(decision.slot_update), dropped=result.dropped,
                 passed=passed, tier=decision.tier, notes=list(decision.notes), lines=lines,
                 **understanding(line))


def understanding(line: dict[str, Any]) -> dict[str, Any]:
    """The trace's confidence, candidates and intent note (SPEC 13.2), from the turn line."""
    heard = line.get("nlu") or {}
    return {"confidence": heard.get("confidence"), "candidates": heard.get("candidates", []),
            "intent_note": heard.get("intent_note")}


def nlu_source(result: TurnResult, nlu_given: bool) -> str | None:
    """The engine's source, else `request` (the body's `nlu`) or `rules`; None for silence."""
    if result.nlu_source:
        return result.nlu_source
    if not (result.user or "").strip():
        return None
    return "request" if nlu_given else "rules"


def evaluated(runtime: Runtime, decision: Any) -> list[Evaluated]:
    """Every transition looked at, in order, with the values its condition read."""
    targets = _targets(runtime, decision.handled_node)
    program, facts = runtime.program, decision.facts
    rows = []
    for source, result in evaluations(runtime, decision):
        entry = program.source_map[source]
        values = {ir.field_name(program, i): plain_value(runtime, i, facts[i])
                  for i in runtime.source_fields[source]} if result is not None else {}
        rows.append(Evaluated(rule=entry.label, condition=entry.display or None,
                              target=targets.get(source, ""), values=values, result=result))
    return rows


def plain_value(runtime: Runtime, field: int, value: Any) -> Any:
    """A fact as JSON data, interned enums by name: the value the trace line shows
    (`display_value` writes it as JSON text; read back here rather than kept twice)."""
    return json.loads(display_value(runtime, field, value))


def _targets(runtime: Runtime, handled: int) -> dict[int, str]:
    """Source index -> target node id, for the handled node's rows and the globals."""
    program = runtime.program
    node = program.nodes[handled]
    found = {row.source: node.id if row.target == ir.STAY else program.nodes[row.target].id
             for row in node.transitions}
    found.update((rule.source, program.nodes[rule.target].id)
                 for rule in program.global_transitions)
    return found


def slot_changes(update: Any) -> list[SlotChange]:
    """The values stored this turn, then the confirmation it asked for (if any)."""
    if update is None:
        return []
    changes = [SlotChange(slot=name, value=value, change="stored")
               for name, value in update.stored]
    if update.asked is not None:
        changes.append(SlotChange(slot=update.asked.slot, value=update.asked.value,
                                  change="confirm"))
    return changes
