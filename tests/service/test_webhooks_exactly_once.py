"""Exactly once through a real `mgi serve` (SPEC 8.4, 17.8, 17.9): the turn lease and the
reuse of a completed action, each shown by a test that fails when it is taken away.

1. Two servers on one SQLite store, two messages to one session: the receiver holds the
   first call until a second call arrives (or a deadline passes). With the lease the second
   attempt waits for the first one's save and runs the next turn, so each action id reaches
   the receiver once; without it both attempts send turn 1's action.
2. A real crash: the server is SIGKILLed while the receiver holds the call (after the call,
   before the save). Restarted, the retried message sends the same Idempotency-Key once more
   (at least once, one key; the receiver acts once); asked again, the answer comes from the
   saved turn and nothing is sent.
3. A version conflict after the call (another attempt took the lease and gave it back while
   the call was open): the turn is retried on the new version with the completed action
   reused, so the receiver sees the key once.
"""

from __future__ import annotations

import asyncio
import threading

import msgspec
import pytest

from interpreter.service.sessions import decode_record, encode_record
from interpreter.stores.records import open_store
from support.service_server import Client, ServiceServer, wait_for
from test_webhooks import compiled, scenario
from test_webhooks_service import every_turn_calls
from support.webhook_receiver import Receiver

INFORM = {"dialogue_act": "inform"}


@pytest.fixture
def receiver():
    with Receiver() as running:
        yield running


def ir_file(tmp_path, data: dict):
    path = tmp_path / "orders.ir"
    path.write_bytes(compiled(data)[0])
    return path


def send(port: int, body: dict, answers: list) -> None:
    """One message; its (status, answer), or the error a killed server gives."""
    client = Client(port)
    try:
        answers.append(client.call("POST", "/dm/v1/message", body)[:2])
    except OSError as error:
        answers.append(("dropped", str(error)))
    finally:
        client.close()


def in_thread(*args) -> threading.Thread:
    thread = threading.Thread(target=send, args=args, daemon=True)
    thread.start()
    return thread


def create(server: ServiceServer, session_id: str) -> None:
    status, answer, _ = server.call("POST", "/dm/v1/session",
                                    {"scenario": "orders", "session_id": session_id})
    assert status == 201, answer


def test_two_servers_racing_on_one_session_send_each_action_once(receiver, tmp_path):
    path = ir_file(tmp_path, every_turn_calls(receiver.base + "/ok"))
    store = f"sqlite:{tmp_path / 'sessions.db'}"

    def hold_the_first(request: dict) -> None:
        if len(receiver.requests) == 1:  # until a second call arrives (none with the lease)
            wait_for(lambda: len(receiver.requests) > 1, timeout=3)

    receiver.before = hold_the_first
    with ServiceServer([path], store=store) as first, ServiceServer([path], store=store) as second:
        create(first, "race")
        answers: list = []
        threads = [in_thread(first.port, {"session_id": "race", "text": "one",
                                          "nlu": INFORM}, answers)]
        assert wait_for(lambda: len(receiver.requests) == 1)  # the first call is open
        threads.append(in_thread(second.port, {"session_id": "race", "text": "two",
                                               "nlu": INFORM}, answers))
        for thread in threads:
            thread.join(60)
    assert [status for status, _ in answers] == [200, 200], answers
    assert sorted(answer["turn"]["turn"] for _, answer in answers) == [1, 2]
    assert len({answer["version"] for _, answer in answers}) == 2  # one save after the other
    assert receiver.keys() == ["race:1:hook", "race:2:hook"]  # each action id once


def test_a_crash_between_the_call_and_the_save_then_the_retry(receiver, tmp_path):
    path = ir_file(tmp_path, scenario(receiver.base + "/ok", timeout_seconds=1))
    store = f"sqlite:{tmp_path / 'sessions.db'}"
    killed = threading.Event()

    def hold_until_killed(request: dict) -> None:
        if len(receiver.requests) == 1:
            killed.wait(30)  # the server dies while its call is open

    receiver.before = hold_until_killed
    message = {"session_id": "s", "text": "where is it", "nlu": INFORM, "message_id": "m1"}
    server = ServiceServer([path], store=store).start()
    try:
        create(server, "s")
        answers: list = []
        thread = in_thread(server.port, message, answers)
        assert wait_for(lambda: len(receiver.requests) == 1)
        server.kill()  # after the call, before the save
    finally:
        killed.set()
        server.kill()
    thread.join(30)
    assert answers and answers[0][0] == "dropped", answers  # never acknowledged
    assert wait_for(lambda: receiver.effects == ["s:1:lookup"])  # the receiver acted
    with ServiceServer([path], store=store) as again:
        status, answer, _ = again.call("POST", "/dm/v1/message", message)
        assert status == 200 and answer["replayed"] is False, answer
        assert "shipped" in answer["turn"]["response"] and answer["turn"]["turn"] == 1
        assert receiver.keys() == ["s:1:lookup", "s:1:lookup"]  # the same key, sent again
        assert receiver.effects == ["s:1:lookup"]  # which the receiver recognised
        status, replay, _ = again.call("POST", "/dm/v1/message", message)
        assert status == 200 and replay["replayed"] is True
        assert replay["turn"] == answer["turn"]
    assert receiver.keys() == ["s:1:lookup", "s:1:lookup"]  # completed: nothing sent again


def give_the_lease_back(database: str, session_id: str) -> None:
    """What another attempt does that took an expired lease and failed before its save:
    the same turn, a new version, no lease."""
    async def write() -> None:
        store = open_store(f"sqlite:{database}")
        try:
            stored = await store.get(session_id)
            record = decode_record(stored.data)
            await store.put(session_id, encode_record(msgspec.structs.replace(
                record, lease_until=0.0)), stored.version, stored.updated_at)
        finally:
            await store.close()

    asyncio.run(write())


def test_a_turn_retried_after_a_version_conflict_reuses_the_completed_action(receiver,
                                                                            tmp_path):
    path = ir_file(tmp_path, scenario(receiver.base + "/ok"))
    database = tmp_path / "sessions.db"

    def conflict_while_open(request: dict) -> None:
        if len(receiver.requests) == 1:
            give_the_lease_back(str(database), "s")

    receiver.before = conflict_while_open
    with ServiceServer([path], store=f"sqlite:{database}") as server:
        create(server, "s")
        status, answer, _ = server.call("POST", "/dm/v1/message", {
            "session_id": "s", "text": "where is it", "nlu": INFORM})
    assert status == 200 and "shipped" in answer["turn"]["response"], answer
    assert answer["turn"]["turn"] == 1
    assert receiver.keys() == ["s:1:lookup"]  # the retried turn reused the completed run
