"""What `mgc` and `mgi` read and write when the user is careless or hostile (issue 12).

Data loss (an output that is the scenario itself), endless or special inputs (/dev/zero, a
FIFO with no writer, a file over the size cap) under a memory limit, JSON too deep or with
too long a number, closed or full standard streams, and Ctrl-C. Every case is one line on
stderr and an exit status of 0, 1, 2 or 130, never a traceback or "internal error".
"""

from __future__ import annotations

import os
import pty
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from interpreter import files
from conftest import ROOT

SENIMATE = ROOT / "scenarios" / "senimate.json"
MEMORY_LIMIT = 1024 ** 3  # far below what /dev/zero read whole would take within the timeout


def limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(tool: str, *args: object, cwd: Path | None = None, timeout: float = 60,
        given: str | None = None, shell_suffix: str = "",
        env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m compiler|interpreter ARGS`, memory-limited, `given` on stdin (else none);
    `shell_suffix` adds a bash redirection such as `>&-` or `> /dev/full`."""
    command = [sys.executable, "-m", tool, *map(str, args)]
    if shell_suffix:
        command = ["bash", "-c", " ".join(f"'{c}'" for c in command) + " " + shell_suffix]
    return subprocess.run(command, cwd=cwd or ROOT, capture_output=True, text=True,
                          timeout=timeout, input=given,
                          stdin=subprocess.DEVNULL if given is None else None,
                          preexec_fn=limited_memory,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def one_line_error(done: subprocess.CompletedProcess, status: int = 2) -> str:
    assert done.returncode == status, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def senimate_ir(served_irs) -> Path:
    """The reference scenario, compiled once per test process (`served_irs`); read only."""
    return served_irs / "senimate.ir"


# --- 1. an output that is the input ---------------------------------------------------------


@pytest.mark.parametrize("output", ["s.json", "./s.json", "./x/../s.json", "link.json",
                                    "hard.json"])
def test_compiling_a_scenario_onto_itself_is_refused_and_touches_nothing(tmp_path, output):
    source = tmp_path / "s.json"
    shutil.copy(SENIMATE, source)
    (tmp_path / "x").mkdir()
    (tmp_path / "link.json").symlink_to("s.json")
    os.link(source, tmp_path / "hard.json")
    before = source.read_bytes()
    line = one_line_error(run("compiler", "compile", "s.json", "-o", output, cwd=tmp_path))
    assert "is the scenario itself" in line and "nothing was written" in line
    assert source.read_bytes() == before


def test_a_broken_scenario_compiled_onto_itself_is_not_deleted(tmp_path):
    broken = tmp_path / "b.json"
    broken.write_text('{"metadata": ')
    one_line_error(run("compiler", "compile", "b.json", "-o", "b.json", cwd=tmp_path))
    assert broken.read_text() == '{"metadata": '


def test_a_failed_compile_removes_a_stale_ir_but_nothing_else(tmp_path, senimate_ir):
    broken = tmp_path / "b.json"
    broken.write_text("{")
    stale = tmp_path / "stale.ir"
    shutil.copy(senimate_ir, stale)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    assert run("compiler", "compile", broken, "-o", stale).returncode == 1
    assert not stale.exists()
    assert run("compiler", "compile", broken, "-o", notes).returncode == 1
    assert notes.read_text() == "my notes"


# --- 2. endless, special and oversized inputs -----------------------------------------------


@pytest.mark.parametrize("args", [
    ("compiler", "compile", "/dev/zero", "-o", "{tmp}/x.ir"),
    ("compiler", "check", "/dev/zero"),
    ("compiler", "inspect", "/dev/zero"),
    ("compiler", "graph", "/dev/zero"),
    ("interpreter.cli", "run", "/dev/zero"),
    ("interpreter.cli", "fuzz", "/dev/zero"),
    ("interpreter.cli", "test", "/dev/zero"),
    ("interpreter.cli", "fuzz", "{ir}", "--properties", "/dev/zero", "--examples", "3"),
], ids=lambda a: " ".join(a[1:3]) + (" --properties" if "--properties" in a else ""))
def test_an_endless_device_is_refused_under_a_memory_limit(tmp_path, senimate_ir, args):
    args = [a.format(tmp=tmp_path, ir=senimate_ir) for a in args]
    done = run(*args, timeout=30)
    assert done.returncode == 2, done.stderr
    assert "not a regular file" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr + done.stdout
    assert not (tmp_path / "x.ir").exists()


def test_a_transcript_whose_ir_is_an_endless_device_is_refused(tmp_path):
    transcript = tmp_path / "z.transcript"
    transcript.write_text("ir: /dev/zero\nuser: 네\n")
    done = run("interpreter.cli", "test", transcript, timeout=30)
    assert done.returncode == 2 and "not a regular file" in done.stdout, done.stdout


@pytest.mark.parametrize("args", [("compiler", "check", "{fifo}"),
                                  ("interpreter.cli", "run", "{fifo}"),
                                  ("interpreter.cli", "test", "{fifo}")])
def test_a_fifo_with_no_writer_is_refused_at_once(tmp_path, args):
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    done = run(*[a.format(fifo=fifo) for a in args], timeout=20)
    assert done.returncode == 2 and "a pipe, not a regular file" in done.stdout + done.stderr


def test_a_file_over_the_cap_is_refused_without_reading_it_and_the_cap_can_be_raised(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:  # sparse: 65 MiB of nothing on disk
        handle.truncate(65 * 1024 * 1024)
    line = one_line_error(run("compiler", "check", big))
    assert "larger than the 64 MiB input limit" in line and "--max-input-mb" in line
    small = tmp_path / "s.json"
    shutil.copy(SENIMATE, small)
    line = one_line_error(run("compiler", "check", "--max-input-mb", "1", big))
    assert "larger than the 1 MiB input limit" in line
    assert run("compiler", "check", small, env={files.ENV_LIMIT: "1"}).returncode == 0
    done = run("compiler", "check", "--max-input-mb", "100", big)
    assert done.returncode == 1 and "E001" in done.stderr  # read, and it is not JSON


def test_the_cap_applies_to_every_input_of_mgi(tmp_path, senimate_ir):
    transcript = tmp_path / "t.transcript"
    transcript.write_text("scenario: senimate\nuser: 네\n" + "# padding\n" * 120_000)
    done = run("interpreter.cli", "test", transcript, "--max-input-mb", "1")
    assert done.returncode == 2 and "larger than the 1 MiB input limit" in done.stdout
    line = one_line_error(run("interpreter.cli", "run", senimate_ir, "--max-input-mb", "0"))
    assert "--max-input-mb must be a whole number of MiB" in line


def test_read_input_stops_at_the_cap_for_a_file_that_grows(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert files.read_input(path, cap=100) == b"x" * 100
    with pytest.raises(files.InputFileError, match="larger than"):
        files.read_input(path, cap=99)
    with pytest.raises(files.InputFileError, match="no such file"):
        files.read_input(tmp_path / "missing")
    with pytest.raises(files.InputFileError, match="a folder"):
        files.read_input(tmp_path)


# --- 7. JSON too deep or with too long a number ---------------------------------------------

DEEP = "[" * 10_000 + "]" * 10_000
LONG_NUMBER = "9" * 5_000


@pytest.mark.parametrize("nlu, expected", [
    (DEEP, "nested too deeply"),
    ('{"slots": {"x": ' + LONG_NUMBER + "}}", "a number is too long"),
])
def test_a_json_line_too_deep_or_too_long_a_number_is_a_line_error(senimate_ir, nlu, expected):
    script = '{"user": "네", "nlu": ' + nlu + "}\n"
    line = one_line_error(run("interpreter.cli", "run", senimate_ir, "--json", given=script))
    assert line.startswith("mgi: line 1: JSON that cannot be read") and expected in line


def test_a_transcript_with_unreadable_json_is_reported_and_later_ones_still_run(tmp_path,
                                                                                 senimate_ir):
    deep = tmp_path / "deep.transcript"
    deep.write_text(f"ir: {senimate_ir}\nuser: 네\n  nlu: {{\"slots\": {DEEP}}}\n")
    long = tmp_path / "long.transcript"
    long.write_text(f"ir: {senimate_ir}\nuser: 네\n  nlu: {{\"slots\": {{\"x\": {LONG_NUMBER}}}}}\n")
    good = tmp_path / "good.transcript"
    good.write_text(f"ir: {senimate_ir}\nuser: 네\n  node: greeting_introduction\n")
    done = run("interpreter.cli", "test", deep, long, good)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nested too deeply" in done.stdout and "a number is too long" in done.stdout
    assert "1 passed, 0 failed, 2 transcript(s) could not run" in done.stdout
    assert "internal error" not in done.stdout + done.stderr


# --- 8. closed or full standard streams -----------------------------------------------------


@pytest.mark.parametrize("args, redirect, expected", [
    (("interpreter.cli", "run", "{ir}", "--script", "{script}"), ">&-", "standard output is closed"),
    (("interpreter.cli", "run", "{ir}"), "<&-", "standard input is closed"),
    (("interpreter.cli", "run", "{ir}", "--script", "{script}"), "> /dev/full",
     "No space left on device"),
    (("compiler", "inspect", "{ir}"), "> /dev/full", "No space left on device"),
    (("compiler", "schema",), "> /dev/full", "No space left on device"),
    (("compiler", "graph", "{ir}"), "> /dev/full", "No space left on device"),
    (("compiler", "graph", "{ir}"), ">&-", "standard output is closed"),
    (("compiler", "check", str(SENIMATE), "--format", "json"), "> /dev/full",
     "No space left on device"),
], ids=lambda a: a if isinstance(a, str) else " ".join(a[:2]))
def test_a_closed_or_full_output_is_one_line_and_exit_2(tmp_path, senimate_ir, args, redirect,
                                                         expected):
    script = tmp_path / "turns.txt"
    script.write_text("네\n")
    args = [a.format(ir=senimate_ir, script=script) for a in args]
    line = one_line_error(run(*args, shell_suffix=redirect))
    assert expected in line, line


def test_a_closed_stderr_still_gives_the_exit_status(senimate_ir):
    done = run("compiler", "check", "/dev/zero", shell_suffix="2>&-")
    assert done.returncode == 2 and done.stderr == ""


# --- 10. Ctrl-C ---------------------------------------------------------------------------


@pytest.fixture
def ctrl_c_reaches_children():
    """A child started here gets Ctrl-C's default action: a shell starts a background job
    with Ctrl-C ignored, and a child inherits an ignored signal, not a handled one."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_in_mgi_run_exits_130_without_a_traceback(senimate_ir, ctrl_c_reaches_children):
    process = subprocess.Popen([sys.executable, "-m", "interpreter.cli", "run", str(senimate_ir)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        process.stdout.readline()  # the opening: the session is running
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 130 and "Traceback" not in err, err


@pytest.mark.parametrize("delay", [0.05, 0.1, 0.2, 0.4])
def test_ctrl_c_while_mgi_loads_exits_130_without_a_traceback(senimate_ir, delay,
                                                              ctrl_c_reaches_children):
    """Once Python has started (its own start-up is out of our reach), a Ctrl-C at any
    moment of loading ends with 130."""
    process = subprocess.Popen([sys.executable, "-m", "interpreter.cli", "run", str(senimate_ir)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    finally:
        process.kill()
    if "init_import_site" in err:  # the machine was so slow that Python had not started
        pytest.skip("the signal arrived during Python's own start-up")
    frames = [line for line in err.splitlines() if line.strip().startswith("File ")]
    if frames and all('File "<frozen ' in line for line in frames):  # runpy, before mgi's code
        pytest.skip("the signal arrived while Python's runpy looked for the module")
    assert process.returncode in (130, -signal.SIGINT), err
    assert "Traceback" not in err, err


# A Ctrl-C pressed the moment msgspec's extension starts to load (the process sends it itself,
# from an import hook), then the state of msgspec when the process ends.
_PRESSED_IN_MSGSPEC = """
import atexit, os, signal, sys
class Press:
    def find_spec(self, name, path=None, target=None):
        if name == "msgspec._core":
            os.kill(os.getpid(), signal.SIGINT)
sys.meta_path.insert(0, Press())
atexit.register(lambda: print("msgspec loaded" if "msgspec._core" in sys.modules else "not"))
sys.argv = ["mgi", "--version"]
from interpreter.cli import enter
enter("interpreter.cli.main")
"""


def test_ctrl_c_while_msgspec_loads_is_held_until_it_has_loaded(ctrl_c_reaches_children):
    """A KeyboardInterrupt raised inside msgspec's module initialisation can leave it broken
    (its first encoder crashed the process, SIGSEGV): the press waits for the import, then
    ends the run with 130, before the command runs."""
    done = subprocess.run([sys.executable, "-c", _PRESSED_IN_MSGSPEC], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stdout.strip() == "msgspec loaded", done.stdout + done.stderr
    assert "Traceback" not in done.stderr


class TerminalOutput:
    """What a program writes to a pseudo-terminal, read in the background (a full terminal
    buffer would otherwise block the writer)."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        self.text = ""
        self._reader = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        os.close(self.slave)  # the child holds its own copy
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            self.text += chunk.decode("utf-8", "replace")

    def wait_for(self, pattern: str, seconds: float) -> re.Match:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if found := re.search(pattern, self.text):
                return found
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not seen within {seconds} s: {self.text[-300:]!r}")


def test_ctrl_c_in_mgi_fuzz_exits_130_with_the_report_so_far(senimate_ir,
                                                             ctrl_c_reaches_children):
    """Ctrl-C at a terminal once the progress bar shows a finished conversation (polled, so
    a busy machine only makes the test wait longer)."""
    terminal = TerminalOutput()
    process = subprocess.Popen([sys.executable, "-m", "interpreter.cli", "fuzz", str(senimate_ir),
                                "--examples", "100000", "--seed", "1", "--format", "json"],
                               stdout=subprocess.PIPE, stderr=terminal.slave, text=True,
                               cwd=ROOT)
    terminal.start()
    try:
        terminal.wait_for(r"\] [1-9]\d*/100000 conversations", seconds=120)
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        out, _ = process.communicate(timeout=30)
        stopped_after = time.monotonic() - started
    finally:
        process.kill()
    assert process.returncode == 130, terminal.text[-500:]
    assert "Traceback" not in terminal.text
    import json

    report = json.loads(out)
    assert report["interrupted"] is True and report["conversations"] > 0
    assert stopped_after < 10
