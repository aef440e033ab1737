"""Slot validation and conflicts (SPEC 2.1 and 6.2 step 2), table-driven."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from interpreter import ir
from interpreter.routing import route_turn
from interpreter.slots import SlotRule, apply_slots, check_value
from interpreter.state import DialogueState, PendingConfirmation

from support.irkit import ProgramBuilder, nlu

AFFIRM, DENY, INFORM = ir.ACTS.index("affirm"), ir.ACTS.index("deny"), ir.ACTS.index("inform")
SILENCE, NULL = ir.ACTS.index("silence"), ir.ACTS.index("null")


def rule(value_type, **fields) -> SlotRule:
    return SlotRule(0, ir.Slot(name="s", value_type=value_type, required=False, **fields))


@pytest.mark.parametrize("value_type,fields,value,expected", [
    ("integer", {}, 7, (True, 7, "")),
    ("integer", {}, "7", (True, 7, "")),
    ("integer", {}, " -3 ", (True, -3, "")),
    ("integer", {}, 7.0, (True, 7, "")),
    ("integer", {}, 7.5, (False, 7.5, "type")),
    ("integer", {}, "7.5", (False, "7.5", "type")),
    ("integer", {}, True, (False, True, "type")),  # bool is not an int
    ("integer", {}, "seven", (False, "seven", "type")),
    ("integer", {"min": 0, "max": 10}, 11, (False, 11, "max")),
    ("integer", {"min": 0, "max": 10}, -1, (False, -1, "min")),
    ("integer", {"min": 0, "max": 10}, 10, (True, 10, "")),
    ("number", {}, 36.5, (True, 36.5, "")),
    ("number", {}, "36.5", (True, 36.5, "")),
    ("number", {}, 3, (True, 3, "")),
    ("number", {}, False, (False, False, "type")),
    ("number", {}, float("nan"), None),
    ("number", {}, "inf", None),
    ("number", {"max": 42.0}, 42.5, (False, 42.5, "max")),
    ("boolean", {}, True, (True, True, "")),
    ("boolean", {}, "False", (True, False, "")),
    ("boolean", {}, 1, (False, 1, "type")),
    ("boolean", {}, "yes", (False, "yes", "type")),
    ("enum", {"values": ["adequate", "skipped"]}, "skipped", (True, "skipped", "")),
    ("enum", {"values": ["adequate", "skipped"]}, "Skipped", (True, "skipped", "")),
    ("enum", {"values": ["adequate", "skipped"]}, "fasting", (False, "fasting", "not_member")),
    ("enum", {"values": ["adequate"]}, 1, (False, 1, "type")),
    ("email", {}, "happybell@gmail.com", (True, "happybell@gmail.com", "")),
    ("email", {}, " a.b@x.co.kr ", (True, "a.b@x.co.kr", "")),
    ("email", {}, "happybell at gmail", (False, "happybell at gmail", "type")),
    ("email", {}, "a@b", (False, "a@b", "type")),
    ("email", {}, "a b@c.com", (False, "a b@c.com", "type")),
    ("email", {"max_length": 5}, "a@b.cd", (False, "a@b.cd", "max_length")),
    ("string", {}, "  산책  ", (True, "산책", "")),
    ("string", {}, 7, (False, 7, "type")),
    ("string", {"min_length": 3}, "ab", (False, "ab", "min_length")),
    ("string", {"max_length": 3}, "abcd", (False, "abcd", "max_length")),
    ("string", {"pattern": r"\d{3}-\d{4}"}, "555-1234", (True, "555-1234", "")),
    ("string", {"pattern": r"\d{3}"}, "1234", (False, "1234", "pattern")),  # fullmatch
])
def test_check_value(value_type, fields, value, expected):
    ok, normalized, reason = check_value(rule(value_type, **fields), value)
    if expected is None:
        assert not ok and reason == "type"
    else:
        assert (ok, normalized, reason) == expected


def test_invalid_pattern_in_ir_is_an_ir_error():
    with pytest.raises(ir.IRError, match="invalid pattern"):
        rule("string", pattern="(")


def slot_runtime(on_conflict="overwrite"):
    b = ProgramBuilder()
    b.slot("meal", "enum", values=["adequate", "skipped"], on_conflict=on_conflict)
    b.slot("pain", "integer", min=0, max=10)
    b.node("a").stay()
    return b.runtime()


def test_valid_values_stored_invalid_undeclared_null_dropped():
    rt = slot_runtime()
    slots = {"pain": 3}
    update = apply_slots(rt, slots, None,
                         {"meal": "skipped", "pain": 99, "mood": "good", "x": None}, INFORM)
    assert update.slots == {"pain": 3, "meal": "skipped"}
    assert slots == {"pain": 3}  # copy-on-write: the input is untouched
    assert update.stored == (("meal", "skipped"),)
    assert update.dropped == (("pain", 99, "max"), ("mood", "good", "undeclared_slot"),
                              ("x", None, "undeclared_slot"))
    assert update.invalid == (1,)


def test_null_or_empty_never_clears_a_filled_slot():
    rt = slot_runtime()
    update = apply_slots(rt, {"meal": "adequate"}, None, {"meal": None}, INFORM)
    assert update.slots == {"meal": "adequate"} and update.dropped == (("meal", None, "null"),)
    update = apply_slots(rt, {"meal": "adequate"}, None, {"meal": "  "}, INFORM)
    assert update.slots == {"meal": "adequate"} and update.invalid == ()


def test_overwrite_and_keep():
    rt = slot_runtime("overwrite")
    assert apply_slots(rt, {"meal": "adequate"}, None, {"meal": "skipped"},
                       INFORM).slots["meal"] == "skipped"
    rt = slot_runtime("keep")
    update = apply_slots(rt, {"meal": "adequate"}, None, {"meal": "skipped"}, INFORM)
    assert update.slots["meal"] == "adequate"
    assert update.dropped == (("meal", "skipped", "kept"),)


def test_same_value_is_not_a_conflict():
    rt = slot_runtime("confirm")
    update = apply_slots(rt, {"meal": "adequate"}, None, {"meal": "adequate"}, INFORM)
    assert update.pending is None and update.stored == ()


def test_confirm_asks_then_affirm_stores():
    rt = slot_runtime("confirm")
    update = apply_slots(rt, {"meal": "adequate"}, None, {"meal": "skipped"}, INFORM)
    assert update.slots == {"meal": "adequate"}
    assert update.asked == update.pending == PendingConfirmation("meal", "skipped", "adequate")
    after = apply_slots(rt, update.slots, update.pending, {}, AFFIRM)
    assert after.slots == {"meal": "skipped"} and after.pending is None
    assert after.resolved == "confirmed"


def test_confirm_deny_keeps_old_value():
    rt = slot_runtime("confirm")
    pending = PendingConfirmation("meal", "skipped", "adequate")
    after = apply_slots(rt, {"meal": "adequate"}, pending, {}, DENY)
    assert after.slots == {"meal": "adequate"} and after.pending is None
    assert after.resolved == "declined"


def test_confirm_survives_fallback_turns_and_expires_on_other_answers():
    rt = slot_runtime("confirm")
    pending = PendingConfirmation("meal", "skipped", "adequate")
    for act in (SILENCE, NULL):
        assert apply_slots(rt, {"meal": "adequate"}, pending, {}, act).pending == pending
    after = apply_slots(rt, {"meal": "adequate"}, pending, {}, INFORM)
    assert after.pending is None and after.resolved == "expired"
    assert after.slots == {"meal": "adequate"}


def test_second_confirm_conflict_while_pending_is_dropped():
    b = ProgramBuilder()
    b.slot("a", "string", on_conflict="confirm")
    b.slot("b", "string", on_conflict="confirm")
    b.node("n").stay()
    rt = b.runtime()
    update = apply_slots(rt, {"a": "1", "b": "1"}, None, {"a": "2", "b": "2"}, INFORM)
    assert update.pending.slot == "a"
    assert update.dropped == (("b", "2", "confirmation_pending"),)


def test_over_answering_fills_any_declared_slot_through_routing():
    rt = slot_runtime()
    state = DialogueState("s", rt.ir_hash, "a")
    d = route_turn(rt, state, nlu("inform", meal="skipped", pain="4"))
    assert d.state.slots == {"meal": "skipped", "pain": 4}


def test_confirmation_round_trip_through_routing():
    rt = slot_runtime("confirm")
    state = DialogueState("s", rt.ir_hash, "a", slots={"meal": "adequate"})
    d1 = route_turn(rt, state, nlu("inform", meal="skipped"))
    assert d1.state.pending_confirmation is not None and d1.state.slots["meal"] == "adequate"
    d2 = route_turn(rt, d1.state, nlu("affirm", text="네"))
    assert d2.state.slots["meal"] == "skipped" and d2.state.pending_confirmation is None


@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
                 st.lists(st.integers(), max_size=2)))
def test_apply_slots_never_stores_an_invalid_value(value):
    rt = slot_runtime()
    update = apply_slots(rt, {"pain": 5}, None, {"pain": value, "meal": value}, INFORM)
    pain, meal = update.slots.get("pain"), update.slots.get("meal")
    assert isinstance(pain, int) and not isinstance(pain, bool) and 0 <= pain <= 10
    assert meal in (None, "adequate", "skipped")
