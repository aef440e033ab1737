"""Two rules of the task turn that seed 004's flow depends on (docs/concepts/tasks.md):

- a global transition that reads `system.idle_seconds` is tried before the fallback policy
  (tier `idle`): the first words after a long pause, understood or not, never keep a stale
  task alive; without the pause the fallback policy re-prompts as before;
- a `{profile.NAME}` default is stored only when the slot accepts the value (the slot's
  pattern, not the profile field's), so a default never puts into a slot what the slot
  would refuse from the user.
And the transcript lines that go with them: `idle:` and `skill:`.
"""

from __future__ import annotations

import json

import pytest

from compiler.driver import check_source
from interpreter.engine import Engine, ShiftedClock
from interpreter.ir import decode_ir
from interpreter.loader import Runtime
from interpreter.routing import evaluations
from interpreter.transcripts.parse import TranscriptError, parse_transcript
from interpreter.transcripts.run import run_transcript

SCENARIO = {
    "metadata": {"name": "pause", "language": "ko"},
    "profile": {"email": {"value_type": "email"}},
    "slots": {
        "recipient": {"policy": "required", "value_type": "email", "question": "누구에게요?"},
        "sender": {"policy": "optional", "value_type": "email", "default": "{profile.email}",
                   "pattern": "[a-z]+@[a-z]+\\.[a-z]+"},
    },
    "graph": {
        "entry": "collect",
        "global_transitions": [{"name": "idle", "target": "timeout",
                                "condition": "system.idle_seconds >= 1800"}],
        "nodes": [
            {"id": "collect", "description": "받는 사람", "collect_slots": ["recipient", "sender"],
             "next_nodes": [{"target": "send", "condition": "slots.recipient is not empty"}]},
            {"id": "send", "description": "보내기", "transient": True,
             "params": {"skill": "email", "skill_args": {
                 "to": "{slots.recipient}", "from": "{slots.sender}", "subject": "s", "body": "b"}},
             "next_nodes": [{"target": "sent", "condition": "skill.status == \"ok\""}],
             "default_next": "failed"},
            {"id": "sent", "description": "성공", "terminal": True,
             "responses": {"default": "보냈어요 {skill.data.message_id}"}},
            {"id": "failed", "description": "실패", "terminal": True,
             "responses": {"default": "못 보냈어요: {skill.data.error}"}},
            {"id": "timeout", "description": "초기화", "params": {"clear_slots": "all"},
             "responses": {"default": "초안을 지웠어요."}, "default_next": "collect"},
        ],
    },
}


def runtime() -> Runtime:
    result = check_source("pause.json", json.dumps(SCENARIO, ensure_ascii=False))
    assert not result.diagnostics, [(d.code, d.message) for d in result.diagnostics]
    return Runtime(decode_ir(result.ir_bytes())[1], "pause")


def started(profile: dict | None = None) -> tuple[Engine, ShiftedClock]:
    clock = ShiftedClock(lambda: 1_000.0)
    engine = Engine(runtime(), clock=clock)
    engine.start("s", False, None, profile)
    return engine, clock


@pytest.mark.parametrize("text", ["", "음..."])  # silence, and words not understood
def test_after_a_long_pause_the_idle_global_beats_the_re_prompt(text):
    engine, clock = started()
    engine.turn("s", "a", {"dialogue_act": "inform", "slots": {"sender": "me@x.com"}})
    clock.pause(1900)
    turn = engine.turn("s", text, None if not text else {"dialogue_act": None})
    assert (turn.reason, turn.next_node, turn.decision.tier) == ("global:idle", "timeout", "idle")
    assert turn.slots == {} and turn.response == "초안을 지웠어요."
    assert evaluations(engine.runtime, turn.decision) == [
        (engine.runtime.idle_globals[0].source, True)]


def test_without_the_pause_the_fallback_policy_re_prompts_as_before():
    engine, clock = started()
    clock.pause(60)
    turn = engine.turn("s", "음...", {"dialogue_act": None})
    assert (turn.reason, turn.next_node) == ("fallback:not_understood", "collect")


@pytest.mark.parametrize("address, stored", [("me@mail.com", "me@mail.com"),
                                             ("Me.Kim@mail.co.kr", None)])
def test_a_profile_default_is_stored_only_when_the_slot_accepts_it(address, stored):
    engine, _ = started({"email": address})
    engine.turn("s", "a", {"dialogue_act": "inform", "slots": {"recipient": "a@b.co"}})
    assert engine.session("s").slots.get("sender") == stored


TRANSCRIPT = """ir: unused.ir
nlu: scripted
profile: {"email": "me@mail.com"}

user: 보내 주세요
  nlu: {"dialogue_act": "inform", "slots": {"recipient": "you@mail.com"}}
  skill: {"status": "failed", "data": {"error": "550 refused"}}
  next: failed
  passed: send
  says: 550 refused
"""


def test_a_skill_line_scripts_the_result_of_every_skill_the_turn_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("MAGO_OUTBOX", str(tmp_path))
    result = run_transcript(parse_transcript(TRANSCRIPT), runtime())
    assert result.passed, result
    assert not list(tmp_path.iterdir())  # the scripted run sent nothing


@pytest.mark.parametrize("line", ['skill: {"status": "fine"}', 'skill: {"data": {}}',
                                  'skill: {"status": "ok", "data": []}',
                                  'skill: {"status": "ok", "extra": 1}'])
def test_a_bad_skill_line_is_an_error_naming_its_line(line):
    text = TRANSCRIPT.replace('skill: {"status": "failed", "data": {"error": "550 refused"}}',
                              line)
    with pytest.raises(TranscriptError) as raised:
        parse_transcript(text)
    assert raised.value.line == 7 and "skill:" in raised.value.message
