"""The condition AST: the one form both condition syntaxes lower to.

The object form (`{"field", "operator", "value"}`, `and`, `or`, `not`) and the expression
language (`slots.x == "a" and system.node_turns >= 2`) both produce these nodes. Positions
are kept beside the structure and do not take part in equality, so `parse(print(c)) == c`
compares meaning only.

`Leaf.value` is `NO_VALUE` for `is_empty` / `is_not_empty`; list literals are Python lists.
`And`/`Or` hold two or more items (a one-item list in the object form is kept as given).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from collections.abc import Iterator
from typing import Any


class _NoValue:
    """Marker for operators that take no value (`is_empty`, `is_not_empty`)."""

    _instance = None

    def __new__(cls) -> _NoValue:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_VALUE"


NO_VALUE: Any = _NoValue()


@dataclass(frozen=True)
class Position:
    """Where a condition node came from: JSON pointer, and offset inside an expression string."""

    pointer: str
    offset: int | None = None  # 0-based character offset in the expression string
    operator_offset: int | None = None  # leaves of an expression: where the operator starts
    value_offset: int | None = None  # ... and where the value starts
    item_offsets: tuple[int, ...] | None = None  # ... and each member of a list value


@dataclass(frozen=True)
class Leaf:
    """A comparison of one field: `slots.meal_status == "skipped"`."""

    field: str
    operator: str
    value: Any = NO_VALUE
    # dataclasses.field: the name `field` is a field of this class
    pos: Position | None = dataclasses.field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class And:
    """All items hold: `a and b`."""

    items: tuple[Condition, ...]
    pos: Position | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Or:
    """Some item holds: `a or b`."""

    items: tuple[Condition, ...]
    pos: Position | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Not:
    """The item does not hold: `not a`."""

    item: Condition
    pos: Position | None = field(default=None, compare=False, repr=False)


Condition = Leaf | And | Or | Not


def walk(condition: Condition) -> Iterator[Condition]:
    """Every node of a condition, depth first, parents before children (iterative)."""
    stack = [condition]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (And, Or)):
            stack.extend(reversed(node.items))
        elif isinstance(node, Not):
            stack.append(node.item)


def leaves(condition: Condition) -> list[Leaf]:
    return [n for n in walk(condition) if isinstance(n, Leaf)]
