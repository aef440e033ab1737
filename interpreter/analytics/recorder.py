"""The service's events (SPEC 16, 17.10): what `mgi serve` stores with each session save.

In: a session's creation or an applied turn, as `service.sessions` sees it (the scenario
name, whether it came inline, the engine's answer, the state before, the time of the save).
Out: the `(time, bytes)` events the store writes in the same transaction or script as the
session's record (`RecordStore.put(..., events)`), so a put that loses a version race writes
none and an acknowledged turn has its event.
"""

from __future__ import annotations

from typing import Any

from .events import INLINE, encode_event, started_event, turn_event

DEFAULT_DAYS = 30


class Recorder:
    def __init__(self, keep_unmatched: bool = False):
        self.keep_unmatched = keep_unmatched

    def started(self, scenario: str, inline: bool, ir_hash: str, session_id: str,
                result: Any, now: float) -> tuple[tuple[float, bytes], ...]:
        if result.focus:
            return ()
        event = started_event(INLINE if inline else scenario, ir_hash, session_id, now, result)
        return ((now, encode_event(event)),)

    def turn(self, scenario: str, inline: bool, before: Any, result: Any, now: float,
             previous: float, line: dict | None = None) -> tuple[tuple[float, bytes], ...]:
        """`before`: the state the turn was applied to; `previous`: when it was saved;
        `line`: the turn's JSON line, as answered."""
        event = turn_event(INLINE if inline else scenario, before.ir_hash, before.session_id,
                           now, result, before.slots, now - previous, self.keep_unmatched,
                           line)
        return () if event is None else ((now, encode_event(event)),)
