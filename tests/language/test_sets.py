"""`set` on transitions and `on_enter` (SPEC 14.5, 17.20): the compiler's checks (E114,
E204) and what a turn does with them (the order on a move, the trace, slots_updated)."""

from __future__ import annotations

import json

import pytest

from compiler.driver import check_source
from interpreter.engine import Engine
from interpreter.ir import decode_ir
from interpreter.loader import Runtime
from interpreter.routing import trace_lines


def retry_scenario(**changes) -> dict:
    """A submit step that counts retries with `set` (the designer's duplicated nodes, undone)."""
    doc = {
        "metadata": {"name": "retry", "language": "en"},
        "intents": {"retry": {"examples": ["try again"]}},
        "slots": {"retries": {"policy": "optional", "value_type": "integer", "min": 0, "max": 2},
                  "status": {"policy": "optional", "value_type": "enum",
                             "values": ["new", "sent", "failed"]},
                  "last": {"policy": "optional", "value_type": "enum",
                           "values": ["new", "sent", "failed"]}},
        "graph": {"entry": "start", "nodes": [
            {"id": "start", "description": "Start.", "on_enter": {"set": {"status": "new"}},
             "responses": {"default": "Say try again."},
             "next_nodes": [{"target": "submit", "condition": 'nlu.intent == "retry"',
                             "set": {"retries": {"add": 1}}}]},
            {"id": "submit", "description": "Submit.",
             "on_enter": {"set": {"last": {"copy": "status"}, "status": "sent"}},
             "responses": {"default": "Try {slots.retries}, was {slots.last}, now {slots.status}."},
             "next_nodes": [{"target": "start", "condition": 'nlu.intent == "retry"'}],
             "default_next": {"target": "done", "set": {"retries": None}}},
            {"id": "done", "description": "Done.", "responses": {"default": "Done."}}]},
    }
    doc.update(changes)
    return doc


def compiled(doc: dict) -> Runtime:
    result = check_source("sets.json", json.dumps(doc))
    assert not result.diagnostics, [(d.code, d.path, d.message) for d in result.diagnostics]
    return Runtime(decode_ir(result.ir_bytes())[1], "sets")


def scripted(intent=None, act="inform"):
    return {"intent": intent, "dialogue_act": act, "slots": {}}


def test_a_counter_counts_on_the_transition_and_on_enter_copies_before_it_sets():
    engine = Engine(compiled(retry_scenario()))
    engine.start("s", bot_first=True)
    first = engine.turn("s", "try again", scripted("retry"))
    assert first.response == "Try 1, was new, now sent."  # on_enter: copy, then literal
    engine.turn("s", "try again", scripted("retry"))  # back to start: status "new" again
    second = engine.turn("s", "try again", scripted("retry"))
    assert second.response == "Try 2, was new, now sent."
    assert engine.session("s").slots["retries"] == 2


def test_a_result_beyond_the_bounds_is_dropped_and_said_in_the_trace():
    engine = Engine(compiled(retry_scenario()))
    engine.start("s", bot_first=True)
    for _ in range(5):  # retries would be 3 on the third arrival: max is 2
        turn = engine.turn("s", "try again", scripted("retry"))
    assert engine.session("s").slots["retries"] == 2
    lines = trace_lines(engine.runtime, turn.decision)
    assert "slot dropped: retries = 3 (set: max)" in lines


def test_default_next_as_an_object_clears_and_the_trace_shows_the_source():
    engine = Engine(compiled(retry_scenario()))
    engine.start("s", bot_first=True)
    engine.turn("s", "try again", scripted("retry"))
    turn = engine.turn("s", "ok", scripted(None, "affirm"))
    assert turn.decision.reason == "default_next"
    assert "retries" not in engine.session("s").slots
    assert "slot stored: retries = null (set)" in trace_lines(engine.runtime, turn.decision)


@pytest.mark.parametrize("value,code,where", [
    ({"nope": 1}, "E114", "/graph/nodes/0/next_nodes/0/set/nope"),
    ({"retries": {"add": 1, "copy": "x"}}, "E114", "/graph/nodes/0/next_nodes/0/set/retries"),
    ({"status": {"add": 1}}, "E114", "/graph/nodes/0/next_nodes/0/set/status/add"),
    ({"retries": {"copy": "statuss"}}, "E114", "/graph/nodes/0/next_nodes/0/set/retries/copy"),
    ({"retries": {"copy": "status"}}, "E204", "/graph/nodes/0/next_nodes/0/set/retries/copy"),
    ({"retries": {"add": 0.5}}, "E204", "/graph/nodes/0/next_nodes/0/set/retries/add"),
    ({"retries": "two"}, "E204", "/graph/nodes/0/next_nodes/0/set/retries"),
    ({"status": "sen"}, "E204", "/graph/nodes/0/next_nodes/0/set/status"),
    ({"retries": 7}, "E204", "/graph/nodes/0/next_nodes/0/set/retries"),
])
def test_an_invalid_set_is_reported_at_its_place(value, code, where):
    doc = retry_scenario()
    doc["graph"]["nodes"][0]["next_nodes"][0]["set"] = value
    result = check_source("sets.json", json.dumps(doc, indent=2))
    assert [(d.code, d.path) for d in result.diagnostics] == [(code, where)], \
        [(d.code, d.path, d.message) for d in result.diagnostics]
    assert all(d.line and d.column for d in result.diagnostics)


@pytest.mark.parametrize("definition", [
    {"min": 5, "max": 1},  # E106: min over max
    {"value_type": "string", "pattern": "(unclosed", "min": None, "max": None},  # E106: pattern
])
def test_a_set_of_a_misdefined_slot_is_not_judged_again(definition):
    """The slot's own error is the one report (SPEC 3); its set literal is not refused (E204)
    for bounds that are wrong themselves, and a pattern that does not compile is no crash."""
    doc = retry_scenario()
    slot = doc["slots"]["retries"]
    slot.update({k: v for k, v in definition.items() if v is not None})
    for key in [k for k, v in definition.items() if v is None]:
        slot.pop(key)
    doc["graph"]["nodes"][0]["on_enter"] = {"set": {"retries": "3" if "pattern" in slot else 3}}
    if "pattern" in slot:
        doc["graph"]["nodes"][0]["next_nodes"][0].pop("set")
    result = check_source("s.json", json.dumps(doc))
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["E106"]
