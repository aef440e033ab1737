"""The IR: the compiled form of a scenario, owned by the interpreter that executes it.

In: a `Program` built by the compiler. Out: deterministic bytes (`encode_ir`), and back
(`decode_ir`), which checks magic, format version and integrity and raises `IRError` with
one clear line on a truncated, corrupted, foreign or newer file, or a hand-made one holding
what mgc would never write.

File layout (format 2): the magic `MGIR`, the format version as two big-endian bytes, then
one MessagePack `Envelope` holding the compiler version, the SHA-256 of the canonical source,
the SHA-256 of the body and the body: a MessagePack `Body`, the program with each node kept as
its own MessagePack blob, a node directory beside them (every node's id and executor kind) and
the source map in two columns (the labels, then one blob of pointers and display texts).

Loading is lazy where the program is large: `decode_ir` verifies the checksum of the whole
body, decodes the program header, slots, intents, global transitions, the node directory and
the source labels, and checks what is read without a node (`check_program`): every
program-level index (entry, closing acts, global targets and sources), the directory's
executor kinds, the slots' value types, that the intents' patterns compile, and the global
conditions. A node is decoded and checked (`check_node`: targets, sources, slots, executor
kind, end flag and its conditions) the first time it is read from `Program.nodes` (a
`NodeList`); the source pointers and display texts the first time an entry is read from
`Program.source_map` (a `SourceMap`). With the checksum verified, a node can only fail those
checks in a hand-made file; `decode_ir(data, verify=True)` or `check_all` decodes and checks
everything at once. Every failure is an `IRError` whose one line names the part and what is
wrong with it.

A condition is checked as the compiler's type check would have it (`check_condition`), against
the program's field table (`field_types`): at most `MAX_CONDITION_DEPTH` and/or/not levels,
a known operator that applies to the field's kind (`operator_applies`: ordering operators
need a number field, `contains` a text field), and a literal of the field's type (an index in
range for an interned enum, a member for a string enum, a non-empty list of them for `in`,
none for `is_empty`).

Names are interned: a node, slot, intent or dialogue act is an index into `Program.nodes`,
`Program.slots`, `Program.intents` or `ACTS`. Conditions are nested lists of opcodes:

    [OP_AND, [c, ...]]   [OP_OR, [c, ...]]   [OP_NOT, c]
    [OP_LEAF, operator, field, value]

where `operator` indexes `OPERATORS`, `field` indexes the field table (`FIXED_FIELDS`, then
one field per slot, `SLOT_FIELD_BASE + slot index`) and `value` is the literal with intent,
act and node names replaced by their indices (skill statuses and slot enum members stay
strings).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import json
import math
import re
import struct
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import msgspec

from . import patterns
from .names import name_problem

MAGIC = b"MGIR"
FORMAT_VERSION = 2
# MessagePack integers (the IR and stored sessions): what a scenario or a slot value may hold.
INT_MIN, INT_MAX = -(2 ** 63), 2 ** 63 - 1
INT_RANGE_HINT = f"use a whole number between {INT_MIN} and {INT_MAX}"


def fits_int64(value: int) -> bool:
    """Whether the integer `value` fits in INT_MIN..INT_MAX (a bool always does)."""
    return INT_MIN <= value <= INT_MAX


# Dialogue acts, a closed set; `negate` is read as `deny` before it gets here.
ACTS: tuple[str, ...] = (
    "affirm", "deny", "inform", "question", "greet", "goodbye", "thank", "silence", "null",
)
DEFAULT_CLOSING_ACTS: tuple[str, ...] = ("affirm", "goodbye", "thank", "silence")
SKILL_STATUSES: tuple[str, ...] = ("none", "ok", "failed", "timeout")

OPERATORS: tuple[str, ...] = (
    "equals", "not_equals", "in", "not_in",
    "greater_than", "greater_or_equal", "less_than", "less_or_equal",
    "is_empty", "is_not_empty", "contains",
)
OP_AND, OP_OR, OP_NOT, OP_LEAF = 0, 1, 2, 3
# And/or/not levels allowed above a leaf: the compiler's limit (E206), so every condition a
# loaded program holds can be walked recursively.
MAX_CONDITION_DEPTH = 64

# Which operator applies to which kind of value, and what its literal is: the type rules of
# conditions, one table for the IR checks here (the compiler's type check says the same).
VALUE_TYPES: tuple[str, ...] = ("string", "integer", "number", "boolean", "enum", "email")
ORDERING_OPERATORS = frozenset({"greater_than", "greater_or_equal", "less_than", "less_or_equal"})
LIST_OPERATORS = frozenset({"in", "not_in"})  # a non-empty list of members
NO_VALUE_OPERATORS = frozenset({"is_empty", "is_not_empty"})  # no literal (null)
NUMERIC_KINDS = frozenset({"integer", "number"})  # what ordering operators apply to
TEXT_KINDS = frozenset({"string", "email"})  # what `contains` applies to

EXECUTOR_GENERAL, EXECUTOR_TASK, EXECUTOR_SKILL = 0, 1, 2
EXECUTOR_NAMES = ("general", "task", "skill")

END_NONE, END_EXPLICIT, END_INFERRED = 0, 1, 2
END_NAMES = ("", "explicit", "inferred")

STAY = -1  # Transition.target for `action: stay`

# Field table. Kind is the value type; domain names the closed set of an enum field
# ("intents", "acts", "nodes", "skill_status"); nullable fields may be null.
FIXED_FIELDS: tuple[tuple[str, str, str | None, bool], ...] = (
    # (name, kind, domain, nullable)
    ("nlu.intent", "enum", "intents", True),
    ("nlu.dialogue_act", "enum", "acts", False),
    ("nlu.confidence", "number", None, False),
    ("nlu.text", "string", None, False),
    ("system.current_node", "enum", "nodes", False),
    ("system.previous_node", "enum", "nodes", True),
    ("system.node_turns", "integer", None, False),
    ("system.session_turns", "integer", None, False),
    ("system.no_input_count", "integer", None, False),
    ("system.not_understood_count", "integer", None, False),
    ("system.fallback_exhausted", "boolean", None, False),
    ("system.conversation_resuming", "boolean", None, False),
    ("system.turn_limit_reached", "boolean", None, False),
    ("system.min_turns_met", "boolean", None, False),
    ("system.required_slots_filled", "boolean", None, False),
    ("skill.status", "enum", "skill_status", False),
)
FIELD_INDEX: dict[str, int] = {f[0]: i for i, f in enumerate(FIXED_FIELDS)}
SLOT_FIELD_BASE = len(FIXED_FIELDS)
# Enum domains whose literals (and facts) are indices: an intent, act or node index. The other
# enums (skill.status, enum slots) keep their members as strings.
INTERNED_DOMAINS = frozenset({"intents", "acts", "nodes"})


def operator_applies(operator: str, kind: str) -> bool:
    """Whether `operator` (an `OPERATORS` name) applies to a field of value kind `kind`."""
    if operator in ORDERING_OPERATORS:
        return kind in NUMERIC_KINDS
    if operator == "contains":
        return kind in TEXT_KINDS
    return True


class IRError(Exception):
    """An IR file that cannot be used; the message is one line for the user."""


class _Record(msgspec.Struct, array_like=True, frozen=True, forbid_unknown_fields=True):
    pass


class Slot(_Record):
    name: str
    value_type: str
    required: bool
    values: list[str] = []
    synonyms: dict[str, list[str]] = {}
    description: str = ""
    question: str | None = None
    min: float | int | None = None
    max: float | int | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    on_conflict: str = "overwrite"


class Intent(_Record):
    name: str
    description: str = ""
    examples: list[str] = []
    patterns: list[str] = []


class Transition(_Record):
    """One row of a node's ordered table: `next_nodes` entries, then `default_next`."""

    target: int  # node index, or STAY
    condition: Any  # opcode list, or None for always
    source: int  # index into Program.source_map


class GlobalTransition(_Record):
    name: str | None
    target: int
    condition: Any
    source: int


class SourceEntry(_Record):
    """Where a transition came from: JSON pointer, reason label and display text."""

    pointer: str
    label: str  # "next_nodes[2]", "default_next", "global:NAME" or "global[i]"
    display: str  # the condition in expression syntax ("" when unconditional)


class Node(_Record):
    id: str
    name: str
    description: str
    executor: int
    end: int
    responses: dict[str, str]
    collect_slots: list[int]
    required_slots: list[int]
    transitions: list[Transition]
    max_turns: int | None = None
    min_turns: int = 1
    max_fallback_retries: int = 2
    turn_limit_enabled: bool = True
    skill: str | None = None
    skill_args: dict[str, Any] = {}
    fallback: str | None = None
    timeout_ms: int | None = None


class _Header(_Record):
    """What a `Program` and its file form `Body` hold alike."""

    name: str
    language: str
    version: str
    description: str
    prompt_bot: str
    prompt_nlu: str
    entry: int
    bot_first: bool
    closing_acts: list[int]
    global_transitions: list[GlobalTransition]
    slots: list[Slot]
    intents: list[Intent]


class Program(_Header):
    """A compiled scenario. `nodes` and `source_map` are lists when built by the compiler and
    read-only lazy sequences (`NodeList`, `SourceMap`) when decoded from a file."""

    nodes: Sequence[Node]
    source_map: Sequence[SourceEntry]


class Body(_Header):
    """A `Program` as the file holds it: each node its own MessagePack blob (an encoded `Node`),
    with the id and executor kind of every node beside them, and the source map in two columns:
    the labels (routes need them) and one blob of `[pointer, display]` pairs (traces and views
    only), both in source-index order."""

    node_ids: list[str]
    node_executors: list[int]
    nodes: list[msgspec.Raw]
    source_labels: list[str]
    source_texts: msgspec.Raw


_SHARED_FIELDS = tuple(f.name for f in msgspec.structs.fields(_Header))


class Envelope(_Record):
    compiler_version: str
    source_sha256: str
    body_sha256: str
    body: memoryview  # decoded as a view into the file's bytes (no copy); bytes when built


_PREFIX = struct.Struct(">4sH")
_ENCODER = msgspec.msgpack.Encoder()
_BODY = msgspec.msgpack.Decoder(Body)
_NODE = msgspec.msgpack.Decoder(Node)
_SOURCE_TEXTS = msgspec.msgpack.Decoder(list[tuple[str, str]])


# --- encoding -----------------------------------------------------------------------------


def encode_ir(program: Program, compiler_version: str, source_sha256: str) -> bytes:
    """Deterministic bytes for `program` (a decoded one too: its nodes are decoded to do it)."""
    body = encode_body(program)
    envelope = Envelope(compiler_version, source_sha256, hashlib.sha256(body).hexdigest(), body)
    return _PREFIX.pack(MAGIC, FORMAT_VERSION) + _ENCODER.encode(envelope)


def encode_body(program: Program) -> bytes:
    """The MessagePack `Body` of `program`: a pure function of the program's contents."""
    nodes, sources = list(program.nodes), list(program.source_map)
    return _ENCODER.encode(Body(
        **{field: getattr(program, field) for field in _SHARED_FIELDS},
        node_ids=[node.id for node in nodes], node_executors=[node.executor for node in nodes],
        nodes=[msgspec.Raw(_ENCODER.encode(node)) for node in nodes],
        source_labels=[entry.label for entry in sources],
        source_texts=msgspec.Raw(_ENCODER.encode([(e.pointer, e.display) for e in sources]))))


# --- decoding -----------------------------------------------------------------------------


def read_envelope(data: bytes) -> Envelope:
    """Check magic, version and integrity; return the envelope (body not yet decoded)."""
    if len(data) < _PREFIX.size:
        raise IRError("not a Mago IR file (too short); compile the scenario with `mgc compile`")
    magic, version = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise IRError("not a Mago IR file (bad magic); compile the scenario with `mgc compile`")
    if version > FORMAT_VERSION:
        raise IRError(
            f"IR format version {version} is newer than this mgi supports ({FORMAT_VERSION}); "
            "upgrade mago or recompile with this version's mgc"
        )
    if version < FORMAT_VERSION:
        raise IRError(f"IR format version {version} is no longer supported; recompile with `mgc compile`")
    try:
        envelope = msgspec.msgpack.decode(memoryview(data)[_PREFIX.size:], type=Envelope)
    except msgspec.DecodeError:
        raise IRError("IR file is truncated or corrupted; recompile with `mgc compile`") from None
    if hashlib.sha256(envelope.body).hexdigest() != envelope.body_sha256:
        raise IRError("IR file is corrupted (checksum mismatch); recompile with `mgc compile`")
    return envelope


def decode_ir(data: bytes, verify: bool = False) -> tuple[Envelope, Program]:
    """The envelope and program of IR bytes, or `IRError`. Nodes and source texts are decoded
    and checked on first use; `verify` decodes and checks them all now."""
    envelope = read_envelope(data)
    try:
        body = _BODY.decode(envelope.body)
    except msgspec.DecodeError:
        raise IRError("IR body does not match this mgi's format; recompile with `mgc compile`") from None
    except RecursionError:  # a condition nested thousands deep: too deep to read at all
        raise IRError(f"IR body is nested too deeply to read (a condition may have at most "
                      f"{MAX_CONDITION_DEPTH} levels); recompile with `mgc compile`") from None
    nodes = NodeList(body)
    check_program(body, nodes.fields)
    program = Program(**{field: getattr(body, field) for field in _SHARED_FIELDS},
                      nodes=nodes, source_map=SourceMap(body.source_labels, body.source_texts))
    if verify:
        check_all(program)
    return envelope, program


def _error(where: str, problem: str) -> IRError:
    """The one line for a bad part of an IR file: `IR <where> <problem>; recompile ...`."""
    return IRError(f"IR {where} {problem}; recompile with `mgc compile`")


def check_program(body: Body, fields: Sequence[FieldType]) -> None:
    """Everything the runtime reads without decoding a node is usable (one line naming the
    first bad part): the scenario's name (one line of text), the node directory, every
    program-level index (entry, closing acts,
    global targets and sources), the slots' value types, the intents' patterns and the global
    conditions (against `fields`); a node's own contents are checked when it is decoded
    (`check_node`)."""
    _check_directory(body)
    if name_problem(body.name) is not None:
        raise _error(f"scenario name {_shown(body.name)}", f"contains {name_problem(body.name)[1]}")
    if not 0 <= body.entry < len(body.nodes):
        raise _error(f"entry index {body.entry}", "is out of range")
    for act in body.closing_acts:
        if not 0 <= act < len(ACTS):
            raise _error(f"closing act {act}", "is out of range")
    for slot in body.slots:
        _check_slot(slot)
    for intent in body.intents:
        intent_patterns(intent)
    for i, g in enumerate(body.global_transitions):
        problem = _transition_problem(g, len(body.nodes), len(body.source_labels), fields, False)
        if problem is not None:
            raise _error(f"transition in global transition {_name(g.name) if g.name else i}",
                         problem)


def _check_directory(body: Body) -> None:
    """One id and one known executor kind per node, no id twice."""
    n_nodes = len(body.nodes)
    if not len(body.node_ids) == len(body.node_executors) == n_nodes:
        raise _error("node directory", "does not match its nodes")
    if len(set(body.node_ids)) != n_nodes:
        raise _error("node directory", "repeats a node id")
    if not set(body.node_executors) <= _EXECUTORS:
        i = next(i for i, kind in enumerate(body.node_executors) if kind not in _EXECUTORS)
        raise _error(f"node {i} ({_name(body.node_ids[i])})",
                     f"has executor kind {body.node_executors[i]}, not one of "
                     f"0..{len(EXECUTOR_NAMES) - 1} ({', '.join(EXECUTOR_NAMES)})")


def _check_slot(slot: Slot) -> None:
    if slot.value_type not in VALUE_TYPES:
        raise _error(f"slot {_name(slot.name)}", f"has value type {_shown(slot.value_type)}, "
                     f"not one of {', '.join(VALUE_TYPES)}")


def intent_patterns(intent: Intent) -> tuple[re.Pattern, ...]:
    """The intent's `patterns` compiled as the rules NLU matches them (`patterns.INTENT`:
    case-insensitive, refused when their matching time is not bounded; `re` keeps them
    cached), or `IRError` naming the intent."""
    try:
        return tuple(patterns.compile_pattern(pattern, patterns.INTENT)  # bounded time
                     for pattern in intent.patterns)
    except (re.error, OverflowError, RecursionError, ValueError) as error:
        message = "nested too deeply" if isinstance(error, RecursionError) else \
            str(error).splitlines()[0] if str(error) else type(error).__name__
        raise _error(f"intent {_name(intent.name)}",
                     f"has an invalid pattern ({message})") from None


def check_node(node: Node, index: int, nodes: NodeList) -> None:
    """The node at `index` is the one the directory names (so its executor kind is known), its
    end flag is known, its indices point somewhere and its conditions are well formed and
    typed (`check_condition`)."""
    if node.id != nodes.ids[index] or node.executor != nodes.executors[index]:
        raise _error(f"node {index} ({_name(nodes.ids[index])})",
                     "does not match the node directory")
    if node.end not in _END_FLAGS:
        raise _error(f"node {_name(node.id)}", f"has end flag {node.end}, not one of "
                     f"0..{len(END_NAMES) - 1} (none, explicit, inferred)")
    for t in node.transitions:
        problem = _transition_problem(t, len(nodes), nodes.source_count, nodes.fields, True)
        if problem is not None:
            raise _error(f"transition in node {_name(node.id)}", problem)
    for s in (*node.collect_slots, *node.required_slots):
        if not 0 <= s < nodes.slot_count:
            raise _error(f"node {_name(node.id)}", f"names slot index {s}")


_EXECUTORS = frozenset(range(len(EXECUTOR_NAMES)))
_END_FLAGS = frozenset(range(len(END_NAMES)))


def _transition_problem(t: Transition | GlobalTransition, n_nodes: int, n_sources: int,
                        fields: Sequence[FieldType], may_stay: bool) -> str | None:
    """What is wrong with a transition's target, source entry or condition (None: nothing)."""
    if not (may_stay and t.target == STAY) and not 0 <= t.target < n_nodes:
        return f"targets index {t.target}"
    if not 0 <= t.source < n_sources:
        return "has no source entry"
    return check_condition(t.condition, fields)


# --- conditions -----------------------------------------------------------------------------


class FieldType(NamedTuple):
    """What a condition may do with one field of a program's field table (`field_types`):
    the operators that apply to `kind`, and literals of that kind, or null when `nullable`.
    `members` is how many indices an interned enum has (`INTERNED_DOMAINS`) or the strings of
    a string enum (`skill.status`, an enum slot); None for the other kinds."""

    name: str
    kind: str  # a VALUE_TYPES entry
    nullable: bool
    domain: str | None  # a FIXED_FIELDS domain, "slot_values" or None
    members: int | frozenset[str] | None


def field_types(slots: Sequence[Slot], intent_count: int,
                node_count: int) -> tuple[FieldType, ...]:
    """The field table of a program, by field index: `FIXED_FIELDS`, then one per slot (an
    unfilled slot reads as null)."""
    return (*_fixed_field_types(intent_count, node_count), *map(_slot_field, slots))


@functools.lru_cache(maxsize=64)
def _fixed_field_types(intent_count: int, node_count: int) -> tuple[FieldType, ...]:
    members = {"intents": intent_count, "acts": len(ACTS), "nodes": node_count,
               "skill_status": frozenset(SKILL_STATUSES)}
    return tuple(FieldType(name, kind, nullable, domain, members.get(domain))
                 for name, kind, domain, nullable in FIXED_FIELDS)


def _slot_field(slot: Slot) -> FieldType:
    if slot.value_type == "enum":
        return FieldType("slots." + slot.name, "enum", True, "slot_values", frozenset(slot.values))
    return FieldType("slots." + slot.name, slot.value_type, True, None, None)


def check_condition(condition: Any, fields: Sequence[FieldType]) -> str | None:
    """What is wrong with an opcode tree (None when nothing is; None itself is "always"):
    its shape (`_shape_problem`), its depth (at most `MAX_CONDITION_DEPTH` and/or/not levels)
    and every leaf against `fields` (`_leaf_problem`). Walked level by level, never recursing."""
    level, depth = [condition] if condition is not None else [], 0
    while level:
        below = []
        for c in level:
            op = c[0] if type(c) is list and c else None
            if op == OP_LEAF and type(op) is int and len(c) == 4:
                problem = _leaf_problem(c, fields)
                if problem is not None:
                    return problem
            elif op == OP_NOT and type(op) is int and len(c) == 2 and depth < MAX_CONDITION_DEPTH:
                below.append(c[1])
            elif (op == OP_AND or op == OP_OR) and type(op) is int and len(c) == 2 and \
                    type(c[1]) is list and c[1] and depth < MAX_CONDITION_DEPTH:
                below += c[1]
            else:
                shape = _shape_problem(c)
                if shape is not None:
                    return f"has a malformed condition ({shape})"
                return f"has a condition nested more than {MAX_CONDITION_DEPTH} levels deep"
        level, depth = below, depth + 1
    return None


def _shape_problem(c: Any) -> str | None:
    """What makes `c` no opcode list: [OP_LEAF, operator, field, value], [OP_NOT, c] or
    [OP_AND or OP_OR, non-empty list]."""
    if type(c) is not list or not c:
        return f"{_shown(c)} where an opcode list belongs"
    op = c[0]
    if type(op) is not int or op not in (OP_AND, OP_OR, OP_NOT, OP_LEAF):
        return f"unknown opcode {_shown(op)}"
    if len(c) != (4 if op == OP_LEAF else 2):
        return f"opcode {op} with {len(c) - 1} operands"
    if op in (OP_AND, OP_OR) and (type(c[1]) is not list or not c[1]):
        return f"{'and' if op == OP_AND else 'or'} over {_shown(c[1])}, not a non-empty list"
    return None


def _leaf_problem(leaf: list, fields: Sequence[FieldType]) -> str | None:
    """What is wrong with one `[OP_LEAF, operator, field, value]` (None when nothing is): the
    field and operator exist, the operator applies to the field's kind (`operator_applies`)
    and the literal is of the field's type (`_literal_expected`)."""
    _, operator, field, value = leaf
    if type(field) is not int or not 0 <= field < len(fields):
        return f"has a condition that reads unknown field index {_shown(field)}"
    if type(operator) is not int or not 0 <= operator < len(OPERATORS):
        return f"has a condition that uses unknown operator {_shown(operator)}"
    name, ftype = OPERATORS[operator], fields[field]
    if not operator_applies(name, ftype.kind):
        rule = "ordering operators need" if name in ORDERING_OPERATORS else f"{name} needs"
        kinds = NUMERIC_KINDS if name in ORDERING_OPERATORS else TEXT_KINDS
        return (f"compares {_name(ftype.name)} ({ftype.kind}) with {name}; {rule} a field of "
                f"kind {' or '.join(sorted(kinds))}")
    expected = _literal_expected(name, ftype, value)
    if expected is not None:
        return f"compares {_name(ftype.name)} with {name} {_shown(value)}; it needs {expected}"
    return None


def _literal_expected(operator: str, ftype: FieldType, value: Any) -> str | None:
    """None when `value` is a literal `operator` can compare a field of type `ftype` with,
    else what it should be, in words."""
    if operator == "equals" or operator == "not_equals":
        return None if _is_member(ftype, value) else _member_words(ftype)
    if operator in NO_VALUE_OPERATORS:
        return None if value is None else "no value"
    if operator in ORDERING_OPERATORS:
        whole = ftype.kind != "integer" or type(value) is int
        return None if whole and _is_number(value) else _KIND_WORDS[ftype.kind]
    if operator == "contains":
        return None if type(value) is str else "a string"
    if type(value) is list and value and all(_is_member(ftype, v) for v in value):
        return None  # in, not_in: the last operators of OPERATORS
    return "a non-empty list, each item " + _member_words(ftype)


def _is_member(ftype: FieldType, value: Any) -> bool:
    """Whether `value` is one value of the field (`equals`, an item of `in`)."""
    if value is None:
        return ftype.nullable
    kind = ftype.kind
    if kind in TEXT_KINDS:
        return type(value) is str
    if kind == "integer":
        return type(value) is int and fits_int64(value)
    if kind == "number":
        return _is_number(value)
    if kind == "boolean":
        return type(value) is bool
    if ftype.domain in INTERNED_DOMAINS:
        return type(value) is int and 0 <= value < ftype.members
    return type(value) is str and value in ftype.members


def _is_number(value: Any) -> bool:
    """An int that fits in 64 bits or a finite float (a bool is not a number)."""
    if type(value) is int:
        return fits_int64(value)
    return type(value) is float and math.isfinite(value)


_KIND_WORDS = {"string": "a string", "email": "a string", "integer": "a whole number",
               "number": "a number", "boolean": "true or false"}


def _member_words(ftype: FieldType) -> str:
    """One value of the field, in words (for `equals` and the items of `in`)."""
    if ftype.kind == "enum" and not ftype.members:  # only null can be compared with
        why = "the program declares no intents" if ftype.domain == "intents" else \
            f"{_name(ftype.name)} has no values"
        return f"null ({why})"
    if ftype.domain in INTERNED_DOMAINS:
        words = f"an index into its {ftype.members} {ftype.domain}"
    elif ftype.kind == "enum":
        shown = sorted(ftype.members)
        words = "one of " + ", ".join(map(_shown, shown[:6])) + (", ..." if len(shown) > 6 else "")
    else:
        words = _KIND_WORDS[ftype.kind]
    return words + (" or null" if ftype.nullable else "")


def _shown(value: Any, limit: int = 40) -> str:
    """A literal for a message, on one short line whatever it holds: strings as JSON (ASCII
    escapes unless printable: no line breaks), containers described, never printed (they may
    be nested thousands deep)."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return f"a map of {len(value)}"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=not value.isprintable())
    elif value is None or isinstance(value, bool):
        text = json.dumps(value)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _name(text: str) -> str:
    """A node, slot, intent or transition name for a message: as it is when plain, else as a
    literal (`_shown`)."""
    return text if _NAME.fullmatch(text) else _shown(text)


_NAME = re.compile(r"[A-Za-z0-9_.]+")


def check_all(program: Program) -> None:
    """Decode and check every node and the whole source map now (`IRError` on the first bad
    one); a program built in memory has nothing left to decode."""
    for _ in program.nodes:  # each read decodes and checks a node
        pass
    for _ in program.source_map:  # the first read decodes the texts
        pass


def node_ids(program: Program) -> Sequence[str]:
    """Every node's id, in node-index order, without decoding the nodes."""
    nodes = program.nodes
    return nodes.ids if isinstance(nodes, NodeList) else [node.id for node in nodes]


def node_executors(program: Program) -> Sequence[int]:
    """Every node's executor kind (`EXECUTOR_*`), without decoding the nodes."""
    nodes = program.nodes
    return nodes.executors if isinstance(nodes, NodeList) else [node.executor for node in nodes]


def source_labels(program: Program) -> Sequence[str]:
    """Every source entry's label, in source-index order, without decoding the texts."""
    source_map = program.source_map
    if isinstance(source_map, SourceMap):
        return source_map.labels
    return [entry.label for entry in source_map]


# --- lazy sequences of a decoded program -----------------------------------------------------


class _ReadOnlySequence(Sequence):
    """A read-only sequence that compares equal to a list or tuple of the same items."""

    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (list, tuple, _ReadOnlySequence)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # like a list

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class NodeList(_ReadOnlySequence):
    """`Program.nodes` of a decoded program: each `Node` decoded from its blob and checked
    (`check_node`, its conditions against `fields`, the program's field table) the first time
    it is read, then kept. `ids` and `executors` (the node directory) are at hand without
    decoding anything."""

    __slots__ = ("ids", "executors", "slot_count", "source_count", "fields", "_blobs", "_nodes")

    def __init__(self, body: Body):
        self.ids: list[str] = body.node_ids
        self.executors: list[int] = body.node_executors
        self.slot_count, self.source_count = len(body.slots), len(body.source_labels)
        self.fields = field_types(body.slots, len(body.intents), len(body.nodes))
        self._blobs = body.nodes
        self._nodes: list[Node | None] = [None] * len(body.nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._nodes)))]
        node = self._nodes[index]  # IndexError and negative indices as for a list
        if node is None:
            index = index if index >= 0 else index + len(self._nodes)
            node = self._nodes[index] = self._decode(index)
        return node

    def _decode(self, index: int) -> Node:
        try:
            node = _NODE.decode(self._blobs[index])
        except msgspec.DecodeError:
            problem = "does not match this mgi's format"
        except RecursionError:  # a condition nested thousands deep: too deep to read at all
            problem = (f"is nested too deeply to read (a condition may have at most "
                       f"{MAX_CONDITION_DEPTH} levels)")
        else:
            check_node(node, index, self)
            return node
        raise _error(f"node {index} ({_name(self.ids[index])})", problem)


class SourceMap(_ReadOnlySequence):
    """`Program.source_map` of a decoded program: `labels` at hand, the pointers and display
    texts decoded together the first time an entry is read."""

    __slots__ = ("labels", "_texts", "_entries")

    def __init__(self, labels: list[str], texts: msgspec.Raw):
        self.labels = labels
        self._texts = texts
        self._entries: list[SourceEntry] | None = None

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index):
        entries = self._entries if self._entries is not None else self._decode()
        return entries[index]

    def _decode(self) -> list[SourceEntry]:
        try:
            texts = _SOURCE_TEXTS.decode(self._texts)
        except msgspec.DecodeError:
            texts = None
        if texts is None or len(texts) != len(self.labels):
            raise IRError("IR source map does not match this mgi's format; "
                          "recompile with `mgc compile`")
        self._entries = [SourceEntry(pointer, label, display)
                         for (pointer, display), label in zip(texts, self.labels)]
        return self._entries


@contextlib.contextmanager
def without_cycle_collection() -> Iterator[None]:
    """For building or loading a large program: both allocate many small acyclic objects, and
    Python's cycle collector would rescan them all again and again (40-60% of the time of a
    10,000-node compile or load). Collection resumes afterwards (nothing is frozen: a host
    process that compiles or loads many times must not keep its garbage)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def field_name(program: Program, index: int) -> str:
    """Display name of a field index."""
    if index < SLOT_FIELD_BASE:
        return FIXED_FIELDS[index][0]
    return "slots." + program.slots[index - SLOT_FIELD_BASE].name
