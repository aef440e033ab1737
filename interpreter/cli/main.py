"""`mgi`: the command line of the interpreter (SPEC 7).

In: an IR file and turns, typed at a terminal or one per line from a script or a pipe
(`mgi run`), or transcript files (`mgi test`). Out: the conversation on stdout at an output
level (see `console`), or one JSON line per turn (`--json`); transcript reports.
After: exit 0 when the input ran (the conversation completed or the input ended); 2 for
usage and input problems (unreadable or foreign IR, unknown `--node`, a malformed,
binary or over-long line, a turn after completion); `mgi test` exits 1 when an expectation
failed, `mgi fuzz` (see `fuzz`) when a property was violated. Every failure is one line on
stderr, never a traceback.

Start-up is kept short on purpose (`tests/benchmarks/startup_bench.py`): importing this
module loads only argparse; the engine is imported when a command runs, and the rules NLU
(which compiles its tables) is built on the first user turn, after the opening is printed.
Only `mgi fuzz` imports hypothesis. This module never imports `compiler`, lark or networkx.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import IO, Any
from collections.abc import Iterator

from .. import MagoError
from .. import __version__, files
from . import streams
from .console import LEVELS
from ..service.command import add_serve_parser
from .plugins import (InputError, LazyRulesNLU, QuickParser, add_llm_options,
                      add_webhooks_option, llm_plugins, llm_settings, skill_registry)

MAX_LINE_BYTES = 64 * 1024  # a turn is a line of speech; anything longer is a mistake
HISTORY_FILE = "~/.mago_history"
HISTORY_LENGTH = 1000
QUIT = "/quit"
SESSION_ID = "cli"
TURN_KEYS = frozenset(("user", "nlu", "idle"))
MAX_IDLE_SECONDS = 10 * 365 * 86400  # a simulated pause (SPEC 8.5) of at most ten years





class LineError(MagoError):
    """One input line cannot be a turn; the caller adds where the line is."""


# --- commands -----------------------------------------------------------------------------


COMMANDS = ("run", "test", "fuzz", "report", "serve")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser (argparse, not click like `mgc`: click costs ~40 ms of start-up).
    `command` (one of `COMMANDS`): only that command's parser is built, which is all its
    arguments can reach (a start-up need not build the other four)."""
    from .report import add_event_options, add_report_parser, add_serve_event_options

    parser = QuickParser(prog="mgi", allow_abbrev=False,
                     description="Run compiled Mago dialogue graphs (IR files from `mgc compile`).")
    parser.add_argument("--version", action="version", version=f"mgi {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    builders = {
        "run": lambda: add_run_parser(commands, add_event_options),
        "test": lambda: add_test_parser(commands),
        "fuzz": lambda: add_fuzz_parser(commands),
        "report": lambda: add_report_parser(commands),
        "serve": lambda: add_serve_parser(commands, lambda serve: (
            add_llm_options(serve), add_limit_option(serve), add_serve_event_options(serve))),
    }
    for name in COMMANDS:
        if command is None or name == command:
            builders[name]()
    return parser


def add_run_parser(commands: Any, add_event_options: Any) -> None:
    """`mgi run`: a conversation at the terminal or from a script."""
    run = commands.add_parser("run", allow_abbrev=False, help="run a conversation",
                              description="Run the conversation of OUT.ir, at the terminal "
                                          "or one turn per line from a script or a pipe.")
    run.add_argument("ir_file", metavar="OUT.ir")
    run.add_argument("--bot-first", action=argparse.BooleanOptionalAction, default=None,
                     help="whether the bot opens (default: the scenario's graph.bot_first)")
    run.add_argument("--node", dest="focus", metavar="NODE_ID",
                     help="focus mode: start at NODE_ID and stay; show where routing would go")
    run.add_argument("--nlu", dest="nlu_name", choices=("rules", "scripted", "llm"),
                     default="rules", help="scripted: each --json line carries its NLU result; "
                                           "llm: a chat-completions server (default: rules)")
    run.add_argument("--nlg", dest="nlg_name", choices=("template", "llm"), default="template",
                     help="llm: a chat-completions server words the replies (default: template)")
    add_llm_options(run)
    run.add_argument("--output-level", dest="level", choices=LEVELS, default="chat",
                     help="how much to show besides the words (default: chat)")
    run.add_argument("--script", metavar="FILE|-",
                     help="read one turn per line from FILE (- for stdin)")
    run.add_argument("--json", dest="as_json", action="store_true",
                     help='JSON lines: {"user": ..., "nlu": {...}, "idle": SECONDS} in, one '
                          'object per turn out')
    run.add_argument("--now", metavar="ISO",
                     help="the engine's clock, e.g. 2026-12-01T10:00: \"today\" and relative "
                          "dates read it (default: the wall clock)")
    run.add_argument("--profile", metavar="FILE.json",
                     help="the session profile: a JSON object of the scenario's profile fields")
    add_event_options(run)
    add_limit_option(run)
    add_webhooks_option(run)
    run.set_defaults(handler=run_command)


def add_test_parser(commands: Any) -> None:
    """`mgi test`: conversation transcripts."""
    test = commands.add_parser("test", allow_abbrev=False, help="run conversation transcripts",
                               description="Run transcripts; report pass/fail per step.")
    test.add_argument("transcripts", nargs="+", metavar="TRANSCRIPT")
    test.add_argument("--ir-dir", default="build",
                      help="where `scenario: NAME` finds NAME.ir (default: build)")
    test.add_argument("--format", dest="fmt", choices=("human", "json"), default="human",
                      help="report for people or for machines (default: human)")
    add_limit_option(test)
    add_webhooks_option(test)
    test.set_defaults(handler=test_command)


def add_fuzz_parser(commands: Any) -> None:
    """`mgi fuzz`: generated conversations against a scenario, checked against properties."""
    fuzz = commands.add_parser(
        "fuzz", allow_abbrev=False, help="explore generated conversations, check properties",
        description="Explore generated conversations of OUT.ir and check the built-in "
                    "properties and the designer's; exit 1 with a replayable transcript per "
                    "violated property.")
    fuzz.add_argument("ir_file", metavar="OUT.ir")
    fuzz.add_argument("--examples", type=int, default=1000, metavar="N",
                      help="conversations to explore (default: 1000)")
    fuzz.add_argument("--max-turns", type=int, default=10, metavar="K",
                      help="turns a user asking to end may wait, and a node may hold them "
                           "(default: 10)")
    fuzz.add_argument("--seed", type=int, default=None, metavar="S",
                      help="seed of the exploration (default: random, printed in the report)")
    fuzz.add_argument("--properties", metavar="FILE", help="the designer's properties file")
    fuzz.add_argument("--format", dest="fmt", choices=("human", "json"), default="human",
                      help="report for people or for machines (default: human)")
    fuzz.add_argument("--transcripts", metavar="DIR",
                      help="write a counterexample transcript per violated property into DIR")
    fuzz.add_argument("--nlu", dest="nlu_name", choices=("rules", "generated"),
                      default="generated", help="generated: draw NLU results directly; "
                                                "rules: text through the rules NLU "
                                                "(default: generated)")
    add_limit_option(fuzz)
    add_webhooks_option(fuzz)
    fuzz.set_defaults(handler=fuzz_command)


def add_limit_option(command: Any) -> None:
    """`--max-input-mb`: the size cap of every whole file the command reads (`files`)."""
    command.add_argument(files.LIMIT_FLAG, dest="max_input_mb", metavar="MIB",
                         help=f"refuse input files larger than this (default: "
                              f"${files.ENV_LIMIT} or {files.DEFAULT_LIMIT_MB})")


def apply_limit(args: argparse.Namespace) -> None:
    try:
        files.set_limit(args.max_input_mb)
    except ValueError as error:
        raise InputError(str(error)) from None


def run_command(args: argparse.Namespace) -> int:
    """`mgi run`: the conversation of OUT.ir, interactively or from a script."""
    if args.nlu_name == "scripted" and not args.as_json:
        raise InputError("--nlu scripted takes each turn's NLU result from the input; use it with "
                         "--json lines like {\"user\": \"네\", \"nlu\": {\"dialogue_act\": \"affirm\"}}")
    llm = llm_settings(args)
    interactive = args.script is None and streams.stdin_open() and sys.stdin.isatty()
    profile = read_profile(args.profile) if args.profile else None
    runtime = load_runtime(args.ir_file)
    stream = None if interactive else open_script(args.script)
    try:
        conversation = Conversation(runtime, args.nlu_name, args.level, args.as_json,
                                    echo_user=not interactive, nlg_name=args.nlg_name, llm=llm,
                                    webhooks=args.webhooks, now=args.now)
        from .report import recorder

        conversation.recorder = recorder(args, runtime, conversation.clock)
        if interactive:
            note(f"(type {QUIT} or press Ctrl-D to end)")
        conversation.open(args.bot_first, args.focus, profile)
        if stream is None:
            run_interactive(conversation)
        else:
            run_script(conversation, stream)
    finally:
        if stream is not None and stream is not sys.stdin.buffer:
            stream.close()
    return 0


def read_profile(path: str) -> Any:
    """The JSON value of a `--profile` file (checked against the scenario at the start)."""
    import json

    try:
        return files.decode_json(files.read_input(path).decode("utf-8"))[0]
    except files.InputFileError as error:
        raise InputError(f"cannot read profile {path}: {error.reason}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, files.JSONLimitError) as error:
        raise InputError(f"profile {path} is not a JSON object ({error}); write "
                         "{\"field\": value, ...}") from None


def test_command(args: argparse.Namespace) -> int:
    """`mgi test`: 0 all passed, 1 a step failed, 2 a transcript could not run."""
    from ..transcripts.run import exit_status, render_human, render_json, run_files

    results = run_files(list(args.transcripts), args.ir_dir, args.webhooks)
    emit([render_json(results) if args.fmt == "json" else render_human(results)])
    return exit_status(results)


def fuzz_command(args: argparse.Namespace) -> int:
    """`mgi fuzz`: 0 every property held, 1 one was violated, 2 bad usage or input."""
    import random

    from ..fuzz.runner import FuzzError, FuzzOptions, check_limits, run_fuzz
    from ..fuzz.report import Progress, render_human, render_json

    seed = args.seed if args.seed is not None else random.randrange(2 ** 32)
    options = FuzzOptions(args.examples, args.max_turns, seed, args.nlu_name)
    try:
        check_limits(options)  # before loading: a bad option costs no IR check
    except FuzzError as error:
        raise InputError(str(error)) from None
    runtime = load_runtime(args.ir_file, verify=True)  # the fuzzer reads every node anyway
    try:
        report = run_fuzz(runtime, args.ir_file, options, args.properties, args.transcripts,
                          skill_registry(runtime, note, args.webhooks, stand_ins=True),
                          Progress(args.examples))
    except FuzzError as error:
        raise InputError(str(error)) from None
    emit([render_json(report) if args.fmt == "json" else render_human(report)])
    return report.exit_status()


def note(message: str) -> None:
    """A line for the person at the terminal, on stderr (stdout is the conversation)."""
    streams.write_err(message + "\n")


# --- the session --------------------------------------------------------------------------


def load_runtime(path: str, verify: bool = False) -> Any:
    """The loaded IR, or `InputError` with the loader's one line (prefixed by the path).
    `verify`: check every node now (nodes are otherwise checked on first use)."""
    from ..loader import IRError, load_program

    try:
        return load_program(path, verify)
    except IRError as error:
        message = str(error)
        raise InputError(message if path in message else f"{path}: {message}") from None


def fixed(now: str, runtime: Any):
    """The clock of `--now ISO` (SPEC 17.18), or `InputError` with one line."""
    from ..understanding.dates import fixed_clock

    try:
        return fixed_clock(now, runtime.program.timezone)
    except ValueError:
        raise InputError(f"--now {now!r} is not an ISO date or date-time; write e.g. "
                         "2026-12-01 or 2026-12-01T10:00") from None


class Conversation:
    """One session of `mgi run`: runs turns on the engine and prints them."""

    def __init__(self, runtime: Any, nlu_name: str, level: str, as_json: bool, echo_user: bool,
                 nlg_name: str = "template", llm: Any = None, webhooks: str = "off",
                 now: str | None = None):
        from ..engine import Engine, ShiftedClock
        from ..understanding.nlu import ScriptedNLU

        self.runtime = runtime
        self.scripted = nlu_name == "scripted"
        nlu = ScriptedNLU() if self.scripted else LazyRulesNLU(runtime.program)
        nlu, nlg, self.journal = llm_plugins(llm, runtime, nlu_name, nlg_name, nlu)
        self.clock = ShiftedClock(fixed(now, runtime) if now else time.time)  # SPEC 8.5, 17.18
        self.engine = Engine(runtime, nlu, nlg, skills=skill_registry(runtime, note, webhooks),
                             clock=self.clock)
        self.llm_warned = False
        self.level = level
        self.as_json = as_json
        self.echo_user = echo_user
        self.complete_reason: str | None = None
        self.recorder: Any = None  # `--events FILE` (cli.report.Recorder)

    @property
    def complete(self) -> bool:
        return self.complete_reason is not None

    def open(self, bot_first: bool | None, focus: str | None, profile: Any = None) -> None:
        """Start the session and print the opening (if the bot speaks first)."""
        from .console import start_lines
        from ..engine import EngineError

        try:
            result = self.engine.start(SESSION_ID, bot_first, focus, profile)
        except EngineError as error:  # an unknown --node, an invalid profile
            raise InputError(str(error)) from None
        if self.recorder is not None:
            self.recorder.started(result)
        if not self.as_json and self.level != "chat":
            speaks = result.response is not None
            emit(start_lines(self.runtime, result.node, speaks, result.focus))
        if result.response is not None:
            self.show(result)

    def turn(self, text: str, nlu: dict | None, idle: float = 0) -> None:
        """One user turn, after a simulated pause of `idle` seconds; `EngineError` (e.g. a
        turn after completion) propagates."""
        self.clock.pause(idle)
        result = self.engine.turn(SESSION_ID, text, nlu)
        if self.recorder is not None:
            self.recorder.turn(result)
        self.show(result)
        if result.complete and not result.focus:  # focus mode reports completion, never ends
            self.complete_reason = result.reason

    def show(self, result: Any) -> None:
        from .console import render_turn, to_json

        llm = self.journal.drain() if self.journal is not None else []
        self.warn_llm_fallback(result, llm)
        if self.as_json:
            emit([to_json(result.json_line())])
            return
        state = self.engine.session(SESSION_ID) if self.level == "debug" else None
        emit(render_turn(result, self.runtime, self.level, self.echo_user, state, llm))

    def warn_llm_fallback(self, result: Any, llm: list) -> None:
        """Once per run, on stderr, where the output level does not show it per turn."""
        from .console import fallback_warning, rank

        if self.llm_warned or (rank(self.level) >= 2 and not self.as_json):
            return
        warning = fallback_warning(result.nlu_source, llm)
        if warning:
            note(f"mgi: warning: {warning}")
            self.llm_warned = True


def emit(lines: list[str]) -> None:
    """Print lines now: a reader on a pipe sees each turn as it happens."""
    if lines:
        streams.write_out("\n".join(lines) + "\n")


# --- input lines ----------------------------------------------------------------------------


def parse_turn(text: str, as_json: bool,
               scripted: bool) -> tuple[str, dict | None, float]:
    """(user text, NLU override or None, simulated pause in seconds) from one input line,
    or `LineError`."""
    if not as_json or not text.strip():  # a blank line is a silent turn in both modes
        return text, None, 0
    import json

    try:
        value, end = files.decode_json(text)
    except json.JSONDecodeError as error:
        raise LineError(f"not valid JSON ({error.msg} at column {error.colno}); "
                        "expected {\"user\": \"text\", \"nlu\": {...}}") from None
    except files.JSONLimitError as error:
        raise LineError(f"JSON that cannot be read: {error}; a turn is "
                        "{\"user\": \"text\", \"nlu\": {...}}") from None
    if text[end:].strip():
        raise LineError(f"text after the JSON object at column {end + 1}; one turn a line")
    if not isinstance(value, dict):
        raise LineError(f"not a JSON object (got {type(value).__name__}); "
                        "expected {\"user\": \"text\", \"nlu\": {...}}")
    unknown = sorted(set(value) - TURN_KEYS)
    if unknown:
        raise LineError(f"unknown key {unknown[0]!r}; a turn has \"user\" and optionally "
                        "\"nlu\" and \"idle\"")
    user, nlu = value.get("user"), value.get("nlu")
    if not isinstance(user, str):
        raise LineError("\"user\" must be a string (\"\" for a silent turn)")
    return user, check_nlu(nlu, user, scripted), check_idle(value.get("idle", 0))


def check_idle(idle: Any) -> float:
    """A simulated pause: seconds, a number from 0 to ten years (SPEC 8.5)."""
    if isinstance(idle, bool) or not isinstance(idle, (int, float)) or not (
            0 <= idle <= MAX_IDLE_SECONDS):
        raise LineError(f"\"idle\" must be a number of seconds from 0 to {MAX_IDLE_SECONDS}")
    return float(idle)


def check_nlu(nlu: Any, user: str, scripted: bool) -> dict | None:
    """The override as given, checked now so the error can name its line."""
    from ..understanding.nlu import nlu_result

    if nlu is None:
        if scripted and user.strip():
            raise LineError("--nlu scripted needs an \"nlu\" object on every line with text")
        return None
    try:
        nlu_result(nlu, user)
    except ValueError as error:
        raise LineError(str(error)) from None
    return nlu


def read_lines(stream: IO[bytes]) -> Iterator[tuple[int, str]]:
    """(line number, text) per line, decoded; `InputError` on binary or over-long lines."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise InputError(f"line {number}: longer than {MAX_LINE_BYTES} bytes; "
                             "a turn is one line of text")
        yield number, decode_line(raw, number)


def decode_line(raw: bytes, number: int) -> str:
    """UTF-8 text without its line ending (and without a byte-order mark on line 1)."""
    if b"\x00" in raw:
        raise InputError(f"line {number}: binary data (NUL byte); the input must be UTF-8 text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"line {number}: not UTF-8 text (invalid byte at {error.start + 1}; "
                         "binary input?); the input must be UTF-8 text") from None
    if number == 1:
        text = text.removeprefix("\ufeff")
    return text.rstrip("\r\n")


def open_script(path: str | None) -> IO[bytes]:
    """The script's bytes: stdin for None (a pipe) or `-`, else the file."""
    if path is None or path == "-":
        if not streams.stdin_open():
            raise InputError("standard input is closed; give the turns with --script FILE, "
                             "or pipe them in")
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as error:
        raise InputError(f"cannot read script {path}: {error.strerror or error}") from None


def run_script(conversation: Conversation, stream: IO[bytes]) -> None:
    """Every line a turn until the input ends, `/quit`, or the session completes.

    Blank lines after completion are ignored (a file's trailing newlines); any other line
    after completion is a turn the session cannot take: exit 2 naming it.
    """
    from ..engine import EngineError

    for number, text in read_lines(stream):
        if conversation.complete:
            if not text.strip():
                continue
            raise InputError(f"line {number}: the session is already complete "
                             f"({conversation.complete_reason}); this line and any after it "
                             "were not run")
        if text.strip() == QUIT:
            return
        try:
            conversation.turn(*parse_turn(text, conversation.as_json, conversation.scripted))
        except (LineError, EngineError) as error:
            raise InputError(f"line {number}: {error}") from None


# --- the terminal ---------------------------------------------------------------------------


def run_interactive(conversation: Conversation) -> None:
    """Prompt for turns with line editing and history until `/quit`, EOF or completion."""
    history = open_history()
    prompt = "" if conversation.as_json else "You  > "
    try:
        while not conversation.complete:
            try:
                text = input(prompt)
            except EOFError:
                note("")
                return
            if text.strip() == QUIT:
                return
            interactive_turn(conversation, text)
        if conversation.level == "chat" and not conversation.as_json:
            note(f"(the conversation is complete: {conversation.complete_reason})")
    finally:
        save_history(history)


def interactive_turn(conversation: Conversation, text: str) -> None:
    """A typed turn; a bad line is reported and the user types again."""
    from ..engine import EngineError

    if len(text.encode("utf-8", "replace")) > MAX_LINE_BYTES:
        note(f"mgi: longer than {MAX_LINE_BYTES} bytes; a turn is one line of text")
        return
    try:
        conversation.turn(*parse_turn(text, conversation.as_json, conversation.scripted))
    except (LineError, EngineError) as error:
        note(f"mgi: {error}")


def open_history() -> Any:
    """The `readline` module with the history loaded, or None; failures are silent."""
    try:
        import readline
    except ImportError:  # a Python built without readline: plain input() still works
        return None
    readline.set_history_length(HISTORY_LENGTH)
    try:
        readline.read_history_file(os.path.expanduser(HISTORY_FILE))
    except (OSError, ValueError):  # no history yet, or unreadable: start afresh
        pass
    return readline


def save_history(readline: Any) -> None:
    if readline is None:
        return
    try:
        readline.write_history_file(os.path.expanduser(HISTORY_FILE))
    except (OSError, ValueError):  # a read-only home must not spoil the session's end
        pass


# --- entry point ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    """Entry point: usage errors exit 2 (argparse), ours are one line, never a traceback."""
    try:
        streams.hold_closed_descriptors()
        if hasattr(sys.stdout, "reconfigure"):  # a narrow terminal encoding must not crash
            sys.stdout.reconfigure(errors="backslashreplace")
        words = sys.argv[1:] if argv is None else argv
        args = build_parser(words[0] if words and words[0] in COMMANDS else None).parse_args(words)
        apply_limit(args)
        status = args.handler(args)
    except InputError as error:
        note(f"mgi: {error}")
        sys.exit(2)
    except KeyboardInterrupt:
        streams.silence_stdout()
        note("")
        sys.exit(130)
    except BrokenPipeError:  # the reader left (`mgi run ... | head`): stop quietly
        streams.silence_stdout()
        sys.exit(0)
    except streams.OutputError as error:
        streams.silence_stdout()
        note(f"mgi: cannot write the output: {error}")
        sys.exit(2)
    except Exception as error:  # noqa: BLE001 - the last line of defence: never a traceback
        note(f"mgi: internal error: {type(error).__name__}: {error} (please report this)")
        sys.exit(2)
    sys.exit(status)


if __name__ == "__main__":
    main()
