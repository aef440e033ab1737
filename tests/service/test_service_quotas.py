"""SPEC 11.1 quotas, 17.5 and 17.7: what one client can take from a real `mgi serve`.

Sessions created per client address a minute (`--rate`: 429 `rate_limited` with
`Retry-After`; behind a trusted proxy, by `X-Forwarded-For`), live sessions per store
(`--max-sessions`: 503 `store_full`), and metric labels only for registered scenarios
(inline ones count under "(inline)"), and inline IRs removed from the store (SQLite, Redis
with a TTL on the blob that turns refresh) once no live session uses them. Loops are bounded
in count.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path


from support.redis_server import RedisServer, needs_redis
from support.service_server import ROOT, ServiceServer

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


# --- SPEC 11.1 and 17.7: inline scenarios do not stay compiled in the store forever --------

TTL = 2.0  # --session-ttl of these servers: an IR unused that long (and 0.5 s) is removed


def posted(name: str) -> dict:
    scenario = json.loads(json.dumps(SENIMATE))
    scenario["metadata"]["name"] = name
    return scenario


def inline_session(server: ServiceServer, name: str) -> tuple[str, str]:
    status, made, _ = server.call("POST", "/dm/v1/session/json",
                                  {"scenario_json": posted(name)}, timeout=60)
    assert status == 201, made
    return made["session_id"], made["ir_hash"]


def talk(server: ServiceServer, session_id: str) -> None:
    status, body, _ = server.call("POST", "/dm/v1/message",
                                  {"session_id": session_id, "text": "안녕"})
    assert status in (200, 409), body


def outlive(server: ServiceServer, kept: str, gone, seconds: float) -> bool:
    """Turns of the session `kept` every 0.3 s until `gone()` and at least `seconds` have
    passed (bounded: 60 turns); whether `gone()` came true."""
    started = time.monotonic()
    for _ in range(60):
        talk(server, kept)
        if gone() and time.monotonic() - started >= seconds:
            return True
        time.sleep(0.3)
    return False


def sqlite_has_ir(db: Path, ir_hash: str) -> bool:
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return connection.execute("SELECT count(*) FROM ir_blobs WHERE hash = ?",
                                  (ir_hash,)).fetchone()[0] == 1
    finally:
        connection.close()


def test_sqlite_removes_an_inline_ir_once_no_live_session_uses_it(served_irs, tmp_path):
    """Before: every posted scenario's IR stayed in `ir_blobs` for good."""
    db = tmp_path / "s.db"
    with ServiceServer([served_irs], store=f"sqlite:{db}",
                       extra=["--session-ttl", str(TTL)]) as server:
        left, left_hash = inline_session(server, "left_alone")
        kept, kept_hash = inline_session(server, "still_talking")
        talk(server, left)
        assert sqlite_has_ir(db, left_hash) and sqlite_has_ir(db, kept_hash)
        assert outlive(server, kept, lambda: not sqlite_has_ir(db, left_hash), 2 * TTL)
        assert sqlite_has_ir(db, kept_hash)  # its turns kept it, well past the TTL
        assert server.call("GET", f"/dm/v1/session/{left}")[0] == 404


@needs_redis
def test_redis_ir_blobs_carry_a_ttl_that_turns_refresh(served_irs):
    import redis as redis_py

    server_redis = RedisServer().start()
    client = redis_py.Redis(port=server_redis.port)
    try:
        with ServiceServer([served_irs], store=server_redis.url,
                           extra=["--session-ttl", str(TTL)]) as server:
            left, left_hash = inline_session(server, "left_alone")
            kept, kept_hash = inline_session(server, "still_talking")
            for ir_hash in (left_hash, kept_hash):
                assert 0 < client.pttl(f"mago:ir:{ir_hash}") <= (TTL + 0.5) * 1000
            assert outlive(server, kept, lambda: not client.exists(f"mago:ir:{left_hash}"),
                           2 * TTL)
            assert client.pttl(f"mago:ir:{kept_hash}") > 0
    finally:
        client.close()
        server_redis.stop()


def deleted(server: ServiceServer, session_id: str) -> None:
    assert server.call("DELETE", f"/dm/v1/session/{session_id}")[0] == 204


def test_sqlite_delete_of_the_last_session_removes_its_inline_ir_at_once(served_irs,
                                                                        tmp_path):
    """Before: after DELETE the IR stayed for the TTL (a day by default)."""
    db = tmp_path / "s.db"
    with ServiceServer([served_irs], store=f"sqlite:{db}") as server:
        first, ir_hash = inline_session(server, "posted_twice")
        second, same = inline_session(server, "posted_twice")
        assert same == ir_hash
        deleted(server, first)
        assert sqlite_has_ir(db, ir_hash)  # the second session still runs on it
        talk(server, second)
        deleted(server, second)
        assert not sqlite_has_ir(db, ir_hash)
        third, _ = inline_session(server, "posted_twice")  # posted again: stored again
        assert sqlite_has_ir(db, ir_hash)
        talk(server, third)


@needs_redis
def test_redis_delete_of_the_last_session_removes_its_inline_ir_at_once(served_irs):
    import redis as redis_py

    server_redis = RedisServer().start()
    client = redis_py.Redis(port=server_redis.port)
    try:
        with ServiceServer([served_irs], store=server_redis.url) as server:
            first, ir_hash = inline_session(server, "posted_twice")
            second, _ = inline_session(server, "posted_twice")
            registered = server.call("POST", "/dm/v1/session",
                                     {"scenario": "clinic_booking"})[1]
            deleted(server, first)
            assert client.exists(f"mago:ir:{ir_hash}")
            deleted(server, second)
            assert not client.exists(f"mago:ir:{ir_hash}", f"mago:ir-users:{ir_hash}")
            deleted(server, registered["session_id"])
            assert client.exists(f"mago:ir:{registered['ir_hash']}")
    finally:
        client.close()
        server_redis.stop()
