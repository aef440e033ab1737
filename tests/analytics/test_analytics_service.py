"""Analytics through a real `mgi serve` (SPEC 16, 17.10-11): 500 scripted sessions of the clinic
scenario on SQLite and on Redis, then `mgi report --format json` and `GET /dm/v1/report` give
exactly the counts the script knows, per node and per transition.

The script's sessions take every kind of path through `scenarios/clinic_booking.json`: the
full booking, a stop after each step (abandoned there), a silent turn (a fallback), a safety
turn (an emergency at the visit step), a cancellation, a refusal at the confirmation. Each
path says, step by step, where the session must be after each message; the script checks
every answer against that, and counts from the paths alone what the report must say. The
sessions run on a small thread pool over keep-alive connections; nothing sleeps.
"""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor


from support.redis_server import needs_redis
from support.service_server import Client, ServiceServer
from test_mgi_cli import mgi

KEY = "analytics-test-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
SESSIONS = 500
LATER = "2099-01-01T00:00:00Z"  # the report's `now`: every unfinished session is abandoned

BOOKING = [("네 예약하고 싶어요", "collect_patient_info"),
           ("홍길동이에요", "collect_patient_info"),
           ("1958년생이에요", "collect_visit_info"),
           ("무릎이 아파서 정형외과로 가고 싶어요", "collect_visit_info"),
           ("2025-03-14", "collect_contact"),
           ("hong@example.com", "ask_note"),
           ("없어요", "confirm_booking"),
           ("네 맞아요", "booking_done"),
           ("감사합니다", None)]  # None: complete
SILENT = [*BOOKING[:2], ("", "collect_patient_info"), *BOOKING[2:]]
SAFETY = [*BOOKING[:3], ("가슴이 너무 아프고 숨을 못 쉬겠어요", "urgent_care"), ("네", None)]
CANCEL = [("예약 취소할게요", "booking_cancelled"), ("네", None)]
REFUSE = [*BOOKING[:7], ("아니요", "modify_booking"), ("", "modify_booking")]
PATHS = [BOOKING, SILENT, SAFETY, CANCEL, REFUSE] + [BOOKING[:k] for k in range(len(BOOKING))]


def plan() -> list[list[tuple[str, str | None]]]:
    return [PATHS[number % len(PATHS)] for number in range(SESSIONS)]


def expected(paths: list) -> dict:
    """What the report must say, from the paths alone."""
    visits, turns, drops, fallbacks, edges = Counter(), Counter(), Counter(), Counter(), Counter()
    completed, safety, lengths = 0, 0, []
    for path in paths:
        here = "greeting"
        visits[here] += 1
        for text, there in path:
            turns[here] += 1
            fallbacks[here] += text == ""
            safety += there == "urgent_care"
            if there is None:
                completed += 1
                lengths.append(len(path) + 1)  # the opening is turn 1
                break
            if there != here:
                edges[here, there] += 1
                visits[there] += 1
            here = there
        else:
            drops[here] += 1
    lengths.sort()
    middle = len(lengths) // 2
    return {"sessions": {"started": len(paths), "completed": completed,
                         "abandoned": len(paths) - completed, "active": 0, "resumed": 0},
            "visits": visits, "turns": turns, "drops": drops, "fallbacks": fallbacks,
            "edges": edges, "safety": {"medical_emergency": safety} if safety else {},
            "median": (lengths[middle] + lengths[~middle]) / 2}


def converse(port: int, numbers: list[int], paths: list) -> None:
    """The sessions `numbers`, one after the other, each turn checked against its path."""
    client = Client(port)
    try:
        for number in numbers:
            status, answer, _ = client.call("POST", "/dm/v1/session",
                                            {"scenario": "clinic_booking"}, AUTH)
            assert status == 201, answer
            for text, there in paths[number]:
                status, answer, _ = client.call(
                    "POST", "/dm/v1/message",
                    {"session_id": answer["session_id"], "text": text}, AUTH)
                assert status == 200, answer
                turn = answer["turn"]
                assert turn["next_node"] == there and turn["complete"] == (there is None), \
                    (number, text, turn)
    finally:
        client.close()


def check(report: dict, want: dict) -> None:
    (version,) = report["scenarios"]
    assert version["scenario"] == "clinic_booking" and len(version["ir_hash"]) == 64
    assert version["sessions"] == want["sessions"]
    assert version["completion_rate"] == round(want["sessions"]["completed"] / SESSIONS, 4)
    assert version["median_turns_to_complete"] == want["median"]
    nodes = {node["node"]: node for node in version["nodes"]}
    assert {n: v["visits"] for n, v in nodes.items() if v["visits"]} == dict(want["visits"])
    assert {n: v["turns"] for n, v in nodes.items() if v["turns"]} == dict(want["turns"])
    assert {n: v["drop_offs"] for n, v in nodes.items() if v["drop_offs"]} == dict(want["drops"])
    assert {n: v["fallbacks"] for n, v in nodes.items() if v["fallbacks"]} == \
        {n: c for n, c in want["fallbacks"].items() if c}
    assert {(e["from"], e["to"]): e["count"] for e in version["transitions"]} == \
        dict(want["edges"])
    assert version["safety"] == want["safety"]
    assert sum(b["count"] for b in version["confidence"]["bins"]) + \
        version["confidence"]["none"] == sum(want["turns"].values())


def run_sessions(store: str, served_irs, extra=()) -> tuple[dict, dict]:
    paths = plan()
    with ServiceServer([served_irs / "clinic_booking.ir"], store=store,
                       env={"MAGO_API_KEY": KEY}, extra=list(extra)) as server:
        with ThreadPoolExecutor(8) as pool:
            chunks = [list(range(SESSIONS))[start::8] for start in range(8)]
            for done in [pool.submit(converse, server.port, chunk, paths) for chunk in chunks]:
                done.result()
        status, api_report, _ = server.call(
            "GET", f"/dm/v1/report?scenario=clinic_booking&now={LATER}", headers=AUTH)
        assert status == 200, api_report
    return api_report, expected(paths)


def test_500_sessions_on_sqlite_are_counted_exactly(served_irs, tmp_path):
    url = f"sqlite:{tmp_path / 'sessions.db'}"
    api_report, want = run_sessions(url, served_irs)
    check(api_report, want)
    done = mgi("report", url, "--format", "json", "--now", LATER)
    assert done.returncode == 0, done.stderr
    cli_report = json.loads(done.stdout)
    check(cli_report, want)
    assert cli_report["scenarios"] == api_report["scenarios"]


@needs_redis
def test_500_sessions_on_redis_are_counted_exactly(served_irs, redis_server):
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    client.close()
    api_report, want = run_sessions(redis_server.url, served_irs)
    check(api_report, want)
    cli_report = json.loads(mgi("report", redis_server.url, "--format", "json",
                                "--now", LATER).stdout)
    assert cli_report["scenarios"] == api_report["scenarios"] and cli_report["events_lost"] == 0


# --- the endpoint's rules, on the memory store ------------------------------------------------

def report_of(server, query: str = "scenario=clinic_booking", headers=None):
    return server.call("GET", f"/dm/v1/report?{query}", headers=headers)


def start(server, scenario="clinic_booking") -> str:
    status, made, _ = server.call("POST", "/dm/v1/session", {"scenario": scenario})
    assert status == 201, made
    return made["session_id"]


def say(server, session_id: str, text: str, nlu=None) -> dict:
    body = {"session_id": session_id, "text": text, **({"nlu": nlu} if nlu else {})}
    status, answer, _ = server.call("POST", "/dm/v1/message", body)
    assert status == 200, answer
    return answer["turn"]


def test_the_report_is_refused_without_a_key_unless_public(served_irs):
    with ServiceServer([served_irs / "clinic_booking.ir"]) as closed:
        status, answer, _ = report_of(closed)
        assert (status, answer["error"]["code"]) == (403, "report_not_public")
    with ServiceServer([served_irs / "clinic_booking.ir"], extra=["--events-days", "0",
                                                                  "--public-report"]) as off:
        start(off)
        status, answer, _ = report_of(off)
        assert (status, answer["error"]["code"]) == (404, "events_off")
    with ServiceServer([served_irs / "clinic_booking.ir"], env={"MAGO_API_KEY": KEY}) as keyed:
        assert report_of(keyed)[0] == 401
        assert report_of(keyed, headers=AUTH)[0] == 200
        status, answer, _ = report_of(keyed, "scenario=clinic_booking&since=soon", AUTH)
        assert (status, answer["error"]["code"]) == (422, "invalid_request")
        assert report_of(keyed, "", AUTH)[0] == 422
        _, doc, _ = keyed.call("GET", "/openapi.json", headers=AUTH)
        operation = doc["paths"]["/dm/v1/report"]["get"]
        assert {"403", "404", "422"} <= set(operation["responses"])
        assert [p["name"] for p in operation["parameters"]] == ["scenario", "since", "now"]


def test_delete_inline_and_kept_text_through_the_server(served_irs):
    from support.service_server import ROOT

    scenario = json.loads((ROOT / "scenarios" / "clinic_booking.json").read_text())
    with ServiceServer([served_irs / "clinic_booking.ir"],
                       extra=["--public-report", "--keep-unmatched"]) as server:
        kept, gone = start(server), start(server)
        for session in (kept, gone):
            say(server, session, "네 예약하고 싶어요")
            say(server, session, "제 번호는 010-9876-5432 예요 hong@example.com",
                {"dialogue_act": None})
        assert server.call("DELETE", f"/dm/v1/session/{gone}")[0] == 204
        status, made, _ = server.call("POST", "/dm/v1/session/json",
                                      {"scenario_json": scenario})
        assert status == 201, made
        status, report, _ = report_of(server, f"scenario=clinic_booking&now={LATER}")
        (version,) = report["scenarios"]
        assert version["sessions"]["started"] == 1  # the deleted session's events are gone
        assert version["unmatched"] == {"collect_patient_info": [
            {"text": "제 번호는 <phone> 예요 <email>", "count": 1}]}
        status, inline, _ = report_of(server, "scenario=(inline)")
        (version,) = inline["scenarios"]
        assert version["scenario"] == "(inline)" and version["ir_hash"] == made["ir_hash"]
        assert version["sessions"]["started"] == 1


def test_racing_workers_write_one_event_per_applied_turn_and_a_kill_loses_none(served_irs,
                                                                               tmp_path):
    """Two worker processes on one SQLite file, the turns of each session sent all at once:
    the store's version check makes losers redo their turn, and a loser's put (with its
    event) writes nothing; then SIGKILL: every acknowledged turn has its event in the file."""
    import sqlite3

    database = tmp_path / "sessions.db"
    server = ServiceServer([served_irs / "clinic_booking.ir"], store=f"sqlite:{database}",
                           extra=["--workers", "2"])
    server.start()
    try:
        sessions = [start(server) for _ in range(4)]

        def one(session_id: str) -> int:
            client = Client(server.port)
            try:
                status, answer, _ = client.call("POST", "/dm/v1/message",
                                                {"session_id": session_id, "text": "음"})
                assert status == 200, answer
                return answer["turn"]["turn"]
            finally:
                client.close()

        with ThreadPoolExecutor(12) as pool:
            answered = list(pool.map(one, [s for s in sessions for _ in range(6)]))
        assert sorted(answered) == sorted(list(range(2, 8)) * 4)  # each turn applied once
    finally:
        server.kill()  # SIGKILL: no shutdown, nothing flushed
    rows = sqlite3.connect(database).execute(
        "SELECT session_id, data FROM events ORDER BY id").fetchall()
    turns: dict[str, list[int]] = {s: [] for s in sessions}
    for session_id, data in rows:
        turns[session_id].append(json.loads(data)["turn"])
    assert all(sorted(found) == list(range(1, 8)) for found in turns.values()), turns
