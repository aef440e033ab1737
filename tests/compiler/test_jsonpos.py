"""Tests for compiler.jsonpos: exact positions by JSON pointer, syntax errors, json.loads parity.

Positions in the tables were counted by hand on DOC (Hangul syllables and tabs are one column).
The properties compare against json.loads and re-read the text at every reported position.
"""

from __future__ import annotations

import json
from json.decoder import scanstring

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.jsonpos import JSONSyntaxError, decode_with_positions, locate_many
from conftest import examples

DOC = (
    "{\n"
    '  "metadata": {"name": "세니메이트", "language": "ko"},\n'
    '  "graph": {\n'
    '\t"entry": "인사",\n'
    '    "nodes": [\n'
    '      {"id": "인사", "description": '
    '"안녕\\n하세요 \\"반가워요\\" \\u00e9\\ud83d\\ude00끝",\n'
    '       "next_nodes": [], "default_next": "끝"},\n'
    '      {"id": "끝", "terminal": true, "a/b": 1, "m~n": -2.5e3, "": null}\n'
    "    ]\n"
    "  }\n"
    "}\n"
)
DESCRIPTION = '안녕\n하세요 "반가워요" é\U0001f600끝'

# pointer -> (value position, key position or None)
POSITIONS = [
    ("", (1, 1), None),
    ("/metadata", (2, 15), (2, 3)),
    ("/metadata/name", (2, 24), (2, 16)),
    ("/metadata/language", (2, 45), (2, 33)),
    ("/graph", (3, 12), (3, 3)),
    ("/graph/entry", (4, 11), (4, 2)),
    ("/graph/nodes", (5, 14), (5, 5)),
    ("/graph/nodes/0", (6, 7), None),
    ("/graph/nodes/0/id", (6, 14), (6, 8)),
    ("/graph/nodes/0/description", (6, 35), (6, 20)),
    ("/graph/nodes/0/next_nodes", (7, 22), (7, 8)),
    ("/graph/nodes/0/default_next", (7, 42), (7, 26)),
    ("/graph/nodes/1", (8, 7), None),
    ("/graph/nodes/1/id", (8, 14), (8, 8)),
    ("/graph/nodes/1/terminal", (8, 31), (8, 19)),
    ("/graph/nodes/1/a~1b", (8, 44), (8, 37)),
    ("/graph/nodes/1/m~0n", (8, 54), (8, 47)),
    ("/graph/nodes/1/", (8, 66), (8, 62)),
]

# pointer that does not exist -> position of its closest existing ancestor
NEAREST = [
    ("/graph/nodes/0/params/max_turns", (6, 7)),
    ("/graph/nodes/2", (5, 14)),
    ("/graph/nodes/0/next_nodes/0/target", (7, 22)),
    ("/metadata/name/x", (2, 24)),
    ("/missing", (1, 1)),
    ("/graph/nodes/01", (5, 14)),  # RFC 6901: no leading zeros in an index
    ("/graph/nodes/-", (5, 14)),  # '-' names the element after the last one
    ("graph", (1, 1)),  # malformed: no leading '/'
    ("/graph/nodes/1/m~2n", (1, 1)),  # malformed: '~2' is not an escape
]

# decoded offset in DESCRIPTION -> column on line 6
DESCRIPTION_COLUMNS = [
    (0, 36), (1, 37), (2, 38), (3, 40), (6, 43), (7, 44), (8, 46), (12, 50),
    (13, 52), (14, 53), (15, 59), (16, 71), (17, 72),
]


@pytest.fixture(scope="module")
def doc():
    return decode_with_positions(DOC)


def test_doc_decodes_like_json_loads(doc):
    value, _ = doc
    assert value == json.loads(DOC)
    assert value["graph"]["nodes"][0]["description"] == DESCRIPTION


@pytest.mark.parametrize("pointer, value_at, key_at", POSITIONS)
def test_value_and_key_positions(doc, pointer, value_at, key_at):
    _, locator = doc
    assert locator.value(pointer) == value_at
    assert locator.key(pointer) == key_at
    assert locator.nearest(pointer) == value_at


@pytest.mark.parametrize("pointer, nearest_at", NEAREST)
def test_missing_paths(doc, pointer, nearest_at):
    _, locator = doc
    assert locator.value(pointer) is None
    assert locator.key(pointer) is None
    assert locator.nearest(pointer) == nearest_at


@pytest.mark.parametrize("offset, column", DESCRIPTION_COLUMNS)
def test_string_char_counts_escapes(doc, offset, column):
    _, locator = doc
    assert locator.string_char("/graph/nodes/0/description", offset) == (6, column)


def test_string_char_outside_a_string(doc):
    _, locator = doc
    description = "/graph/nodes/0/description"
    assert locator.string_char(description, len(DESCRIPTION) + 1) is None
    assert locator.string_char(description, -1) is None
    assert locator.string_char("/graph/nodes/1/terminal", 0) is None
    assert locator.string_char("/graph/nodes", 0) is None
    assert locator.string_char("/graph/nodes/7/id", 0) is None


def test_crlf_and_lf_give_the_same_positions():
    _, locator = decode_with_positions(DOC.replace("\n", "\r\n"))
    for pointer, value_at, key_at in POSITIONS:
        assert (locator.value(pointer), locator.key(pointer)) == (value_at, key_at)


def test_lone_carriage_return_breaks_a_line():
    _, locator = decode_with_positions('[1,\r "x"]')
    assert locator.value("/1") == (2, 2)


def test_duplicate_keys_last_wins_like_json_loads():
    text = '{"a": 1,\n "b": 2,\n "a": [3]}'
    value, locator = decode_with_positions(text)
    assert value == json.loads(text) == {"a": [3], "b": 2}
    assert list(value) == ["a", "b"]
    assert locator.key("/a") == (3, 2)
    assert locator.value("/a/0") == (3, 8)


def test_escaped_keys_are_found_by_their_decoded_name():
    text = '{"caf\\u00e9": {"x\\"y": 1}, "a\\/b": 2}'
    _, locator = decode_with_positions(text)
    assert locator.value("/café/x\"y") == (1, 24)
    assert locator.key("/a~1b") == (1, 28)


@pytest.mark.parametrize(
    "raw",
    ['"\\ud800"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"\\ud800\\u0041"', '"\\uDBFF\\uDFFF"'],
)
def test_surrogate_escapes_decode_like_json_loads(raw):
    value, locator = decode_with_positions(raw)
    assert value == json.loads(raw)
    assert locator.string_char("", len(value)) == (1, len(raw))


def test_numbers_decode_like_json_loads():
    text = "[0, -0, -0.0, 12345678901234567890123, 1e400, -2.5E-3, 1.0, 10e1]"
    value, _ = decode_with_positions(text)
    expected = json.loads(text)
    assert value == expected
    assert [type(v) for v in value] == [type(v) for v in expected]


def test_locate_many_points_missing_paths_at_their_ancestor():
    found = locate_many(DOC, ["/graph/entry", "/graph/nodes/1/params"])
    assert found == {"/graph/entry": (4, 11), "/graph/nodes/1/params": (8, 7)}


# text -> (message fragment, line, column)
SYNTAX_ERRORS = [
    ("", "the file is empty", 1, 1),
    (" \n\t\r\n", "the file is empty", 1, 1),
    ('{"a": 1}\n{"b": 2}', "expected the end of the file", 2, 1),
    ('{\n  "a": "abc\n}', "unterminated string", 2, 8),
    ('{"a": "abc', "unterminated string", 1, 7),
    ('"\\', "unterminated string", 1, 1),
    ('["a\\qb"]', "invalid escape '\\q'", 1, 4),
    ('["\\u12G4"]', "expected 4 hex digits after '\\u'", 1, 3),
    ('["a\tb"]', "control character U+0009", 1, 4),
    ('["\x00"]', "control character U+0000", 1, 3),
    ("NaN", "NaN and Infinity are not allowed", 1, 1),
    ("[1, Infinity]", "NaN and Infinity are not allowed", 1, 5),
    ('{"x": -Infinity}', "NaN and Infinity are not allowed", 1, 7),
    ("[01]", "leading zeros", 1, 2),
    ("-012", "leading zeros", 1, 2),
    ("[1.]", "expected a digit after '.'", 1, 4),
    ("1.e5", "expected a digit after '.'", 1, 3),
    ("[1e]", "expected a digit in the exponent", 1, 4),
    ("1E+", "expected a digit in the exponent", 1, 4),
    ("[-]", "expected a digit after '-'", 1, 3),
    ("[1,]", "trailing commas are not allowed", 1, 4),
    ('{"a": 1,\n}', "trailing commas are not allowed", 2, 1),
    ("{'a': 1}", "double quotes", 1, 2),
    ("[1, 'x']", "double quotes", 1, 5),
    ('{"a": 1} // note', "comments are not allowed", 1, 10),
    ("[1, /* c */ 2]", "comments are not allowed", 1, 5),
    ("{\n  # c\n}", "comments are not allowed", 2, 3),
    ('{"a" 1}', "expected ':' after the member name", 1, 6),
    ("[1 2]", "expected ',' or ']' after an array element", 1, 4),
    ('{"a": 1 "b": 2}', "expected ',' or '}' after an object member", 1, 9),
    ('{"a": [1, 2}', "expected ',' or ']' after an array element", 1, 12),
    ('{"이름": "값" "x"}', "expected ',' or '}' after an object member", 1, 12),
    ('{"a": ', "expected a value", 1, 7),
    ("[1,\n 2", "the array opened at 1:1 is not closed", 2, 3),
    ('{"a": {"b": 1}', "the object opened at 1:1 is not closed", 1, 15),
    ("[tru]", "expected a value", 1, 2),
    ("[True]", "expected a value", 1, 2),
    ("[\u3000 1]", "U+3000", 1, 2),
    ("{1: 2}", "expected a member name in double quotes", 1, 2),
    ("1" * 5000, "too many digits", 1, 1),
]


@pytest.mark.parametrize("text, message, line, column", SYNTAX_ERRORS)
def test_syntax_errors_are_located(text, message, line, column):
    with pytest.raises(JSONSyntaxError) as caught:
        decode_with_positions(text)
    error = caught.value
    assert message in error.message
    assert "\n" not in error.message
    assert (error.line, error.column) == (line, column)


DEPTH = 100_000


def test_deep_object_nesting_needs_no_recursion():
    text = '{"not": ' * DEPTH + "true" + "}" * DEPTH
    value, locator = decode_with_positions(text)
    for _ in range(DEPTH):
        value = value["not"]
    assert value is True
    deepest = "/not" * DEPTH
    assert locator.value(deepest) == (1, 8 * DEPTH + 1)
    assert locator.nearest(deepest + "/x") == (1, 8 * DEPTH + 1)


def test_deep_array_nesting_and_its_errors():
    value, locator = decode_with_positions("[" * DEPTH + "]" * DEPTH)
    for _ in range(DEPTH - 1):
        (value,) = value
    assert value == []
    assert locator.value("/0" * 3) == (1, 4)
    with pytest.raises(JSONSyntaxError) as caught:
        decode_with_positions("[" * DEPTH)
    assert (caught.value.line, caught.value.column) == (1, DEPTH + 1)


# ---- properties against json.loads ----

json_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | json_text
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(json_text, inner, max_size=4),
    max_leaves=12,
)
renderings = st.tuples(st.booleans(), st.sampled_from([None, 0, 1, 2, "\t"]))


def _members(value):
    """(pointer, value, key or None) for the value and everything inside it, iteratively."""
    pending = [("", value, None)]
    while pending:
        pointer, item, key = pending.pop()
        yield pointer, item, key
        if isinstance(item, dict):
            children = [(name, child, name) for name, child in item.items()]
        elif isinstance(item, list):
            children = [(index, child, None) for index, child in enumerate(item)]
        else:
            children = []
        for name, child, key in children:
            escaped = str(name).replace("~", "~0").replace("/", "~1")
            pending.append((f"{pointer}/{escaped}", child, key))


def _offset(text: str, position: tuple[int, int]) -> int:
    line, column = position
    lines = text.split("\n")  # json.dumps writes only \n; raw \r and U+2028 stay in strings
    assert 1 <= column <= len(lines[line - 1]) + 1
    return sum(len(s) + 1 for s in lines[: line - 1]) + column - 1


@settings(max_examples=examples(100), deadline=None)
@given(json_values, renderings)
def test_positions_reread_the_same_values(value, rendering):
    ensure_ascii, indent = rendering
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    decoded, locator = decode_with_positions(text)
    assert decoded == value
    assert json.dumps(decoded, ensure_ascii=ensure_ascii, indent=indent) == text  # key order
    reader = json.JSONDecoder()
    for pointer, item, key in _members(value):
        at = _offset(text, locator.value(pointer))
        assert text[at] == json.dumps(item)[0]
        assert reader.raw_decode(text, at)[0] == item
        key_at = locator.key(pointer)
        if key is None:
            assert key_at is None
        else:
            assert scanstring(text, _offset(text, key_at) + 1)[0] == key


@settings(max_examples=examples(100), deadline=None)
@given(json_text, st.booleans())
def test_string_char_spans_each_decoded_character(string, ensure_ascii):
    text = json.dumps({"k": [string]}, ensure_ascii=ensure_ascii)
    _, locator = decode_with_positions(text)
    starts = [_offset(text, locator.string_char("/k/0", i)) for i in range(len(string) + 1)]
    assert text[starts[-1]] == '"' and starts[-1] == len(text) - 3
    for i, char in enumerate(string):
        assert json.loads('"' + text[starts[i] : starts[i + 1]] + '"') == char


edit_chars = st.sampled_from(list("{}[],:\"\\' -+.0123456789eEtfnu/#\n\t\r\x00\u3000가"))
edit_chars |= st.characters()


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


@settings(max_examples=examples(200), deadline=None)
@given(json_values, st.data())
def test_one_character_edits_agree_with_json_loads(value, data):
    indent = data.draw(st.sampled_from([None, 1]))
    text = json.dumps(value, ensure_ascii=data.draw(st.booleans()), indent=indent)
    at = data.draw(st.integers(0, len(text)))
    if at < len(text) and data.draw(st.booleans()):
        edited = text[:at] + text[at + 1 :]
    else:
        edited = text[:at] + data.draw(edit_chars) + text[at:]
    try:
        expected = json.loads(edited, parse_constant=_reject_constant)
    except ValueError:  # JSONDecodeError, or an integer beyond the digit limit
        with pytest.raises(JSONSyntaxError) as caught:
            decode_with_positions(edited)
        one_newline = edited.replace("\r\n", "\n").replace("\r", "\n")
        _offset(one_newline, (caught.value.line, caught.value.column))  # inside the text
    else:
        assert decode_with_positions(edited)[0] == expected
