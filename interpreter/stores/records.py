"""The service's session stores: records of bytes with a version check, and IR blobs by hash.

In: a store URL (`sqlite:PATH`, `redis://HOST:PORT/DB`, `memory:`) and the session TTL; then
`get` / `put` / `delete` of one session's record bytes, and `put_ir` / `get_ir` / `touch_ir`
/ `expire_irs` of the IR files sessions run on. Out: `Stored` (the bytes, their version and times) or None.
After: a `put` whose expected version is not the stored one raises `VersionConflict` and
changes nothing (0 expects no session: a second create conflicts); a record untouched for
the TTL is gone (`get` never returns an expired one); an IR blob, once put, stays while it
is kept (`keep_for` seconds from its last put or touch, refreshed by the turns that use it:
live sessions keep running on it after a redeploy), then it is removed (SPEC 11.1, 17.7: an
inline scenario no live session uses does not stay in the store); put with no `keep_for`, it
stays for good.

The service encodes the record (the `DialogueState` and what it remembers about messages);
the stores only keep bytes, so every store holds the same thing and a record written by one
worker is read by any other. The engine itself still talks to the `SessionStore` protocol of
`sessions`: the service hands it the record it read, as a one-session store, and saves what the
engine put through one of these. Each concrete store lives in its own module and is imported
only when its URL is opened, so `memory:` never loads sqlite3 and nothing here loads redis.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from .. import MagoError
from . import DEFAULT_STORE, DEFAULT_TTL
from .sessions import VersionConflict

DEFAULT_TIMEOUT = 2.0  # `mgi serve --store-timeout`

__all__ = ["IRGone", "RecordStore", "Stored", "StoreError", "StoreURLError", "VersionConflict",
           "open_store", "DEFAULT_STORE", "DEFAULT_TTL"]



class StoreError(MagoError):
    """The store did not answer (down, locked too long, disk full): one line, no secret."""


class IRGone(MagoError):
    """A new session names an inline IR the store no longer has (its last live session was
    deleted meanwhile): put the blob again, then create the session again."""


class StoreURLError(ValueError, MagoError):
    """A `--store` value that names no store."""


class Stored(NamedTuple):
    """One session's record as stored."""

    data: bytes
    version: int
    updated_at: float  # seconds since the epoch, when it was last put
    expires_at: float  # updated_at + the TTL


class RecordStore(Protocol):
    """Where the service keeps sessions. Every method may raise `StoreError`."""

    name: str  # "memory", "sqlite" or "redis", for logs and metrics
    multi_process: bool  # whether several worker processes may share it

    async def get(self, session_id: str) -> Stored | None: ...

    async def put(self, session_id: str, data: bytes, expected_version: int,
                  now: float, events: tuple[Any, ...] = (), ir_hash: str | None = None) -> int:
        """Store `data` as version `expected_version + 1` if the stored version is
        `expected_version` (0: no session yet), else `VersionConflict`; the new version.
        `events`: `(time, bytes)` analytics events (SPEC 16) written with it, in the same
        transaction or script, or not at all. `ir_hash` (creations only): the inline IR
        the new session runs on, recorded with it, so that `delete` of its last live
        session removes the blob too (SPEC 11.1); `IRGone` when the blob is not there."""
        ...

    async def delete(self, session_id: str) -> bool:
        """Remove a session and its analytics events, and the inline IR it was created on
        (`put`'s `ir_hash`) when no other live session runs on it; whether there was one."""
        ...

    async def expire_events(self, before: float) -> int:
        """Remove the events older than `before` (`--events-days`); how many."""
        ...

    async def put_ir(self, ir_hash: str, blob: bytes, keep_for: float | None = None) -> None:
        """Keep `blob` under `ir_hash` (the first blob of a hash stays) for at least
        `keep_for` seconds from now (None: for good)."""
        ...

    async def get_ir(self, ir_hash: str) -> bytes | None: ...

    async def touch_ir(self, ir_hash: str, keep_for: float) -> None:
        """A session uses this IR: keep it at least `keep_for` seconds from now."""
        ...

    async def expire_irs(self, now: float) -> int:
        """Remove the IR blobs kept until before `now`; how many (Redis: 0, its keys
        expire by themselves)."""
        ...

    async def ping(self) -> None:
        """Return when the store answers, else `StoreError`."""
        ...

    async def writable(self) -> None:
        """Return when the store can take a write now (SPEC 11.1: `/readyz`), else
        `StoreError`: a full disk, a read-only or replaced file, an unreachable server."""
        ...

    async def count(self) -> int:
        """How many sessions the store holds (`--max-sessions`; Redis: within 1%)."""
        ...

    async def sweep(self, now: float) -> int:
        """Remove expired sessions; how many (a store whose keys expire by themselves: 0)."""
        ...

    async def close(self) -> None: ...


def open_store(url: str, ttl: float = DEFAULT_TTL, timeout: float = DEFAULT_TIMEOUT
               ) -> RecordStore:
    """The store a `--store` URL names (`StoreURLError` with what to write instead);
    `timeout`: how long a call to a store server may take before it is a `StoreError`."""
    if ttl <= 0:
        raise StoreURLError(f"--session-ttl must be a positive number of seconds, not {ttl}")
    if url == "memory:":
        from .memory_store import MemoryRecordStore

        return MemoryRecordStore(ttl)
    if url.startswith("sqlite:"):
        from .sqlite_store import SQLiteRecordStore

        return SQLiteRecordStore.from_url(url, ttl)
    if url.startswith(("redis://", "rediss://", "unix://")):
        from .redis_store import RedisRecordStore

        return RedisRecordStore.from_url(url, ttl, timeout)
    raise StoreURLError(f"unknown store {url!r}; use sqlite:PATH, redis://HOST:PORT/DB "
                        "or memory:")
