"""The engine: openings, turns, focus mode, completion, the JSON-lines fields, the NLU edge."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from interpreter.engine import (Engine, EngineError, SessionComplete, SessionExists,
                                SessionNotFound, TurnResult, UnknownNode)
from interpreter.understanding.nlu import NLUResult, ScriptedNLU
from interpreter.routing import route_turn
from interpreter.state import DialogueState

from support.irkit import SILENT, ProgramBuilder, eq, nlu, senimate_like
from conftest import examples

JSON_FIELDS = ["turn", "user", "node", "next_node", "reason", "complete", "response", "slots",
               "nlu", "passed"]


def engine(builder=None, **kwargs) -> Engine:
    ticks = iter(range(1, 10_000))
    return Engine((builder or senimate_like()).runtime(), clock=lambda: float(next(ticks)),
                  **kwargs)


# --- opening (SPEC 6.1) ------------------------------------------------------------------------


def test_bot_first_opening_is_turn_one_without_routing():
    e = engine()
    r = e.start("s")
    assert (r.turn, r.user, r.node, r.next_node, r.reason, r.complete) == (
        1, None, "greeting", "greeting", "opening", False)
    assert r.response == "안녕하세요, 저는 마고예요. 오늘 이야기 나눌 수 있을까요?"
    assert r.nlu is None and list(r.json_line()) == JSON_FIELDS
    state = e.session("s")
    assert (state.session_turns, state.node_turns, state.version) == (1, 1, 1)
    assert state.entries()[0].bot == r.response and state.entries()[0].user is None


def test_opening_counts_as_node_turn_one():
    e = engine()
    e.start("s")  # greeting stays while node_turns == 1: the opening was turn 1
    r = e.turn("s", "네", nlu("affirm"))
    assert (r.turn, r.reason, r.next_node) == (2, "default_next", "daily")


def test_bot_first_off_waits_and_first_message_is_turn_one():
    e = engine()
    r = e.start("s", bot_first=False)
    assert (r.turn, r.response) == (0, None)
    r = e.turn("s", "안녕하세요", nlu("greet"))
    assert (r.turn, r.reason, r.next_node) == (1, "stay:next_nodes[0]", "greeting")
    assert r.response.startswith("안녕하세요, 저는 마고예요")


def test_opening_without_default_uses_common_greeting_by_language():
    for language, expected in (("ko", "안녕하세요! 오늘 이야기 나눠요."), ("en-US", "Hello! Let's talk.")):
        b = ProgramBuilder(language=language)
        b.node("a").default("b")
        b.node("b")
        assert engine(b).start("s").response == expected


def test_opening_of_a_task_node_without_default_asks_its_slot():
    b = ProgramBuilder()
    b.slot("name", "string", required=True, question="성함이 어떻게 되세요?")
    b.node("ask", collect=["name"]).default("done")
    b.node("done")
    assert engine(b).start("s").response == "성함이 어떻게 되세요?"


def test_session_lifecycle_errors_are_one_line():
    e = engine()
    with pytest.raises(SessionNotFound, match="start it first"):
        e.turn("nobody", "hi")
    e.start("s")
    with pytest.raises(SessionExists):
        e.start("s")
    with pytest.raises(UnknownNode, match="unknown node 'meal_chek'"):
        e.start("t", focus_node="meal_chek")


# --- a whole conversation -------------------------------------------------------------------------


def test_conversation_to_completion_then_refusal():
    e = engine()
    e.start("s")
    script = [
        ("네", nlu("affirm"), "greeting", "daily", "default_next"),
        ("그냥 지내요", nlu("inform", daily_life="산책"), "daily", "daily", "gate:min_turns"),
        ("네", nlu("affirm"), "daily", "meal", "default_next"),
        ("그만할래요", nlu(intent="user_wants_to_end"), "meal", "closure",
         "global:user_wants_to_end"),
        ("응", nlu("affirm"), "closure", None, "terminal"),
    ]
    for text, result, node, next_node, reason in script:
        r = e.turn("s", text, result)
        assert (r.user, r.node, r.next_node, r.reason) == (text, node, next_node, reason)
    assert r.complete and r.response == "네, 편안한 하루 보내세요."
    assert r.slots == {"daily_life": "산책"}
    with pytest.raises(SessionComplete, match="complete"):
        e.turn("s", "여보세요", nlu("greet"))


def test_resume_from_closing_node_is_worded_by_the_target_not_the_farewell():
    e = engine()
    e.start("s")
    e.turn("s", "그만", nlu(intent="user_wants_to_end"))
    r = e.turn("s", "아니 조금만 더 얘기해요", nlu("deny"))
    assert (r.node, r.next_node, r.reason) == ("closure", "daily", "next_nodes[0]")
    assert r.response == "요즘 어떻게 지내세요?"
    assert "감사" not in r.response and "뵐게요" not in r.response


def test_closing_node_ends_on_silence_at_once():
    e = engine()
    e.start("s")
    e.turn("s", "그만", nlu(intent="user_wants_to_end"))
    r = e.turn("s", "", None)
    assert (r.reason, r.complete, r.nlu["dialogue_act"]) == ("terminal", True, "silence")


def test_closing_node_turn_limit_ends_with_action_end():
    b = ProgramBuilder()
    b.node("talk", responses={"default": "무슨 이야기할까요?"}).to("closure", eq(
        "nlu.dialogue_act", "goodbye")).stay()
    b.node("closure", terminal=True, max_turns=2,
           responses={"default": "다음에 또 뵐게요.", "complete": "안녕히 계세요."}) \
        .stay(eq("nlu.dialogue_act", "deny"))
    e = engine(b)
    e.start("s")
    assert e.turn("s", "잘 있어", nlu("goodbye")).next_node == "closure"
    r = e.turn("s", "아니", nlu("deny"))  # node turn 1: the stay rule holds
    assert (r.reason, r.response) == ("stay:next_nodes[0]", "네, 말씀해 주세요.")
    r = e.turn("s", "아니", nlu("deny"))  # node turn 2 = max_turns: Action END first
    assert (r.reason, r.complete, r.next_node, r.response) == (
        "action_end", True, None, "안녕히 계세요.")


def test_json_line_fields_and_read_nlu():
    e = engine()
    e.start("s")
    r = e.turn("s", "아 잠깐만요", {"dialogue_act": "silence", "intent": "made_up"})
    line = r.json_line()
    assert list(line) == JSON_FIELDS + ["dropped"]
    assert line["nlu"] == {"intent": None, "dialogue_act": "null", "slots": {},
                           "confidence": 1.0}
    assert line["reason"] == "fallback:not_understood" and line["next_node"] == "greeting"
    assert line["dropped"] == [{"intent": "made_up", "reason": "undeclared_intent"}]


def test_json_line_says_what_it_dropped_and_only_then():
    e = engine()
    e.start("s")
    r = e.turn("s", "음", {"dialogue_act": "shrug", "slots": {"nope": 1}})
    assert r.json_line()["dropped"] == [
        {"dialogue_act": "shrug", "reason": "unknown_act"},
        {"slot": "nope", "value": 1, "reason": "undeclared_slot"}]
    assert "dropped" not in e.turn("s", "네", {"dialogue_act": "negate"}).json_line()


def test_history_records_user_bot_node_reason():
    e = engine()
    e.start("s")
    e.turn("s", "네", nlu("affirm"))
    entries = e.session("s").entries()
    assert [(x.user, x.node, x.reason) for x in entries] == [
        (None, "greeting", "opening"), ("네", "greeting", "default_next")]
    assert entries[1].bot == "요즘 어떻게 지내세요?"


def test_versions_and_timestamps_advance():
    e = engine()
    e.start("s")
    e.turn("s", "네", nlu("affirm"))
    state = e.session("s")
    assert state.version == 2 and state.created_at == 1.0 and state.updated_at == 2.0


# --- focus mode --------------------------------------------------------------------------------------


def test_focus_mode_never_moves_but_reports_the_route():
    e = engine()
    r = e.start("s", focus_node="meal")
    assert (r.node, r.next_node, r.focus) == ("meal", "meal", True)
    assert r.response == "오늘 식사는 잘 챙겨 드셨어요?"
    for result, reason, next_node in [
        (nlu("inform", meal_status="adequate"), "default_next", "health"),
        (nlu(intent="user_wants_to_end"), "global:user_wants_to_end", "closure"),
    ]:
        r = e.turn("s", "말", result)
        assert (r.node, r.reason, r.next_node) == ("meal", reason, next_node)
        assert e.session("s").current_node == "meal"


def test_focus_mode_on_an_end_node_reports_completion_and_keeps_going():
    e = engine()
    e.start("s", focus_node="closure")
    r = e.turn("s", "응", nlu("affirm"))  # the opening was node turn 1 of max_turns 2
    assert (r.complete, r.next_node, r.reason) == (True, None, "action_end")
    r = e.turn("s", "응", nlu("affirm"))  # the visit restarted: node turn 1
    assert (r.complete, r.next_node, r.reason) == (True, None, "terminal")
    r = e.turn("s", "무릎이 아파요", nlu("inform"))
    assert (r.complete, r.next_node, r.reason) == (False, "daily", "next_nodes[0]")
    assert e.session("s").current_node == "closure" and not e.session("s").complete


# --- the NLU edge ------------------------------------------------------------------------------------


class RecordingNLU:
    def __init__(self, result: NLUResult):
        self.result, self.calls = result, []

    def parse(self, text, context):
        self.calls.append((text, context.node.id, context.state.current_node))
        return self.result


def test_nlu_gets_the_context_and_empty_input_skips_it():
    nlu_ = RecordingNLU(NLUResult(dialogue_act="affirm"))
    e = engine(nlu=nlu_)
    e.start("s")
    e.turn("s", "   ", None)
    assert nlu_.calls == []
    r = e.turn("s", "네", None)
    assert nlu_.calls == [("네", "greeting", "greeting")]
    assert r.nlu["dialogue_act"] == "affirm" and r.reason == "default_next"


def test_override_replaces_the_nlu_and_malformed_override_is_one_line():
    nlu_ = RecordingNLU(NLUResult(dialogue_act="deny"))
    e = engine(nlu=nlu_)
    e.start("s")
    r = e.turn("s", "네", {"dialogue_act": "affirm"})
    assert nlu_.calls == [] and r.nlu["dialogue_act"] == "affirm"
    with pytest.raises(EngineError, match="malformed nlu"):
        e.turn("s", "네", {"dialogue_act": 3})
    assert e.session("s").session_turns == 2  # the failed turn saved nothing


def test_scripted_nlu_queue():
    scripted = ScriptedNLU([{"dialogue_act": "affirm"}])
    e = engine(nlu=scripted)
    e.start("s")
    assert e.turn("s", "네", None).nlu["dialogue_act"] == "affirm"
    assert e.turn("s", "어", None).reason == "fallback:not_understood"  # queue empty


def test_a_failing_nlg_saves_nothing():
    class Broken:
        def render(self, decision, context):
            raise RuntimeError("llm down")
    e = engine(nlg=Broken())
    with pytest.raises(RuntimeError):
        e.start("s")
    assert e.store.get("s") is None


def test_turn_result_is_a_struct():
    assert "decision" in TurnResult.__struct_fields__


# --- the fallback policy as a property --------------------------------------------------------------


@settings(max_examples=examples(80), deadline=None)
@given(st.integers(0, 3), st.lists(st.sampled_from(["silence", "null", "inform"]), max_size=30))
def test_fallback_never_holds_a_node_longer_than_its_budget(budget, acts):
    b = ProgramBuilder()
    b.node("a", max_fallback_retries=budget).stay(eq("nlu.dialogue_act", "inform")) \
        .to("b", eq("system.fallback_exhausted", True))
    b.node("b", max_fallback_retries=budget).to("a", eq("system.fallback_exhausted", True)) \
        .stay()
    rt = b.runtime()
    state = DialogueState("s", rt.ir_hash, "a")
    run = 0
    for act in acts:
        result = SILENT if act == "silence" else nlu(None if act == "null" else act)
        d = route_turn(rt, state, result)
        run = run + 1 if d.kind == "fallback" else 0
        assert run <= budget
        if act != "inform" and d.kind != "fallback":
            assert d.fallback_exhausted and d.kind == "move"  # control went to routing
        state = d.state


# --- a damaged IR file: nodes are read on first use ------------------------------------------


def forged_runtime(tmp_path, index: int):
    """A lazily loaded runtime whose node `index` targets a node that does not exist (a
    hand-made file with its checksum recomputed: the load itself succeeds)."""
    from msgspec.structs import replace

    from interpreter import ir
    from interpreter.loader import load_program

    program = senimate_like().build()
    node = program.nodes[index]
    bad = replace(node, transitions=[ir.Transition(999, None, node.transitions[0].source)])
    nodes = [*program.nodes[:index], bad, *program.nodes[index + 1:]]
    path = tmp_path / "forged.ir"
    path.write_bytes(ir.encode_ir(replace(program, nodes=nodes), "test", "0" * 64))
    return load_program(path)


def test_a_damaged_node_first_read_in_a_turn_is_a_one_line_engine_error(tmp_path):
    engine = Engine(forged_runtime(tmp_path, 1))
    engine.start("s")
    with pytest.raises(EngineError, match="targets index 999") as info:
        for _ in range(6):  # until the session reaches the damaged node
            before = engine.store.get("s")
            engine.turn("s", "네", nlu("affirm"))
    assert "\n" not in str(info.value)
    assert engine.store.get("s") == before  # the failed turn saved nothing


def test_a_damaged_entry_node_is_a_one_line_engine_error_at_start(tmp_path):
    engine = Engine(forged_runtime(tmp_path, 0))
    with pytest.raises(EngineError, match="targets index 999"):
        engine.start("s")
    assert engine.store.get("s") is None
