"""`memory:`: the service's records in this process only (tests, a one-worker trial run).

Nothing survives the process, and a second worker would see other sessions, so `mgi serve`
refuses `--workers` above 1 with it (`multi_process` False).
"""

from __future__ import annotations

import time
from typing import Any

from .records import IRGone, Stored, VersionConflict


class MemoryRecordStore:
    name = "memory"
    multi_process = False

    def __init__(self, ttl: float):
        self.ttl = ttl
        self._records: dict[str, Stored] = {}
        self._blobs: dict[str, bytes] = {}
        self._kept_until: dict[str, float] = {}  # IR blobs put with `keep_for`
        self._ir_of: dict[str, str] = {}  # session -> the inline IR it was created on
        self._users: dict[str, set[str]] = {}  # inline IR -> the sessions created on it
        self.events: list[tuple[str, float, bytes]] = []  # analytics: (session, time, bytes)

    async def get(self, session_id: str) -> Stored | None:
        stored = self._records.get(session_id)
        if stored is not None and stored.expires_at <= time.time():
            del self._records[session_id]
            return None
        return stored

    async def put(self, session_id: str, data: bytes, expected_version: int,
                  now: float, events: tuple[Any, ...] = (), ir_hash: str | None = None) -> int:
        stored = self._records.get(session_id)
        if stored is not None and stored.expires_at <= now:  # expired: as if it were gone
            stored = None
        current = stored.version if stored is not None else 0
        if current != expected_version:
            raise VersionConflict(f"session {session_id} is at version {current}, "
                                  f"not {expected_version}")
        if ir_hash is not None and ir_hash not in self._blobs:
            raise IRGone(f"the store has no IR {ir_hash[:12]}; put it again")
        if expected_version == 0:
            self._forget_user(session_id)
            if ir_hash is not None:
                self._ir_of[session_id] = ir_hash
                self._users.setdefault(ir_hash, set()).add(session_id)
        version = current + 1
        self._records[session_id] = Stored(data, version, now, now + self.ttl)
        self.events.extend((session_id, when, blob) for when, blob in events)
        return version

    async def delete(self, session_id: str) -> bool:
        self.events = [event for event in self.events if event[0] != session_id]
        gone = self._records.pop(session_id, None) is not None
        ir_hash = self._forget_user(session_id)
        if ir_hash is not None and not self._users.get(ir_hash):
            self._users.pop(ir_hash, None)
            self._blobs.pop(ir_hash, None)
            self._kept_until.pop(ir_hash, None)
        return gone

    def _forget_user(self, session_id: str) -> str | None:
        """The inline IR `session_id` was created on, now forgotten as its user, with the
        users of it that expired meanwhile."""
        ir_hash = self._ir_of.pop(session_id, None)
        if ir_hash is None:
            return None
        now = time.time()
        users = self._users.get(ir_hash, set())
        users.discard(session_id)
        for sid in [sid for sid in users if sid not in self._records
                    or self._records[sid].expires_at <= now]:
            users.discard(sid)
            self._ir_of.pop(sid, None)
        return ir_hash

    async def expire_events(self, before: float) -> int:
        kept = [event for event in self.events if event[1] >= before]
        gone, self.events = len(self.events) - len(kept), kept
        return gone

    async def put_ir(self, ir_hash: str, blob: bytes, keep_for: float | None = None) -> None:
        self._blobs.setdefault(ir_hash, blob)
        if keep_for is not None:
            await self.touch_ir(ir_hash, keep_for)

    async def get_ir(self, ir_hash: str) -> bytes | None:
        return self._blobs.get(ir_hash)

    async def touch_ir(self, ir_hash: str, keep_for: float) -> None:
        until = time.time() + keep_for
        self._kept_until[ir_hash] = max(until, self._kept_until.get(ir_hash, until))

    async def expire_irs(self, now: float) -> int:
        gone = [h for h, until in self._kept_until.items() if until <= now]
        for ir_hash in gone:
            del self._kept_until[ir_hash]
            self._blobs.pop(ir_hash, None)
        return len(gone)

    async def ping(self) -> None:
        return None

    async def writable(self) -> None:
        return None

    async def count(self) -> int:
        return len(self._records)

    async def sweep(self, now: float) -> int:
        expired = [sid for sid, stored in self._records.items() if stored.expires_at <= now]
        for sid in expired:
            del self._records[sid]
        return len(expired)

    async def close(self) -> None:
        self._records.clear()
