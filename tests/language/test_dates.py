"""Date and time slots through the engine and the tools (SPEC 14.1, 17.18): the clock of
`mgi run --now` and of a transcript's `now:`, "today" in conditions, IR files of format 5
still loading, and the date reader imported only by scenarios that have a date or time slot.
The reader's phrasings are the tables of `test_dates_table.py`."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from interpreter import ir
from interpreter.loader import load_program
from interpreter.transcripts.parse import TranscriptError, parse_transcript
from conftest import ROOT, run_mgc
from support.irkit import BODY_FIELDS, ProgramBuilder, body_tree, forge

VISIT = {
    "metadata": {"name": "visit", "language": "en", "timezone": "Asia/Seoul"},
    "slots": {"visit": {"policy": "required", "value_type": "date", "min": "today-30d",
                        "question": "When did you come in?"}},
    "graph": {"entry": "ask", "nodes": [
        {"id": "ask", "description": "Ask the day.", "collect_slots": ["visit"],
         "responses": {"default": "When did you come in?"},
         "next_nodes": [{"target": "today_node", "condition": 'slots.visit == "today"'}],
         "default_next": "other"},
        {"id": "today_node", "description": "Today.", "terminal": True,
         "responses": {"default": "Today, {slots.visit}."}},
        {"id": "other", "description": "Another day.", "terminal": True,
         "responses": {"default": "On {slots.visit}."}}]},
}


@pytest.fixture
def visit_ir(tmp_path) -> Path:
    return compiled(tmp_path, "visit", VISIT)


def compiled(folder: Path, name: str, scenario: dict | Path) -> Path:
    source = scenario if isinstance(scenario, Path) else folder / f"{name}.json"
    if not isinstance(scenario, Path):
        source.write_text(json.dumps(scenario), encoding="utf-8")
    out = folder / f"{name}.ir"
    done = run_mgc("compile", source, "-o", out)
    assert done.returncode == 0, done.stderr
    return out


def mgi(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter.cli", *args], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_mgi_run_now_fixes_today_for_relative_dates_and_conditions(visit_ir):
    # 2026-12-01T23:30 in UTC is already 2026-12-02 in Seoul (metadata.timezone)
    done = mgi("run", str(visit_ir), "--json", "--now", "2026-12-01T23:30+00:00",
               stdin='{"user": "today"}\n')
    assert done.returncode == 0, done.stderr
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["slots"] == {"visit": "2026-12-02"} and last["next_node"] == "today_node"
    done = mgi("run", str(visit_ir), "--json", "--now", "2026-12-10",
               stdin='{"user": "3 days ago"}\n')
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["slots"] == {"visit": "2026-12-07"} and last["next_node"] == "other"


def test_a_date_below_a_relative_min_is_refused_on_that_day(visit_ir):
    done = mgi("run", str(visit_ir), "--json", "--now", "2026-12-10",
               stdin='{"user": "November 1, 2026"}\n')  # 39 days back
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["slots"] == {} and last["next_node"] == "ask"


def test_a_bad_now_is_one_line(visit_ir):
    done = mgi("run", str(visit_ir), "--now", "next tuesday", stdin="")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mgi: --now 'next tuesday' is not an ISO date or date-time; write e.g. 2026-12-01 or "
        "2026-12-01T10:00"]


def test_a_transcript_now_header_is_checked_at_its_line():
    text = "scenario: pharmacy_refill\nnow: 2026-12-01T10:00\nuser: hi\n"
    assert parse_transcript(text).now == "2026-12-01T10:00"
    with pytest.raises(TranscriptError) as error:
        parse_transcript("scenario: x\nnow: soon\nuser: hi\n", "t.transcript")
    assert str(error.value).startswith("t.transcript:2: `now:` is an ISO date")


def test_an_ir_file_of_format_5_still_loads(tmp_path):
    builder = ProgramBuilder(language="en")
    builder.slot("name", "string")
    builder.node("ask", collect=["name"]).stay()
    tree = body_tree(builder.build())
    older = {name: tree[name] for name in BODY_FIELDS if name not in ("date_order", "timezone")}
    older["slots"] = [slot[:-2] for slot in older["slots"]]  # no min_bound, max_bound
    data = bytearray(forge(older))
    struct.pack_into(">H", data, 4, 5)
    path = tmp_path / "old.ir"
    path.write_bytes(bytes(data))
    runtime = load_program(path)
    assert runtime.program.date_order == "" and runtime.program.slots[0].min_bound is None
    assert not runtime.uses_dates


def test_scenarios_without_dates_never_import_the_date_reader(tmp_path):
    senimate = compiled(tmp_path, "senimate", ROOT / "scenarios" / "senimate.json")
    script = tmp_path / "s.txt"
    script.write_text("네 좋아요\n", encoding="utf-8")
    code = ("import sys, io, contextlib\nimport interpreter.cli.main as cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try: cli.main(['run', {str(senimate)!r}, '--script', "
            f"{str(script)!r}])\n"
            "    except SystemExit as done: assert done.code == 0, done.code\n"
            "print('interpreter.understanding.dates' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_format_8_is_this_mgis():
    assert ir.FORMAT_VERSION == 8 and ir.OLDEST_FORMAT_VERSION == 4
