"""The IR: the compiled form of a scenario, owned by the interpreter that executes it.

In: a `Program` built by the compiler. Out: deterministic bytes (`encode_ir`), and back
(`decode_ir`), which checks magic, format version and integrity and raises `IRError` with
one clear line on a truncated, corrupted, foreign or newer file.

File layout: the magic `MGIR`, the format version as two big-endian bytes, then one
MessagePack `Envelope` holding the compiler version, the SHA-256 of the canonical source,
the SHA-256 of the body and the body (the MessagePack-encoded `Program`).

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
from typing import Any, Iterator

import msgspec

MAGIC = b"MGIR"
FORMAT_VERSION = 1
# MessagePack integers (the IR and stored sessions): what a scenario or a slot value may hold.
INT_MIN, INT_MAX = -(2 ** 63), 2 ** 63 - 1

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


class Program(_Record):
    name: str
    language: str
    version: str
    description: str
    prompt_bot: str
    prompt_nlu: str
    entry: int
    bot_first: bool
    closing_acts: list[int]
    nodes: list[Node]
    global_transitions: list[GlobalTransition]
    slots: list[Slot]
    intents: list[Intent]
    source_map: list[SourceEntry]


class Envelope(_Record):
    compiler_version: str
    source_sha256: str
    body_sha256: str
    body: bytes


_PREFIX = struct.Struct(">4sH")


def encode_ir(program: Program, compiler_version: str, source_sha256: str) -> bytes:
    """Deterministic bytes for `program`."""
    body = msgspec.msgpack.encode(program)
    envelope = Envelope(compiler_version, source_sha256, hashlib.sha256(body).hexdigest(), body)
    return _PREFIX.pack(MAGIC, FORMAT_VERSION) + msgspec.msgpack.encode(envelope)


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
        envelope = msgspec.msgpack.decode(data[_PREFIX.size:], type=Envelope)
    except msgspec.DecodeError:
        raise IRError("IR file is truncated or corrupted; recompile with `mgc compile`") from None
    if hashlib.sha256(envelope.body).hexdigest() != envelope.body_sha256:
        raise IRError("IR file is corrupted (checksum mismatch); recompile with `mgc compile`")
    return envelope


def decode_ir(data: bytes) -> tuple[Envelope, Program]:
    """The envelope and program of IR bytes, or `IRError`."""
    envelope = read_envelope(data)
    try:
        program = msgspec.msgpack.decode(envelope.body, type=Program)
    except msgspec.DecodeError:
        raise IRError("IR body does not match this mgi's format; recompile with `mgc compile`") from None
    check_indices(program)
    return envelope, program


def check_indices(program: Program) -> None:
    """Every index the runtime follows points somewhere; one line naming the first bad one."""
    n_nodes, n_slots, n_sources = len(program.nodes), len(program.slots), len(program.source_map)
    if not 0 <= program.entry < n_nodes:
        raise IRError(f"IR entry index {program.entry} is out of range; recompile with `mgc compile`")
    for act in program.closing_acts:
        if not 0 <= act < len(ACTS):
            raise IRError(f"IR closing act {act} is out of range; recompile with `mgc compile`")
    rows = [(n.id, t) for n in program.nodes for t in n.transitions]
    rows += [("global", g) for g in program.global_transitions]
    for where, t in rows:
        if not (t.target == STAY and where != "global") and not 0 <= t.target < n_nodes:
            raise IRError(f"IR transition in {where} targets index {t.target}; recompile")
        if not 0 <= t.source < n_sources:
            raise IRError(f"IR transition in {where} has no source entry; recompile")
    for node in program.nodes:
        for s in (*node.collect_slots, *node.required_slots):
            if not 0 <= s < n_slots:
                raise IRError(f"IR node {node.id} names slot index {s}; recompile")


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
