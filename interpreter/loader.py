"""Loader: an IR file becomes a `Runtime`, the program plus everything a turn needs precomputed.

In: a path to an IR file (`load_program`) or an `ir.Program` (`Runtime(program)`).
Out: a `Runtime` whose conditions are compiled into closures over resolved field indices and
literal values (no eval, no text), one `NodeTable` per node (routes, gates, end flag) and one
`GlobalRoute` per global transition, so a turn does no name lookups beyond the node id kept
in the state.
After: every index in the program has been checked; any problem, unreadable files included,
is an `ir.IRError` with one line for the user, never another exception.

A condition closure takes the turn's *facts*: a list laid out like the field table
(`ir.FIXED_FIELDS`, then one entry per slot) and built once per turn by the router.
Enum facts hold interned indices (intent, act, node) exactly like the IR literals, so a
comparison is a plain `==` on small ints.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable

import msgspec

from . import ir
from .slots import SlotRule, compile_slot_rules

Test = Callable[[list], bool]
IRError = ir.IRError

_NULL_ACT = ir.ACTS.index("null")


class Route:
    """One row of a node's table: a `next_nodes` entry or `default_next`, ready to test."""

    __slots__ = ("test", "target", "source", "reason", "tier")

    def __init__(self, test: Test | None, target: int, source: int, reason: str, tier: str):
        self.test = test  # None: always
        self.target = target  # node index or ir.STAY
        self.source = source  # index into program.source_map
        self.reason = reason  # "next_nodes[i]", "stay:next_nodes[i]" or "default_next"
        self.tier = tier  # "next_nodes" or "default_next"


class GlobalRoute:
    """One global transition, ready to test; `reason` is `global:NAME` or `global[i]`."""

    __slots__ = ("test", "target", "source", "reason")

    def __init__(self, test: Test | None, target: int, source: int, reason: str):
        self.test = test
        self.target = target
        self.source = source
        self.reason = reason


class NodeTable:
    """A node with its routing data precomputed (indices, flags, closures)."""

    __slots__ = ("index", "id", "node", "is_end", "executor", "required", "required_names",
                 "collect", "collect_names", "min_turns", "max_turns", "max_fallback_retries",
                 "turn_limit_enabled", "turn_limit", "routes", "responses")

    def __init__(self, index: int, node: ir.Node, routes: tuple[Route, ...], slot_names):
        self.index = index
        self.id = node.id
        self.node = node
        self.is_end = node.end in (ir.END_EXPLICIT, ir.END_INFERRED)
        self.executor = node.executor
        self.required = tuple(node.required_slots)
        self.required_names = tuple(slot_names[i] for i in node.required_slots)
        self.collect = tuple(node.collect_slots)
        self.collect_names = tuple(slot_names[i] for i in node.collect_slots)
        self.min_turns = node.min_turns
        self.max_turns = node.max_turns
        self.max_fallback_retries = node.max_fallback_retries
        self.turn_limit_enabled = node.turn_limit_enabled
        # node_turns at which the turn limit applies (None: never)
        self.turn_limit = node.max_turns if node.turn_limit_enabled else None
        self.routes = routes
        self.responses = node.responses


class Runtime:
    """A loaded program and its precomputed tables; shared read-only by every session.
    Its indices were checked once, by `ir.decode_ir` (a program built in-process comes from
    the compiler)."""

    def __init__(self, program: ir.Program, ir_hash: str | None = None,
                 compiler_version: str = ""):
        self.program = program
        self.compiler_version = compiler_version
        self.ir_hash = ir_hash or hashlib.sha256(msgspec.msgpack.encode(program)).hexdigest()
        self.slot_names: tuple[str, ...] = tuple(s.name for s in program.slots)
        self.slot_index = {name: i for i, name in enumerate(self.slot_names)}
        self.slot_rules: tuple[SlotRule, ...] = compile_slot_rules(program)
        self.field_count = ir.SLOT_FIELD_BASE + len(program.slots)
        self.intent_names: tuple[str, ...] = tuple(i.name for i in program.intents)
        self.intent_index = {name: i for i, name in enumerate(self.intent_names)}
        self.node_index = {node.id: i for i, node in enumerate(program.nodes)}
        # `null` is never a closing act: a user who spoke is still there (seed 002).
        self.closing_acts = frozenset(a for a in program.closing_acts if a != _NULL_ACT)
        self.entry = program.entry
        self.language = "ko" if program.language.lower().startswith("ko") else "en"
        self.nodes = tuple(NodeTable(i, n, self._routes(n), self.slot_names)
                           for i, n in enumerate(program.nodes))
        self.globals = tuple(self._global(i, g) for i, g in enumerate(program.global_transitions))
        self.source_fields = tuple(_source_fields(program))

    def _routes(self, node: ir.Node) -> tuple[Route, ...]:
        routes = []
        for i, t in enumerate(node.transitions):
            label = self.program.source_map[t.source].label or f"next_nodes[{i}]"
            test = compile_condition(t.condition, self.field_count)
            if label == "default_next":
                routes.append(Route(test, t.target, t.source, "default_next", "default_next"))
            else:
                reason = "stay:" + label if t.target == ir.STAY else label
                routes.append(Route(test, t.target, t.source, reason, "next_nodes"))
        return tuple(routes)

    def _global(self, i: int, g: ir.GlobalTransition) -> GlobalRoute:
        label = self.program.source_map[g.source].label
        if not label:
            label = f"global:{g.name}" if g.name else f"global[{i}]"
        return GlobalRoute(compile_condition(g.condition, self.field_count), g.target,
                           g.source, label)

    def node_named(self, node_id: str) -> NodeTable | None:
        """The node table for an id, or None."""
        index = self.node_index.get(node_id)
        return None if index is None else self.nodes[index]


def load_program(path: str | os.PathLike) -> Runtime:
    """Read, check and prepare an IR file; every failure is an `ir.IRError`."""
    try:
        name = os.fspath(path)  # not an int: open() would take it for a file descriptor
        with open(name, "rb") as handle:
            data = handle.read()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise IRError(f"cannot read IR file {name}: {reason}") from None
    except (TypeError, ValueError) as error:
        raise IRError(f"cannot read IR file {path!r}: {error}") from None
    try:
        with ir.without_cycle_collection():
            envelope, program = ir.decode_ir(data)
            return Runtime(program, envelope.source_sha256, envelope.compiler_version)
    except IRError:
        raise
    except Exception as error:  # a foreign or hand-made file: never a traceback
        raise IRError(f"IR file is inconsistent ({type(error).__name__}: {error}); "
                      "recompile with `mgc compile`") from None



# --- conditions -------------------------------------------------------------------------


def compile_condition(condition: Any, field_count: int) -> Test | None:
    """A closure `facts -> bool` for an opcode tree; None (always) stays None."""
    if condition is None:
        return None
    if not isinstance(condition, (list, tuple)) or not condition:
        raise IRError(f"malformed condition {condition!r} in IR; recompile with `mgc compile`")
    op = condition[0]
    if op == ir.OP_LEAF and len(condition) in (3, 4):
        value = condition[3] if len(condition) == 4 else None
        return _leaf(condition[1], condition[2], value, field_count)
    if op == ir.OP_NOT and len(condition) == 2:
        inner = compile_condition(condition[1], field_count) or _always
        return lambda facts: not inner(facts)
    if op in (ir.OP_AND, ir.OP_OR) and len(condition) == 2 and condition[1]:
        parts = tuple(compile_condition(c, field_count) or _always for c in condition[1])
        return _all_of(parts) if op == ir.OP_AND else _any_of(parts)
    raise IRError(f"malformed condition {condition!r} in IR; recompile with `mgc compile`")


def _always(facts: list) -> bool:
    return True


def _all_of(parts: tuple[Test, ...]) -> Test:
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        a, b = parts
        return lambda facts: a(facts) and b(facts)

    def test(facts: list) -> bool:
        for part in parts:
            if not part(facts):
                return False
        return True
    return test


def _any_of(parts: tuple[Test, ...]) -> Test:
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        a, b = parts
        return lambda facts: a(facts) or b(facts)

    def test(facts: list) -> bool:
        for part in parts:
            if part(facts):
                return True
        return False
    return test


def _leaf(operator: int, i: int, v: Any, field_count: int) -> Test:
    """One comparison; null never satisfies an ordering or `contains`."""
    if not (isinstance(i, int) and 0 <= i < field_count):
        raise IRError(f"condition reads unknown field index {i!r}; recompile with `mgc compile`")
    name = ir.OPERATORS[operator] if isinstance(operator, int) and 0 <= operator < len(
        ir.OPERATORS) else None
    if name == "equals":
        return (lambda f: f[i] is None) if v is None else (lambda f: f[i] == v)
    if name == "not_equals":
        return (lambda f: f[i] is not None) if v is None else (lambda f: f[i] != v)
    if name in ("in", "not_in"):
        members = _members(v)
        if name == "in":
            return lambda f: f[i] in members
        return lambda f: f[i] not in members
    if name == "greater_than":
        return lambda f: (x := f[i]) is not None and x > v
    if name == "greater_or_equal":
        return lambda f: (x := f[i]) is not None and x >= v
    if name == "less_than":
        return lambda f: (x := f[i]) is not None and x < v
    if name == "less_or_equal":
        return lambda f: (x := f[i]) is not None and x <= v
    if name == "is_empty":
        return lambda f: (x := f[i]) is None or x == ""
    if name == "is_not_empty":
        return lambda f: (x := f[i]) is not None and x != ""
    if name == "contains":
        return lambda f: (x := f[i]) is not None and v in x
    raise IRError(f"condition uses unknown operator {operator!r}; recompile with `mgc compile`")


def _members(values: Any):
    if not isinstance(values, (list, tuple)):
        raise IRError(f"`in` needs a list, got {values!r}; recompile with `mgc compile`")
    try:
        return frozenset(values)
    except TypeError:  # unhashable literals (never emitted by mgc, but stay correct)
        return tuple(values)


def condition_fields(condition: Any) -> tuple[int, ...]:
    """Field indices an opcode tree reads, in order of first appearance (for traces)."""
    seen: list[int] = []

    def walk(c: Any) -> None:
        if not c:
            return
        if c[0] == ir.OP_LEAF:
            if c[2] not in seen:
                seen.append(c[2])
        elif c[0] == ir.OP_NOT:
            walk(c[1])
        else:
            for item in c[1]:
                walk(item)
    walk(condition)
    return tuple(seen)


def _source_fields(program: ir.Program) -> list[tuple[int, ...]]:
    fields: list[tuple[int, ...]] = [()] * len(program.source_map)
    for node in program.nodes:
        for t in node.transitions:
            fields[t.source] = condition_fields(t.condition)
    for g in program.global_transitions:
        fields[g.source] = condition_fields(g.condition)
    return fields


# --- display (traces) --------------------------------------------------------------------


def display_value(runtime: Runtime, field: int, value: Any) -> str:
    """A fact or literal as the designer wrote it: names for interned enums, JSON otherwise."""
    if value is None:
        return "null"
    domain = ir.FIXED_FIELDS[field][2] if field < ir.SLOT_FIELD_BASE else None
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(display_value(runtime, field, v) for v in value) + "]"
    if domain == "intents" and isinstance(value, int):
        value = runtime.intent_names[value] if 0 <= value < len(runtime.intent_names) else value
    elif domain == "acts" and isinstance(value, int):
        value = ir.ACTS[value] if 0 <= value < len(ir.ACTS) else value
    elif domain == "nodes" and isinstance(value, int):
        value = runtime.nodes[value].id if 0 <= value < len(runtime.nodes) else value
    return json.dumps(value, ensure_ascii=False, default=str)
