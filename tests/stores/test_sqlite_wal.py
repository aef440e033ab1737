"""The SQLite store's WAL under a load that never pauses (SPEC 11.1): started over in place, and
never held for long by a reader in another process.

A passive checkpoint cannot catch up while writes go on, so every `RESTART_FRAMES` pages one
checkpoint blocks and starts the WAL over. It used to do so in TRUNCATE mode: the file went
back to zero bytes and every following write grew it again (found by measuring the puts of a
busy server, 15-30% dearer); RESTART keeps the file and writes its blocks again. A blocking
checkpoint holds the write lock while it waits for readers, so it gives up after
`BLOCKING_SECONDS` rather than the writers' `BUSY_SECONDS`.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time

from interpreter.stores import sqlite_store
from interpreter.stores.records import open_store


def wal_sizes(path, puts: int) -> list[int]:
    """The WAL file's size after each of `puts` puts of 2 KB records to 16 sessions."""
    async def main() -> list[int]:
        store = open_store(f"sqlite:{path}", 3600)
        blob, versions, sizes = os.urandom(2000), {}, []
        try:
            for n in range(puts):
                session_id = f"s{n % 16}"
                versions[session_id] = await store.put(session_id, blob,
                                                       versions.get(session_id, 0), time.time())
                await asyncio.sleep(0)  # the checkpoint thread gets its turn
                sizes.append(os.path.getsize(f"{path}-wal"))
        finally:
            await store.close()
        return sizes
    return asyncio.run(main())


def test_a_busy_wal_is_started_over_in_place_not_truncated(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_store, "CHECKPOINT_EVERY", 50)
    monkeypatch.setattr(sqlite_store, "RESTART_FRAMES", 256)
    sizes = wal_sizes(tmp_path / "s.db", 4000)  # some 4000 pages: many restarts
    shrunk = [(before, after) for before, after in zip(sizes, sizes[1:]) if after < before]
    assert not shrunk, f"the WAL file was cut back {len(shrunk)} times, e.g. {shrunk[:3]}"
    assert sizes[-1] < 8 << 20, f"the WAL grew to {sizes[-1]} bytes: it was not started over"


def test_a_blocking_checkpoint_gives_up_on_a_reader_instead_of_holding_the_writers(
        tmp_path, monkeypatch):
    """Another process's long read (a report) keeps the WAL from starting over; the blocking
    checkpoint, holding the write lock meanwhile, waits for it `BLOCKING_SECONDS`, not the
    writers' five seconds."""
    monkeypatch.setattr(sqlite_store, "BUSY_SECONDS", 3.0)
    monkeypatch.setattr(sqlite_store, "RESTART_FRAMES", 8)
    path = tmp_path / "s.db"
    store = sqlite_store.SQLiteRecordStore(str(path), 3600)
    reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        async def fill() -> None:
            for n in range(40):
                await store.put(f"s{n}", os.urandom(5000), 0, time.time())
        asyncio.run(fill())
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM sessions").fetchone()[0] == 40
        asyncio.run(fill_more(store))  # frames the reader's snapshot does not see
        done = threading.Event()
        started = time.monotonic()
        worker = threading.Thread(target=lambda: (store._run_checkpoint(), done.set()))
        worker.start()
        assert done.wait(sqlite_store.BUSY_SECONDS + 5)
        waited = time.monotonic() - started
        assert waited < sqlite_store.BUSY_SECONDS / 2, f"the checkpoint held on for {waited:.1f} s"
        assert not store._restarting  # the writers are back on the event loop's connection
    finally:
        reader.rollback()
        reader.close()
        asyncio.run(store.close())


async def fill_more(store) -> None:
    for n in range(40):
        stored = await store.get(f"s{n}")
        await store.put(f"s{n}", os.urandom(5000), stored.version, time.time())
