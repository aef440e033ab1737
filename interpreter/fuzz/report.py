"""What `mgi fuzz` reports: coverage, counterexample transcripts, the report, the progress bar.
(Coverage: nodes entered, transitions fired, globals fired, slots filled, safety rules fired;
a node a turn passed through, SPEC 8.3, counts as entered, and its own exit as fired.)

In: the steps of generated conversations (`Coverage.record`), then the run's findings
(`FuzzReport`: violations with their shrunk conversations, the coverage summary, counts).
Out: counterexample transcripts in the `mgi test` format (`counterexample_transcript`; written
to a directory only when asked, `write_transcripts`), checked by replaying them; the report
for people (`render_human`) or machines (`render_json`); the exit status (0 every property
held, 1 one was violated).
After: a written transcript replays the conversation exactly (`nlu: scripted` with each turn's
NLU result, or `nlu: rules` with the text; a `skill:` line where a stand-in webhook answered,
`fuzz.runner`) and asserts the good behaviour at the step that
broke the property, so `mgi test` fails on it while the flaw is there. Nothing here depends on
time except the `seconds` and `examples_per_second` figures.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
import time
from collections import Counter
from typing import IO, Any

from ..skills.email import use_outbox
from ..skills.webhook import stand_ins
from .properties import BUILT_IN, OPT_IN, Violation

FUZZ_EPOCH = 1_700_000_000.0  # the fuzz engines' clocks stand still here, but for the pauses


# --- coverage ----------------------------------------------------------------------------------


class Coverage:
    """Nodes entered, transitions fired (by reason code), globals fired, slots filled."""

    def __init__(self, runtime: Any):
        self.runtime = runtime
        self.entered: Counter = Counter()
        self.fired: Counter = Counter()  # (handled node, reason) -> turns
        self.filled: Counter = Counter()

    def record(self, result: Any, entered: str | None) -> None:
        """One step; `entered`: the node it entered (`fuzz.properties.entered_node`)."""
        if entered is not None:
            self.entered[entered] += 1
        if result.user is not None:
            self.fired[(result.node, result.reason)] += 1
            for step in result.passed:  # entry routing (SPEC 8.3): entered on the way
                if step["node"] != entered:
                    self.entered[step["node"]] += 1
                self.fired[(step["node"], step["reason"])] += 1
        update = result.decision.slot_update if result.decision is not None else None
        for name, _ in update.stored if update is not None else ():
            self.filled[name] += 1

    def unreached_end_nodes(self) -> list[str]:
        return [n.id for n in self.runtime.nodes if n.is_end and not self.entered[n.id]]

    def summary(self) -> dict[str, Any]:
        runtime = self.runtime
        rows = [(n.id, route.reason) for n in runtime.nodes for route in n.routes]
        globals_ = [g.reason for g in runtime.globals]
        fired_globals, reasons = Counter(), Counter()
        for (_, reason), count in self.fired.items():
            reasons[reason] += count
            if reason.startswith("global"):
                fired_globals[reason] += count
        return {
            "nodes": _part([n.id for n in runtime.nodes], self.entered, "entered"),
            "transitions": _part([f"{node} {reason}" for node, reason in rows],
                                 Counter({f"{n} {r}": c for (n, r), c in self.fired.items()}),
                                 "fired"),
            "globals": _part(globals_, fired_globals, "fired"),
            "slots": _part(list(runtime.slot_names), self.filled, "filled"),
            "safety": _part([r.reason for r in runtime.safety_routes.values()], reasons, "fired"),
            "reasons": dict(sorted(reasons.items())),
        }


def _part(names: list[str], counts: Counter, verb: str) -> dict[str, Any]:
    return {verb: {n: counts[n] for n in names if counts[n]}, "total": len(names),
            "uncovered": [n for n in names if not counts[n]]}


# --- the report --------------------------------------------------------------------------------


class FuzzReport:
    """The findings of one run; transcripts are added by `attach_transcripts`."""

    def __init__(self, runtime: Any, options: Any, properties: list[str], designer: Any,
                 found: dict[str, Violation], coverage: dict, played: tuple[int, int], rounds: int,
                 seconds: float, inconclusive: int, end_intents: tuple[str, ...],
                 interrupted: bool = False):
        self.runtime, self.options, self.properties = runtime, options, properties
        self.designer, self.found, self.coverage = designer, found, coverage
        (self.conversations, self.turns), self.rounds, self.seconds = played, rounds, seconds
        self.inconclusive, self.end_intents = inconclusive, end_intents
        self.interrupted = interrupted  # Ctrl-C: the report covers the conversations so far
        self.ir_path = ""
        self.transcripts: dict[str, str] = {}  # property -> transcript text
        self.paths: dict[str, str] = {}  # property -> written file
        self.replay_fails: dict[str, bool] = {}  # property -> `mgi test` fails on it

    @property
    def scenario(self) -> str:
        return self.runtime.program.name

    def exit_status(self) -> int:
        """130 after Ctrl-C (like any interrupted command), 1 on a violation, else 0."""
        return 130 if self.interrupted else 1 if self.found else 0

    def describe(self, name: str) -> tuple[str, str, int | None]:
        """(kind, description, line) of a property."""
        if name in BUILT_IN:
            return "built-in", BUILT_IN[name], None
        if name in OPT_IN:
            return "opt-in", OPT_IN[name], None
        prop = next(p for p in self.designer.properties if p.name == name)
        return "designer", prop.text, prop.line


def attach_transcripts(report: FuzzReport, ir_path: str, directory: str | None,
                       skills: Any = None, outbox: str | None = None) -> None:
    """A transcript per violation with a conversation; written into `directory` if given;
    each replayed to confirm that `mgi test` fails on it (with the mail transport its
    conversation had: `outbox`, or none; webhooks off, as `mgi test` runs them: the steps a
    stand-in answered in script that answer)."""
    report.ir_path = ir_path
    for stand_in in stand_ins(skills):
        stand_in.answering = False
    for name, found in report.found.items():
        if not found.results:
            continue
        use_outbox(None if getattr(found, "offline", False) else outbox)
        path = os.path.join(directory, transcript_name(report.scenario, name)) if directory \
            else None
        text = counterexample_transcript(report, found, ir_header(ir_path, path))
        report.transcripts[name] = text
        report.replay_fails[name] = replay_fails(text, report.runtime, path or "<transcript>",
                                                 skills)
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            report.paths[name] = path


def ir_header(ir_path: str, transcript: str | None) -> str:
    """`ir: PATH` relative to a written transcript; `scenario: NAME` for a printed one (the
    IR is then `<--ir-dir>/NAME.ir`, `build/` by default)."""
    if transcript is None:
        return f"scenario: {os.path.splitext(os.path.basename(ir_path))[0]}"
    where = os.path.dirname(os.path.abspath(transcript))
    return f"ir: {os.path.relpath(os.path.abspath(ir_path), where)}"


def transcript_name(scenario: str, prop: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{scenario}.{prop}") + ".transcript"


def counterexample_transcript(report: FuzzReport, found: Violation, ir_line: str) -> str:
    """The shrunk conversation in the `mgi test` format, asserting the good behaviour."""
    generated = report.options.nlu == "generated"
    lines = [f"# mgi fuzz: counterexample for `{found.prop}` (scenario {report.scenario}, "
             f"seed {report.options.seed}, --max-turns {report.options.max_turns})",
             f"# {_one_line(found.message, 300)}",
             "# `mgi test` fails on this file while the flaw is there (the last step expects",
             "# what the property asks for); once fixed, keep it as a regression test.",
             ir_line, f"nlu: {'scripted' if generated else 'rules'}"]
    focus = getattr(found, "focus", None)  # a sweep from one node (`safety_reached`)
    if getattr(found, "offline", False):
        lines.insert(4, "# transport: none (replay it without MAGO_SMTP_URL and MAGO_OUTBOX: "
                        "the email skill fails; webhooks fail: off)")
    answers = getattr(found, "answers", {})  # the stand-in webhooks' answers, by step
    if answers:
        lines.insert(4, "# webhooks answered with stand-in values (the skill: lines)")
    if report.runtime.uses_dates:  # the fuzz clock's moment: dates judged on its day
        lines.append("now: " + dt.datetime.fromtimestamp(FUZZ_EPOCH, dt.UTC)
                     .isoformat())
    if getattr(found, "profile", None):  # SPEC 8.1: the session's profile
        lines.append("profile: " + json.dumps(found.profile, ensure_ascii=False, sort_keys=True))
    lines += [f"focus: {focus}", ""] if focus else [""]
    opening, last = found.results[0], len(found.turns)
    if opening.response is not None:
        lines.append(f"bot:  # {_said(opening)}")
        if last == 0:
            lines += _expectation(found)
    for index, turn in enumerate(found.turns, start=1):
        lines.append(f"user: {turn.text}" if turn.text else "user:")
        if turn.nlu is not None:
            lines.append("  nlu: " + json.dumps(turn.nlu, ensure_ascii=False, sort_keys=True))
        if getattr(turn, "idle", 0):  # SPEC 8.5: the pause before the turn
            lines.append(f"  idle: {turn.idle}")
        if index in answers:
            lines.append("  skill: " + json.dumps(answers[index], sort_keys=True))
        if index < len(found.results):
            result = found.results[index]
            via = "".join(f" -> {p['node']}" for p in result.passed)  # SPEC 8.3: passed
            lines.append(f"  # turn {result.turn}: {result.node}{via} -> "
                         f"{result.next_node or 'complete'} ({result.reason}): {_said(result)}")
        else:  # the turn raised
            lines.append(f"  # this turn raised: {_one_line(found.message, 200)}")
        if index == last:
            lines += _expectation(found)
    return "\n".join(lines) + "\n"


def _expectation(found: Violation) -> list[str]:
    expect = found.expect
    if expect is None:
        return ["  # (no expectation can state the good behaviour here; see the message above)"]
    value = expect.value
    if isinstance(value, bool):
        value = "true" if value else "false"
    return [f"  {expect.key}: {value}  # {found.prop}"]


def _said(result: Any) -> str:
    return _one_line(result.response or "", 80)


def _one_line(text: str, size: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[:size] + "…"


def replay_fails(text: str, runtime: Any, path: str, skills: Any = None) -> bool:
    """Whether `mgi test` would fail on the transcript (it should: it shows the flaw)."""
    from ..transcripts.run import TranscriptError, parse_transcript, run_transcript

    try:
        result = run_transcript(parse_transcript(text, path), runtime, skills=skills)
    except TranscriptError:  # a transcript we cannot parse back is no counterexample
        return False
    except Exception:  # noqa: BLE001 - a turn that raises fails the replay too
        return True
    return not result.passed


# --- rendering ---------------------------------------------------------------------------------


def report_data(report: FuzzReport) -> dict[str, Any]:
    """The machine report (`--format json`)."""
    options = report.options
    properties = []
    for name in report.properties:
        kind, description, line = report.describe(name)
        found = report.found.get(name)
        properties.append({
            "name": name, "kind": kind, "description": description, "line": line,
            "status": "violated" if found else "held",
            "message": found.message if found else None,
            "turns": len(found.turns) if found and found.results else None,
            "transcript": report.paths.get(name), "transcript_text": report.transcripts.get(name),
            "replay_fails": report.replay_fails.get(name)})
    rate = report.conversations / report.seconds if report.seconds else None
    return {"ir": report.ir_path, "scenario": report.scenario, "seed": options.seed,
            "examples": options.examples, "max_turns": options.max_turns, "nlu": options.nlu,
            "end_intents": list(report.end_intents), "passed": not report.found,
            "violations": len(report.found), "properties": properties,
            "coverage": report.coverage, "conversations": report.conversations,
            "turns": report.turns,
            "rounds": report.rounds, "livelock_searches_inconclusive": report.inconclusive,
            "seconds": round(report.seconds, 3), "interrupted": report.interrupted,
            "examples_per_second": round(rate, 1) if rate else None}


def render_json(report: FuzzReport) -> str:
    return json.dumps(report_data(report), ensure_ascii=False, indent=2)


def render_human(report: FuzzReport) -> str:
    data = report_data(report)
    rate = data["examples_per_second"]
    lines = [f"mgi fuzz {report.ir_path}: scenario {report.scenario}, {report.conversations} "
             f"conversations in {report.seconds:.1f} s ({rate or 0:.0f}/s), seed "
             f"{report.options.seed}, --max-turns {report.options.max_turns}, "
             f"--nlu {report.options.nlu}"]
    width = max(len(p["name"]) for p in data["properties"])
    for prop in data["properties"]:
        held = prop["status"] == "held"
        lines.append(f"  {'✓' if held else '✗'} {prop['name']:<{width}}  "
                     f"{prop['description'] if held else prop['message']}")
        if not held:
            lines += _transcript_lines(report, prop)
    lines.append("coverage:")
    lines += _coverage_lines(report.coverage)
    if report.inconclusive:
        lines.append(f"note: {report.inconclusive} livelock search(es) ran out of budget "
                     "and were not counted")
    count = len(report.found)
    if report.interrupted:
        lines.append(f"interrupted (Ctrl-C) after {report.conversations} conversations: "
                     "✓ means held so far; end_nodes_reachable was not judged")
    lines.append(("no property violated so far" if report.interrupted else "all properties held")
                 if not count else
                 f"{count} propert{'y' if count == 1 else 'ies'} violated (rerun with "
                 f"--seed {report.options.seed} to reproduce)")
    return "\n".join(lines)


def _transcript_lines(report: FuzzReport, prop: dict) -> list[str]:
    if prop["transcript_text"] is None:
        return []
    check = "" if prop["replay_fails"] else \
        " (warning: `mgi test` passes on it; the failure did not reproduce)"
    if prop["transcript"]:
        return [f"      transcript: {prop['transcript']} ({_turns(prop['turns'])}; "
                f"`mgi test` replays it){check}"]
    body = ["      " + line for line in prop["transcript_text"].rstrip("\n").split("\n")]
    return [f"      counterexample ({_turns(prop['turns'])}; save it with --transcripts DIR)"
            f"{check}:"] + body


def _turns(count: int) -> str:
    return f"{count} turn" if count == 1 else f"{count} turns"


def _coverage_lines(coverage: dict) -> list[str]:
    lines = []
    for part, verb in (("nodes", "entered"), ("transitions", "fired"), ("globals", "fired"),
                       ("slots", "filled"), ("safety", "fired")):
        data = coverage[part]
        if part == "safety" and not data["total"]:
            continue  # no graph.safety: nothing to say
        line = f"  {part} {len(data[verb])}/{data['total']} {verb}"
        if data["uncovered"]:
            line += "; not " + verb + ": " + ", ".join(data["uncovered"])
        lines.append(line)
    return lines


class Progress:
    """A progress bar on stderr, only at a terminal; redrawn at most ten times a second."""

    def __init__(self, total: int, stream: IO[str] | None = None, enabled: bool | None = None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total, self.done, self.round, self.drawn = total, 0, 1, 0.0

    def start_round(self, number: int) -> None:
        self.round, self.done = number, 0

    def tick(self) -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and now - self.drawn >= 0.1:
            self.drawn = now
            self.stream.write("\r" + self._line())
            self.stream.flush()

    def _line(self) -> str:
        if self.done > self.total:
            return f"mgi fuzz: shrinking a counterexample ({self.done - self.total} replays)   "
        filled = 30 * self.done // max(self.total, 1)
        label = "" if self.round == 1 else f" (round {self.round})"
        return f"mgi fuzz: [{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} " \
               f"conversations{label}   "

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 72 + "\r")
            self.stream.flush()
