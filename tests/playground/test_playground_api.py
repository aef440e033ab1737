"""The playground's additions to the API (SPEC 12), over real HTTP without a browser.

`GET /dm/v1/scenarios/{name}/graph` is compared with `mgc graph` on the same IR, byte for
byte; `"trace": true` on `POST /dm/v1/message` with what `mgi run --output-level detailed`
prints for the same lines (the trace's `lines` are those very lines, and its `evaluated`
rows are them as data). Also: replays and traces, the OpenAPI document of both additions,
the page's static files (shipped, public, with their policy headers), and that the page
calls nothing but documented endpoints.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import run_mgc
from support.service_server import ROOT, ServiceServer
from test_service_api import broken_clinic, chain, error_code

PLAYGROUND = ROOT / "interpreter" / "service" / "playground"
BOOKING = ["네 예약하고 싶어요", "홍길동이에요", "1958년생이에요", "무릎이 아파서 정형외과로 가고 싶어요"]
TRACE_KEYS = {"nlu_source", "evaluated", "slot_updates", "dropped", "passed", "tier", "notes",
              "lines", "confidence", "candidates", "intent_note"}  # the last three: SPEC 13.2


def start(service: ServiceServer, name: str = "clinic_booking", **body) -> str:
    status, answer, _ = service.call("POST", "/dm/v1/session", {"scenario": name, **body})
    assert status == 201, answer
    return answer["session_id"]


def traced(service: ServiceServer, session_id: str, text: str, **body) -> dict:
    status, answer, _ = service.call("POST", "/dm/v1/message",
                                     {"session_id": session_id, "text": text, "trace": True,
                                      **body})
    assert status == 200, answer
    return answer


def detailed_blocks(ir: Path, texts: list[str]) -> list[list[str]]:
    """`mgi run --output-level detailed` on `texts`: each user turn's indented lines."""
    done = subprocess.run([sys.executable, "-m", "interpreter.cli", "run", str(ir), "--script",
                           "-", "--output-level", "detailed"], cwd=ROOT, capture_output=True,
                          input="".join(t + "\n" for t in texts).encode(), timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    blocks: list[list[str]] = []
    for line in done.stdout.decode().splitlines():
        if line.startswith("You  > "):
            blocks.append([])
        elif line.startswith("  ") and blocks:
            blocks[-1].append(line[2:])
    return blocks


# --- GET /dm/v1/scenarios/{name}/graph ----------------------------------------------------

@pytest.mark.parametrize("form", ["mermaid", "dot"])
def test_the_graph_is_the_text_of_mgc_graph(service, served_irs, form):
    for name in ("clinic_booking", "senimate", "senimate_weather"):
        status, text, headers = service.call("GET", f"/dm/v1/scenarios/{name}/graph?format={form}")
        assert status == 200 and headers["content-type"] == "text/plain; charset=utf-8"
        done = run_mgc("graph", served_irs / f"{name}.ir", "--format", form)
        assert done.returncode == 0 and text == done.stdout, name
    assert service.call("GET", "/dm/v1/scenarios/clinic_booking/graph")[1].startswith(
        "flowchart TD\n")  # mermaid by default, as `mgc graph`


def test_mgc_graph_and_the_service_draw_with_one_implementation():
    from compiler import render
    from interpreter.views import graph

    assert render.mermaid is graph.mermaid and render.dot is graph.dot


@pytest.mark.parametrize("path, status, code", [
    ("/dm/v1/scenarios/nope/graph", 404, "unknown_scenario"),
    ("/dm/v1/scenarios/clinic_booking/graph?format=svg", 422, "invalid_request"),
    ("/dm/v1/scenarios/clinic_booking/graph?format=", 422, "invalid_request"),
    ("/dm/v1/scenarios/clinic_booking/graph?format=dot&format=dot", 422, "invalid_request"),
    ("/dm/v1/scenarios/clinic_booking/graph?colour=red", 422, "invalid_request"),
    ("/dm/v1/scenarios/clinic_booking/graph?format", 422, "invalid_request"),
    ("/dm/v1/scenarios/clinic_booking/graph?ir_hash=abc", 422, "invalid_request"),
    ("/dm/v1/scenarios/clinic_booking/graph?ir_hash=" + "0" * 64, 404, "unknown_scenario"),
])
def test_graph_errors(service, path, status, code):
    answer = service.call("GET", path)
    assert answer[0] == status and error_code(answer) == code, answer
    assert answer[2]["content-type"] == "application/json"


def test_the_graph_of_a_sessions_own_ir_by_hash(service):
    registered = {s["name"]: s["ir_hash"] for s in service.call("GET", "/dm/v1/scenarios")[1]}
    by_name = service.call("GET", "/dm/v1/scenarios/senimate/graph")[1]
    hashed = service.call("GET", "/dm/v1/scenarios/senimate/graph?ir_hash="
                          f"{registered['senimate']}")[1]
    assert hashed == by_name
    status, made, _ = service.call("POST", "/dm/v1/session/json", {"scenario_json": chain(12)})
    assert status == 201 and made["ir_hash"] != registered["senimate"]
    status, text, _ = service.call("GET", f"/dm/v1/scenarios/senimate/graph?ir_hash="
                                   f"{made['ir_hash']}&format=mermaid")
    assert status == 200 and "c0" in text and "c0" not in by_name  # its own nodes
    wrong = service.call("GET", f"/dm/v1/scenarios/clinic_booking/graph?ir_hash="
                               f"{made['ir_hash']}")  # an IR of another name
    assert wrong[0] == 404 and error_code(wrong) == "unknown_scenario"


# --- "trace": true on POST /dm/v1/message --------------------------------------------------

def test_the_trace_is_what_mgi_run_detailed_prints(service, served_irs):
    session_id = start(service)
    blocks = detailed_blocks(served_irs / "clinic_booking.ir", BOOKING)
    for text, block in zip(BOOKING, blocks):
        answer = traced(service, session_id, text)
        trace, turn = answer["trace"], answer["turn"]
        assert set(trace) == TRACE_KEYS
        assert block[1:1 + len(trace["lines"])] == trace["lines"], text  # after the header
        transitions = [line for line in trace["lines"] if line.startswith("transition ")]
        assert [row["rule"] for row in trace["evaluated"]] == \
            [line.split()[1].rstrip(":") for line in transitions]
        for row, line in zip(trace["evaluated"], transitions):
            for field, value in row["values"].items():
                shown = value if isinstance(value, str) else None
                assert f"{field} = " in line and (shown is None or f'"{shown}"' in line)
            assert line.endswith({True: "-> true", False: "-> false",
                                  None: "-> skipped (targets the current node)"}[row["result"]])
        fired = [row for row in trace["evaluated"] if row["result"]]
        if fired:
            assert fired[0]["rule"] == turn["reason"] and fired[0]["target"] == turn["next_node"]
        assert trace["nlu_source"] == "rules" and trace["passed"] == turn.get("passed", [])
        assert trace["dropped"] == turn.get("dropped", [])
        heard = turn["nlu"] or {}  # SPEC 13.2: the trace's confidence is the turn line's
        assert trace["confidence"] == heard.get("confidence")
        assert trace["candidates"] == heard.get("candidates", [])


def test_trace_rows_carry_the_values_read_and_the_slot_updates(service):
    session_id = start(service)
    traced(service, session_id, "네 예약하고 싶어요")
    trace = traced(service, session_id, "홍길동이에요")["trace"]
    assert trace["tier"] == "gate"
    assert trace["slot_updates"] == [{"slot": "patient_name", "value": "홍길동",
                                      "change": "stored"}]
    trace = traced(service, session_id, "1958년생이에요")["trace"]
    rows = {row["rule"]: row for row in trace["evaluated"]}
    assert rows["next_nodes[0]"] == {
        "rule": "next_nodes[0]", "target": "booking_incomplete", "result": False,
        "condition": "system.turn_limit_reached and not system.required_slots_filled",
        "values": {"system.turn_limit_reached": False, "system.required_slots_filled": True}}
    assert rows["default_next"]["condition"] is None and rows["default_next"]["result"] is True
    assert rows["global:no_response"]["values"] == {"nlu.dialogue_act": "inform",
                                                    "system.no_input_count": 0}
    session_id = start(service)  # tests/transcripts/clinic_conflict_confirm_affirm.transcript
    for text in ("네", "1958년생이에요"):
        traced(service, session_id, text)
    asked = traced(service, session_id, "아 1960년생이에요")["trace"]  # on_conflict: confirm
    assert {"slot": "birth_year", "value": 1960, "change": "confirm"} in asked["slot_updates"]
    assert "slot confirm: birth_year = 1960?" in asked["lines"]


def test_silence_and_a_given_nlu_say_who_read_the_turn(service):
    session_id = start(service)
    silent = traced(service, session_id, "")["trace"]
    assert silent["nlu_source"] is None and silent["tier"] == "fallback"
    assert silent["evaluated"] == [] and "policy: fallback no_input (re-prompt 1 of 2)" in \
        silent["lines"]
    given = traced(service, session_id, "음", nlu={"intent": "no_such_intent",
                                                  "dialogue_act": "affirm",
                                                  "slots": {"no_such_slot": 1}})["trace"]
    assert given["nlu_source"] == "request"
    assert {"intent": "no_such_intent", "reason": "undeclared_intent"} in given["dropped"]
    assert any(d.get("slot") == "no_such_slot" for d in given["dropped"])
    assert "nlu: undeclared intent 'no_such_intent' read as null" in given["lines"]


def test_without_trace_the_answer_has_none(service):
    session_id = start(service)
    status, answer, _ = service.call("POST", "/dm/v1/message",
                                     {"session_id": session_id, "text": "네"})
    assert status == 200 and set(answer) == {"session_id", "version", "replayed", "turn"}
    answer = service.call("POST", "/dm/v1/message", {"session_id": session_id, "text": "네",
                                                     "trace": False})[1]
    assert "trace" not in answer
    bad = service.call("POST", "/dm/v1/message", {"session_id": session_id, "text": "네",
                                                  "trace": "yes"})
    assert bad[0] == 422 and error_code(bad) == "invalid_request"


def test_a_replay_gives_the_trace_recorded_when_asked_and_runs_nothing(service):
    session_id = start(service)
    first = traced(service, session_id, "네 예약하고 싶어요", message_id="m-1")
    again = traced(service, session_id, "네 예약하고 싶어요", message_id="m-1")
    assert again["replayed"] is True and again["trace"] == first["trace"]
    assert again["turn"] == first["turn"] and again["version"] == first["version"]
    plain = service.call("POST", "/dm/v1/message", {"session_id": session_id,
                                                    "text": "네 예약하고 싶어요",
                                                    "message_id": "m-1"})[1]
    assert plain["replayed"] is True and "trace" not in plain  # not asked: not given
    service.call("POST", "/dm/v1/message", {"session_id": session_id, "text": "홍길동이에요",
                                            "message_id": "m-2"})
    late = traced(service, session_id, "홍길동이에요", message_id="m-2")
    assert late["replayed"] is True and "trace" not in late  # never recorded: nothing re-run
    view = service.call("GET", f"/dm/v1/session/{session_id}")[1]
    assert view["version"] == 3  # the opening and two turns, no replay among them


# --- the OpenAPI document -------------------------------------------------------------------

def test_openapi_documents_the_graph_the_trace_and_the_page(service):
    doc = service.call("GET", "/openapi.json")[1]
    graph = doc["paths"]["/dm/v1/scenarios/{name}/graph"]["get"]
    parameters = {p["name"]: p for p in graph["parameters"]}
    assert parameters["name"]["in"] == "path" and parameters["name"]["required"] is True
    assert parameters["format"]["schema"]["enum"] == ["mermaid", "dot"]
    assert parameters["ir_hash"]["in"] == "query"
    assert "text/plain" in graph["responses"]["200"]["content"]
    assert "unknown_scenario" in graph["responses"]["404"]["description"]
    assert "invalid_request" in graph["responses"]["422"]["description"]
    schemas = doc["components"]["schemas"]
    assert schemas["Message"]["properties"]["trace"]["type"] == "boolean"
    answer = schemas["MessageAnswer"]["properties"]["trace"]
    assert "#/components/schemas/Trace" in str(answer)
    assert {"nlu_source", "evaluated", "slot_updates", "dropped", "passed"} <= \
        set(schemas["Trace"]["required"])
    assert {"rule", "condition", "values", "result"} <= set(schemas["Evaluated"]["required"])
    page = doc["paths"]["/playground"]["get"]
    assert "security" not in page and "text/html" in page["responses"]["200"]["content"]


# --- the page's files -----------------------------------------------------------------------

def page_files() -> list[str]:
    return sorted(p.name for p in PLAYGROUND.iterdir() if p.is_file() and p.suffix != ".py")


def test_every_file_of_the_page_is_served_and_shipped_as_package_data(service):
    from interpreter.service.playground import FILES

    assert sorted(name for name, _ in FILES.values()) == page_files()
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]["interpreter.service.playground"]
    for name in page_files():
        assert any(fnmatch.fnmatch(name, p) for p in patterns), f"{name} is not package data"
    for path, (name, media) in FILES.items():
        status, body, headers = service.call("GET", path)
        assert status == 200 and headers["content-type"] == media, path
        assert body == (PLAYGROUND / name).read_text(encoding="utf-8")
        assert "default-src 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        again = service.call("GET", path, headers={"If-None-Match": headers["etag"]})
        assert again[0] == 304 and again[1] == ""


def test_the_page_loads_only_its_own_files_and_calls_only_documented_endpoints(service):
    from interpreter.service.playground import FILES

    html = (PLAYGROUND / "index.html").read_text(encoding="utf-8")
    scripts = "".join((PLAYGROUND / n).read_text(encoding="utf-8") for n in page_files()
                      if n.endswith(".js"))
    linked = set(re.findall(r'(?:src|href)="([^"#]+)"', html)) - {"data:,"}
    imported = set(re.findall(r'from "\./([^"]+)"', scripts))
    assert linked and imported
    assert {f"/{link}" for link in linked} | {f"/playground/{i}" for i in imported} <= set(FILES)
    assert not re.search(r"https?://", html + scripts.replace("http://www.w3.org/2000/svg", ""))
    documented = service.call("GET", "/openapi.json")[1]["paths"]
    called = set(re.findall(r'[`"](dm/v1/(?:[^`"?$]|\$\{[^}]*\})*)', scripts))
    assert called, "the page calls the API"
    for path in called:
        template = re.sub(r"(?<=[^/])\$\{[^}]+\}$", "", path)  # `graph${query}`
        template = re.sub(r"\$\{[^}]+\}", "{}", template)
        assert any(re.fullmatch(re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(known)),
                                "/" + template.replace("{}", "x")) for known in documented), path


def test_with_an_api_key_the_page_is_public_and_the_api_is_not(served_irs):
    from interpreter.service.playground import FILES

    with ServiceServer([served_irs], env={"MAGO_API_KEY": "k" * 24}) as guarded:
        for path in FILES:
            assert guarded.call("GET", path)[0] == 200, path
        for path in ("/dm/v1/scenarios", "/dm/v1/scenarios/clinic_booking/graph",
                     "/playground/other.js"):
            answer = guarded.call("GET", path)
            assert answer[0] == 401 and error_code(answer) == "unauthorized", path
        assert guarded.call("GET", "/dm/v1/scenarios/clinic_booking/graph",
                            headers={"Authorization": "Bearer " + "k" * 24})[0] == 200


def test_a_pasted_scenario_with_an_error_is_the_422_the_page_shows(service):
    answer = service.call("POST", "/dm/v1/session/json", {"scenario_json": broken_clinic()})
    assert answer[0] == 422 and error_code(answer) == "scenario_invalid"
    (diagnostic,) = answer[1]["error"]["diagnostics"]
    assert diagnostic["line"] and diagnostic["hint"]  # what the page lists, with its line
