"""Enum labels (SPEC 14.3, 17.24) and `normalize` (SPEC 14.2, 17.19)."""

from __future__ import annotations

import json

import pytest

from compiler.driver import check_source
from interpreter.engine import Engine
from interpreter.ir import decode_ir
from interpreter.loader import Runtime
from interpreter.understanding.rules import RulesNLU


def pharmacy(**slots) -> dict:
    doc = {
        "metadata": {"name": "labels", "language": "en"},
        "slots": {
            "branch": {"policy": "required", "value_type": "enum",
                       "values": ["northgate", "riverside"],
                       "labels": {"northgate": "Northgate branch", "riverside": "Riverside"}},
            "rx": {"policy": "required", "value_type": "string", "pattern": "^RX[0-9]{7}$",
                   "normalize": ["upper", "remove_spaces"]}},
        "graph": {"entry": "ask_branch", "nodes": [
            {"id": "ask_branch", "description": "Branch.", "collect_slots": ["branch"],
             "default_next": "ask_rx"},
            {"id": "ask_rx", "description": "RX.", "collect_slots": ["rx"],
             "responses": {"default": "Which prescription, for {slots.branch}?"},
             "default_next": "done"},
            {"id": "done", "description": "Done.",
             "responses": {"default": "Sent {slots.rx} to {slots.branch}."}}]},
    }
    doc["slots"].update(slots)
    return doc


def rules_engine(doc: dict) -> Engine:
    runtime = compiled(doc)
    return Engine(runtime, RulesNLU(runtime.program))


def compiled(doc: dict) -> Runtime:
    result = check_source("labels.json", json.dumps(doc))
    assert not result.diagnostics, [(d.code, d.path, d.message) for d in result.diagnostics]
    return Runtime(decode_ir(result.ir_bytes())[1], "labels")


def test_a_label_is_said_and_heard_and_the_raw_value_is_stored():
    engine = rules_engine(pharmacy())
    engine.start("s")
    turn = engine.turn("s", "the Northgate branch please")
    assert engine.session("s").slots["branch"] == "northgate"
    assert turn.response == "Which prescription, for Northgate branch?"


def test_normalize_reads_rx_with_a_space_as_the_number_meant():
    engine = rules_engine(pharmacy())
    engine.start("s")
    engine.turn("s", "Riverside")
    done = engine.turn("s", "rx 7654321")
    assert engine.session("s").slots["rx"] == "RX7654321"
    assert done.response == "Sent RX7654321 to Riverside."


def test_normalize_applies_to_a_value_any_nlu_gives():
    engine = Engine(compiled(pharmacy()))
    engine.start("s")
    engine.turn("s", "x", {"dialogue_act": "inform", "slots": {"branch": "riverside",
                                                                "rx": " rx 765 4321 "}})
    assert engine.session("s").slots["rx"] == "RX7654321"


@pytest.mark.parametrize("slot,where", [
    ({"policy": "optional", "value_type": "integer", "normalize": ["trim"]}, "/slots/x/normalize"),
    ({"policy": "optional", "value_type": "string", "labels": {"a": "A"}}, "/slots/x/labels"),
    ({"policy": "optional", "value_type": "enum", "values": ["a"], "labels": {"b": "B"}},
     "/slots/x/labels/b"),
    ({"policy": "optional", "value_type": "enum", "values": ["a"], "labels": {"a": " "}},
     "/slots/x/labels/a"),
])
def test_invalid_labels_and_normalize_are_e114(slot, where):
    doc = pharmacy(x=slot)
    doc["graph"]["nodes"][2]["collect_slots"] = ["x"]
    found = [(d.code, d.path) for d in check_source("l.json", json.dumps(doc)).diagnostics]
    assert found == [("E114", where)]


def test_an_unknown_normalize_step_is_e012():
    doc = pharmacy()
    doc["slots"]["rx"]["normalize"] = ["uppercase"]
    assert [d.code for d in check_source("l.json", json.dumps(doc)).diagnostics] == ["E012"]
