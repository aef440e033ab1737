"""`mgi serve` endpoint by endpoint (SPEC 11): each row of the table over real HTTP.

One real server (`tests/support/service_server.py`, `memory:` store) answers most tests; a second one
with `--no-dynamic --session-ttl 3600` answers the rows that depend on those options. Turns
are compared with `mgi run --json` on the same IR and the same lines (SPEC 7), diagnostics
with `mgc check --format json` on the same text. Error bodies, the API key, the log, SIGTERM,
usage errors and a property over request bodies are in `test_service_errors.py`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from support.service_server import ROOT, ServiceServer, metric

ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
TURN_KEYS = {"turn", "user", "node", "next_node", "reason", "complete", "response", "slots",
             "nlu"}
VIEW_KEYS = {"session_id", "scenario", "ir_hash", "current_node", "complete", "complete_reason",
             "slots", "history", "version", "updated_at", "expires_at"}
TTL = 3600
# clinic_booking from the greeting to completion (tests/transcripts/clinic_full_booking), one
# turn with its NLU given in the request (SPEC 7: `nlu` replaces the NLU for that turn)
BOOKING = [{"user": "네 예약하고 싶어요"}, {"user": "홍길동이에요"}, {"user": "1958년생이에요"},
           {"user": "무릎이 아파서 정형외과로 가고 싶어요"}, {"user": "2025-03-14"},
           {"user": "제 메일이에요", "nlu": {"intent": None, "dialogue_act": "inform",
                                            "slots": {"contact_email": "hong@example.com"}}},
           {"user": "없어요"}, {"user": "네 맞아요"}, {"user": "감사합니다"}]


def scenario(name: str) -> dict:
    return json.loads((ROOT / "scenarios" / f"{name}.json").read_text(encoding="utf-8"))


def broken_clinic() -> dict:
    """clinic_booking with one error: the greeting's default_next names no node (E103)."""
    broken = scenario("clinic_booking")
    broken["graph"]["nodes"][0]["default_next"] = "nowhere_node"
    return broken


def chain(total: int) -> dict:
    """senimate with extra nodes chained after the greeting, `total` nodes in all."""
    grown = scenario("senimate")
    nodes = grown["graph"]["nodes"]
    extra = total - len(nodes)
    nodes[0]["default_next"] = "c0"
    nodes += [{"id": f"c{i}", "name": f"c{i}", "description": "chain", "responses":
               {"default": f"step {i}"},
               "default_next": f"c{i + 1}" if i < extra - 1 else "daily_life_check"}
              for i in range(extra)]
    return grown


def mgc_check(path: Path) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "compiler", "check", str(path), "--format",
                           "json"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout)["diagnostics"]


def mgi_run_json(ir: Path, lines: list[dict]) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "interpreter.cli", "run", str(ir), "--json"],
                          cwd=ROOT, capture_output=True, timeout=60,
                          input="".join(json.dumps(line, ensure_ascii=False) + "\n"
                                        for line in lines).encode())
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def error_code(answer: tuple) -> str:
    status, body, _ = answer
    assert isinstance(body, dict) and set(body) == {"error"}, (status, body)
    return body["error"]["code"]


@pytest.fixture(scope="module")
def tuned(served_irs):
    with ServiceServer([served_irs], extra=["--no-dynamic", "--session-ttl", str(TTL)]) as running:
        yield running


def create(service: ServiceServer, **body) -> dict:
    status, answer, _ = service.call("POST", "/dm/v1/session", {"scenario": "senimate", **body})
    assert status == 201, answer
    return answer


def say(service: ServiceServer, session_id: str, text: str, **body) -> tuple:
    return service.call("POST", "/dm/v1/message", {"session_id": session_id, "text": text, **body})


# --- POST /dm/v1/session ------------------------------------------------------------------

def test_create_answers_201_with_the_opening_turn_of_mgi_run(service, served_irs):
    status, answer, headers = service.call("POST", "/dm/v1/session", {"scenario": "senimate"})
    assert status == 201 and headers["content-type"] == "application/json"
    assert set(answer) == {"session_id", "scenario", "ir_hash", "version", "turn"}
    assert answer["scenario"] == "senimate" and answer["version"] == 1
    assert re.fullmatch(r"[0-9a-f]{64}", answer["ir_hash"])
    assert answer["turn"] == mgi_run_json(served_irs / "senimate.ir", [])[0]
    assert answer["turn"]["reason"] == "opening" and answer["turn"]["user"] is None


def test_create_without_bot_first_has_no_opening_turn(service):
    answer = create(service, bot_first=False, session_id="quiet-1")
    assert answer["turn"] is None and answer["session_id"] == "quiet-1"
    status, view, _ = service.call("GET", "/dm/v1/session/quiet-1")
    assert status == 200 and view["history"] == []


def test_generated_session_ids_are_distinct_unguessable_and_valid(service):
    ids = [create(service, bot_first=False)["session_id"] for _ in range(20)]
    assert len(set(ids)) == 20
    for session_id in ids:
        assert ID_PATTERN.match(session_id) and len(session_id) >= 22  # >= 128 random bits
    assert len({session_id[:8] for session_id in ids}) == 20  # not a counter or a clock


def test_a_given_session_id_is_kept_and_a_second_create_is_409(service):
    for session_id in ("A.b:c_d-9", "x" * 128):
        assert create(service, session_id=session_id)["session_id"] == session_id
        again = service.call("POST", "/dm/v1/session", {"scenario": "clinic_booking",
                                                        "session_id": session_id})
        assert again[0] == 409 and error_code(again) == "session_exists"


@pytest.mark.parametrize("body, status, code", [
    ({"scenario": "nope"}, 404, "unknown_scenario"),
    ({"scenario": "senimate", "session_id": "has space"}, 422, "invalid_request"),
    ({"scenario": "senimate", "session_id": "a/b"}, 422, "invalid_request"),
    ({"scenario": "senimate", "session_id": ""}, 422, "invalid_request"),
    ({"scenario": "senimate", "session_id": "x" * 129}, 422, "invalid_request"),
    ({"scenario": "senimate", "session_id": 7}, 422, "invalid_request"),
    ({"scenario": 3}, 422, "invalid_request"),
    ({}, 422, "invalid_request"),
    ({"scenario": "senimate", "bot_first": "yes"}, 422, "invalid_request"),
    ({"scenario": "senimate", "focus_node": ["meal_check"]}, 422, "invalid_request"),
    ({"scenario": "senimate", "profile": ["a"]}, 422, "invalid_request"),
    ({"scenario": "senimate", "colour": "red"}, 422, "invalid_request"),
    ({"scenario": "senimate", "profile": {"name": "홍길동"}}, 422, "invalid_profile"),
    ({"scenario": "clinic_booking", "profile": {"age": 80}}, 422, "invalid_profile"),
    ({"scenario": "senimate", "focus_node": "bogus_node"}, 422, "unknown_node"),
])
def test_create_errors(service, body, status, code):
    answer = service.call("POST", "/dm/v1/session", body)
    assert answer[0] == status and error_code(answer) == code, answer


def test_a_refused_create_stores_no_session(service):
    for body in ({"session_id": "refused-1", "profile": {"a": 1}},
                 {"session_id": "refused-1", "focus_node": "bogus_node"}):
        assert service.call("POST", "/dm/v1/session", {"scenario": "senimate", **body})[0] == 422
    assert service.call("GET", "/dm/v1/session/refused-1")[0] == 404


def test_a_valid_focus_node_starts_there_and_stays(service):
    answer = create(service, focus_node="meal_check")
    assert answer["turn"]["node"] == "meal_check"
    status, turn, _ = say(service, answer["session_id"], "네 잘 먹었어요")
    assert status == 200 and turn["turn"]["node"] == "meal_check"
    assert service.call("GET", f"/dm/v1/session/{answer['session_id']}")[1]["current_node"] == \
        "meal_check"


# --- POST /dm/v1/session/json -------------------------------------------------------------

def test_session_json_from_text_and_from_object(service):
    registered = {s["name"]: s["ir_hash"] for s in service.call("GET", "/dm/v1/scenarios")[1]}
    text = (ROOT / "scenarios" / "clinic_booking.json").read_text(encoding="utf-8")
    answers = [service.call("POST", "/dm/v1/session/json", body) for body in
               ({"scenario_text": text}, {"scenario_text": text},
                {"scenario_json": json.loads(text), "session_id": "from-object"})]
    for status, answer, _ in answers:
        assert status == 201, answer
        assert answer["scenario"] == "clinic_booking" and answer["version"] == 1
        assert answer["ir_hash"] == registered["clinic_booking"]  # the same source, the same IR
        assert answer["turn"]["node"] == "greeting"
    assert answers[0][1]["session_id"] != answers[1][1]["session_id"]
    assert answers[2][1]["session_id"] == "from-object"
    assert say(service, "from-object", "예약 취소할게요")[1]["turn"]["next_node"] == \
        "booking_cancelled"


def test_a_dynamic_scenario_of_its_own_runs_on_its_own_ir(service):
    grown = chain(12)
    status, answer, _ = service.call("POST", "/dm/v1/session/json", {"scenario_json": grown})
    assert status == 201, answer
    registered = {s["name"]: s["ir_hash"] for s in service.call("GET", "/dm/v1/scenarios")[1]}
    assert answer["ir_hash"] != registered["senimate"]
    turn = say(service, answer["session_id"], "네")[1]["turn"]
    assert (turn["next_node"], turn["response"]) == ("c0", "step 0")


def test_session_json_with_errors_is_422_with_the_diagnostics_of_mgc_check(service, tmp_path):
    broken = broken_clinic()
    as_text = "\n\n" + json.dumps(broken, ensure_ascii=False, indent=4)  # not indent 2
    (tmp_path / "text.json").write_text(as_text, encoding="utf-8")
    (tmp_path / "object.json").write_text(json.dumps(broken, ensure_ascii=False, indent=2),
                                          encoding="utf-8")
    places = set()
    for body, file in (({"scenario_text": as_text}, "text.json"),
                       ({"scenario_json": broken}, "object.json")):
        answer = service.call("POST", "/dm/v1/session/json", body)
        assert answer[0] == 422 and error_code(answer) == "scenario_invalid"
        assert set(answer[1]["error"]) == {"code", "message", "diagnostics"}
        expected = mgc_check(tmp_path / file)
        assert [d["code"] for d in expected] == ["E103"]
        assert answer[1]["error"]["diagnostics"] == expected
        places.add((expected[0]["line"], expected[0]["column"]))
    assert len(places) == 2  # each refers to its own text


@pytest.mark.parametrize("body", [
    {}, {"session_id": "no-source"},
    {"scenario_json": scenario("senimate"),
     "scenario_text": json.dumps(scenario("senimate"))},
    {"scenario_json": [1, 2]}, {"scenario_text": 5}, {"scenario_json": {}, "extra": 1},
    {"scenario_text": "{}", "session_id": "bad id"},
])
def test_session_json_needs_exactly_one_valid_source(service, body):
    for path in ("/dm/v1/session/json", "/dm/v1/session/validate"):
        if path.endswith("validate") and "session_id" in body:
            continue  # validate takes no session options: that is its own invalid_request
        answer = service.call("POST", path, body)
        assert answer[0] == 422 and error_code(answer) == "invalid_request", (path, answer)


def test_a_scenario_over_2000_nodes_is_413_before_compiling(service):
    started = time.monotonic()
    for path in ("/dm/v1/session/json", "/dm/v1/session/validate"):
        answer = service.call("POST", path, {"scenario_json": chain(2001)})
        assert answer[0] == 413 and error_code(answer) == "too_large"
    assert time.monotonic() - started < 3
    status, answer, _ = service.call("POST", "/dm/v1/session/json", {"scenario_json": chain(2000)})
    assert status == 201, answer  # the limit itself is allowed


def test_scenario_endpoints_take_bodies_up_to_2_mib(service):
    text = (ROOT / "scenarios" / "senimate.json").read_text(encoding="utf-8")
    padded = {"scenario_text": text + " " * (200 * 1024)}  # over the 64 KiB of other bodies
    assert service.call("POST", "/dm/v1/session/json", padded)[0] == 201
    assert service.call("POST", "/dm/v1/session/validate", padded)[0] == 200
    over = {"scenario_text": text + " " * (2 * 1024 * 1024)}
    for path in ("/dm/v1/session/json", "/dm/v1/session/validate"):
        answer = service.call("POST", path, over)
        assert answer[0] == 413 and error_code(answer) == "too_large"


def test_no_dynamic_refuses_session_json_with_403(tuned):
    text = (ROOT / "scenarios" / "clinic_booking.json").read_text(encoding="utf-8")
    answer = tuned.call("POST", "/dm/v1/session/json", {"scenario_text": text})
    assert answer[0] == 403 and error_code(answer) == "dynamic_disabled"
    assert tuned.call("POST", "/dm/v1/session", {"scenario": "clinic_booking"})[0] == 201


# --- POST /dm/v1/message ------------------------------------------------------------------

def test_turns_are_those_of_mgi_run_json_to_completion(service, served_irs):
    expected = mgi_run_json(served_irs / "clinic_booking.ir", BOOKING)
    answer = create(service, scenario="clinic_booking")
    assert answer["turn"] == expected[0]
    session_id, version = answer["session_id"], answer["version"]
    for line, cli in zip(BOOKING, expected[1:]):
        status, got, _ = say(service, session_id, line["user"],
                             **({"nlu": line["nlu"]} if "nlu" in line else {}))
        assert status == 200, got
        assert set(got) == {"session_id", "version", "replayed", "turn"}
        assert got["session_id"] == session_id and got["replayed"] is False
        assert got["version"] == version + 1
        version = got["version"]
        assert set(got["turn"]) >= TURN_KEYS
        for key in sorted(set(cli) | set(got["turn"])):
            assert got["turn"].get(key) == cli.get(key), (line, key)
    assert got["turn"]["complete"] is True and got["turn"]["next_node"] is None
    assert got["turn"]["slots"]["contact_email"] == "hong@example.com"
    late = say(service, session_id, "하나 더요")
    assert late[0] == 409 and error_code(late) == "session_complete"
    view = service.call("GET", f"/dm/v1/session/{session_id}")[1]
    assert view["complete"] is True and view["complete_reason"] is not None
    assert view["version"] == version and view["slots"] == got["turn"]["slots"]
    kept = [(t["user"], t["response"], t["node"], t["reason"])
            for t in expected][-len(view["history"]):]  # the state keeps the last turns
    assert [tuple(h.values()) for h in view["history"]] == kept and len(kept) >= 6


def test_message_errors(service):
    session_id = create(service, scenario="clinic_booking")["session_id"]
    assert error_code(say(service, "no-such-session", "안녕")) == "unknown_session"
    assert say(service, "no-such-session", "안녕")[0] == 404
    for body in ({"session_id": session_id, "text": "x", "nlu": {"intent": 3}},
                 {"session_id": session_id, "text": "x", "nlu": {"slots": [1]}},
                 {"session_id": session_id, "text": "x", "nlu": {"confidence": 2}},
                 {"session_id": session_id, "text": "x", "nlu": "greet"},
                 {"session_id": session_id, "text": 5},
                 {"session_id": session_id},
                 {"text": "x"},
                 {"session_id": session_id, "text": "x", "message_id": 1},
                 {"session_id": session_id, "text": "x", "message_id": ""},
                 {"session_id": session_id, "text": "x", "mood": "happy"},
                 {"session_id": "bad id", "text": "x"}, [session_id, "x"], "x", None):
        answer = service.call("POST", "/dm/v1/message", json.dumps(body).encode())
        assert answer[0] == 422 and error_code(answer) == "invalid_request", (body, answer)
    for raw in (b"", b"   ", b"{", b'{"session_id": "a", "text": "x"', b"\xff\xfe",
                b'{"session_id": "a", "text": "x"} trailing'):
        answer = service.call("POST", "/dm/v1/message", raw)
        assert answer[0] == 422 and error_code(answer) == "invalid_request", (raw, answer)
    view = service.call("GET", f"/dm/v1/session/{session_id}")[1]
    assert view["version"] == 1 and view["history"] == [{"user": None, "bot": view["history"][0]
                                                         ["bot"], "node": "greeting",
                                                         "reason": "opening"}]


def test_message_bodies_and_texts_over_64_kib_are_413(service):
    session_id = create(service, focus_node="general_conversation")["session_id"]
    korean = "가" * 22000  # 22,000 characters, 66,000 bytes in UTF-8
    assert len(korean) < 64 * 1024 < len(korean.encode())
    for answer in (say(service, session_id, korean), say(service, session_id, "a" * 70000),
                   service.call("POST", "/dm/v1/message", b" " * (64 * 1024 + 1))):
        assert answer[0] == 413 and error_code(answer) == "too_large"
    status, got, _ = say(service, session_id, "이야기 " * 6000)  # 60,000 bytes: allowed
    assert status == 200 and got["version"] == 2, got


def test_a_repeated_message_id_is_replayed_without_running(service):
    session_id = create(service, scenario="clinic_booking")["session_id"]
    first = say(service, session_id, "네 예약하고 싶어요", message_id="m-1")
    assert first[0] == 200 and first[1]["replayed"] is False and first[1]["version"] == 2
    say(service, session_id, "홍길동이에요", message_id="m-2")
    before = service.call("GET", f"/dm/v1/session/{session_id}")[1]
    again = say(service, session_id, "네 예약하고 싶어요", message_id="m-1")
    assert again[0] == 200 and again[1]["replayed"] is True
    assert again[1]["version"] == 2 and again[1]["turn"] == first[1]["turn"]
    assert service.call("GET", f"/dm/v1/session/{session_id}")[1] == before
    reused = say(service, session_id, "다른 말", message_id="m-1")
    assert reused[0] == 409 and error_code(reused) == "message_id_reused"
    assert service.call("GET", f"/dm/v1/session/{session_id}")[1] == before


def test_a_session_remembers_its_last_32_message_ids(service):
    session_id = create(service, focus_node="general_conversation")["session_id"]
    for number in range(1, 34):
        got = say(service, session_id, f"이야기 {number}", message_id=f"id-{number}")[1]
        assert got["replayed"] is False and got["version"] == number + 1
    second = say(service, session_id, "이야기 2", message_id="id-2")[1]
    assert second["replayed"] is True and second["version"] == 3
    first = say(service, session_id, "이야기 1", message_id="id-1")[1]
    assert first["replayed"] is False and first["version"] == 35  # forgotten: a new turn
    assert first["turn"]["turn"] == 35


# --- POST /dm/v1/session/validate ---------------------------------------------------------

def test_validate_lines_refer_to_the_text_or_to_the_object_at_indent_2(service, tmp_path):
    broken = broken_clinic()
    texts = {"scenario_text": json.dumps(broken, ensure_ascii=False, indent=3),
             "scenario_json": json.dumps(broken, ensure_ascii=False, indent=2)}
    for field, text in texts.items():
        status, answer, _ = service.call("POST", "/dm/v1/session/validate",
                                         {field: text if field == "scenario_text" else broken})
        assert status == 200 and set(answer) == {"diagnostics", "errors", "warnings"}
        assert (answer["errors"], answer["warnings"]) == (1, 0)
        found = answer["diagnostics"][0]
        assert set(found) == {"code", "severity", "message", "path", "line", "column", "hint"}
        assert (found["code"], found["severity"]) == ("E103", "error") and found["hint"]
        line = text.splitlines()[found["line"] - 1]
        assert line[found["column"] - 1:] == '"nowhere_node"', (field, line)
        (tmp_path / "s.json").write_text(text, encoding="utf-8")
        assert answer["diagnostics"] == mgc_check(tmp_path / "s.json")


def test_validate_a_clean_scenario_and_text_that_is_not_json(service):
    status, answer, _ = service.call("POST", "/dm/v1/session/validate",
                                     {"scenario_json": scenario("senimate")})
    assert status == 200 and answer == {"diagnostics": [], "errors": 0, "warnings": 0}
    status, answer, _ = service.call("POST", "/dm/v1/session/validate",
                                     {"scenario_text": '{\n  "metadata": '})
    assert status == 200 and answer["errors"] >= 1 and answer["diagnostics"][0]["line"] >= 1


# --- GET and DELETE /dm/v1/session/{id} ---------------------------------------------------

def test_get_session_has_every_field(tuned):
    status, made, _ = tuned.call("POST", "/dm/v1/session", {"scenario": "clinic_booking"})
    session_id = made["session_id"]
    tuned.call("POST", "/dm/v1/message", {"session_id": session_id, "text": "네 예약하고 싶어요"})
    status, view, headers = tuned.call("GET", f"/dm/v1/session/{session_id}")
    assert status == 200 and headers["content-type"] == "application/json"
    assert set(view) == VIEW_KEYS
    assert (view["session_id"], view["scenario"], view["ir_hash"]) == \
        (session_id, "clinic_booking", made["ir_hash"])
    assert view["current_node"] == "collect_patient_info" and view["version"] == 2
    assert view["complete"] is False and view["complete_reason"] is None
    assert view["slots"] == made["turn"]["slots"] == {}
    assert [(h["user"], h["node"], h["reason"]) for h in view["history"]] == \
        [(None, "greeting", "opening"), ("네 예약하고 싶어요", "greeting", "default_next")]
    assert view["history"][0]["bot"] == made["turn"]["response"]
    updated, expires = (datetime.fromisoformat(view[k].replace("Z", "+00:00"))
                        for k in ("updated_at", "expires_at"))
    assert view["updated_at"].endswith("Z") and abs(updated.timestamp() - time.time()) < 60
    assert abs((expires - updated).total_seconds() - TTL) <= 0.002


def test_delete_session_then_it_is_gone(service):
    session_id = create(service)["session_id"]
    status, body, _ = service.call("DELETE", f"/dm/v1/session/{session_id}")
    assert status == 204 and body == ""
    for method in ("DELETE", "GET"):
        answer = service.call(method, f"/dm/v1/session/{session_id}")
        assert answer[0] == 404 and error_code(answer) == "unknown_session"
    assert error_code(say(service, session_id, "안녕")) == "unknown_session"
    assert error_code(service.call("GET", "/dm/v1/session/never-made")) == "unknown_session"


# --- scenarios, health, metrics, OpenAPI ---------------------------------------------------

def test_scenarios_lists_the_three_registered(service):
    status, listed, _ = service.call("GET", "/dm/v1/scenarios")
    assert status == 200 and [s["name"] for s in listed] == \
        ["clinic_booking", "senimate", "senimate_weather"]
    ends = {"clinic_booking": 5, "senimate": 1, "senimate_weather": 1}  # clinic: + 2 safety nodes
    for entry in listed:
        assert set(entry) == {"name", "ir_hash", "nodes", "end_nodes"}
        assert entry["nodes"] == len(scenario(entry["name"])["graph"]["nodes"])
        assert entry["end_nodes"] == ends[entry["name"]]
        made = service.call("POST", "/dm/v1/session", {"scenario": entry["name"]})[1]
        assert made["ir_hash"] == entry["ir_hash"]


def test_health_and_readiness(service):
    for path in ("/healthz", "/readyz"):
        status, body, _ = service.call("GET", path)
        assert status == 200 and body == {"status": "ok", "store": "memory"}


def test_metrics_count_turns_sessions_and_latency(service):
    def scrape() -> str:
        status, text, headers = service.call("GET", "/metrics")
        assert status == 200 and headers["content-type"].startswith("text/plain")
        return text

    before = scrape()
    session_id = create(service, scenario="clinic_booking")["session_id"]
    say(service, session_id, "네 예약하고 싶어요", message_id="once")
    say(service, session_id, "네 예약하고 싶어요", message_id="once")  # a replay runs nothing
    say(service, session_id, "예약 취소할게요",  # a client cannot claim an LLM fallback
        nlu={"intent": "user_wants_to_cancel", "source": "rules (llm fallback: timeout)"})
    after = scrape()
    for family, kind in (("mago_turns_total", "counter"), ("mago_turn_seconds", "histogram"),
                         ("mago_sessions_created_total", "counter"),
                         ("mago_llm_fallbacks_total", "counter"),
                         ("mago_safety_events_total", "counter"),
                         ("mago_store_errors_total", "counter")):
        assert f"# TYPE {family} {kind}" in after, family
    delta = {reason: metric(after, "mago_turns_total", reason=reason, scenario="clinic_booking")
             - metric(before, "mago_turns_total", reason=reason, scenario="clinic_booking")
             for reason in ("default_next", "global:user_wants_to_cancel")}
    assert delta == {"default_next": 1, "global:user_wants_to_cancel": 1}
    assert metric(after, "mago_turn_seconds_count") - metric(before, "mago_turn_seconds_count") \
        == 2
    assert metric(after, "mago_turn_seconds_bucket", le="+Inf") == \
        metric(after, "mago_turn_seconds_count")
    assert metric(after, "mago_sessions_created_total", scenario="clinic_booking") - \
        metric(before, "mago_sessions_created_total", scenario="clinic_booking") == 1
    assert metric(after, "mago_store_errors_total") == 0
    assert metric(after, "mago_llm_fallbacks_total", scenario="clinic_booking") == 0


TABLE = {  # SPEC 11: method and path -> the error codes by status
    ("post", "/dm/v1/session"): {404: ["unknown_scenario"], 409: ["session_exists"],
                                 422: ["invalid_request", "invalid_profile", "unknown_node"]},
    ("post", "/dm/v1/session/json"): {403: ["dynamic_disabled"], 422: ["scenario_invalid"]},
    ("post", "/dm/v1/message"): {404: ["unknown_session"],
                                 409: ["session_complete", "message_id_reused"],
                                 413: ["too_large"], 422: ["invalid_request"]},
    ("post", "/dm/v1/session/validate"): {},
    ("get", "/dm/v1/session/{session_id}"): {404: []},
    ("delete", "/dm/v1/session/{session_id}"): {404: []},
    ("get", "/dm/v1/scenarios"): {}, ("get", "/healthz"): {}, ("get", "/readyz"): {},
    ("get", "/metrics"): {}, ("get", "/openapi.json"): {},
}
SUCCESS = {("post", "/dm/v1/session"): "201", ("post", "/dm/v1/session/json"): "201",
           ("delete", "/dm/v1/session/{session_id}"): "204"}


def test_openapi_documents_every_endpoint_and_error_code(service):
    status, doc, _ = service.call("GET", "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.1")
    schemas = doc["components"]["schemas"]
    operations = {(method, path) for path, item in doc["paths"].items() for method in item}
    assert set(TABLE) <= operations
    for (method, path), errors in TABLE.items():
        operation = doc["paths"][path][method]
        responses = operation["responses"]
        assert SUCCESS.get((method, path), "200") in responses, (method, path)
        for status_code, codes in errors.items():
            assert str(status_code) in responses, (method, path, status_code)
            for code in codes:
                assert code in responses[str(status_code)]["description"], (path, code)
        # no MAGO_API_KEY here: nothing declares the key (SPEC 11.1; keyed: test_service_openapi)
        assert "security" not in operation and "401" not in responses, path
        if method == "post":
            ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert ref.startswith("#/components/schemas/")
            body = schemas[ref.rsplit("/", 1)[1]]
            assert body["type"] == "object" and body.get("additionalProperties") is False
    assert {"scenario", "session_id", "bot_first", "focus_node", "profile"} <= \
        set(schemas["CreateSession"]["properties"])
    assert {"session_id", "text", "nlu", "message_id", "trace"} == set(schemas["Message"]["properties"])
    assert ("get", "/dm/v1/session/{session_id}") in operations
    assert "/healthz" in doc["paths"] and "security" not in doc["paths"]["/healthz"]["get"]


def test_unknown_paths_and_wrong_methods(service):
    for path in ("/", "/dm/v1", "/dm/v1/sessions", "/dm/v1/session/a/b", "/dm/v2/message"):
        answer = service.call("GET", path)
        assert answer[0] == 404 and error_code(answer) == "not_found", path
    for method, path, allowed in (("GET", "/dm/v1/session", "POST"),
                                  ("PUT", "/dm/v1/message", "POST"),
                                  ("POST", "/dm/v1/session/abc", "DELETE, GET"),
                                  ("DELETE", "/dm/v1/scenarios", "GET"),
                                  ("POST", "/healthz", "GET")):
        answer = service.call(method, path, {})
        assert answer[0] == 405 and error_code(answer) == "method_not_allowed", (method, path)
        assert {m.strip() for m in answer[2]["allow"].split(",")} == \
            {m.strip() for m in allowed.split(",")}
