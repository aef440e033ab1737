"""SPEC 11.1 quotas, 17.5 and 17.7: what one client can take from a real `mgi serve`.

Sessions created per client address a minute (`--rate`: 429 `rate_limited` with
`Retry-After`; behind a trusted proxy, by `X-Forwarded-For`), live sessions per store
(`--max-sessions`: 503 `store_full`), and metric labels only for registered scenarios
(inline ones count under "(inline)"). Loops are bounded in count.
"""

from __future__ import annotations

import json


from service_server import ROOT, ServiceServer

SENIMATE = json.loads((ROOT / "scenarios" / "senimate.json").read_text(encoding="utf-8"))


def create(server: ServiceServer, headers: dict | None = None) -> tuple:
    return server.call("POST", "/dm/v1/session", {"scenario": "clinic_booking"},
                       headers=headers)


def test_sessions_created_past_the_rate_are_429_with_retry_after(served_irs):
    with ServiceServer([served_irs], extra=["--rate", "5"]) as server:
        statuses = [create(server)[0] for _ in range(5)]
        assert statuses == [201] * 5
        status, body, headers = create(server)
        assert status == 429 and body["error"]["code"] == "rate_limited", body
        assert 1 <= int(headers["retry-after"]) <= 12
        status, body, _ = server.call("POST", "/dm/v1/session/json",
                                      {"scenario_json": SENIMATE})
        assert status == 429, body  # refused before the compile


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_rate(served_irs):
    with ServiceServer([served_irs], extra=["--rate", "2", "--forwarded-allow-ips",
                                            "127.0.0.1"]) as server:
        for client in ("10.0.0.1", "10.0.0.2"):
            forwarded = {"X-Forwarded-For": f"203.0.113.9, {client}"}
            assert [create(server, forwarded)[0] for _ in range(3)] == [201, 201, 429]


def test_an_untrusted_peer_cannot_pick_its_address(served_irs):
    with ServiceServer([served_irs], extra=["--rate", "2"]) as server:
        answers = [create(server, {"X-Forwarded-For": f"10.0.0.{i}"})[0] for i in range(3)]
        assert answers == [201, 201, 429]


def test_past_max_sessions_creation_is_503_store_full(served_irs, tmp_path):
    with ServiceServer([served_irs], store=f"sqlite:{tmp_path}/s.db",
                       extra=["--max-sessions", "3"]) as server:
        assert [create(server)[0] for _ in range(3)] == [201] * 3
        status, body, _ = create(server)
        assert status == 503 and body["error"]["code"] == "store_full", body


def test_inline_scenarios_are_one_metric_label(served_irs):
    with ServiceServer([served_irs]) as server:
        for i in range(3):
            scenario = json.loads(json.dumps(SENIMATE))
            scenario["metadata"]["name"] = f"posted_{i}"
            status, made, _ = server.call("POST", "/dm/v1/session/json",
                                          {"scenario_json": scenario}, timeout=60)
            assert status == 201, made
            server.call("POST", "/dm/v1/message", {"session_id": made["session_id"],
                                                   "text": "안녕"})
        _, text, _ = server.call("GET", "/metrics")
        assert "posted_" not in text
        assert 'scenario="(inline)"' in text
