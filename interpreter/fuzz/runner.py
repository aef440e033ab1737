"""`mgi fuzz`: thousands of generated conversations against one compiled scenario.

In: a `Runtime`, `FuzzOptions` (examples, max turns, seed, NLU mode), the designer's properties
(`fuzz.properties.DesignerProperties`) and a skill registry.
Out: a `FuzzReport` (`fuzz.report`): per property, held or violated with the shrunk
conversation; the coverage; the counts and the time.
After: no example database was written (hypothesis keeps only its own caches of the loaded
modules' constants under `.hypothesis/` in the current directory); the same seed gives the
same report, transcripts included.

A conversation (one hypothesis example) is the opening, then up to 2 x max-turns turns of
anything (`InputSpace.turn_at` the current node); if the session is still open, the livelock
search from where it stands (`EscapeSearch`); then the user asks to end, turn after turn
(`InputSpace.end_request_at`), for up to max-turns turns. Every step is checked as it runs
(`fuzz.properties`); the first property that fails raises its `Violation`, and hypothesis
shrinks the conversation to a short one that still breaks that property.

A conversation starts with a profile drawn from the scenario's declaration (SPEC 8.1) and
may pause before a turn (`UserTurn.idle`, on the engine's clock: a `ShiftedClock` that
stands still but for the pauses, so every run of a conversation reads the same
`system.idle_seconds`). The engine's skills are lent through `RecordingSkills`, so that each
step's skill runs can be checked (`action_once`); the livelock search and the safety sweep
use the plain registry. Skills that act on the world never do while fuzzing (thousands of
conversations must not send thousands of e-mails): there is no SMTP server
(`skills.email.mail_sandbox`), and the built-in `email` skill (SPEC 8.4) writes into a temporary outbox of `run_fuzz`'s,
deleted afterwards. A scenario with an `email` node draws, per conversation, whether that
outbox is there (`Conversation.offline`: no transport, the skill fails), so that both its
success and its failure paths are explored. Webhooks (SPEC 15) are never called: off, each is
a `skills.webhook.WebhookStandIn`, and the same drawn `offline` says whether it fails with
"webhooks off" (offline) or answers `ok` with a stand-in value of each declared result type;
a step it answered in keeps that answer (`Conversation.answers`), which its counterexample
transcript scripts with a `skill:` line.

Rounds: a round stops at its first violation (or after `examples` conversations); the next
round leaves the properties already violated out, so each property gets its own shrunk
counterexample, until a round finds nothing new. `end_nodes_reachable` is read from the
coverage at the end.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
import traceback
from typing import Any, NamedTuple

import msgspec

from .. import MagoError
from .. import ir
from ..engine import Engine, ShiftedClock
from .inputs import (F_ACT, F_INTENT, GENERATED, InputSpace, UserTurn, condition_leaves,
                          end_intents, positive_literals)
from .properties import (AuditedNLG, Conversation, DesignerProperties,
                              Expectation, PropertiesError, RecordingSkills, Violation,
                              check_actions, check_chain, check_known_ask, check_repeat,
                              check_response, check_safety_step, entered_node, load_properties,
                              passed_nodes, safety_sweep, violation)
from ..skills.email import mail_sandbox, use_outbox
from ..skills.webhook import stand_ins
from .report import FUZZ_EPOCH, Coverage, FuzzReport, Progress, attach_transcripts
from ..loader import Runtime, condition_fields
from ..understanding.nlu import ScriptedNLU
from ..stores.sessions import MemorySessionStore

SESSION = "fuzz"
SEARCH_BUDGET = 3000  # probe turns per livelock search; past it the search is inconclusive
EPOCH = FUZZ_EPOCH  # the fuzz engines' clocks stand still here (a transcript's `now:`)


def _offline_strategy() -> Any:
    from hypothesis import strategies as st  # hypothesis is imported by the exploration only

    return st.booleans()
_COUNTER_FIELDS = ("system.node_turns", "system.session_turns", "system.no_input_count",
                   "system.not_understood_count")
F_COUNTERS = tuple(ir.FIELD_INDEX[f] for f in _COUNTER_FIELDS)
# Field index -> the state attribute it reads (`system.X` is `state.X`), for the state keys;
# node_turns is keyed on its own.
_STATE_COUNTERS = {ir.FIELD_INDEX[f]: f.partition(".")[2] for f in _COUNTER_FIELDS[1:]}


def fuzz_inputs(runtime: Runtime, nlu: str, ends: tuple) -> InputSpace:
    """The input space, its date and time values judged on the day of the fuzz clock (the
    engine's "today" in every turn, SPEC 17.18)."""
    if not runtime.uses_dates:
        return InputSpace(runtime, nlu, ends)
    from ..understanding.dates import clock_at, day_of

    with clock_at(day_of(EPOCH, runtime.program.timezone)):
        return InputSpace(runtime, nlu, ends)


class FuzzOptions(NamedTuple):
    examples: int = 1000
    max_turns: int = 10
    seed: int = 0
    nlu: str = GENERATED


class FuzzError(MagoError):
    """Fuzzing cannot go on (bad usage, a nondeterministic scenario): one line for the user."""


class FuzzUsageError(FuzzError):
    """Bad options, properties file or transcripts directory."""


class StopRequest:
    """Ctrl-C during a run. The first press asks the run to stop at the next turn: raised
    there, the KeyboardInterrupt cannot land in hypothesis's gc callback (where Python
    swallows it) and the conversations explored so far still make a report. A second press
    stops at once. Installed only from the main thread (`signal` allows no other)."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._press)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _press(self, _signum: int, _frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def check(self) -> None:
        """Stop here if Ctrl-C was pressed."""
        if self.requested:
            raise KeyboardInterrupt


class _ConversationOver(MagoError):
    """The conversation cannot go on (a turn raised while `no_crash` is no longer checked)."""


class Fuzzer:
    """Explores conversations of one scenario and checks every property on them."""

    def __init__(self, runtime: Runtime, options: FuzzOptions,
                 designer: DesignerProperties = DesignerProperties(), skills: Any = None,
                 progress: Progress | None = None, stop: StopRequest | None = None,
                 outbox: str | None = None):
        self.runtime, self.options, self.designer = runtime, options, designer
        self.skills = skills
        self.outbox = outbox  # the `email` skill's folder (None: no transport at all)
        self.mail = outbox is not None and any(n.node.skill == "email" for n in runtime.nodes)
        self.stand_ins = {s.name: s for s in stand_ins(skills)}  # webhooks, answering or not
        self.stop = stop or StopRequest()
        self.ends = tuple(dict.fromkeys(end_intents(runtime) + designer.end_intents))
        self.space = fuzz_inputs(runtime, options.nlu, self.ends)
        self.nlg = AuditedNLG()
        nlu = ScriptedNLU() if options.nlu == GENERATED else _rules_nlu(runtime)
        self.recorded = RecordingSkills(skills)  # the runs of each step: `action_once`
        self.engine = Engine(runtime, nlu, self.nlg, MemorySessionStore(), self.recorded,
                             clock=ShiftedClock(lambda: EPOCH))
        self.search = EscapeSearch(runtime, self.space, skills, options.max_turns)
        self.coverage = Coverage(runtime)
        self.progress = progress or Progress(options.examples, enabled=False)
        self.calls = 0  # conversations played (hypothesis examples, shrinking included)
        self.turns = 0  # user turns played in them

    def properties(self) -> list[str]:
        """Every property name a run checks, built-in first, in report order."""
        return self.designer.checked()

    def run(self) -> FuzzReport:
        """All rounds, then `end_nodes_reachable` from the coverage."""
        started = time.perf_counter()
        checked = [p for p in self.properties() if p != "end_nodes_reachable"]
        found: dict[str, Violation] = {}
        with mail_sandbox():
            rounds, interrupted = self._rounds(checked, found)
        return self._report(started, found, rounds, interrupted)

    def _rounds(self, checked: list[str], found: dict[str, Violation]) -> tuple[int, bool]:
        """The safety sweep, then a round per violated property: (rounds, interrupted)."""
        rounds = 0
        use_outbox(self.outbox)
        try:
            swept = safety_sweep(self.runtime, self.space, self.skills)
            if swept is not None:
                found["safety_reached"] = swept
                checked.remove("safety_reached")
            while checked:
                rounds += 1
                self.progress.start_round(rounds)
                failure = self._round(frozenset(checked))
                if failure is None:
                    break
                found[failure.prop] = failure
                checked.remove(failure.prop)
        except KeyboardInterrupt:  # Ctrl-C: what was found so far is the report
            return rounds, True
        return rounds, False

    def _report(self, started: float, found: dict, rounds: int, interrupted: bool) -> FuzzReport:
        self.progress.finish()
        unreached = [] if interrupted else self.coverage.unreached_end_nodes()
        if unreached:
            found["end_nodes_reachable"] = violation(
                "end_nodes_reachable", f"end node(s) {', '.join(unreached)} never entered in "
                f"{self.calls} conversations")
        return FuzzReport(self.runtime, self.options, self.properties(), self.designer, found,
                          self.coverage.summary(), (self.calls, self.turns), rounds,
                          time.perf_counter() - started, self.search.inconclusive, self.ends,
                          interrupted)

    def _round(self, checked: frozenset[str]) -> Violation | None:
        """One hypothesis run; its (shrunk) violation, or None."""
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
        from hypothesis import strategies as st
        from hypothesis.errors import Flaky

        free_length = st.integers(0, 2 * self.options.max_turns)

        @seed(self.options.seed)
        @settings(max_examples=self.options.examples, database=None, deadline=None,
                  derandomize=False, phases=(Phase.generate, Phase.shrink),
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                  print_blob=False, verbosity=Verbosity.quiet)
        @given(st.data())
        def explore(data: Any) -> None:
            self.stop.check()
            self.calls += 1
            self.progress.tick()
            try:
                self.converse(data, free_length, checked)
            except _ConversationOver:
                pass

        try:
            explore()
        except Violation as found:
            return found
        except BaseExceptionGroup as group:  # a failure that did not reproduce (flaky)
            found = _first_violation(group)
            if found is None:
                raise
            found.message += " (did not reproduce on every run: flaky)"
            return found
        except Flaky:
            raise FuzzError("the same conversation did not run the same way twice (a skill "
                            "that times out or answers differently each time?); fuzzing needs "
                            "a deterministic scenario: raise the skill's timeout_ms") from None
        return None

    # --- one conversation ------------------------------------------------------------------

    def converse(self, data: Any, free_length: Any, checked: frozenset[str]) -> None:
        """Play one generated conversation, checking as it goes."""
        convo = Conversation()
        self.engine.store.delete(SESSION)
        if self.space.profile_values:  # SPEC 8.1: drawn only when the scenario declares one
            convo.profile = data.draw(self.space.profile)
        if self.mail or self.stand_ins:  # with or without a transport (the module docstring)
            convo.offline = data.draw(_offline_strategy())
            if self.mail:
                use_outbox(None if convo.offline else self.outbox)
            for stand_in in self.stand_ins.values():
                stand_in.answering = not convo.offline
        self._step(convo, lambda: self.engine.start(SESSION, profile=convo.profile), checked)
        for _ in range(data.draw(free_length)):
            if convo.complete:
                return
            self._say(convo, data.draw(self.space.turn_at(self._here(convo))), checked)
        if convo.complete:
            return
        if "no_livelock" in checked:
            self._check_livelock(convo, checked)
        convo.ending_from = len(convo.turns)
        for _ in range(self.options.max_turns):
            asking = self.space.end_request_at(self._here(convo))
            if asking is None:  # no end intent and no closing act: nothing to ask with
                return
            self._say(convo, data.draw(asking), checked)
            if convo.complete:
                return
        if "ends_when_asked" in checked:
            first = convo.results[convo.ending_from + 1].turn
            raise _attach(violation(
                "ends_when_asked", f"the user asked to end at every turn from turn {first} on; "
                f"{self.options.max_turns} turns later the session was still open, at "
                f"{convo.node}"), convo, complete=True)

    def _here(self, convo: Conversation) -> int:
        return self.runtime.node_index[convo.node]

    def _say(self, convo: Conversation, turn: UserTurn, checked: frozenset[str]) -> None:
        convo.turns.append(turn)
        self.turns += 1
        if turn.idle:
            self.engine.clock.pause(turn.idle)
        self._step(convo, lambda: self.engine.turn(SESSION, turn.text, turn.nlu), checked)

    def _step(self, convo: Conversation, call: Any, checked: frozenset[str]) -> None:
        """Run one step on the engine, record it and check the per-step properties."""
        self.stop.check()
        self.nlg.left_out.clear()
        self.recorded.take()
        try:
            result = call()
        except Exception as error:  # noqa: BLE001 - any exception is what no_crash reports
            if "no_crash" not in checked:
                raise _ConversationOver() from None
            raise _attach(violation("no_crash", describe_error(error)), convo) from error
        runs = self.recorded.take()
        convo.results.append(result)
        self._note_answers(convo, runs)
        convo.complete = result.complete
        entered = entered_node(result)
        self.coverage.record(result, entered)
        problem = check_response(result, self.runtime, self.nlg.left_out, entered)
        if problem is None and "safety_reached" in checked:
            problem = check_safety_step(result, self.runtime)
        if problem is None and "no_known_ask" in checked:
            problem = check_known_ask(result, self.runtime)
        if problem is None and "no_verbatim_repeat" in checked:
            problem = check_repeat(convo.results)
        if problem is not None and problem.prop in checked:
            raise _attach(problem, convo)
        for found in (check_chain(result, self.runtime), check_actions(result, runs)):
            if found is not None and found.prop in checked:
                raise _attach(found, convo)
        chain = passed_nodes(result)  # entered on the way (SPEC 8.3), before `entered`
        for node in [n for n in chain if n != entered] + [entered]:
            for prop in self.designer.properties:
                if prop.name not in checked:
                    continue
                problem = prop.check(convo, result, node)
                if problem is None:
                    continue
                if node != entered and problem.expect is not None:  # the chain went too far
                    problem.expect = Expectation("passed", " ".join(
                        chain[:chain.index(node)]) or "-")
                raise _attach(problem, convo)
            if node is not None:
                convo.visited.add(node)

    def _note_answers(self, convo: Conversation, runs: list[tuple[str, str]]) -> None:
        """The `ok` answer of the stand-in webhooks the step ran (their data merged: a
        transcript's `skill:` line scripts every skill of its turn), kept by step index."""
        data: dict[str, Any] = {}
        for _, node in runs:
            stand_in = self.stand_ins.get(self.runtime.nodes[self.runtime.node_index[node]]
                                          .node.skill or "")
            if stand_in is not None and stand_in.answering:
                data.update(stand_in.stand_in_data())
                convo.answers[len(convo.results) - 1] = {"status": "ok", "data": data}

    def _check_livelock(self, convo: Conversation, checked: frozenset[str]) -> None:
        state = self.engine.session(SESSION)
        escape = self.search.escape(state)
        if not escape.stuck:
            return
        node = state.current_node
        since = next((r.turn for r in reversed(convo.results) if entered_node(r) == node), 0)
        self._say(convo, self.search.exit_attempt(self._here(convo), self.ends), checked)
        raise _attach(violation(
            "no_livelock", f"node {node} holds the user: entered at turn {since}, no "
            f"input leaves it within {self.options.max_turns} turns (searched {escape.states} "
            f"states with {escape.inputs} different inputs)"), convo, not_next=node)


def _attach(found: Violation, convo: Conversation, complete: bool = False,
            not_next: str | None = None) -> Violation:
    """The violation with the conversation so far (and its expectation, when given here)."""
    found.turns, found.results = tuple(convo.turns), tuple(convo.results)
    found.profile, found.offline, found.answers = convo.profile, convo.offline, convo.answers
    if complete:
        found.expect = Expectation("complete", True)
    if not_next is not None:
        found.expect = Expectation("not-next", not_next)
    return found


def describe_error(error: BaseException) -> str:
    """`the turn raised Type: message (at file:line)`, where it was raised."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    return f"the turn raised {type(error).__name__}: {error}{where}"


def _first_violation(group: BaseExceptionGroup) -> Violation | None:
    for error in group.exceptions:
        if isinstance(error, Violation):
            return error
        if isinstance(error, BaseExceptionGroup):
            inner = _first_violation(error)
            if inner is not None:
                return inner
    return None


def _rules_nlu(runtime: Runtime) -> Any:
    from ..understanding.rules import RulesNLU

    return RulesNLU(runtime.program)


# --- the livelock search ---------------------------------------------------------------------


class Escape(NamedTuple):
    stuck: bool  # no probe sequence of up to `depth` turns leaves the node
    states: int  # distinct states explored
    inputs: int  # probe inputs tried at each state
    conclusive: bool = True  # False: the budget ran out first (reported as held = False)


class EscapeSearch:
    """Can the user leave the node they are in within `depth` turns, whatever they say?
    Breadth-first over the node's probe inputs on a private engine, states told apart only by
    what routing at that node can observe (the fields its conditions and the globals read,
    counters capped just above every literal they are compared with)."""

    def __init__(self, runtime: Runtime, space: InputSpace, skills: Any, depth: int,
                 budget: int = SEARCH_BUDGET):
        self.runtime, self.space, self.depth, self.budget = runtime, space, depth, budget
        # the template NLG: the search reads only where a probe leads, never the wording
        self.engine = Engine(runtime, ScriptedNLU(), None, MemorySessionStore(), skills,
                             clock=ShiftedClock(lambda: EPOCH))
        self.cache: dict[tuple, Escape] = {}
        self.inconclusive = 0
        self._views: dict[int, tuple] = {}

    def escape(self, state: Any) -> Escape:
        """The verdict for the node `state` is in (cached by what routing can observe)."""
        node = self.runtime.node_index[state.current_node]
        key = self._key(node, state)
        if key not in self.cache:
            self.cache[key] = self._search(node, state, key)
            if not self.cache[key].conclusive:
                self.inconclusive += 1
        return self.cache[key]

    def _search(self, node: int, start: Any, start_key: tuple) -> Escape:
        probes = self._probes(node)
        seen, frontier, tried = {start_key}, [start], 0
        for _ in range(self.depth):
            later = []
            for state in frontier:
                for probe in probes:
                    tried += 1
                    if tried > self.budget:
                        return Escape(False, len(seen), len(probes), conclusive=False)
                    moved = self._try(state, probe, node)
                    if moved is None:
                        return Escape(False, len(seen), len(probes))
                    key = self._key(node, moved)
                    if key not in seen:
                        seen.add(key)
                        later.append(moved)
            frontier = later
            if not frontier:
                break
        return Escape(True, len(seen), len(probes))

    def _try(self, state: Any, probe: UserTurn, node: int) -> Any | None:
        """The state after `probe`, or None when the turn left the node (or raised: a crash is
        `no_crash`'s business, not a livelock)."""
        store = self.engine.store
        store.delete("probe")
        now = self.engine.clock()  # the probe's pause is all the idle time it sees
        store.put(msgspec.structs.replace(state, session_id="probe", history=[],
                                          updated_at=now), 0)
        self.engine.clock.pause(probe.idle)
        try:
            result = self.engine.turn("probe", probe.text, probe.nlu)
        except Exception:  # noqa: BLE001
            return None
        if result.complete or result.next_node != self.runtime.nodes[node].id:
            return None
        return store.get("probe")[0]

    def _view(self, node: int) -> tuple:
        """(slots that matter at the node, counters read, cap) for its state keys."""
        if node not in self._views:
            table = self.runtime.nodes[node]
            conditions = [t.condition for t in table.node.transitions] + \
                [g.condition for g in self.runtime.program.global_transitions]
            read = {f for c in conditions for f in condition_fields(c)}
            names = self.runtime.slot_names
            slots = [names[f - ir.SLOT_FIELD_BASE] for f in sorted(read)
                     if ir.SLOT_FIELD_BASE <= f < ir.SLOT_FIELD_BASE + len(names)]
            slots += [s for s in table.required_names if s not in slots]
            literals = [v for c in conditions for f, _, v, _ in condition_leaves(c)
                        if f in F_COUNTERS and isinstance(v, (int, float))]
            cap = int(max([table.min_turns, table.node.max_turns or 0,
                           table.max_fallback_retries, *literals])) + 2
            self._views[node] = (tuple(slots), tuple(f for f in F_COUNTERS if f in read), cap)
        return self._views[node]

    def _probes(self, node: int) -> tuple[UserTurn, ...]:
        """The probe set at `node` (its slot probes are those of the slots that matter there)."""
        return self.space.probes_at(node, self._view(node)[0])

    def _key(self, node: int, state: Any) -> tuple:
        slots, counters, cap = self._view(node)
        counts = tuple(min(getattr(state, _STATE_COUNTERS[f]) if f in _STATE_COUNTERS else 0, cap)
                       for f in counters)
        pending = state.pending_confirmation
        return (state.current_node, min(state.node_turns, cap), state.fallback_retries,
                state.fallback_exhausted, state.turn_limit_reached, state.previous_node,
                state.skill_status, counts,
                tuple(repr(state.slots.get(s)) for s in slots),
                None if pending is None else repr(msgspec.structs.astuple(pending)))

    def exit_attempt(self, node: int, ends: tuple[str, ...]) -> UserTurn:
        """The input the scenario's own exits from `node` ask for (the intent or act a
        transition out of it, or a global, tests for); else an end request; else `affirm`."""
        table = self.runtime.nodes[node]
        exits = [t.condition for t in table.node.transitions if t.target not in (ir.STAY, node)]
        exits += [g.condition for g in self.runtime.program.global_transitions
                  if g.target != node]
        wanted = {pair for c in exits for pair in positive_literals(c, (F_INTENT, F_ACT))}
        intents = {self.runtime.intent_names[v] for f, v in wanted
                   if f == F_INTENT and isinstance(v, int)}
        acts = {ir.ACTS[v] for f, v in wanted if f == F_ACT and isinstance(v, int)}
        probes = self._probes(node)
        for probe in probes:
            nlu = probe.nlu or {}
            if nlu.get("intent") in intents or (not intents and nlu.get("dialogue_act") in acts):
                return probe
        for probe in probes:
            if ends and (probe.nlu or {}).get("intent") in ends:
                return probe
        return next(p for p in probes if (p.nlu or {}).get("dialogue_act") == "affirm")


# --- the command -----------------------------------------------------------------------------


LIMITS = {"examples": (1, 1_000_000), "max_turns": (1, 1000)}


def check_limits(options: FuzzOptions) -> None:
    """`FuzzUsageError` naming the first option (`LIMITS`) out of its range."""
    for name, (low, high) in LIMITS.items():
        value = getattr(options, name)
        if not low <= value <= high:
            flag = "--" + name.replace("_", "-")
            raise FuzzUsageError(f"{flag} must be between {low} and {high}, got {value}")


def run_fuzz(runtime: Runtime, ir_path: str, options: FuzzOptions,
             properties_path: str | None = None, transcripts_dir: str | None = None,
             skills: Any = None, progress: Progress | None = None) -> FuzzReport:
    """Everything `mgi fuzz` does after loading the IR: check the options, read the
    properties, explore, write the counterexample transcripts; `FuzzUsageError` on bad usage."""
    check_limits(options)
    designer = DesignerProperties()
    if properties_path is not None:
        try:
            designer = load_properties(properties_path, runtime)
        except PropertiesError as error:
            raise FuzzUsageError(str(error)) from None
    if transcripts_dir is not None:
        prepare_directory(transcripts_dir)
    with tempfile.TemporaryDirectory(prefix="mgi-fuzz-outbox-") as outbox:
        with StopRequest() as stop:
            report = Fuzzer(runtime, options, designer, skills, progress, stop, outbox).run()
        try:
            with mail_sandbox():
                attach_transcripts(report, ir_path, transcripts_dir, skills, outbox)
        except OSError as error:
            raise FuzzUsageError(f"cannot write transcripts to {transcripts_dir}: "
                                 f"{error.strerror or error}") from None
    return report


def prepare_directory(path: str) -> None:
    """Create the transcripts directory if needed; `FuzzUsageError` if it cannot be written."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        raise FuzzUsageError(f"cannot create the transcripts directory {path}: "
                             f"{error.strerror or error}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise FuzzUsageError(f"cannot write transcripts to {path}: permission denied; "
                             "pass --transcripts with a writable directory")
