"""The condition type checker: one row per rule, expected code, message and hint by hand."""

from __future__ import annotations

import re

import pytest

from compiler.condition_ast import NO_VALUE, And, Leaf, Not, Or, Position
from compiler.conditions import lower_condition, parse_expression
from compiler.diagnostics import Diagnostics
from compiler.typecheck import ConditionEnv, FieldType, SlotType, check_condition, field_type

P = "/graph/nodes/1/next_nodes/0/condition"
ENV = ConditionEnv(
    intents=("user_wants_to_end", "ask_weather"),
    nodes=("greeting", "meal_check", "closing"),
    slots={
        "meal_status": SlotType("enum", ("adequate", "skipped")),
        "age": SlotType("integer"),
        "weight": SlotType("number"),
        "name": SlotType("string"),
        "email": SlotType("email"),
        "agreed": SlotType("boolean"),
    },
)
ACTS = ("affirm", "deny", "inform", "question", "greet", "goodbye", "thank", "silence", "null")


def check_text(text):
    diags = Diagnostics()
    condition = parse_expression(text, P, diags)
    assert diags.items == [], "the expression itself must be valid"
    return check_condition(condition, ENV, diags), diags.items


def check_object(raw):
    diags = Diagnostics()
    condition = lower_condition(raw, P, diags)
    assert diags.items == [], "the object itself must be well formed"
    return check_condition(condition, ENV, diags), diags.items


FIELD_TYPES = [
    ("nlu.intent", FieldType("enum", ("user_wants_to_end", "ask_weather"), True, "intents")),
    ("nlu.dialogue_act", FieldType("enum", ACTS, False, "acts")),
    ("nlu.confidence", FieldType("number", (), False, None)),
    ("nlu.text", FieldType("string", (), False, None)),
    ("system.current_node", FieldType("enum", ("greeting", "meal_check", "closing"), False, "nodes")),
    ("system.previous_node", FieldType("enum", ("greeting", "meal_check", "closing"), True, "nodes")),
    ("system.node_turns", FieldType("integer", (), False, None)),
    ("system.required_slots_filled", FieldType("boolean", (), False, None)),
    ("skill.status", FieldType("enum", ("none", "ok", "failed", "timeout"), False, "skill_status")),
    ("slots.meal_status", FieldType("enum", ("adequate", "skipped"), True, "slot_values")),
    ("slots.age", FieldType("integer", (), True, None)),
    ("slots.email", FieldType("email", (), True, None)),
    ("slots.nope", None),
    ("nlu.intnet", None),
    ("slots", None),
    ("skill.data.x", None),
]


@pytest.mark.parametrize("name,expected", FIELD_TYPES)
def test_field_type(name, expected):
    assert field_type(name, ENV) == expected


# Valid conditions and what they normalise to.
NORMALISED = [
    ('nlu.dialogue_act == "negate"', Leaf("nlu.dialogue_act", "equals", "deny")),
    ('nlu.dialogue_act in ["negate", null, "affirm"]', Leaf("nlu.dialogue_act", "in", ["deny", "null", "affirm"])),
    ("nlu.dialogue_act != null", Leaf("nlu.dialogue_act", "not_equals", "null")),
    ("system.node_turns >= 2.0", Leaf("system.node_turns", "greater_or_equal", 2)),
    ("slots.age in [1, 2.0]", Leaf("slots.age", "in", [1, 2])),
    ("nlu.confidence > 0", Leaf("nlu.confidence", "greater_than", 0)),
    ("nlu.confidence < 0.75", Leaf("nlu.confidence", "less_than", 0.75)),
    ("slots.weight <= -72.5", Leaf("slots.weight", "less_or_equal", -72.5)),
    ("nlu.intent == null", Leaf("nlu.intent", "equals", None)),
    ('nlu.intent in ["ask_weather", null]', Leaf("nlu.intent", "in", ["ask_weather", None])),
    ("slots.meal_status is empty", Leaf("slots.meal_status", "is_empty", NO_VALUE)),
    ("system.node_turns is not empty", Leaf("system.node_turns", "is_not_empty", NO_VALUE)),
    ("slots.age != null", Leaf("slots.age", "not_equals", None)),
    ('slots.email contains "@"', Leaf("slots.email", "contains", "@")),
    ('nlu.text contains "네"', Leaf("nlu.text", "contains", "네")),
    ("system.turn_limit_reached", Leaf("system.turn_limit_reached", "equals", True)),
    ("slots.agreed == false", Leaf("slots.agreed", "equals", False)),
    ('skill.status in ["failed", "timeout"]', Leaf("skill.status", "in", ["failed", "timeout"])),
    ('system.current_node == "meal_check"', Leaf("system.current_node", "equals", "meal_check")),
    ('slots.meal_status not in ["skipped"]', Leaf("slots.meal_status", "not_in", ["skipped"])),
    ('slots.name == "김"', Leaf("slots.name", "equals", "김")),
    ('not (nlu.dialogue_act == "negate" or system.node_turns > 1.0) and slots.agreed',
     And((Not(Or((Leaf("nlu.dialogue_act", "equals", "deny"), Leaf("system.node_turns", "greater_than", 1)))),
          Leaf("slots.agreed", "equals", True)))),
]


@pytest.mark.parametrize("text,expected", NORMALISED)
def test_check_normalises(text, expected):
    checked, diags = check_text(text)
    assert diags == []
    assert checked == expected
    assert repr(checked) == repr(expected)  # 2 and not 2.0


# One row per rule: expression, code, message fragment, hint fragment (None: no hint).
EXPRESSION_ERRORS = [
    # E201 unknown field
    ('nlu.intnet == "x"', "E201", "unknown condition field 'nlu.intnet'", "did you mean 'nlu.intent'?"),
    ('slot.meal_status == "skipped"', "E201", "unknown condition field", "did you mean 'slots.meal_status'?"),
    ('slots.meal_stat == "skipped"', "E201", "undeclared slot 'meal_stat'", "did you mean 'meal_status'?"),
    ("slots.zzz is empty", "E201", "undeclared slot 'zzz'", 'declare it under "slots"'),
    ("foo", "E201", "unknown condition field 'foo'", "condition fields are nlu.intent"),
    # E203 operator not applicable
    ("nlu.text > 3", "E203", "operator 'greater_than' does not apply to 'nlu.text' (string)",
     "ordering operators apply to integer, number, date and time fields"),
    ("slots.meal_status < 1", "E203", "(enum, nullable)", "ordering operators"),
    ("system.fallback_exhausted >= 1", "E203", "'greater_or_equal'", "ordering operators"),
    ('nlu.intent contains "a"', "E203", "operator 'contains' does not apply", "'contains' tests text"),
    ('system.node_turns contains "1"', "E203", "'contains'", "'contains' tests text"),
    # E204 ordering needs a number; bool is not a number; integer fields need whole numbers
    ('system.node_turns >= "2"', "E204", "needs a number, got string \"2\"", "write the number without quotes: 2"),
    ("system.node_turns >= true", "E204", "needs a number, got boolean true", None),
    ("nlu.confidence > false", "E204", "needs a number, got boolean false", None),
    ("system.node_turns > null", "E204", "needs a number, got null", None),
    ("system.node_turns >= 2.5", "E204", "'system.node_turns' holds whole numbers; 2.5 is not one", None),
    ("slots.age == 1.5", "E204", "holds whole numbers; 1.5", None),
    # E204 null only for nullable fields
    ("system.node_turns == null", "E204", "'system.node_turns' is never null", None),
    ("system.current_node != null", "E204", "'system.current_node' is never null", None),
    # E204 enum members, with did-you-mean over the domain
    ('nlu.intent == "user_want_to_end"', "E204", "'user_want_to_end' is not a declared intent",
     "did you mean 'user_wants_to_end'?"),
    ('nlu.intent == "zzz"', "E204", "not a declared intent", "declared intents: user_wants_to_end, ask_weather"),
    ('slots.meal_status == "skiped"', "E204", "'skiped' is not a value of slot 'meal_status'",
     "did you mean 'skipped'?"),
    ('system.current_node == "meal_chek"', "E204", "'meal_chek' is not a node id", "did you mean 'meal_check'?"),
    ('system.previous_node in ["greeting", "closng"]', "E204", "'closng' is not a node id",
     "did you mean 'closing'?"),
    ('nlu.dialogue_act == "affrim"', "E204", "'affrim' is not a dialogue act", "did you mean 'affirm'?"),
    ('skill.status == "succes"', "E204", "'succes' is not a skill status", "skill statuses: none, ok, failed, timeout"),
    ("slots.meal_status == 1", "E204", "needs a string, got integer 1", "values: adequate, skipped"),
    ("nlu.dialogue_act == true", "E204", "needs a string, got boolean true", "dialogue acts: affirm, deny, inform"),
    # E204 in/not_in need a non-empty list
    ("nlu.intent in []", "E204", "'in' needs at least one value", None),
    ('nlu.intent not in "ask_weather"', "E204", "'not_in' needs a list of values, got string",
     'write a list, as in ["ask_weather"]'),
    # E204 equals/contains values of the field's type
    ("slots.name == 3", "E204", "'equals' on 'slots.name' needs a string, got integer 3", 'text values are quoted: "3"'),
    ("slots.name contains 3", "E204", "'contains' on 'slots.name' needs a string", 'quoted: "3"'),
    ('slots.agreed == "yes"', "E204", "needs true or false, got string \"yes\"", None),
    ("slots.weight == [1]", "E204", "needs a number, got array [1]", None),
    ("nlu.text", "E204", "needs a string, got boolean true", "a field on its own means '== true'"),
]


def caret_at(text: str, code: str, fragment: str = "") -> int:
    """Where the caret belongs in a one-leaf expression: the field (E201), the operator
    (E202, E203), the value (E204), or the bad member of a list value."""
    named = re.match(r"'([^']*)'", fragment)
    if code == "E204" and named and f'"{named.group(1)}"' in text and "[" in text:
        return text.index(f'"{named.group(1)}"')
    field = text.split()[0]
    operator = re.compile(r"\s*(==|!=|<=|>=|<|>|not in|in|contains)\s*").match(text, len(field))
    if code == "E201" or operator is None:
        return 0
    return operator.start(1) if code in ("E202", "E203") else operator.end()


@pytest.mark.parametrize("text,code,fragment,hint", EXPRESSION_ERRORS)
def test_check_error(text, code, fragment, hint):
    checked, diags = check_text(text)
    assert checked is None
    assert [(d.code, d.path, d.string_offset) for d in diags] == [(code, P, caret_at(text, code, fragment))]
    assert fragment in diags[0].message
    if hint is None:
        assert diags[0].hint is None
    else:
        assert hint in diags[0].hint


# E202 is reported here and only here: lowering keeps the operator as written.
OPERATOR_ERRORS = [
    ("equal", "unknown operator 'equal'", "did you mean 'equals'?"),
    (">=", "unknown operator '>='", "did you mean 'greater_or_equal'?"),
    ("not in", "unknown operator 'not in'", "did you mean 'not_in'?"),
    ("exists", "unknown operator 'exists'", "operators are equals, not_equals, in, not_in, greater_than, "
     "greater_or_equal, less_than, less_or_equal, is_empty, is_not_empty, contains"),
]


@pytest.mark.parametrize("operator,message,hint", OPERATOR_ERRORS)
def test_check_unknown_operator(operator, message, hint):
    checked, diags = check_object({"field": "nlu.intent", "operator": operator, "value": "ask_weather"})
    assert checked is None
    assert [(d.code, d.path, d.string_offset, d.message, d.hint) for d in diags] == [
        ("E202", P + "/operator", None, message, hint)]


def test_one_report_per_leaf_in_rule_order():
    # An unknown field and an unknown operator in one leaf: the field is reported, once.
    checked, diags = check_object({"field": "nope", "operator": "equal", "value": 1})
    assert checked is None and [d.code for d in diags] == ["E201"]
    # An inapplicable operator with a bad value: E203 only.
    checked, diags = check_object({"field": "nlu.text", "operator": "less_than", "value": "x"})
    assert checked is None and [d.code for d in diags] == ["E203"]


def test_every_bad_leaf_is_reported_at_its_own_place():
    checked, diags = check_text('system.node_turns > 1 and nlu.intent == "x" or foo')
    assert checked is None
    assert [(d.code, d.path, d.string_offset) for d in diags] == [("E204", P, 40), ("E201", P, 47)]
    checked, diags = check_object({"and": [
        {"field": "nlu.intent", "operator": "equals", "value": "x"},
        {"field": "slots.age", "operator": "is_empty"},
        {"not": {"field": "foo", "operator": "is_empty"}},
    ]})
    assert checked is None
    assert [(d.code, d.path, d.string_offset) for d in diags] == [
        ("E204", P + "/and/0/value", None), ("E201", P + "/and/2/not/field", None)]


def test_string_inside_object_form_points_into_the_string():
    checked, diags = check_object({"or": ["slots.age > 1", 'nlu.text == "a" and skill.status == "success"']})
    assert checked is None
    assert [(d.code, d.path, d.string_offset) for d in diags] == [("E204", P + "/or/1", 36)]
    assert diags[0].hint == "skill statuses: none, ok, failed, timeout"


def test_positions_survive_normalisation():
    checked, diags = check_object({"and": [{"field": "nlu.dialogue_act", "operator": "equals", "value": "negate"},
                                           "system.node_turns > 1.0"]})
    assert diags == []
    assert checked.pos == Position(P)
    assert checked.items[0].pos == Position(P + "/and/0")
    assert checked.items[1].pos == Position(P + "/and/1", 0, 18, 20)
    assert checked.items[0].value == "deny"


def test_deep_ast_is_checked_without_recursion():
    condition = Leaf("nlu.dialogue_act", "equals", "negate")
    for _ in range(10_000):
        condition = Not(condition)
    diags = Diagnostics()
    checked = check_condition(condition, ENV, diags)
    assert diags.items == []
    for _ in range(10_000):
        checked = checked.item
    assert checked == Leaf("nlu.dialogue_act", "equals", "deny")
