"""Conversation transcripts of the reference scenarios (tests/transcripts/), run by `mgi test`'s
runner (interpreter.transcripts.run).

Each `*.transcript` pins one path the seeds name (seed 001: every SeniMate path; seed 002: the
closing-node cases; seed 000 section 8: the inputs to try at every node; the weather skill; the
clinic booking flows); every step must pass.
A `*.transcript.xfail` shows a known interpreter or scenario bug (its header says which): it
must FAIL, so a fix makes this test fail and prompts renaming the file to `.transcript`.

The scenarios are compiled once per module into a temporary IR directory, straight from the
compiler (no `build/`, no `mgc` process): the three of `scenarios/` plus the test variants in
`tests/transcripts/scenarios/` (e.g. a weather greeting whose location the offline provider
does not know). To run one by hand: compile the same files into an IR dir, then
`mgi test --ir-dir DIR tests/transcripts/NAME.transcript`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.driver import check_file
from interpreter.transcripts.run import TranscriptResult, render_human, run_files
from conftest import ROOT

TRANSCRIPTS = ROOT / "tests" / "transcripts"
SCENARIOS = [ROOT / "scenarios" / f"{name}.json"
             for name in ("senimate", "senimate_weather", "clinic_booking", "email_compose",
                          "support_bot", "order_lookup", "pharmacy_refill", "med_reminder")]
VARIANTS = sorted((TRANSCRIPTS / "scenarios").glob("*.json"))

PASSING = sorted(TRANSCRIPTS.glob("*.transcript"))
EXPECTED_TO_FAIL = sorted(TRANSCRIPTS.glob("*.transcript.xfail"))


@pytest.fixture(scope="module")
def ir_dir(tmp_path_factory) -> Path:
    """Every scenario the transcripts name, compiled once, as `<dir>/<file stem>.ir`."""
    out = tmp_path_factory.mktemp("transcript_ir")
    for source in SCENARIOS + VARIANTS:
        result = check_file(str(source))
        problems = [f"{d.code} {d.path}: {d.message}" for d in result.diagnostics
                    if d.severity == "error"]
        assert not problems, f"{source.name} does not compile:\n" + "\n".join(problems)
        (out / f"{source.stem}.ir").write_bytes(result.ir_bytes())
    return out


def run_one(path: Path, ir_dir: Path) -> TranscriptResult:
    [result] = run_files([str(path)], ir_dir)
    return result


def test_there_are_transcripts():
    assert len(PASSING) >= 30, "tests/transcripts/ lost its transcripts"


@pytest.mark.parametrize("path", PASSING, ids=lambda p: p.name)
def test_transcript_passes(path: Path, ir_dir: Path):
    result = run_one(path, ir_dir)
    assert result.passed, "\n" + render_human([result])


@pytest.mark.parametrize("path", EXPECTED_TO_FAIL, ids=lambda p: p.name)
def test_known_bug_transcript_still_fails(path: Path, ir_dir: Path):
    result = run_one(path, ir_dir)
    # A file that cannot even run proves nothing about the bug it documents.
    assert result.error is None, f"{path.name} cannot run: {result.error}"
    assert not result.passed, (
        f"{path.name} passes now: the bug it documents looks fixed. Rename it to "
        f"{path.name.removesuffix('.xfail')} so it guards the fix.")
    print(render_human([result]))


@pytest.mark.parametrize("path", PASSING + EXPECTED_TO_FAIL, ids=lambda p: p.name)
def test_transcript_says_what_it_covers(path: Path):
    """Each file opens with a comment naming the seed path (or the bug) it covers."""
    first = next(line for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    assert first.startswith("#"), f"{path.name} has no header comment"
