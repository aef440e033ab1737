"""Differential testing (issue 4, item 4): the interpreter against `tests/support/oracle.py`.

The oracle is a second, deliberately simple implementation of SPEC 6.1/6.2 that reads the
scenario JSON directly. Each example compiles a scenario with `check_source` (scenarios with
errors are not used), starts a session on the real `Engine` and on the oracle, feeds both
the same turns (the NLU result given with each turn, as `mgi run --json --nlu scripted`
does) and requires node, next node, reason, completion and slots to agree on every turn.
A divergence fails with the scenario, the turns so far and both readings of the turn.

Scenarios: the shipped ones, two hand-written ones that pack confirmations, `keep`, patterns,
bounds, gates, turn limits, stays, `no_route`, skills (ok, failed, unknown), resume rules,
unusual `closing_acts`, named and unnamed globals and safety rules (SPEC 10: the safety tier,
a hold at its own target, a scenario safety pattern, `nlu.safety` conditions on a category
without a rule), and generated ones
(`strategies.valid_scenarios`, which also write SPEC 14's `set` on rows, `default_next`
objects, `on_enter` and group rows, route groups used by several nodes, and default responses
of conditional lines whose `when` reads slots or the turn's facts: the lines a reply shows
must be those whose `when` holds, `Oracle.lines_problem`; weather locations written as
lines, SPEC 17.21, with `lines_and_skill_args` beside them); turns from `strategies.turn_sequences`; and a table of
scripted conversations whose reasons were worked out by hand.

This module also holds the small harness the other interpreter property files share
(`compile_runtime`, `new_engine`, `run_side_by_side`, `comparable`, `FIXED`).
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

from compiler.driver import check_source
from interpreter.engine import Engine, ShiftedClock
from interpreter.ir import decode_ir
from interpreter.loader import Runtime
from interpreter.skills import SkillRegistry
from interpreter.skills.registry import Skill, SkillContext, SkillResult
from interpreter.skills.weather import WeatherSkill
from conftest import ROOT, examples
from support.oracle import Oracle
from support.strategies import profiles, turn_sequences, valid_scenarios, value_answers

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
    a race. (Timeouts are covered by tests/skills/test_skills.py.)"""
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


class EmailStub(Skill):
    """The `email` skill of the comparisons: sends nothing (no outbox, no SMTP); `ok` when
    its `to` and `from` arguments fill to two different texts, else `failed` (a stand-in
    for a refusal that a conversation can reach); the oracle knows this rule."""

    name = "email"

    def run(self, args: dict, context: SkillContext) -> SkillResult:
        to, sender = (args.get(k) for k in ("to", "from"))
        if isinstance(to, str) and isinstance(sender, str) and to.strip() and sender.strip() \
                and to.strip() != sender.strip():
            return SkillResult("ok", {"message_id": f"<{context.action_id}>"})
        return SkillResult("failed", {"error": "refused"})


# Built once (looking for plug-ins costs ~15 ms): the weather skill, and the stand-in above.
SKILLS = SkillRegistry([WeatherSkill(), EmailStub()])


def new_engine(runtime: Runtime, **options) -> Engine:
    """An engine with the shared skill registry and a clock that stands still but for the
    pauses the turns ask for (`take_turn`)."""
    options.setdefault("clock", paused_clock())
    options.setdefault("skills", SKILLS)
    return Engine(runtime, **options)


def paused_clock() -> ShiftedClock:
    """A deterministic clock: a fixed time plus the pauses (`ShiftedClock.pause`), so that
    `system.idle_seconds` is exactly the `idle` of a turn."""
    return ShiftedClock(lambda: 1_000_000.0)


def take_turn(engine: Engine, turn: dict, session: str = "s"):
    """One `mgi run --json` line on the engine: its pause (`idle`), then the turn."""
    if turn.get("idle"):
        engine.clock.pause(turn["idle"])
    return engine.turn(session, turn["user"], turn.get("nlu"))


def oracle_turn(oracle: Oracle, state: dict, turn: dict):
    return oracle.turn(state, turn["user"], turn.get("nlu"), turn.get("idle", 0))


def row(result) -> tuple:
    """The compared part of a turn: node, next node, reason, completion, slots, passed."""
    return (result.node, result.next_node, result.reason, result.complete, result.slots,
            tuple((p["node"], p["reason"]) for p in result.passed))


def step_row(step) -> tuple:
    return (step.node, step.next_node, step.reason, step.complete, step.slots, step.passed)


def describe(scenario: dict, turns: list, index: int, engine_row, oracle_row,
             profile: dict | None = None) -> str:
    shown = json.dumps(scenario, ensure_ascii=False)
    where = "opening" if index < 0 else \
        f"turn {index + 1} {json.dumps(turns[index], ensure_ascii=False)}"
    names = ("node", "next_node", "reason", "complete", "slots", "passed")
    differ = [f"  {name}: engine {e!r} / oracle {o!r}"
              for name, e, o in zip(names, engine_row, oracle_row) if e != o]
    return "\n".join([f"first divergence at the {where}", *differ,
                      f"turns so far: {json.dumps(turns[:index + 1], ensure_ascii=False)}",
                      f"profile: {json.dumps(profile, ensure_ascii=False)}",
                      f"scenario: {shown}"])


def run_side_by_side(scenario: dict, turns: list, bot_first: bool | None,
                     profile: dict | None = None) -> list[tuple]:
    """Run the engine and the oracle together; assert agreement turn by turn."""
    runtime = compile_runtime(scenario)
    assert runtime is not None
    engine, oracle = new_engine(runtime), Oracle(scenario, runtime.safety.detect)
    opened = engine.start("s", bot_first=bot_first, profile=profile)
    state, step = oracle.start(bot_first, profile)
    assert row(opened) == step_row(step), describe(scenario, turns, -1, row(opened),
                                                   step_row(step), profile)
    lines = oracle.lines_problem(opened.response, state, step.facts)  # SPEC 14.4
    assert lines is None, lines + "\n" + describe(scenario, turns, -1, (), (), profile)
    rows = []
    for i, turn in enumerate(turns):
        result = take_turn(engine, turn)
        state, step = oracle_turn(oracle, state, turn)
        rows.append(row(result))
        assert row(result) == step_row(step), describe(scenario, turns, i, row(result),
                                                       step_row(step), profile)
        lines = oracle.lines_problem(result.response, state, step.facts)
        assert lines is None, lines + "\n" + describe(scenario, turns, i, (), (), profile)
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
        "skills": {"horoscope": {"type": "python"}},  # declared, not installed: failed
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

HAND_WRITTEN["tasks_flow"] = {  # SPEC 8: every construct, in one e-mail-like flow
    "metadata": {"name": "tasks_flow", "language": "en"},
    "intents": {"cancel": {"description": "stop"}, "status": {"description": "ask status"},
                "change_files": {"description": "change the files"}},
    "profile": {"email": {"value_type": "email"}, "city": {"value_type": "string"},
                "name": {"value_type": "string", "max_length": 12}},
    "slots": {
        "recipient": {"policy": "required", "value_type": "email"},
        "subject": {"policy": "optional", "value_type": "string", "default": "hello"},
        "sender": {"policy": "optional", "value_type": "email", "default": "{profile.email}"},
        "files": {"policy": "required", "value_type": "list", "items": "string",
                  "min_items": 2},
        "tags": {"policy": "optional", "value_type": "list", "items": "enum",
                 "values": ["work", "home", "urgent"], "max_items": 2},
        "tone": {"policy": "optional", "value_type": "enum", "values": ["formal", "casual"],
                 "on_conflict": "confirm"},
        "cc": {"policy": "optional", "value_type": "list", "items": "email",
               "default": "{profile.email}"},  # one item from the profile: a list of one
        "nick": {"policy": "optional", "value_type": "string", "max_length": 5,
                 "default": "{profile.name}"},  # only a name the slot accepts
    },
    "graph": {
        "entry": "start", "bot_first": False,
        "global_transitions": [
            {"name": "cancel", "target": "cancelled", "condition": 'nlu.intent == "cancel"'},
            {"name": "idle", "target": "reset", "condition": "system.idle_seconds >= 1800"},
            {"name": "status", "target": "report", "condition": 'nlu.intent == "status"'},
        ],
        "nodes": [
            {"id": "start", "description": "hello", "default_next": "collect"},
            {"id": "collect", "description": "who and what",
             "collect_slots": ["recipient", "subject", "sender", "cc"], "params": {"max_turns": 5},
             "next_nodes": [{"target": "cancelled",
                             "condition": "system.turn_limit_reached and not system.required_slots_filled"}],
             "default_next": "check"},
            {"id": "check", "description": "route on the tags", "transient": True,
             "next_nodes": [{"target": "urgent", "condition": 'slots.tags contains "urgent"'}],
             "default_next": "attach"},
            {"id": "urgent", "description": "urgent mail", "collect_slots": ["tone", "nick"],
             "params": {"skip_if_filled": False}, "default_next": "attach"},
            {"id": "attach", "description": "the files", "collect_slots": ["files", "tags"],
             "default_next": "confirm"},
            {"id": "confirm", "description": "read back {slots.subject}",
             "responses": {"default": "Send it?"},
             "next_nodes": [
                 {"target": "send", "condition": 'nlu.dialogue_act == "affirm"'},
                 {"target": "collect", "condition": 'nlu.dialogue_act == "deny"'},
                 {"action": "stay", "condition": "system.slots_updated"},
                 {"target": "edit_files", "condition": 'nlu.intent == "change_files"'}]},
            {"id": "edit_files", "description": "new files", "collect_slots": ["files"],
             "params": {"clear_slots": ["files"]}, "default_next": "confirm"},
            {"id": "send", "description": "send it", "transient": True,
             "params": {"skill": "email", "timeout_ms": 2000, "skill_args": {
                 "to": "{slots.recipient}", "from": "{slots.sender}",
                 "subject": "{slots.subject}", "body": "files: {slots.files}"}},
             "next_nodes": [{"target": "sent", "condition": 'skill.status == "ok"'}],
             "default_next": "failed"},
            {"id": "sent", "description": "sent", "terminal": True,  # W407 otherwise
             "next_nodes": [{"action": "stay", "condition":
                             'skill.status == "ok" and nlu.dialogue_act == "question"'}]},
            {"id": "failed", "description": "failed: retry?",
             "next_nodes": [{"target": "send", "condition":
                             'nlu.dialogue_act == "affirm" and skill.status == "failed"'}],
             "default_next": "cancelled"},
            {"id": "report", "description": "status", "transient": True, "terminal": True,
             "next_nodes": [{"target": "confirm", "condition": "system.conversation_resuming"}]},
            {"id": "reset", "description": "the draft was dropped", "transient": True,
             "params": {"clear_slots": "all"}, "default_next": "collect"},
            {"id": "cancelled", "description": "cancelled"},
        ],
    },
}

# SPEC 14.4, 17.21: lines whose `when` reads the turn and the node's visit, and a skill's
# argument written as lines (the weather location: a known city, an unknown one, or two
# joined, which no table knows), its status routed on and said.
HAND_WRITTEN["lines_and_skill_args"] = {
    "metadata": {"name": "lines_and_skill_args", "language": "en"},
    "intents": {"help": {"description": "help"}},
    "slots": {"city": {"policy": "required", "value_type": "enum",
                       "values": ["busan", "london", "atlantis"]}},
    "graph": {"entry": "ask", "nodes": [
        {"id": "ask", "description": "ask the city", "collect_slots": ["city"],
         "params": {"clear_slots": ["city"]},
         "responses": {"default": {"lines": [
             {"text": "[L90.0]", "when": 'nlu.dialogue_act == "deny"'},
             {"text": "[L90.1]", "when": "system.node_turns >= 2"},
             {"text": "[L90.2]", "when": "system.previous_node is empty"},
             {"text": "[L90.3]", "when": 'system.previous_node == "weather"'},
             {"text": "[L90.4]", "when": 'nlu.intent == "help" or system.slots_updated'}]}},
         "next_nodes": [{"target": "help", "condition": 'nlu.intent == "help"'}],
         "default_next": "weather"},
        {"id": "help", "description": "help", "responses": {"default": {"lines": [
            {"text": "[L91.0]", "when": "system.session_turns <= 2"},
            {"text": "[L91.1]"}]}}, "default_next": "ask"},
        {"id": "weather", "description": "the weather",
         "params": {"skill": "weather", "skill_args": {"location": {"lines": [
             {"text": "{slots.city}", "when": 'nlu.dialogue_act == "inform"'},
             {"text": "london", "when": "system.session_turns >= 4"},
             {"text": "busan", "when": 'system.previous_node == "help"'}]}}},
         "responses": {"default": {"lines": [
             {"text": "[L92.0]", "when": 'skill.status == "ok"'},
             {"text": "[L92.1]", "when": 'skill.status == "failed"'}]}},
         "next_nodes": [{"target": "done", "condition": 'skill.status == "ok"'}],
         "default_next": "ask"},
        {"id": "done", "description": "done", "terminal": True,
         "responses": {"default": "Bye."}}]},
}

FIXED = {**SHIPPED, **HAND_WRITTEN}


def uses_tasks(scenario: dict) -> bool:
    """Whether a scenario uses SPEC 8 (then its turns carry answers and pauses, its sessions
    a profile)."""
    nodes = scenario["graph"]["nodes"]
    return bool(scenario.get("profile")) or any(
        n.get("transient") or "clear_slots" in n.get("params", {}) for n in nodes) or any(
        s["value_type"] == "list" or "default" in s for s in scenario.get("slots", {}).values())


def turns_for(scenario: dict, max_turns: int = 12, tasks: bool = False):
    """Turn sequences for a scenario (the shared strategy); `tasks`: with answers and pauses."""
    return turn_sequences(scenario, max_turns, tasks)


# --- the differential tests -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FIXED))
@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_engine_agrees_with_the_oracle_on_fixed_scenarios(name, data):
    scenario = comparable(FIXED[name])
    tasks = uses_tasks(scenario)
    turns = data.draw(turns_for(scenario, 20, tasks), label="turns")
    bot_first = data.draw(st.sampled_from([None, True, False]), label="bot_first")
    profile = data.draw(profiles(scenario), label="profile") if tasks else None
    run_side_by_side(scenario, turns, bot_first, profile)


@st.composite
def scenario_and_turns(draw, max_nodes: int = 12, max_turns: int = 16, tasks: bool = False):
    scenario = comparable(draw(valid_scenarios(1, max_nodes, tasks)))
    return scenario, draw(turns_for(scenario, max_turns, tasks))


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow,
                                                            HealthCheck.filter_too_much])
@given(case=scenario_and_turns(), bot_first=st.sampled_from([None, True, False]))
def test_engine_agrees_with_the_oracle_on_generated_scenarios(case, bot_first):
    scenario, turns = case
    assume(compile_runtime(scenario) is not None)
    run_side_by_side(scenario, turns, bot_first)


@pytest.mark.parametrize("feature,tasks", [
    ("route_groups", False), ('"set"', False), ('"on_enter"', False), ('"lines"', False),
    ('"default_next": {', False), ('"field": "system.previous_node", "operator"', False),
    ('"location": {"lines"', True)])
def test_generated_scenarios_use_the_designers_language(feature, tasks):
    """The generated scenarios the differential property runs on write SPEC 14's `set`,
    route groups, conditional lines (a `when` on the turn's facts too) and skill arguments
    written as lines, and such scenarios compile."""
    from hypothesis import find

    def uses(scenario: dict) -> bool:
        return feature in json.dumps(scenario) and compile_runtime(comparable(scenario)) \
            is not None
    found = find(valid_scenarios(1, 12, tasks), uses,
                 settings=settings(database=None, max_examples=2000))
    assert feature in json.dumps(found)


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow,
                                                            HealthCheck.filter_too_much])
@given(case=scenario_and_turns(tasks=True), bot_first=st.sampled_from([None, True, False]),
       data=st.data())
def test_engine_agrees_with_the_oracle_on_generated_task_scenarios(case, bot_first, data):
    """SPEC 8 too: transient chains and `skip:filled` with `passed`, defaults (literal and
    from the profile), list slots, `clear_slots`, idle pauses, the profile."""
    scenario, turns = case
    assume(compile_runtime(scenario) is not None)
    profile = data.draw(profiles(scenario), label="profile")
    rows = run_side_by_side(scenario, turns, bot_first, profile)
    for passed in (r[5] for r in rows if r[5]):
        event("a turn passed a node")
        event(f"longest chain: {min(max(len(r[5]) for r in rows if r[5]), 3)}+ nodes")
        if any(reason == "skip:filled" for _, reason in passed):
            event("skip:filled")
        if passed[-1][1] == "terminal":
            event("a chain completed at a transient end node")


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


# --- SPEC 8 by hand: chains and `passed`, defaults, lists, clearing, idle, the profile -------


def paused(turn: dict, seconds: int) -> dict:
    return {**turn, "idle": seconds}


CHECK, SEND = ("check", "default_next"), ("send", "next_nodes[0]")
TASK_SCRIPTS = {  # name: (profile, turns, [(reason, next_node, passed), ...]) on tasks_flow
    "collect_confirm_correct_send": ({"email": "me@x.co", "city": "부산"}, [
        say(), say(slots={"recipient": "a@b.co"}), say(slots={"files": "a.txt"}),
        say(slots={"files": ["b.txt", "a.txt"], "tags": ["work"]}), say("deny"),
        say("question"), say(slots={"tags": "home"}), say(slots={"tags": ["urgent"]}),
        say("affirm"), say("question"), say("thank")], [
        ("default_next", "collect", ()),
        ("default_next", "attach", (CHECK,)),  # subject and sender from their defaults
        ("gate:required_slots", "attach", ()),  # a list of one, min_items 2
        ("default_next", "confirm", ()),
        ("next_nodes[1]", "confirm", (("collect", "skip:filled"), CHECK,
                                      ("attach", "skip:filled"))),  # back where it began
        ("no_route", "confirm", ()),
        ("stay:next_nodes[2]", "confirm", ()),  # an item appended: slots_updated
        ("no_route", "confirm", ()),  # a third item is over max_items: dropped
        ("next_nodes[0]", "sent", (SEND,)),  # the sender from the profile: sent
        ("stay:next_nodes[0]", "sent", ()),  # the skill result carried to `sent`
        ("terminal", None, ())]),
    "idle_reset_urgent_clear_and_confirm": ({}, [
        say(), paused(say(slots={"recipient": "a@b.co", "subject": "hi"}), 100),
        paused(say(), 1900),
        paused(say(slots={"recipient": "b@c.de", "tags": ["urgent"], "files": ["x", "y"]}), 5),
        say(slots={"tone": "formal"}), say(None, intent="change_files"),
        say(slots={"tone": "casual", "files": ["p", "q"]}), say("affirm"), say("affirm")], [
        ("default_next", "collect", ()),
        ("default_next", "attach", (CHECK,)),
        ("global:idle", "collect", (("reset", "default_next"),)),  # every slot cleared
        ("default_next", "urgent", (("check", "next_nodes[0]"),)),  # skip_if_filled false
        ("default_next", "confirm", (("attach", "skip:filled"),)),
        ("next_nodes[3]", "edit_files", ()),  # files cleared on entering
        ("gate:confirmation", "edit_files", ()),
        ("default_next", "confirm", ()),
        ("next_nodes[0]", "failed", (("send", "default_next"),))]),  # no sender: refused
    "a_transient_end_node_completes_the_chain": ({}, [
        say(), say("thank", intent="status")], [
        ("default_next", "collect", ()),
        ("global:status", None, (("report", "terminal"),))]),
    "profile_defaults_only_where_the_slot_accepts_them": ({"name": "Alexandra", "email": "me@x.co"}, [
        say(), say(slots={"recipient": "a@b.co", "tags": ["urgent"]}), say(slots={"tone": "formal"}),
        say(intent="change_files")], [
        ("default_next", "collect", ()),
        ("default_next", "urgent", (("check", "next_nodes[0]"),)),  # cc: ["me@x.co"]
        ("default_next", "attach", ()),  # nick: "Alexandra" is too long, not stored
        ("gate:required_slots", "attach", ())]),
    "failed_skill_carried_and_retried": ({"city": "부산"}, [
        say(), say(intent="status"), say("affirm"), say("affirm"), say("deny"), say("thank")], [
        ("default_next", "collect", ()),
        ("global:status", "confirm", (("report", "next_nodes[0]"),)),  # resuming: not closing
        ("next_nodes[0]", "failed", (("send", "default_next"),)),
        ("next_nodes[0]", "failed", (("send", "default_next"),)),  # `failed` read carried
        ("default_next", "cancelled", ()),
        ("terminal", None, ())]),
}


@pytest.mark.parametrize("name", sorted(TASK_SCRIPTS))
def test_task_conversations_agree(name):
    """SPEC 8 paths worked out by hand: both implementations agree on every turn (slots and
    `passed` included) and give the reasons, next nodes and passed nodes above."""
    profile, turns, expected = TASK_SCRIPTS[name]
    rows = run_side_by_side(comparable(HAND_WRITTEN["tasks_flow"]), turns, False, profile)
    assert [(r[2], r[1], r[5]) for r in rows] == expected


# --- values read in context (SPEC 18): the engine's rules NLU, the oracle following it --------


@pytest.mark.parametrize("name, language", [("med_reminder", "ko"), ("pharmacy_refill", "en")])
@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow],
          deadline=None)
@given(data=st.data())
def test_negated_and_declined_answers_agree_turn_by_turn(name, language, data):
    """The engine reads each answer with its own rules NLU at its node; the oracle is given
    what the rules NLU reads there and applies SPEC 18.3-18.4 itself (yes/no values,
    `none_value`, `system.slot_declined`): both agree turn by turn."""
    from dataclasses import dataclass

    from interpreter.understanding.rules import RulesNLU

    @dataclass(frozen=True)
    class Ctx:
        program: object
        node: object

    scenario = comparable(SHIPPED[name])
    runtime = compile_runtime(scenario)
    assert runtime is not None
    nlu = RulesNLU(runtime.program)
    engine, oracle = new_engine(runtime, nlu=nlu), Oracle(scenario, runtime.safety.detect)
    turns = data.draw(value_answers(language), label="turns")
    opened = engine.start("s")
    state, step = oracle.start(None, None)
    assert row(opened) == step_row(step)
    for i, turn in enumerate(turns):
        node = runtime.nodes[runtime.node_index[engine.session("s").current_node]].node
        read = nlu.parse(turn["user"], Ctx(runtime.program, node))
        said = {"intent": read.intent, "dialogue_act": read.dialogue_act,
                "slots": dict(read.slots), "confidence": read.confidence}
        result = take_turn(engine, turn)
        state, step = oracle.turn(state, turn["user"], said)
        if read.dialogue_act == "deny" and not read.slots:
            event("a bare deny (a decline at an optional slot)")
        assert row(result) == step_row(step), describe(scenario, turns, i, row(result),
                                                       step_row(step))
        if result.complete:
            break
