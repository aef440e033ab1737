"""Differential testing (issue 4, item 4): the interpreter against `tests/oracle.py`.

The oracle is a second, deliberately simple implementation of SPEC 6.1/6.2 that reads the
scenario JSON directly. Each example compiles a scenario with `check_source` (scenarios with
errors are not used), starts a session on the real `Engine` and on the oracle, feeds both
the same turns (the NLU result given with each turn, as `mgi run --json --nlu scripted`
does) and requires node, next node, reason, completion, slots and the response (the
oracle words each turn again, rotation of response variants and re-prompt order included,
SPEC 9) to agree on every turn.
A divergence fails with the scenario, the turns so far and both readings of the turn.

Scenarios: the shipped ones, two hand-written ones that pack confirmations, `keep`, patterns,
bounds, gates, turn limits, stays, `no_route`, skills (ok, failed, unknown), resume rules,
unusual `closing_acts`, named and unnamed globals and safety rules (SPEC 10: the safety tier,
a hold at its own target, a scenario safety pattern, `nlu.safety` conditions on a category
without a rule), and generated ones
(`strategies.valid_scenarios`); turns from `strategies.turn_sequences`; and a table of
scripted conversations whose reasons were worked out by hand.

This module also holds the small harness the other interpreter property files share
(`compile_runtime`, `new_engine`, `run_side_by_side`, `comparable`, `FIXED`).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from compiler.driver import check_source
from interpreter.engine import Engine
from interpreter.ir import decode_ir
from interpreter.loader import Runtime
from interpreter.skills import SkillRegistry
from interpreter.wording.nlg import AGAIN, MESSAGES
from conftest import examples
from oracle import Oracle
from strategies import turn_sequences, valid_scenarios

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = {path.stem: json.loads(path.read_text("utf-8"))
           for path in sorted((ROOT / "scenarios").glob("*.json"))}


def scaled(n: int) -> int:
    """`n` examples in the `ci` profile; scaled in `long`: `conftest.examples`, under the name
    that test_interpreter_properties imports."""
    return examples(n)


# --- harness -----------------------------------------------------------------------------------


def comparable(scenario: dict) -> dict:
    """The scenario with every skill timeout at least a second: the built-in skills answer in
    microseconds, but a 1 ms timeout races the worker thread, and the oracle cannot predict
    a race. (Timeouts are covered by tests/test_skills.py.)"""
    scenario = copy.deepcopy(scenario)
    for node in scenario["graph"]["nodes"]:
        params = node.get("params", {})
        if params.get("timeout_ms") is not None and params["timeout_ms"] < 1000:
            params["timeout_ms"] = 1000
    return scenario


_COMPILED: dict[str, Runtime | None] = {}


def compile_runtime(scenario: dict) -> Runtime | None:
    """The `Runtime` of a scenario dict, or None when the compiler reports an error."""
    text = json.dumps(scenario, ensure_ascii=False, sort_keys=True)
    if text not in _COMPILED:
        if len(_COMPILED) > 256:
            _COMPILED.clear()
        result = check_source("generated.json", text)
        _COMPILED[text] = None if result.errors else Runtime(decode_ir(result.ir_bytes())[1],
                                                             "differential")
    return _COMPILED[text]


SKILLS = SkillRegistry.default()  # looking for plug-ins costs ~15 ms: once, not per engine
WORDS = (MESSAGES, AGAIN)  # the common sentences are data the oracle is given, not rules


def new_engine(runtime: Runtime, **options) -> Engine:
    """An engine with the shared skill registry and a deterministic clock."""
    options.setdefault("clock", ticking_clock())
    return Engine(runtime, skills=SKILLS, **options)


def ticking_clock():
    ticks = iter(range(1, 1_000_000))
    return lambda: float(next(ticks))


def row(result) -> tuple:
    """The compared part of a turn: node, next node, reason, completion, slots, response."""
    return (result.node, result.next_node, result.reason, result.complete, result.slots,
            result.response)


def describe(scenario: dict, turns: list, index: int, engine_row, oracle_row) -> str:
    shown = json.dumps(scenario, ensure_ascii=False)
    where = "opening" if index < 0 else \
        f"turn {index + 1} {json.dumps(turns[index], ensure_ascii=False)}"
    names = ("node", "next_node", "reason", "complete", "slots", "response")
    differ = [f"  {name}: engine {e!r} / oracle {o!r}"
              for name, e, o in zip(names, engine_row, oracle_row) if e != o]
    return "\n".join([f"first divergence at the {where}", *differ,
                      f"turns so far: {json.dumps(turns[:index + 1], ensure_ascii=False)}",
                      f"scenario: {shown}"])


def run_side_by_side(scenario: dict, turns: list, bot_first: bool | None) -> list[tuple]:
    """Run the engine and the oracle together; assert agreement turn by turn."""
    runtime = compile_runtime(scenario)
    assert runtime is not None
    engine, oracle = new_engine(runtime), Oracle(scenario, runtime.safety.detect, WORDS)
    opened = engine.start("s", bot_first=bot_first)
    state, step = oracle.start(bot_first)
    assert row(opened) == row(step), describe(scenario, turns, -1, row(opened), row(step))
    rows = []
    for i, turn in enumerate(turns):
        result = engine.turn("s", turn["user"], turn.get("nlu"))
        state, step = oracle.turn(state, turn["user"], turn.get("nlu"))
        rows.append(row(result))
        assert row(result) == row(step), describe(scenario, turns, i, row(result), row(step))
        if result.complete:
            break
    return rows


# --- hand-written scenarios (features the generated ones rarely combine) -----------------------

def leaf(field: str, operator: str, value=None) -> dict:
    """An object-form condition leaf (`value` omitted for is_empty / is_not_empty)."""
    return {"field": field, "operator": operator} if operator.startswith("is_") else \
        {"field": field, "operator": operator, "value": value}


HAND_WRITTEN = {
    "slots_and_gates": {
        "metadata": {"name": "slots_and_gates", "language": "en"},
        "intents": {"cancel": {"description": "stop"}, "help": {"description": "help"}},
        "slots": {
            "year": {"policy": "required", "value_type": "integer", "min": 1900, "max": 2025,
                     "on_conflict": "confirm"},
            "name": {"policy": "required", "value_type": "string", "min_length": 2,
                     "max_length": 12, "on_conflict": "keep"},
            "dept": {"policy": "optional", "value_type": "enum",
                     "values": ["eye", "Skin", "bone"]},
            "ok": {"policy": "optional", "value_type": "boolean", "on_conflict": "confirm"},
            "mail": {"policy": "optional", "value_type": "email", "max_length": 20},
            "code": {"policy": "optional", "value_type": "string", "pattern": "\\d{3}"},
            "score": {"policy": "optional", "value_type": "number", "min": 0, "max": 1},
        },
        "graph": {
            "entry": "ask", "bot_first": False,
            "global_transitions": [
                {"target": "cancelled", "condition": 'nlu.intent == "cancel"'},
                {"name": "help", "target": "help",
                 "condition": 'nlu.intent == "help" and system.current_node != "help"'},
                {"name": "again", "target": "ask", "condition": {"and": [
                    leaf("system.current_node", "equals", "ask"),
                    leaf("nlu.dialogue_act", "equals", "greet")]}},
            ],
            "nodes": [
                {"id": "ask", "description": "ask", "collect_slots": ["year", "name"],
                 "params": {"max_turns": 5, "min_turns": 2, "max_fallback_retries": 1},
                 "next_nodes": [
                     {"action": "stay", "condition": 'nlu.dialogue_act == "question"'},
                     {"target": "details",
                      "condition": "slots.year >= 1990 or slots.dept is not empty"}],
                 "default_next": "confirm"},
                {"id": "details", "description": "details",
                 "collect_slots": ["dept", "ok", "mail", "code", "score"],
                 "params": {"max_turns": 3, "turn_limit_enabled": False},
                 "next_nodes": [
                     {"target": "details",
                      "condition": "system.node_turns >= 2 and slots.ok == false"},
                     {"target": "confirm", "condition": {"or": [
                         leaf("slots.mail", "contains", "@"),
                         leaf("slots.score", "greater_than", 0.5),
                         leaf("slots.code", "in", ["123", "007"]),
                         leaf("system.fallback_exhausted", "equals", True)]}},
                     {"target": "confirm",
                      "condition": 'slots.dept == "Skin" or nlu.text contains "done"'}]},
                {"id": "confirm", "description": "confirm", "params": {"max_turns": 3},
                 "next_nodes": [
                     {"target": "booked", "condition":
                      'nlu.dialogue_act == "affirm" and nlu.confidence >= 0.5'},
                     {"target": "ask", "condition": leaf("nlu.dialogue_act", "in",
                                                         ["negate", None])},
                     {"target": "cancelled", "condition": "system.turn_limit_reached"}]},
                {"id": "help", "description": "help", "params": {"max_fallback_retries": 0},
                 "next_nodes": [{"target": "ask",
                                 "condition": 'system.previous_node == "ask"'}],
                 "default_next": "confirm"},
                {"id": "booked", "description": "booked",
                 "responses": {"complete": "done {slots.name}"}},
                {"id": "cancelled", "description": "cancelled",
                 "params": {"max_fallback_retries": 0}},
            ],
        },
    },
    "closing_and_skills": {
        "metadata": {"name": "closing_and_skills", "language": "ko"},
        "intents": {"bye": {"description": "wants to end"}},
        "slots": {"topic": {"policy": "optional", "value_type": "enum",
                            "values": ["food", "health"]}},
        "graph": {
            "entry": "hello", "bot_first": True,
            "closing_acts": ["affirm", "negate", "null", "thank"],
            "global_transitions": [
                {"name": "bye", "target": "closing", "condition": 'nlu.intent == "bye"'},
                {"target": "talk",
                 "condition": "system.conversation_resuming and slots.topic is empty"},
                {"name": "quiet", "target": "closing",
                 "condition": "system.no_input_count >= 3"},
            ],
            "nodes": [
                {"id": "hello", "description": "greet",
                 "params": {"skill": "weather", "skill_args": {"location": "부산"},
                            "timeout_ms": 2000},
                 "next_nodes": [{"target": "talk", "condition": 'skill.status == "ok"'}],
                 "default_next": "closing"},
                {"id": "talk", "description": "talk", "collect_slots": ["topic"],
                 "params": {"skill": "weather", "skill_args": {"location": "atlantis"}},
                 "next_nodes": [
                     {"target": "other", "condition":
                      'skill.status == "failed" and slots.topic == "health"'},
                     {"action": "stay", "condition": "system.session_turns < 4"},
                     {"target": "closing", "condition":
                      'not (nlu.dialogue_act in ["question", "greet"])'}]},
                {"id": "other", "description": "unknown skill",
                 "params": {"skill": "horoscope", "fallback": "sorry", "max_turns": 2},
                 "next_nodes": [
                     {"target": "closing", "condition":
                      'skill.status == "failed" and system.min_turns_met'},
                     {"action": "stay"}]},
                {"id": "closing", "description": "bye", "terminal": True,
                 "params": {"max_turns": 2, "max_fallback_retries": 0},
                 "next_nodes": [
                     {"target": "talk", "condition": {"and": [
                         leaf("system.conversation_resuming", "equals", True),
                         leaf("slots.topic", "is_not_empty")]}},
                     {"action": "stay", "condition": 'nlu.dialogue_act == "affirm"'}]},
            ],
        },
    },
}

HAND_WRITTEN["safety_first"] = {
    "metadata": {"name": "safety_first", "language": "ko"},
    "slots": {"mood": {"policy": "optional", "value_type": "enum", "values": ["good", "bad"]}},
    "safety": {"patterns": [{"category": "abuse", "pattern": "도둑이야"}]},
    "graph": {
        "entry": "ask", "bot_first": False,
        "safety": [{"category": "medical_emergency", "target": "help", "name": "119"},
                   {"category": "self_harm", "target": "closing"}],  # a hold at an end node
        "global_transitions": [
            {"name": "bye", "target": "closing", "condition": 'nlu.dialogue_act == "goodbye"'}],
        "nodes": [
            {"id": "ask", "description": "ask", "collect_slots": ["mood"],
             "next_nodes": [{"target": "report", "condition": 'nlu.safety == "abuse"'}],
             "default_next": "talk"},
            {"id": "talk", "description": "talk", "params": {"max_turns": 5},
             "next_nodes": [{"action": "stay", "condition": "system.node_turns < 3"}],
             "default_next": "closing"},
            {"id": "help", "description": "emergency", "responses": {"default": "119"},
             "default_next": "talk"},
            {"id": "report", "description": "abuse", "responses": {"default": "112"},
             "default_next": "talk"},
            {"id": "closing", "description": "bye", "terminal": True,
             "params": {"max_turns": 2, "max_fallback_retries": 0},
             "next_nodes": [{"target": "talk", "condition": "system.conversation_resuming"}]},
        ],
    },
}

HAND_WRITTEN["variants"] = {  # SPEC 9: rotation, re-prompt order, gates, invalid, confirm
    "metadata": {"name": "variants", "language": "ko"},
    "intents": {"bye": {"description": "wants to end"}},
    "slots": {
        "name": {"policy": "required", "value_type": "string", "min_length": 2,
                 "question": "성함이요?"},
        "age": {"policy": "optional", "value_type": "integer", "min": 0, "max": 130,
                "on_conflict": "confirm", "question": "연세는요?"},
    },
    "graph": {
        "entry": "ask", "bot_first": True,
        "global_transitions": [{"name": "bye", "target": "closing",
                                "condition": 'nlu.intent == "bye"'}],
        "nodes": [
            {"id": "ask", "description": "ask", "collect_slots": ["name", "age"],
             "params": {"max_fallback_retries": 3},
             "responses": {"default": ["이름을 알려 주세요.", "{slots.age}세시군요. 이름은요?"],
                           "no_input": ["천천히요.", "괜찮아요."]},
             "default_next": "chat"},
            {"id": "chat", "description": "chat", "params": {"max_turns": 4},
             "responses": {"default": ["{slots.name}님, 반가워요.", "더 들려주세요.", "그렇군요."],
                           "not_understood": "네?",
                           "turn_limit": ["이제 정리할까요?", "마무리해도 될까요?"]},
             "next_nodes": [{"target": "chat", "condition": 'nlu.dialogue_act == "greet"'},
                            {"action": "stay"}]},
            {"id": "closing", "description": "bye", "terminal": True,
             "params": {"max_fallback_retries": 0},
             "responses": {"default": "안녕히 가세요.", "complete": ["또 만나요.", "건강하세요."]},
             "next_nodes": [{"target": "chat", "condition": "system.conversation_resuming"}]},
        ],
    },
}

FIXED = {**SHIPPED, **HAND_WRITTEN}


def turns_for(scenario: dict, max_turns: int = 12):
    """Turn sequences for a scenario (the shared strategy)."""
    return turn_sequences(scenario, max_turns)


# --- the differential tests -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FIXED))
@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_engine_agrees_with_the_oracle_on_fixed_scenarios(name, data):
    scenario = comparable(FIXED[name])
    turns = data.draw(turns_for(scenario, 20), label="turns")
    bot_first = data.draw(st.sampled_from([None, True, False]), label="bot_first")
    run_side_by_side(scenario, turns, bot_first)


@st.composite
def scenario_and_turns(draw, max_nodes: int = 12, max_turns: int = 16):
    scenario = comparable(draw(valid_scenarios(1, max_nodes)))
    return scenario, draw(turns_for(scenario, max_turns))


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow,
                                                            HealthCheck.filter_too_much])
@given(case=scenario_and_turns(), bot_first=st.sampled_from([None, True, False]))
def test_engine_agrees_with_the_oracle_on_generated_scenarios(case, bot_first):
    scenario, turns = case
    assume(compile_runtime(scenario) is not None)
    run_side_by_side(scenario, turns, bot_first)


def say(act: str | None = "inform", text: str = "hm", **nlu) -> dict:
    """A scripted turn; `say(None)` is not understood, `say("", text="")` is silence."""
    if not text.strip():
        return {"user": text}
    return {"user": text, "nlu": {"dialogue_act": act, **nlu}}


SILENCE = {"user": ""}
SCRIPTS = {  # name: (scenario, turns, the reasons both must give)
    "confirm_then_affirm": ("slots_and_gates", [
        say(slots={"year": 1980, "name": "Kim"}), say(slots={"year": 1985}), say("affirm"),
        say("affirm"), say("affirm")],
        ["gate:min_turns", "gate:confirmation", "default_next", "next_nodes[0]", "terminal"]),
    "confirm_then_deny_keep_and_pattern": ("slots_and_gates", [
        say(slots={"year": "1995", "name": " Lee "}), say(slots={"year": 2001, "name": "Park"}),
        say("deny", slots={"code": "12a"}), say(slots={"code": "999", "dept": "skin"})],
        ["gate:min_turns", "gate:confirmation", "next_nodes[1]", "next_nodes[2]"]),
    "second_conflict_while_pending_is_dropped": ("slots_and_gates", [
        say(slots={"year": 1999, "name": "Kim"}), say(slots={"year": 1999}),
        say("question", slots={"ok": True}), say(slots={"ok": False}),
        say(None, slots={"ok": True}), say("greet")],
        ["gate:min_turns", "next_nodes[1]", "no_route", "gate:confirmation",
         "fallback:not_understood", "no_route"]),
    "turn_limit_lifts_the_gates": ("slots_and_gates", [
        say(), say("question"), say(slots={"name": "x"}), say(intent="nope"), say("question"),
        say()],
        ["gate:min_turns", "gate:required_slots", "gate:required_slots", "gate:required_slots",
         "stay:next_nodes[0]", "default_next"]),
    "fallback_budget_then_routing": ("slots_and_gates", [
        SILENCE, say(None), SILENCE, say("silence", text="uh"), say("negate", intent="help")],
        ["fallback:no_input", "gate:required_slots", "gate:required_slots",
         "gate:required_slots", "global:help"]),
    "resume_and_close": ("closing_and_skills", [
        say("greet"), say(slots={"topic": "health"}), say(intent="bye"), say(None),
        say(None, intent="bye"), say("thank")],
        ["next_nodes[0]", "next_nodes[0]", "global:bye", "next_nodes[0]", "global:bye",
         "terminal"]),
    "negate_is_a_closing_act_here": ("closing_and_skills", [
        say("greet"), SILENCE, SILENCE, SILENCE, say("negate")],
        ["next_nodes[0]", "fallback:no_input", "fallback:no_input", "global:quiet",
         "terminal"]),
    "turn_limit_at_an_end_node": ("closing_and_skills", [
        say(intent="bye"), say("affirm"), say("question")],
        ["global:bye", "stay:next_nodes[1]", "action_end"]),
    # SPEC 10: the safety tier first, before the fallback policy and Action END
    "safety_beats_the_fallback_policy": ("safety_first", [
        say(None, text="가슴이 아파요"), say("affirm")],
        ["safety:medical_emergency", "default_next"]),
    "safety_beats_action_end_and_holds_at_its_target": ("safety_first", [
        say("goodbye"), say(text="죽고 싶어요"), say(text="정말 죽고 싶어요"), say("thank")],
        ["global:bye", "safety:self_harm", "safety:self_harm", "action_end"]),
    "a_category_without_a_rule_is_read_by_conditions": ("safety_first", [
        say(safety="abuse"), say(text="도둑이야"), say(text="아들이 때려요")],
        ["next_nodes[0]", "default_next", "stay:next_nodes[0]"]),
    "the_detector_is_kept_over_the_nlu": ("safety_first", [
        say("affirm", text="숨을 못 쉬겠어요", safety="self_harm")],
        ["safety:medical_emergency"]),
    "silence_has_no_category": ("safety_first", [
        {"user": " ", "nlu": {"dialogue_act": "inform", "safety": "self_harm"}}],
        ["fallback:no_input"]),
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_scripted_conversations_agree(name):
    """Hand-picked paths through confirmations, gates, budgets and closings: both
    implementations agree, and both give the reasons worked out by hand from SPEC 6.2."""
    scenario, turns, reasons = SCRIPTS[name]
    rows = run_side_by_side(comparable(HAND_WRITTEN[scenario]), turns, None)
    assert [r[2] for r in rows] == reasons


WORDED_TURNS = [  # (turn, the reply both must give), worked out by hand from SPEC 9
    (say(), "성함이요?"),  # a gate asks the missing slot ...
    (say(), "다시 한번 여쭤볼게요. 성함이요?"),  # ... never twice in the same words
    (SILENCE, "천천히요."), (SILENCE, "괜찮아요."), (SILENCE, "천천히요."),  # no_input in turn
    (say(slots={"age": 200}), "말씀하신 내용을 확인하지 못했어요. 연세는요?"),
    (say(slots={"age": 200}), "죄송해요, 그 답으로는 아직 확인이 어려워요. 연세는요?"),
    (say(slots={"age": 70}), "성함이요?"),
    (say(slots={"age": 71}), "앞서 말씀하신 70을(를) 71(으)로 바꿀까요? 성함이요?"),
    (say("affirm"), "성함이요?"),  # the reply before held a question first: not a repeat
    (say(slots={"name": "김철수"}), "김철수님, 반가워요."),  # a move: variant 0 first
    (say(), "더 들려주세요."),  # a stay: the next variant
    (say(None), "네?"),
    (say(None), "그렇군요."),  # one not_understood, said: no re-ask here, so the default
    (say(), "이제 정리할까요?"), (say(), "마무리해도 될까요?"), (say(), "이제 정리할까요?"),
    (say("greet"), "김철수님, 반가워요."),  # a re-entry goes on with the rotation
    (say(intent="bye"), "안녕히 가세요."),
    (say(None), "더 들려주세요."),  # resumed from the closing node: chat's next variant
    (say(intent="bye"), "안녕히 가세요."),
    (say("thank"), "또 만나요."),
]


def test_the_worded_conversation_agrees_with_the_hand_worked_replies():
    """SPEC 9 on a hand-written scenario: rotation per response key, the re-prompt order, the
    gate's second wording, both invalid messages, a confirmation first, and completion."""
    scenario = comparable(HAND_WRITTEN["variants"])
    runtime = compile_runtime(scenario)
    engine = new_engine(runtime)
    assert engine.start("s").response == "이름을 알려 주세요."
    replies = [engine.turn("s", turn["user"], turn.get("nlu")).response
               for turn, _ in WORDED_TURNS]
    assert replies == [said for _, said in WORDED_TURNS]
    run_side_by_side(scenario, [turn for turn, _ in WORDED_TURNS], None)
    assert engine.session("s").complete
