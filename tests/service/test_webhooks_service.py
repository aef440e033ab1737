"""Webhooks through a real `mgi serve` (SPEC 15, 17.1, 17.6, 17.9).

1. 64 sessions at once, each calling a receiver, have their 64 calls open at the same time
   (the turns run in the bounded turn executor, whose threads are started before the first
   turn, off the loop), and `/healthz` answers while all 64 are held open. How long a batch
   takes and how fast `/healthz` answers meanwhile is measured by
   tests/benchmarks/webhook_healthz.py.
2. A scenario posted to `/session/json` with a webhook is 422 `webhook_not_allowed`; on
   `/session/validate` it is an E113 diagnostic. With `--allow-api-webhooks` (which needs
   `MAGO_WEBHOOK_HOSTS`), a listed public-looking host is allowed, an unlisted one, a
   loopback address and a `${NAME}` are refused.
3. A start file whose webhook reads an unset variable is one line at start, exit 2.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from conftest import ROOT
from interpreter.service.webhooks import TurnExecutor
from support.service_server import Client, ServiceServer, wait_for
from test_webhooks import compiled, scenario
from support.webhook_receiver import Receiver

SESSIONS = 64
PROBES = 20  # `/healthz` calls while the 64 turns are held
HOLD_SECONDS = 20  # the receiver holds a call at most this long (under the 30 s budget)


@pytest.fixture
def receiver():
    with Receiver() as running:
        yield running


def served_ir(tmp_path, url: str, **options):
    path = tmp_path / "orders.ir"
    path.write_bytes(compiled(scenario(url, **options))[0])
    return path


def one_turn(client: Client, number: int, answers: list) -> None:
    status, answer, _ = client.call("POST", "/dm/v1/message", {
        "session_id": f"c{number}", "text": "where is it", "nlu": {"dialogue_act": "inform"}})
    answers.append((status, answer))


def test_64_sessions_call_at_once_and_healthz_answers_while_they_wait(receiver, tmp_path):
    """The receiver holds every call until 64 are open at once: the turns run side by side
    (one at a time, or a pool smaller than 64, could never have 64 open). While all 64 are
    held, `/healthz` answers every probe, and the turns' own requests are still unanswered:
    the event loop is not blocked by turns in flight. Then they are let go and each answers.
    How fast `/healthz` answers (under 50 ms) is measured by tests/benchmarks/webhook_healthz.py."""
    # the longest budget (30 s) and no retries: a held call is neither timed out nor resent
    ir_file = served_ir(tmp_path, receiver.base + "/slow", timeout_seconds=30, retries=0)
    gate = threading.Event()
    with ServiceServer([ir_file]) as server:
        answers: list = []
        clients = [Client(server.port) for _ in range(SESSIONS)]
        for number, client in enumerate(clients, 1):  # the sessions first, one by one
            status, created, _ = client.call("POST", "/dm/v1/session",
                                             {"scenario": "orders", "session_id": f"c{number}"})
            assert status == 201, created
        warm = Client(server.port)  # a first session and call, not held
        assert warm.call("POST", "/dm/v1/session", {"scenario": "orders",
                                                    "session_id": "c0"})[0] == 201
        one_turn(warm, 0, [])
        warm.close()
        receiver.before = lambda request: gate.wait(HOLD_SECONDS)
        threads = [threading.Thread(target=one_turn, args=(client, n, answers))
                   for n, client in enumerate(clients, 1)]
        try:
            for thread in threads:
                thread.start()
            assert wait_for(lambda: len(receiver.requests) == SESSIONS + 1, HOLD_SECONDS), \
                f"{len(receiver.requests) - 1} of {SESSIONS} calls open at once"
            probe = Client(server.port)
            for _ in range(PROBES):
                status, health, _ = probe.call("GET", "/healthz")
                assert status == 200, health
            probe.close()
            assert answers == [] and len(receiver.requests) == SESSIONS + 1  # all still held
        finally:
            gate.set()
            for thread in threads:
                thread.join(60)
            for client in clients:
                client.close()
    assert len(answers) == SESSIONS
    assert all(status == 200 and "shipped" in answer["turn"]["response"]
               for status, answer in answers), answers[:3]
    assert len(receiver.effects) == len(receiver.requests) == SESSIONS + 1  # none resent


def test_the_turn_executor_starts_its_threads_before_the_first_turn():
    """`ThreadPoolExecutor` would start a thread inside a submit on the event loop, and
    `Thread.start` waits for the new thread: measured holding the loop for up to a second."""
    executor = TurnExecutor(8)
    try:
        executor.prestart()
        names = [t.name for t in threading.enumerate() if t.name.startswith("turn")]
        assert len(names) >= 8
        assert len(executor._pool._threads) == 8  # a submit now finds an idle one
    finally:
        executor.close()


def posted(url: str, **options) -> dict:
    data = scenario(url, **options)
    data["metadata"]["name"] = "posted"
    return {"scenario_json": data}


def test_a_posted_webhook_is_refused_unless_allowed(tmp_path, receiver):
    ir_file = served_ir(tmp_path, receiver.base + "/ok")
    with ServiceServer([ir_file]) as server:
        status, answer, _ = server.call("POST", "/dm/v1/session/json",
                                        posted("https://orders.example.com/x"))
        assert status == 422 and answer["error"]["code"] == "webhook_not_allowed", answer
        status, answer, _ = server.call("POST", "/dm/v1/session/validate",
                                        posted("https://orders.example.com/x"))
        assert status == 200 and answer["errors"] == 1
        [diagnostic] = answer["diagnostics"]
        assert diagnostic["code"] == "E113" and diagnostic["path"] == "/skills/order_status"
        assert diagnostic["line"] > 1
    assert receiver.requests == []


def test_allowed_api_webhooks_need_listed_public_hosts(tmp_path, receiver):
    ir_file = served_ir(tmp_path, receiver.base + "/ok")
    env = {"MAGO_WEBHOOK_HOSTS": "orders.example.com,127.0.0.1"}
    with ServiceServer([ir_file], extra=["--allow-api-webhooks"], env=env) as server:
        def create(url: str, **options):
            return server.call("POST", "/dm/v1/session/json", posted(url, **options))

        status, answer, _ = create("https://orders.example.com/x")
        assert status == 201, answer  # listed and public-looking: allowed
        for url, why in [("https://evil.example.net/x", "not in MAGO_WEBHOOK_HOSTS"),
                         (receiver.base + "/ok", "internal address"),
                         ("${ORDERS_URL}", "environment")]:
            status, answer, _ = create(url)
            assert status == 422 and answer["error"]["code"] == "webhook_not_allowed", answer
            assert why in answer["error"]["message"]
        # the start file's own webhook to the loopback receiver is the operator's: it runs
        status, _, _ = server.call("POST", "/dm/v1/session", {"scenario": "orders",
                                                               "session_id": "own"})
        status, answer, _ = server.call("POST", "/dm/v1/message", {
            "session_id": "own", "text": "hi", "nlu": {"dialogue_act": "inform"}})
        assert status == 200 and "shipped" in answer["turn"]["response"], answer
    assert len(receiver.requests) == 1


def run_serve(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "interpreter.cli", "serve", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, **(env or {})})


def test_start_errors_are_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("ORDERS_URL", raising=False)
    monkeypatch.delenv("MAGO_WEBHOOK_HOSTS", raising=False)
    ir_file = served_ir(tmp_path, "${ORDERS_URL}")
    done = run_serve(str(ir_file), "--store", "memory:")
    assert done.returncode == 2 and "ORDERS_URL" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    other = served_ir(tmp_path, "https://orders.example.com/x")
    done = run_serve(str(other), "--store", "memory:", "--allow-api-webhooks")
    assert done.returncode == 2 and "MAGO_WEBHOOK_HOSTS" in done.stderr
    assert "Traceback" not in done.stderr and json.dumps  # one line, no traceback


def every_turn_calls(url: str) -> dict:
    """A scenario whose every turn passes a transient webhook node (one action a turn)."""
    data = scenario(url)
    data["graph"]["nodes"] = [
        {"id": "ask", "description": "Ask.", "responses": {"default": "Order {skill.data.status}."},
         "default_next": "hook"},
        {"id": "hook", "description": "Look up.", "transient": True,
         "params": {"skill": "order_status", "skill_args": {"order_id": "A-7"}},
         "default_next": "ask"},
        {"id": "done", "description": "Bye.", "terminal": True}]
    data["graph"]["entry"] = "ask"
    data["graph"]["global_transitions"] = [
        {"target": "done", "condition": 'nlu.dialogue_act == "goodbye"'}]
    return data


def test_two_workers_racing_on_one_session_never_send_one_action_twice(receiver, tmp_path):
    """SPEC 17.8: concurrent messages to one session on two workers; each turn's action id
    reaches the receiver once (the attempt that loses the lease never sends)."""
    ir_file = tmp_path / "every_turn.ir"
    ir_file.write_bytes(compiled(every_turn_calls(receiver.base + "/slow"))[0])
    store = f"sqlite:{tmp_path / 'sessions.db'}"
    with ServiceServer([ir_file], store=store, extra=["--workers", "2"]) as server:
        assert server.call("POST", "/dm/v1/session", {"scenario": "orders",
                                                      "session_id": "race"})[0] == 201
        answers: list = []

        def send(number: int) -> None:
            client = Client(server.port)
            try:
                answers.append(client.call("POST", "/dm/v1/message", {
                    "session_id": "race", "text": f"message {number}",
                    "nlu": {"dialogue_act": "inform"}})[:2])
            finally:
                client.close()

        threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    assert [status for status, _ in answers] == [200] * 8, answers
    keys = receiver.keys()
    assert len(keys) == len(set(keys)) == 8, keys  # one call per turn, none twice
    assert sorted(a["turn"]["turn"] for _, a in answers) == list(range(1, 9))
