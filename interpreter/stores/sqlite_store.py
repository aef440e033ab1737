"""`sqlite:PATH`: the service's records in one SQLite file, shared by the workers of one host.

In: `sqlite:PATH` or `sqlite:PATH?synchronous=full` (`normal` is the default) and the session
TTL; then the `RecordStore` calls of `records`. Out: `Stored` records, new versions, IR blobs.
After: the file holds the tables `sessions(id, version, data, updated_at, expires_at,
ir_hash)` (`ir_hash`: the inline IR a session was created on, for `delete`, see
`sqlite_runs`) and
`ir_blobs(hash, blob)` with `ir_kept(hash, until)` (how long a blob put or touched with
`keep_for` stays: `expire_irs` removes it after; a blob without a row stays for good), and
for analytics (SPEC 16) `events(id, session_id, time, data)`
(written in the same transaction as the put that carries them) and
`events_deleted(session_id, upto)`; opening makes them if they are missing (several
processes may open one file at once). A put is a compare-and-set in one statement (`UPDATE
... WHERE version = expected`, or an insert that only takes over an expired row): SQLite takes the write lock as a
writing statement starts, so of two writers with the same expected version one wins and the
other gets `VersionConflict` with nothing changed, whichever processes they run in. A row past
its `expires_at` is gone for `get` and `put` (a create over it succeeds), and `sweep` deletes
it (a scan, in a worker thread: an index on `expires_at` would be one more page written by
every put). Any other failure of SQLite (a missing folder, a full disk, an I/O error, a
corrupt file) is a `StoreError` of one line. `SQLiteSessionStore` at the end is the engine's
own `SessionStore` on the same table, for programs that run the engine in process.

Speed: each call runs at once on the calling thread, the event loop's, with a connection that
never waits for a lock (busy timeout 0): a turn's get and put cost tens of microseconds, less
than a hop to a thread would. Under load, puts share commits (group commit): a put that
comes in a turn of the event loop in which another put already committed joins a batch that
the next turn writes as one `BEGIN IMMEDIATE` transaction, one write of the WAL for all of
them, each still with its own version check; a put alone never waits. When another process
holds the write lock (SQLite says "database is locked"), the same call or batch is done again
in a worker thread (`asyncio.to_thread`) on that thread's own connection, which waits up to
`BUSY_SECONDS` for the lock, so a busy file slows that turn and never blocks the event loop.
For the same reason that connection never checkpoints the WAL itself (SQLite's automatic
checkpoint syncs the file to the disk, milliseconds on the committing thread): every
`CHECKPOINT_EVERY` writes a worker thread checkpoints instead, passively (writers go on
meanwhile; the WAL starts over at the first write after a checkpoint that caught up). Under
a load that never pauses no passive checkpoint catches up, so once the WAL holds
`RESTART_FRAMES` pages the thread checkpoints in RESTART mode, which holds the write lock
(writers wait on the thread path) and starts the WAL over from its beginning: the file keeps
its size and its blocks are written again. Only a WAL file over `WAL_LIMIT` (big records)
is truncated (TRUNCATE): a WAL truncated at every restart grows again block by block, which
made every put dearer (measured: 12,000 puts with events 15-30% slower).

Faults (SPEC 11.1): a file deleted or replaced under the server (its device and inode differ
from those opened, checked at most once a second) fails every write with a `StoreError`
(503) instead of writing to a file nobody will open again; `writable` (`/readyz`) also tries
a one-row write, so a full disk or a read-only file is 503 there; a database, WAL or
shared-memory file that cannot be written is refused at open (SQLite would map the last one
and die of a bus error); checkpoints also come every `CHECKPOINT_BYTES` of records written,
and at the first write a second after 1 MiB of them, so the WAL they grew is cut back
to empty (TRUNCATE) or to `WAL_LIMIT` (`journal_size_limit`) and never stays big (the
finding: 64 KiB messages grew it to 1.1 GB, never given back).

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

from ..state import DialogueState, decode_state, encode_state
from .records import (DEFAULT_TTL, IRGone, Stored, StoreError, StoreURLError,
                      VersionConflict)
from .sqlite_runs import (
    run_delete, run_expire_irs, run_expiry, run_get, run_put, run_put_ir, run_puts,
    run_changes, run_fetch)
from .sqlite_sql import (
    SCHEMA, HEALTH, SWEEP, COUNT, GET_IR, KEEP_IR, SESSION_COLUMNS, ADD_IR_COLUMN, IR_INDEX)

BUSY_SECONDS = 5.0  # how long the thread path waits for another process's write lock
SETUP_SECONDS = 10.0  # how long opening retries a file that other processes are setting up
CHECKPOINT_EVERY = 500  # writes on the event loop's connection between two WAL checkpoints
RESTART_FRAMES = 2048  # pages in the WAL (8 MB of 4 KB pages) that make a checkpoint block
BLOCKING_SECONDS = 0.2  # how long a blocking checkpoint, holding the write lock, waits for
# readers (another process's `mgi report`) before it gives up until the next one
CHECKPOINT_BYTES = 16 << 20  # ... or this many bytes of records written, whichever is first
WAL_LIMIT = 16 << 20  # a WAL that a checkpoint started over is cut back to this size
# (as much as CHECKPOINT_BYTES: small records never reach it, big ones give it back)
CUT_BYTES = 1 << 20  # records written since the last checkpoint that call for one ...
CUT_SECONDS = 1.0  # ... this late, which cuts the WAL back if it is over WAL_LIMIT
IDENTITY_SECONDS = 1.0  # how often a write checks that the file is still the one opened
SYNCHRONOUS = ("normal", "full")
BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

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


def file_identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`, None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def wal_size(path: str) -> int:
    try:
        return os.path.getsize(path + "-wal")
    except OSError:
        return 0


def check_files_writable(path: str) -> None:
    """The database and its WAL and shared-memory files, those that exist, can be written:
    SQLite maps the shared-memory file, and one it cannot write (immutable, a read-only
    mount) kills the process with a bus error instead of an error."""
    for name in (path, path + "-wal", path + "-shm"):
        # access() is false for a file that is gone, and another process's last connection
        # removes the -wal and -shm files as it closes: ask again after seeing it there
        if not os.access(name, os.W_OK) and os.path.exists(name) and not os.access(name, os.W_OK):
            raise sqlite3.OperationalError(f"{name} is read-only (or immutable); make it "
                                           "writable")


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused because another connection holds a lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in BUSY_CODES
    text = str(exc)
    return "locked" in text or "busy" in text


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def add_column(conn: sqlite3.Connection) -> None:
    try:
        conn.execute(ADD_IR_COLUMN)
    except sqlite3.OperationalError as exc:
        if "duplicate column" not in str(exc):  # another process added it first
            raise


def _settle(batch: list, outcomes: list) -> None:
    for (_, done), outcome in zip(batch, outcomes):
        if not done.done():  # a caller that stopped waiting: its turn is stored, unanswered
            done.set_result(outcome)


def _fail(batch: list, error: Exception) -> None:
    for _, done in batch:
        if not done.done():
            done.set_exception(error)


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
        self._batch: list[tuple[tuple, asyncio.Future]] = []  # puts the next commit writes
        self._committed_this_turn = False  # a put committed in this turn of the event loop
        self._crowded = False  # the last batch held more than one put: every put joins one
        self._written = 0  # bytes of records put since the last checkpoint
        self._cut_at = 0.0  # after big writes: when one more checkpoint cuts the WAL back
        self._identity: tuple[int, int] | None = None  # the file's device and inode
        self._checked_at = 0.0
        try:
            check_files_writable(path)  # an immutable -shm file would be a bus error
            self._set_up()
            self._identity = file_identity(path)
            self._checked_at = time.monotonic()
            # opened waiting for locks (another process may be setting the file up now),
            # then never waiting again: the event loop's connection
            self._fast = self._connect(BUSY_SECONDS)
            self._fast.execute("PRAGMA wal_autocheckpoint=0")
            self._fast.execute("PRAGMA busy_timeout=0")
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
            conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT}")
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
                columns = [row[1] for row in conn.execute(SESSION_COLUMNS)]
                if "ir_hash" not in columns:  # a file made before it
                    add_column(conn)
                conn.execute(IR_INDEX)
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

    def _check_identity(self) -> None:
        """SPEC 11.1: a file deleted or replaced under the server takes no more writes (they
        would go to a file nobody will open again); checked at most once a second."""
        now = time.monotonic()
        if now - self._checked_at < IDENTITY_SECONDS:
            return
        self._checked_at = now
        if file_identity(self.path) != self._identity:
            self._checked_at = 0.0  # checked again next time: the file stays lost
            raise StoreError(f"the session store file {self.path} was deleted or replaced "
                             "while serving; restore it and restart the server")

    async def _call(self, run, args: tuple, doing: str, counted: bool = False):
        """`run(connection, *args)` on the event loop's connection; when the file is busy,
        again in a worker thread that waits for the lock."""
        if doing == "write":
            self._check_identity()
        if doing == "write" and not counted:
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
            raise self._busy_failure(exc, doing) from None

    def _busy_failure(self, exc: sqlite3.Error, doing: str = "write") -> StoreError:
        """The error of a call that waited in a thread for another process's lock."""
        if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
            return StoreError(f"the session store {self.path} stayed locked for "
                              f"{BUSY_SECONDS:g} s by another process; try again")
        return self._failure(doing, exc)

    def _count_write(self, size: int = 0) -> None:
        """Start a checkpoint in a worker thread every `CHECKPOINT_EVERY` writes or
        `CHECKPOINT_BYTES` written (big records fill the WAL long before 500 writes), and
        at the first write `CUT_SECONDS` after `CUT_BYTES` were written, so that the WAL big
        writes grew is cut back even when only small writes follow."""
        self._writes += 1
        self._written += size
        if self._written >= CUT_BYTES and not self._cut_at:
            self._cut_at = time.monotonic() + CUT_SECONDS
        due = self._written >= CHECKPOINT_BYTES or self._writes >= CHECKPOINT_EVERY or \
            0 < self._cut_at <= time.monotonic()
        if due and not self._checkpointing:
            self._cut_at = 0.0
            self._writes = self._written = 0
            self._checkpointing = True
            asyncio.get_running_loop().run_in_executor(None, self._run_checkpoint)

    def _run_checkpoint(self) -> None:
        """A passive checkpoint; a blocking one when the WAL has grown past `RESTART_FRAMES`
        (RESTART: it starts over, keeping its file) or its file past `WAL_LIMIT` (TRUNCATE:
        from an empty file), waiting at most `BLOCKING_SECONDS` for readers, with this
        process's writers on the thread path meanwhile (the event loop's connection takes the
        lock between two polls of the checkpoint's busy handler, every time)."""
        try:
            conn = self._thread_connection()
            frames = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
            oversized = wal_size(self.path) > WAL_LIMIT
            if frames > RESTART_FRAMES or oversized:
                self._restarting = True
                mode = "TRUNCATE" if oversized else "RESTART"
                conn.execute(f"PRAGMA busy_timeout={int(BLOCKING_SECONDS * 1000)}")
                try:
                    conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
                finally:
                    conn.execute(f"PRAGMA busy_timeout={int(BUSY_SECONDS * 1000)}")
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
                  now: float, events: tuple = (), ir_hash: str | None = None) -> int:
        """Commits at once, unless another put committed in this same turn of the event loop
        or the last batch held more than one put (the server is busy): then it joins the
        batch the next turn commits in one transaction (group commit), so under load many
        turns share one write of the WAL (and of the events' page), and alone a turn waits
        for none."""
        item = (session_id, data, expected_version, now, now + self.ttl, events, ir_hash)
        loop = asyncio.get_running_loop()
        self._check_identity()
        if not (self._committed_this_turn or self._crowded or self._restarting):
            self._committed_this_turn = True
            loop.call_soon(self._new_turn)
            self._count_write(len(data))
            return await self._call(run_put, (item,), "write", counted=True)
        done = loop.create_future()
        if not self._batch:
            loop.call_soon(self._commit_batch)
        self._batch.append((item, done))
        outcome = await done
        if isinstance(outcome, (VersionConflict, IRGone)):
            raise outcome
        return outcome

    def _new_turn(self) -> None:
        self._committed_this_turn = False

    def _commit_batch(self) -> None:
        batch, self._batch = self._batch, []
        self._crowded = len(batch) > 1
        items = [item for item, _ in batch]
        for item in items:
            self._count_write(len(item[1]))
        if not self._restarting:
            try:
                return _settle(batch, run_puts(self._fast, items))
            except sqlite3.Error as exc:
                if not (isinstance(exc, sqlite3.OperationalError) and is_busy(exc)):
                    return _fail(batch, self._failure("write", exc))
        asyncio.ensure_future(self._commit_in_thread(batch, items))

    async def _commit_in_thread(self, batch: list, items: list) -> None:
        try:
            outcomes = await asyncio.to_thread(self._in_thread, run_puts, (items,))
        except sqlite3.Error as exc:
            _fail(batch, self._busy_failure(exc))
        else:
            _settle(batch, outcomes)

    async def delete(self, session_id: str) -> bool:
        """The session and its analytics events (SPEC 17.10: they are personal data), and its
        inline IR when no other live session runs on it (SPEC 11.1), in one transaction."""
        return await self._call(run_delete, (session_id,), "write")

    async def expire_events(self, before: float) -> int:
        """Remove the events older than `before` (`--events-days`) and those of deleted
        sessions, in a worker thread; how many."""
        try:
            return await asyncio.to_thread(self._in_thread, run_expiry, (before,))
        except sqlite3.Error as exc:
            raise self._busy_failure(exc) from None

    async def put_ir(self, ir_hash: str, blob: bytes, keep_for: float | None = None) -> None:
        until = None if keep_for is None else time.time() + keep_for
        await self._call(run_put_ir, (ir_hash, blob, until), "write")

    async def get_ir(self, ir_hash: str) -> bytes | None:
        row = await self._call(run_fetch, (GET_IR, (ir_hash,)), "read")
        return None if row is None else row[0]

    async def touch_ir(self, ir_hash: str, keep_for: float) -> None:
        await self._call(run_changes, (KEEP_IR, (ir_hash, time.time() + keep_for)), "write")

    async def expire_irs(self, now: float) -> int:
        """In a worker thread, with the sweep of the sessions."""
        try:
            return await asyncio.to_thread(self._in_thread, run_expire_irs, (now,))
        except sqlite3.Error as exc:
            raise self._busy_failure(exc) from None

    async def ping(self) -> None:
        await self._call(run_fetch, ("SELECT 1", ()), "read")

    async def writable(self) -> None:
        """The file is the one opened, writable, and takes a small write (a full disk or a
        read-only file refuses it), in a worker thread (it may wait for the lock)."""
        self._checked_at = 0.0
        self._check_identity()
        try:
            check_files_writable(self.path)
        except sqlite3.Error as exc:
            raise self._failure("write", exc) from None
        try:
            await asyncio.to_thread(self._in_thread, run_changes, (HEALTH, (time.time(),)))
        except sqlite3.Error as exc:
            raise self._busy_failure(exc) from None

    async def count(self) -> int:
        """The live sessions, counted in a worker thread (a scan of the table)."""
        try:
            row = await asyncio.to_thread(self._in_thread, run_fetch, (COUNT, (time.time(),)))
        except sqlite3.Error as exc:
            raise self._busy_failure(exc, "read") from None
        return row[0]

    async def sweep(self, now: float) -> int:
        """In a worker thread: the scan must not hold the event loop."""
        try:
            return await asyncio.to_thread(self._in_thread, run_changes, (SWEEP, (now,)))
        except sqlite3.Error as exc:
            raise self._busy_failure(exc) from None

    async def close(self) -> None:
        deadline = time.monotonic() + 2 * BUSY_SECONDS
        while self._checkpointing and time.monotonic() < deadline:
            await asyncio.sleep(0.005)  # let a checkpoint under way end before closing
        with self._lock:
            self._closed = True
            connections, self._thread_connections = self._thread_connections, []
        for conn in [self._fast, *connections]:
            conn.close()


class SQLiteSessionStore:
    """The engine's own `SessionStore` (`stores.sessions`) in a SQLite file: for a program
    that runs the engine in process and wants its sessions to survive, and for the
    benchmark's durable turn. The same table and compare-and-set as the service's store, but
    each row holds an `encode_state` blob, not the service's record: give it a file of its own.
    Calls wait up to `BUSY_SECONDS` for another process's lock; SQLite's failures are
    `StoreError`s of one line."""

    def __init__(self, path: str, ttl: float = DEFAULT_TTL, synchronous: str = "normal"):
        self._store = SQLiteRecordStore(path, ttl, synchronous)  # opens and sets up the file
        self._store._fast.close()  # its event-loop connection: this store has no loop
        self.ttl = ttl
        self._conn = self._store._connect(BUSY_SECONDS)

    def get(self, session_id: str) -> tuple[DialogueState, int] | None:
        try:
            row = run_get(self._conn, session_id)
        except sqlite3.Error as exc:
            raise self._store._failure("read", exc) from None
        return None if row is None else (decode_state(row[0]), row[1])

    def put(self, state: DialogueState, expected_version: int) -> int:
        now = time.time()
        item = (state.session_id, encode_state(state), expected_version, now, now + self.ttl,
                (), None)
        try:
            return run_put(self._conn, item)
        except sqlite3.Error as exc:
            raise self._store._failure("write", exc) from None

    def close(self) -> None:
        self._conn.close()
