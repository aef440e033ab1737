"""The service's session stores (`interpreter.stores.records`): memory:, sqlite: and redis://.

Each behaviour of the `RecordStore` protocol is checked on every store (Redis against a real
`redis-server`, see `tests/support/redis_server.py`; skipped without one); a hypothesis property
plays random puts and deletes against a model; several processes increment one session at
once with no lost update; a killed writer (SQLite) and a killed server (Redis) lose no
acknowledged put; failures are one-line `StoreError`s without the password.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, examples
from support.redis_server import RedisServer, free_port, needs_redis
from interpreter.stores import sqlite_store
from interpreter.stores.records import (IRGone, Stored, StoreError, StoreURLError, VersionConflict,
                                        open_store)

KINDS = ["memory", "sqlite", pytest.param("redis", marks=needs_redis)]
TTL = 3600.0


def flush(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()


def url_of(kind: str, request, folder) -> str:
    """A store URL of `kind`: memory:, a new SQLite file in `folder`, the module's Redis."""
    if kind == "memory":
        return "memory:"
    if kind == "sqlite":
        return f"sqlite:{folder / f'sessions-{uuid.uuid4().hex[:8]}.db'}"
    server = request.getfixturevalue("redis_server")
    return server.url


@pytest.fixture(params=KINDS)
def store_url(request, tmp_path):
    url = url_of(request.param, request, tmp_path)
    if request.param == "redis":
        flush(url)
    return url


def with_store(url: str, body, ttl: float = TTL):
    """Run `await body(store)` on a store opened from `url`, closed after."""
    async def main():
        store = open_store(url, ttl)
        try:
            return await body(store)
        finally:
            await store.close()
    return asyncio.run(main())


# ---- the protocol, on every store -------------------------------------------------------

def test_a_missing_session_is_none(store_url):
    async def body(store):
        assert await store.get("nobody") is None
        assert await store.get_ir("no-such-hash") is None
    with_store(store_url, body)


def test_a_create_is_version_one_and_a_second_create_conflicts(store_url):
    async def body(store):
        now = time.time()
        assert await store.put("s", b"first", 0, now) == 1
        with pytest.raises(VersionConflict):
            await store.put("s", b"second", 0, now + 1)
        stored = await store.get("s")
        assert stored == Stored(b"first", 1, now, now + TTL)
        assert store.name in ("memory", "sqlite", "redis")
    with_store(store_url, body)


def test_a_wrong_version_conflicts_and_changes_nothing(store_url):
    async def body(store):
        now = time.time()
        await store.put("s", b"one", 0, now)
        await store.put("s", b"two", 1, now + 1)
        for wrong in (0, 1, 3, 17):
            with pytest.raises(VersionConflict):
                await store.put("s", b"lost", wrong, now + 2)
        assert await store.get("s") == Stored(b"two", 2, now + 1, now + 1 + TTL)
    with_store(store_url, body)


def test_the_right_version_counts_up(store_url):
    async def body(store):
        now = time.time()
        version = 0
        for n in range(5):
            version = await store.put("s", b"v%d" % n, version, now + n)
        assert version == 5
        stored = await store.get("s")
        assert (stored.data, stored.version, stored.updated_at) == (b"v4", 5, now + 4)
    with_store(store_url, body)


def test_delete_says_whether_there_was_a_session(store_url):
    async def body(store):
        await store.put("s", b"x", 0, time.time())
        assert await store.delete("s") is True
        assert await store.delete("s") is False
        assert await store.get("s") is None
        assert await store.put("s", b"again", 0, time.time()) == 1
    with_store(store_url, body)


def test_ir_blobs_round_trip_and_the_first_one_stays(store_url):
    blob = bytes(range(256)) * 40

    async def body(store):
        await store.put_ir("abc123", blob)
        await store.put_ir("abc123", b"a later blob under the same hash")
        assert await store.get_ir("abc123") == blob
    with_store(store_url, body)


def test_an_ir_kept_for_a_while_is_removed_after_unless_touched(store_url):
    """SPEC 11.1, 17.7: a blob put with `keep_for` goes once that time has passed since
    its last put or touch (Redis: by the key's TTL; the others: `expire_irs`); a touch never
    shortens it; one put without `keep_for` stays."""
    async def body(store):
        await store.put_ir("forever", b"f")
        await store.put_ir("brief", b"b", 0.4)
        await store.put_ir("touched", b"t", 0.4)
        await store.touch_ir("touched", 30)
        await store.touch_ir("touched", 0.1)  # shorter: no effect
        await asyncio.sleep(0.6)
        await store.expire_irs(time.time())
        assert await store.get_ir("brief") is None
        assert await store.get_ir("touched") == b"t"
        assert await store.get_ir("forever") == b"f"
        await store.put_ir("brief", b"again", 30)  # put anew: kept again
        assert await store.get_ir("brief") == b"again"
    with_store(store_url, body)


def test_an_inline_ir_goes_with_the_delete_of_its_last_live_session(store_url):
    """SPEC 11.1, 17.7: a session created naming its inline IR (`ir_hash`) takes the blob
    with it when it is deleted and no other live session runs on it; while one does, the
    blob stays; an expired user does not hold it. Before: it stayed until its TTL."""
    async def body(store):
        now = time.time()
        await store.put_ir("inline", b"i", 3600)
        await store.put_ir("registered", b"r", 3600)
        await store.put("a", b"1", 0, now, ir_hash="inline")
        await store.put("b", b"1", 0, now, ir_hash="inline")
        await store.put("c", b"1", 0, now)  # a registered scenario's session: not named
        await store.put("b", b"2", 1, now)  # a turn keeps what the creation recorded
        assert await store.delete("a")
        assert await store.get_ir("inline") == b"i"  # b still runs on it
        assert await store.delete("b")
        assert await store.get_ir("inline") is None
        assert await store.delete("c")
        assert await store.get_ir("registered") == b"r"
    with_store(store_url, body)


def test_a_session_is_not_created_on_an_ir_the_store_no_longer_has(store_url):
    """The creation that races the last user's delete: `IRGone`, nothing stored; once the
    blob is put again, it succeeds."""
    async def body(store):
        now = time.time()
        with pytest.raises(IRGone):
            await store.put("late", b"1", 0, now, ir_hash="gone")
        assert await store.get("late") is None
        await store.put_ir("gone", b"g", 3600)
        assert await store.put("late", b"1", 0, now, ir_hash="gone") == 1
        assert await store.delete("late")
        assert await store.get_ir("gone") is None
    with_store(store_url, body)


def test_an_expired_user_does_not_keep_an_inline_ir(store_url):
    async def body(store):
        now = time.time()
        await store.put_ir("inline", b"i", 3600)
        await store.put("old", b"1", 0, now, ir_hash="inline")
        await store.put("new", b"1", 0, now, ir_hash="inline")
        for version in range(1, 8):  # "old" expires (TTL 0.3 s), turns keep "new"
            await asyncio.sleep(0.1)
            await store.put("new", b"2", version, time.time())
        assert await store.get("old") is None
        assert await store.delete("new")
        assert await store.get_ir("inline") is None
    with_store(store_url, body, ttl=0.3)


def test_a_sqlite_file_made_before_ir_hash_gains_the_column(tmp_path):
    """Files of the previous version (sessions without `ir_hash`) open, keep their
    sessions and take sessions on inline IRs."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
                 "data BLOB NOT NULL, updated_at REAL NOT NULL, expires_at REAL NOT NULL)")
    conn.execute("INSERT INTO sessions VALUES ('kept', 3, x'01', ?, ?)",
                 (time.time(), time.time() + TTL))
    conn.commit()
    conn.close()

    async def body(store):
        assert (await store.get("kept")).version == 3
        await store.put_ir("inline", b"i", 3600)
        await store.put("new", b"1", 0, time.time(), ir_hash="inline")
        assert await store.delete("new") and await store.get_ir("inline") is None
        assert await store.delete("kept")
    with_store(f"sqlite:{path}", body)


def test_the_session_count_counts_live_sessions_only(store_url):
    """`--max-sessions` (SPEC 17.7): the count is the live sessions, whatever else the
    store holds. Before, Redis answered DBSIZE: every key (events, IRs, another program's
    keys) counted as a session."""
    async def body(store):
        now = time.time()
        await store.put_ir("ir", b"i", 3600)
        for sid in ("a", "b", "c"):
            await store.put(sid, b"1", 0, now, events=((now, b"{}"),))
        await store.put("a", b"2", 1, now)
        if store.name == "redis":
            await store._client.set("another:program", b"x")
        assert await store.count() == 3
        assert await store.delete("b")
        assert await store.count() == 2
    with_store(store_url, body)


@needs_redis
def test_redis_counts_an_expired_session_out_within_a_bucket(redis_server):
    """A session is counted until at most TTL / COUNT_BUCKETS (here the 1 s floor) after it
    expired; one turned meanwhile stays counted once."""
    flush(redis_server.url)

    async def body(store):
        await store.put("brief", b"1", 0, time.time())
        await store.put("kept", b"1", 0, time.time())
        assert await store.count() == 2
        deadline = time.monotonic() + 10
        version = 1
        while await store.count() != 1 and time.monotonic() < deadline:
            await store.put("kept", b"x", version, time.time())
            version += 1
            await asyncio.sleep(0.1)
        assert await store.count() == 1 and await store.get("brief") is None
    with_store(redis_server.url, body, ttl=1.0)


def test_ping_answers(store_url):
    with_store(store_url, lambda store: store.ping())


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_an_expired_session_is_gone_and_swept(kind, request, tmp_path):
    async def body(store):
        now = time.time()
        past = now - 2 * TTL
        for sid in ("old1", "old2"):
            await store.put(sid, b"old", 0, past)
        await store.put("fresh", b"new", 0, now)
        assert await store.get("old1") is None
        assert await store.put("old1", b"reborn", 0, now) == 1  # a create over an expired one
        swept = await store.sweep(time.time())
        assert swept == 1 and await store.sweep(time.time()) == 0
        assert await store.get("old2") is None
        assert (await store.get("fresh")).data == b"new"
        assert (await store.get("old1")).data == b"reborn"
    with_store(url_of(kind, request, tmp_path), body)


@needs_redis
def test_a_redis_session_expires_by_itself(redis_server):
    async def body(store):
        await store.put("brief", b"x", 0, time.time())
        assert (await store.get("brief")).expires_at - (await store.get("brief")).updated_at == 1
        await asyncio.sleep(1.2)
        assert await store.get("brief") is None
        assert await store.sweep(time.time()) == 0
        assert await store.put("brief", b"y", 0, time.time()) == 1
    with_store(redis_server.url, body, ttl=1)


@needs_redis
def test_a_redis_put_resent_after_a_lost_answer_is_not_a_conflict(redis_server):
    """redis-py resends a script whose answer timed out: the same arguments, token included.
    Another writer's put of the same bytes at the same instant has a token of its own and is
    a conflict (when only bytes and time were compared, such a put was taken for a resend
    and one of two increments was lost)."""
    from interpreter.stores.redis_store import SESSION_KEY

    async def body(store):
        now, key = repr(time.time()), [SESSION_KEY + "resent"]
        write = [0, b"turn", now, 60_000, b"token-of-write-1"]
        assert await store._cas(keys=key, args=write) == 1
        assert await store._cas(keys=key, args=write) == 1  # the same write, resent
        other = [0, b"turn", now, 60_000, b"token-of-write-2"]  # same bytes, same instant
        assert await store._cas(keys=key, args=other) == -1
        with pytest.raises(VersionConflict):
            await store.put("resent", b"turn", 0, time.time())
        assert (await store.get("resent")).version == 1
    with_store(redis_server.url, body)


# ---- a model of the protocol ------------------------------------------------------------

OPERATIONS = st.lists(st.tuples(
    st.sampled_from(["put", "put", "put", "delete"]),
    st.sampled_from(["a", "b"]),
    st.one_of(st.none(), st.integers(0, 6)),  # None: the version the model holds
    st.binary(max_size=64)), max_size=25)


@pytest.mark.parametrize("kind", KINDS)
def test_every_store_behaves_like_the_model(kind, request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("model")

    @settings(max_examples=examples(30))
    @given(OPERATIONS)
    def play(operations):
        url = url_of(kind, request, folder)
        prefix = uuid.uuid4().hex[:8]

        async def body(store):
            model: dict[str, tuple[int, bytes]] = {}
            base = time.time()
            for n, (op, sid, expected, data) in enumerate(operations):
                key = f"{prefix}-{sid}"
                current = model.get(sid, (0, b""))[0]
                if op == "delete":
                    assert await store.delete(key) == (sid in model)
                    model.pop(sid, None)
                elif expected is None or expected == current:
                    assert await store.put(key, data, current, base + n) == current + 1
                    model[sid] = (current + 1, data)
                else:
                    with pytest.raises(VersionConflict):
                        await store.put(key, data, expected, base + n)
                stored = await store.get(key)
                want = model.get(sid)
                assert (stored and (stored.version, stored.data)) == (want and want)
        with_store(url, body)

    play()


# ---- URLs and failures ------------------------------------------------------------------

@pytest.mark.parametrize("url", [
    "sqlite:", "sqlite:?synchronous=full", "bogus:x", "sqlite:x.db?synchronous=maybe",
    "sqlite:x.db?journal=off", "redis://127.0.0.1:notaport/0", "redis://127.0.0.1:99999/0",
    "redis://127.0.0.1:6379/zero", "redis:///0", "unix://", "memory:x"])
def test_a_bad_store_url_is_one_line(url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreURLError) as caught:
        open_store(url)
    message = str(caught.value)
    assert message and "\n" not in message
    assert not list(tmp_path.iterdir()), "a bad URL creates no file"


def test_a_ttl_must_be_positive():
    with pytest.raises(StoreURLError, match="--session-ttl"):
        open_store("memory:", 0)


def test_sqlite_in_a_missing_folder_cannot_open(tmp_path):
    path = tmp_path / "no" / "such" / "folder" / "s.db"
    with pytest.raises(StoreError) as caught:
        open_store(f"sqlite:{path}")
    message = str(caught.value)
    assert message.startswith(f"cannot open sqlite store {path}: ") and "\n" not in message
    assert "create it" in message
    assert not (tmp_path / "no").exists()


def test_a_file_that_is_not_a_database_cannot_open(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"this is no sqlite file at all" * 200)
    with pytest.raises(StoreError, match="^cannot open sqlite store .*not a database"):
        open_store(f"sqlite:{path}")


def test_redis_that_is_not_there_is_a_store_error_without_the_password():
    port = free_port()
    url = f"redis://:secret@127.0.0.1:{port}/0"

    async def body(store):
        for call in (store.ping(), store.get("s"), store.put("s", b"x", 0, time.time())):
            with pytest.raises(StoreError) as caught:
                await call
            message = str(caught.value)
            assert message.startswith(f"redis store at 127.0.0.1:{port} did not answer: ")
            assert "\n" not in message and "secret" not in message
    with_store(url, body)  # opening connects to nothing: no error until the first call


@needs_redis
def test_redis_refusing_the_password_is_a_store_error_without_it():
    server = RedisServer("--requirepass", "the-right-one").start()
    url = server.url.replace("redis://", "redis://:secret@")

    async def body(store):
        with pytest.raises(StoreError) as caught:
            await store.ping()
        message = str(caught.value)
        assert message.startswith(f"redis store at 127.0.0.1:{server.port} refused the password")
        assert "\n" not in message and "secret" not in message
    try:
        with_store(url, body)
    finally:
        server.stop()


# ---- SQLite: the file, the busy path, checkpoints ---------------------------------------

def test_sqlite_keeps_a_wal_file_with_the_schema(tmp_path):
    path = tmp_path / "s.db"
    with_store(f"sqlite:{path}?synchronous=full", lambda store: store.ping())
    with_store(f"sqlite:{path}", lambda store: store.ping())  # opening again changes nothing
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert {"sessions", "ir_blobs"} <= tables
    assert "sessions_expires_at" not in tables  # one page less written by every put
    conn.close()


def test_sqlite_says_how_it_syncs(tmp_path):
    async def body(store):
        return store._fast.execute("PRAGMA synchronous").fetchone()[0]
    assert with_store(f"sqlite:{tmp_path / 'a.db'}", body) == 1  # NORMAL
    assert with_store(f"sqlite:{tmp_path / 'b.db'}?synchronous=full", body) == 2


def hold_write_lock(path):
    """Another connection holding the file's write lock (as another worker process would)."""
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    return blocker


def test_a_locked_sqlite_file_waits_in_a_thread_not_on_the_event_loop(tmp_path):
    path = tmp_path / "s.db"

    async def body(store):
        await store.put("s", b"one", 0, time.time())
        blocker = hold_write_lock(path)
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        threading.Timer(0.4, blocker.rollback).start()
        started = time.monotonic()
        assert await store.put("s", b"two", 1, time.time()) == 2
        waited = time.monotonic() - started
        ticker.cancel()
        blocker.close()
        assert waited >= 0.3 and ticks >= 10, (waited, ticks)
        assert (await store.get("s")).data == b"two"
    with_store(f"sqlite:{path}", body)


def test_a_sqlite_file_locked_too_long_is_a_store_error(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_store, "BUSY_SECONDS", 0.2)
    path = tmp_path / "s.db"

    async def body(store):
        blocker = hold_write_lock(path)
        try:
            with pytest.raises(StoreError, match="stayed locked") as caught:
                await store.put("s", b"x", 0, time.time())
            assert "\n" not in str(caught.value)
        finally:
            blocker.rollback()
            blocker.close()
        assert await store.put("s", b"x", 0, time.time()) == 1
    with_store(f"sqlite:{path}", body)


def test_sqlite_checkpoints_keep_the_wal_small(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_store, "CHECKPOINT_EVERY", 50)
    monkeypatch.setattr(sqlite_store, "RESTART_FRAMES", 256)
    path = tmp_path / "s.db"
    blob = os.urandom(2000)

    async def body(store):
        for n in range(50):
            await store.put(f"s{n}", blob, 0, time.time())
        for n in range(8000):  # some 16000 pages (64 MB) of WAL without checkpoints
            stored = await store.get(f"s{n % 50}")
            await store.put(f"s{n % 50}", blob, stored.version, time.time())
        return (tmp_path / "s.db-wal").stat().st_size
    size = with_store(f"sqlite:{path}", body)
    assert size < 32 * 2**20, f"the WAL grew to {size} bytes"  # its peak depends on the disk


# ---- several processes, killed processes ------------------------------------------------

INCREMENTS = """
import asyncio, random, sys, time
sys.path.insert(0, sys.argv[3])
from interpreter.stores.records import open_store, VersionConflict

async def main(url, count):
    sys.stdin.readline()  # go
    store = open_store(url, 3600)
    conflicts = 0
    for _ in range(count):
        while True:
            stored = await store.get("shared")
            version = stored.version if stored else 0
            counter = int(stored.data) if stored else 0
            time.sleep(random.random() * 0.0005)  # widen the window between read and write
            try:
                await store.put("shared", b"%d" % (counter + 1), version, time.time())
                break
            except VersionConflict:
                conflicts += 1
    await store.close()
    print(conflicts)

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def increment_together(url: str, processes: int, count: int) -> int:
    """`processes` children each add 1 to the shared session `count` times; conflicts seen."""
    children = [subprocess.Popen([sys.executable, "-c", INCREMENTS, url, str(count), str(ROOT)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
                for _ in range(processes)]
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    conflicts = 0
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        conflicts += int(out)
    return conflicts


def test_sqlite_processes_lose_no_update(tmp_path):
    url = f"sqlite:{tmp_path / 'shared.db'}"
    conflicts = increment_together(url, 4, 100)
    stored = with_store(url, lambda store: store.get("shared"))
    assert stored.version == 400 and stored.data == b"400"
    assert conflicts > 0, "the processes never raced; the test proves nothing"


@needs_redis
def test_redis_processes_lose_no_update(redis_server):
    flush(redis_server.url)
    increment_together(redis_server.url, 2, 100)
    stored = with_store(redis_server.url, lambda store: store.get("shared"))
    assert stored.version == 200 and stored.data == b"200"


WRITER = """
import asyncio, sys, time
sys.path.insert(0, sys.argv[2])
from interpreter.stores.records import open_store

async def main(url):
    store = open_store(url, 3600)
    version = 0
    for n in range(50):
        version = await store.put("durable", b"%d" % n, version, time.time())
        print(version, flush=True)
        time.sleep(0.01)

asyncio.run(main(sys.argv[1]))
"""


def test_a_killed_sqlite_writer_loses_no_acknowledged_put(tmp_path):
    url = f"sqlite:{tmp_path / 'durable.db'}"
    child = subprocess.Popen([sys.executable, "-c", WRITER, url, str(ROOT)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    acknowledged = 0
    try:
        while acknowledged < 20:
            line = child.stdout.readline()
            assert line, child.stderr.read()
            acknowledged = int(line)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    stored = with_store(url, lambda store: store.get("durable"))
    assert stored.version >= acknowledged
    assert stored.data == b"%d" % (stored.version - 1)


@needs_redis
def test_a_killed_redis_loses_no_acknowledged_put(redis_server):
    async def write(store):
        await store.put_ir("h1", b"the ir")
        version = 0
        for n in range(10):
            version = await store.put("durable", b"%d" % n, version, time.time())
        return version

    version = with_store(redis_server.url, write)
    redis_server.kill()
    redis_server.restart()
    stored = with_store(redis_server.url, lambda store: store.get("durable"))
    assert (stored.version, stored.data) == (version, b"9")
    assert with_store(redis_server.url, lambda store: store.get_ir("h1")) == b"the ir"


@needs_redis
def test_a_redis_store_answers_again_once_redis_is_back(redis_server):
    async def body(store):
        assert await store.put("back", b"x", 0, time.time()) == 1
        redis_server.kill()
        with pytest.raises(StoreError, match="did not answer"):
            await store.get("back")
        redis_server.restart()
        assert (await store.get("back")).version == 1
        assert await store.put("back", b"y", 1, time.time()) == 2
    with_store(redis_server.url, body)


# --- the engine's own SessionStore on SQLite -------------------------------------------------

def test_the_engine_on_a_sqlite_session_store_keeps_its_sessions_across_a_reopen(tmp_path):
    from support.llm_server import reference_runtime
    from interpreter.engine import Engine
    from interpreter.stores.sqlite_store import SQLiteSessionStore

    runtime = reference_runtime("senimate")
    path = str(tmp_path / "engine.db")
    store = SQLiteSessionStore(path)
    engine = Engine(runtime, store=store)
    engine.start("s")
    said = [engine.turn("s", text).response for text in ("네 좋아요", "그냥 그래요")]
    before = engine.session("s")
    store.close()
    again = SQLiteSessionStore(path)
    state, version = again.get("s")
    assert version == 3 and state == before  # the opening, then two turns
    assert state.entries()[-1].bot == said[-1]
    with pytest.raises(VersionConflict):  # a writer that read version 2 comes too late
        again.put(state, 2)
    assert again.get("s")[1] == 3
    assert Engine(runtime, store=again).turn("s", "좋아요").turn == 4
    again.close()
