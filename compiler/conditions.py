"""Conditions: both syntaxes lowered to the one AST of `condition_ast`, and printed back.

In: the decoded JSON value of a `condition` (an object, or a string in the expression
language of SPEC 2.4), the JSON pointer where it sits, and the `Diagnostics` collector.
Out: a `Condition`, or None after reporting why. Shape problems are reported here: E012 (a
condition of the wrong JSON type), E205 (expression syntax, located by `string_offset`),
E206 (malformed object, nesting deeper than `MAX_DEPTH`). Names are not checked here: an
unknown field or operator is kept in the `Leaf` as written and `typecheck.check_condition`
reports it (E201, E202), so each rule has one home.

After: every node carries `Position(pointer, offset)`: the pointer of its own object in the
object form, or the pointer of the string and the node's 0-based start offset inside it.
`a and b and c` is one flat `And`; parentheses make no nodes; an object-form list is kept as
given, except that a one-item `and`/`or` is its item. A leaf that failed reports once and nothing
downstream of it reports again. No input makes this module raise or recurse without bound:
lark's LALR parser is iterative, and both forms are depth-checked by an iterative walk before
the (then bounded) recursive lowering.

`print_condition` writes any well-formed AST in expression syntax so that
`parse_expression(print_condition(c)) == c`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from compiler.condition_ast import NO_VALUE, And, Condition, Leaf, Not, Or, Position
from compiler.diagnostics import Diagnostics, did_you_mean, join
from interpreter.ir import OPERATORS

# And/or/not levels allowed above a leaf; also the limit on nested parentheses. Deeper input
# is certainly a generator gone wrong, and the limit keeps every later recursive pass safe.
MAX_DEPTH = 64

# Operator name -> expression syntax. The parser reads these back, the printer writes them.
OPERATOR_SYNTAX: dict[str, str] = {
    "equals": "==", "not_equals": "!=",
    "less_than": "<", "less_or_equal": "<=", "greater_than": ">", "greater_or_equal": ">=",
    "in": "in", "not_in": "not in", "contains": "contains",
    "is_empty": "is empty", "is_not_empty": "is not empty",
}
NO_VALUE_OPERATORS = frozenset({"is_empty", "is_not_empty"})
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
# Lark terminal names, as the user would say them.
TOKEN_WORDS = {
    "$END": "end of condition", "_OR": "or", "_AND": "and", "_NOT": "not", "_IN": "in",
    "_CONTAINS": "contains", "_IS": "is", "_EMPTY": "empty", "_LPAR": "(", "_RPAR": ")",
    "_LSQB": "[", "_RSQB": "]", "_COMMA": ",",
}
_VALUE_TOKENS = frozenset({"STRING", "NUMBER", "TRUE", "FALSE", "NULL", "_LSQB"})
_CONDITION_START = frozenset({"FIELD", "_NOT", "_LPAR"})
_COMPOUND_RULES = frozenset({"disjunction", "conjunction", "negated"})

PARSER = Lark.open(
    str(Path(__file__).with_name("expression.lark")),
    parser="lalr",
    lexer="basic",  # keywords are reserved everywhere, so no contextual lexing
    propagate_positions=True,
    maybe_placeholders=False,
)


class _SyntaxProblem(Exception):
    """An E205 found while building the AST (bad escape, number out of range)."""

    def __init__(self, offset: int, message: str, hint: str | None = None):
        super().__init__(message)
        self.offset, self.message, self.hint = offset, message, hint


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    names = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), ((list, tuple), "array"))
    return next((name for kind, name in names if isinstance(value, kind)), "object")


# ---------------------------------------------------------------------------------------
# Expression form.


def parse_expression(text: str, pointer: str, diags: Diagnostics) -> Condition | None:
    """The AST of an expression string, or None after reporting one E205 or E206."""
    return _parse_expression(text, pointer, diags, 0)


def _parse_expression(text: str, pointer: str, diags: Diagnostics, outer_depth: int):
    cached = _PARSED.get((text, outer_depth))
    if cached is not None:
        return _repoint(cached, pointer)
    condition = _parse_new_expression(text, pointer, diags, outer_depth)
    if condition is not None and len(_PARSED) < _PARSED_LIMIT:
        _PARSED[(text, outer_depth)] = condition
    return condition


def _parse_new_expression(text: str, pointer: str, diags: Diagnostics, outer_depth: int):
    if not text.strip():
        diags.report("E205", MSG["empty"], pointer, HINT["empty"], string_offset=0)
        return None
    deep_paren = _paren_overflow(text)
    if deep_paren is not None:
        diags.report("E206", MSG["too_deep"], pointer, HINT["too_deep"], string_offset=deep_paren)
        return None
    try:
        tree = PARSER.parse(text)
    except UnexpectedInput as error:
        offset, message, hint = _describe_syntax_error(text, error)
        diags.report("E205", message, pointer, hint, string_offset=offset)
        return None
    except LarkError:  # not expected from LALR, but a lark exception must never escape
        diags.report("E205", MSG["unparsable"], pointer, string_offset=0)
        return None
    deep_node = _too_deep_node(tree, outer_depth)
    if deep_node is not None:
        diags.report("E206", MSG["too_deep"], pointer, HINT["too_deep"], string_offset=deep_node)
        return None
    try:
        return _build(tree, pointer, text)
    except _SyntaxProblem as problem:
        diags.report("E205", problem.message, pointer, problem.hint, string_offset=problem.offset)
        return None


# Scenarios repeat conditions (resume rules, stays) and lark costs ~25 us a token, so each
# distinct well-formed string is parsed once; a repeat gets a copy pointing at its own place.
_PARSED: dict[tuple[str, int], Condition] = {}
_PARSED_LIMIT = 4096


def _repoint(condition: Condition, pointer: str) -> Condition:
    pos = dataclasses.replace(condition.pos, pointer=pointer)
    if isinstance(condition, Leaf):
        return dataclasses.replace(condition, pos=pos)
    if isinstance(condition, Not):
        return Not(_repoint(condition.item, pointer), pos=pos)
    return type(condition)(tuple(_repoint(i, pointer) for i in condition.items), pos=pos)


def _paren_overflow(text: str) -> int | None:
    """Offset of the first '(' nested deeper than MAX_DEPTH outside string literals."""
    depth, quote, i = 0, None, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
            if depth > MAX_DEPTH:
                return i
        elif ch == ")":
            depth -= 1
        i += 1
    return None


def _too_deep_node(tree: Tree, outer_depth: int) -> int | None:
    """Start offset of the first and/or/not node past MAX_DEPTH levels (iterative walk)."""
    stack = [(tree, outer_depth)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, Tree):
            continue
        if node.data in _COMPOUND_RULES:
            depth += 1
            if depth > MAX_DEPTH:
                return node.meta.start_pos
        stack.extend((child, depth) for child in reversed(node.children))
    return None


def _build(tree: Tree, pointer: str, text: str) -> Condition:
    """AST of a parse tree already known to be at most MAX_DEPTH levels deep."""
    pos = Position(pointer, tree.meta.start_pos)
    kind = tree.data
    if kind == "disjunction":
        return Or(tuple(_build(child, pointer, text) for child in tree.children), pos=pos)
    if kind == "conjunction":
        return And(tuple(_build(child, pointer, text) for child in tree.children), pos=pos)
    if kind == "negated":
        return Not(_build(tree.children[0], pointer, text), pos=pos)
    return _build_leaf(tree, _leaf_position(tree, pointer, text))


def _leaf_position(tree: Tree, pointer: str, text: str) -> Position:
    """Where the leaf, its operator and its value start, so a caret lands on the culprit."""
    field_token = tree.children[0]
    if tree.data == "bare":
        return Position(pointer, field_token.start_pos)
    after_field = field_token.end_pos
    operator_at = after_field + len(text[after_field:]) - len(text[after_field:].lstrip())
    last = tree.children[-1]
    if last is field_token:  # is empty / is not empty: no value
        return Position(pointer, field_token.start_pos, operator_at)
    if isinstance(last, Token):
        return Position(pointer, field_token.start_pos, operator_at, last.start_pos)
    items = tuple(item.start_pos for item in last.children)
    return Position(pointer, field_token.start_pos, operator_at, last.meta.start_pos, items)


def _build_leaf(tree: Tree, pos: Position) -> Leaf:
    field_name = str(tree.children[0])
    kind = tree.data
    if kind == "bare":  # a bare field reads as `== true`
        return Leaf(field_name, "equals", True, pos=pos)
    if kind in ("is_empty", "is_not_empty"):
        return Leaf(field_name, kind, NO_VALUE, pos=pos)
    if kind == "compare":
        operator = _SYMBOL_OPERATORS[str(tree.children[1])]
    else:
        operator = {"in_": "in", "not_in": "not_in", "contains": "contains"}[kind]
    return Leaf(field_name, operator, _literal(tree.children[-1]), pos=pos)


_SYMBOL_OPERATORS = {symbol: name for name, symbol in OPERATOR_SYNTAX.items()}


def _literal(node: Tree | Token):
    if isinstance(node, Tree):  # list_: its items are scalar tokens
        return [_literal(item) for item in node.children]
    kind = node.type
    if kind == "STRING":
        return _decode_string(str(node), node.start_pos)
    if kind == "NUMBER":
        return _decode_number(str(node), node.start_pos)
    return {"TRUE": True, "FALSE": False, "NULL": None}[kind]


_SIMPLE_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n",
                   "r": "\r", "t": "\t"}


def _decode_string(token: str, start: int) -> str:
    """The value of a quoted literal: JSON escapes, plus \\' (both quote styles)."""
    body, out, i = token[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        escape = body[i + 1]  # the lexer guarantees a character after every backslash
        if escape in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[escape])
            i += 2
        elif escape == "u" and _is_hex4(body[i + 2:i + 6]):
            code, i = int(body[i + 2:i + 6], 16), i + 6
            if 0xD800 <= code < 0xDC00 and body[i:i + 2] == "\\u" and _is_hex4(body[i + 2:i + 6]):
                low = int(body[i + 2:i + 6], 16)
                if 0xDC00 <= low < 0xE000:  # a surrogate pair spells one character, as in JSON
                    code, i = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00), i + 6
            if 0xD800 <= code < 0xE000:  # a lone surrogate cannot be encoded into the IR
                raise _SyntaxProblem(start + 1 + i - 6, MSG["lone_surrogate"], HINT["escapes"])
            out.append(chr(code))
        else:
            raise _SyntaxProblem(start + 1 + i, MSG["bad_escape"].format(escape=escape), HINT["escapes"])
    return "".join(out)


def _is_hex4(text: str) -> bool:
    return len(text) == 4 and all(c in "0123456789abcdefABCDEF" for c in text)


def _decode_number(text: str, start: int) -> int | float:
    try:
        value = float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:  # more digits than Python converts
        raise _SyntaxProblem(start, MSG["bad_number"].format(text=text[:20] + "...")) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise _SyntaxProblem(start, MSG["bad_number"].format(text=text))
    return value


# ---------------------------------------------------------------------------------------
# Syntax error wording: from lark's view (a token and the terminals it expected) to words.


def _describe_syntax_error(text: str, error: UnexpectedInput) -> tuple[int, str, str | None]:
    """(offset, message, hint) for a lark error."""
    if isinstance(error, UnexpectedCharacters):
        return _describe_bad_character(text, error.pos_in_stream)
    if isinstance(error, UnexpectedToken):
        return _describe_bad_token(text, error.token, _acceptable(error))
    end = len(text.rstrip())
    return end, MSG["unparsable"], None


def _acceptable(error: UnexpectedToken) -> set[str]:
    """The terminals that could have come next. `expected` is the LALR state's lookahead,
    which merges contexts (after `1` it lists ']' even outside a list); `accepts` replays
    each terminal on the parser and is exact."""
    try:
        return set(error.accepts)
    except Exception:  # accepts needs the interactive parser; fall back to the raw lookahead
        return set(error.expected)


def _describe_bad_character(text: str, offset: int) -> tuple[int, str, str | None]:
    char = text[offset]
    if char in "\"'":  # the string pattern accepts any escape, so only a missing close fails
        return offset, MSG["unterminated"], HINT["close_string"].format(quote=char)
    return offset, MSG["unexpected_char"].format(char=char), HINT["char"].get(char)


def _describe_bad_token(text: str, token: Token, expected: set[str]):
    tokens = _tokens_before(text, token.start_pos if token.type != "$END" else len(text))
    prev = tokens[-1] if tokens else None
    at_end = token.type == "$END"
    offset = len(text.rstrip()) if at_end else token.start_pos
    word = _word(token)
    if token.type == "FIELD" and word.lower() in KEYWORDS and word != word.lower():
        return offset, MSG["uppercase_keyword"].format(lower=word.lower(), word=word), None
    if prev is None:
        return offset, MSG["unexpected"].format(word=word), HINT["start"]
    before = _word(prev)
    if expected == {"_IN"}:
        return offset, MSG["expected_in"], None
    if "_EMPTY" in expected:
        return offset, MSG["expected_empty"].format(prev=before), HINT["is_forms"]
    if prev.type == "FIELD" and "CMP_OP" in expected:
        return offset, MSG["expected_operator"].format(prev=before), HINT["operators"]
    if expected & _VALUE_TOKENS:
        return _describe_missing_value(tokens, token, offset, before)
    if at_end and "_RPAR" in expected:
        return _unclosed(tokens, "_LPAR", "_RPAR"), MSG["unclosed_paren"], None
    if "_RSQB" in expected:
        if at_end:
            return _unclosed(tokens, "_LSQB", "_RSQB"), MSG["unclosed_list"], None
        return offset, MSG["expected_list_next"].format(prev=before), None
    if expected <= _CONDITION_START:
        return offset, MSG["expected_condition"].format(prev=before), HINT["start"]
    if token.type == "_RPAR":
        return offset, MSG["unexpected"].format(word=word), HINT["stray_paren"]
    if at_end:
        return offset, MSG["unexpected_end"].format(prev=before), None
    hint = HINT["leading_zero"] if prev.type == token.type == "NUMBER" else HINT["join"]
    return offset, MSG["unexpected_after"].format(word=word, prev=before), hint


def _describe_missing_value(tokens: list[Token], token: Token, offset: int, before: str):
    if token.type == "_LSQB":  # a list inside a list
        return offset, MSG["list_item"], None
    if token.type == "$END" and tokens[-1].type in ("_LSQB", "_COMMA"):
        return _unclosed(tokens, "_LSQB", "_RSQB"), MSG["unclosed_list"], None
    hint = HINT["quote"].format(word=token) if token.type == "FIELD" else None
    return offset, MSG["expected_value"].format(prev=before), hint


def _tokens_before(text: str, offset: int) -> list[Token]:
    """The tokens that lexed before `offset` (the lexer may fail further on)."""
    tokens = []
    try:
        for token in PARSER.lex(text):
            if token.start_pos >= offset:
                break
            tokens.append(token)
    except LarkError:
        pass
    return tokens


def _unclosed(tokens: list[Token], open_type: str, close_type: str) -> int:
    """Offset of the innermost opener that is never closed."""
    open_at: list[int] = []
    for token in tokens:
        if token.type == open_type:
            open_at.append(token.start_pos)
        elif token.type == close_type and open_at:
            open_at.pop()
    return open_at[-1] if open_at else 0


def _word(token: Token) -> str:
    word = TOKEN_WORDS.get(token.type, str(token))
    return word if len(word) <= 40 else word[:37] + "..."


# ---------------------------------------------------------------------------------------
# Object form.


def lower_condition(raw: object, pointer: str, diags: Diagnostics) -> Condition | None:
    """The AST of a decoded `condition` value (object or string), or None after reporting."""
    too_deep = _too_deep_object(raw, pointer)
    if too_deep is not None:
        diags.report("E206", MSG["too_deep"], too_deep, HINT["too_deep"])
        return None
    return _lower(raw, pointer, diags, 0)


def _object_children(raw: object, pointer: str) -> list[tuple[object, str]]:
    """The sub-conditions lowering will descend into: only those of a single-form object."""
    if not isinstance(raw, dict):
        return []
    forms = [key for key in FORM_KEYS if key in raw]
    if forms == ["not"]:
        return [(raw["not"], join(pointer, "not"))]
    if forms in (["and"], ["or"]) and isinstance(raw[forms[0]], list):
        return [(item, join(pointer, forms[0], i)) for i, item in enumerate(raw[forms[0]])]
    return []


def _too_deep_object(raw: object, pointer: str) -> str | None:
    """Pointer of the first and/or/not object past MAX_DEPTH levels (iterative walk)."""
    stack = [(raw, pointer, 0)]
    while stack:
        node, where, depth = stack.pop()
        children = _object_children(node, where)
        if not children:
            continue
        if depth + 1 > MAX_DEPTH:
            return where
        stack.extend((child, child_at, depth + 1) for child, child_at in reversed(children))
    return None


def _lower(raw: object, pointer: str, diags: Diagnostics, depth: int) -> Condition | None:
    if isinstance(raw, str):
        return _parse_expression(raw, pointer, diags, depth)
    if not isinstance(raw, dict):
        diags.report("E012", MSG["wrong_condition_type"].format(got=json_type(raw)), pointer)
        return None
    unknown = [key for key in raw if key not in CONDITION_KEYS]
    for key in unknown:
        hint = did_you_mean(key, CONDITION_KEYS) or HINT["forms"]
        diags.report("E206", MSG["unknown_key"].format(key=key), join(pointer, key), hint, at_key=True)
    form = _single_form(raw, pointer, diags, quiet=bool(unknown))
    if form is None:
        return None
    if form == "field":
        return None if unknown else _lower_leaf(raw, pointer, diags)
    lowered = _lower_compound(raw, form, pointer, diags, depth)
    return None if unknown else lowered


def _single_form(raw: dict, pointer: str, diags: Diagnostics, quiet: bool) -> str | None:
    """Which form the object is, or None after reporting a missing or mixed form.

    `quiet`: an unknown key was reported, and a missing form is most likely that typo.
    """
    forms = [key for key in FORM_KEYS if key in raw]
    if forms and forms[0] != "field":  # and/or/not objects take no leaf keys
        forms += [key for key in ("operator", "value") if key in raw]
    if len(forms) > 1:
        keys = " and ".join(f"'{key}'" for key in forms)
        diags.report("E206", MSG["mixed_forms"].format(keys=keys), pointer, HINT["forms"])
        return None
    if forms:
        return forms[0]
    if not quiet:
        if not raw:
            diags.report("E206", MSG["empty_object"], pointer, HINT["forms"])
        else:
            diags.report("E206", MSG["missing_keys"].format(keys="'field'"), pointer, HINT["forms"])
    return None


def _lower_leaf(raw: dict, pointer: str, diags: Diagnostics) -> Leaf | None:
    if "operator" not in raw:
        diags.report("E206", MSG["missing_keys"].format(keys="'operator'"), pointer, HINT["operator_list"])
        return None
    for key in ("field", "operator"):
        if not isinstance(raw[key], str):
            message = MSG["wrong_key_type"].format(key=key, got=json_type(raw[key]))
            diags.report("E012", message, join(pointer, key))
            return None
    operator, has_value = raw["operator"], "value" in raw
    if operator in NO_VALUE_OPERATORS and has_value:
        message = MSG["value_not_allowed"].format(operator=operator)
        diags.report("E206", message, join(pointer, "value"), HINT["remove_value"])
        return None
    if operator in OPERATORS and operator not in NO_VALUE_OPERATORS and not has_value:
        message = MSG["value_required"].format(operator=operator)
        diags.report("E206", message, pointer, HINT["add_value"])
        return None
    # An unknown operator is kept as written; the checker reports it (E202) with its hint.
    value = raw["value"] if has_value else NO_VALUE
    if not _is_literal(value):
        diags.report("E204", MSG["not_literal"], join(pointer, "value"), HINT["literal"])
        return None
    return Leaf(raw["field"], operator, value, pos=Position(pointer))


def _is_literal(value: object) -> bool:
    """A scalar, or a flat list of scalars: anything else can never match a field (and a
    deeply nested value must not reach the recursive printers)."""
    scalar = (str, int, float, bool, type(None), type(NO_VALUE))
    if isinstance(value, list):
        return all(isinstance(item, scalar) for item in value)
    return isinstance(value, scalar)


def _lower_compound(raw: dict, form: str, pointer: str, diags: Diagnostics, depth: int):
    if form == "not":
        item = _lower(raw["not"], join(pointer, "not"), diags, depth + 1)
        return None if item is None else Not(item, pos=Position(pointer))
    items = raw[form]
    where = join(pointer, form)
    if not isinstance(items, list):
        diags.report("E206", MSG["list_required"].format(form=form, got=json_type(items)), where)
        return None
    if not items:
        diags.report("E206", MSG["empty_list"].format(form=form), where)
        return None
    # Lower every item, so two bad leaves give two reports.
    lowered = [_lower(item, join(where, i), diags, depth + 1) for i, item in enumerate(items)]
    if any(item is None for item in lowered):
        return None
    if len(lowered) == 1:  # a one-item and/or means its item; keeps print/parse exact
        return lowered[0]
    node_type = And if form == "and" else Or
    return node_type(tuple(lowered), pos=Position(pointer))


# ---------------------------------------------------------------------------------------
# Printer.


def print_condition(condition: Condition) -> str:
    """Expression syntax for a well-formed AST (known operators; values JSON literals)."""
    if isinstance(condition, Leaf):
        return _print_leaf(condition)
    if isinstance(condition, Not):
        return "not " + _print_operand(condition.item, (And, Or))
    if isinstance(condition, And):
        # `and` binds tighter than `or`, and a nested `and` needs parentheses to stay nested.
        return " and ".join(_print_operand(item, (And, Or)) for item in condition.items)
    if isinstance(condition, Or):
        return " or ".join(_print_operand(item, (Or,)) for item in condition.items)
    raise TypeError(f"not a condition: {condition!r}")


def _print_operand(item: Condition, parenthesised: tuple[type, ...]) -> str:
    text = print_condition(item)
    return f"({text})" if isinstance(item, parenthesised) else text


def _print_leaf(leaf: Leaf) -> str:
    if leaf.operator not in OPERATOR_SYNTAX:
        raise ValueError(f"cannot print unknown operator {leaf.operator!r}")
    if leaf.operator in NO_VALUE_OPERATORS:
        return f"{leaf.field} {OPERATOR_SYNTAX[leaf.operator]}"
    if leaf.operator == "equals" and leaf.value is True:
        return leaf.field  # the bare form reads back as `== true`
    return f"{leaf.field} {OPERATOR_SYNTAX[leaf.operator]} {print_value(leaf.value)}"


def print_value(value: object) -> str:
    """A literal in expression syntax: JSON, with non-ASCII text kept as written."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(print_value(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)
