"""The held-out tables of dates, times and number words (tests/data/dates/*.tsv, SPEC 14.1,
17.18), read as a turn reads them: the rules NLU of a one-slot program at a node collecting
the slot, then the slot's check with its bounds, on a fixed clock (2026-12-01, a Tuesday).
Each row is its own case; the pass counts per language are printed by `-rA` or docs/concepts/language.md."""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from interpreter.slots import SlotRule, check_value
from interpreter.state import DialogueState
from interpreter.understanding import dates
from interpreter.understanding.nlu import NLUContext
from interpreter.understanding.rules import RulesNLU
from conftest import ROOT
from support.irkit import ProgramBuilder

TABLES = ROOT / "tests" / "data" / "dates"
TODAY = dt.date(2026, 12, 1)


def rows(language: str) -> list:
    found = []
    for number, line in enumerate((TABLES / f"{language}.tsv").read_text("utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        kind, text, expected, *options = line.split("\t")
        found.append(pytest.param(language, kind, text, expected,
                                  dict(o.split("=") for o in " ".join(options).split()),
                                  id=f"{language}:{number}:{text}"))
    return found


def heard(language: str, kind: str, text: str, options: dict) -> tuple[object, str]:
    """(the value the NLU read, "" or the reason the slot's check refused it)."""
    bounds = {"min_bound": options.get("min"), "max_bound": options.get("max")} \
        if kind != "number" else {}
    builder = ProgramBuilder(language=language)
    builder.slot("answer", "integer" if kind == "number" else kind, **bounds)
    builder.node("ask", collect=["answer"]).stay()
    program = msgspec.structs.replace(builder.build(), date_order=options.get("order", ""))
    node = program.nodes[0]
    state = DialogueState("s", "h", "ask")
    with dates.clock_at(TODAY):
        result = RulesNLU(program).parse(text, NLUContext(program, node, state))
        value = result.slots.get("answer")
        if value is None:
            return None, ""
        ok, normal, reason = check_value(SlotRule(0, program.slots[0]), value)
    return normal, reason


@pytest.mark.parametrize("language, kind, text, expected, options", rows("en") + rows("ko"))
def test_a_phrasing_reads_as_its_table_says(language, kind, text, expected, options):
    value, refused = heard(language, kind, text, options)
    if expected == "-":
        assert value is None, f"{text!r} should say nothing, read {value!r}"
    elif expected.startswith("!"):
        assert (value, bool(refused)) == (expected[1:], True), \
            f"{text!r} should be read as {expected[1:]} and refused by {options}"
    else:
        want = int(expected) if kind == "number" else expected
        assert (value, refused) == (want, ""), f"{text!r}: read {value!r} ({refused})"


def test_each_table_has_sixty_dates_and_every_kind_of_row():
    for language in ("en", "ko"):
        kinds = [row.values[1] for row in rows(language)]
        assert kinds.count("date") >= 60
        expected = [row.values[3] for row in rows(language) if row.values[1] == "date"]
        assert sum(e == "-" for e in expected) >= 8 and sum(e[0] == "!" for e in expected) >= 6
