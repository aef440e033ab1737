"""The API's types (SPEC 11): every request body and answer as a msgspec Struct.

In: request bodies (JSON bytes). Out: validated Structs, or `invalid_request` with msgspec's
one line (unknown field, wrong type, bad session id); the same types give the OpenAPI
document (`openapi`), so validation and documentation cannot disagree.
After: a decoded request holds only declared fields of the declared types; the engine's own
checks (a turn's `nlu` object, a focus node) come later and answer with their own codes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

# `(?![\s\S])`, not `$`: `$` also matches before a final newline ("abc\n"), in Python and
# in JavaScript alike; the lookahead means "the end of the text" in both.
SESSION_ID_PATTERN = "^[A-Za-z0-9_.:-]{1,128}(?![\\s\\S])"
SessionId = Annotated[str, Meta(pattern=SESSION_ID_PATTERN, min_length=1, max_length=128,
                                description="1-128 of [A-Za-z0-9_.:-]")]
MessageId = Annotated[str, Meta(min_length=1, max_length=128,
                                description="the client's id of this message (idempotency)")]

BODY_LIMIT = 64 * 1024  # every endpoint but the two that take a scenario
SCENARIO_BODY_LIMIT = 2 * 1024 * 1024
TEXT_LIMIT = 64 * 1024  # bytes of `text` in UTF-8
MESSAGES_REMEMBERED = 32  # message ids a session answers again without running anything


# --- requests -------------------------------------------------------------------------------

class _StartOptions(Struct, forbid_unknown_fields=True, kw_only=True):
    session_id: SessionId | None = None
    bot_first: bool | None = None
    focus_node: str | None = None
    profile: dict[str, Any] | None = None


class CreateSession(_StartOptions, kw_only=True):
    """POST /dm/v1/session: a session of a registered scenario."""

    scenario: str


class CreateFromScenario(_StartOptions, kw_only=True):
    """POST /dm/v1/session/json: a session of a scenario sent in the request (one of
    `scenario_json`, the object, or `scenario_text`, its file text)."""

    scenario_json: dict[str, Any] | None = None
    scenario_text: str | None = None


class ValidateScenario(Struct, forbid_unknown_fields=True, kw_only=True):
    """POST /dm/v1/session/validate: the diagnostics of a scenario (the same two sources)."""

    scenario_json: dict[str, Any] | None = None
    scenario_text: str | None = None


class Message(Struct, forbid_unknown_fields=True, kw_only=True):
    """POST /dm/v1/message: one user turn."""

    session_id: SessionId
    text: str
    nlu: dict[str, Any] | None = None
    message_id: MessageId | None = None
    trace: bool = False  # SPEC 12: add the turn's trace to the answer (`Trace`)


# --- answers --------------------------------------------------------------------------------

class TurnLine(Struct, kw_only=True):
    """A turn as a JSON line of SPEC 7 (`mgi run --json`)."""

    turn: int
    user: str | None
    node: str
    next_node: str | None
    reason: str
    complete: bool
    response: str | None
    slots: dict[str, Any]
    nlu: dict[str, Any] | None
    dropped: list[dict[str, Any]] | None = None
    passed: list[PassedNode] | None = None


class PassedNode(Struct, kw_only=True):
    """A node a turn went through without waiting (SPEC 8.3), and why it was left."""

    node: str
    reason: str


class Evaluated(Struct, kw_only=True):
    """One transition routing looked at: its source-map label, its condition as written,
    the facts it read and what it gave (null: skipped, it targets the current node)."""

    rule: str
    condition: str | None  # null: unconditional
    target: str  # the node it leads to (the current node for a stay)
    values: dict[str, Any]  # field name -> the value read (enums by name)
    result: bool | None


class SlotChange(Struct, kw_only=True):
    slot: str
    value: Any
    change: Literal["stored", "confirm"]  # confirm: a confirmation was asked this turn


class Trace(Struct, kw_only=True):
    """SPEC 12: what `mgi run --output-level detailed` prints of a turn, as data."""

    nlu_source: str | None  # which NLU read the turn; null for silence (nobody was asked)
    evaluated: list[Evaluated]
    slot_updates: list[SlotChange]
    dropped: list[dict[str, Any]]  # as the turn line's `dropped`
    passed: list[PassedNode]
    tier: str  # the routing tier that fired (safety, fallback, global, gate, next_nodes, ...)
    notes: list[str]  # how the NLU result was read (corrections)
    lines: list[str]  # the detailed level's lines, as `mgi run` prints them
    confidence: float | None = None  # SPEC 13.2: the NLU's confidence; null for silence
    candidates: list[dict[str, Any]] = []  # [{intent, score}], best first, up to 3
    intent_note: str | None = None  # "ambiguous" or "below threshold" when no intent won


class SessionCreated(Struct, kw_only=True):
    session_id: str
    scenario: str
    ir_hash: str
    version: int
    turn: TurnLine | None


class MessageAnswer(Struct, kw_only=True):
    session_id: str
    version: int
    replayed: bool
    turn: TurnLine
    trace: Trace | None = None  # asked with `trace: true` (a replay: the one first recorded)


class HistoryItem(Struct, kw_only=True):
    user: str | None
    bot: str | None
    node: str
    reason: str


class SessionView(Struct, kw_only=True):
    session_id: str
    scenario: str
    ir_hash: str
    current_node: str
    complete: bool
    complete_reason: str | None
    slots: dict[str, Any]
    history: list[HistoryItem]
    version: int
    updated_at: str  # RFC 3339, UTC
    expires_at: str


class ScenarioInfo(Struct, kw_only=True):
    name: str
    ir_hash: str
    nodes: int
    end_nodes: int


class Diagnostic(Struct, kw_only=True):
    """As `mgc check --format json` prints it."""

    code: str
    severity: Literal["error", "warning"]
    message: str
    path: str
    line: int | None
    column: int | None
    hint: str | None


class Validation(Struct, kw_only=True):
    diagnostics: list[Diagnostic]
    errors: int
    warnings: int


class Health(Struct, kw_only=True):
    status: Literal["ok", "unavailable"]
    store: str


class ErrorDetail(Struct, kw_only=True, omit_defaults=True):
    code: str
    message: str
    diagnostics: list[Diagnostic] | None = None


class ErrorEnvelope(Struct, kw_only=True):
    error: ErrorDetail


ERROR_CODES = ("invalid_request", "invalid_profile", "unknown_node", "unknown_scenario",
               "session_exists", "scenario_invalid", "dynamic_disabled", "unknown_session",
               "session_complete", "message_id_reused", "too_large", "unauthorized",
               "not_found", "method_not_allowed", "store_unavailable", "internal_error",
               # SPEC 11.1: limits and defences
               "headers_too_large", "timeout", "busy", "too_costly", "rate_limited",
               "store_full", "unsupported_media_type", "misdirected_request")


_DECODERS: dict[type, msgspec.json.Decoder] = {}


def decode(body: bytes, kind: type) -> Any:
    """A request Struct from JSON bytes (`msgspec.ValidationError` / `DecodeError`)."""
    decoder = _DECODERS.get(kind)
    if decoder is None:
        decoder = _DECODERS[kind] = msgspec.json.Decoder(kind)
    return decoder.decode(body)
