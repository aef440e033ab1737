"""route_turn: every tier and reason code of SPEC 6.2, and the seed-002 rules, by hand."""

from __future__ import annotations

import msgspec
import pytest

from interpreter.executors import ExecutorOutcome
from interpreter.routing import RoutingError, evaluations, route_turn, trace_lines
from interpreter.state import DialogueState, encode_state

from support.irkit import (SILENT, ProgramBuilder, all_, empty, eq, filled, ge, gt, isin, nlu, not_,
                   notin, senimate_like)


def state_at(runtime, node, **fields) -> DialogueState:
    return DialogueState("s", runtime.ir_hash, node, **fields)


def node_id(runtime, index):
    return None if index is None else runtime.nodes[index].id


def route(runtime, node, result, outcome=None, **fields):
    d = route_turn(runtime, state_at(runtime, node, **fields), result, outcome)
    return d


# --- the tiers, one by one ---------------------------------------------------------------


def two_nodes(**params):
    b = ProgramBuilder()
    b.node("a", **params).default("b")
    b.node("b")
    return b


def test_default_next_moves():
    rt = two_nodes().runtime()
    d = route(rt, "a", nlu("inform"))
    assert (d.kind, d.reason, d.tier, node_id(rt, d.next_node)) == (
        "move", "default_next", "default_next", "b")
    assert d.state.current_node == "b" and d.state.previous_node == "a"


def test_next_nodes_in_order_first_match_wins():
    b = ProgramBuilder()
    b.slot("meal_status", "enum", values=["adequate", "skipped"])
    b.node("meal").to("support", eq("slots.meal_status", "skipped")) \
        .to("other", filled("slots.meal_status")) \
        .default("health")
    b.node("support")
    b.node("other")
    b.node("health")
    rt = b.runtime()
    d = route(rt, "meal", nlu("inform", meal_status="skipped"))
    assert (d.reason, node_id(rt, d.next_node)) == ("next_nodes[0]", "support")
    d = route(rt, "meal", nlu("inform", meal_status="adequate"))
    assert (d.reason, node_id(rt, d.next_node)) == ("next_nodes[1]", "other")


def test_stay_action_reason():
    b = ProgramBuilder()
    b.node("greet").stay(eq("system.node_turns", 1)).default("next")
    b.node("next")
    rt = b.runtime()
    d = route(rt, "greet", nlu("affirm"))  # node_turns becomes 1
    assert (d.kind, d.reason, d.next_node) == ("stay", "stay:next_nodes[0]", 0)
    assert d.state.node_turns == 1 and d.state.current_node == "greet"
    d = route(rt, "greet", nlu("affirm"), node_turns=1)
    assert (d.kind, d.reason) == ("move", "default_next")


def test_no_route_stays_on_a_node_with_outgoing_conditions_only():
    b = ProgramBuilder()
    b.slot("x", "string")
    b.node("a").to("b", filled("slots.x"))
    b.node("b")
    rt = b.runtime()
    d = route(rt, "a", nlu("inform"))
    assert (d.kind, d.reason, d.tier, d.next_node) == ("stay", "no_route", "no_route", 0)


def test_terminal_completes_an_end_node_without_route():
    rt = two_nodes().runtime()
    d = route(rt, "b", nlu("affirm"))
    assert (d.kind, d.reason, d.complete, d.next_node) == ("complete", "terminal", True, None)
    assert d.state.complete and d.state.complete_reason == "terminal"
    assert d.state.current_node == "b"


def test_global_transition_reason_named_and_unnamed():
    b = ProgramBuilder()
    b.intent("bye", "help")
    b.node("a").default("b")
    b.node("b")
    b.node("end")
    b.node("helpdesk")
    b.global_("end", eq("nlu.intent", "bye"), name="user_wants_to_end")
    b.global_("helpdesk", eq("nlu.intent", "help"))
    rt = b.runtime()
    d = route(rt, "a", nlu("inform", intent="bye"))
    assert (d.reason, d.tier, node_id(rt, d.next_node)) == (
        "global:user_wants_to_end", "global", "end")
    d = route(rt, "a", nlu("question", intent="help"))
    assert (d.reason, node_id(rt, d.next_node)) == ("global[1]", "helpdesk")


def test_globals_come_before_gates_and_next_nodes():
    b = ProgramBuilder()
    b.intent("bye")
    b.slot("name", "string", required=True)
    b.node("ask", collect=["name"], min_turns=3).default("done")
    b.node("done")
    b.node("end")
    b.global_("end", eq("nlu.intent", "bye"), name="bye")
    rt = b.runtime()
    assert route(rt, "ask", nlu(intent="bye")).reason == "global:bye"


def test_request_tier_after_globals_before_gates():
    b = ProgramBuilder()
    b.intent("bye")
    b.node("a", min_turns=5).default("b")
    b.node("b")
    b.node("c")
    b.global_("c", eq("nlu.intent", "bye"), name="bye")
    rt = b.runtime()
    out = ExecutorOutcome(request=1, source="safety")
    d = route(rt, "a", nlu("inform"), out)
    assert (d.reason, d.tier, node_id(rt, d.next_node)) == ("request:safety", "request", "b")
    d = route(rt, "a", nlu("inform", intent="bye"), out)
    assert d.reason == "global:bye"
    with pytest.raises(RoutingError):
        route(rt, "a", nlu("inform"), ExecutorOutcome(request=99, source="x"))


def test_gate_min_turns_then_required_slots():
    b = ProgramBuilder()
    b.slot("name", "string", required=True)
    b.node("ask", collect=["name"], min_turns=2).default("done")
    b.node("done")
    rt = b.runtime()
    d = route(rt, "ask", nlu("inform", name="Kim"))
    assert (d.kind, d.reason, d.tier) == ("stay", "gate:min_turns", "gate")
    d = route(rt, "ask", nlu("inform"), node_turns=1)
    assert (d.reason, d.missing_slots) == ("gate:required_slots", (0,))
    d = route(rt, "ask", nlu("inform", name="Kim"), node_turns=1)
    assert (d.reason, node_id(rt, d.next_node)) == ("default_next", "done")
    assert d.state.slots == {"name": "Kim"}


def test_gate_holds_before_next_nodes():
    b = ProgramBuilder()
    b.slot("name", "string", required=True)
    b.node("ask", collect=["name"]).to("x", ge("system.node_turns", 1)).default("done")
    b.node("x")
    b.node("done")
    rt = b.runtime()
    assert route(rt, "ask", nlu("inform")).reason == "gate:required_slots"


# --- seed 002: the self-targeting global ------------------------------------------------


def test_global_targeting_the_current_node_is_skipped_and_terminal_completes():
    rt = senimate_like().runtime()
    d = route(rt, "closure", nlu("affirm", intent="user_wants_to_end"),
              slots={"daily_life": "x", "meal_status": "adequate"})
    assert (d.kind, d.reason, d.complete) == ("complete", "terminal", True)
    skipped = [result for source, result in evaluations(rt, d)
               if rt.program.source_map[source].label.startswith("global")]
    assert skipped == [None, None]


def test_global_to_another_node_still_routes():
    rt = senimate_like().runtime()
    d = route(rt, "meal", nlu(intent="user_wants_to_end"))
    assert (d.reason, node_id(rt, d.next_node)) == ("global:user_wants_to_end", "closure")


def test_current_node_is_exposed_to_conditions():
    b = ProgramBuilder()
    b.node("a").default("c")
    b.node("b").default("c")
    b.node("c")
    b.node("special")
    b.global_("special", eq("system.current_node", "b"), name="only_b")
    rt = b.runtime()
    assert route(rt, "a", nlu("inform")).reason == "default_next"
    assert route(rt, "b", nlu("inform")).reason == "global:only_b"


def test_previous_node_is_exposed_and_null_at_start():
    b = ProgramBuilder()
    b.node("a").to("came_from_b", eq("system.previous_node", "b")) \
        .to("fresh", eq("system.previous_node", None))
    b.node("b")
    b.node("came_from_b")
    b.node("fresh")
    rt = b.runtime()
    assert route(rt, "a", nlu("inform")).reason == "next_nodes[1]"
    assert route(rt, "a", nlu("inform"), previous_node="b").reason == "next_nodes[0]"


# --- seed 002: resuming vs closing acts --------------------------------------------------


@pytest.mark.parametrize("act,resuming", [
    ("affirm", False), ("goodbye", False), ("thank", False),
    ("inform", True), ("deny", True), ("question", True), ("greet", True),
    (None, True),  # null is not a closing act: a user who spoke is still there
])
def test_conversation_resuming_by_act(act, resuming):
    rt = senimate_like().runtime()
    d = route(rt, "closure", nlu(act, text="무슨 말"), slots={"daily_life": "x"})
    assert d.resuming is resuming
    if resuming:
        assert d.kind == "move" and node_id(rt, d.next_node) == "meal"
    else:
        assert (d.kind, d.reason) == ("complete", "terminal")


def test_silence_at_closing_node_is_closing_and_ends_with_zero_budget():
    rt = senimate_like().runtime()
    d = route(rt, "closure", SILENT)
    assert not d.resuming
    assert (d.kind, d.reason, d.fallback, d.fallback_exhausted) == (
        "complete", "terminal", "no_input", True)


def test_resuming_only_on_end_nodes():
    b = ProgramBuilder()
    b.node("a").to("b", eq("system.conversation_resuming", True)).default("c")
    b.node("b")
    b.node("c")
    rt = b.runtime()
    d = route(rt, "a", nlu("inform"))
    assert not d.resuming and d.reason == "default_next"


def test_null_in_declared_closing_acts_is_still_not_closing():
    b = ProgramBuilder(closing_acts=["affirm", "null"])
    b.node("end")
    rt = b.runtime()
    assert route(rt, "end", nlu(None, text="음...")).resuming is True


def test_resume_prefers_node_with_unfilled_slot():
    rt = senimate_like().runtime()
    d = route(rt, "closure", nlu("deny", text="아니 조금만 더 얘기해요"))
    assert node_id(rt, d.next_node) == "daily"
    d = route(rt, "closure", nlu("inform"), slots={"daily_life": "x", "meal_status": "skipped"})
    assert (d.reason, node_id(rt, d.next_node)) == ("next_nodes[2]", "general")


# --- step 7: moves ---------------------------------------------------------------------------


def test_move_resets_visit_counters():
    b = ProgramBuilder()
    b.node("a", max_turns=1, max_fallback_retries=1).default("b")
    b.node("b")
    rt = b.runtime()
    state = state_at(rt, "a", node_turns=3, fallback_retries=1, turn_limit_reached=True,
                     skill_status="ok", skill_data={"k": 1}, session_turns=9)
    d = route_turn(rt, state, nlu(None))  # budget spent: routing moves
    s = d.state
    assert d.kind == "move"
    assert (s.node_turns, s.fallback_retries, s.fallback_exhausted, s.turn_limit_reached) == (
        0, 0, False, False)
    assert (s.skill_status, s.skill_data, s.session_turns) == ("none", {}, 10)
    assert s.not_understood_count == 1  # session counters survive moves


def test_self_target_in_next_nodes_reenters():
    b = ProgramBuilder()
    b.node("loop", max_turns=3).to("loop", eq("nlu.dialogue_act", "deny")).default("out")
    b.node("out")
    rt = b.runtime()
    d = route(rt, "loop", nlu("deny"), node_turns=2, previous_node="out")
    assert (d.kind, d.reason, node_id(rt, d.next_node)) == ("move", "next_nodes[0]", "loop")
    assert d.state.node_turns == 0 and d.state.previous_node == "loop"


def test_route_turn_does_not_touch_its_input():
    rt = senimate_like().runtime()
    state = state_at(rt, "meal", slots={"daily_life": "walk"}, node_turns=1)
    before = encode_state(state)
    route_turn(rt, state, nlu("inform", meal_status="skipped"))
    assert encode_state(state) == before


def test_complete_session_refuses_routing():
    rt = two_nodes().runtime()
    with pytest.raises(RoutingError, match="complete"):
        route(rt, "a", nlu("inform"), complete=True)
    with pytest.raises(RoutingError, match="not in this scenario"):
        route(rt, "gone", nlu("inform"))


def test_focus_reports_but_does_not_follow():
    rt = two_nodes().runtime()
    d = route(rt, "a", nlu("inform"), focus=True, node_turns=4)
    assert (d.kind, d.reason, node_id(rt, d.next_node)) == ("move", "default_next", "b")
    assert d.state.current_node == "a" and d.state.node_turns == 0
    d = route(rt, "b", nlu("affirm"), focus=True)
    assert d.complete and not d.state.complete and d.state.current_node == "b"


# --- conditions through routing ---------------------------------------------------------------


def test_null_never_satisfies_ordering_and_not_equals_null_is_true():
    b = ProgramBuilder()
    b.slot("age", "integer")
    b.node("a").to("old", gt("slots.age", 60)).to("young", not_(gt("slots.age", 60)))
    b.node("old")
    b.node("young")
    rt = b.runtime()
    assert route(rt, "a", nlu("inform")).reason == "next_nodes[1]"
    assert route(rt, "a", nlu("inform", age=70)).reason == "next_nodes[0]"


def test_in_and_not_in_on_acts():
    b = ProgramBuilder()
    b.node("a").to("closing", isin("nlu.dialogue_act", ["affirm", "thank"])) \
        .to("other", notin("nlu.dialogue_act", ["goodbye"]))
    b.node("closing")
    b.node("other")
    rt = b.runtime()
    assert route(rt, "a", nlu("thank")).reason == "next_nodes[0]"
    assert route(rt, "a", nlu("question")).reason == "next_nodes[1]"
    assert route(rt, "a", nlu("goodbye")).reason == "no_route"


def test_trace_renders_display_values_and_results():
    b = ProgramBuilder()
    b.slot("meal_status", "enum", values=["adequate", "skipped"])
    b.intent("bye")
    b.node("meal").to("support", eq("slots.meal_status", "skipped")).default("health")
    b.node("support")
    b.node("health")
    b.node("end")
    b.global_("end", all_(eq("nlu.intent", "bye"), eq("system.current_node", "meal")),
              name="bye")
    rt = b.runtime()
    d = route(rt, "meal", nlu("inform"))
    lines = trace_lines(rt, d)
    assert ('transition next_nodes[0]: slots.meal_status == "skipped"  '
            '[slots.meal_status = null] -> false') in lines
    assert any('[nlu.intent = null, system.current_node = "meal"] -> false' in line
               for line in lines)
    assert lines[-1] == "route: default_next -> default_next (move -> health)"
    assert "transition" not in " ".join(trace_lines(rt, d, detailed=False))


def test_trace_names_dropped_slot_values():
    b = ProgramBuilder()
    b.slot("pain", "integer", min=0, max=10)
    b.node("a").stay()
    rt = b.runtime()
    lines = trace_lines(rt, route(rt, "a", nlu("inform", pain=15, mood="x")))
    assert "slot invalid: pain = 15 (max)" in lines
    assert 'slot dropped: mood = "x" (undeclared_slot)' in lines


def test_decision_is_a_frozen_record():
    rt = two_nodes().runtime()
    d = route(rt, "a", nlu("inform"))
    with pytest.raises(AttributeError):
        d.reason = "x"
    assert isinstance(msgspec.structs.asdict(d), dict)


def test_confidence_and_text_are_condition_fields():
    b = ProgramBuilder()
    b.node("a").to("sure", ge("nlu.confidence", 0.8)).to("idk", empty("nlu.text"))
    b.node("sure")
    b.node("idk")
    rt = b.runtime()
    assert route(rt, "a", nlu("inform", confidence=0.9)).reason == "next_nodes[0]"
    assert route(rt, "a", nlu("inform", confidence=0.2)).reason == "no_route"
