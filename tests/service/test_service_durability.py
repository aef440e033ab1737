"""An acknowledged turn is durable (SPEC 11): `mgi serve` killed with SIGKILL under load, on
SQLite (one and two workers) and on Redis (the redis-server killed too and restarted from its
append-only file), then started again on the same store, has lost no turn it answered 200 and
applied none twice; SIGTERM under load answers every turn in flight (never a 5xx), exits 0,
and the answered turns are there after a restart.
"""

from __future__ import annotations

import http.client
import os
import signal
import threading
import time

import pytest

from interpreter.state import HISTORY_LIMIT
from support.redis_server import RedisServer, needs_redis
from support.service_server import Client, ServiceServer
from test_service_sessions import FOCUS, create, descendants, send, serving, view

SESSIONS = 8  # one sequential client each
AT_LEAST = 40 * SESSIONS  # turns acknowledged before a signal is sent (10 s at most)


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def kill_all(server: ServiceServer) -> None:
    """SIGKILL the server and every process it started, as a crash of its host would."""
    below = descendants(server.process.pid)
    server.kill()
    for pid in below:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    while not all(gone(pid) for pid in below) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert all(gone(pid) for pid in below)


class Load:
    """SESSIONS threads, each sending turns to its own session one after another until its
    connection fails; every answer's status and every acknowledged version, by session."""

    def __init__(self, server: ServiceServer, sessions: list[str]):
        self.sessions = sessions
        self.statuses: list[int] = []
        self.acked: dict[str, list[int]] = {sid: [] for sid in sessions}
        self.ended: dict[str, str] = {}
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._client, args=(server.port, i, sid))
                        for i, sid in enumerate(sessions)]
        for thread in self.threads:
            thread.start()

    def _client(self, port: int, index: int, sid: str) -> None:
        connection = Client(port, timeout=30)
        try:
            for k in range(100_000):
                try:
                    status, answer, _ = connection.call(
                        "POST", "/dm/v1/message", {"session_id": sid, "text": text(index, k)})
                except (OSError, http.client.HTTPException) as error:
                    self.ended[sid] = type(error).__name__
                    return
                with self._lock:
                    self.statuses.append(status)
                    if status == 200:
                        assert answer["turn"]["user"] == text(index, k)
                        self.acked[sid].append(answer["version"])
        finally:
            connection.close()

    def wait_for(self, turns: int, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while sum(map(len, self.acked.values())) < turns and time.monotonic() < deadline:
            time.sleep(0.02)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(40)
        assert not any(t.is_alive() for t in self.threads), "a client hung"
        assert set(self.ended) == set(self.sessions)  # each stopped on a failed connection


def text(index: int, k: int) -> str:
    return f"세션 {index} 말씀 {k}"


def start_sessions(server: ServiceServer) -> list[str]:
    return [create(server, {**FOCUS, "session_id": f"durable-{i}"})["session_id"]
            for i in range(SESSIONS)]


def check_nothing_lost(server: ServiceServer, load: Load) -> int:
    """Every session holds at least its acknowledged turns, at most one more (the turn in
    flight), each once and in order; then it takes its next turn. The turns acknowledged."""
    unanswered = 0
    for index, sid in enumerate(load.sessions):
        acked = load.acked[sid]
        assert acked == list(range(2, len(acked) + 2))  # answered in order, none skipped
        last = acked[-1] if acked else 1
        status, seen = view(server, sid)
        assert status == 200, seen
        version = seen["version"]
        assert last <= version <= last + 1, (sid, last, version)
        unanswered += version - last
        said = [None] + [text(index, k) for k in range(version - 1)]  # opening: version 1
        users = [entry["user"] for entry in seen["history"]]
        assert users == said[-HISTORY_LIMIT:]  # the last turns, each once, in order
        status, answer = send(server, sid, "다시 왔어요")
        assert status == 200, answer
        assert (answer["version"], answer["turn"]["turn"]) == (version + 1, version + 1)
    print(f"\n{unanswered} of {len(load.sessions)} sessions stored a turn never answered")
    return sum(map(len, load.acked.values()))


@pytest.mark.parametrize("workers", [1, 2])
def test_sigkill_of_a_server_on_sqlite_loses_no_acknowledged_turn(served_irs, tmp_path, workers):
    store = f"sqlite:{tmp_path / 'sessions.db'}"
    extra = ["--workers", str(workers)]
    with serving(ServiceServer([served_irs], store=store, extra=extra)) as (server,):
        load = Load(server, start_sessions(server))
        load.wait_for(AT_LEAST, 10)
        time.sleep(0.2)  # and a little more, so the kill lands mid-turn
        kill_all(server)
        load.join()
    assert set(load.statuses) == {200}
    with serving(ServiceServer([served_irs], store=store, extra=extra)) as (again,):
        acknowledged = check_nothing_lost(again, load)
    assert acknowledged >= 10 * SESSIONS  # the kill came under load
    print(f"\nsqlite, {workers} worker(s): {acknowledged} turns acknowledged before SIGKILL")


@needs_redis
def test_sigkill_of_a_server_and_of_redis_loses_no_acknowledged_turn(served_irs):
    redis = RedisServer().start()
    try:
        with serving(ServiceServer([served_irs], store=redis.url)) as (server,):
            load = Load(server, start_sessions(server))
            load.wait_for(AT_LEAST, 10)
            time.sleep(0.2)  # and a little more, so the kill lands mid-turn
            redis.kill()  # first the store, with acknowledged writes just before
            kill_all(server)
            load.join()
        assert set(load.statuses) <= {200, 503}  # 503: the store was gone, nothing acked
        redis.restart()  # from its append-only file
        with serving(ServiceServer([served_irs], store=redis.url)) as (again,):
            acknowledged = check_nothing_lost(again, load)
        assert acknowledged >= 10 * SESSIONS  # the kill came under load
        print(f"\nredis: {acknowledged} turns acknowledged before SIGKILL of both")
    finally:
        redis.stop()


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_under_load_answers_the_turns_in_flight_and_exits_0(served_irs, tmp_path, workers):
    store = f"sqlite:{tmp_path / 'sessions.db'}"
    extra = ["--workers", str(workers)]
    with serving(ServiceServer([served_irs], store=store, extra=extra)) as (server,):
        load = Load(server, start_sessions(server))
        load.wait_for(AT_LEAST, 10)
        before = len(load.statuses)
        server.process.send_signal(signal.SIGTERM)
        load.join()  # every request answered, or its connection closed
        assert server.process.wait(30) == 0, server.log()[-2000:]
    assert set(load.statuses) == {200}  # never a 5xx (nor anything else) while stopping
    assert len(load.statuses) > before  # turns in flight at the signal were answered
    assert "Traceback" not in server.log()
    with serving(ServiceServer([served_irs], store=store, extra=extra)) as (again,):
        check_nothing_lost(again, load)
