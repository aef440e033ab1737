"""Route groups (SPEC 14.6, 17.22): shared transitions appended after a node's next_nodes,
their reasons `route:NAME[i]` (a group target that is the node itself: a stay), checked once."""

from __future__ import annotations

import json

from compiler.driver import check_source
from interpreter.engine import Engine
from interpreter.ir import decode_ir
from interpreter.loader import Runtime


def faq(**graph) -> dict:
    """Six answer nodes would carry copy-pasted routing; here they share one group."""
    doc = {
        "metadata": {"name": "faq", "language": "en"},
        "intents": {"pharmacist": {"examples": ["talk to a pharmacist"]},
                    "start_over": {"examples": ["start over"]},
                    "hours": {"examples": ["opening hours"]}},
        "graph": {"entry": "menu",
                  "route_groups": {"common": [
                      {"target": "pharmacist", "condition": 'nlu.intent == "pharmacist"'},
                      {"target": "menu", "condition": 'nlu.intent == "start_over"'}]},
                  "nodes": [
                      {"id": "menu", "description": "Menu.", "responses": {"default": "Ask me."},
                       "next_nodes": [{"target": "hours", "condition": 'nlu.intent == "hours"'}],
                       "routes": ["common"]},
                      {"id": "hours", "description": "Hours.",
                       "responses": {"default": "We open at 9."}, "routes": ["common"],
                       "default_next": "menu"},
                      {"id": "pharmacist", "description": "Hand over.", "terminal": True,
                       "responses": {"default": "Connecting you."}}]},
    }
    doc["graph"].update(graph)
    return doc


def compiled(doc: dict) -> Runtime:
    result = check_source("faq.json", json.dumps(doc))
    assert not result.diagnostics, [(d.code, d.path, d.message) for d in result.diagnostics]
    return Runtime(decode_ir(result.ir_bytes())[1], "faq")


def turn(engine, intent):
    return engine.turn("s", intent, {"intent": intent, "dialogue_act": "inform", "slots": {}})


def test_a_group_routes_every_node_that_uses_it_with_its_own_reason():
    engine = Engine(compiled(faq()))
    engine.start("s", bot_first=True)
    assert turn(engine, "hours").decision.reason == "next_nodes[0]"
    moved = turn(engine, "start_over")
    assert (moved.decision.reason, moved.next_node) == ("route:common[1]", "menu")
    assert moved.decision.kind == "move"  # from hours: a move; before default_next


def test_a_group_target_that_is_the_node_itself_is_a_stay():
    engine = Engine(compiled(faq()))
    engine.start("s", bot_first=True)
    stayed = turn(engine, "start_over")
    assert (stayed.decision.reason, stayed.decision.kind) == ("stay:route:common[1]", "stay")


def test_a_group_target_is_a_static_edge():
    """Reachability and the end-node inference see a group's targets (17.22): the
    pharmacist node is reached only through the group, and no node is an inferred end."""
    result = check_source("faq.json", json.dumps(faq()))
    assert result.diagnostics == []
    assert ("menu", "pharmacist") in result.analysis.graph.edges
    assert set(result.analysis.end_kind) == {"pharmacist"}


def test_an_unknown_or_repeated_group_is_e114_and_a_bad_row_is_reported_once():
    doc = faq()
    doc["graph"]["nodes"][0]["routes"] = ["comon"]
    doc["graph"]["nodes"][1]["routes"] = ["common", "common"]
    found = [(d.code, d.path) for d in check_source("faq.json", json.dumps(doc)).diagnostics]
    assert found == [("E114", "/graph/nodes/0/routes/0"), ("E114", "/graph/nodes/1/routes/1")]
    doc = faq()
    doc["graph"]["route_groups"]["common"][0]["target"] = "pharmacists"
    found = [(d.code, d.path) for d in check_source("faq.json", json.dumps(doc)).diagnostics]
    assert found == [("E103", "/graph/route_groups/common/0/target")]
    doc = faq()  # a group row made impossible: W404 once, though two nodes use it
    doc["graph"]["route_groups"]["common"][0]["condition"] = \
        'nlu.intent == "pharmacist" and system.node_turns < 1'
    found = [(d.code, d.path) for d in check_source("faq.json", json.dumps(doc)).diagnostics]
    assert found.count(("W404", "/graph/route_groups/common/0/condition")) == 1, found
