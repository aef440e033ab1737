"""Text the compiler must refuse before anything encodes it: lone surrogates (a JSON escape
such as `"\\udfff"` decodes to a string no UTF-8 encoder accepts) anywhere in a scenario, and
a `metadata.name` that is not one line of text.

Every command reads the scenario the same way, so each place is tried with `mgc check`,
`mgc check --format json`, `mgc compile` and `mgc graph`, each in a child process: exit 1,
one E012 at the place (pointer, line and column), no internal error, no IR written.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from compiler.driver import check_source
from interpreter.names import name_problem
from interpreter.transcripts.run import parse_transcript

LONE = "\udfff"
BASE = {
    "metadata": {"name": "surrogates", "language": "en"},
    "intents": {"wants_end": {"examples": ["bye"]}},
    "slots": {"meal": {"policy": "optional", "value_type": "enum", "values": ["ate", "skipped"]},
              "note": {"policy": "optional", "value_type": "string"}},
    "graph": {
        "entry": "greet",
        "global_transitions": [{"name": "quit", "target": "closing",
                                "condition": 'nlu.intent == "wants_end"'}],
        "nodes": [
            {"id": "greet", "description": "Say hello.", "default_next": "meal_check"},
            {"id": "meal_check", "description": "Ask about meals.",
             "responses": {"default": "Did you eat?"}, "collect_slots": ["meal", "note"],
             "next_nodes": [{"action": "stay", "condition": "slots.meal is empty"}],
             "default_next": "closing"},
            {"id": "closing", "description": "Say goodbye.", "terminal": True},
        ],
    },
}


def _set(path: tuple, value):
    def change(doc):
        *parents, last = path
        target = doc
        for part in parents:
            target = target[part]
        target[last] = value
    return change


def _unknown_key(doc):
    doc["graph"]["nodes"][0][LONE + "extra"] = 1


# place -> (change to the document, pointer reported)
PLACES = {
    "description": (_set(("graph", "nodes", 0, "description"), LONE + " talk"),
                    "/graph/nodes/0/description"),
    "response": (_set(("graph", "nodes", 1, "responses", "default"), "Did you eat" + LONE),
                 "/graph/nodes/1/responses/default"),
    "metadata name": (_set(("metadata", "name"), "surro" + LONE), "/metadata/name"),
    "intent example": (_set(("intents", "wants_end", "examples", 0), "bye" + LONE),
                       "/intents/wants_end/examples/0"),
    "condition expression": (_set(("graph", "global_transitions", 0, "condition"),
                                  'slots.note == "bye' + LONE + '"'),
                             "/graph/global_transitions/0/condition"),
    "condition object": (_set(("graph", "nodes", 1, "next_nodes", 0, "condition"),
                              {"field": "slots.note", "operator": "equals", "value": "ate" + LONE}),
                         "/graph/nodes/1/next_nodes/0/condition/value"),
    "unknown key": (_unknown_key, "/graph/nodes/0/\\udfffextra"),
    "intent name": (_set(("intents", "stop" + LONE), {"examples": ["stop"]}),
                    "/intents/stop\\udfff"),
}


def scenario_file(tmp_path: Path, place: str) -> Path:
    doc = copy.deepcopy(BASE)
    PLACES[place][0](doc)
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc, indent=2), "ascii")  # the surrogate as its escape
    assert "\\udfff" in path.read_text("ascii")
    return path


@pytest.mark.parametrize("place", list(PLACES))
def test_check_reports_the_surrogate_at_its_place(mgc, tmp_path, place):
    path, pointer = scenario_file(tmp_path, place), PLACES[place][1]
    done = mgc("check", path)
    assert done.returncode == 1, done.stderr
    assert "error[E012]: " in done.stderr and "lone surrogate \\udfff" in done.stderr
    assert f"  at {pointer}" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    head = next(line for line in done.stderr.splitlines() if "error[E012]" in line)
    line = int(head.split(":")[1])
    assert "\\udfff" in path.read_text("ascii").splitlines()[line - 1]
    assert f"   {line} | " in done.stderr  # the source line, escape and all


@pytest.mark.parametrize("place", list(PLACES))
def test_check_json_reports_the_surrogate(mgc, tmp_path, place):
    path, pointer = scenario_file(tmp_path, place), PLACES[place][1]
    done = mgc("check", "--format", "json", path)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    [diagnostic] = report["diagnostics"]
    assert (diagnostic["code"], diagnostic["path"]) == ("E012", pointer)
    assert diagnostic["line"] > 1 and diagnostic["column"] > 1
    assert "internal error" not in done.stderr


@pytest.mark.parametrize("place", list(PLACES))
def test_compile_refuses_the_surrogate_and_writes_no_ir(mgc, tmp_path, place):
    path = scenario_file(tmp_path, place)
    out = tmp_path / "out.ir"
    done = mgc("compile", path, "-o", out)
    assert done.returncode == 1, done.stderr
    assert f"  at {PLACES[place][1]}" in done.stderr and "lone surrogate" in done.stderr
    assert "internal error" not in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("place", list(PLACES))
def test_graph_of_a_scenario_with_a_surrogate_reports_it(mgc, tmp_path, place):
    done = mgc("graph", scenario_file(tmp_path, place))
    assert done.returncode == 1
    assert f"  at {PLACES[place][1]}" in done.stderr and "lone surrogate" in done.stderr
    assert "internal error" not in done.stderr and done.stdout == ""


def test_a_surrogate_pair_is_one_character_and_compiles(mgc, tmp_path):
    doc = copy.deepcopy(BASE)
    doc["graph"]["nodes"][0]["description"] = "smile \U0001F600"
    path = tmp_path / "pair.json"
    path.write_text(json.dumps(doc), "ascii")
    assert "\\ud83d\\ude00" in path.read_text("ascii")
    done = mgc("compile", path, "-o", tmp_path / "pair.ir")
    assert done.returncode == 0, done.stderr


def test_each_place_is_reported_once_and_references_do_not_cascade():
    """A node id with a surrogate, and the targets naming it: three places, three reports,
    no unknown-target error for the references."""
    doc = copy.deepcopy(BASE)
    doc["graph"]["nodes"][2]["id"] = "clos" + LONE
    doc["graph"]["nodes"][1]["default_next"] = "clos" + LONE
    doc["graph"]["global_transitions"][0]["target"] = "clos" + LONE
    result = check_source("s.json", json.dumps(doc, indent=2))
    assert sorted(d.path for d in result.diagnostics) == [
        "/graph/global_transitions/0/target", "/graph/nodes/1/default_next", "/graph/nodes/2/id"]
    assert {d.code for d in result.diagnostics} == {"E012"}


# --- metadata.name: one line of text, as transcripts need ---------------------------------


@pytest.mark.parametrize("name,offset", [("a\nb", 1), ("x\x00", 1), ("\x1b[31mred", 0),
                                         ("tab\there", 3), ("line\u2028break", 4)])
def test_a_name_with_a_control_character_is_refused_where_it_is(name, offset):
    doc = copy.deepcopy(BASE)
    doc["metadata"]["name"] = name
    [diagnostic] = check_source("s.json", json.dumps(doc, indent=2)).diagnostics
    assert (diagnostic.code, diagnostic.path) == ("E012", "/metadata/name")
    assert "one line" in diagnostic.message and "control characters" in diagnostic.hint
    assert name_problem(name)[0] == offset


@given(st.text(max_size=12))
def test_every_name_the_compiler_accepts_survives_a_transcript_comment(name):
    """`mgi fuzz --transcripts` writes the name in a comment line; `mgi test` must read the
    file back (a newline or a NUL in the name breaks it: both are refused)."""
    text = f"# counterexample (scenario {name}, seed 1)\nscenario: x\nuser: hi\n"
    if name_problem(name) is None:
        assert parse_transcript(text).scenario == "x"


def test_a_name_with_a_newline_or_nul_would_break_a_transcript():
    for name in ("a\nb", "a\x00b"):
        with pytest.raises(Exception, match="expected `key: value`|NUL"):
            parse_transcript(f"# scenario {name}, seed 1\nscenario: x\nuser: hi\n")
