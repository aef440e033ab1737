"""SPEC 11.1, store health: a store that cannot take a write makes `/readyz` 503 and every
write 503 fast, and no acknowledged turn is lost.

Real faults only: the SQLite file deleted and replaced under a running `mgi serve`, a tmpfs
filled to the brim (skipped with the reason when this machine does not let the test mount
one), a file made read-only while serving and an immutable shared-memory file (`chattr +i`,
which used to be a bus error; skipped when `chattr` cannot), big records filling the WAL, and a real `redis-server` frozen with SIGSTOP.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT
from interpreter.stores.records import open_store
from interpreter.stores.sqlite_store import WAL_LIMIT
from support.redis_server import RedisServer, needs_redis
from support.service_server import ServiceServer, wait_for


def conversation(server: ServiceServer) -> str:
    status, made, _ = server.call("POST", "/dm/v1/session", {"scenario": "clinic_booking"})
    assert status == 201, made
    return made["session_id"]


def turn(server: ServiceServer, session_id: str, timeout: float = 10) -> tuple[int, dict]:
    status, body, _ = server.call("POST", "/dm/v1/message",
                                  {"session_id": session_id, "text": "네"}, timeout=timeout)
    return status, body


def readyz(server: ServiceServer) -> int:
    return server.call("GET", "/readyz", timeout=10)[0]


def assert_unavailable(status: int, body: dict) -> None:
    assert status == 503 and body["error"]["code"] == "store_unavailable", (status, body)


@pytest.mark.parametrize("fault", ["deleted", "replaced"])
def test_a_sqlite_file_deleted_or_replaced_while_serving_fails_writes(served_irs, tmp_path,
                                                                      fault):
    db = tmp_path / "sessions.db"
    with ServiceServer([served_irs], store=f"sqlite:{db}") as server:
        session_id = conversation(server)
        assert turn(server, session_id)[0] == 200
        if fault == "deleted":
            for name in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                name.unlink(missing_ok=True)
        else:
            other = tmp_path / "other.db"
            sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
            os.replace(other, db)
        assert wait_for(lambda: readyz(server) == 503)
        assert_unavailable(*turn(server, session_id))  # refused, so never acknowledged
        status, body, _ = server.call("POST", "/dm/v1/session", {"scenario": "clinic_booking"})
        assert_unavailable(status, body)


def mount_tmpfs(folder: Path, size: str) -> None:
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'not root'})")


@pytest.fixture
def tmpfs(tmp_path):
    folder = tmp_path / "small"
    mount_tmpfs(folder, "4m")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path) -> Path:
    """A file that takes every free byte of `folder`'s file system."""
    filler = folder / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_is_503_on_readyz_and_on_writes_and_loses_no_acknowledged_turn(
        served_irs, tmpfs):
    db = tmpfs / "sessions.db"
    with ServiceServer([served_irs], store=f"sqlite:{db}") as server:
        session_id = conversation(server)
        acknowledged = [turn(server, session_id)[1]["version"]]
        filler = fill(tmpfs)
        assert wait_for(lambda: readyz(server) == 503)
        refused = 0
        for _ in range(30):  # bounded: until the WAL's free pages are gone too
            status, body = turn(server, session_id)
            if status == 200:
                acknowledged.append(body["version"])
                continue
            assert_unavailable(status, body)
            refused += 1
            break
        assert refused == 1
        filler.unlink()
        assert wait_for(lambda: readyz(server) == 200)
        status, view, _ = server.call("GET", f"/dm/v1/session/{session_id}")
        assert status == 200 and view["version"] >= max(acknowledged), view


def test_a_file_made_read_only_while_serving_is_503_on_readyz(served_irs, tmp_path):
    """Root ignores permission bits, so the file is made immutable (`chattr +i`)."""
    db = tmp_path / "sessions.db"
    with ServiceServer([served_irs], store=f"sqlite:{db}") as server:
        conversation(server)
        assert readyz(server) == 200
        done = subprocess.run(["chattr", "+i", str(db)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot make a file immutable here: {done.stderr.strip()}")
        try:
            assert wait_for(lambda: readyz(server) == 503)
        finally:
            subprocess.run(["chattr", "-i", str(db)], capture_output=True)
        assert wait_for(lambda: readyz(server) == 200)


def test_an_immutable_shared_memory_file_is_one_line_not_a_bus_error(served_irs, tmp_path):
    db = tmp_path / "sessions.db"
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE t (x)")
    shm = Path(f"{db}-shm")
    done = subprocess.run(["chattr", "+i", str(shm)], capture_output=True, text=True)
    if done.returncode != 0:
        connection.close()
        pytest.skip(f"cannot make a file immutable here: {done.stderr.strip()}")
    try:
        server = ServiceServer([served_irs], store=f"sqlite:{db}")
        finished = subprocess.run(server.command(), capture_output=True, text=True, timeout=60,
                                  cwd=ROOT)
        assert finished.returncode == 2, finished
        lines = finished.stderr.strip().splitlines()
        assert len(lines) == 1 and "read-only (or immutable)" in lines[0], finished.stderr
    finally:
        subprocess.run(["chattr", "-i", str(shm)], capture_output=True)
        connection.close()


@pytest.mark.slow
def test_big_records_do_not_grow_the_wal_past_its_limit(tmp_path):
    """1 MiB records, 120 of them without a pause: the WAL was checkpointed every 500 writes
    only and never cut back, so it grew to the sum of the records (here 120 MiB)."""
    db = tmp_path / "sessions.db"

    async def main() -> int:
        store = open_store(f"sqlite:{db}", 3600)
        record, largest, version = os.urandom(1 << 20), 0, 0
        try:
            for _ in range(120):
                version = await store.put("big", record, version, time.time())
                await asyncio.sleep(0)
                largest = max(largest, os.path.getsize(f"{db}-wal"))
        finally:
            await store.close()
        return largest

    largest = asyncio.run(main())
    assert largest <= WAL_LIMIT + (4 << 20), f"the WAL reached {largest >> 20} MiB"


def record_size(db: Path, session_id: str) -> int:
    """The bytes of a session's stored record, read as another process reads the file."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = connection.execute("SELECT length(data) FROM sessions WHERE id = ?",
                                 (session_id,)).fetchone()
    finally:
        connection.close()
    return row[0] if row else 0


@pytest.mark.slow
def test_a_wal_filled_by_64_kib_messages_is_checkpointed_and_cut_back(served_irs, tmp_path):
    """The finding: a SQLite WAL filled by 64 KiB messages grew to 1.1 GB and never shrank
    (checkpoints came every 500 writes only, and a WAL started over kept its size). Here a
    real server takes up to 200 messages of 60,000 characters (a record holds the last 6
    turns: up to 360 KB) until more than the bound is written (without checkpoints the WAL holds it all); the WAL stays under
    the bound meanwhile and is back under it once the writes are done. Bounded: 200 big and
    20 small messages, 150 s."""
    db = tmp_path / "sessions.db"
    wal = Path(f"{db}-wal")
    bound = 2 * WAL_LIMIT + (4 << 20)  # a checkpoint's worth (16 MiB), and what comes meanwhile
    with ServiceServer([served_irs], store=f"sqlite:{db}") as server:
        session_id, largest, written = conversation(server), 0, 0
        deadline = time.monotonic() + 150
        text = ("abcdefgh " * 7000)[:60000]
        for _ in range(200):
            if time.monotonic() > deadline or written > bound + (8 << 20):
                break
            status, body, _ = server.call("POST", "/dm/v1/message",
                                          {"session_id": session_id, "text": text})
            if status == 409:  # the conversation ended: another one
                session_id = conversation(server)
                continue
            assert status == 200, body
            written += record_size(db, session_id)
            largest = max(largest, wal.stat().st_size)
        assert written > bound, f"only {written >> 20} MiB written: nothing shown"
        assert largest <= bound, f"the WAL reached {largest >> 20} MiB"
        for _ in range(20):  # small writes after, 0.2 s apart: the WAL is cut back
            if wal.stat().st_size <= WAL_LIMIT:
                break
            turn(server, conversation(server))
            time.sleep(0.2)
        assert wal.stat().st_size <= WAL_LIMIT, f"the WAL stays at {wal.stat().st_size >> 20} MiB"


@needs_redis
def test_a_frozen_redis_is_503_within_the_store_timeout_and_nothing_is_lost(served_irs):
    redis = RedisServer().start()
    try:
        with ServiceServer([served_irs], store=redis.url,
                           extra=["--store-timeout", "1"]) as server:
            session_id = conversation(server)
            status, body = turn(server, session_id)
            assert status == 200
            acknowledged = body["version"]
            os.kill(redis.process.pid, signal.SIGSTOP)
            try:
                started = time.monotonic()
                assert_unavailable(*turn(server, session_id, timeout=30))
                assert time.monotonic() - started < 3.0
                assert wait_for(lambda: readyz(server) == 503, 10)
            finally:
                os.kill(redis.process.pid, signal.SIGCONT)
            assert wait_for(lambda: readyz(server) == 200, 10)
            status, view, _ = server.call("GET", f"/dm/v1/session/{session_id}")
            assert status == 200 and view["version"] >= acknowledged
            assert turn(server, session_id)[0] in (200, 409)
    finally:
        redis.stop()

