"""route_turn, the policy steps of SPEC 6.2: reading the NLU (2), counters (3), the fallback
budget (4) and the turn limit (5), by hand."""

from __future__ import annotations

import pytest

from interpreter.understanding.nlu import NLUResult
from interpreter.routing import evaluations, read_nlu, route_turn
from interpreter.state import DialogueState

from support.irkit import SILENT, ProgramBuilder, all_, eq, nlu, senimate_like


def state_at(runtime, node, **fields) -> DialogueState:
    return DialogueState("s", runtime.ir_hash, node, **fields)


def node_id(runtime, index):
    return None if index is None else runtime.nodes[index].id


def route(runtime, node, result, **fields):
    return route_turn(runtime, state_at(runtime, node, **fields), result)


def two_nodes(**params):
    b = ProgramBuilder()
    b.node("a", **params).default("b")
    b.node("b")
    return b


# --- step 2: reading the NLU ---------------------------------------------------------------


def test_empty_and_whitespace_input_ignores_nlu_slots():
    b = ProgramBuilder()
    b.slot("x", "string")
    b.node("a").stay()
    rt = b.runtime()
    d = route(rt, "a", NLUResult(dialogue_act="inform", slots={"x": "v"}, text="  "))
    assert d.fallback == "no_input" and d.state.slots == {}


def test_spoken_silence_becomes_null_and_actual_silence_stays():
    rt = senimate_like().runtime()
    assert read_nlu(rt, nlu("silence", text="아 잠깐만요"))[1] == read_nlu(rt, nlu(None))[1]
    intent, act, notes = read_nlu(rt, nlu("silence", text="아 잠깐만요"))
    assert act == 8 and "silence" in notes[0]
    assert read_nlu(rt, SILENT)[1] == 7
    assert read_nlu(rt, nlu("affirm", text="   "))[1] == 7  # whitespace is silence


def test_spoken_silence_at_closing_node_resumes():
    rt = senimate_like().runtime()
    d = route(rt, "closure", nlu("silence", text="아 잠깐만요"))
    assert d.resuming and d.kind == "move" and node_id(rt, d.next_node) == "daily"


def test_negate_reads_as_deny():
    b = ProgramBuilder()
    b.node("a").to("denied", eq("nlu.dialogue_act", "deny")).default("other")
    b.node("denied")
    b.node("other")
    rt = b.runtime()
    d = route(rt, "a", nlu("negate"))
    assert d.reason == "next_nodes[0]" and "negate read as deny" in d.notes


def test_null_act_with_declared_intent_reads_as_inform():
    b = ProgramBuilder()
    b.intent("ask_weather")
    b.node("a").to("w", all_(eq("nlu.intent", "ask_weather"), eq("nlu.dialogue_act", "inform")))
    b.node("w")
    rt = b.runtime()
    d = route(rt, "a", nlu(None, intent="ask_weather"))
    assert (d.reason, d.fallback) == ("next_nodes[0]", None)


def test_undeclared_intent_reads_as_null_and_null_act_is_not_understood():
    b = ProgramBuilder()
    b.intent("known")
    b.node("a").default("b")
    b.node("b")
    rt = b.runtime()
    d = route(rt, "a", nlu(None, intent="made_up_by_llm"))
    assert d.intent is None and d.fallback == "not_understood" and d.kind == "fallback"
    assert any("undeclared intent" in n for n in d.notes)


def test_unknown_act_reads_as_null():
    rt = two_nodes().runtime()
    d = route(rt, "a", nlu("shrug"))
    assert d.fallback == "not_understood"


# --- step 3 and 4: counters and the fallback budget ---------------------------------------


@pytest.mark.parametrize("budget", [0, 1, 2])
def test_fallback_budget(budget):
    rt = two_nodes(max_fallback_retries=budget).runtime()
    state = state_at(rt, "a")
    for retry in range(1, budget + 1):
        d = route_turn(rt, state, SILENT)
        assert (d.kind, d.reason, d.next_node) == ("fallback", "fallback:no_input", 0)
        assert d.state.fallback_retries == retry and not d.fallback_exhausted
        state = d.state
    d = route_turn(rt, state, SILENT)
    assert (d.kind, d.reason, d.fallback, d.fallback_exhausted) == (
        "move", "default_next", "no_input", True)


def test_default_budget_is_two_and_not_understood_counts_too():
    rt = two_nodes().runtime()
    state = state_at(rt, "a")
    reasons = []
    for result in (nlu(None), SILENT, nlu(None)):
        d = route_turn(rt, state, result)
        reasons.append(d.reason)
        state = d.state
    assert reasons == ["fallback:not_understood", "fallback:no_input", "default_next"]


def test_understood_turn_resets_the_budget_and_counters():
    b = ProgramBuilder()
    b.node("a").stay()
    rt = b.runtime()
    state = state_at(rt, "a")
    d1 = route_turn(rt, state, SILENT)
    d2 = route_turn(rt, d1.state, nlu("inform"))
    assert (d2.state.fallback_retries, d2.state.no_input_count) == (0, 0)
    d3 = route_turn(rt, d2.state, SILENT)
    assert d3.kind == "fallback" and d3.state.no_input_count == 1


def test_counters_count_consecutive_turns():
    b = ProgramBuilder()
    b.node("a", max_fallback_retries=0).stay()
    rt = b.runtime()
    state = state_at(rt, "a")
    for expected in (1, 2, 3):
        state = route_turn(rt, state, SILENT).state
        assert state.no_input_count == expected and state.not_understood_count == 0
    state = route_turn(rt, state, nlu(None)).state
    assert (state.no_input_count, state.not_understood_count) == (0, 1)
    assert state.session_turns == 4 and state.node_turns == 4


def test_exhausted_fallback_is_visible_to_conditions():
    b = ProgramBuilder()
    b.node("a", max_fallback_retries=1).to("help", eq("system.fallback_exhausted", True)).stay()
    b.node("help")
    rt = b.runtime()
    d1 = route(rt, "a", nlu(None))
    assert d1.kind == "fallback"
    d2 = route_turn(rt, d1.state, nlu(None))
    assert (d2.reason, node_id(rt, d2.next_node)) == ("next_nodes[0]", "help")


def test_silent_close_global_from_session_counters():
    rt = senimate_like().runtime()
    state = state_at(rt, "general", no_input_count=2, fallback_retries=2)
    d = route_turn(rt, state, SILENT)
    assert (d.reason, node_id(rt, d.next_node)) == ("global:silent_close", "closure")


# --- step 5: the turn limit -----------------------------------------------------------------


def test_turn_limit_at_end_node_is_action_end_before_anything():
    rt = senimate_like().runtime()
    d = route(rt, "closure", nlu("deny", text="아니요 더 얘기해요"), node_turns=1)
    assert (d.kind, d.reason, d.tier, d.complete) == ("complete", "action_end", "action_end", True)
    assert evaluations(rt, d) == []  # no other routing
    assert d.state.complete_reason == "action_end"


def test_turn_limit_elsewhere_lifts_gates_and_sets_flag():
    b = ProgramBuilder()
    b.slot("name", "string", required=True)
    b.node("ask", collect=["name"], min_turns=5, max_turns=2,
           responses={"turn_limit": "넘어갈게요"}).default("done")
    b.node("done")
    rt = b.runtime()
    d = route(rt, "ask", nlu("inform"))
    assert d.reason == "gate:min_turns" and not d.turn_limit_reached
    d = route_turn(rt, d.state, nlu("inform"))
    assert d.turn_limit_reached and d.reason == "default_next"


def test_turn_limit_flag_is_a_condition_field_and_stays_until_move():
    b = ProgramBuilder()
    b.node("a", max_turns=1).to("b", eq("system.turn_limit_reached", True)).stay()
    b.node("b")
    b.node("c", max_turns=1).stay(eq("nlu.dialogue_act", "inform")).default("b")
    rt = b.runtime()
    assert route(rt, "a", nlu("inform")).reason == "next_nodes[0]"
    d = route(rt, "c", nlu("inform"))
    assert d.state.turn_limit_reached and d.reason == "stay:next_nodes[0]"
    assert route_turn(rt, d.state, nlu("inform")).state.turn_limit_reached


def test_turn_limit_disabled():
    b = ProgramBuilder()
    b.node("end", max_turns=1, turn_limit_enabled=False).stay(eq("nlu.dialogue_act", "deny"))
    rt = b.runtime()
    d = route(rt, "end", nlu("deny"), node_turns=5)
    assert d.reason == "stay:next_nodes[0]" and not d.turn_limit_reached
