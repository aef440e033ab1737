"""Safety events in the service (SPEC 10): a warning log line, a metric, a POST to --alert-url.

A real `mgi serve` on a loopback port sends its events to a real HTTP receiver on another
loopback port (`Receiver`, a `http.server` in a thread, stopped by the test). The receiver
can refuse the first posts (5xx) to show the retries, or hold every post to show that the
turn never waits for its alert.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from support.service_server import ServiceServer

CRISIS = "죽고 싶어요"  # self_harm in the built-in lexicon
NEAR_MISS = "배고파 죽겠다"  # an idiom, not an emergency


class Receiver:
    """Records every POST body; answers `failures` 503s first, or holds each for `hold` s."""

    def __init__(self, failures: int = 0, hold: float = 0.0):
        self.bodies: list[dict] = []
        self.attempts = 0
        self.failures, self.hold = failures, hold
        self.got = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.attempts += 1
                if receiver.hold:
                    time.sleep(receiver.hold)
                status = 503 if receiver.attempts <= receiver.failures else 204
                if status == 204:
                    receiver.bodies.append(json.loads(body))
                    receiver.got.set()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/alerts"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    running = Receiver(failures=2)
    yield running
    running.stop()


def open_session(server: ServiceServer) -> str:
    status, answer, _ = server.call("POST", "/dm/v1/session", {"scenario": "senimate"})
    assert status == 201, answer
    return answer["session_id"]


def say(server: ServiceServer, session_id: str, text: str) -> dict:
    status, answer, _ = server.call("POST", "/dm/v1/message",
                                    {"session_id": session_id, "text": text})
    assert status == 200, answer
    return answer["turn"]


def wait_for_metric(server: ServiceServer, line: str, seconds: float = 5) -> str:
    """The metrics text once it holds `line` (the server counts a delivery after its POST
    returns, just after the receiver has the body), or as it is after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        _, metrics, _ = server.call("GET", "/metrics")
        if line in metrics or time.monotonic() > deadline:
            return metrics
        time.sleep(0.05)


def test_a_safety_turn_is_logged_counted_and_posted_after_retries(served_irs, receiver):
    with ServiceServer([served_irs], extra=["--alert-url", receiver.url]) as server:
        session_id = open_session(server)
        assert not say(server, session_id, NEAR_MISS)["reason"].startswith("safety:")
        turn = say(server, session_id, CRISIS)
        assert turn["reason"] == "safety:self_harm"
        assert receiver.got.wait(10), "the alert never arrived"
        metrics = wait_for_metric(server, 'mago_safety_alerts_total{outcome="sent"} 1.0')
        log = server.log()
    assert receiver.attempts == 3  # two refusals, then delivered
    (event,) = receiver.bodies
    assert event["category"] == "self_harm" and event["session_id"] == session_id
    assert event["scenario"] == "senimate" and event["next_node"] == turn["next_node"]
    assert CRISIS not in json.dumps(event, ensure_ascii=False)  # never the user's text
    warnings = [line for line in map(json.loads, filter(None, log.splitlines()))
                if line.get("message") == "safety event"]
    assert [(w["level"], w["session_id"], w["category"]) for w in warnings] == [
        ("warning", session_id, "self_harm")]
    assert CRISIS not in log
    assert 'mago_safety_events_total{category="self_harm",scenario="senimate"} 1.0' in metrics
    assert 'mago_safety_alerts_total{outcome="sent"} 1.0' in metrics


def test_the_turn_never_waits_for_its_alert(served_irs):
    holding = Receiver(hold=5.0)
    try:
        with ServiceServer([served_irs], extra=["--alert-url", holding.url]) as server:
            session_id = open_session(server)
            started = time.monotonic()
            turn = say(server, session_id, CRISIS)
            elapsed = time.monotonic() - started
            assert turn["reason"] == "safety:self_harm"
            assert elapsed < 1.0, f"the turn waited {elapsed:.2f} s for its alert"
            assert say(server, session_id, "네")  # the session goes on meanwhile
    finally:
        holding.stop()


def test_an_alert_url_that_is_not_http_is_refused_in_one_line(served_irs):
    server = ServiceServer([served_irs], extra=["--alert-url", "ftp://example.org/x"])
    done = subprocess.run(server.command(), capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--alert-url" in done.stderr
