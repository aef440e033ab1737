"""Compiles with many problems, or with huge conditions, cost about linearly.

Each test generates a scenario at a size n/4 and n, checks it as `mgc check` does (decode,
resolve, analyse when error-free, locate, render the human report), asserts the diagnostics of
the larger one, and compares the CPU times: linear work grows about 4 times from n/4 to n,
quadratic work 16 times, so the ratio must stay under `MAX_RATIO`. CPU time, not wall time:
this machine is shared, and other processes slow a run without adding to its CPU time. Sizes:
30,000 unknown `default_next` targets, 30,000 undeclared placeholders in one response, and a
100,000-term `and` chain in the expression language and in the object form. The `Names`
tests pin the did-you-mean rules: difflib's answer for ordinary pools, a good answer in a big
one, and the work budget.
"""

from __future__ import annotations

import difflib
import json
import random
import re
import time

import pytest

from compiler import diagnostics
from compiler.diagnostics import Names
from compiler.driver import check_source
from compiler.report import render_human

MAX_RATIO = 8  # from n/4 to n: linear is about 4, quadratic 16


def scenario(nodes: list[dict], **extra) -> dict:
    return {
        "metadata": {"name": "scale", "language": "en"},
        "prompts": {"bot": "Be brief."},
        "intents": {"wants_end": {"examples": ["bye"]}},
        "slots": {"meal": {"policy": "optional", "value_type": "enum", "values": ["ate", "skipped"]}},
        "graph": {"entry": nodes[0]["id"], "nodes": nodes},
        **extra,
    }


def check(document: dict):
    """(result, rendered report, CPU seconds) of checking `document` as `mgc check` does."""
    text = json.dumps(document, indent=1)
    start = time.process_time()
    result = check_source("scale.json", text)
    report = render_human("scale.json", text, result.diagnostics)
    return result, report, time.process_time() - start


def linear(small: float, large: float) -> bool:
    return large < MAX_RATIO * max(small, 0.01)


# ---------------------------------------------------------------------------------------
# Unknown targets: one did-you-mean lookup per node, against every node id.


def unknown_targets(n: int) -> dict:
    """n nodes, each pointing at an unknown node: odd ones a typo of a real id, even ones not
    close to any."""
    nodes = [{"id": f"step_{i}", "description": "d",
              "default_next": f"stp_{i + 1}" if i % 2 else f"missing_{i}_{i * 7919 % 10007}"}
             for i in range(n)]
    nodes.append({"id": "done", "description": "d", "terminal": True})
    return scenario(nodes)


def test_unknown_targets_scale_linearly():
    n = 30_000
    _, _, small = check(unknown_targets(n // 4))
    result, report, large = check(unknown_targets(n))
    found = result.diagnostics
    assert len(found) == n and {d.code for d in found} == {"E103"}
    assert report.count("error[E103]") == n
    by_node = {int(d.path.split("/")[3]): d for d in found}
    assert by_node[1].hint == "did you mean 'step_2'?"  # a typo still gets its hint
    assert by_node[101].hint == "did you mean 'step_102'?"
    assert by_node[0].hint.startswith("nodes: done, step_0, step_1, ")
    assert by_node[0].hint.endswith(f"... ({n + 1} in all)")  # the list of nodes is bounded
    assert all(d.hint for d in found)
    assert [d.line for d in found] == sorted(d.line for d in found)
    assert linear(small, large), f"{small:.2f}s at {n // 4}, {large:.2f}s at {n}"


# ---------------------------------------------------------------------------------------
# Placeholders: many reports inside one string, each located by its offset.


def undeclared_placeholders(n: int) -> dict:
    text = " ".join(f"{{slots.x{i}}}" for i in range(n)) + " {slots.mael}"
    nodes = [{"id": "a", "description": "d", "responses": {"default": text}, "default_next": "b"},
             {"id": "b", "description": "d", "terminal": True}]
    return scenario(nodes)


def test_undeclared_placeholders_in_one_string_scale_linearly():
    n = 30_000
    _, _, small = check(undeclared_placeholders(n // 4))
    document = undeclared_placeholders(n)
    result, report, large = check(document)
    found = result.diagnostics
    assert len(found) == n + 1 and {d.code for d in found} == {"E105"}
    assert report.count("error[E105]") == n + 1
    text = document["graph"]["nodes"][0]["responses"]["default"]
    line = next(i for i, source in enumerate(json.dumps(document, indent=1).splitlines(), 1)
                if source.lstrip().startswith('"default": "{slots.x0}'))
    quote = json.dumps(document, indent=1).splitlines()[line - 1].index('"{slots.x0}') + 1
    starts = [m.start() for m in re.finditer(r"\{slots\.", text)]
    assert [(d.line, d.column) for d in found] == [(line, quote + 1 + s) for s in starts]
    assert found[-1].hint == "did you mean 'meal'?"
    assert linear(small, large), f"{small:.2f}s at {n // 4}, {large:.2f}s at {n}"


# ---------------------------------------------------------------------------------------
# Long `and` chains: parsing, lowering, type checking, satisfiability and the trap check.


def chain_scenario(condition) -> dict:
    nodes = [{"id": "a", "description": "d", "collect_slots": ["meal"],
              "next_nodes": [{"target": "b", "condition": condition},
                             {"target": "b", "condition": "nlu.intent == \"wants_end\""}],
              "default_next": "b"},
             {"id": "b", "description": "d", "terminal": True}]
    return scenario(nodes)


def expression_chain(n: int, bad_every: int | None = None) -> dict:
    """`system.min_turns_met and ...` (n terms); every `bad_every`-th one misspelt."""
    return chain_scenario(" and ".join(terms(n, bad_every, "system.min_turns_met", "system.min_turn_met")))


def object_chain(n: int, bad_every: int | None = None) -> dict:
    """{"and": [n leaves `system.node_turns >= 1`]}; every `bad_every`-th one misspelt."""
    leaf = {"field": "system.node_turns", "operator": "greater_or_equal", "value": 1}
    return chain_scenario({"and": terms(n, bad_every, leaf, dict(leaf, field="system.node_turn"))})


def terms(n: int, bad_every: int | None, good, bad) -> list:
    return [bad if bad_every and i % bad_every == bad_every - 1 else good for i in range(n)]


@pytest.mark.parametrize("chain", [expression_chain, object_chain], ids=["expression", "object"])
def test_long_and_chains_scale_linearly(chain):
    n = 100_000
    _, _, small = check(chain(n // 4))
    result, _, large = check(chain(n))
    assert result.diagnostics == [] and result.analysis is not None  # analysed, nothing to say
    assert linear(small, large), f"{small:.2f}s at {n // 4}, {large:.2f}s at {n}"


@pytest.mark.parametrize("chain, meant", [
    (expression_chain, "system.min_turns_met"),
    (object_chain, "system.node_turns"),
], ids=["expression", "object"])
def test_every_bad_term_of_a_long_chain_is_reported_once(chain, meant):
    n, every = 20_000, 100
    result, report, _ = check(chain(n, bad_every=every))
    found = result.diagnostics
    assert len(found) == n // every and {d.code for d in found} == {"E201"}
    assert {d.hint for d in found} == {f"did you mean '{meant}'?"}
    assert len({(d.line, d.column) for d in found}) == n // every  # each at its own term
    assert report.count("error[E201]") == n // every


# ---------------------------------------------------------------------------------------
# Did-you-mean: the pool of names.


def test_an_ordinary_pool_answers_as_difflib_does():
    rng = random.Random(7)
    for _ in range(3000):
        pool = ["".join(rng.choice("abcd_") for _ in range(rng.randint(0, 9)))
                for _ in range(rng.randint(0, diagnostics.MAX_COMPARED))]
        name = "".join(rng.choice("abcd_") for _ in range(rng.randint(0, 9)))
        close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
        ignoring_case = {p.lower(): p for p in sorted(set(pool))}.get(name.lower())
        assert Names(pool).closest(name) == (close[0] if close else ignoring_case)


def test_a_big_pool_finds_the_typo_and_answers_each_name_once():
    names = Names(f"ask_{word}_{i}" for i in range(5000) for word in ("meal", "sleep"))
    assert names.closest("ask_sleeep_4321") == "ask_sleep_4321"
    assert names.closest("ask_mael_17") == "ask_meal_17"
    spent = names.budget
    assert names.closest("ask_mael_17") == "ask_meal_17" and names.budget == spent
    assert names.closest("zzzz") is None and names.closest(None) is None


def test_a_spent_budget_leaves_only_the_case_insensitive_match():
    names = Names([f"node_{i}" for i in range(1000)], budget=1)
    assert names.closest("node_12x") == "node_12"  # the lookup that spends it is answered
    assert names.budget <= 0
    assert names.closest("nod_500") is None
    assert names.closest("NODE_7") == "node_7"


def test_a_long_listing_is_cut():
    assert Names(["b", "a"]).listing() == "a, b"
    many = Names(f"n{i:03}" for i in range(100))
    assert many.listing() == ", ".join(f"n{i:03}" for i in range(12)) + ", ... (100 in all)"
