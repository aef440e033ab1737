"""The IR: the compiled form of a scenario, owned by the interpreter that executes it.

In: a `Program` built by the compiler. Out: deterministic bytes (`encode_ir`), and back
(`decode_ir`), which checks magic, format version and integrity and raises `IRError` with
one clear line on a truncated, corrupted, foreign or newer file, or a hand-made one holding
what mgc would never write.

File layout (format 8; formats 4 to 7 still load, see FORMAT_VERSION): the magic `MGIR`,
the format version as two big-endian bytes, then one MessagePack `Envelope` holding the
compiler version, the SHA-256 of the canonical source, the SHA-256 of the body and the body:
a MessagePack `Body`, the program with each node kept as its own MessagePack blob, a node
directory beside them (every node's id and executor kind), the source map in two columns
(the labels, then one blob of pointers and display texts), and the safety rules and patterns.

Loading is lazy where the program is large: `decode_ir` verifies the checksum of the whole
body, decodes the program header, slots, intents, global transitions, the node directory and
the source labels, and checks what is read without a node (`check_program`): every
program-level index (entry, closing acts, global targets and sources, safety rules), the
directory's executor kinds, the slots' value types, that the intents' and the safety patterns
compile with a bounded matching time, and the global conditions. A node is decoded and checked (`check_node`: targets, sources, slots, executor
kind, end flag and its conditions) the first time it is read from `Program.nodes` (a
`NodeList`); the source pointers and display texts the first time an entry is read from
`Program.source_map` (a `SourceMap`). With the checksum verified, a node can only fail those
checks in a hand-made file; `decode_ir(data, verify=True)` or `check_all` decodes and checks
everything at once. Every failure is an `IRError` whose one line names the part and what is
wrong with it.

A condition is checked as the compiler's type check would have it (`check_condition`), against
the program's field table (`fields.field_types`): at most `MAX_CONDITION_DEPTH` and/or/not levels,
a known operator that applies to the field's kind (`operator_applies`: ordering operators
need a number field, `contains` a text field), and a literal of the field's type (an index in
range for an interned enum, a member for a string enum, a non-empty list of them for `in`,
none for `is_empty`; a date field's literal is an ISO date or `TODAY`, the day of the turn).

Names are interned: a node, slot, intent or dialogue act is an index into `Program.nodes`,
`Program.slots`, `Program.intents` or `ACTS`. Conditions are nested lists of opcodes:

    [OP_AND, [c, ...]]   [OP_OR, [c, ...]]   [OP_NOT, c]
    [OP_LEAF, operator, field, value]

where `operator` indexes `OPERATORS`, `field` the field table (`FIXED_FIELDS`, then one field
per slot, `SLOT_FIELD_BASE + slot index`) and `value` is the literal with intent, act and node
names replaced by their indices (skill statuses and slot enum members stay strings).
"""

# No postponed annotations here: msgspec would compile every field's annotation string when the
# module-level decoders are built, at every start-up.

import contextlib
import gc
import hashlib
import re
import struct
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from . import MagoError
from . import patterns
from .fields import (  # noqa: F401
    ACTS, BUILTIN_SKILLS, FIELD_INDEX, FIXED_FIELDS, INT_MAX, INT_MIN, INT_RANGE_HINT,
    INTERNED_DOMAINS, ITEM_TYPES, LATE_FIELD_INDEX, LATE_FIELDS, LIST_OPERATORS,
    MAX_CONDITION_DEPTH, NO_VALUE_OPERATORS, NORMALIZERS, NUMERIC_KINDS, OP_AND, OP_LEAF, OP_NOT, OP_OR, OPERATORS, ORDERING_OPERATORS,
    SAFETY_CATEGORIES, SAFETY_REASON, SAFETY_VALUES, SKILL_STATUSES, SLOT_FIELD_BASE,
    TEMPORAL_KINDS, TEXT_KINDS, TODAY, VALUE_TYPES, FieldType, Intent, Line, Lines,
    SafetyPattern, SafetyRule, SkillDecl, SkillField, SlotSet, SourceEntry, _name, _shown,
    check_condition, field_name, field_types, fits_int64, late_field_index, lines_problem,
    operator_applies)
from .names import name_problem

MAGIC = b"MGIR"
FORMAT_VERSION = 8  # 3: safety (SPEC 10); 4: tasks (8), variants (9); 5: understanding (13),
# skills and the designer's language (14); 6: dates and times (14.1), values in context (18);
# 7: `system.slot_declined` (18.3), a field after the profile (`fields.LATE_FIELDS`);
# 8: skill arguments written as conditional lines (`Node.skill_lines`, SPEC 14.4, 17.21)
OLDEST_FORMAT_VERSION = 4  # format 4-7 bodies decode as 8: new fields are trailing defaults
DEFAULT_CLOSING_ACTS: tuple[str, ...] = ("affirm", "goodbye", "thank", "silence")
STAY = -1  # Transition.target for `action: stay`
# The keys of a node's `responses`, each a non-empty list of variants (SPEC 2.2, 9).
RESPONSE_KINDS = ("default", "no_input", "not_understood", "turn_limit", "complete")

EXECUTOR_GENERAL, EXECUTOR_TASK, EXECUTOR_SKILL = 0, 1, 2
EXECUTOR_NAMES = ("general", "task", "skill")

END_NONE, END_EXPLICIT, END_INFERRED = 0, 1, 2
END_NAMES = ("", "explicit", "inferred")

class IRError(MagoError):
    """An IR file that cannot be used; the message is one line for the user."""


class _Record(msgspec.Struct, array_like=True, frozen=True, forbid_unknown_fields=True):
    pass


class Slot(_Record, frozen=True):
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
    default: Any = None  # a literal of the slot's type, stored on leaving (SPEC 8.2)
    default_profile: str | None = None  # or the profile field whose value is the default
    items: str | None = None  # a list slot's item type (one of ITEM_TYPES)
    min_items: int | None = None
    max_items: int | None = None
    normalize: list[str] = []  # SPEC 14.2: NORMALIZERS applied to a heard text, in order
    labels: dict[str, str] = {}  # SPEC 14.3: enum member -> the words said for it
    min_bound: str | None = None  # SPEC 14.1: a date/time slot's min and max as written
    max_bound: str | None = None
    none_value: Any = None  # SPEC 18.3: stored when the user declines (None: nothing)
    affirm_value: str | None = None  # SPEC 18.4: a bare yes at the collecting node (enum)
    deny_value: str | None = None  # and a bare no
    not_synonyms: dict[str, list[str]] = {}  # SPEC 18.5: member -> phrases never read as it


# SPEC 14.5, 17.20: how a `set` assignment computes the slot's new value.
SET_LITERAL, SET_COPY, SET_ADD = 0, 1, 2
SET_KINDS = ("literal", "copy", "add")


class Transition(_Record, frozen=True):
    """One row of a node's ordered table: `next_nodes` entries, then `default_next`."""

    target: int  # node index, or STAY
    condition: Any  # opcode list, or None for always
    source: int  # index into Program.source_map
    sets: list[SlotSet] = []  # applied when the row fires, before the move (SPEC 17.20)


class GlobalTransition(_Record, frozen=True):
    name: str | None
    target: int
    condition: Any
    source: int
    sets: list[SlotSet] = []


class Node(_Record, frozen=True):
    id: str
    name: str
    description: str
    executor: int
    end: int
    responses: dict[str, list[str]]  # kind (RESPONSE_KINDS) -> its variants, said in rotation
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
    transient: bool = False  # never waits: its routing runs when a turn enters it (SPEC 8.3)
    skip_if_filled: bool = True  # a task node whose collect slots are all known is passed
    clear_slots: list[int] = []  # slot indices cleared when a turn enters the node (8.5)
    expects: str | None = None  # SPEC 13.3: "intent", "slot" or "any"; None: free talk
    on_enter: list[SlotSet] = []  # applied on entering, after clear_slots (SPEC 17.20)
    lines: dict[str, Lines] = {}  # kind -> a response made of conditional lines (SPEC 14.4)
    skill_lines: dict[str, Lines] = {}  # skill argument -> its text as lines (SPEC 17.21)


class _Header(_Record, frozen=True):
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


class Program(_Header, frozen=True):
    """A compiled scenario. `nodes` and `source_map` are lists when built by the compiler and
    read-only lazy sequences (`NodeList`, `SourceMap`) when decoded from a file."""

    nodes: Sequence[Node]
    source_map: Sequence[SourceEntry]
    safety: list[SafetyRule] = []
    safety_patterns: list[SafetyPattern] = []
    profile: list[Slot] = []  # what the application knows about the user (SPEC 8.1)
    skills: list[SkillDecl] = []  # the scenario's declared skills, built-ins excluded (14.7)
    date_order: str = ""  # SPEC 14.1: mdy, dmy or ymd; "" for the language's default
    timezone: str = ""  # SPEC 17.18: the IANA zone of "today"; "" for the server's


class Body(_Header, frozen=True):
    """A `Program` as the file holds it: each node its own MessagePack blob (an encoded `Node`),
    with the id and executor kind of every node beside them, and the source map in two columns:
    the labels (routes need them) and one blob of `[pointer, display]` pairs (traces and views
    only), both in source-index order."""

    node_ids: list[str]
    node_executors: list[int]
    nodes: list[msgspec.Raw]
    source_labels: list[str]
    source_texts: msgspec.Raw
    safety: list[SafetyRule] = []
    safety_patterns: list[SafetyPattern] = []
    profile: list[Slot] = []
    skills: list[SkillDecl] = []
    date_order: str = ""
    timezone: str = ""

_SHARED_FIELDS = tuple(f.name for f in msgspec.structs.fields(_Header))
# The trailing fields a `Program` and a `Body` hold alike, after their own.
_TRAILING = ("safety", "safety_patterns", "profile", "skills", "date_order", "timezone")


class Envelope(_Record, frozen=True):
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
    envelope = Envelope(compiler_version, source_sha256, hashlib.sha256(body).hexdigest(),
                        memoryview(body))
    return _PREFIX.pack(MAGIC, FORMAT_VERSION) + _ENCODER.encode(envelope)


def encode_body(program: Program) -> bytes:
    """The MessagePack `Body` of `program`: a pure function of the program's contents."""
    nodes, sources = list(program.nodes), list(program.source_map)
    return _ENCODER.encode(Body(
        **{field: getattr(program, field) for field in _SHARED_FIELDS},
        node_ids=[node.id for node in nodes], node_executors=[node.executor for node in nodes],
        nodes=[msgspec.Raw(_ENCODER.encode(node)) for node in nodes],
        source_labels=[entry.label for entry in sources],
        source_texts=msgspec.Raw(_ENCODER.encode([(e.pointer, e.display) for e in sources])),
        **{field: getattr(program, field) for field in _TRAILING}))


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
    if version < OLDEST_FORMAT_VERSION:
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
    program = Program(**{field: getattr(body, field) for field in (*_SHARED_FIELDS, *_TRAILING)},
                      nodes=nodes, source_map=SourceMap(body.source_labels, body.source_texts))
    if verify:
        check_all(program)
    return envelope, program


def _error(where: str, problem: str) -> IRError:
    """The one line for a bad part of an IR file: `IR <where> <problem>; recompile ...`."""
    return IRError(f"IR {where} {problem}; recompile with `mgc compile`")


def check_program(body: Body, fields: Sequence[FieldType]) -> None:
    """Everything the runtime reads without decoding a node is usable (one line naming the
    first bad part): the scenario's name, the node directory, every program-level index
    (entry, closing acts, global targets and sources), the slots' value types, the intents'
    patterns as regexes (their matching time where they are compiled: `intent_patterns`)
    and the global conditions (against `fields`); a node's own at its decoding."""
    _check_directory(body)
    misplaced = name_problem(body.name)
    if misplaced is not None:
        raise _error(f"scenario name {_shown(body.name)}", f"contains {misplaced[1]}")
    if not 0 <= body.entry < len(body.nodes):
        raise _error(f"entry index {body.entry}", "is out of range")
    for act in body.closing_acts:
        if not 0 <= act < len(ACTS):
            raise _error(f"closing act {act}", "is out of range")
    for slot in (*body.slots, *body.profile):
        _check_slot(slot)
    for intent in body.intents:  # regexes; their matching time when first compiled
        for found in filter(None, (patterns.syntax_problem(p, patterns.INTENT)
                                   for p in intent.patterns)):
            raise _error(f"intent {_name(intent.name)}", f"has an invalid pattern ({found.line})")
    for i, g in enumerate(body.global_transitions):
        problem = _transition_problem(g, len(body.nodes), len(body.source_labels), fields, False)
        if problem is None and any(
                a.kind not in _SET_KINDS or not 0 <= a.slot < len(body.slots) for a in g.sets):
            problem = "has a set of an unknown kind or slot"
        if problem is not None:
            raise _error(f"transition in global transition {_name(g.name) if g.name else i}",
                         problem)
    _check_safety(body)


def _check_safety(body: Body) -> None:
    """Safety rules name a known category once each, a node and a source entry; safety
    patterns name a known category and have a bounded matching time."""
    seen: set[str] = set()
    for i, rule in enumerate(body.safety):
        if rule.category not in SAFETY_CATEGORIES or rule.category in seen:
            twice = "repeats" if rule.category in seen else "has unknown"
            raise _error(f"safety rule {i}", f"{twice} category {_shown(rule.category)} "
                         f"(categories: {', '.join(SAFETY_CATEGORIES)})")
        seen.add(rule.category)
        if not 0 <= rule.target < len(body.nodes):
            raise _error(f"safety rule {rule.category}", f"targets index {rule.target}")
        if not 0 <= rule.source < len(body.source_labels):
            raise _error(f"safety rule {rule.category}", "has no source entry")
    for i, item in enumerate(body.safety_patterns):
        if item.category not in SAFETY_CATEGORIES:
            raise _error(f"safety pattern {i}", f"has unknown category {_shown(item.category)}")
        try:
            patterns.compile_pattern(item.pattern, patterns.INTENT)
        except patterns.PatternError as error:
            raise _error(f"safety pattern {i}", f"has an invalid pattern ({error})") from None


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
    if any(step not in NORMALIZERS for step in slot.normalize):
        raise _error(f"slot {_name(slot.name)}", "has an unknown normalize step")
    if slot.value_type not in VALUE_TYPES:
        raise _error(f"slot {_name(slot.name)}", f"has value type {_shown(slot.value_type)}, "
                     f"not one of {', '.join(VALUE_TYPES)}")
    if (slot.min_bound or slot.max_bound) and slot.value_type not in TEMPORAL_KINDS:
        raise _error(f"slot {_name(slot.name)}", "has date or time bounds but another type")
    if (slot.value_type == "list") != (slot.items is not None) or (
            slot.items is not None and slot.items not in ITEM_TYPES):
        raise _error(f"slot {_name(slot.name)}", f"has item type {_shown(slot.items)} for "
                     f"value type {slot.value_type}")


def intent_patterns(intent: Intent) -> tuple[re.Pattern[str], ...]:
    """The intent's `patterns` compiled as the rules NLU matches them (`patterns.INTENT`:
    case-insensitive, refused when their matching time is not bounded; `re` keeps them
    cached), or `IRError` naming the intent."""
    try:
        return tuple(patterns.compile_pattern(pattern, patterns.INTENT)  # bounded time
                     for pattern in intent.patterns)
    except patterns.PatternError as error:  # the one place a pattern is judged
        raise _error(f"intent {_name(intent.name)}", f"has an invalid pattern ({error})") from None


def check_node(node: Node, index: int, nodes: "NodeList") -> None:
    """The node at `index` is the one the directory names (so its executor kind is known), its
    end flag is known, its indices point somewhere, its conditions are well formed and
    typed (`check_condition`) and each of its responses is a known kind with variants."""
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
    sets = [a for t in node.transitions for a in t.sets] + list(node.on_enter)
    for s in (*node.collect_slots, *node.required_slots, *node.clear_slots,
              *(a.slot for a in sets), *(a.value for a in sets if a.kind == SET_COPY)):
        if not isinstance(s, int) or not 0 <= s < nodes.slot_count:
            raise _error(f"node {_name(node.id)}", f"names slot index {_shown(s)}")
    if any(a.kind not in _SET_KINDS for a in sets):
        raise _error(f"node {_name(node.id)}", "has a set of an unknown kind")
    found = lines_problem(node, RESPONSE_KINDS, nodes.fields)
    if found is not None:
        raise _error(f"node {_name(node.id)} {found[0]}", found[1])
    for kind, variants in node.responses.items():
        if kind not in RESPONSE_KINDS or not variants:
            problem = "has no variants" if kind in RESPONSE_KINDS else \
                f"is not one of {', '.join(RESPONSE_KINDS)}"
            raise _error(f"node {_name(node.id)} response {_shown(kind)}", problem)


_EXECUTORS = frozenset(range(len(EXECUTOR_NAMES)))
_SET_KINDS = frozenset(range(len(SET_KINDS)))
_END_FLAGS = frozenset(range(len(END_NAMES)))


def _transition_problem(t: Transition | GlobalTransition, n_nodes: int, n_sources: int,
                        fields: Sequence[FieldType], may_stay: bool) -> str | None:
    """What is wrong with a transition's target, source entry or condition (None: nothing)."""
    if not (may_stay and t.target == STAY) and not 0 <= t.target < n_nodes:
        return f"targets index {t.target}"
    if not 0 <= t.source < n_sources:
        return "has no source entry"
    return check_condition(t.condition, fields)


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


class _ReadOnlySequence(Sequence[Any]):
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
        self.fields = field_types(body.slots, len(body.intents), len(body.nodes), body.profile)
        self._blobs = body.nodes
        self._nodes: list[Node | None] = [None] * len(body.nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, index: Any) -> Any:
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

    def __getitem__(self, index: Any) -> Any:
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
