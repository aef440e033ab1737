"""The tuning and held-out sets of tests/data (SPEC 13.5), read against the shipped scenarios.

In: a set's name (`heldout` or `tuning`) and a language (`ko`, `en`). Out: per intent
precision and recall, the false alarms on near misses and out-of-domain traps, and, for the
safety lines, recall per category and false alarms on the traps.

The scenarios are compiled from `scenarios/` and their intent `patterns` removed: the
figures are those of a designer who wrote examples only (the issue's target). Used by
`tests/benchmarks/nlu_eval.py` (which prints them) and by `tests/test_nlu_sets.py` (which
checks the files are well formed and that the figures are computed).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from compiler.driver import check_file
from interpreter import ir
from interpreter.understanding.rules import RulesNLU
from interpreter.understanding.safety import detector_for

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SCENARIO_FILES = {"support_bot": "support_bot.json", "senimate": "senimate.json",
                  "clinic": "clinic_booking.json", "email_compose": "email_compose.json",
                  "med_reminder": "med_reminder.json", "pharmacy_refill": "pharmacy_refill.json"}
SLOT_KINDS = ("enum", "boolean", "free_text", "typed")


@cache
def program(name: str, with_patterns: bool = False) -> ir.Program:
    """The shipped scenario `name`, compiled; without its intent patterns unless asked."""
    # the scenarios of the tree whose interpreter is imported (`nlu_eval.py --code DIR`)
    scenarios = Path(ir.__file__).resolve().parents[1] / "scenarios"
    result = check_file(str(scenarios / SCENARIO_FILES[name]))
    assert not result.errors, result.diagnostics
    built = result.program()
    if with_patterns:
        return built
    intents = [msgspec.structs.replace(i, patterns=[]) for i in built.intents]
    return msgspec.structs.replace(built, intents=intents)


@cache
def nlu(name: str) -> RulesNLU:
    return RulesNLU(program(name))


@dataclass(frozen=True)
class Ctx:
    program: ir.Program
    node: ir.Node


def context(name: str, node_id: str) -> Ctx:
    built = program(name)
    return Ctx(built, next(n for n in built.nodes if n.id == node_id))


def rows(kind: str, part: str, language: str) -> list[dict[str, Any]]:
    """The lines of `tests/data/{part}_{kind}_{language}.jsonl` (kind: intents, safety,
    slots)."""
    path = DATA / f"{part}_{kind}_{language}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def intent_report(part: str, language: str) -> dict[str, Any]:
    """Per intent precision and recall, overall micro figures, and the traps given an intent."""
    per: dict[str, Counter] = {}
    traps, misses = Counter(), []
    for row in rows("intents", part, language):
        result = nlu(row["scenario"]).parse(row["text"], context(row["scenario"], row["node"]))
        want, got = row["intent"], result.intent
        if want is not None:
            per.setdefault(want, Counter()).update(support=1, tp=int(got == want),
                                                   fn=int(got != want))
        else:
            traps.update(n=1, given=int(got is not None))
        if got is not None and got != want:
            per.setdefault(got, Counter()).update(fp=1)
        if got != want:
            misses.append((row["text"], want, got, round(result.confidence, 2)))
    total = sum(per.values(), Counter())
    return {"per_intent": {k: dict(v) for k, v in sorted(per.items())},
            "precision": _ratio(total["tp"], total["tp"] + total["fp"]),
            "recall": _ratio(total["tp"], total["support"]),
            "support": total["support"], "traps": traps["n"], "traps_given_intent": traps["given"],
            "trap_rate": _ratio(traps["given"], traps["n"], empty=0.0), "misses": misses}


def safety_report(part: str, language: str) -> dict[str, Any]:
    """Recall per category (found that category) and false alarms on the traps."""
    detector = detector_for(program("support_bot" if language == "en" else "senimate"))
    per: dict[str, Counter] = {}
    traps, misses = Counter(), []
    for row in rows("safety", part, language):
        got = detector.detect(row["text"])
        want = row["category"]
        if want is None:
            traps.update(n=1, alarms=int(got is not None))
        else:
            per.setdefault(want, Counter()).update(n=1, found=int(got == want))
        if got != want:
            misses.append((row["text"], want, got))
    return {"recall": {k: _ratio(v["found"], v["n"]) for k, v in sorted(per.items())},
            "support": {k: v["n"] for k, v in sorted(per.items())},
            "traps": traps["n"], "false_alarms": traps["alarms"],
            "false_alarm_rate": _ratio(traps["alarms"], traps["n"], empty=0.0),
            "misses": misses}


@cache
def _runtime(name: str):
    from interpreter.loader import Runtime

    return Runtime(program(name), name)


def stored_slots(name: str, node_id: str, text: str) -> dict[str, Any]:
    """What a turn at the node stores, before validation: the rules NLU's values, with the
    engine's `affirm_value` / `deny_value` / `none_value` for a bare yes or no (SPEC 18.3-4)."""
    result = nlu(name).parse(text, context(name, node_id))
    found = dict(result.slots)
    runtime = _runtime(name)
    table = runtime.nodes[runtime.node_index[node_id]]
    act = "deny" if result.dialogue_act == "negate" else result.dialogue_act
    answers = getattr(table, "answers", None) or {}
    for slot, value in answers.get(ir.ACTS.index(act) if act in ir.ACTS else -1, ()):
        if found.get(slot) is None:
            found[slot] = value
    return found


def _same_slots(got: dict[str, Any], want: dict[str, Any]) -> bool:
    """Equal slot dicts, free text compared without spacing and punctuation."""
    def key(value: Any) -> Any:
        if isinstance(value, str) and not isinstance(value, bool):
            return "".join(ch for ch in value if ch.isalnum()).lower()
        return value
    return {k: key(v) for k, v in got.items()} == {k: key(v) for k, v in want.items()}


def slot_report(part: str, language: str) -> dict[str, Any]:
    """Slot accuracy per kind (enum, boolean, free text, typed) and per note (plain,
    negated, declined, excluded, yes_no): a line is right when the whole stored dict equals
    its label."""
    path = DATA / f"{part}_slots_{language}.jsonl"
    per: dict[str, Counter] = {}
    misses = []
    for row in rows("slots", part, language) if path.exists() else ():
        got = stored_slots(row["scenario"], row["node"], row["text"])
        right = _same_slots(got, row["slots"])
        for key in (row["kind"], "note:" + row["note"], "all"):
            per.setdefault(key, Counter()).update(n=1, right=int(right))
        if not right:
            misses.append((row["node"], row["text"], row["slots"], got))
    return {"accuracy": {k: _ratio(v["right"], v["n"]) for k, v in per.items()},
            "support": {k: v["n"] for k, v in per.items()}, "misses": misses}


def _ratio(top: int, bottom: int, empty: float = 1.0) -> float:
    return top / bottom if bottom else empty
