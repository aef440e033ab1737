"""Condition messages and syntax tables, shared by the expression parser and the object form.

One place for the wording of every E012/E205/E206 message about a condition, the operator
syntax both the parser and the printer use, and the nesting limit.
"""

from __future__ import annotations

from interpreter.fields import MAX_CONDITION_DEPTH
from interpreter.ir import OPERATORS

# And/or/not levels allowed above a leaf (the loader refuses deeper ones too); also the limit
# on nested parentheses. Deeper input is certainly a generator gone wrong, and the limit keeps
# every later recursive pass safe.
MAX_DEPTH = MAX_CONDITION_DEPTH

# Operator name -> expression syntax. The parser reads these back, the printer writes them.
OPERATOR_SYNTAX: dict[str, str] = {
    "equals": "==", "not_equals": "!=",
    "less_than": "<", "less_or_equal": "<=", "greater_than": ">", "greater_or_equal": ">=",
    "in": "in", "not_in": "not in", "contains": "contains",
    "is_empty": "is empty", "is_not_empty": "is not empty",
}
KEYWORDS = frozenset({"and", "or", "not", "in", "contains", "is", "empty", "true", "false", "null"})
FORM_KEYS = ("field", "and", "or", "not")  # exactly one of these decides an object's form
CONDITION_KEYS = ("field", "operator", "value", "and", "or", "not")

# ---------------------------------------------------------------------------------------
# Message wording, in one place.

OPERATOR_LIST = "==, !=, <, <=, >, >=, in, not in, contains, is empty, is not empty"
MSG = {
    # E205: expression syntax
    "empty": "empty condition expression",
    "expected_operator": "expected a comparison operator after '{prev}'",
    "expected_value": "expected a value after '{prev}'",
    "expected_empty": "expected 'empty' after '{prev}'",
    "expected_in": "expected 'in' after 'not'",
    "expected_condition": "expected a condition after '{prev}'",
    "expected_list_next": "expected ',' or ']' after '{prev}'",
    "unclosed_paren": "missing ')' to close this '('",
    "unclosed_list": "missing ']' to close this list",
    "unexpected": "unexpected '{word}'",
    "unexpected_after": "unexpected '{word}' after '{prev}'",
    "unexpected_end": "unexpected end of condition after '{prev}'",
    "unexpected_char": "unexpected character '{char}'",
    "uppercase_keyword": "keywords are lowercase: write '{lower}', not '{word}'",
    "unterminated": "unterminated string",
    "bad_escape": "invalid escape '\\{escape}' in a string",
    "lone_surrogate": "invalid escape: half of a surrogate pair",
    "bad_number": "number '{text}' is out of range",
    "list_item": "a list may hold only strings, numbers, true, false and null",
    "unparsable": "cannot parse this condition",
    # E206 and E012: object form
    "too_deep": f"condition nested more than {MAX_DEPTH} levels deep",
    "unknown_key": "unknown key '{key}' in a condition",
    "mixed_forms": "a condition mixes {keys}; use one form per object",
    "empty_object": "empty condition object",
    "missing_keys": "condition is missing {keys}",
    "value_not_allowed": "operator '{operator}' takes no value",
    "value_required": "operator '{operator}' needs a 'value'",
    "list_required": "'{form}' needs a list of conditions, got {got}",
    "empty_list": "'{form}' needs at least one condition",
    "wrong_condition_type": "a condition must be an object or an expression string, got {got}",
    "wrong_key_type": "'{key}' must be a string, got {got}",
    "not_literal": "a condition value must be a string, number, true, false, null or a list of those",
}
HINT = {
    "empty": 'write a condition such as slots.x == "a", or leave out "condition"',
    "operators": f"comparison operators are {OPERATOR_LIST}",
    "quote": 'text values are quoted: "{word}"',
    "join": "join conditions with 'and' or 'or'",
    "leading_zero": "numbers are written without leading zeros, as in JSON",
    "stray_paren": "this ')' has no matching '('",
    "start": "a condition starts with a field name, 'not' or '('",
    "is_forms": "write 'is empty' or 'is not empty'",
    "close_string": "close the string with {quote}",
    "escapes": 'valid escapes are \\" \\\' \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX',
    "char": {"=": "compare with '=='", "!": "use '!=' or 'not'", "&": "use 'and'", "|": "use 'or'"},
    "too_deep": "flatten it: 'and' and 'or' take any number of items",
    "forms": 'use {"field", "operator", "value"}, or one of "and", "or", "not"',
    "remove_value": 'remove "value"',
    "add_value": 'add "value", or use is_empty / is_not_empty to test for no value',
    "operator_list": "operators are " + ", ".join(OPERATORS),
    "literal": 'compare with one value, or with a flat list for "in" / "not_in"',
}


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    names = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), ((list, tuple), "array"))
    return next((name for kind, name in names if isinstance(value, kind)), "object")
