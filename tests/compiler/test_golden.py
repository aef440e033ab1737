"""Golden diagnostics: one bad scenario per diagnostic code, its expected output next to it.

`tests/golden/CODE_short_name.json` is a small scenario with exactly one mistake (or, for a
W4xx case, one questionable construct and no error). `CODE_short_name.expect` lists, one line
per diagnostic, what `mgc check` must report for it, written by hand from the JSON text:

    E103 34:25 /graph/nodes/0/default_next | did you mean 'meal_check'?

that is `CODE LINE:COLUMN POINTER`, then optionally `|` and a fragment the hint must contain.
Columns are 1-based and count characters; the pointer is `-` when the diagnostic has none.
The reported diagnostics must equal the listed ones exactly, duplicates included: one mistake
gives one report, never a cascade. Every code of the catalogue must have a case that passes.

`KNOWN_BUGS` names the cases that show a compiler bug; they are strict xfails, so fixing the
bug makes them fail until the entry is removed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter

import pytest

from compiler.diagnostics import CATALOGUE, ERROR, WARNING
from compiler.driver import check_file
from conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(path.stem for path in GOLDEN.glob("*.json"))
EXPECT_LINE = re.compile(r"^(?P<code>[EW]\d{3}) (?P<line>\d+):(?P<column>\d+) (?P<path>\S+)"
                         r"(?: \| (?P<hint>.+))?$")

KNOWN_BUGS: dict[str, str] = {}


def parse_expect(name: str) -> list[tuple[str, int, int, str, str | None]]:
    """(code, line, column, pointer, hint fragment) for each line of NAME.expect."""
    out = []
    for number, text in enumerate((GOLDEN / f"{name}.expect").read_text("utf-8").splitlines(), 1):
        if not text.strip():
            continue
        match = EXPECT_LINE.match(text)
        assert match, f"{name}.expect:{number}: not 'CODE LINE:COL POINTER [| HINT]': {text!r}"
        path = "" if match["path"] == "-" else match["path"]
        out.append((match["code"], int(match["line"]), int(match["column"]), path, match["hint"]))
    return out


def show(diagnostic) -> str:
    """A reported diagnostic in the .expect format (with its hint), for failure messages."""
    return (f"{diagnostic.code} {diagnostic.line}:{diagnostic.column} {diagnostic.path or '-'}"
            f" | {diagnostic.hint}   [{diagnostic.message}]")


def case_params():
    for name in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[name])] if name in KNOWN_BUGS else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(case_params()))
def test_golden_case(name):
    expected = parse_expect(name)
    result = check_file(str(GOLDEN / f"{name}.json"))
    actual = Counter((d.code, d.line, d.column, d.path) for d in result.diagnostics)
    wanted = Counter(e[:4] for e in expected)
    listing = "\n".join(show(d) for d in result.diagnostics) or "(nothing)"
    assert actual == wanted, f"{name}: the compiler reported\n{listing}"
    for code, line, column, path, fragment in expected:
        if fragment is None:
            continue
        hints = [d.hint or "" for d in result.diagnostics if (d.code, d.line, d.column, d.path) == (code, line, column, path)]
        assert any(fragment in hint for hint in hints), f"{name}: no hint containing {fragment!r}:\n{listing}"


def test_every_case_has_both_files_and_is_named_after_its_code():
    expects = sorted(path.stem for path in GOLDEN.glob("*.expect"))
    assert expects == CASES
    for name in CASES:
        code = name.split("_", 1)[0]
        assert code in CATALOGUE, f"{name}: not named after a catalogue code"
        assert code in {e[0] for e in parse_expect(name)}, f"{name}.expect does not list {code}"
    assert set(KNOWN_BUGS) <= set(CASES), "KNOWN_BUGS names a case that does not exist"


def test_every_catalogue_code_has_a_passing_golden_case():
    """A code whose only cases are known bugs is not covered."""
    covered = {name.split("_", 1)[0] for name in CASES if name not in KNOWN_BUGS}
    missing = sorted(set(CATALOGUE) - covered)
    assert not missing, f"catalogue codes without a golden case in tests/golden/: {missing}"


def test_warning_cases_expect_no_error():
    for name in CASES:
        if name.startswith("W"):
            codes = [e[0] for e in parse_expect(name)]
            assert all(CATALOGUE[code][0] == WARNING for code in codes), name


def test_the_checking_guides_table_lists_every_code_with_its_severity():
    readme = (ROOT / "docs" / "guides" / "checking.md").read_text("utf-8")
    rows = dict(re.findall(r"^\| ([EW]\d{3}) \| (error|warning) \|", readme, re.M))
    assert rows == {code: severity for code, (severity, _) in CATALOGUE.items()}


# ---- the CLI around the same cases


def test_human_output_has_position_source_line_caret_pointer_and_hint(mgc):
    case = GOLDEN / "E103_unknown_default_next.json"
    source_line = case.read_text("utf-8").splitlines()[48]  # line 49
    done = mgc("check", case)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    head = f"{case}:49:25: error[E103]: unknown target node 'closng'"
    assert head in lines
    at = lines.index(head)
    assert lines[at + 1] == f"   49 | {source_line}"
    caret = lines[at + 2]
    assert caret.rstrip().endswith("^") and caret.count("^") == 1
    # The caret stands under the opening quote of "closng" (column 25).
    assert caret.index("^") == lines[at + 1].index('"closng"')
    assert "  at /graph/nodes/1/default_next" in lines
    assert "  hint: did you mean 'closing'?" in lines
    assert "Traceback" not in done.stderr


def test_human_caret_inside_an_expression_after_hangul(mgc):
    """The caret of an expression error lands on the token, by display width (Hangul = 2)."""
    case = GOLDEN / "E205_after_hangul.json"
    source_line = case.read_text("utf-8").splitlines()[45]
    done = mgc("check", case)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    head = next(i for i, line in enumerate(lines) if ":46:56: error[E205]:" in line)
    gutter = "   46 | "
    assert lines[head + 1] == gutter + source_line
    wide = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in source_line[:55])
    assert lines[head + 2] == " " * (len(gutter) - 2) + "| " + " " * wide + "^"
    assert source_line[55:57] == "or"


def test_json_output_has_the_spec_keys(mgc):
    case = GOLDEN / "E105_placeholder.json"
    done = mgc("check", "--format", "json", case)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert {"diagnostics", "errors", "warnings"} <= set(report)
    assert (report["errors"], report["warnings"]) == (1, 0)
    [diagnostic] = report["diagnostics"]
    assert set(diagnostic) == {"code", "severity", "message", "path", "line", "column", "hint"}
    assert diagnostic["code"] == "E105" and diagnostic["severity"] == ERROR
    assert (diagnostic["line"], diagnostic["column"]) == (40, 36)
    assert diagnostic["path"] == "/graph/nodes/1/responses/default"
    assert "mael" in diagnostic["message"] and diagnostic["hint"] == "did you mean 'meal'?"


def test_strict_turns_a_warning_into_failure(mgc, tmp_path):
    case = GOLDEN / "W405_unused_slot.json"
    relaxed = mgc("check", "--format", "json", case)
    assert relaxed.returncode == 0, "warnings alone must not fail without --strict"
    report = json.loads(relaxed.stdout)
    assert (report["errors"], report["warnings"]) == (0, 1)
    assert report["diagnostics"][0]["severity"] == WARNING
    out = tmp_path / "w.ir"
    out.write_bytes(b"MGIR stale")  # an IR file (only those are removed)
    strict = mgc("compile", "--strict", case, "-o", out)
    assert strict.returncode == 1 and "warning[W405]" in strict.stderr
    assert not out.exists(), "a failed --strict compile must remove the stale output"
