"""Analytics events in the service's stores (SPEC 16, 17.10): written with the session's save
and only with it, deleted with the session, expired by retention, read by `mgi report`.

Every store is the real one: a SQLite file, the memory store, a real `redis-server`.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest

from support.redis_server import needs_redis
from test_mgi_cli import mgi
from interpreter.analytics.aggregate import Aggregator
from interpreter.analytics.events import STARTED, Event, encode_event
from interpreter.analytics.sources import feed
from interpreter.stores.records import VersionConflict, open_store

KINDS = ["memory", "sqlite", pytest.param("redis", marks=needs_redis)]


@pytest.fixture(params=KINDS)
def store_url(request, tmp_path):
    if request.param == "memory":
        return "memory:"
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'sessions.db'}"
    import redis

    url = request.getfixturevalue("redis_server").url
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()
    return url


def events_of(session: str, when: float, *turns: int) -> tuple:
    """A `started` event and turn events, as the service hands them to `put`."""
    made = [Event(time=when, scenario="s", ir_hash="h" * 64, session_id=session,
                  kind=STARTED, node="a", next_node="a", turn=1)]
    made += [Event(time=when, scenario="s", ir_hash="h" * 64, session_id=session, turn=t,
                   node="a", next_node="b", reason="default_next") for t in turns]
    return tuple((event.time, encode_event(event)) for event in made)


def read(store, url: str) -> list[Event]:
    if url == "memory:":
        from interpreter.analytics.events import decode_event

        return [decode_event(blob) for _, _, blob in store.events]
    found: list[Event] = []

    class Collect(Aggregator):
        def add_all(self, events):
            found.extend(events)
            return self

    feed(Collect(), url)
    return found


def run(coroutine):
    return asyncio.run(coroutine)


def test_events_are_written_with_the_save_and_never_by_a_loser(store_url):
    async def scenario():
        store = open_store(store_url, 3600)
        now = time.time()
        try:
            await store.put("one", b"v1", 0, now, events_of("one", now))
            await store.put("one", b"v2", 1, now, events_of("one", now, 2)[1:])
            with pytest.raises(VersionConflict):  # a writer that read version 1 too
                await store.put("one", b"late", 1, now, events_of("one", now, 99)[1:])
            await store.put("two", b"v1", 0, now)  # events are optional
            return read(store, store_url), store
        finally:
            if store_url != "memory:":
                await store.close()

    events, _ = run(scenario())
    assert [(e.session_id, e.kind, e.turn) for e in events] == [("one", STARTED, 1),
                                                                ("one", "turn", 2)]


def test_puts_that_share_a_commit_write_the_events_of_the_winners_only(store_url):
    """Puts made at once (the SQLite store writes all but the first as one batch, in one
    transaction): each put written has its events, a session's in the order of its puts
    (Redis may finish the sessions' puts in any order); a put that loses its version race
    in the batch writes none, and the others of the batch are kept."""
    async def scenario():
        store = open_store(store_url, 3600)
        now = time.time()
        try:
            await store.put("a", b"v1", 0, now, events_of("a", now))
            outcomes = await asyncio.gather(
                store.put("a", b"v2", 1, now, events_of("a", now, 2)[1:]),
                store.put("b", b"v1", 0, now, events_of("b", now)),
                store.put("a", b"late", 1, now, events_of("a", now, 99)[1:]),
                store.put("c", b"v1", 0, now, events_of("c", now, 2)),
                return_exceptions=True)
            return outcomes, read(store, store_url)
        finally:
            if store_url != "memory:":
                await store.close()

    outcomes, events = run(scenario())
    assert outcomes[:2] == [2, 1] and outcomes[3] == 1
    assert isinstance(outcomes[2], VersionConflict)
    written = sorted([(e.session_id, e.kind, e.turn) for e in events], key=lambda e: e[0])
    assert written == [("a", STARTED, 1), ("a", "turn", 2), ("b", STARTED, 1),
                       ("c", STARTED, 1), ("c", "turn", 2)]


def test_delete_removes_a_sessions_events(store_url):
    async def scenario():
        store = open_store(store_url, 3600)
        now = time.time()
        for session in ("keep", "gone"):
            await store.put(session, b"v1", 0, now, events_of(session, now, 2, 3))
        assert await store.delete("gone")
        found = read(store, store_url)  # a reader skips them at once
        await store.expire_events(0)  # the next sweep removes them from the file
        if store_url != "memory:":
            await store.close()
        return found

    assert {e.session_id for e in run(scenario())} == {"keep"}
    if store_url.startswith("sqlite:"):
        import sqlite3

        rows = sqlite3.connect(store_url.removeprefix("sqlite:")).execute(
            "SELECT session_id, count(*) FROM events GROUP BY session_id").fetchall()
        assert rows == [("keep", 3)]


def test_a_session_id_used_again_after_a_delete_keeps_its_new_events(tmp_path):
    url = f"sqlite:{tmp_path / 'sessions.db'}"

    async def scenario():
        store = open_store(url, 3600)
        now = time.time()
        await store.put("again", b"v1", 0, now, events_of("again", now, 2))
        await store.delete("again")
        await store.put("again", b"v1", 0, now, events_of("again", now))  # a new session
        before = read(store, url)
        await store.expire_events(0)
        after = read(store, url)
        await store.close()
        return before, after

    before, after = run(scenario())
    assert [(e.kind, e.turn) for e in before] == [(e.kind, e.turn) for e in after] == \
        [(STARTED, 1)]


def test_retention_expires_old_events(store_url):
    if store_url.startswith("redis"):
        pytest.skip("a Redis day stream expires by itself (PEXPIREAT, checked below)")

    async def scenario():
        store = open_store(store_url, 3600)
        now = time.time()
        await store.put("old", b"v1", 0, now - 40 * 86400, events_of("old", now - 40 * 86400))
        await store.put("new", b"v1", 0, now, events_of("new", now, 2))
        gone = await store.expire_events(now - 30 * 86400)
        found = read(store, store_url)
        if store_url != "memory:":
            await store.close()
        return gone, found

    gone, found = run(scenario())
    assert gone == 1 and {e.session_id for e in found} == {"new"}


@needs_redis
def test_a_redis_stream_past_its_cap_reports_events_lost(redis_server):
    import redis

    url = redis_server.url
    client = redis.Redis.from_url(url)
    client.flushdb()

    async def scenario():
        store = open_store(url, 3600)
        store.events_cap = 1000
        now = time.time()
        for number in range(1500):
            await store.put(f"s{number}", b"v1", 0, now, events_of(f"s{number}", now))
        await store.delete("s1499")  # a deleted event is not a lost one
        await store.close()

    run(scenario())
    (key,) = [k for k in client.keys("mago:events:*") if not k.endswith((b":n", b":d"))]
    assert 0 < client.pttl(key) <= 32 * 86400 * 1000  # kept --events-days after its day
    kept = client.xlen(key)
    client.close()
    aggregator = feed(Aggregator(), url)
    assert aggregator.lost == 1500 - 1 - kept > 0
    report = json.loads(mgi("report", url, "--format", "json").stdout)
    assert report["events_lost"] == aggregator.lost
    assert "events lost" in mgi("report", url).stdout


def test_mgi_report_reads_a_sqlite_store(tmp_path):
    url = f"sqlite:{tmp_path / 'sessions.db'}"

    async def scenario():
        store = open_store(url, 3600)
        now = time.time()
        for number in range(3):
            await store.put(f"s{number}", b"v1", 0, now, events_of(f"s{number}", now, 2))
        await store.close()

    run(scenario())
    report = json.loads(mgi("report", url, "--format", "json").stdout)
    (version,) = report["scenarios"]
    assert version["sessions"]["started"] == 3 and version["transitions"][0]["count"] == 3
    missing = mgi("report", f"sqlite:{tmp_path / 'none.db'}")
    assert missing.returncode == 2 and "no sqlite store" in missing.stderr


def test_an_old_store_file_gains_the_events_table(tmp_path):
    import sqlite3

    path = tmp_path / f"old-{uuid.uuid4().hex[:6]}.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
                 "data BLOB NOT NULL, updated_at REAL NOT NULL, expires_at REAL NOT NULL)")
    conn.commit()
    conn.close()

    async def scenario():
        store = open_store(f"sqlite:{path}", 3600)
        await store.put("s", b"v1", 0, time.time(), events_of("s", time.time()))
        await store.close()

    run(scenario())
    assert sqlite3.connect(path).execute("SELECT count(*) FROM events").fetchone() == (1,)
