"""No match (SPEC 13.3, 17.13): what a node with `params.expects` counts as understood.

In: a runtime and a node (its `expects`, its routes, the global transitions), then per turn
the intent index, act name and stored slot names that routing read. Out: `unexpected(...)`,
whether the turn yields none of what the node expects, so that its act is read as null (not
understood) and the fallback policy applies. Without `expects`, nothing changes.

What counts (17.13): an intent when the node's routes or a global transition read it, or,
with `intent` or `any`, any declared one; a slot for `slot` when it is one of the node's
collect slots, for `any` any declared slot; affirm and deny when the node's routes read the
act or a confirmation is pending (and always silence and the closing acts: they are no
misunderstanding). The caller never applies it to a turn the safety tier or a global
transition takes. Computed once per node (`Expected`, kept on the runtime).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import ir

_INTENT = ir.FIELD_INDEX["nlu.intent"]
_ACT = ir.FIELD_INDEX["nlu.dialogue_act"]
_YES_NO = frozenset(("affirm", "deny"))
_NEVER_NULL = frozenset(("silence", "null"))
NOTE = "expects: nothing the node expects was heard, read as not understood"


class Expected(NamedTuple):
    intents: frozenset[int] | None  # None: every declared intent
    slots: frozenset[str] | None  # None: every declared slot
    yes_no: bool  # the node's routes read the act (any test of it): affirm and deny answer


def _reads(condition: Any, field: int, found: set, everything: list) -> None:
    """Collect the values `condition` compares `field` with (equals, in); any other test
    of the field counts as reading every value (`everything` gets True)."""
    if not condition:
        return
    if condition[0] == ir.OP_LEAF:
        if condition[2] == field:
            operator, value = ir.OPERATORS[condition[1]], condition[3]
            if operator == "equals":
                found.add(value)
            elif operator == "in" and isinstance(value, list):
                found.update(value)
            else:
                everything.append(True)
    elif condition[0] == ir.OP_NOT:
        _reads(condition[1], field, found, everything)
    else:
        for item in condition[1]:
            _reads(item, field, found, everything)


def expected(runtime: Any, node: ir.Node) -> Expected:
    """What `node` (which declares `expects`) counts as understood; see the module text."""
    intents: set = set()
    acts: set = set()
    every: list = []
    own = [t.condition for t in node.transitions]
    for condition in own + [g.condition for g in runtime.program.global_transitions]:
        _reads(condition, _INTENT, intents, every)
    reads_act: list = []
    for condition in own:  # affirm and deny answer the node's own routes when they read it
        _reads(condition, _ACT, acts, reads_act)
    kind = node.expects
    all_intents = kind in ("intent", "any") or bool(every)
    slot_names = runtime.slot_names
    slots = None if kind == "any" else frozenset(
        slot_names[i] for i in node.collect_slots) if kind == "slot" else frozenset()
    return Expected(None if all_intents else frozenset(intents), slots,
                    bool(acts) or bool(reads_act))


def unexpected(runtime: Any, node: ir.Node, intent: int | None, act: str,
               stored: tuple[str, ...], pending: bool) -> bool:
    """Whether a turn at `node` heard none of what it expects (False without `expects`)."""
    if node.expects is None or act in _NEVER_NULL:
        return False
    if act in (ir.ACTS[a] for a in runtime.closing_acts):
        return False
    if act in _YES_NO:
        return False if pending else not _table(runtime, node).yes_no
    found = _table(runtime, node)
    if intent is not None and (found.intents is None or intent in found.intents):
        return False
    return not (stored and (found.slots is None or not found.slots.isdisjoint(stored)))


def _table(runtime: Any, node: ir.Node) -> Expected:
    cache = runtime.__dict__.setdefault("_expected", {})
    found = cache.get(node.id)
    if found is None:
        found = cache[node.id] = expected(runtime, node)
    return found
