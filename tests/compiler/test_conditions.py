"""The condition syntaxes: expression parser, object-form lowering, printer, round trips.

Expected ASTs, messages and offsets are written by hand; the hypothesis strategies at the
end generate well-formed ASTs for the round-trip properties.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.condition_ast import NO_VALUE, And, Leaf, Not, Or, Position, walk
from compiler.conditions import MAX_DEPTH, lower_condition, parse_expression, print_condition
from compiler.diagnostics import Diagnostics
from interpreter.ir import FIXED_FIELDS
from support.irkit import object_form

P = "/graph/nodes/0/next_nodes/1/condition"


def L(field, operator, value=NO_VALUE):
    return Leaf(field, operator, value)


def A(*items):
    return And(tuple(items))


def O(*items):  # noqa: E743 - reads like the node it builds
    return Or(tuple(items))


def N(item):
    return Not(item)


a, b, c = (L(name, "equals", True) for name in "abc")


def parse(text, pointer=P):
    diags = Diagnostics()
    return parse_expression(text, pointer, diags), diags.items


def lower(raw, pointer=P):
    diags = Diagnostics()
    return lower_condition(raw, pointer, diags), diags.items


# ---------------------------------------------------------------------------------------
# Parser: valid expressions.

VALID = [
    ('slots.meal_status == "skipped" and system.node_turns >= 2',
     A(L("slots.meal_status", "equals", "skipped"), L("system.node_turns", "greater_or_equal", 2))),
    ("system.conversation_resuming and slots.daily_life is empty",
     A(L("system.conversation_resuming", "equals", True), L("slots.daily_life", "is_empty"))),
    ('nlu.dialogue_act not in ["affirm", "goodbye"] or not (nlu.intent == "user_wants_to_end")',
     O(L("nlu.dialogue_act", "not_in", ["affirm", "goodbye"]),
       N(L("nlu.intent", "equals", "user_wants_to_end")))),
    ("a and b and c", A(a, b, c)),
    ("a or b or c", O(a, b, c)),
    ("a or b and c", O(a, A(b, c))),
    ("a and b or c", O(A(a, b), c)),
    ("(a or b) and c", A(O(a, b), c)),
    ("(a and b) and c", A(A(a, b), c)),
    ("((a))", a),
    ("not not a", N(N(a))),
    ("not a and b", A(N(a), b)),
    ("not x == 1", N(L("x", "equals", 1))),
    ("x != 1", L("x", "not_equals", 1)),
    ("x < 1", L("x", "less_than", 1)),
    ("x <= 1", L("x", "less_or_equal", 1)),
    ("x > 1", L("x", "greater_than", 1)),
    ("x >= 1", L("x", "greater_or_equal", 1)),
    ("x in []", L("x", "in", [])),
    ("x in [1, 'a', true, null]", L("x", "in", [1, "a", True, None])),
    ("x contains 'it\\'s'", L("x", "contains", "it's")),
    ("x is not empty", L("x", "is_not_empty")),
    ("x == -1.5e3", L("x", "equals", -1500.0)),
    ("x == 0", L("x", "equals", 0)),
    ("x == 2.0", L("x", "equals", 2.0)),
    ("x == null", L("x", "equals", None)),
    ("x == false", L("x", "equals", False)),
    ('x == "a\\"b\\\\c\\u00e9\\ud83d\\ude00\\n"', L("x", "equals", 'a"b\\cé😀\n')),
    ("x == 'say \"hi\"'", L("x", "equals", 'say "hi"')),
    ('x == ""', L("x", "equals", "")),
    # Keywords are whole words: fields may contain or start with them.
    ("slots.and == 1", L("slots.and", "equals", 1)),
    ("notice in [1]", L("notice", "in", [1])),
    ("isa is empty", L("isa", "is_empty")),
    ("a\n\tand\r\nb", A(a, b)),
    ('slots.식사 == "먹었"', L("slots.식사", "equals", "먹었")),
]


@pytest.mark.parametrize("text,expected", VALID)
def test_parse_valid(text, expected):
    condition, diags = parse(text)
    assert diags == []
    assert condition == expected
    assert repr(condition) == repr(expected)  # also tells 1 from 1.0 and True


def test_parse_positions():
    condition, _ = parse("a and not (b or c)", "/x/condition")
    got = [(type(node).__name__, node.pos) for node in walk(condition)]
    assert got == [
        ("And", Position("/x/condition", 0)),
        ("Leaf", Position("/x/condition", 0)),
        ("Not", Position("/x/condition", 6)),
        ("Or", Position("/x/condition", 11)),
        ("Leaf", Position("/x/condition", 11)),
        ("Leaf", Position("/x/condition", 16)),
    ]


# ---------------------------------------------------------------------------------------
# Parser: syntax errors (one E205 each, message fragment, offset inside the string, hint).

SYNTAX_ERRORS = [
    ('slots.meal_status "skipped"', "expected a comparison operator after 'slots.meal_status'", 18,
     "comparison operators are =="),
    ("a == 1)", "unexpected ')'", 6, "no matching '('"),
    ('x == "abc', "unterminated string", 5, 'close the string with "'),
    ("x == 'a\\qb'", "invalid escape '\\q'", 7, "valid escapes"),
    ('x == "\\u12"', "invalid escape '\\u'", 6, "valid escapes"),
    ('x == "ab\\ud83d"', "half of a surrogate pair", 8, "valid escapes"),
    ('x == "\\ude00\\ud83d"', "half of a surrogate pair", 6, "valid escapes"),
    ("x = 1", "unexpected character '='", 2, "compare with '=='"),
    ("x && y", "unexpected character '&'", 2, "use 'and'"),
    ("a AND b", "keywords are lowercase: write 'and', not 'AND'", 2, None),
    ("x ==", "expected a value after '=='", 4, None),
    ("x == skipped", "expected a value after '=='", 5, 'text values are quoted: "skipped"'),
    ("(a and b", "missing ')' to close this '('", 0, None),
    ("a or (b and (c", "missing ')' to close this '('", 12, None),
    ("x in [1, 2", "missing ']' to close this list", 5, None),
    ("x in [1 2]", "expected ',' or ']' after '1'", 8, None),
    ("x in [[1]]", "a list may hold only strings, numbers, true, false and null", 6, None),
    ("x is", "expected 'empty' after 'is'", 4, "'is empty' or 'is not empty'"),
    ("x is not 1", "expected 'empty' after 'not'", 9, "'is empty' or 'is not empty'"),
    ("x not 5", "expected 'in' after 'not'", 6, None),
    ("a and", "expected a condition after 'and'", 5, "starts with a field name"),
    ("a and )", "expected a condition after 'and'", 6, "starts with a field name"),
    ("not", "expected a condition after 'not'", 3, "starts with a field name"),
    ("== 1", "unexpected '=='", 0, "starts with a field name"),
    ("and", "unexpected 'and'", 0, "starts with a field name"),
    ("x == 1 y == 2", "unexpected 'y' after '1'", 7, "join conditions with 'and' or 'or'"),
    ("x == 01", "unexpected '1' after '0'", 6, "leading zeros"),
    ("x == 1e999", "number '1e999' is out of range", 5, None),
    ("", "empty condition expression", 0, "leave out"),
    ("   ", "empty condition expression", 0, "leave out"),
]


@pytest.mark.parametrize("text,fragment,offset,hint", SYNTAX_ERRORS)
def test_parse_syntax_error(text, fragment, offset, hint):
    condition, diags = parse(text)
    assert condition is None
    assert [(d.code, d.path, d.string_offset) for d in diags] == [("E205", P, offset)]
    assert fragment in diags[0].message
    if hint is None:
        assert diags[0].hint is None
    else:
        assert hint in diags[0].hint


def test_parse_depth_limit_is_64_levels():
    assert MAX_DEPTH == 64
    condition, diags = parse("not " * 64 + "a")
    assert diags == [] and isinstance(condition, Not)
    condition, diags = parse("not " * 65 + "a")
    assert condition is None
    assert [(d.code, d.string_offset) for d in diags] == [("E206", 256)]  # the 65th `not`
    assert diags[0].message == "condition nested more than 64 levels deep"
    assert "flatten" in diags[0].hint


def test_parse_deep_parentheses_and_long_input_do_not_crash():
    condition, diags = parse("(" * 100_000 + "a" + ")" * 100_000)
    assert condition is None and [(d.code, d.string_offset) for d in diags] == [("E206", 64)]
    condition, diags = parse("not " * 5_000 + "a")
    assert condition is None and [(d.code, d.string_offset) for d in diags] == [("E206", 256)]
    condition, diags = parse(" and ".join(["a"] * 2_000))
    assert diags == [] and len(condition.items) == 2_000
    condition, diags = parse("(" * 64 + "a" + ")" * 64)
    assert diags == [] and condition == a


# ---------------------------------------------------------------------------------------
# Object form.


def test_lower_object_form_with_positions():
    raw = {"and": [{"field": "slots.meal_status", "operator": "equals", "value": "skipped"},
                   {"not": {"field": "system.node_turns", "operator": "less_than", "value": 2}},
                   "a or b"]}
    condition, diags = lower(raw)
    assert diags == []
    assert condition == A(L("slots.meal_status", "equals", "skipped"),
                          N(L("system.node_turns", "less_than", 2)), O(a, b))
    assert [node.pos for node in walk(condition)] == [
        Position(P),
        Position(P + "/and/0"),
        Position(P + "/and/1"),
        Position(P + "/and/1/not"),
        Position(P + "/and/2", 0),
        Position(P + "/and/2", 0),
        Position(P + "/and/2", 5),
    ]


def test_lower_keeps_lists_as_given_but_a_one_item_list_is_its_item():
    leaf = {"field": "x", "operator": "is_empty"}
    assert lower({"and": [leaf]}) == (L("x", "is_empty"), [])
    assert lower({"or": [leaf]}) == (L("x", "is_empty"), [])
    assert lower({"or": [{"or": [leaf, leaf]}, leaf]})[0] == O(O(L("x", "is_empty"), L("x", "is_empty")),
                                                             L("x", "is_empty"))


def test_lower_keeps_an_unknown_operator_for_the_checker():
    assert lower({"field": "x", "operator": "equal", "value": 1}) == (L("x", "equal", 1), [])
    assert lower({"field": "x", "operator": "exists"}) == (L("x", "exists"), [])


OBJECT_ERRORS = [
    ({}, "E206", P, "empty condition object", '"field", "operator", "value"'),
    ({"operator": "equals", "value": 1}, "E206", P, "condition is missing 'field'", None),
    ({"field": "x"}, "E206", P, "condition is missing 'operator'", "operators are equals"),
    ({"field": "x", "operater": "equals", "value": 1}, "E206", P + "/operater",
     "unknown key 'operater' in a condition", "did you mean 'operator'?"),
    ({"field": "x", "operator": "is_empty", "value": None}, "E206", P + "/value",
     "operator 'is_empty' takes no value", 'remove "value"'),
    ({"field": "x", "operator": "is_not_empty", "value": 1}, "E206", P + "/value",
     "operator 'is_not_empty' takes no value", 'remove "value"'),
    ({"field": "x", "operator": "equals"}, "E206", P, "operator 'equals' needs a 'value'", 'add "value"'),
    ({"and": []}, "E206", P + "/and", "'and' needs at least one condition", None),
    ({"or": []}, "E206", P + "/or", "'or' needs at least one condition", None),
    ({"or": {"field": "x"}}, "E206", P + "/or", "'or' needs a list of conditions, got object", None),
    ({"and": "a"}, "E206", P + "/and", "'and' needs a list of conditions, got string", None),
    ({"field": "x", "operator": "equals", "value": 1, "and": ["a"]}, "E206", P,
     "a condition mixes 'field' and 'and'", "one of"),
    ({"not": "a", "or": ["b"]}, "E206", P, "a condition mixes 'or' and 'not'", None),
    ({"not": "a", "value": 1}, "E206", P, "a condition mixes 'not' and 'value'", None),
    (5, "E012", P, "must be an object or an expression string, got integer", None),
    (None, "E012", P, "got null", None),
    (["a"], "E012", P, "got array", None),
    ({"field": 1, "operator": "equals", "value": 1}, "E012", P + "/field", "'field' must be a string", None),
    ({"field": "x", "operator": ["equals"], "value": 1}, "E012", P + "/operator",
     "'operator' must be a string, got array", None),
    ({"not": "x =="}, "E205", P + "/not", "expected a value after '=='", None),
]


@pytest.mark.parametrize("raw,code,path,fragment,hint", OBJECT_ERRORS)
def test_lower_object_error(raw, code, path, fragment, hint):
    condition, diags = lower(raw)
    assert condition is None
    assert [(d.code, d.path) for d in diags] == [(code, path)]
    assert fragment in diags[0].message
    if hint is not None:
        assert hint in diags[0].hint


def test_lower_collects_every_bad_leaf_without_cascade():
    raw = {"or": [{"field": "x"},
                  {"field": "y", "operator": "is_empty", "value": 1},
                  {"field": "z", "operator": "equals", "value": 1},
                  {"not": {"field": "w", "valeu": 1, "operator": "equals"}},
                  "q =="]}
    condition, diags = lower(raw)
    assert condition is None
    assert [(d.code, d.path) for d in diags] == [
        ("E206", P + "/or/0"),
        ("E206", P + "/or/1/value"),
        ("E206", P + "/or/3/not/valeu"),
        ("E205", P + "/or/4"),
    ]


def nested_nots(depth):
    raw = {"field": "x", "operator": "is_empty"}
    for _ in range(depth):
        raw = {"not": raw}
    return raw


def test_lower_depth_limit():
    condition, diags = lower(nested_nots(64))
    assert diags == [] and isinstance(condition, Not)
    condition, diags = lower(nested_nots(65))
    assert condition is None
    assert [(d.code, d.path) for d in diags] == [("E206", P + "/not" * 64)]


def test_lower_10000_deep_reports_exactly_one_error():
    condition, diags = lower(nested_nots(10_000))
    assert condition is None
    assert [(d.code, d.path, d.message) for d in diags] == [
        ("E206", P + "/not" * 64, "condition nested more than 64 levels deep")]


def test_lower_depth_counts_levels_inside_strings():
    assert lower({"not": "not " * 63 + "a"})[1] == []
    condition, diags = lower({"not": "not " * 64 + "a"})
    assert condition is None
    assert [(d.code, d.path, d.string_offset) for d in diags] == [("E206", P + "/not", 252)]


# ---------------------------------------------------------------------------------------
# Printer.

PRINTED = [
    (A(L("slots.meal_status", "equals", "skipped"), L("system.node_turns", "greater_or_equal", 2)),
     'slots.meal_status == "skipped" and system.node_turns >= 2'),
    (A(O(a, b), c), "(a or b) and c"),
    (A(A(a, b), c), "(a and b) and c"),
    (O(A(a, b), c), "a and b or c"),
    (O(O(a, b), c), "(a or b) or c"),
    (N(A(a, b)), "not (a and b)"),
    (N(O(a, b)), "not (a or b)"),
    (N(N(a)), "not not a"),
    (N(L("x", "equals", 1)), "not x == 1"),
    (A(N(a), b), "not a and b"),
    (L("x", "is_empty"), "x is empty"),
    (L("x", "is_not_empty"), "x is not empty"),
    (L("x", "in", ["a", 1, None, 2.5]), 'x in ["a", 1, null, 2.5]'),
    (L("x", "not_in", []), "x not in []"),
    (L("x", "contains", "@"), 'x contains "@"'),
    (L("x", "equals", 'say "hi" \\ 한'), 'x == "say \\"hi\\" \\\\ 한"'),
    (L("x", "equals", True), "x"),
    (L("x", "equals", False), "x == false"),
    (L("x", "not_equals", True), "x != true"),
    (L("x", "less_than", -0.5), "x < -0.5"),
    (L("x", "less_or_equal", 3), "x <= 3"),
    (L("x", "greater_than", 1e16), "x > 1e+16"),
]


@pytest.mark.parametrize("condition,text", PRINTED)
def test_print(condition, text):
    assert print_condition(condition) == text


def test_print_refuses_an_unknown_operator():
    with pytest.raises(ValueError):
        print_condition(L("x", "equal", 1))


# ---------------------------------------------------------------------------------------
# Properties. Strategies generate well-formed ASTs: catalogue fields and slots, every
# operator with a value that fits it, strings with quotes, backslashes and any Unicode.

field_names = st.sampled_from([name for name, *_ in FIXED_FIELDS] + ["slots.x", "slots.meal_status"])
texts = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=10),
    st.sampled_from(['"', "'", "\\", "\\'", 'a"b\\c', '\\u0041', "한국어", "😀", "\n\t"]),
)
numbers = st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False))
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
values_by_operator = {
    "equals": scalars, "not_equals": scalars,
    "in": st.lists(scalars, max_size=4), "not_in": st.lists(scalars, max_size=4),
    "greater_than": numbers, "greater_or_equal": numbers, "less_than": numbers, "less_or_equal": numbers,
    "contains": texts, "is_empty": st.just(NO_VALUE), "is_not_empty": st.just(NO_VALUE),
}
leaves = st.one_of(*(
    st.builds(Leaf, field_names, st.just(operator), values)
    for operator, values in values_by_operator.items()
))
conditions = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda items: And(tuple(items))),
        st.lists(inner, min_size=2, max_size=3).map(lambda items: Or(tuple(items))),
        inner.map(Not),
    ),
    max_leaves=8,
)


@settings(deadline=None)  # example count from the active profile (`make fuzz`: long)
@given(conditions)
def test_object_form_and_printed_expression_agree(condition):
    lowered, diags = lower(object_form(condition))
    assert diags == []
    assert lowered == condition
    assert parse(print_condition(lowered))[0] == lowered


expression_pieces = st.sampled_from(
    list("ab.xn =!<>()[],'\"\\-0123456789eE\t")
    + ["and ", "or ", "not ", "in ", "is ", "empty ", "contains ", "true ", "null ", "x.y ", "==", "AND "]
)
expression_like = st.lists(expression_pieces, max_size=25).map("".join)


@settings(deadline=None)  # example count from the active profile (`make fuzz`: long)
@given(expression_like | st.text(max_size=30))
def test_parser_never_raises_and_reports_once(text):
    condition, diags = parse(text)
    if condition is None:
        assert len(diags) == 1 and diags[0].code in ("E205", "E206")
        assert 0 <= diags[0].string_offset <= len(text)
    else:
        assert diags == []
        assert parse(print_condition(condition))[0] == condition
