"""Running transcripts: the runner and the reports behind `mgi test`.

In: parsed transcripts (`parse`: the format is described there) and the directory of
compiled IR files. Out: per transcript a `TranscriptResult` with one `StepResult` per step
(`run_transcript`, `run_files`); a report for people or for machines (`render_human`,
`render_json`) and the exit status.
After: a failed expectation never stops the conversation (the later steps still run), a turn
that raises (e.g. after completion) stops that transcript; one transcript never affects
another.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from ..skills.email import OUTBOX_ENV, SMTP_URL_ENV, mail_sandbox
from .parse import (NONE_MARK, Expectation, Step, Transcript, TranscriptError,  # noqa: F401
                    clip, load_transcript, parse_transcript)


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

    def __init__(self, webhooks: str = "off") -> None:
        self._runtimes: dict[str, Any] = {}
        self._nlus: dict[int, Any] = {}
        self._skills = None
        self.webhooks = webhooks  # "live": call them; else "webhooks off" unless scripted

    def skills(self) -> Any:
        """One skill registry for the run (finding plug-ins scans the installed packages)."""
        if self._skills is None:
            from ..skills.registry import SkillRegistry

            self._skills = SkillRegistry.default()
        return self._skills

    def skills_for(self, runtime: Any) -> Any:
        """The run's registry plus the scenario's webhooks (SPEC 15, 17.9)."""
        if not runtime.program.skills:
            return self.skills()
        from ..skills.webhook import webhook_skills

        return self.skills().with_skills(webhook_skills(runtime.program,
                                                        self.webhooks == "live"))

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


def run_files(paths: list[str], ir_dir: str | os.PathLike = "build",
              webhooks: str = "off") -> list[TranscriptResult]:
    """Every transcript in order; a broken one is reported and the others still run. With no
    mail transport in the environment, e-mail goes to a temporary outbox for the run (a
    transcript never needs a mail server; `skill:` lines script the failures)."""
    with _mail_outbox():
        return _run_files(paths, ir_dir, webhooks)


@contextlib.contextmanager
def _mail_outbox():
    """A temporary outbox while transcripts run, unless a transport is set."""
    if os.environ.get(SMTP_URL_ENV) or os.environ.get(OUTBOX_ENV):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="mago-outbox-") as folder, mail_sandbox(folder):
        yield


def _run_files(paths: list[str], ir_dir: str | os.PathLike,
               webhooks: str = "off") -> list[TranscriptResult]:
    from ..skills.webhook import WebhookConfigError

    cache = RuntimeCache(webhooks)
    results = []
    for path in paths:
        try:
            transcript = load_transcript(path)
            runtime = _load_ir(transcript, ir_dir, cache)
            skills = cache.skills_for(runtime)
        except TranscriptError as error:
            results.append(TranscriptResult(path, error=error))
            continue
        except WebhookConfigError as error:
            results.append(TranscriptResult(path, error=TranscriptError(path, 0, str(error))))
            continue
        try:
            results.append(run_transcript(transcript, runtime,
                                          cache.nlu(runtime, transcript.nlu), skills))
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
    if transcript.now is not None:  # SPEC 17.18: "today" and relative dates read this moment
        from ..understanding.dates import fixed_clock

        clock = ShiftedClock(fixed_clock(transcript.now, runtime.program.timezone))
    engine = Engine(runtime, nlu, skills=skills, clock=clock)
    skills = engine.skills
    # one session id per transcript: action ids (SPEC 8.4) of two transcripts never meet
    session = "transcript-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(transcript.path).stem)
    try:
        opening = engine.start(session, transcript.bot_first, transcript.focus,
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
        engine.skills = scripted_skills(step.skill) if step.skill is not None else skills
        try:
            result = engine.turn(session, step.text, step.nlu)
        except EngineError as error:
            failure = Failure(step.line, "turn", f"the turn failed: {error}")
            results.append(StepResult(index, step, (failure,), None))
            return TranscriptResult(transcript.path, tuple(results),
                                    len(transcript.steps) - index)
        results.append(StepResult(index, step, check_step(step, result), result.json_line()))
    return TranscriptResult(transcript.path, tuple(results))


class _ScriptedSkills:
    """The skill registry of a turn whose step scripts the result (`skill:`): every skill it
    runs answers that result, and nothing acts on the world."""

    def __init__(self, result: Any):
        self.result = result
        self.name = "scripted"

    def get(self, name: str) -> _ScriptedSkills:
        return self

    def run(self, args: dict, context: Any) -> Any:
        return self.result


def scripted_skills(result: dict) -> _ScriptedSkills:
    """The registry for a step's `skill:` line."""
    from ..skills.registry import SkillResult

    return _ScriptedSkills(SkillResult(result["status"], result.get("data", {})))


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
