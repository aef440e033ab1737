"""Satisfiability of conditions: can this condition ever be true? (W404, and global edges).

In: a checked condition, the field types, and assumptions that hold where the condition is
evaluated (`system.current_node` is the node being routed, `system.conversation_resuming` is
false away from end nodes). Out: False only when the condition is proven impossible;
anything the analysis does not model counts as possible, so a warning is never a false alarm.

Method: the condition is put in negation normal form and expanded to a disjunction of
conjunctions (capped; past the cap it is assumed satisfiable). A conjunction is impossible
when the leaves on one field leave no value: a finite domain (enums, booleans, null) loses
members, a numeric field keeps an interval (integers rounded inwards) plus excluded points.
System counters carry their runtime bounds: `node_turns` and `session_turns` are at least 1
while routing, the other counters at least 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from interpreter.fields import SAFETY_VALUES

from .condition_ast import NO_VALUE, And, Condition, Leaf, Not, Or

MAX_CONJUNCTIONS = 256
NEGATED = {
    "equals": "not_equals", "not_equals": "equals", "in": "not_in", "not_in": "in",
    "greater_than": "less_or_equal", "less_or_equal": "greater_than",
    "less_than": "greater_or_equal", "greater_or_equal": "less_than",
    "is_empty": "is_not_empty", "is_not_empty": "is_empty",
}
ORDERING = ("greater_than", "greater_or_equal", "less_than", "less_or_equal")
COUNTER_FLOORS = {
    "system.node_turns": 1, "system.session_turns": 1,
    "system.no_input_count": 0, "system.not_understood_count": 0, "system.idle_seconds": 0,
}


@dataclass(frozen=True)
class Domain:
    """What a field can hold: a finite set of values, or a numeric range (with null if nullable)."""

    members: frozenset | None = None  # finite domains (None included when nullable)
    numeric: bool = False
    integer: bool = False
    low: float = -math.inf
    high: float = math.inf
    nullable: bool = True


@dataclass
class _Range:
    low: float
    low_open: bool
    high: float
    high_open: bool
    excluded: set = field(default_factory=set)
    null: bool = True  # null still possible


def satisfiable(condition: Condition | None, domains: dict[str, Domain],
                assume: dict[str, Any] | None = None) -> bool:
    """False only when `condition` can never be true under `assume` (field -> fixed value)."""
    if condition is None:
        return True
    conjunctions = _dnf(_nnf(condition, False))
    if conjunctions is None:
        return True
    assumed = [Leaf(name, "equals", value) for name, value in (assume or {}).items()]
    return any(_conjunction_possible(conj + assumed, domains) for conj in conjunctions)


def _nnf(c: Condition, negate: bool):
    """Push `not` down to the leaves; a leaf that cannot be negated stays wrapped."""
    if isinstance(c, Not):
        return _nnf(c.item, not negate)
    if isinstance(c, (And, Or)):
        items = tuple(_nnf(i, negate) for i in c.items)
        flip = isinstance(c, And) == negate
        return Or(items) if flip else And(items)
    if not negate:
        return c
    if c.operator in ORDERING:  # null fails `x > v`, so it passes `not (x > v)`
        return Or((Leaf(c.field, NEGATED[c.operator], c.value), Leaf(c.field, "is_empty")))
    if c.operator in NEGATED:
        return Leaf(c.field, NEGATED[c.operator], c.value)
    return Not(c)  # `not contains`: not modelled


def _dnf(c) -> list[list] | None:
    """List of conjunctions (lists of leaves, each list new and owned by the caller), or
    None past the size cap."""
    if isinstance(c, Or):
        out: list[list] = []
        for item in c.items:
            part = _dnf(item)
            if part is None:
                return None
            out += part
            if len(out) > MAX_CONJUNCTIONS:
                return None
        return out
    if isinstance(c, And):
        out = [[]]
        for item in c.items:
            part = _dnf(item)
            if part is None or len(out) * len(part) > MAX_CONJUNCTIONS:
                return None
            if len(part) == 1:  # the usual item, a leaf: extended in place, so a long `and` is linear
                for conjunction in out:
                    conjunction.extend(part[0])
            else:
                out = [a + b for a in out for b in part]
        return out
    return [[c]]


def _conjunction_possible(conj: list, domains: dict[str, Domain]) -> bool:
    by_field: dict[str, list[Leaf]] = {}
    for leaf in conj:
        if isinstance(leaf, Leaf):
            by_field.setdefault(leaf.field, []).append(leaf)
    for name, field_leaves in by_field.items():
        domain = domains.get(name)
        if domain is None:
            continue
        if domain.numeric and not _numeric_possible(field_leaves, domain):
            return False
        if domain.members is not None and not _members_possible(field_leaves, domain.members):
            return False
        if domain.members is None and not domain.numeric and not _text_possible(field_leaves):
            return False
    return True


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _members_possible(field_leaves: list[Leaf], members: frozenset) -> bool:
    """Finite domains; the domain itself is never copied (node ids can number many thousands)."""
    allowed: set | None = None
    excluded: set = set()
    for leaf in field_leaves:
        op = leaf.operator
        if op in ("equals", "in", "is_empty"):
            values = {None} if op == "is_empty" else set(_as_list(leaf.value))
            allowed = values if allowed is None else allowed & values
        elif op in ("not_equals", "not_in"):
            excluded |= set(_as_list(leaf.value))
        elif op == "is_not_empty":
            excluded.add(None)
    if allowed is not None:
        return any(v in members and v not in excluded for v in allowed)
    return len(members) > sum(1 for v in excluded if v in members)


def _text_possible(field_leaves: list[Leaf]) -> bool:
    """Strings: only equality constraints are modelled."""
    allowed: set | None = None
    excluded: set = set()
    for leaf in field_leaves:
        op = leaf.operator
        if op in ("equals", "in"):
            values = set(_as_list(leaf.value))
            allowed = values if allowed is None else allowed & values
        elif op in ("not_equals", "not_in"):
            excluded |= set(_as_list(leaf.value))
        elif op == "is_empty":
            allowed = {None} if allowed is None else allowed & {None}
        elif op == "is_not_empty":
            excluded.add(None)
    return allowed is None or bool(allowed - excluded)


def _numeric_possible(field_leaves: list[Leaf], domain: Domain) -> bool:
    r = _Range(domain.low, False, domain.high, False, null=domain.nullable)
    allowed: set | None = None
    for leaf in field_leaves:
        op, value = leaf.operator, leaf.value
        if op in ("equals", "in"):
            values = set(_as_list(value))
            allowed = values if allowed is None else allowed & values
        elif op in ("not_equals", "not_in"):
            r.excluded |= set(_as_list(value))
        elif op == "is_empty":
            allowed = {None} if allowed is None else allowed & {None}
        elif op == "is_not_empty":
            r.null = False
        elif value is not NO_VALUE and isinstance(value, (int, float)):
            _narrow(r, op, value)
            r.null = False  # null never satisfies an ordering comparison
    if allowed is not None:
        return any(_in_range(v, r, domain) for v in allowed)
    return _range_nonempty(r, domain)


def _narrow(r: _Range, op: str, value: float) -> None:
    if op in ("greater_than", "greater_or_equal"):
        open_ = op == "greater_than"
        if value > r.low or (value == r.low and open_):
            r.low, r.low_open = value, open_
    else:
        open_ = op == "less_than"
        if value < r.high or (value == r.high and open_):
            r.high, r.high_open = value, open_


def _in_range(v, r: _Range, domain: Domain) -> bool:
    if v is None:
        return r.null
    if not isinstance(v, (int, float)) or isinstance(v, bool) or v in r.excluded:
        return False
    if domain.integer and v != int(v):
        return False
    above = v > r.low or (v == r.low and not r.low_open)
    below = v < r.high or (v == r.high and not r.high_open)
    return above and below


def _range_nonempty(r: _Range, domain: Domain) -> bool:
    if domain.integer:
        low = r.low if math.isinf(r.low) else (math.floor(r.low) + 1 if r.low_open else math.ceil(r.low))
        high = r.high if math.isinf(r.high) else (math.ceil(r.high) - 1 if r.high_open else math.floor(r.high))
        if low > high:
            return r.null
        if math.isinf(low) or math.isinf(high) or high - low > len(r.excluded):
            return True
        return any(v not in r.excluded for v in range(int(low), int(high) + 1)) or r.null
    if r.low < r.high:
        return True
    if r.low == r.high and not r.low_open and not r.high_open:
        return r.low not in r.excluded or r.null
    return r.null


def field_domains(slot_types: dict[str, Any], intents, nodes, acts, skill_statuses,
                  slot_bounds: dict[str, tuple], safety_values=SAFETY_VALUES) -> dict[str, Domain]:
    """The domain of every catalogue field and slot (and profile field: `slot_types` and
    `slot_bounds` are keyed by field name, `slots.NAME` or `profile.NAME`), for
    `satisfiable`. `safety_values`: what
    `nlu.safety` can be where conditions are evaluated (a category with a `graph.safety` rule
    never is: the safety tier takes those turns first)."""
    domains = {
        "nlu.safety": Domain(members=frozenset(safety_values)),
        "nlu.intent": Domain(members=frozenset(intents) | {None}),
        "nlu.dialogue_act": Domain(members=frozenset(acts)),
        "nlu.confidence": Domain(numeric=True, low=0.0, high=1.0, nullable=False),  # NLU results are clamped
        "system.current_node": Domain(members=frozenset(nodes)),
        "system.previous_node": Domain(members=frozenset(nodes) | {None}),
        "skill.status": Domain(members=frozenset(skill_statuses)),
    }
    for name, floor in COUNTER_FLOORS.items():
        domains[name] = Domain(numeric=True, integer=True, low=floor, nullable=False)
    for name in ("fallback_exhausted", "conversation_resuming", "turn_limit_reached",
                 "min_turns_met", "required_slots_filled", "slots_updated", "slot_declined"):
        domains["system." + name] = Domain(members=frozenset({True, False}))
    for name, (kind, values) in slot_types.items():
        domain = _slot_domain(kind, values, slot_bounds.get(name, (None, None)))
        if domain is not None:  # a list slot is not modelled: anything is possible
            domains[name] = domain
    return domains


def entry_domains(domains: dict[str, Domain]) -> dict[str, Domain]:
    """The domains as the entry routing of a transient node sees them (SPEC 8.3): a fresh
    visit, node turn 0, no turn limit, no fallback, min_turns not met."""
    fresh = {"system.node_turns": Domain(numeric=True, integer=True, low=0, high=0,
                                         nullable=False)}
    for name, value in (("fallback_exhausted", False), ("turn_limit_reached", False),
                        ("min_turns_met", False)):
        fresh["system." + name] = Domain(members=frozenset({value}))
    return {**domains, **fresh}


def _slot_domain(kind: str, values, bounds) -> Domain | None:
    if kind in ("list", "date", "time"):  # dates: "today" moves, so they are not modelled
        return None
    if kind == "enum":
        return Domain(members=frozenset(values) | {None})
    if kind == "boolean":
        return Domain(members=frozenset({True, False, None}))
    if kind in ("integer", "number"):
        low, high = bounds
        return Domain(numeric=True, integer=kind == "integer",
                      low=-math.inf if low is None else low, high=math.inf if high is None else high)
    return Domain()
