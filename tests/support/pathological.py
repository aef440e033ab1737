"""Pathological scenarios for the compile's cost: small texts whose checks used to take seconds.

`pattern_heavy(size)` is a valid scenario of about `size` bytes (5 KB by default) with many
intent patterns and slot patterns in the shapes that were super-linear to analyse (a chain of
repeats, optional runs, case-folded Hangul classes) and conditions on every node.
"""

from __future__ import annotations

import json

# Each shape is about 1 KB: many repeats in a row (the chain of loops that made the degree
# of ambiguity cubic in the pattern's length), optional runs, case-folded Hangul classes.
SHAPES = (r"(\w+\s)" * 300, "a?" * 20 + "a" * 20 + r"(\d+-)" * 100, "[가-힣a-z]+ " * 90)


def pattern_heavy(size: int = 5000) -> dict:
    intents: dict = {}
    slots = {"code": {"policy": "optional", "value_type": "string",
                      "pattern": "[A-Z]{2}[0-9]{4}"}}
    nodes = [{"id": "start", "description": "d", "collect_slots": ["code"],
              "next_nodes": [], "default_next": "end"},
             {"id": "end", "description": "d", "terminal": True}]
    document = {"metadata": {"name": "pathological", "language": "en"},
                "prompts": {"bot": "Be brief."}, "intents": intents, "slots": slots,
                "graph": {"entry": "start", "nodes": nodes}}
    i = 0
    while len(json.dumps(document, ensure_ascii=False).encode()) < size:
        shape = SHAPES[i % len(SHAPES)]
        intents[f"i{i}"] = {"examples": [f"example {i}"], "patterns": [f"{shape}z{i}"]}
        nodes[0]["next_nodes"].append({"target": "end", "condition": f'nlu.intent == "i{i}"'})
        i += 1
    return document


def costly(terms: int = 80_000) -> dict:
    """A scenario just under 2 MiB whose check costs seconds of CPU however fast the compiler
    is: one condition of `terms` terms joined by `and` (linear work, but a lot of it)."""
    nodes = [{"id": "a", "description": "d", "collect_slots": ["meal"],
              "next_nodes": [{"target": "b", "condition": " and ".join(
                  ["system.min_turns_met"] * terms)}],
              "default_next": "b"},
             {"id": "b", "description": "d", "terminal": True}]
    return {"metadata": {"name": "costly", "language": "en"}, "prompts": {"bot": "Be brief."},
            "intents": {"wants_end": {"examples": ["bye"]}},
            "slots": {"meal": {"policy": "optional", "value_type": "enum",
                               "values": ["ate", "skipped"]}},
            "graph": {"entry": "a", "nodes": nodes}}


def many_patterns(intents: int = 300, per: int = 4) -> dict:
    """A valid scenario with `intents * per` intent patterns, each accepted by the pattern
    check but costing it milliseconds: preparing them all (loading the IR, building the
    rules NLU) costs seconds of CPU, which must never be spent on the event loop."""
    found: dict = {}
    nodes = [{"id": "start", "description": "d", "next_nodes": [], "default_next": "end"},
             {"id": "end", "description": "d", "terminal": True}]
    for i in range(intents):
        found[f"i{i}"] = {"examples": [f"example {i}"],
                          "patterns": [f"word{i}x{k} (\\d+-)?[가-힣a-z]+ {k}" for k in range(per)]}
        nodes[0]["next_nodes"].append({"target": "end", "condition": f'nlu.intent == "i{i}"'})
    return {"metadata": {"name": "many_patterns", "language": "en"},
            "prompts": {"bot": "Be brief."}, "intents": found,
            "graph": {"entry": "start", "nodes": nodes}}
