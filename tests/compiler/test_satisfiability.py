"""W404's satisfiability analysis: sound (never calls a possible condition impossible) and
sharp enough to catch the contradictions the issue names.

The soundness property checks `satisfiable` against brute force: conditions over a few
small-domain fields are evaluated on every assignment of values, with the runtime's meaning
of each operator (null never satisfies an ordering comparison).
"""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.condition_ast import NO_VALUE, And, Leaf, Not, Or
from compiler.satisfiability import Domain, satisfiable
from conftest import examples

ACTS = ("affirm", "deny", "silence", "null")
DOMAINS = {
    "nlu.dialogue_act": Domain(members=frozenset(ACTS)),
    "slots.meal": Domain(members=frozenset({"adequate", "skipped", None})),
    "slots.level": Domain(numeric=True, integer=True, low=0, high=10),
    "system.node_turns": Domain(numeric=True, integer=True, low=1, nullable=False),
    "system.fallback_exhausted": Domain(members=frozenset({True, False})),
}
# Values each field takes in the brute force: every member, or every integer in a window
# wide enough to include each constant the strategies use, plus its neighbours.
CANDIDATES = {
    "nlu.dialogue_act": list(ACTS),
    "slots.meal": ["adequate", "skipped", None],
    "slots.level": [None] + list(range(0, 11)),
    "system.node_turns": list(range(1, 9)),
    "system.fallback_exhausted": [True, False],
}
ORDERING = {"greater_than": lambda a, b: a > b, "greater_or_equal": lambda a, b: a >= b,
            "less_than": lambda a, b: a < b, "less_or_equal": lambda a, b: a <= b}


def holds(leaf: Leaf, value) -> bool:
    op = leaf.operator
    if op == "equals":
        return value == leaf.value and type(value) is type(leaf.value) or (value is None and leaf.value is None)
    if op == "not_equals":
        return not holds(Leaf(leaf.field, "equals", leaf.value), value)
    if op == "in":
        return any(holds(Leaf(leaf.field, "equals", v), value) for v in leaf.value)
    if op == "not_in":
        return not holds(Leaf(leaf.field, "in", leaf.value), value)
    if op == "is_empty":
        return value is None
    if op == "is_not_empty":
        return value is not None
    return value is not None and ORDERING[op](value, leaf.value)


def evaluate(c, assignment: dict) -> bool:
    if isinstance(c, Leaf):
        return holds(c, assignment[c.field])
    if isinstance(c, Not):
        return not evaluate(c.item, assignment)
    results = (evaluate(i, assignment) for i in c.items)
    return all(results) if isinstance(c, And) else any(results)


def some_assignment_holds(c) -> bool:
    names = list(CANDIDATES)
    return any(evaluate(c, dict(zip(names, values)))
               for values in itertools.product(*(CANDIDATES[n] for n in names)))


def leaves_for(field: str):
    values = CANDIDATES[field]
    members = [v for v in values if v is not None]
    ops = ["equals", "not_equals", "in", "not_in", "is_empty", "is_not_empty"]
    if field in ("slots.level", "system.node_turns"):
        ops += list(ORDERING)
    def build(op, data):
        if op in ("is_empty", "is_not_empty"):
            return Leaf(field, op, NO_VALUE)
        if op in ("in", "not_in"):
            return Leaf(field, op, data.draw(st.lists(st.sampled_from(members), min_size=1, max_size=3)))
        if op in ORDERING:
            return Leaf(field, op, data.draw(st.integers(-1, 9)))
        return Leaf(field, op, data.draw(st.sampled_from(members)))
    return st.builds(lambda op, data: build(op, data), st.sampled_from(ops), st.data())


LEAVES = st.one_of([leaves_for(f) for f in CANDIDATES])
CONDITIONS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.builds(lambda items: And(tuple(items)), st.lists(inner, min_size=2, max_size=3)),
        st.builds(lambda items: Or(tuple(items)), st.lists(inner, min_size=2, max_size=3)),
        st.builds(Not, inner),
    ),
    max_leaves=6,
)


@settings(max_examples=examples(300), deadline=None)
@given(CONDITIONS)
def test_a_condition_called_impossible_is_never_true(condition):
    if not satisfiable(condition, DOMAINS):
        assert not some_assignment_holds(condition), condition


def L(field, op, value=NO_VALUE):
    return Leaf(field, op, value)


def test_contradictory_equals_on_one_field_under_and():
    c = And((L("slots.meal", "equals", "adequate"), L("slots.meal", "equals", "skipped")))
    assert not satisfiable(c, DOMAINS)


def test_equals_outside_an_in_list():
    c = And((L("nlu.dialogue_act", "in", ["affirm", "deny"]), L("nlu.dialogue_act", "equals", "silence")))
    assert not satisfiable(c, DOMAINS)


def test_empty_numeric_range():
    c = And((L("system.node_turns", "greater_than", 3), L("system.node_turns", "less_than", 4)))
    assert not satisfiable(c, DOMAINS)  # integers: nothing strictly between 3 and 4


def test_impossible_counter_comparison():
    assert not satisfiable(L("system.node_turns", "less_than", 1), DOMAINS)
    assert not satisfiable(L("system.node_turns", "is_empty"), DOMAINS)


def test_slot_bounds_count():
    assert not satisfiable(L("slots.level", "greater_than", 10), DOMAINS)
    assert satisfiable(L("slots.level", "equals", 10), DOMAINS)


def test_or_is_possible_when_one_branch_is():
    impossible = L("system.node_turns", "less_than", 1)
    assert satisfiable(Or((impossible, L("slots.meal", "is_empty"))), DOMAINS)


def test_negation_is_pushed_to_the_leaves():
    c = And((Not(L("slots.meal", "is_empty")), L("slots.meal", "is_empty")))
    assert not satisfiable(c, DOMAINS)


def test_assumptions_fix_a_field():
    domains = dict(DOMAINS, **{"system.current_node": Domain(members=frozenset({"a", "b"}))})
    c = L("system.current_node", "equals", "a")
    assert satisfiable(c, domains, {"system.current_node": "a"})
    assert not satisfiable(c, domains, {"system.current_node": "b"})


def test_unbounded_range_is_possible():
    assert satisfiable(L("system.node_turns", "greater_than", 1_000_000), DOMAINS)
    assert math.isinf(DOMAINS["system.node_turns"].high)


def test_negated_ordering_is_true_for_an_unfilled_slot():
    # Found by the soundness property: `not (level > -1)` holds when the slot is empty,
    # although no number is <= -1 inside the slot's bounds.
    assert satisfiable(Not(L("slots.level", "greater_than", -1)), DOMAINS)
    assert not satisfiable(Not(L("system.node_turns", "greater_than", 0)), DOMAINS)
