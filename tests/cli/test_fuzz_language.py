"""`mgi fuzz` and the designer's language (SPEC 14): what its input space says, and what its
placeholder property reads.

- The input space says dates and times in words and numbers as well as ISO (the rules NLU
  reads each back to the value it stands for), strings before their `normalize` (the engine
  stores them normalised), and enum labels; each node's own exits are a kind of turn.
- `placeholders_filled` respects a line's `when`: a conditional line left out is not a
  sentence left out; the same line without its `when` is caught.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import find

from compiler.driver import check_file
from interpreter.fuzz.runner import EPOCH, FuzzOptions, fuzz_inputs, run_fuzz
from interpreter.fuzz.values import denormalized, spoken
from interpreter.loader import load_program
from interpreter.slots import check_value
from interpreter.understanding import dates
from conftest import ROOT



def compiled(tmp_path: Path, change=None) -> Path:
    scenario = json.loads((ROOT / "scenarios" / "pharmacy_refill.json").read_text("utf-8"))
    if change is not None:
        change(scenario)
    source = tmp_path / "pharmacy_refill.json"
    source.write_text(json.dumps(scenario), "utf-8")
    result = check_file(str(source))
    assert not result.errors, [d.message for d in result.diagnostics]
    ir = tmp_path / "pharmacy_refill.ir"
    ir.write_bytes(result.ir_bytes())
    return ir


@pytest.fixture(scope="module")
def pharmacy(tmp_path_factory):
    return load_program(compiled(tmp_path_factory.mktemp("pharmacy")))


def test_dates_are_said_in_words_and_the_rules_nlu_reads_each_back(pharmacy):
    space = fuzz_inputs(pharmacy, "rules", ())
    dob = space.values["dob"]
    assert "today" in dob.said and "yesterday" in dob.said
    assert any(text[0].isalpha() and text[-4:].isdigit() for text in dob.said)  # "March 4, 1962"
    assert any("/" in text for text in dob.said)
    with dates.clock_at(dates.day_of(EPOCH)):
        for text in dob.said:
            assert dates.read_date(text, "en", "", back=True) in dob.valid, text
    texts = space._slot_texts("dob")
    assert set(dob.said) <= set(texts)


@pytest.mark.parametrize(("value", "language", "said"), [
    ("15:30", "en", "3:30pm"), ("09:00", "en", "9am"), ("00:00", "en", "12am"),
    ("15:30", "ko", "오후 3시 반"), ("09:05", "ko", "오전 9시 5분"),
])
def test_times_are_said_as_a_user_says_them_and_read_back(value, language, said):
    rule = SimpleNamespace(item=None, kind="time")
    assert spoken(rule, value, language, "") == (said,)
    assert dates.read_time(said, language) == value


@pytest.mark.parametrize(("order", "said"), [("mdy", "3/4/1962"), ("dmy", "4/3/1962"),
                                             ("ymd", "1962/3/4")])
def test_numeric_dates_follow_the_date_order(order, said):
    rule = SimpleNamespace(item=None, kind="date")
    assert said in spoken(rule, "1962-03-04", "en", order)
    assert dates.read_date(said, "en", order) == "1962-03-04"
    assert spoken(rule, "1962-03-04", "ko", "")[0] == "1962년 3월 4일"


def test_normalised_strings_are_drawn_as_said_and_stored_normalised(pharmacy):
    space = fuzz_inputs(pharmacy, "generated", ())
    rx = pharmacy.slot_rules[pharmacy.slot_index["rx_number"]]
    said = find(space.values["rx_number"].pattern, lambda v: v.startswith("rx "))
    ok, stored, _ = check_value(rx, said)
    assert ok and stored == said.upper().replace(" ", "")
    assert denormalized(("upper", "remove_spaces"), "RX7654321") == "rx 7654321"
    address = space.values["address"].valid
    doubled = [v for v in address if "  " in v]  # collapse_spaces undone: said, not stored
    assert doubled and all(check_value(pharmacy.slot_rules[pharmacy.slot_index["address"]],
                                       v)[1] == " ".join(v.split()) for v in doubled)


def test_labels_and_the_nodes_exits_are_said(pharmacy):
    rules = fuzz_inputs(pharmacy, "rules", ())
    assert "Northgate branch" in rules._slot_texts("branch")
    generated = fuzz_inputs(pharmacy, "generated", ())
    confirm = generated._exit_pool(pharmacy.node_index["confirm"])
    asked = {(t.nlu.get("intent"), t.nlu.get("dialogue_act")) for t in confirm}
    # the node's own routes (affirm, deny), then its route group's (pharmacist, start over)
    assert asked == {(None, "affirm"), (None, "deny"), ("pharmacist", None), ("start_over", None)}
    texts = [t.text for t in rules._exit_pool(pharmacy.node_index["confirm"])]
    assert "talk to a pharmacist" in texts and all(t.nlu is None for t in
                                                   rules._exit_pool(pharmacy.node_index["confirm"]))


def _without_when(scenario: dict) -> None:
    confirm = next(n for n in scenario["graph"]["nodes"] if n["id"] == "confirm")
    del confirm["responses"]["default"]["lines"][1]["when"]  # the Address: line, always said


def test_a_line_left_out_by_its_when_is_no_violation_but_one_said_without_its_value_is(
        tmp_path):
    options = FuzzOptions(examples=200, max_turns=10, seed=7)
    (tmp_path / "held").mkdir()
    held = compiled(tmp_path / "held")
    report = run_fuzz(load_program(held), str(held), options)
    assert "placeholders_filled" not in report.found
    assert report.coverage["nodes"]["entered"]["confirm"] > 0
    (tmp_path / "flawed").mkdir()
    flawed = compiled(tmp_path / "flawed", _without_when)
    # Finding the flaw takes luck that 200 examples do not always have: hypothesis also draws
    # the literal numbers of the local modules loaded in the process (here, those this test
    # worker has imported so far), so one seed plays other conversations in another process.
    # With one such set of modules, seed 7 met no pickup at `confirm` in 200 examples (234
    # conversations); 500 and more found it with every seed tried.
    report = run_fuzz(load_program(flawed), str(flawed), options._replace(examples=1000))
    found = report.found["placeholders_filled"]
    assert "{slots.address} has no value" in found.message and "confirm" in found.message


def test_rules_mode_reaches_the_failed_submission_of_the_pharmacy(tmp_path):
    """Through the rules NLU the submission is six good answers deep: where a required slot
    holds the user, its answers have four shares of the turns, as in generated mode (two
    before: seed 7 never entered `submit_failed`, seed 1 not even `confirm`'s send)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "interpreter.cli", "fuzz", str(compiled(
        tmp_path)), "--nlu", "rules", "--seed", "7", "--format", "json"], cwd=ROOT,
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    coverage = json.loads(done.stdout)["coverage"]
    assert coverage["nodes"]["uncovered"] == []
    assert coverage["transitions"]["fired"]["submit_refill default_next"] > 0
