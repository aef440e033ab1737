"""Session storage with optimistic concurrency.

In: `DialogueState`s to save, each with the version the writer last read. Out: the stored
state and its version on `get`; the new version on `put`.
After: a `put` whose expected version is not the stored one (another writer got there first)
raises `VersionConflict` and changes nothing; versions count up from 1 (0 = no session yet).
The memory store keeps the state objects themselves and hands them out as they are: a
`DialogueState` is frozen and its containers (slots, skill data, history) are read-only by
contract (the router and the engine build new ones, copy-on-write), so nothing is copied or
encoded on the way in or out. The engine is the store's only writer; what it hands its callers
(`Engine.session`, `TurnResult.slots`) are copies, so a caller cannot change a stored session.
A networked store (Redis, a database) keeps `encode_state` bytes; the round trip is a tested
property of every state.
"""

from __future__ import annotations

import threading
from typing import Protocol

import msgspec

from .. import MagoError
from ..state import DialogueState


class VersionConflict(MagoError):
    """The session changed since it was read; reload and retry the turn."""


class SessionStore(Protocol):
    """Where sessions live between turns."""

    def get(self, session_id: str) -> tuple[DialogueState, int] | None:
        """The state and its version, or None if there is no such session."""
        ...

    def put(self, state: DialogueState, expected_version: int) -> int:
        """Save `state` if the stored version is `expected_version` (0: new); the new version."""
        ...


class MemorySessionStore:
    """An in-process store (a dict of frozen states behind a lock)."""

    def __init__(self) -> None:
        self._records: dict[str, tuple[DialogueState, int]] = {}
        self._lock = threading.Lock()

    def get(self, session_id: str) -> tuple[DialogueState, int] | None:
        return self._records.get(session_id)

    def put(self, state: DialogueState, expected_version: int) -> int:
        new_version = expected_version + 1
        if state.version != new_version:
            state = msgspec.structs.replace(state, version=new_version)
        self._lock.acquire()  # not `with`: the context manager doubles the cost of a put
        try:
            record = self._records.get(state.session_id)
            current = record[1] if record is not None else 0
            if current != expected_version:
                raise VersionConflict(
                    f"session {state.session_id} is at version {current}, "
                    f"not {expected_version}; reload it and retry")
            self._records[state.session_id] = (state, new_version)
        finally:
            self._lock.release()
        return new_version

    def delete(self, session_id: str) -> None:
        """Forget a session (no error if it does not exist)."""
        with self._lock:
            self._records.pop(session_id, None)

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._records

    def __len__(self) -> int:
        return len(self._records)

