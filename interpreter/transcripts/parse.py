"""Conversation transcripts: the format and its parser (`mgi test` runs them with `run`).

In: transcript files or text (format below). Out: `Transcript`s (`parse_transcript`,
`load_transcript`), each a header and its steps with their inputs and expectations.
After: every problem in a file is a `TranscriptError` naming its line.

The format (one key per line; `#` after whitespace starts a comment, as in YAML):

    # a comment; blank lines are ignored
    scenario: senimate        # the IR is <ir-dir>/senimate.ir
    ir: ../../build/x.ir      # or: a path relative to this file (exactly one of the two)
    nlu: rules                # rules (default) or scripted
    bot_first: true           # default: the scenario's graph.bot_first
    focus: health_check       # focus mode on that node
    profile: {"email": "me@example.com"}   # the session profile (SPEC 8.1; JSON object)
    now: 2026-12-01T10:00     # the engine's clock (SPEC 17.18): "today" and relative dates

    bot:                      # the opening (bot-first only, first step); expectations follow
      node: greeting_introduction
      says: 안녕하세요
    user: 응 좋아요           # a turn; `user:` alone is a silent turn
      nlu: {"dialogue_act": "affirm"}   # NLU override for this turn (JSON object)
      idle: 1900                        # seconds of silence before this turn (SPEC 8.5)
      skill: {"status": "failed", "data": {"error": "refused"}}   # the result of every skill
                                        # this turn runs, instead of running it
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
import re
from datetime import datetime
from typing import Any, NamedTuple

from .. import MagoError
from ..files import InputFileError, JSONLimitError, decode_json, read_input

HEADER_KEYS = ("scenario", "ir", "nlu", "bot_first", "focus", "profile", "now")
STEP_KEYS = ("bot", "user")
EXPECT_KEYS = ("nlu", "idle", "skill", "node", "next", "not-next", "reason", "complete",
               "slots", "passed", "says", "not-says")
INPUT_KEYS = ("nlu", "idle", "skill")  # what a user step gives the turn, beside its words
SKILL_STATUSES = ("ok", "failed", "timeout")
REPEATABLE = frozenset(("says", "not-says", "not-next"))
NLU_NAMES = ("rules", "scripted")
NONE_MARK = "-"
_COMMENT = re.compile(r"(^|\s)#")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)\s*:(.*)$")


class TranscriptError(MagoError):
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
    skill: dict | None = None  # the scripted result of the turn's skill runs

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
    now: str | None = None  # an ISO date or date-time: the engine's clock (SPEC 17.18)


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
                        "skill": None, "expect": []}

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
            what = {"nlu": "NLU", "idle": "pause", "skill": "skill run"}[key]
            raise self.error(number, f"the opening has no {what}; `{key}:` belongs to a user "
                                     "turn")
        if key == "nlu":
            _check_override(parsed, step["text"], lambda m: self.error(number, m))
            step["nlu"] = parsed
        elif key in ("idle", "skill"):
            step[key] = parsed
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
                               tuple(step["expect"]), step["idle"] or 0, step["skill"]))

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
                          header.get("profile"), header.get("now"))


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
    if key == "now":
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise fail(f"`now:` is an ISO date or date-time (2026-12-01T10:00), not {value!r}") \
                from None
    return value


def _expect_value(key: str, value: str, fail) -> Any:
    if key in ("nlu", "slots"):
        return _json_object(key, value, fail)
    if key == "skill":
        return _skill_result(_json_object(key, value, fail), fail)
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


def _skill_result(result: dict, fail) -> dict:
    """`skill:` is a skill result: `{"status": ok|failed|timeout, "data": {...}}`."""
    if set(result) - {"status", "data"} or result.get("status") not in SKILL_STATUSES or \
            not isinstance(result.get("data", {}), dict):
        raise fail('`skill:` is {"status": "ok"|"failed"|"timeout", "data": {...}}')
    return result


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
