"""`memory:`: the service's records in this process only (tests, a one-worker trial run).

Nothing survives the process, and a second worker would see other sessions, so `mgi serve`
refuses `--workers` above 1 with it (`multi_process` False).
"""

from __future__ import annotations

import time
from typing import Any

from .records import Stored, VersionConflict


class MemoryRecordStore:
    name = "memory"
    multi_process = False

    def __init__(self, ttl: float):
        self.ttl = ttl
        self._records: dict[str, Stored] = {}
        self._blobs: dict[str, bytes] = {}
        self._kept_until: dict[str, float] = {}  # IR blobs put with `keep_for`
        self.events: list[tuple[str, float, bytes]] = []  # analytics: (session, time, bytes)

    async def get(self, session_id: str) -> Stored | None:
        stored = self._records.get(session_id)
        if stored is not None and stored.expires_at <= time.time():
            del self._records[session_id]
            return None
        return stored

    async def put(self, session_id: str, data: bytes, expected_version: int,
                  now: float, events: tuple[Any, ...] = ()) -> int:
        stored = self._records.get(session_id)
        if stored is not None and stored.expires_at <= now:  # expired: as if it were gone
            stored = None
        current = stored.version if stored is not None else 0
        if current != expected_version:
            raise VersionConflict(f"session {session_id} is at version {current}, "
                                  f"not {expected_version}")
        version = current + 1
        self._records[session_id] = Stored(data, version, now, now + self.ttl)
        self.events.extend((session_id, when, blob) for when, blob in events)
        return version

    async def delete(self, session_id: str) -> bool:
        self.events = [event for event in self.events if event[0] != session_id]
        return self._records.pop(session_id, None) is not None

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
