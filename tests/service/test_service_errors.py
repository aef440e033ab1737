"""`mgi serve` when things go wrong (SPEC 11): the error envelope, the API key, the log,
SIGTERM, usage errors, hostile bodies, and a property over request bodies.

Every answer comes from a real `mgi serve` child process over TCP (`tests/support/service_server.py`);
the endpoint rows themselves are in `test_service_api.py`.
"""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from conftest import examples
from support.service_server import ROOT, Client, ServiceServer, wait_for

TRACEBACK = ("Traceback", 'File "')
KEY = "k3y-Zq81-never-logged"
SENIMATE_TEXT = (ROOT / "scenarios" / "senimate.json").read_text(encoding="utf-8")


def assert_envelope(answer: tuple, status: int | None = None, code: str | None = None) -> str:
    """The answer is exactly the error envelope (SPEC 11); its code."""
    got, body, headers = answer
    assert status is None or got == status, answer
    assert headers["content-type"] == "application/json", headers
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    expected = {"code", "message", "diagnostics"} if error.get("code") == "scenario_invalid" \
        else {"code", "message"}
    assert set(error) == expected, error
    assert isinstance(error["message"], str) and error["message"].strip()
    assert "\n" not in error["message"] and "\r" not in error["message"]
    assert not any(mark in json.dumps(body, ensure_ascii=False) for mark in TRACEBACK)
    assert code is None or error["code"] == code, answer
    return error["code"]


def session(service: ServiceServer, **body) -> str:
    status, made, _ = service.call("POST", "/dm/v1/session", {"scenario": "clinic_booking", **body})
    assert status == 201, made
    return made["session_id"]


# --- the envelope -------------------------------------------------------------------------

def test_every_error_code_of_the_table_is_the_envelope(service):
    done = session(service)
    service.call("POST", "/dm/v1/message", {"session_id": done, "text": "예약 취소할게요"})
    service.call("POST", "/dm/v1/message", {"session_id": done, "text": "네"})
    used = session(service)
    service.call("POST", "/dm/v1/message", {"session_id": used, "text": "네", "message_id": "m"})
    broken = json.loads(SENIMATE_TEXT)
    broken["graph"]["entry"] = "nowhere"
    cases = [
        ("POST", "/dm/v1/session", {"scenario": "nope"}, 404, "unknown_scenario"),
        ("POST", "/dm/v1/session", {"scenario": "senimate", "session_id": done}, 409,
         "session_exists"),
        ("POST", "/dm/v1/session", {"scenario": "senimate", "x": 1}, 422, "invalid_request"),
        ("POST", "/dm/v1/session", {"scenario": "senimate", "profile": {"p": 1}}, 422,
         "invalid_profile"),
        ("POST", "/dm/v1/session", {"scenario": "senimate", "focus_node": "zz"}, 422,
         "unknown_node"),
        ("POST", "/dm/v1/session/json", {"scenario_json": broken}, 422, "scenario_invalid"),
        ("POST", "/dm/v1/session/json", {"scenario_json": broken, "focus_node": "x"}, 422,
         "scenario_invalid"),
        ("POST", "/dm/v1/message", {"session_id": "nobody", "text": "x"}, 404, "unknown_session"),
        ("POST", "/dm/v1/message", {"session_id": done, "text": "x"}, 409, "session_complete"),
        ("POST", "/dm/v1/message", {"session_id": used, "text": "아니", "message_id": "m"}, 409,
         "message_id_reused"),
        ("POST", "/dm/v1/message", b"{" * (65 * 1024), 413, "too_large"),
        ("POST", "/dm/v1/session", b" " * (65 * 1024), 413, "too_large"),
        ("POST", "/dm/v1/message", b"{not json", 422, "invalid_request"),
        ("POST", "/dm/v1/session/validate", {"scenario_text": 1}, 422, "invalid_request"),
        ("GET", "/dm/v1/session/nobody", None, 404, "unknown_session"),
        ("DELETE", "/dm/v1/session/nobody", None, 404, "unknown_session"),
        ("GET", "/nothing/here", None, 404, "not_found"),
        ("PATCH", "/dm/v1/session/x", None, 405, "method_not_allowed"),
    ]
    for method, path, body, status, code in cases:
        assert_envelope(service.call(method, path, body), status, code)
    diagnostics = service.call("POST", "/dm/v1/session/json", {"scenario_json": broken})[1]
    assert diagnostics["error"]["diagnostics"][0]["code"].startswith("E")


@pytest.mark.parametrize("path", ["/dm/v1/session", "/dm/v1/message", "/dm/v1/session/validate",
                                  "/dm/v1/session/json"])
def test_bodies_nested_too_deeply_are_422_not_500(service, path):
    sid = session(service)
    for depth in range(955, 1000, 3):
        nested = b"[" * depth + b"]" * depth
        value = b'{"a": ' + nested + b"}"
        bodies = {"/dm/v1/session": b'{"scenario": "senimate", "profile": ' + value + b"}",
                  "/dm/v1/message": b'{"session_id": "%s", "text": "a", "nlu": {"slots": '
                                    % sid.encode() + value + b"}}",
                  "/dm/v1/session/validate": b'{"scenario_json": ' + value + b"}",
                  "/dm/v1/session/json": b'{"scenario_json": {"graph": ' + nested + b"}}"}
        connection = http.client.HTTPConnection("127.0.0.1", service.port, timeout=30)
        connection.request("POST", path, body=bodies[path],
                               headers={"Content-Type": "application/json"})
        answer = connection.getresponse()
        raw = answer.read()  # a success echoes the nesting: too deep for `json` here
        connection.close()
        assert answer.status in (200, 409, 422), (depth, raw[:300])
        if answer.status != 200:
            assert_envelope((answer.status, json.loads(raw),
                             {"content-type": answer.getheader("content-type")}))
        sid = sid if answer.status != 409 else session(service)


# --- the API key --------------------------------------------------------------------------

def test_an_api_key_guards_every_endpoint_but_health(served_irs):
    with ServiceServer([served_irs], env={"MAGO_API_KEY": KEY}) as guarded:
        good = {"Authorization": f"Bearer {KEY}"}
        made = guarded.call("POST", "/dm/v1/session", {"scenario": "senimate"}, good)
        assert made[0] == 201
        sid = made[1]["session_id"]
        calls = [("POST", "/dm/v1/session", {"scenario": "senimate"}, 201),
                 ("POST", "/dm/v1/session/json", {"scenario_text": SENIMATE_TEXT}, 201),
                 ("POST", "/dm/v1/message", {"session_id": sid, "text": "네"}, 200),
                 ("POST", "/dm/v1/session/validate", {"scenario_text": SENIMATE_TEXT}, 200),
                 ("GET", f"/dm/v1/session/{sid}", None, 200),
                 ("GET", "/dm/v1/scenarios", None, 200), ("GET", "/metrics", None, 200),
                 ("GET", "/openapi.json", None, 200),
                 ("DELETE", f"/dm/v1/session/{sid}", None, 204)]
        wrong = [{}, {"Authorization": "Bearer nope"}, {"Authorization": f"Bearer {KEY}x"},
                 {"Authorization": KEY}, {"Authorization": f"Basic {KEY}"},
                 {"Authorization": f"Bearer {KEY[:-1]}"}]
        for method, path, body, status in calls:
            for headers in wrong:
                answer = guarded.call(method, path, body, headers)
                assert_envelope(answer, 401, "unauthorized")
                assert answer[2].get("www-authenticate", "").startswith("Bearer")
                assert KEY not in json.dumps(answer[1])
            assert guarded.call(method, path, body, good)[0] == status, (method, path)
        for path in ("/healthz", "/readyz"):
            assert guarded.call("GET", path)[0] == 200
        assert guarded.call("GET", f"/dm/v1/session/{sid}", None, good)[0] == 404
        assert wait_for(lambda: sum(1 for line in guarded.log_lines()
                                    if line.get("status") == 401) == 6 * len(calls))
        assert KEY not in guarded.log()


# --- the log ------------------------------------------------------------------------------

SECRET_TEXT = "제 비밀번호는 구름-4521이에요"


def request_lines(service: ServiceServer, session_id: str) -> list[dict]:
    return [line for line in service.log_lines() if line.get("session_id") == session_id]


def test_one_log_line_per_request_without_the_users_text(service):
    sid = session(service)
    service.call("POST", "/dm/v1/message", {"session_id": sid, "text": SECRET_TEXT})
    service.call("POST", "/dm/v1/message", {"session_id": sid, "text": "네", "nlu": {
        "dialogue_act": "affirm", "source": "rules (llm fallback: forged)"}})  # not the client's
    service.call("GET", f"/dm/v1/session/{sid}")
    service.call("DELETE", f"/dm/v1/session/{sid}")
    lines = wait_for(lambda: len(request_lines(service, sid)) >= 5 and request_lines(service, sid))
    assert [(line["method"], line["path"], line["status"]) for line in lines] == [
        ("POST", "/dm/v1/session", 201), ("POST", "/dm/v1/message", 200),
        ("POST", "/dm/v1/message", 200), ("GET", f"/dm/v1/session/{sid}", 200),
        ("DELETE", f"/dm/v1/session/{sid}", 204)]
    for line in lines:
        assert {"time", "method", "path", "status", "latency_ms", "session_id"} <= set(line)
        assert line["time"].endswith("Z") and line["latency_ms"] >= 0
    for line, source in zip(lines[1:3], ("rules", "request")):
        assert {"node", "reason", "nlu_source"} <= set(line) and "text" not in line
        assert line["nlu_source"] == source
    assert lines[1]["node"] == "greeting" and lines[1]["reason"]
    assert SECRET_TEXT not in service.log() and "구름-4521" not in service.log()


def test_the_users_text_is_logged_at_debug_level(served_irs):
    with ServiceServer([served_irs], extra=["--log-level", "debug"]) as debug:
        sid = session(debug)
        debug.call("POST", "/dm/v1/message", {"session_id": sid, "text": SECRET_TEXT})
        lines = wait_for(lambda: [line for line in request_lines(debug, sid)
                                  if line["path"] == "/dm/v1/message"])
        assert lines and lines[0]["text"] == SECRET_TEXT and lines[0]["status"] == 200


# --- SIGTERM ------------------------------------------------------------------------------

def chain_text(total: int) -> str:
    grown = json.loads(SENIMATE_TEXT)
    nodes = grown["graph"]["nodes"]
    extra = total - len(nodes)
    nodes[0]["default_next"] = "c0"
    nodes += [{"id": f"c{i}", "name": f"c{i}", "description": "chain",
               "responses": {"default": f"step {i}"},
               "default_next": f"c{i + 1}" if i < extra - 1 else "daily_life_check"}
              for i in range(extra)]
    return json.dumps(grown, ensure_ascii=False, indent=2)


def test_sigterm_answers_the_request_in_flight_then_exits_0(served_irs):
    running = ServiceServer([served_irs]).start()
    try:
        body = json.dumps({"scenario_text": chain_text(1990)}, ensure_ascii=False).encode()
        connection = http.client.HTTPConnection("127.0.0.1", running.port, timeout=30)
        connection.request("POST", "/dm/v1/session/json", body=body,
                           headers={"Content-Type": "application/json"})
        time.sleep(0.1)  # received; the compile (and the compiler's import) takes longer
        running.process.send_signal(signal.SIGTERM)
        answer = connection.getresponse()
        made = json.loads(answer.read())
        assert answer.status == 201 and made["turn"]["node"] == "greeting_introduction"
        assert running.process.wait(30) == 0
    finally:
        running.kill()
    log = running.log_lines()
    order = [line.get("message") or line.get("path") for line in log]
    assert "Shutting down" in order and "/dm/v1/session/json" in order
    assert order.index("Shutting down") < order.index("/dm/v1/session/json"), order  # in flight
    assert not any(mark in running.log() for mark in TRACEBACK)


def test_sigterm_on_an_idle_server_exits_0(served_irs):
    running = ServiceServer([served_irs]).start()
    try:
        assert running.call("GET", "/readyz")[0] == 200
        assert running.stop() == 0
    finally:
        running.kill()


# --- usage errors -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def folders(served_irs, tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("usage")
    (base / "empty").mkdir()
    (base / "twice").mkdir()
    for name in ("one.ir", "two.ir"):
        (base / "twice" / name).write_bytes((served_irs / "senimate.ir").read_bytes())
    (base / "not_ir.ir").write_bytes(b"not an IR file")
    return {"served_irs": served_irs, "base": base, "empty": base / "empty", "twice": base / "twice",
            "not_ir": base / "not_ir.ir"}


@pytest.mark.parametrize("args, says", [
    ([], "give the IR files"),
    (["{base}/missing"], "no such file"),
    (["{empty}"], "no .ir files"),
    (["{twice}"], "both scenario 'senimate'"),
    (["{not_ir}"], "not_ir.ir"),
    (["{served_irs}", "--store", "memory:", "--workers", "2"], "--workers 1"),
    (["{served_irs}", "--store", "bogus:"], "bogus:"),
    (["{served_irs}", "--store", "sqlite:/nonexistent/dir/x.db"], "/nonexistent/dir"),
    (["{served_irs}", "--workers", "0"], "--workers"),
    (["{served_irs}", "--port", "{busy}"], "cannot listen"),
])
def test_usage_errors_are_one_line_and_exit_2(folders, args, says):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        argv = [arg.format(busy=busy.getsockname()[1], **folders) for arg in args]
        if "--store" not in argv:
            argv += ["--store", "memory:"]
        done = subprocess.run([sys.executable, "-m", "interpreter.cli", "serve", *argv,
                               "--host", "127.0.0.1"], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 2, (argv, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mgi: ") and says in lines[0], done.stderr
    assert not any(mark in done.stderr for mark in TRACEBACK)


# --- a property over request bodies -------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)
LIVE = st.sampled_from(["prop-a", "prop-b", "prop-c"])
SESSION_IDS = st.from_regex(r"[A-Za-z0-9_.:-]{1,130}", fullmatch=True) | st.text(max_size=12)
INTENTS = st.sampled_from(["user_wants_to_cancel", "user_wants_to_modify", "user_wants_to_end"])
ACTS = st.sampled_from(["affirm", "deny", "inform", "greet", "silence", "goodbye", "thank"])
NLU = st.fixed_dictionaries({}, optional={
    "intent": st.none() | INTENTS, "dialogue_act": st.none() | ACTS,
    "slots": st.dictionaries(st.sampled_from(["patient_name", "birth_year", "visit_date",
                                              "department", "contact_email"]) | st.text(),
                             JSON, max_size=3),
    "confidence": st.floats(0, 1), "source": st.text(max_size=8)})


def maybe(plausible: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly a value of the field's type, one time in five any JSON value."""
    return st.integers(0, 4).flatmap(lambda n: JSON if n == 4 else plausible)


FIELDS = {
    "/dm/v1/session": {
        "scenario": maybe(st.sampled_from(["senimate", "clinic_booking", "senimate_weather",
                                           "nope"])),
        "session_id": maybe(SESSION_IDS | LIVE), "bot_first": maybe(st.booleans()),
        "focus_node": maybe(st.sampled_from(["meal_check", "greeting", "confirm_booking",
                                             "bogus"])),
        "profile": maybe(st.dictionaries(st.text(max_size=6), JSON, max_size=2))},
    "/dm/v1/message": {
        "session_id": maybe(LIVE | LIVE | SESSION_IDS),
        "text": maybe(st.text(max_size=30) | st.sampled_from(["네", "예약 취소할게요", "", " "])),
        "nlu": maybe(NLU.flatmap(lambda nlu: st.fixed_dictionaries(
            {key: maybe(st.just(value)) for key, value in nlu.items()}))),
        "message_id": maybe(st.sampled_from(["m1", "m2"]) | st.text())},
    "/dm/v1/session/validate": {
        "scenario_json": maybe(st.just(json.loads(SENIMATE_TEXT))),
        "scenario_text": maybe(st.just(SENIMATE_TEXT) | st.text(max_size=40))},
}
STATUSES = {"/dm/v1/session": {201, 404, 409, 413, 422},
            "/dm/v1/message": {200, 404, 409, 413, 422},
            "/dm/v1/session/validate": {200, 413, 422}}
SUCCESS_KEYS = {"/dm/v1/session": {"session_id", "scenario", "ir_hash", "version", "turn"},
                "/dm/v1/message": {"session_id", "version", "replayed", "turn"},
                "/dm/v1/session/validate": {"diagnostics", "errors", "warnings"}}


REQUIRED = {"/dm/v1/session": ("scenario",), "/dm/v1/message": ("session_id", "text")}


@st.composite
def bodies(draw, path: str) -> bytes:
    """Bytes, any JSON value, or (mostly) an object of the endpoint's fields: the required
    ones nearly always, each optional one at times, now and then an unknown key."""
    kind = draw(st.sampled_from(["fields", "fields", "fields", "fields", "json", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "json":
        value = draw(JSON)
    else:
        fields = FIELDS[path]
        required = REQUIRED.get(path) or (draw(st.sampled_from(sorted(fields))),)
        value = {name: draw(strategy) for name, strategy in fields.items()
                 if draw(st.integers(0, 9)) < (9 if name in required else 3)}
        if draw(st.integers(0, 4)) == 4:
            value.update(draw(st.dictionaries(st.text(min_size=1, max_size=10), JSON,
                                              min_size=1, max_size=2)))
    return json.dumps(value, ensure_ascii=draw(st.booleans())).encode()


@pytest.fixture(scope="module")
def client(service):
    for sid, focus in (("prop-a", None), ("prop-b", "confirm_booking"), ("prop-c", "greeting")):
        service.call("POST", "/dm/v1/session", {"scenario": "clinic_booking", "session_id": sid,
                                                "focus_node": focus})  # focused: never complete
    holder = [Client(service.port)]
    yield holder
    holder[0].close()


def post(client: list, port: int, path: str, body: bytes) -> tuple:
    """One request on the kept-alive connection (reopened once if the server closed it)."""
    try:
        return client[0].call("POST", path, body)
    except (http.client.RemoteDisconnected, ConnectionError):
        client[0].close()
        client[0] = Client(port)
        return client[0].call("POST", path, body)


@pytest.mark.parametrize("path", sorted(FIELDS))
@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_any_body_gets_a_status_of_the_table_and_never_a_traceback(service, client, path, data):
    body = data.draw(bodies(path))
    status, answer, headers = post(client, service.port, path, body)
    assert status in STATUSES[path], (body[:300], status, answer)
    assert headers["content-type"] == "application/json"
    assert not any(mark in json.dumps(answer, ensure_ascii=False) for mark in TRACEBACK)
    if status < 400:
        assert isinstance(answer, dict) and set(answer) == SUCCESS_KEYS[path], answer
        if path == "/dm/v1/session/validate":
            assert answer["errors"] == sum(d["severity"] == "error"
                                           for d in answer["diagnostics"])
        else:
            sent = json.loads(body)
            assert answer["session_id"] == sent.get("session_id", answer["session_id"])
        event(f"{status}")
    else:
        event(f"{status} {assert_envelope((status, answer, headers))}")
