"""The IR: the compiled form of a scenario, owned by the interpreter that executes it.

In: a `Program` built by the compiler. Out: deterministic bytes (`encode_ir`), and back
(`decode_ir`), which checks magic, format version and integrity and raises `IRError` with
one clear line on a truncated, corrupted, foreign or newer file.

File layout (format 2): the magic `MGIR`, the format version as two big-endian bytes, then
one MessagePack `Envelope` holding the compiler version, the SHA-256 of the canonical source,
the SHA-256 of the body and the body: a MessagePack `Body`, the program with each node kept as
its own MessagePack blob, a node directory beside them (every node's id and executor kind) and
the source map in two columns (the labels, then one blob of pointers and display texts).

Loading is lazy where the program is large: `decode_ir` verifies the checksum of the whole
body, decodes the program header, slots, intents, global transitions, the node directory and
the source labels, and checks every program-level index (entry, closing acts, global targets
and sources). A node is decoded and its indices checked (targets, sources, slots) the first
time it is read from `Program.nodes` (a `NodeList`); the source pointers and display texts
the first time an entry is read from `Program.source_map` (a `SourceMap`). With the checksum
verified, a node can only fail those checks in a hand-made file; `decode_ir(data, verify=True)`
or `check_all` decodes and checks everything at once.

Names are interned: a node, slot, intent or dialogue act is an index into `Program.nodes`,
`Program.slots`, `Program.intents` or `ACTS`. Conditions are nested lists of opcodes:

    [OP_AND, [c, ...]]   [OP_OR, [c, ...]]   [OP_NOT, c]
    [OP_LEAF, operator, field, value]

where `operator` indexes `OPERATORS`, `field` indexes the field table (`FIXED_FIELDS`, then
one field per slot, `SLOT_FIELD_BASE + slot index`) and `value` is the literal with intent,
act and node names replaced by their indices (slot enum members stay strings).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import struct
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

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
    check_program(body)
    program = Program(**{field: getattr(body, field) for field in _SHARED_FIELDS},
                      nodes=NodeList(body), source_map=SourceMap(body.source_labels,
                                                                 body.source_texts))
    if verify:
        check_all(program)
    return envelope, program


def check_program(body: Body) -> None:
    """Every program-level index the runtime follows points somewhere (one line naming the
    first bad one); a node's own indices are checked when it is decoded (`check_node`)."""
    n_nodes, n_sources = len(body.nodes), len(body.source_labels)
    if not len(body.node_ids) == len(body.node_executors) == n_nodes:
        raise IRError("IR node directory does not match its nodes; recompile with `mgc compile`")
    if len(set(body.node_ids)) != n_nodes:
        raise IRError("IR node directory repeats a node id; recompile with `mgc compile`")
    if not 0 <= body.entry < n_nodes:
        raise IRError(f"IR entry index {body.entry} is out of range; recompile with `mgc compile`")
    for act in body.closing_acts:
        if not 0 <= act < len(ACTS):
            raise IRError(f"IR closing act {act} is out of range; recompile with `mgc compile`")
    for g in body.global_transitions:
        _check_transition("global", g, n_nodes, n_sources, may_stay=False)


def check_node(node: Node, index: int, nodes: NodeList) -> None:
    """The node at `index` is the one the directory names, and its indices point somewhere."""
    if node.id != nodes.ids[index] or node.executor != nodes.executors[index]:
        raise IRError(f"IR node {index} ({nodes.ids[index]}) does not match the node directory; "
                      "recompile with `mgc compile`")
    for t in node.transitions:
        _check_transition(node.id, t, len(nodes), nodes.source_count, may_stay=True)
    for s in (*node.collect_slots, *node.required_slots):
        if not 0 <= s < nodes.slot_count:
            raise IRError(f"IR node {node.id} names slot index {s}; recompile")


def _check_transition(where: str, t: Transition | GlobalTransition, n_nodes: int,
                      n_sources: int, may_stay: bool) -> None:
    if not (may_stay and t.target == STAY) and not 0 <= t.target < n_nodes:
        raise IRError(f"IR transition in {where} targets index {t.target}; recompile")
    if not 0 <= t.source < n_sources:
        raise IRError(f"IR transition in {where} has no source entry; recompile")


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
    (`check_node`) the first time it is read, then kept. `ids` and `executors` (the node
    directory) are at hand without decoding anything."""

    __slots__ = ("ids", "executors", "slot_count", "source_count", "_blobs", "_nodes")

    def __init__(self, body: Body):
        self.ids: list[str] = body.node_ids
        self.executors: list[int] = body.node_executors
        self.slot_count, self.source_count = len(body.slots), len(body.source_labels)
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
            raise IRError(f"IR node {index} ({self.ids[index]}) does not match this mgi's format; "
                          "recompile with `mgc compile`") from None
        check_node(node, index, self)
        return node


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
