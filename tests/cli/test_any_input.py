"""For any bytes given as a scenario, an IR, a transcript, a properties file or a `--json`
line, every command ends with exit 0, 1 or 2, says so in one line or in diagnostics, and
never prints "internal error" or a traceback (issue 12).

The commands run in this process (`main(argv)` as the console scripts call it), with the
standard streams swapped for buffers, so a property can try hundreds of inputs.
"""

from __future__ import annotations

import gc
import io
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.cli import main as mgc_main
from conftest import ROOT, examples
from interpreter.cli.main import main as mgi_main

SENIMATE = (ROOT / "scenarios" / "senimate.json").read_bytes()
TRANSCRIPT = (ROOT / "tests" / "transcripts" / "senimate_001_free_talk_stays.transcript").read_bytes()
PROPERTIES = b"after intent user_wants_to_end, the session completes within 3 turns\n"


def call(main, argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of one in-process run."""
    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
               io.TextIOWrapper(out, encoding="utf-8", write_through=True),
               io.TextIOWrapper(err, encoding="utf-8", write_through=True))
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        main(argv)
        status = 0
    except SystemExit as done:
        status = done.code if isinstance(done.code, int) else 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        gc.enable()  # mgc turns the collector off for its short life
    for stream in streams[1:]:
        stream.flush()
    return (status, out.getvalue().decode("utf-8", "replace"),
            err.getvalue().decode("utf-8", "replace"))


def assert_clean(status: int, out: str, err: str) -> None:
    assert status in (0, 1, 2), (status, err)
    for text in (out, err):
        assert "internal error" not in text, text
        assert "Traceback" not in text, text
    if status == 2 and "error[" not in err and "✗" not in out:  # a usage or input problem
        assert len(err.strip().splitlines()) == 1, err


def mutated(seed: bytes) -> st.SearchStrategy[bytes]:
    """`seed` with a few bytes replaced, inserted or cut: mostly almost-valid input."""
    def mutate(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
        for kind, where, chunk in edits:
            at = where % (len(data) + 1)
            if kind == 0:
                data = data[:at] + chunk + data[at + len(chunk):]
            elif kind == 1:
                data = data[:at] + chunk + data[at:]
            else:
                data = data[:at] + data[at + len(chunk) + 1:]
        return data

    edit = st.tuples(st.integers(0, 2), st.integers(0, 2 ** 20), st.binary(min_size=1, max_size=8))
    return st.builds(mutate, st.just(seed), st.lists(edit, min_size=1, max_size=4))


def any_bytes(seed: bytes) -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(max_size=512), mutated(seed))


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder)
        status, _, err = call(mgc_main, ["compile", str(ROOT / "scenarios" / "senimate.json"),
                                         "-o", str(path / "senimate.ir")])
        assert status == 0, err
        yield path


def _write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


@settings(max_examples=examples(60))
@given(data=any_bytes(SENIMATE))
def test_any_bytes_as_a_scenario(workdir, data):
    path = _write(workdir, "any.json", data)
    for argv in (["check", path], ["check", "--format", "json", path],
                 ["compile", path, "-o", str(workdir / "any.ir")], ["graph", path]):
        assert_clean(*call(mgc_main, argv))


@settings(max_examples=examples(60))
@given(data=st.data())
def test_any_bytes_as_an_ir(workdir, data):
    real = (workdir / "senimate.ir").read_bytes()
    path = _write(workdir, "any.ir", data.draw(any_bytes(real)))
    assert_clean(*call(mgc_main, ["inspect", path]))
    assert_clean(*call(mgi_main, ["run", path, "--script", "-"], b"\xeb\x84\xa4\n"))


@settings(max_examples=examples(60))
@given(data=any_bytes(TRANSCRIPT))
def test_any_bytes_as_a_transcript(workdir, data):
    path = _write(workdir, "any.transcript", data)
    assert_clean(*call(mgi_main, ["test", path, "--ir-dir", str(workdir)]))


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.nested_given])
@given(data=any_bytes(PROPERTIES))  # `mgi fuzz` runs hypothesis itself
def test_any_bytes_as_a_properties_file(workdir, data):
    path = _write(workdir, "any.props", data)
    status, out, err = call(mgi_main, ["fuzz", str(workdir / "senimate.ir"), "--properties",
                                       path, "--examples", "2", "--seed", "1"])
    assert_clean(status, out, err)


@settings(max_examples=examples(80))
@given(line=st.one_of(st.binary(max_size=200),
                      mutated(b'{"user": "\xeb\x84\xa4", "nlu": {"dialogue_act": "affirm", '
                              b'"intent": null, "slots": {"meal_status": "adequate"}}}')))
def test_any_bytes_as_a_json_line(workdir, line):
    line = line.replace(b"\n", b" ")
    for argv in (["run", str(workdir / "senimate.ir"), "--json"],
                 ["run", str(workdir / "senimate.ir"), "--json", "--nlu", "scripted"]):
        assert_clean(*call(mgi_main, argv, line + b"\n"))
