"""Conversation transcripts: the parser and the runner behind `mgi test`.

In: transcript files (format below) and the directory of compiled IR files.
Out: `Transcript`s (`parse_transcript`, `load_transcript`); per transcript a
`TranscriptResult` with one `StepResult` per step (`run_transcript`, `run_files`); a report
for people or for machines (`render_human`, `render_json`) and the exit status.
After: every problem in a file is a `TranscriptError` naming its line; a failed expectation
never stops the conversation (the later steps still run), a turn that raises (e.g. after
completion) stops that transcript; one transcript never affects another.

The format (one key per line; `#` after whitespace starts a comment, as in YAML):

    # a comment; blank lines are ignored
    scenario: senimate        # the IR is <ir-dir>/senimate.ir
    ir: ../../build/x.ir      # or: a path relative to this file (exactly one of the two)
    nlu: rules                # rules (default) or scripted
    bot_first: true           # default: the scenario's graph.bot_first
    focus: health_check       # focus mode on that node
    profile: {"email": "me@example.com"}   # the session profile (SPEC 8.1; JSON object)

    bot:                      # the opening (bot-first only, first step); expectations follow
      node: greeting_introduction
      says: 안녕하세요
    user: 응 좋아요           # a turn; `user:` alone is a silent turn
      nlu: {"dialogue_act": "affirm"}   # NLU override for this turn (JSON object)
      idle: 1900                        # seconds of silence before this turn (SPEC 8.5)
      node: greeting_introduction       # where the turn was handled
      next: daily_life_check            # where the session is now; `-` = none (complete)
      not-next: meal_check              # ... and not this node (`-`: not complete; repeatable)
      reason: default_next              # exact reason code
      complete: false
      slots: {"meal_status": "skipped"} # subset check; null = unfilled
      passed: check_input send          # the nodes passed without waiting, in order (`-`: none)
      says: 요즘                         # the response contains this (repeatable)
      not-says: 다음에 또 뵐게요          # the response does not contain this (repeatable)

Header keys come before the first step; expectation lines are indented. With `nlu: scripted`
every user turn with text needs an `nlu:` line (the scripted NLU has nothing else to go on).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from ..files import InputFileError, JSONLimitError, decode_json, read_input

HEADER_KEYS = ("scenario", "ir", "nlu", "bot_first", "focus", "profile")
STEP_KEYS = ("bot", "user")
EXPECT_KEYS = ("nlu", "idle", "node", "next", "not-next", "reason", "complete", "slots",
               "passed", "says", "not-says")
INPUT_KEYS = ("nlu", "idle")  # what a user step gives the turn, beside its words
REPEATABLE = frozenset(("says", "not-says", "not-next"))
NLU_NAMES = ("rules", "scripted")
NONE_MARK = "-"
_COMMENT = re.compile(r"(^|\s)#")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)\s*:(.*)$")


class TranscriptError(Exception):
    """A malformed transcript (or one that cannot run): `path:line: message`."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
        self.path, self.line, self.message = path, line, message


class Expectation(NamedTuple):
    """One checked fact of a step: `key` as written, the parsed `value`, its line."""

    key: str
    value: Any
    line: int


class Step(NamedTuple):
    """A `bot:` opening or a `user:` turn with its NLU override and expectations."""

    kind: str  # "bot" or "user"
    text: str | None  # the user's words ("" = silent turn); None for the opening
    line: int
    nlu: dict | None = None
    expectations: tuple[Expectation, ...] = ()
    idle: float = 0  # seconds of silence simulated before the turn (SPEC 8.5)

    def label(self) -> str:
        if self.kind == "bot":
            return "bot"
        return f"user: {self.text}" if self.text.strip() else "user: (silence)"


class Transcript(NamedTuple):
    """A parsed transcript; `ir_path` is resolved by `resolve_ir`."""

    path: str
    scenario: str | None
    ir: str | None
    nlu: str
    bot_first: bool | None
    focus: str | None
    steps: tuple[Step, ...]
    lines: dict[str, int]  # header key -> its line (for errors found when running)
    profile: dict | None = None


# --- parsing ------------------------------------------------------------------------------


def load_transcript(path: str) -> Transcript:
    """Read and parse a transcript file; `TranscriptError` if unreadable or malformed."""
    try:
        data = read_input(path)
    except InputFileError as error:
        raise TranscriptError(path, 0, f"cannot read: {error.reason}") from None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise TranscriptError(path, line, "not UTF-8 text") from None
    return parse_transcript(text, path)


def parse_transcript(text: str, path: str = "<transcript>") -> Transcript:
    """Parse transcript text; every error names its line."""
    parser = _Parser(path)
    # split on newlines only: str.splitlines() also breaks at \x0c, \x85, \u2028 ..., which
    # would put every later line number out of step with the editor's
    for number, raw in enumerate(text.split("\n"), start=1):
        parser.feed(number, raw.rstrip("\r"))
    return parser.finish()


class _Parser:
    """Line by line: the header, then steps with their indented expectations."""

    def __init__(self, path: str):
        self.path = path
        self.header: dict[str, Any] = {}
        self.lines: dict[str, int] = {}
        self.steps: list[Step] = []
        self.current: dict | None = None  # the open step: kind, text, line, nlu, expectations

    def error(self, line: int, message: str) -> TranscriptError:
        return TranscriptError(self.path, line, message)

    def feed(self, number: int, raw: str) -> None:
        if "\x00" in raw:
            raise self.error(number, "binary data (NUL byte); a transcript is text")
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            return
        match = _KEY.match(stripped)
        if match is None:
            raise self.error(number, f"expected `key: value`, got {clip(stripped)!r}")
        key, value = match.group(1), match.group(2)
        if raw[0].isspace():
            self.expectation(number, key, value)
        elif key in STEP_KEYS:
            self.step(number, key, value)
        else:
            self.header_line(number, key, value)

    def header_line(self, number: int, key: str, value: str) -> None:
        if key not in HEADER_KEYS:
            raise self.error(number, _unknown("header key", key, HEADER_KEYS + STEP_KEYS))
        if self.steps or self.current is not None:
            raise self.error(number, f"header key `{key}` must come before the first "
                                     "`bot:` or `user:` step")
        if key in self.header:
            raise self.error(number, f"`{key}` given twice (first on line {self.lines[key]})")
        raw = value if key == "profile" else _text(value)  # a `#` in JSON text is kept
        self.header[key] = _header_value(key, raw, lambda m: self.error(number, m))
        self.lines[key] = number

    def step(self, number: int, kind: str, value: str) -> None:
        self.close()
        text = _text(value)
        if kind == "bot":
            if text:
                raise self.error(number, "`bot:` takes no text; its expectations follow, indented")
            if self.steps:
                raise self.error(number, "`bot:` (the opening) can only be the first step")
            text = None
        self.current = {"kind": kind, "text": text, "line": number, "nlu": None, "idle": None,
                        "expect": []}

    def expectation(self, number: int, key: str, value: str) -> None:
        step = self.current
        if step is None:
            raise self.error(number, "indented line outside a step; expectations follow a "
                                     "`bot:` or `user:` line")
        if key in STEP_KEYS or key in HEADER_KEYS and key != "nlu":
            raise self.error(number, f"`{key}:` must start at the beginning of the line "
                                     "(only expectations are indented)")
        if key not in EXPECT_KEYS:
            raise self.error(number, _unknown("expectation", key, EXPECT_KEYS))
        if key not in REPEATABLE and any(e.key == key for e in step["expect"]) or (
                key in INPUT_KEYS and step[key] is not None):
            raise self.error(number, f"`{key}` given twice in this step")
        parsed = _expect_value(key, value, lambda m: self.error(number, m))
        if key in INPUT_KEYS and step["kind"] == "bot":
            what = "NLU" if key == "nlu" else "pause"
            raise self.error(number, f"the opening has no {what}; `{key}:` belongs to a user "
                                     "turn")
        if key == "nlu":
            _check_override(parsed, step["text"], lambda m: self.error(number, m))
            step["nlu"] = parsed
        elif key == "idle":
            step["idle"] = parsed
        else:
            step["expect"].append(Expectation(key, parsed, number))

    def close(self) -> None:
        step, self.current = self.current, None
        if step is None:
            return
        if self.header.get("nlu") == "scripted" and step["kind"] == "user" and \
                step["text"].strip() and step["nlu"] is None:
            raise self.error(step["line"], "with `nlu: scripted` every user turn with text "
                                           "needs an `nlu:` line")
        self.steps.append(Step(step["kind"], step["text"], step["line"], step["nlu"],
                               tuple(step["expect"]), step["idle"] or 0))

    def finish(self) -> Transcript:
        self.close()
        header = self.header
        if ("scenario" in header) == ("ir" in header):
            both = "scenario" in header
            line = self.lines["ir"] if both else (self.steps[0].line if self.steps else 0)
            raise self.error(line, "give exactly one of `scenario: NAME` or `ir: PATH`")
        if not self.steps:
            raise self.error(0, "no steps; add `user:` lines (and `bot:` for the opening)")
        return Transcript(self.path, header.get("scenario"), header.get("ir"),
                          header.get("nlu", "rules"), header.get("bot_first"),
                          header.get("focus"), tuple(self.steps), dict(self.lines),
                          header.get("profile"))


def _text(value: str) -> str:
    """A value without its trailing comment and surrounding spaces."""
    match = _COMMENT.search(value)
    return (value[:match.start()] if match else value).strip()


def _header_value(key: str, value: str, fail) -> Any:
    if key == "bot_first":
        return _boolean(value, fail)
    if key == "profile":
        return _json_object(key, value, fail)
    if not value:
        raise fail(f"`{key}:` needs a value")
    if key == "nlu" and value not in NLU_NAMES:
        raise fail(f"`nlu:` is `rules` or `scripted`, not {value!r}")
    return value


def _expect_value(key: str, value: str, fail) -> Any:
    if key in ("nlu", "slots"):
        return _json_object(key, value, fail)
    text = _text(value)
    if key == "complete":
        return _boolean(text, fail)
    if not text:
        raise fail(f"`{key}:` needs a value")
    if key == "idle":
        return _seconds(text, fail)
    if key == "passed":
        return () if text == NONE_MARK else tuple(text.replace(",", " ").split())
    if key in ("next", "not-next") and text == NONE_MARK:
        return None
    return text


def _seconds(text: str, fail) -> float:
    """`idle:` seconds, a number from 0 (SPEC 8.5)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise fail(f"`idle:` is a number of seconds (0 or more), not {text!r}")
    return seconds


def _boolean(value: str, fail) -> bool:
    if value not in ("true", "false"):
        raise fail(f"expected `true` or `false`, got {value!r}")
    return value == "true"


def _json_object(key: str, value: str, fail) -> dict:
    """A JSON object, optionally followed by a comment (a `#` inside strings is kept)."""
    text = value.strip()
    try:
        parsed, end = decode_json(text)
    except json.JSONDecodeError as error:
        raise fail(f"`{key}:` is not valid JSON ({error.msg} at column {error.colno})") from None
    except JSONLimitError as error:
        raise fail(f"`{key}:` is JSON that cannot be read: {error}") from None
    rest = text[end:].strip()
    if rest and not rest.startswith("#"):
        raise fail(f"`{key}:` has text after its JSON object: {clip(rest)!r}")
    if not isinstance(parsed, dict):
        raise fail(f"`{key}:` must be a JSON object, got {type(parsed).__name__}")
    return parsed


def _check_override(nlu: dict, text: str, fail) -> None:
    from ..understanding.nlu import nlu_result

    try:
        nlu_result(nlu, text)
    except ValueError as error:
        raise fail(f"`nlu:` {error}") from None


def _unknown(what: str, key: str, known: tuple[str, ...]) -> str:
    import difflib

    close = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean `{close[0]}`?" if close else f" (known: {', '.join(known)})"
    return f"unknown {what} `{key}`{hint}"


def clip(text: str, size: int = 40) -> str:
    """`text`, cut to `size` characters with `…` when longer."""
    return text if len(text) <= size else text[:size] + "…"


# --- running ------------------------------------------------------------------------------


class Failure(NamedTuple):
    """A failed expectation (or a turn that raised), at its line."""

    line: int
    key: str
    message: str


class StepResult(NamedTuple):
    """A step as it ran: its failures (none = passed) and the turn's JSON line."""

    index: int  # 1-based
    step: Step
    failures: tuple[Failure, ...]
    turn: dict | None  # TurnResult.json_line(); None if the turn raised

    @property
    def passed(self) -> bool:
        return not self.failures


class TranscriptResult(NamedTuple):
    """A transcript's run: its steps, steps not run after an error, or why it could not run."""

    path: str
    steps: tuple[StepResult, ...] = ()
    not_run: int = 0
    error: TranscriptError | None = None  # malformed, or its IR cannot be loaded

    @property
    def passed(self) -> bool:
        return self.error is None and not self.not_run and all(s.passed for s in self.steps)


def resolve_ir(transcript: Transcript, ir_dir: str | os.PathLike) -> Path:
    """`scenario: NAME` -> `<ir_dir>/NAME.ir`; `ir: PATH` is relative to the transcript."""
    if transcript.ir is not None:
        return Path(transcript.path).parent / transcript.ir
    return Path(ir_dir) / f"{transcript.scenario}.ir"


class RuntimeCache:
    """Loaded IR files and their rules NLUs, shared by the transcripts of one run."""

    def __init__(self) -> None:
        self._runtimes: dict[str, Any] = {}
        self._nlus: dict[int, Any] = {}
        self._skills = None

    def skills(self) -> Any:
        """One skill registry for the run (finding plug-ins scans the installed packages)."""
        if self._skills is None:
            from ..skills.registry import SkillRegistry

            self._skills = SkillRegistry.default()
        return self._skills

    def runtime(self, path: Path) -> Any:
        from ..loader import load_program

        key = os.path.abspath(path)
        if key not in self._runtimes:
            self._runtimes[key] = load_program(path)
        return self._runtimes[key]

    def nlu(self, runtime: Any, name: str) -> Any:
        from ..understanding.nlu import ScriptedNLU

        if name == "scripted":
            return ScriptedNLU()
        if id(runtime) not in self._nlus:
            from ..understanding.rules import RulesNLU

            self._nlus[id(runtime)] = RulesNLU(runtime.program)
        return self._nlus[id(runtime)]


def run_files(paths: list[str], ir_dir: str | os.PathLike = "build") -> list[TranscriptResult]:
    """Every transcript in order; a broken one is reported and the others still run."""
    cache = RuntimeCache()
    results = []
    for path in paths:
        try:
            transcript = load_transcript(path)
            runtime = _load_ir(transcript, ir_dir, cache)
        except TranscriptError as error:
            results.append(TranscriptResult(path, error=error))
            continue
        try:
            results.append(run_transcript(transcript, runtime,
                                          cache.nlu(runtime, transcript.nlu), cache.skills()))
        except Exception as error:  # noqa: BLE001 - a bug in one must not hide the others
            results.append(TranscriptResult(path, error=TranscriptError(
                path, 0, f"internal error: {type(error).__name__}: {error} (please report this)")))
    return results


def _load_ir(transcript: Transcript, ir_dir: str | os.PathLike, cache: RuntimeCache) -> Any:
    from ..loader import IRError

    path = resolve_ir(transcript, ir_dir)
    line = transcript.lines.get("ir" if transcript.ir is not None else "scenario", 0)
    try:
        return cache.runtime(path)
    except IRError as error:
        hint = "" if path.exists() or transcript.ir else \
            " (compile it with `mgc compile`, `make build`, or pass --ir-dir)"
        message = str(error) if str(path) in str(error) else f"{path}: {error}"
        raise TranscriptError(transcript.path, line, message + hint) from None


def run_transcript(transcript: Transcript, runtime: Any, nlu: Any = None,
                   skills: Any = None) -> TranscriptResult:
    """Play the transcript on a fresh session; check each step's expectations.

    `nlu` defaults to the transcript's (`rules` or `scripted`), `skills` to the default
    registry; pass them to share them between transcripts.
    """
    from ..engine import Engine, EngineError, InvalidProfile, ShiftedClock

    if nlu is None:
        nlu = RuntimeCache().nlu(runtime, transcript.nlu)
    clock = ShiftedClock()
    engine = Engine(runtime, nlu, skills=skills, clock=clock)
    try:
        opening = engine.start("transcript", transcript.bot_first, transcript.focus,
                               transcript.profile)
    except EngineError as error:  # an unknown focus node, an invalid profile
        key = "profile" if isinstance(error, InvalidProfile) else "focus"
        return TranscriptResult(transcript.path, error=TranscriptError(
            transcript.path, transcript.lines.get(key, 0), str(error)))
    results: list[StepResult] = []
    for index, step in enumerate(transcript.steps, start=1):
        if step.kind == "bot":
            results.append(_check_opening(index, step, opening))
            continue
        clock.pause(step.idle)
        try:
            result = engine.turn("transcript", step.text, step.nlu)
        except EngineError as error:
            failure = Failure(step.line, "turn", f"the turn failed: {error}")
            results.append(StepResult(index, step, (failure,), None))
            return TranscriptResult(transcript.path, tuple(results),
                                    len(transcript.steps) - index)
        results.append(StepResult(index, step, check_step(step, result), result.json_line()))
    return TranscriptResult(transcript.path, tuple(results))


def _check_opening(index: int, step: Step, opening: Any) -> StepResult:
    if opening.response is None:
        failure = Failure(step.line, "bot", "no opening: bot-first is off for this session "
                                            "(set `bot_first: true` or remove the `bot:` step)")
        return StepResult(index, step, (failure,), None)
    return StepResult(index, step, check_step(step, opening), opening.json_line())


def check_step(step: Step, result: Any) -> tuple[Failure, ...]:
    """The expectations of a step that `result` (a `TurnResult`) does not meet."""
    failures = []
    for expectation in step.expectations:
        message = _mismatch(expectation, result)
        if message is not None:
            failures.append(Failure(expectation.line, expectation.key, message))
    return tuple(failures)


def _mismatch(expectation: Expectation, result: Any) -> str | None:
    """Why `result` fails the expectation, or None; one place for every key's rule."""
    key, want = expectation.key, expectation.value
    context = f"(node {result.node}, reason {result.reason})"
    if key in ("node", "next", "reason", "complete"):
        got = {"node": result.node, "next": result.next_node, "reason": result.reason,
               "complete": result.complete}[key]
        if got == want:
            return None
        where = f"(reason {result.reason})" if key != "reason" else f"(node {result.node})"
        return f"expected {key}={_show(want)}, got {_show(got)} {where}"
    if key == "passed":
        got = tuple(entry["node"] for entry in result.passed)
        if got == want:
            return None
        return (f"expected passed={' '.join(want) or NONE_MARK}, got "
                f"{' '.join(got) or NONE_MARK} {context}")
    if key == "not-next":
        if result.next_node != want:
            return None
        return f"expected next not {_show(want)}, got {_show(result.next_node)} {context}"
    if key == "slots":
        wrong = [(name, value, result.slots.get(name)) for name, value in want.items()
                 if not same_value(result.slots.get(name), value)]
        if not wrong:
            return None
        return "; ".join(f"expected slots.{name}={_json(value)}, got {_json(got)}"
                         for name, value, got in wrong) + f" {context}"
    response = result.response or ""
    if key == "says" and want not in response:
        return f"expected the response to say {want!r}, got {response!r} {context}"
    if key == "not-says" and want in response:
        return f"expected the response not to say {want!r}, got {response!r} {context}"
    return None


def same_value(got: Any, want: Any) -> bool:
    """JSON equality: `true` is not `1`, `1` is `1.0`, and an absent slot is null."""
    if isinstance(got, bool) or isinstance(want, bool):
        return isinstance(got, bool) and isinstance(want, bool) and got == want
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(same_value(a, b) for a, b in zip(got, want))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(same_value(got[k], want[k]) for k in got)
    return got == want


def _show(value: Any) -> str:
    if value is None:
        return NONE_MARK
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


# --- reporting ----------------------------------------------------------------------------


def counts(results: list[TranscriptResult]) -> dict[str, int]:
    """Steps passed, failed and not run; transcripts that could not run."""
    steps = [s for r in results for s in r.steps]
    return {"passed": sum(s.passed for s in steps), "failed": sum(not s.passed for s in steps),
            "not_run": sum(r.not_run for r in results),
            "errors": sum(r.error is not None for r in results)}


def exit_status(results: list[TranscriptResult]) -> int:
    """2 if a transcript could not run, else 1 if a step failed, else 0."""
    tally = counts(results)
    if tally["errors"]:
        return 2
    return 1 if tally["failed"] or tally["not_run"] else 0


def render_human(results: list[TranscriptResult]) -> str:
    """Per transcript its steps (`✓`/`✗`, failures with path:line), then `N passed, M failed`."""
    lines = []
    for result in results:
        lines.append(result.path)
        if result.error is not None:
            lines.append(f"  ✗ error: {result.error}")
            continue
        for step in result.steps:
            mark = "✓" if step.passed else "✗"
            lines.append(f"  {mark} step {step.index} ({clip(step.step.label(), 60)})")
            lines += [f"      {result.path}:{f.line}: {f.message}" for f in step.failures]
        if result.not_run:
            lines.append(f"  - {result.not_run} later step(s) not run")
    tally = counts(results)
    summary = f"{tally['passed']} passed, {tally['failed']} failed"
    if tally["not_run"]:
        summary += f", {tally['not_run']} not run"
    if tally["errors"]:
        summary += f", {tally['errors']} transcript(s) could not run"
    return "\n".join(lines + [summary])


def render_json(results: list[TranscriptResult]) -> str:
    """One JSON document: every transcript, step and failure, and the counts."""
    def error(e: TranscriptError | None) -> Any:
        return None if e is None else {"line": e.line, "message": e.message}

    data = {"transcripts": [{
        "path": r.path, "passed": r.passed, "error": error(r.error), "not_run": r.not_run,
        "steps": [{"step": s.index, "line": s.step.line, "kind": s.step.kind,
                   "user": s.step.text, "passed": s.passed,
                   "failures": [f._asdict() for f in s.failures], "turn": s.turn}
                  for s in r.steps]} for r in results], **counts(results)}
    return json.dumps(data, ensure_ascii=False, indent=2, default=str)
