"""The LLM NLU: the answer type and schema generated from the IR, the prompt, structured
output with its step-down on 400, one repair, and the rules NLU taking every turn the LLM
cannot; a property: whatever the server answers, the result is one the router can read."""

from __future__ import annotations

import json
import time
from collections import deque

import pytest
from hypothesis import given, settings, strategies as st

from interpreter import ir
from interpreter.llm.client import (ChatClient, LLMJournal, LLMSettings, LLMTimeout,
                                    TurnBudgets)
from interpreter.llm.prompts import nlu_messages, nlu_schema, read_answer, reading_type
from interpreter.understanding.nlu import NLUContext
from interpreter.llm.nlu import LLMNLU
from interpreter.understanding.rules import RulesNLU
from interpreter.slots import check_value
from interpreter.state import DialogueState, HistoryEntry, append_history

from support.irkit import ProgramBuilder
from support.llm_server import Reply, reference_runtime
from support.llm_server import nlu_answer as answer
from conftest import examples

SENIMATE = reference_runtime("senimate")
INTENTS = set(SENIMATE.intent_names)
RULES = RulesNLU(SENIMATE.program)


def context(runtime=SENIMATE, node="meal_check", history=()) -> NLUContext:
    raw: list[bytes] = []
    for entry in history:
        raw = append_history(raw, entry)
    state = DialogueState("s", runtime.ir_hash, node, session_turns=3, history=raw)
    table = runtime.node_named(node)
    return NLUContext(runtime.program, table.node, state, runtime)


def http_nlu(server, runtime=SENIMATE, **options) -> LLMNLU:
    settings = {"timeout": 1.0, "turn_budget": 3.0, "backoff": 0.01, **options}
    client = ChatClient(LLMSettings(server.url, "m", **settings), LLMJournal())
    return LLMNLU(client, runtime.program, RulesNLU(runtime.program))


# --- the answer type and its schema -------------------------------------------------------------


def typed_program() -> ir.Program:
    b = ProgramBuilder()
    b.slot("name", "string").slot("age", "integer", min=0, max=130)
    b.slot("temp", "number").slot("ok", "boolean").slot("mail", "email")
    b.slot("meal", "enum", values=["adequate", "skipped"])
    b.intent("end", "help")
    b.node("a", collect=["name"])
    return b.build()


@pytest.mark.parametrize("slot,fragment", [
    ("name", {"type": "string"}), ("age", {"type": "integer"}), ("temp", {"type": "number"}),
    ("ok", {"type": "boolean"}), ("mail", {"type": "string"}),
    ("meal", {"type": "string", "enum": ["adequate", "skipped"]}),
])
def test_slot_schema_is_typed_and_nullable(slot, fragment):
    schema = nlu_schema(reading_type(typed_program()))
    assert schema["properties"]["slots"]["properties"][slot] == {
        "anyOf": [fragment, {"type": "null"}]}


def test_schema_is_closed_and_strict():
    schema = nlu_schema(reading_type(typed_program()))
    assert schema["properties"]["intent"] == {"anyOf": [
        {"type": "string", "enum": ["end", "help"]}, {"type": "null"}]}
    assert schema["properties"]["dialogue_act"]["type"] == "string"
    assert sorted(schema["properties"]["dialogue_act"]["enum"]) == sorted(ir.ACTS)
    for obj in (schema, schema["properties"]["slots"]):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    text = json.dumps(schema)
    assert "$ref" not in text and '"title"' not in text and '"default"' not in text


def test_no_declared_intents_means_the_intent_is_always_null():
    b = ProgramBuilder()
    b.node("a")
    schema = nlu_schema(reading_type(b.build()))
    assert schema["properties"]["intent"] == {"type": "null"}
    assert schema["properties"]["slots"]["properties"] == {}


@pytest.mark.parametrize("text,error", [
    (answer("bogus"), "Invalid enum value 'bogus' - at `$.intent`"),
    (answer(act="negate"), "Invalid enum value 'negate' - at `$.dialogue_act`"),
    (answer(pain_level="3"), "Expected `int | null`, got `str` - at `$.slots.pain_level`"),
    (answer(pain_level=True), "got `bool` - at `$.slots.pain_level`"),
    (answer(pain_level=7.5), "got `float` - at `$.slots.pain_level`"),
    (answer(meal_status="lots"), "Invalid enum value 'lots' - at `$.slots.meal_status`"),
    (answer(mood="fine"), "unknown field `mood` - at `$.slots`"),
    ('{"intent": null, "dialogue_act": "inform", "slots": {}, "why": 1}', "unknown field `why`"),
    ('{"dialogue_act": "inform", "slots": {}}', "missing required field `intent`"),
    ("[]", "Expected `object`, got `array`"),
    ("네, 알겠어요", "JSON is malformed"),
    ("", "truncated"),
])
def test_answers_that_break_the_type_are_rejected_with_a_path(text, error):
    with pytest.raises(ValueError) as raised:
        read_answer(text, reading_type(SENIMATE.program))
    assert error in str(raised.value)


def test_answer_reading_takes_off_fences_and_reasoning_and_drops_nulls():
    reading = reading_type(SENIMATE.program)
    fenced = "<think>hmm</think>\n```json\n" + answer(
        "user_wants_to_end", "goodbye", meal_status="skipped", pain_level=None) + "\n```"
    assert read_answer(fenced, reading) == ("user_wants_to_end", "goodbye",
                                            {"meal_status": "skipped"}, None)
    assert read_answer('{"intent": null, "dialogue_act": "affirm"}', reading) == (
        None, "affirm", {}, None)


# --- the prompt ---------------------------------------------------------------------------------


def test_the_prompt_carries_guidance_node_intents_slots_and_history():
    history = [HistoryEntry(None, "오늘 식사는 잘 챙겨 드셨어요?", "meal_check", "opening"),
               HistoryEntry("", "천천히 말씀하세요.", "meal_check", "fallback:no_input")]
    ctx = context(history=history)
    schema = nlu_schema(reading_type(SENIMATE.program))
    system, user = nlu_messages(SENIMATE.program, ctx.node, ctx.state.entries(), "밥 먹었어요",
                                schema, True)
    text = system["content"]
    assert user == {"role": "user", "content": "밥 먹었어요"}
    assert SENIMATE.program.prompt_nlu.strip() in text
    assert ctx.node.description in text and "This node collects: meal_status." in text
    intent = SENIMATE.program.intents[0]
    assert f"- {intent.name}: {intent.description}" in text and '"그만할래요"' in text
    assert "- meal_status (enum: adequate | skipped) [asked here]" in text
    assert "- pain_level (integer, from 0 to 10)" in text
    for act in ir.ACTS:
        assert f"\n- {act}: " in text
    assert "Bot: 오늘 식사는 잘 챙겨 드셨어요?\nUser: (silence)\nBot: 천천히 말씀하세요." in text
    assert "must match this JSON schema" not in text  # the server enforces it
    unenforced = nlu_messages(SENIMATE.program, ctx.node, [], "x", schema, False)[0]["content"]
    assert json.dumps(schema, ensure_ascii=False, separators=(",", ":")) in unenforced


# --- against the server -------------------------------------------------------------------------


def test_a_valid_answer_is_the_result(llm):
    llm.nlu(answer(None, "inform", meal_status="adequate", health_status=None))
    nlu = http_nlu(llm)
    result = nlu.parse("밥 먹었어요", context())
    assert (result.intent, result.dialogue_act, result.slots, result.source, result.text) == (
        None, "inform", {"meal_status": "adequate"}, "llm", "밥 먹었어요")
    (request,) = llm.requests
    assert request["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "nlu_reading", "strict": True, "schema": nlu.schema}}


def test_a_server_without_json_schema_gets_json_object_and_the_schema_in_the_prompt(llm):
    llm.rejects.add("json_schema")
    llm.nlu(answer(act="affirm"), answer(act="deny"))
    nlu = http_nlu(llm)
    assert nlu.parse("네", context()).dialogue_act == "affirm"
    first, second = llm.requests
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    assert "must match this JSON schema" in second["messages"][0]["content"]
    assert nlu.parse("아니요", context()).dialogue_act == "deny"
    assert llm.requests[2]["response_format"] == {"type": "json_object"}  # remembered


def test_a_server_without_any_response_format_gets_the_prompt_alone(llm):
    llm.rejects.update(("json_schema", "json_object"))
    llm.nlu(answer(act="thank"))
    result = http_nlu(llm).parse("고마워요", context())
    assert (result.dialogue_act, result.source) == ("thank", "llm")
    assert "response_format" not in llm.requests[-1] and len(llm.requests) == 3


def test_an_invalid_answer_gets_one_repair_quoting_the_error(llm):
    llm.nlu(answer("wants_to_end"), answer("user_wants_to_end"))
    result = http_nlu(llm).parse("그만할래요", context())
    assert result.intent == "user_wants_to_end"
    assert result.source == "llm (repaired: Invalid enum value 'wants_to_end' - at `$.intent`)"
    repair = llm.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": answer("wants_to_end")}
    assert "Invalid enum value 'wants_to_end' - at `$.intent`" in repair[-1]["content"]


def test_a_repair_after_a_step_down_carries_the_stepped_down_prompt(llm):
    llm.rejects.add("json_schema")
    llm.nlu(answer("wants_to_end"), answer("user_wants_to_end"))
    result = http_nlu(llm).parse("그만할래요", context())
    assert result.intent == "user_wants_to_end" and result.source.startswith("llm (repaired: ")
    rejected, asked, repair = llm.requests
    assert rejected["response_format"]["type"] == "json_schema"
    assert "must match this JSON schema" not in rejected["messages"][0]["content"]
    assert asked["response_format"] == repair["response_format"] == {"type": "json_object"}
    assert "must match this JSON schema" in repair["messages"][0]["content"]
    assert repair["messages"][:2] == asked["messages"]  # the prompt the bad answer was given
    assert repair["messages"][2] == {"role": "assistant", "content": answer("wants_to_end")}


def test_a_second_invalid_answer_hands_the_turn_to_the_rules(llm):
    llm.nlu(answer(pain_level="three"), answer(pain_level="three"), answer())
    result = http_nlu(llm).parse("그만할래요", context())
    assert result.source == ("rules (llm fallback: invalid answer after one repair: Expected "
                             "`int | null`, got `str` - at `$.slots.pain_level`)")
    rules = RulesNLU(SENIMATE.program).parse("그만할래요", context())
    assert (result.intent, result.dialogue_act) == (rules.intent, rules.dialogue_act) == (
        "user_wants_to_end", rules.dialogue_act)
    assert len(llm.requests) == 2


def test_a_slow_server_hands_the_turn_to_the_rules_in_time(llm):
    llm.nlu(Reply(answer(act="affirm"), delay=0.6))
    started = time.monotonic()
    result = http_nlu(llm, timeout=0.2).parse("네", context())
    assert time.monotonic() - started < 0.5
    assert result.source == "rules (llm fallback: timeout after 0.2 s)"
    assert result.dialogue_act == "affirm"  # the rules NLU read it


def test_server_errors_hand_the_turn_to_the_rules(llm):
    llm.nlu(*[Reply(status=500)] * 3)
    result = http_nlu(llm, retries=2).parse("네", context())
    assert result.source == "rules (llm fallback: server error 500 after 3 attempts)"


def test_a_closed_connection_then_an_answer_is_a_reading(llm):
    llm.nlu(Reply(drop=True), answer(act="greet"))
    result = http_nlu(llm).parse("안녕하세요", context())
    assert (result.dialogue_act, result.source) == ("greet", "llm")


def test_not_understood_has_zero_confidence(llm):
    llm.nlu(answer(act="null"))
    assert http_nlu(llm).parse("ㅁㄴㅇㄹ", context()).confidence == 0.0


# --- properties ---------------------------------------------------------------------------------


class ScriptedClient:
    """A `ChatClient` stand-in that hands out answers in order (no HTTP: fast properties)."""

    journal = None

    def __init__(self, answers):
        self.answers = deque(answers)
        self.budgets = TurnBudgets(5.0)

    def complete(self, messages, budget, purpose="llm", response_format=None):
        if not self.answers:
            raise LLMTimeout("timeout after 0.2 s")
        return self.answers.popleft()


def assert_readable(result, text: str) -> None:
    """What the router needs: a declared intent or None, a known act, typed declared slots."""
    assert result.intent is None or result.intent in INTENTS
    assert result.dialogue_act in ir.ACTS or result.dialogue_act is None
    assert result.text == text
    for name, value in result.slots.items():
        rule = SENIMATE.slot_rules[SENIMATE.slot_index[name]]
        ok, _, reason = check_value(rule, value)
        assert ok or reason in ("min", "max"), (name, value, reason)  # bounds: the engine's job
    assert result.source == "llm" or result.source.startswith(("llm (repaired: ",
                                                               "rules (llm fallback: "))


near_answers = st.fixed_dictionaries({
    "intent": st.sampled_from([None, "user_wants_to_end", "bogus", 3]),
    "dialogue_act": st.sampled_from([*ir.ACTS, "negate", "", None]),
    "slots": st.dictionaries(
        st.sampled_from([*SENIMATE.slot_names, "undeclared"]),
        st.one_of(st.none(), st.integers(-5, 20), st.text(max_size=8), st.booleans(),
                  st.sampled_from(["adequate", "skipped", "good", "complaint"]),
                  st.floats(allow_nan=False)), max_size=4),
}).map(lambda value: json.dumps(value, ensure_ascii=False))
any_answer = st.one_of(near_answers, st.text(max_size=60))


@settings(max_examples=examples(300))
@given(first=any_answer, second=any_answer)
def test_any_answer_gives_a_readable_result(first, second):
    nlu = LLMNLU(ScriptedClient([first, second]), SENIMATE.program, RULES)
    result = nlu.parse("오늘 밥 먹었어요", context())
    assert_readable(result, "오늘 밥 먹었어요")


@settings(max_examples=examples(40))
@given(body=st.one_of(st.binary(max_size=80), near_answers.map(str.encode)))
def test_any_body_from_a_real_server_gives_a_readable_result(server, body):
    server.reset()
    server.nlu(Reply(body=body), Reply(body=body))
    client = ChatClient(LLMSettings(server.url, "m", timeout=1.0, retries=0), None)
    result = LLMNLU(client, SENIMATE.program, RULES).parse("네 좋아요", context())
    assert_readable(result, "네 좋아요")
