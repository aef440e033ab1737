"""The expression language of conditions (SPEC 2.4): text to the condition AST.

In: an expression string, the JSON pointer of the string, the `Diagnostics` collector. Out: a
`Condition` whose nodes carry `Position(pointer, offset)` (leaves also the offsets of their
operator, value and list members), or None after reporting one E205 (syntax, located by
`string_offset`) or E206 (nested deeper than `MAX_DEPTH`). The grammar is
`expression.lark`, parsed by one cached LALR parser; lark errors are turned into words here
and never escape. `a and b and c` is one flat `And`; parentheses make no nodes.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from interpreter import MagoError
from compiler.condition_ast import NO_VALUE, And, Condition, Leaf, Not, Or, Position
from compiler.condition_messages import HINT, KEYWORDS, MAX_DEPTH, MSG, OPERATOR_SYNTAX
from compiler.diagnostics import Diagnostics

# Lark terminal names, as the user would say them.
TOKEN_WORDS = {
    "$END": "end of condition", "_OR": "or", "_AND": "and", "_NOT": "not", "_IN": "in",
    "_CONTAINS": "contains", "_IS": "is", "_EMPTY": "empty", "_LPAR": "(", "_RPAR": ")",
    "_LSQB": "[", "_RSQB": "]", "_COMMA": ",",
}
_VALUE_TOKENS = frozenset({"STRING", "NUMBER", "TRUE", "FALSE", "NULL", "_LSQB"})
_CONDITION_START = frozenset({"FIELD", "_NOT", "_LPAR"})
_COMPOUND_RULES = frozenset({"disjunction", "conjunction", "negated"})
_SPACE = re.compile(r"[ \t\f\r\n]*")  # what the grammar ignores between tokens (common.WS)
# A parenthesis, or a string literal up to its closing quote (a backslash escapes any character;
# an unclosed one runs to the end), for the depth check that comes before parsing.
_PAREN_OR_STRING = re.compile(r"""[()]|"(?:[^"\\]++|\\[\s\S])*+"?|'(?:[^'\\]++|\\[\s\S])*+'?""")

PARSER = Lark.open(
    str(Path(__file__).with_name("expression.lark")),
    parser="lalr",
    lexer="basic",  # keywords are reserved everywhere, so no contextual lexing
    propagate_positions=True,
    maybe_placeholders=False,
)


class _SyntaxProblem(MagoError):
    """An E205 found while building the AST (bad escape, number out of range)."""

    def __init__(self, offset: int, message: str, hint: str | None = None):
        super().__init__(message)
        self.offset, self.message, self.hint = offset, message, hint


# ---------------------------------------------------------------------------------------
# Expression form.


def parse_expression(text: str, pointer: str, diags: Diagnostics, outer_depth: int = 0) -> Condition | None:
    """The AST of an expression string, or None after reporting one E205 or E206.
    `outer_depth` counts the and/or/not levels of an object-form condition around it."""
    return _parse_expression(text, pointer, diags, outer_depth)


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
    old = condition.pos
    pos = Position(pointer, old.offset, old.operator_offset, old.value_offset, old.item_offsets)
    if isinstance(condition, Leaf):
        return Leaf(condition.field, condition.operator, condition.value, pos=pos)
    if isinstance(condition, Not):
        return Not(_repoint(condition.item, pointer), pos=pos)
    return type(condition)(tuple(_repoint(i, pointer) for i in condition.items), pos=pos)


def _paren_overflow(text: str) -> int | None:
    """Offset of the first '(' nested deeper than MAX_DEPTH outside string literals."""
    depth = 0
    for m in _PAREN_OR_STRING.finditer(text):  # a string literal is skipped in one match
        if m.group() == "(":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif m.group() == ")":
            depth -= 1
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
    operator_at = _SPACE.match(text, field_token.end_pos).end()
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
