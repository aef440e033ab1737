"""Dialogue state: everything a session remembers between turns (SPEC 5), and its bytes.

In: values set by the router and the engine. Out: `DialogueState`, a frozen msgspec Struct,
and `encode_state` / `decode_state` (MessagePack; `*_json` for JSON) that round-trip it exactly.
After: a state is never changed in place (it is frozen and its dicts are treated as
copy-on-write), so a turn that raises leaves the previous state untouched.

Nodes are stored by id, not index, so a recompiled scenario keeps sessions valid while the id
still exists. The history is bounded (`HISTORY_LIMIT` entries) so a stored session stays small,
and each entry is kept as its own MessagePack bytes: every turn writes the history but hardly
any reads it, and decoding a full history of Korean text costs more than the rest of a turn.
`state.entries()` gives the decoded `HistoryEntry`s, `state.last_said()`
the bot's previous sentence alone.

`rotation` is where each response with variants stands in its rotation (SPEC 9): the index
of the variant said last, keyed `NODE:KIND`, for the responses with more than one variant
that were said in this session (`wording.nlg` reads and advances it; a key that was never
said is absent, so a session without variants stores nothing).
"""

# No postponed annotations here: msgspec would compile every field's annotation string when the
# module-level decoders are built, at every start-up.

import functools
from typing import Any

import msgspec

def unstorable_at(text: str) -> int | None:
    """Where `text` first holds a character a session cannot store, or None. A lone surrogate
    (a JSON line may spell one, `\\ud800`) has no UTF-8 form, so saving would fail."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


HISTORY_LIMIT = 6  # turns kept: enough context for an LLM NLG, and a 20-turn Korean session stays under 2 KB


class HistoryEntry(msgspec.Struct, array_like=True, frozen=True):
    """One turn as it happened: what the user said, what the bot said, where, and why."""

    user: str | None
    bot: str | None
    node: str
    reason: str


class PendingConfirmation(msgspec.Struct, array_like=True, frozen=True):
    """A `confirm` slot conflict waiting for the user's yes or no."""

    slot: str
    value: Any  # the new value, stored on affirm
    previous: Any  # the value kept on deny


class ActionRecord(msgspec.Struct, array_like=True, frozen=True):
    """A completed skill run (SPEC 8.4): its action id and result, so that a run with a
    recorded id is not run again."""

    action_id: str  # SESSION:TURN:NODE
    status: str
    data: dict[str, Any] = {}


ACTIONS_KEPT = 8  # completed actions remembered: a turn passes few nodes, and ids never recur later


class DialogueState(msgspec.Struct, frozen=True, omit_defaults=True):
    """Per-session state (SPEC 5). `skill_*` describe the current visit of the current node."""

    session_id: str
    ir_hash: str
    current_node: str
    previous_node: str | None = None
    node_turns: int = 0
    session_turns: int = 0
    no_input_count: int = 0
    not_understood_count: int = 0
    fallback_retries: int = 0
    fallback_exhausted: bool = False
    turn_limit_reached: bool = False
    slots: dict[str, Any] = {}
    pending_confirmation: PendingConfirmation | None = None
    skill_status: str = "none"
    skill_data: dict[str, Any] = {}
    complete: bool = False
    complete_reason: str | None = None
    focus: bool = False  # `--node` mode: routing is reported, never followed
    rotation: dict[str, int] = {}  # "NODE:KIND" -> the variant said last (SPEC 9)
    profile: dict[str, Any] = {}  # validated at start, never changed (SPEC 8.1)
    actions: list[ActionRecord] = []  # completed skill runs, newest last (SPEC 8.4)
    history: list[bytes] = []  # encoded HistoryEntry, oldest first; see entries()
    created_at: float = 0.0
    updated_at: float = 0.0
    version: int = 0

    def entries(self) -> list[HistoryEntry]:
        """The history, decoded, oldest first."""
        decoder = _decoder("msgpack", HistoryEntry)
        return [decoder.decode(raw) for raw in self.history]

    def last_said(self) -> str | None:
        """What the bot said last (None before it spoke, or with no history kept); only that
        field of the entry is decoded (every reply reads it)."""
        return _BOT_DECODER.decode(self.history[-1])[1] if self.history else None


_BOT_DECODER = msgspec.msgpack.Decoder(tuple[msgspec.Raw, str | None, msgspec.Raw, msgspec.Raw])
_MSGPACK_ENCODER = msgspec.msgpack.Encoder()


@functools.cache
def _decoder(kind: str, of: type) -> Any:
    """A decoder made on first use: the first decoder of a Struct reads the annotations of
    every type in it, which a run whose sessions stay in memory never needs."""
    return (msgspec.json if kind == "json" else msgspec.msgpack).Decoder(of)


def encode_state(state: DialogueState) -> bytes:
    """MessagePack bytes of a state."""
    return _MSGPACK_ENCODER.encode(state)


def decode_state(data: bytes) -> DialogueState:
    """A state from `encode_state` bytes (raises `msgspec.DecodeError` on foreign bytes)."""
    state: DialogueState = _decoder("msgpack", DialogueState).decode(data)
    return state


def encode_state_json(state: DialogueState) -> bytes:
    """JSON bytes of a state (for logs and debugging)."""
    return msgspec.json.encode(state)


def decode_state_json(data: bytes | str) -> DialogueState:
    """A state from `encode_state_json` bytes."""
    state: DialogueState = _decoder("json", DialogueState).decode(data)
    return state


def append_history(history: list[bytes], entry: HistoryEntry | tuple[str, str, str, str],
                   limit: int = HISTORY_LIMIT) -> list[bytes]:
    """A new list: the last `limit` entries including `entry` (the old list is not touched).
    `entry` may be the plain tuple (user, bot, node, reason): it encodes to the same bytes."""
    if limit <= 0:
        return []
    raw = _MSGPACK_ENCODER.encode(entry)
    if len(history) >= limit:
        return [*history[len(history) - limit + 1:], raw]
    return [*history, raw]
