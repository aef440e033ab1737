"""The event record of SPEC 16: one per applied turn, one per session start.

In: what the engine returned for a turn (`TurnResult`: its JSON line of SPEC 7 and the
decision's tier and fallback kind), the session's scenario name, IR hash and id, the slots
before the turn, the seconds since the session's previous turn; or a session start. Out: an
`Event` and its JSON bytes (one line of `mgi run --events`, one row or stream entry of a store).
After: no user text is kept unless asked (`keep_unmatched`), and then only for a turn that was
not understood or read below `LOW_CONFIDENCE`, with digits, e-mail addresses and phone numbers
masked (`mask`). Focus-mode turns (a designer trying one node) are not events.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from ..ir import SAFETY_REASON

STARTED = "started"
TURN = "turn"
INLINE = "(inline)"  # the scenario of a session made from a scenario sent in the request
LOW_CONFIDENCE = 0.5  # below it a turn's text is kept with --keep-unmatched (a weak reading)
NO_INPUT, NOT_UNDERSTOOD = "no_input", "not_understood"

# Masking, in this order: an e-mail address before its digits, a phone number before its
# digits, then every remaining digit; what is left says what was said, never who said it.
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"(?<!\d)\+?\d[\d\s().-]{6,}\d(?!\d)")
_DIGIT = re.compile(r"\d")


# gc=False: an event holds only strings, numbers and tuples of strings, so it can be in no
# reference cycle, and a report that decodes a million of them need not have the cyclic
# collector track each one.
class ReportEvent(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """The fields of an event that `mgi report` reads, what it decodes an event into (the
    others of `Event`, unread, are skipped by the decoder without being made into objects).
    `kind` "started" (a session was created; `node` its start node, `turn` 1 when the bot
    opened, else 0) or "turn" (an applied user turn). `idle`: seconds since the session's
    previous event (what `mgi report` needs to tell a session that came back after being
    counted abandoned). `passed`: the (node, reason) hops the turn passed through (SPEC 8.3).
    `text`: the masked words of a not-understood turn, with --keep-unmatched."""

    time: float
    scenario: str
    ir_hash: str
    session_id: str
    kind: str = TURN
    turn: int = 0
    node: str | None = None
    next_node: str | None = None
    reason: str | None = None
    confidence: float | None = None
    fallback: str | None = None
    safety: str | None = None
    complete: bool = False
    passed: tuple[tuple[str, str], ...] = ()
    idle: float = 0.0
    text: str | None = None


class Event(ReportEvent, kw_only=True, omit_defaults=True, gc=False):
    """One event as written: the fields a report reads, and what the turn was decided by
    (`tier`), heard as (`intent`, `act`) and filled (the slots' names)."""

    tier: str | None = None
    intent: str | None = None
    act: str | None = None
    filled: tuple[str, ...] = ()


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Event)


def encode_event(event: Event) -> bytes:
    return _ENCODER.encode(event)


def decode_event(data: bytes | str) -> Event:
    """An event from its JSON (`msgspec.ValidationError` / `DecodeError` when it is not one)."""
    return _DECODER.decode(data)


def mask(text: str) -> str:
    """`text` with e-mail addresses as `<email>`, phone numbers as `<phone>`, digits as `#`."""
    text = _EMAIL.sub("<email>", text)
    text = _PHONE.sub("<phone>", text)
    return _DIGIT.sub("#", text)


def started_event(scenario: str, ir_hash: str, session_id: str, now: float,
                  result: Any) -> Event:
    """The event of a session's creation; `result` is the engine's `start` answer."""
    return Event(time=now, scenario=scenario, ir_hash=ir_hash, session_id=session_id,
                 kind=STARTED, turn=result.turn, node=result.node, next_node=result.next_node,
                 reason=result.reason)


def turn_event(scenario: str, ir_hash: str, session_id: str, now: float, result: Any,
               before: dict[str, Any], idle: float = 0.0, keep_unmatched: bool = False,
               line: dict[str, Any] | None = None) -> Event | None:
    """The event of one applied turn (None for a focus-mode turn). `before`: the session's
    slots before the turn, so `filled` names the slots this turn gave a new value; `line`:
    the turn's JSON line when the caller has made it already."""
    if result.focus:
        return None
    line = line if line is not None else result.json_line()
    nlu = line["nlu"] or {}
    decision = result.decision
    fallback = fallback_kind(decision, nlu)
    confidence = nlu.get("confidence")
    kept = None
    if keep_unmatched and line["user"] and (
            fallback == NOT_UNDERSTOOD
            or (confidence is not None and confidence < LOW_CONFIDENCE)):
        kept = mask(line["user"])
    reason = line["reason"]
    hops = line["passed"]
    return Event(time=now, scenario=scenario, ir_hash=ir_hash, session_id=session_id,
                 turn=line["turn"], node=line["node"], next_node=line["next_node"],
                 reason=reason, tier=decision.tier if decision is not None else None,
                 intent=nlu.get("intent"), act=nlu.get("dialogue_act"),
                 confidence=confidence, fallback=fallback,
                 safety=nlu.get("safety") if reason.startswith(SAFETY_REASON) else None,
                 complete=line["complete"], filled=_filled(before, line["slots"]),
                 passed=tuple([(hop["node"], hop["reason"]) for hop in hops]) if hops else (),
                 idle=round(idle, 3) if idle > 0 else 0.0, text=kept)


def _filled(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, ...]:
    """The slots a turn gave a new value (a loop: every turn's event pays this)."""
    filled = []
    for name, value in after.items():
        if value is not None and before.get(name) != value:
            filled.append(name)
    return tuple(filled)


def fallback_kind(decision: Any, nlu: dict[str, Any]) -> str | None:
    """`no_input` for a silent turn, `not_understood` for one nothing understood (whether it
    re-prompted or its budget was spent), else None."""
    kind = getattr(decision, "fallback", None)
    if kind is not None:
        return kind
    if nlu.get("dialogue_act") == "silence":
        return NO_INPUT
    if nlu and nlu.get("dialogue_act") in (None, "null") and nlu.get("intent") is None:
        return NOT_UNDERSTOOD
    return None
