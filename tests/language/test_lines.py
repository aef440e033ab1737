"""Conditional lines (SPEC 14.4, 17.21): the confirmation that leaves out "Address:" on a
pickup, without duplicating the node and its routing."""

from __future__ import annotations

import json

from compiler.driver import check_source
from interpreter.engine import Engine
from interpreter.ir import decode_ir
from interpreter.loader import Runtime


def confirm(lines, join=None) -> dict:
    response = {"lines": lines} if join is None else {"lines": lines, "join": join}
    return {
        "metadata": {"name": "lines", "language": "en"},
        "slots": {"method": {"policy": "required", "value_type": "enum",
                             "values": ["pickup", "delivery"]},
                  "address": {"policy": "optional", "value_type": "string"}},
        "graph": {"entry": "ask", "nodes": [
            {"id": "ask", "description": "Ask.", "collect_slots": ["method", "address"],
             "default_next": "confirm"},
            {"id": "confirm", "description": "Confirm.", "responses": {"default": response},
             "next_nodes": [{"target": "ask", "condition": 'nlu.dialogue_act == "deny"'}],
             "default_next": "done"},
            {"id": "done", "description": "Done.", "responses": {"default": "Done."}}]},
    }


LINES = [{"text": "Your order is for {slots.method}."},
         {"text": ["Address: {slots.address}.", "We deliver to {slots.address}."],
          "when": 'slots.method == "delivery"'},
         {"text": "Is that right?"}]


def engine_for(doc: dict) -> Engine:
    result = check_source("lines.json", json.dumps(doc))
    assert not result.diagnostics, [(d.code, d.path, d.message) for d in result.diagnostics]
    engine = Engine(Runtime(decode_ir(result.ir_bytes())[1], "lines"))
    engine.start("s")
    return engine


def answer(engine, **slots):
    return engine.turn("s", "x", {"dialogue_act": "inform", "slots": slots}).response


def test_a_line_whose_when_fails_is_left_out():
    assert answer(engine_for(confirm(LINES)), method="pickup") == \
        "Your order is for pickup. Is that right?"
    said = answer(engine_for(confirm(LINES, "\n")), method="delivery", address="1 Main St")
    assert said == "Your order is for delivery.\nAddress: 1 Main St.\nIs that right?"


def test_a_line_keeps_its_own_rotation_and_no_line_means_no_response():
    engine = engine_for(confirm(LINES))
    first = answer(engine, method="delivery", address="1 Main St")
    # back to ask, whose slots are known (skip:filled): confirm speaks again at once
    second = engine.turn("s", "no", {"dialogue_act": "deny", "slots": {}}).response
    assert "Address: 1 Main St." in first and "We deliver to 1 Main St." in second
    only = [{"text": "Address: {slots.address}.", "when": 'slots.method == "delivery"'}]
    said = answer(engine_for(confirm(only)), method="pickup")
    assert said and "Address" not in said  # the usual fallback speaks


def test_a_bad_when_is_reported_at_its_line():
    bad = [{"text": "Hi.", "when": 'slots.methd == "delivery"'}]
    found = [(d.code, d.path) for d in check_source("l.json", json.dumps(confirm(bad))).diagnostics]
    assert found == [("E201", "/graph/nodes/1/responses/default/lines/0/when")]
    typo = [{"text": "Hi {slot.method}."}]
    found = [(d.code, d.path) for d in check_source("l.json", json.dumps(confirm(typo))).diagnostics]
    assert found == [("E112", "/graph/nodes/1/responses/default/lines/0/text")]
