"""SPEC 11.1: nothing that depends on a scenario's size runs on the event loop.

The finding: the first message on a scenario with many patterns froze the whole server for
12.6 s while its patterns were prepared on the loop (20 s again after the cache evicted
them). Here a real `mgi serve` serves a scenario of 1,200 intent patterns (about 6 s of CPU
to prepare on this machine); while one client creates a session on it and sends the first
message, `/healthz` from another client answers in under 1 s every time. Bounded: at most
400 health checks, 120 s.
"""

from __future__ import annotations

import json
import threading
import time

from conftest import run_mgc
from support.pathological import many_patterns
from support.service_server import ServiceServer


def test_a_first_message_on_a_scenario_with_many_patterns_holds_nobody(served_irs, tmp_path):
    source = tmp_path / "many_patterns.json"
    source.write_text(json.dumps(many_patterns(), ensure_ascii=False), encoding="utf-8")
    folder = tmp_path / "irs"
    folder.mkdir()
    done = run_mgc("compile", source, "-o", folder / "many_patterns.ir", timeout=120)
    assert done.returncode == 0, done.stderr
    with ServiceServer([folder], extra=["--nlu", "rules"]) as server:
        answers: list = []

        def first_conversation() -> None:
            status, made, _ = server.call("POST", "/dm/v1/session",
                                          {"scenario": "many_patterns"}, timeout=120)
            answers.append((status, made))
            if status == 201:
                answers.append(server.call("POST", "/dm/v1/message", {
                    "session_id": made["session_id"], "text": "word7x2 12-abc 2"},
                    timeout=120)[:2])

        talking = threading.Thread(target=first_conversation)
        talking.start()
        latencies = []
        deadline = time.monotonic() + 120
        while talking.is_alive() and len(latencies) < 400 and time.monotonic() < deadline:
            started = time.monotonic()
            status, body, _ = server.call("GET", "/healthz", timeout=30)
            latencies.append(time.monotonic() - started)
            assert status == 200, body
            time.sleep(0.05)
        talking.join(120)
        assert [a[0] for a in answers] == [201, 200], answers
        assert answers[1][1]["turn"]["nlu"]["intent"] == "i7", answers[1]
        assert len(latencies) >= 3, "the first conversation was too quick to show anything"
        assert max(latencies) < 1.0, f"/healthz waited {max(latencies):.1f} s"
