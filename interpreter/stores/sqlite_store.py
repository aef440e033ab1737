"""`sqlite:PATH`: the service's records in one SQLite file, shared by the workers of one host.

In: `sqlite:PATH` or `sqlite:PATH?synchronous=full` (`normal` is the default) and the session
TTL; then the `RecordStore` calls of `records`. Out: `Stored` records, new versions, IR blobs.
After: the file holds two tables, `sessions(id, version, data, updated_at, expires_at)` with an
index on `expires_at`, and `ir_blobs(hash, blob)`; opening makes them if they are missing
(several processes may open one file at once). A `put` reads the version, compares and writes
inside `BEGIN IMMEDIATE`, so of two writers with the same expected version one wins and the
other gets `VersionConflict` with nothing changed, whichever processes they run in. A row past
its `expires_at` is gone for `get` and `put` (a create over it succeeds), and `sweep` deletes
it. Any other failure of SQLite (a missing folder, a full disk, an I/O error, a corrupt file)
is a `StoreError` of one line.

Speed: each call runs its statements at once on the calling thread, the event loop's, with a
connection that never waits for a lock (busy timeout 0): a turn's get and put cost tens of
microseconds, less than a hop to a thread would. When another process holds the write lock
(SQLite says "database is locked"), the same call is done again in a worker thread
(`asyncio.to_thread`) on that thread's own connection, which waits up to `BUSY_SECONDS` for
the lock, so a busy file slows that turn and never blocks the event loop. For the same
reason that connection never checkpoints the WAL itself (SQLite's automatic checkpoint syncs
the file to the disk, milliseconds on the committing thread): every `CHECKPOINT_EVERY` writes a
worker thread checkpoints instead, passively (writers go on meanwhile; the WAL starts over at
the first write after a checkpoint that caught up). Under a load that never pauses no passive
checkpoint catches up, so once the WAL holds `RESTART_FRAMES` pages the thread checkpoints in
RESTART mode, which holds the write lock (writers wait on the thread path) and starts it over.

Durability: the file is in WAL mode. With `synchronous=normal` a commit is in the WAL file,
in the operating system's hands, before `put` returns: a killed server (SIGKILL, a crash)
loses no acknowledged put, but a power loss or a kernel crash may lose the last commits before
the next checkpoint (the file stays consistent). `synchronous=full` syncs the WAL to the disk
on every commit, so acknowledged puts survive a power loss too, for a millisecond or more per
put on most disks. The file must be on a local disk: WAL needs shared memory between the
processes, which network file systems do not give.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from urllib.parse import parse_qsl

from .records import Stored, StoreError, StoreURLError, VersionConflict

BUSY_SECONDS = 5.0  # how long the thread path waits for another process's write lock
SETUP_SECONDS = 10.0  # how long opening retries a file that other processes are setting up
CHECKPOINT_EVERY = 500  # writes on the event loop's connection between two WAL checkpoints
RESTART_FRAMES = 4096  # pages in the WAL (16 MB of 4 KB pages) that make a checkpoint block
SYNCHRONOUS = ("normal", "full")
BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
    "data BLOB NOT NULL, updated_at REAL NOT NULL, expires_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS sessions_expires_at ON sessions (expires_at)",
    "CREATE TABLE IF NOT EXISTS ir_blobs (hash TEXT PRIMARY KEY, blob BLOB NOT NULL)",
)
GET = ("SELECT data, version, updated_at, expires_at FROM sessions "
       "WHERE id = ? AND expires_at > ?")
READ_VERSION = "SELECT version, expires_at FROM sessions WHERE id = ?"
INSERT = ("INSERT INTO sessions (id, version, data, updated_at, expires_at) "
          "VALUES (?, ?, ?, ?, ?)")
UPDATE = "UPDATE sessions SET version = ?, data = ?, updated_at = ?, expires_at = ? WHERE id = ?"
DELETE = "DELETE FROM sessions WHERE id = ?"
SWEEP = "DELETE FROM sessions WHERE expires_at <= ?"
PUT_IR = "INSERT OR IGNORE INTO ir_blobs (hash, blob) VALUES (?, ?)"
GET_IR = "SELECT blob FROM ir_blobs WHERE hash = ?"


def parse_url(url: str) -> tuple[str, str]:
    """`sqlite:PATH[?synchronous=normal|full]` -> (path, synchronous)."""
    path, _, query = url.removeprefix("sqlite:").partition("?")
    if not path:
        raise StoreURLError("sqlite: needs a file, e.g. --store sqlite:mago-sessions.db")
    options = dict(parse_qsl(query, keep_blank_values=True))
    synchronous = options.pop("synchronous", "normal").lower()
    if options:
        raise StoreURLError(f"unknown sqlite store option {sorted(options)[0]!r}; the only "
                            "one is ?synchronous=normal or ?synchronous=full")
    if synchronous not in SYNCHRONOUS:
        raise StoreURLError(f"sqlite store option synchronous={synchronous!r}: write "
                            "?synchronous=normal or ?synchronous=full")
    return path, synchronous


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused because another connection holds a lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in BUSY_CODES
    text = str(exc)
    return "locked" in text or "busy" in text


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def run_put(conn: sqlite3.Connection, session_id: str, data: bytes, expected: int,
            now: float, expires_at: float) -> int:
    """The compare-and-set: the new version, or `VersionConflict` with nothing written."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(READ_VERSION, (session_id,)).fetchone()
        current = row[0] if row is not None and row[1] > time.time() else 0
        if current != expected:
            raise VersionConflict(f"session {session_id} is at version {current}, "
                                  f"not {expected}; reload it and retry")
        if row is None:
            conn.execute(INSERT, (session_id, expected + 1, data, now, expires_at))
        else:
            conn.execute(UPDATE, (expected + 1, data, now, expires_at, session_id))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return expected + 1


def rollback(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the transaction is gone with the failure that ended it


def run_get(conn: sqlite3.Connection, session_id: str) -> tuple | None:
    return conn.execute(GET, (session_id, time.time())).fetchone()


def run_changes(conn: sqlite3.Connection, sql: str, args: tuple) -> int:
    return conn.execute(sql, args).rowcount


def run_fetch(conn: sqlite3.Connection, sql: str, args: tuple) -> tuple | None:
    return conn.execute(sql, args).fetchone()


class SQLiteRecordStore:
    name = "sqlite"
    multi_process = True

    def __init__(self, path: str, ttl: float, synchronous: str = "normal"):
        if synchronous not in SYNCHRONOUS:
            raise StoreURLError(f"synchronous must be one of {SYNCHRONOUS}, not {synchronous!r}")
        self.path, self.ttl, self.synchronous = path, ttl, synchronous
        self._local = threading.local()
        self._lock = threading.Lock()
        self._thread_connections: list[sqlite3.Connection] = []
        self._closed = False
        self._writes = 0
        self._checkpointing = False  # set on the event loop, cleared by the worker thread
        self._restarting = False  # a blocking checkpoint waits for the write lock
        try:
            self._set_up()
            self._fast = self._connect(0)
            self._fast.execute("PRAGMA wal_autocheckpoint=0")
        except sqlite3.Error as exc:
            raise StoreError(self._open_failure(exc)) from None

    @classmethod
    def from_url(cls, url: str, ttl: float) -> SQLiteRecordStore:
        path, synchronous = parse_url(url)
        return cls(path, ttl, synchronous)

    def _connect(self, busy_seconds: float) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=busy_seconds, isolation_level=None,
                               check_same_thread=False, cached_statements=32)
        try:
            conn.execute(f"PRAGMA synchronous={self.synchronous.upper()}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_up(self) -> None:
        """WAL mode and the tables, retried while other processes set up the same file."""
        deadline = time.monotonic() + SETUP_SECONDS
        while True:
            conn = self._connect(BUSY_SECONDS)
            try:
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise StoreError(f"cannot open sqlite store {self.path}: it cannot use "
                                     f"WAL (journal mode {mode}); put it in a file on a "
                                     "local disk")
                for sql in SCHEMA:
                    conn.execute(sql)
                return
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or time.monotonic() > deadline:
                    raise
            finally:
                conn.close()
            time.sleep(0.05)

    def _open_failure(self, exc: sqlite3.Error) -> str:
        folder = os.path.dirname(os.path.abspath(self.path))
        hint = "" if os.path.isdir(folder) else f" (no folder {folder}: create it first)"
        return f"cannot open sqlite store {self.path}: {one_line(exc)}{hint}"

    def _thread_connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            with self._lock:
                if self._closed:
                    raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
                conn = self._connect(BUSY_SECONDS)
                self._thread_connections.append(conn)
            self._local.conn = conn
        return conn

    def _in_thread(self, run, args: tuple):
        return run(self._thread_connection(), *args)

    async def _call(self, run, args: tuple, doing: str):
        """`run(connection, *args)` on the event loop's connection; when the file is busy,
        again in a worker thread that waits for the lock."""
        if doing == "write":
            self._count_write()
        if not (self._restarting and doing == "write"):
            try:
                return run(self._fast, *args)
            except sqlite3.Error as exc:
                if not (isinstance(exc, sqlite3.OperationalError) and is_busy(exc)):
                    raise self._failure(doing, exc) from None
        try:
            return await asyncio.to_thread(self._in_thread, run, args)
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
                raise StoreError(f"the session store {self.path} stayed locked for "
                                 f"{BUSY_SECONDS:g} s by another process; try again") from None
            raise self._failure(doing, exc) from None

    def _count_write(self) -> None:
        """Start a checkpoint in a worker thread every `CHECKPOINT_EVERY` writes."""
        self._writes += 1
        if self._writes >= CHECKPOINT_EVERY and not self._checkpointing:
            self._writes = 0
            self._checkpointing = True
            asyncio.get_running_loop().run_in_executor(None, self._run_checkpoint)

    def _run_checkpoint(self) -> None:
        """A passive checkpoint; a blocking one when the WAL has grown past `RESTART_FRAMES`,
        with this process's writers on the thread path meanwhile (the event loop's connection
        takes the lock between two polls of the checkpoint's busy handler, every time)."""
        try:
            conn = self._thread_connection()
            frames = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
            if frames > RESTART_FRAMES:
                self._restarting = True
                conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
        except sqlite3.Error:
            pass  # a failed checkpoint (the file busy too long, closed) is redone next time
        finally:
            self._restarting = self._checkpointing = False

    def _failure(self, doing: str, exc: sqlite3.Error) -> StoreError:
        return StoreError(f"cannot {doing} the session store {self.path}: {one_line(exc)}")

    async def get(self, session_id: str) -> Stored | None:
        row = await self._call(run_get, (session_id,), "read")
        return None if row is None else Stored._make(row)

    async def put(self, session_id: str, data: bytes, expected_version: int,
                  now: float) -> int:
        args = (session_id, data, expected_version, now, now + self.ttl)
        return await self._call(run_put, args, "write")

    async def delete(self, session_id: str) -> bool:
        return await self._call(run_changes, (DELETE, (session_id,)), "write") > 0

    async def put_ir(self, ir_hash: str, blob: bytes) -> None:
        await self._call(run_changes, (PUT_IR, (ir_hash, blob)), "write")

    async def get_ir(self, ir_hash: str) -> bytes | None:
        row = await self._call(run_fetch, (GET_IR, (ir_hash,)), "read")
        return None if row is None else row[0]

    async def ping(self) -> None:
        await self._call(run_fetch, ("SELECT 1", ()), "read")

    async def sweep(self, now: float) -> int:
        return await self._call(run_changes, (SWEEP, (now,)), "write")

    async def close(self) -> None:
        deadline = time.monotonic() + 2 * BUSY_SECONDS
        while self._checkpointing and time.monotonic() < deadline:
            await asyncio.sleep(0.005)  # let a checkpoint under way end before closing
        with self._lock:
            self._closed = True
            connections, self._thread_connections = self._thread_connections, []
        for conn in [self._fast, *connections]:
            conn.close()
