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

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SCENARIO_FILES = {"support_bot": "support_bot.json", "senimate": "senimate.json",
                  "clinic": "clinic_booking.json", "email_compose": "email_compose.json"}


@cache
def program(name: str, with_patterns: bool = False) -> ir.Program:
    """The shipped scenario `name`, compiled; without its intent patterns unless asked."""
    result = check_file(str(ROOT / "scenarios" / SCENARIO_FILES[name]))
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
    """The lines of `tests/data/{part}_{kind}_{language}.jsonl` (kind: intents, safety)."""
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


def _ratio(top: int, bottom: int, empty: float = 1.0) -> float:
    return top / bottom if bottom else empty
