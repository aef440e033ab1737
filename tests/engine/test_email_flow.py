"""The reference task scenario (SPEC 8.6, seed 004): scenarios/email_compose.json end to end.

1. It compiles under `--strict` with no diagnostic, and `mgc schema` validates it.
2. Every tests/transcripts/email_*.transcript passes under `mgi test`, each with a fresh
   MAGO_OUTBOX folder of its own (the failure paths script the skill's result with `skill:`
   lines). A transcript marked `# transport: outbox` leaves exactly one message there, any
   other none.
3. The seven-turn conversation of seed 004 3.1 leaves one message whose From, To, Subject and
   body are the slots of the conversation.
4. Exactly once (SPEC 8.4), through the engine and a real skill: a turn retried after a crash
   between the skill and the save writes no second outbox file; over SMTP (a real aiosmtpd
   server on loopback) it sends again with the same Message-ID; a retried turn that carries
   the completed run of its lost attempt never sends again.
5. Every arrow of the state diagram of seed 004 3.2 and every branch of the slot-filling flow
   of 3.3 is taken by some transcript, read from the JSON lines of `mgi test --format json`;
   every node of the compiled graph is visited, and no transcript goes between two states in
   a way the diagram does not draw except the ones listed (`EXTRA_MOVES`).

test_transcripts.py picks the same transcripts up; see its SCENARIOS for email_compose and
the transport each needs.
"""

from __future__ import annotations

import email
import email.policy
import json
import re
from pathlib import Path

import pytest

from compiler.driver import check_file
from conftest import ROOT
from interpreter.engine import Engine
from interpreter.loader import load_program
from interpreter.stores.sessions import MemorySessionStore
from interpreter.transcripts.run import load_transcript, render_json, run_files
from interpreter.understanding.rules import RulesNLU
from support.smtp_server import SmtpServer

SCENARIO = ROOT / "scenarios" / "email_compose.json"
TRANSCRIPTS = sorted((ROOT / "tests" / "transcripts").glob("email_*.transcript"))
SEVEN_TURNS = ROOT / "tests" / "transcripts" / "email_seven_turns.transcript"
TRANSPORTS = ("outbox", "any")  # `# transport: X` in a transcript's header
MAIL_ENV = ("MAGO_SMTP_URL", "MAGO_OUTBOX")


def transport_of(path: Path) -> str:
    """What the transcript's header says: `outbox` (it sends one message), or `any` (no mark:
    it sends nothing, whatever the transport)."""
    found = re.search(r"^# transport: (\w+)$", path.read_text(encoding="utf-8"), re.M)
    mark = found.group(1) if found else "any"
    assert mark in TRANSPORTS, f"{path.name}: transport {mark!r} is not one of {TRANSPORTS}"
    return mark


# --- 1. the scenario --------------------------------------------------------------------


@pytest.fixture(scope="module")
def ir_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("email_ir")
    result = check_file(str(SCENARIO))
    assert not result.diagnostics, [f"{d.code} {d.path}: {d.message}" for d in result.diagnostics]
    (out / "email_compose.ir").write_bytes(result.ir_bytes())
    return out


def test_compiles_strict_without_any_diagnostic(mgc, tmp_path):
    done = mgc("compile", "--strict", "--format", "json", SCENARIO, "-o", tmp_path / "e.ir")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["diagnostics"] == [] and report["errors"] == report["warnings"] == 0


def test_mgc_schema_validates_the_scenario(mgc):
    done = mgc("schema")
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    scenario = json.loads(SCENARIO.read_text(encoding="utf-8"))
    assert schema_errors(schema, scenario) == []
    # the check can fail: a typo, a wrong type, a missing key are all found
    broken = json.loads(SCENARIO.read_text(encoding="utf-8"))
    broken["graph"]["nodes"][0]["respones"] = {}
    broken["slots"]["content"]["min_length"] = "10"
    del broken["graph"]["entry"]
    assert sorted(schema_errors(schema, broken)) == sorted([
        "/graph: missing 'entry'", "/graph/nodes/0: unknown 'respones'",
        "/slots/content/min_length: no alternative matches"])


def schema_errors(schema: dict, value, at: str = "", root: dict | None = None) -> list[str]:
    """The problems of `value` against a JSON Schema, for the keywords `mgc schema` uses
    ($ref, type, enum, properties, required, additionalProperties, items, anyOf, minimum,
    maximum, minItems, pattern); one line each, with the JSON pointer."""
    root = root or schema
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    if "anyOf" in schema:
        fits = any(not schema_errors(option, value, at, root) for option in schema["anyOf"])
        return [] if fits else [f"{at or '/'}: no alternative matches"]
    kind = schema.get("type")
    if kind is not None and not _has_type(value, kind):
        return [f"{at or '/'}: not {kind}"]
    errors = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{at or '/'}: not one of {schema['enum']}")
    if isinstance(value, dict):
        known = schema.get("properties", {})
        errors += [f"{at or '/'}: missing {key!r}" for key in schema.get("required", ())
                   if key not in value]
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            where = f"{at}/{key}"
            if key in known:
                errors += schema_errors(known[key], item, where, root)
            elif extra is False:
                errors.append(f"{at or '/'}: unknown {key!r}")
            elif isinstance(extra, dict):
                errors += schema_errors(extra, item, where, root)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{at or '/'}: fewer than {schema['minItems']} items")
        for i, item in enumerate(value):
            errors += schema_errors(schema.get("items", {}), item, f"{at}/{i}", root)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and \
            (value < schema.get("minimum", value) or value > schema.get("maximum", value)):
        errors.append(f"{at or '/'}: out of range")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{at or '/'}: does not match {schema['pattern']}")
    return errors


def _has_type(value, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"object": dict, "array": list, "string": str, "boolean": bool,
                              "null": type(None)}[kind])


# --- 2. the transcripts, each with its transport ------------------------------------------


@pytest.fixture(scope="module")
def runs(ir_dir, tmp_path_factory) -> dict[str, tuple[dict, list[Path]]]:
    """Transcript name -> (its report as `mgi test --format json` gives it, the messages it
    left in its outbox), each run on its own with a fresh outbox folder: in this process
    (`run_files`, what `mgi test` calls), since the transport is read at each run, instead of
    one `mgi test` child process per transcript that each pays the start-up."""
    found = {}
    for path in TRANSCRIPTS:
        outbox = tmp_path_factory.mktemp("outbox")
        with pytest.MonkeyPatch.context() as patch:
            for name in MAIL_ENV:
                patch.delenv(name, raising=False)
            patch.setenv("MAGO_OUTBOX", str(outbox))
            report = json.loads(render_json(run_files([str(path)], ir_dir)))
        [found[path.name]] = [(t, sorted(outbox.glob("*.eml"))) for t in report["transcripts"]]
    return found


def test_there_is_a_transcript_for_each_kind():
    kinds = [transport_of(p) for p in TRANSCRIPTS]
    assert len(TRANSCRIPTS) >= 15 and {"outbox", "any"} <= set(kinds)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_transcript_passes_with_its_transport(path: Path, runs):
    report, mails = runs[path.name]
    failures = [f"step {s['step']} (line {s['line']}): {f['message']}"
                for s in report["steps"] for f in s["failures"]]
    assert report["passed"], "\n".join(failures) or report["error"]
    expected = 1 if transport_of(path) == "outbox" else 0
    assert len(mails) == expected, f"{path.name} left {len(mails)} message(s) in its outbox"


# --- 3. the seven turns of seed 004 3.1 -----------------------------------------------------


def test_seven_turns_leave_one_message_that_is_the_slots(runs):
    report, mails = runs[SEVEN_TURNS.name]
    assert report["passed"] and len(mails) == 1
    sent = next(s["turn"] for s in report["steps"]
                if any(p["node"].startswith("executing") for p in s["turn"]["passed"]))
    slots = sent["slots"]
    message = email.message_from_bytes(mails[0].read_bytes(), policy=email.policy.default)
    assert message["To"] == slots["recipient"] == "happybell@gmail.com"
    assert message["From"] == slots["sender"] == "user@gmail.com"
    assert message["Subject"] == slots["subject"] == "안녕하세요"
    body = message.get_content().replace("\r\n", "\n")
    # the content as said, then the business card asked for in turn 6 (signature: true)
    assert slots["signature"] is True
    assert body == slots["content"] + "\n\n-- \n김마고\nuser@gmail.com\n"
    assert message["Message-ID"].endswith("@mago>")  # derived from the action id


# --- 4. exactly once, through the engine ----------------------------------------------------


class StoreCrash(Exception):
    """The process died between the skill's run and the session's save."""


class CrashingStore(MemorySessionStore):
    """The engine's memory store whose next `put`, once armed, raises instead of saving, as
    a crash between the skill and the save would leave things; it keeps the state it was
    asked to save (`lost`), as the service keeps the losing attempt of a version conflict."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.lost = None

    def put(self, state, expected_version: int) -> int:
        if self.armed:
            self.armed, self.lost = False, state
            raise StoreCrash("crashed before the save")
        return super().put(state, expected_version)


def seven_turns() -> list[tuple[str, dict | None]]:
    """The user turns of the seed 004 3.1 transcript (text and NLU override)."""
    return [(s.text, s.nlu) for s in load_transcript(str(SEVEN_TURNS)).steps if s.kind == "user"]


def engine_at_confirmation(ir_dir: Path) -> tuple[Engine, CrashingStore, tuple[str, dict]]:
    """An engine whose session `s` has had turns 1-6 of the seven: it is at the confirmation;
    the last (send) turn is returned for the test to play."""
    runtime = load_program(ir_dir / "email_compose.ir")
    store = CrashingStore()
    engine = Engine(runtime, RulesNLU(runtime.program), store=store)
    profile = load_transcript(str(SEVEN_TURNS)).profile
    engine.start("s", profile=profile)
    turns = seven_turns()
    for text, nlu in turns[:6]:
        engine.turn("s", text, nlu)
    assert engine.session("s").current_node == "confirming"
    return engine, store, turns[6]


def crashed_at_sending(ir_dir: Path) -> tuple[Engine, CrashingStore, tuple[str, dict]]:
    """`engine_at_confirmation`, then the send turn played once with a store whose `put`
    raises: the skill ran, the state was not saved (the crash between the skill and the save)."""
    engine, store, (text, nlu) = engine_at_confirmation(ir_dir)
    store.armed = True
    with pytest.raises(StoreCrash):
        engine.turn("s", text, nlu)
    return engine, store, (text, nlu)


@pytest.fixture
def no_transport(monkeypatch):
    for name in MAIL_ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_crash_before_the_save_writes_no_second_outbox_file(ir_dir, tmp_path, no_transport):
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    no_transport.setenv("MAGO_OUTBOX", str(outbox))
    engine, store, (text, nlu) = crashed_at_sending(ir_dir)
    [written] = list(outbox.glob("*.eml"))  # the skill ran before the crash
    first = written.read_bytes()
    assert engine.session("s").current_node == "confirming"  # nothing was saved
    again = engine.turn("s", text, nlu)  # the same turn number: the same action id
    assert again.next_node == "completed"
    assert list(outbox.glob("*.eml")) == [written] and written.read_bytes() == first
    sent = email.message_from_bytes(first, policy=email.policy.default)
    assert engine.session("s").skill_data["message_id"] == sent["Message-ID"]


def test_crash_before_the_save_resends_over_smtp_with_the_same_message_id(ir_dir, no_transport):
    with SmtpServer() as server:
        no_transport.setenv("MAGO_SMTP_URL", server.url)
        engine, store, (text, nlu) = crashed_at_sending(ir_dir)
        assert len(server.messages) == 1  # accepted by the server, then the crash
        again = engine.turn("s", text, nlu)
        messages = server.messages
    assert again.next_node == "completed"
    assert len(messages) == 2  # at least once: sent again ...
    ids = {m["Message-ID"] for m in messages}
    assert len(ids) == 1  # ... with one Message-ID, so the receiver can tell
    assert engine.session("s").skill_data["message_id"] in ids
    assert {m["To"] for m in messages} == {"happybell@gmail.com"}


def test_a_retry_that_carries_the_completed_run_never_sends_again(ir_dir, no_transport):
    """The lost attempt's recorded run (its state was never saved: the service's version
    conflict) comes with the retry; the node does not run its skill again."""
    with SmtpServer() as server:
        no_transport.setenv("MAGO_SMTP_URL", server.url)
        engine, store, (text, nlu) = crashed_at_sending(ir_dir)
        saved = engine.session("s")
        done = tuple(a for a in store.lost.actions if a not in saved.actions)
        assert [a.status for a in done] == ["ok"]
        again = engine.turn("s", text, nlu, carried=done)
        assert again.next_node == "completed"
        assert len(server.messages) == 1  # the first attempt's only
        assert engine.session("s").skill_data == done[0].data


def test_a_failed_send_retried_after_the_transport_is_back_completes(ir_dir, tmp_path,
                                                                   no_transport):
    """3.2 Failed -> Collecting (재시도) -> ... -> Completed: no transport first (failed), then
    an outbox; the retry goes back through Collecting to the confirmation, and the new
    confirmation is a new action that sends."""
    engine, _, (text, nlu) = engine_at_confirmation(ir_dir)
    failed = engine.turn("s", text, nlu)
    assert failed.next_node == "failed" and "보내지 못했어요" in failed.response
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    no_transport.setenv("MAGO_OUTBOX", str(outbox))
    retry = engine.turn("s", "다시 보내 줘")
    assert retry.next_node == "confirming" and retry.json_line()["passed"][0]["node"] == \
        "collect_recipient"
    sent = engine.turn("s", "네 보내 주세요")
    assert sent.next_node == "completed" and len(list(outbox.glob("*.eml"))) == 1


# --- 5. the diagrams of seed 004, covered ---------------------------------------------------

STATE = {
    "idle": "Idle",
    **dict.fromkeys(("collect_recipient", "collect_content", "ask_tone", "ask_sender",
                     "ask_sender_address", "ask_signature", "draft_ready"), "Collecting"),
    "confirming": "Confirming",
    **dict.fromkeys(("modifying", "modify_menu", "modify_recipient", "modify_content",
                     "modify_subject", "modify_tone", "modify_sender", "modify_signature",
                     "modify_attachments", "attachments_noted"), "Modifying"),
    "executing": "Executing", "executing_signed": "Executing",
    "completed": "Completed", "failed": "Failed", "cancelled": "Cancelled",
    "timeout": "Timeout",
    None: "[*]",  # the session ended
}
# Seed 004 3.2, arrow by arrow, with the transcript that takes it (docs/concepts/tasks.md: how each is built).
ARROWS = {
    ("[*]", "Idle"): ("초기 상태", "email_seven_turns"),
    ("Idle", "Collecting"): ("작업 시작 감지", "email_seven_turns"),
    ("Collecting", "Collecting"): ("정보 추가", "email_seven_turns"),
    ("Collecting", "Confirming"): ("필수 슬롯 완료", "email_seven_turns"),
    ("Collecting", "Modifying"): ("수정 요청", "email_modify_while_collecting"),
    ("Modifying", "Collecting"): ("수정 완료", "email_modify_while_collecting"),
    ("Confirming", "Executing"): ("실행 명령", "email_seven_turns"),
    ("Confirming", "Modifying"): ("수정 요청", "email_modify_at_confirming"),
    ("Executing", "Completed"): ("성공", "email_seven_turns"),
    ("Executing", "Failed"): ("실패", "email_failure_retry"),
    ("Failed", "Collecting"): ("재시도", "email_failure_retry"),
    ("Failed", "Cancelled"): ("취소", "email_failure_cancel"),
    ("Completed", "[*]"): ("종료", "email_seven_turns"),
    ("Cancelled", "[*]"): ("종료", "email_cancel"),
    ("Collecting", "Timeout"): ("30분 무응답", "email_timeout_collecting"),
    ("Confirming", "Timeout"): ("30분 무응답", "email_timeout_confirming"),
    ("Timeout", "Idle"): ("리셋", "email_timeout_collecting"),
}
# Moves the diagram does not draw, and why the scenario has them.
EXTRA_MOVES = {
    ("Idle", "Idle"): "anything but a request to write a mail: the bot says what it does",
    ("Confirming", "Confirming"): "a value said at the confirmation: the new summary is read",
    ("Modifying", "Modifying"): "which part? -> that part; a value not usable yet",
    ("Failed", "Failed"): "neither retry nor cancel: the question again",
    ("Timeout", "Collecting"): "a new request (or a yes) right after the reset: Timeout -> "
                               "Idle -> Collecting in one turn",
    **{(state, "Cancelled"): "취소 at any point (the global transition 취소)"
       for state in ("Idle", "Collecting", "Confirming", "Modifying")},
}


def hops(turn: dict) -> list[tuple[str, str | None, str]]:
    """(from node, to node or None for the end, reason) for each move a turn made: from the
    node that handled it, through the nodes it passed, to where it stopped."""
    chain = [turn["node"], *(p["node"] for p in turn["passed"]), turn["next_node"]]
    reasons = [turn["reason"], *(p["reason"] for p in turn["passed"])]
    return list(zip(chain, chain[1:], reasons))


def state_moves(report: dict) -> set[tuple[str, str]]:
    turns = [s["turn"] for s in report["steps"] if s["turn"] and s["kind"] == "user"]
    moves = {("[*]", STATE[turns[0]["node"]])}  # the session starts at the entry node
    moves |= {(STATE[a], STATE[b]) for t in turns for a, b, _ in hops(t)}
    return moves


def test_every_arrow_of_the_state_diagram_is_taken(runs):
    by_transcript = {name.removesuffix(".transcript"): state_moves(report)
                     for name, (report, _) in runs.items() if name.endswith(".transcript")}
    for arrow, (label, transcript) in ARROWS.items():
        assert arrow in by_transcript[transcript], f"{arrow} ({label}) not in {transcript}"
    taken = set().union(*by_transcript.values())
    assert taken - set(ARROWS) - set(EXTRA_MOVES) == set()


def taken(runs) -> set[tuple[str, str | None, str]]:
    """Every move of every turn of the passing transcripts."""
    return {hop for name, (report, _) in runs.items() if name.endswith(".transcript")
            for s in report["steps"] if s["turn"] for hop in hops(s["turn"])}


def test_every_node_is_visited_and_the_state_table_is_the_graph(runs, ir_dir):
    program = load_program(ir_dir / "email_compose.ir").program
    assert set(STATE) - {None} == {n.id for n in program.nodes}
    visited = {node for hop in taken(runs) for node in hop[:2]}
    assert {n.id for n in program.nodes} - visited == set()


def test_every_transition_is_taken(runs, ir_dir):
    """Each node's transitions (next_nodes, default_next, stays) and each global transition
    fire in some transcript; a task node passed because its slots are known (skip:filled)
    counts for the route it took."""
    runtime = load_program(ir_dir / "email_compose.ir")
    fired = {(node, reason) for node, _, reason in taken(runs)}
    routes = {(n.id, r.reason) for n in runtime.nodes for r in n.routes}
    skipped = {node for node, reason in fired if reason == "skip:filled"}
    assert skipped == {"collect_recipient", "collect_content", "ask_tone", "ask_sender",
                       "ask_sender_address", "ask_signature"}
    assert routes - fired == set()
    assert {g.reason for g in runtime.globals} - {reason for _, reason in fired} == set()


def steps_of(runs, name: str) -> list[dict]:
    return [s["turn"] for s in runs[name + ".transcript"][0]["steps"] if s["turn"]]


def test_every_branch_of_the_slot_filling_flow_is_taken(runs):
    """Seed 004 3.3: 충돌? 아니오 -> 업데이트 -> 검증 성공 -> 저장; 충돌? 예 -> 충돌 확인 요청 ->
    덮어쓰기 / 유지; 검증 실패 -> 오류 메시지 -> 다음 질문; 필수 슬롯 완료? 아니오 -> 다음 질문,
    예 -> 실행 준비 완료."""
    seven = steps_of(runs, "email_seven_turns")
    assert seven[2]["slots"]["content"] and seven[2]["next_node"] == "ask_tone"  # saved
    assert seven[5]["next_node"] == "confirming"  # required slots filled: ready
    for name, kept in (("email_conflict_overwrite", False), ("email_conflict_keep", True)):
        turns = steps_of(runs, name)
        asked = [i for i, t in enumerate(turns) if "바꿀까요?" in t["response"]]
        assert asked, f"{name} asks no conflict question"
        for i in asked:
            old, new = turns[i]["slots"]["recipient"], turns[i]["nlu"]["slots"]["recipient"]
            assert old != new
            assert turns[i + 1]["slots"]["recipient"] == (old if kept else new)
    checked = steps_of(runs, "email_validation_reask")
    refused = [t for t in checked if any(d.get("reason") in ("type", "min_length", "pattern")
                                         for d in t.get("dropped", ()))]
    assert len(refused) == 2  # a malformed address, a content under ten characters
    assert all("확인하지 못했어요" in t["response"] and t["reason"] == "gate:required_slots"
               for t in refused)
    assert any(t["reason"] == "gate:required_slots" and not t.get("dropped")
               for t in checked)  # nothing usable heard: the next question, no error
