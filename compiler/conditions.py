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

import json
import re

from compiler.condition_ast import NO_VALUE, And, Condition, Leaf, Not, Or, Position
from compiler.condition_messages import (
    CONDITION_KEYS, FORM_KEYS, HINT, MAX_DEPTH, MSG, OPERATOR_SYNTAX, json_type,
)
from compiler.diagnostics import Diagnostics, did_you_mean, join
from compiler.expressions import parse_expression
from interpreter.fields import NO_VALUE_OPERATORS
from interpreter.ir import OPERATORS, TODAY

__all__ = ["MAX_DEPTH", "lower_condition", "parse_expression", "print_condition", "print_value", "json_type"]

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
        return parse_expression(raw, pointer, diags, depth)
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
    if type(value) is str and _PLAIN_TEXT.fullmatch(value):
        return f'"{value}"'  # nothing to escape: the common case, without json.dumps
    if type(value) is int:
        return str(value)
    if value == TODAY:  # the IR's "today" (SPEC 14.1) is printed as the designer wrote it
        return '"today"'
    return json.dumps(value, ensure_ascii=False)


_PLAIN_TEXT = re.compile(r'[^"\\\x00-\x1f\x7f\u2028\u2029]*')
