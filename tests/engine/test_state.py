"""Dialogue state: exact round-trips, a bounded history, small sessions, versioned storage."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from interpreter.engine import Engine
from interpreter.routing import route_turn
from interpreter.stores.sessions import MemorySessionStore, VersionConflict
from interpreter.state import (HISTORY_LIMIT, DialogueState, HistoryEntry, PendingConfirmation, append_history,
                               decode_state, decode_state_json, encode_state, encode_state_json)

from support.irkit import SILENT, nlu, senimate_like
from conftest import examples

RUNTIME = senimate_like().runtime()


def full_state() -> DialogueState:
    history = []
    for i in range(3):
        history = append_history(history, HistoryEntry(f"사용자 {i}", f"봇 {i}", "meal",
                                                       "default_next"))
    return DialogueState(
        "sess-1", "ab" * 32, "meal", previous_node="daily", node_turns=2, session_turns=7,
        no_input_count=1, not_understood_count=0, fallback_retries=1, fallback_exhausted=True,
        turn_limit_reached=True,
        slots={"meal_status": "skipped", "pain": 4, "temp": 36.5, "ok": False, "mail": "a@b.co"},
        pending_confirmation=PendingConfirmation("meal_status", "adequate", "skipped"),
        skill_status="failed", skill_data={"error": "unknown location", "n": [1, 2]},
        complete=False, history=history, created_at=1.5, updated_at=2.25, version=8)


def test_msgpack_round_trip_is_exact():
    state = full_state()
    assert decode_state(encode_state(state)) == state


def test_json_round_trip_is_exact():
    state = full_state()
    assert decode_state_json(encode_state_json(state)) == state


def test_defaults_are_omitted_and_restored():
    state = DialogueState("s", "h", "greeting")
    data = encode_state(state)
    assert b"fallback_retries" not in data
    assert decode_state(data) == state


def test_history_entries_decode_in_order():
    entries = full_state().entries()
    assert [e.user for e in entries] == ["사용자 0", "사용자 1", "사용자 2"]
    assert entries[0] == HistoryEntry("사용자 0", "봇 0", "meal", "default_next")


def test_history_is_bounded_and_keeps_the_newest():
    history: list = []
    for i in range(25):
        history = append_history(history, HistoryEntry(str(i), "b", "n", "r"), limit=10)
    state = DialogueState("s", "h", "n", history=history)
    assert [e.user for e in state.entries()] == [str(i) for i in range(15, 25)]
    assert append_history(history, HistoryEntry("x", "b", "n", "r"), limit=0) == []


def test_a_plain_tuple_entry_is_stored_as_the_history_entry_it_spells():
    as_tuple = append_history([], ("사용자", None, "meal", "default_next"))
    state = DialogueState("s", "h", "meal", history=as_tuple)
    assert state.entries() == [HistoryEntry("사용자", None, "meal", "default_next")]


def test_append_history_leaves_the_old_list_alone():
    old = append_history([], HistoryEntry("a", "b", "n", "r"))
    new = append_history(old, HistoryEntry("c", "d", "n", "r"))
    assert len(old) == 1 and len(new) == 2


def test_state_is_frozen():
    with pytest.raises(AttributeError):
        full_state().node_turns = 3


def test_session_after_twenty_turns_stays_under_two_kilobytes():
    engine = Engine(RUNTIME)
    engine.start("s")
    lines = [("네 좋아요, 오늘은 기분이 괜찮아요", nlu("affirm")),
             ("요즘 아침마다 공원에서 산책을 하고 있어요", nlu("inform", daily_life="공원 산책")),
             ("점심은 아직 못 먹었어요", nlu("inform", meal_status="skipped")),
             ("무릎이 조금 아프긴 한데 괜찮아요", nlu("inform", health_status="complaint"))]
    for i in range(20):
        text, result = lines[i % len(lines)]
        engine.turn("s", text, result)
    state = engine.session("s")
    assert state.session_turns == 21 and len(state.history) == HISTORY_LIMIT == 6
    assert len(encode_state(state)) < 2048


# --- behaviour survives serialization -----------------------------------------------------

ACTS = st.sampled_from(["affirm", "deny", "inform", "question", "thank", "goodbye", "negate",
                        "silence", None])
INPUTS = st.one_of(
    st.just(SILENT),
    st.builds(lambda act, intent, slots: nlu(act, intent=intent, **slots), ACTS,
              st.sampled_from([None, "user_wants_to_end", "undeclared"]),
              st.fixed_dictionaries({}, optional={
                  "meal_status": st.sampled_from(["adequate", "skipped", "bad"]),
                  "daily_life": st.sampled_from(["산책", ""])})))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(INPUTS, min_size=1, max_size=25))
def test_serializing_between_turns_does_not_change_behaviour(inputs):
    plain = DialogueState("s", RUNTIME.ir_hash, "greeting", node_turns=1, session_turns=1)
    stored = plain
    for result in inputs:
        if plain.complete:
            break
        a = route_turn(RUNTIME, plain, result)
        b = route_turn(RUNTIME, decode_state(encode_state(stored)), result)
        assert (a.kind, a.reason, a.next_node) == (b.kind, b.reason, b.next_node)
        assert a.state == b.state
        plain, stored = a.state, decode_state_json(encode_state_json(b.state))


# --- the session store ------------------------------------------------------------------------


def test_store_versions_count_up_from_one():
    store = MemorySessionStore()
    assert store.get("s") is None
    state = DialogueState("s", "h", "a")
    assert store.put(state, 0) == 1
    got, version = store.get("s")
    assert version == 1 and got.version == 1 and got.current_node == "a"
    assert store.put(msgspec.structs.replace(got, node_turns=1), 1) == 2
    assert store.get("s")[0].node_turns == 1


def test_store_rejects_a_stale_writer_and_keeps_the_winner():
    store = MemorySessionStore()
    store.put(DialogueState("s", "h", "a"), 0)
    first, v = store.get("s")
    second, _ = store.get("s")
    store.put(msgspec.structs.replace(first, current_node="b"), v)
    with pytest.raises(VersionConflict, match="version 2, not 1"):
        store.put(msgspec.structs.replace(second, current_node="c"), v)
    assert store.get("s")[0].current_node == "b"


def test_store_rejects_creating_an_existing_session():
    store = MemorySessionStore()
    store.put(DialogueState("s", "h", "a"), 0)
    with pytest.raises(VersionConflict):
        store.put(DialogueState("s", "h", "a"), 0)


def test_the_engine_hands_out_copies():
    engine = Engine(RUNTIME)
    opened = engine.start("s")
    engine.turn("s", "네", nlu("affirm"))
    turned = engine.turn("s", "산책했어요", nlu("inform", daily_life="산책"))
    stored = engine.store.get("s")[0]
    assert stored.slots == {"daily_life": "산책"} == turned.slots
    before = msgspec.structs.asdict(stored)
    for handed_out in (opened.slots, turned.slots, engine.session("s").slots):  # misbehaving
        handed_out["daily_life"] = "changed"
    engine.session("s").history.clear()
    engine.session("s").skill_data["x"] = 1
    assert msgspec.structs.asdict(engine.store.get("s")[0]) == before


def test_engine_turn_with_stale_version_conflicts():
    store = MemorySessionStore()
    engine = Engine(RUNTIME, store=store)
    engine.start("s")
    real_get = store.get
    stale = real_get("s")
    engine.turn("s", "네", nlu("affirm"))
    store.get = lambda session_id: stale  # another process read before our write
    with pytest.raises(VersionConflict):
        engine.turn("s", "네", nlu("affirm"))
    store.get = real_get
    assert engine.session("s").session_turns == 2
