"""The engine: sessions turn by turn, with the I/O at the edges (SPEC 6.1 and 6.2).

In: a `Runtime`, an NLU, an NLG, a `SessionStore` and a skill registry; then `start` and
`turn` calls. Out: one `TurnResult` per turn (the JSON-lines fields of SPEC 7 plus the
decision for the output levels).
After: each call reads the session once, decides with the pure `route_turn`, runs a skill
if the node now speaking needs one, words the decision (`wording.nlg.speak`: the reply and
the rotation of response variants after it, SPEC 9), appends the history, keeps that
rotation and saves with the version it read (`VersionConflict` if another writer saved in
between). Nothing is saved when anything raises, so a failed turn leaves the session as it
was.

The opening (bot-first) is session turn 1 and node turn 1 of the start node: no NLU, no
routing, the node's default sentence. With bot-first off `start` says nothing (`response`
None, turn 0) and the first user message is turn 1. Focus mode (`focus_node`): the session
starts there and never moves; each turn reports where routing would go. A completed session
refuses further turns with `SessionComplete`.

Safety (SPEC 10): on every turn with text the program's detector (`Runtime.safety`) reads the
text beside the NLU, an override NLU result included; its finding is kept, and a category the
NLU gave is added only when the detector found none (`understanding.safety.merge`). The
merged category is `NLUResult.safety`, which routing reads (the safety tier) and the JSON
line's `nlu` object shows as `"safety"`; `TurnResult.safety_source` says who found it.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any
from collections.abc import Callable

import msgspec
from msgspec.structs import replace

from . import MagoError
from . import ir
from .executors import (ExecutorOutcome, action_id, action_node, needs_skill_run,
                        run_node_skill)
from .loader import Runtime
from .wording.nlg import NLG, RenderContext, TemplateNLG, speak
from .understanding.nlu import NLU, NLUContext, NLUResult, ScriptedNLU, nlu_result
from .understanding.safety import merge
from .routing import (KNOWN_ACTS, MOVE, Decision, RoutingError, crossed_slots, entry_route,
                      opening_decision, route_turn, waits)
from .stores.sessions import MemorySessionStore, SessionStore
from .skills.registry import SkillRegistry
from .slots import apply_sets, check_profile
from .state import HISTORY_LIMIT, ActionRecord, DialogueState, append_history, unstorable_at


class EngineError(MagoError):
    """A turn that cannot run; the message is one line for the user."""


class SessionNotFound(EngineError):
    """No session with that id (start it first)."""


class SessionExists(EngineError):
    """`start` with the id of a live session."""


class SessionComplete(EngineError):
    """The session has ended; it takes no more turns."""


class UnknownNode(EngineError):
    """`focus_node` names no node of the scenario."""


class InvalidProfile(EngineError):
    """A start whose profile names an undeclared field or holds an invalid value (SPEC 8.1)."""


def _refusal(session_id: str, record: tuple[DialogueState, int] | None) -> EngineError:
    """Why a session takes no turn: it does not exist, or it has ended."""
    if record is None:
        return SessionNotFound(f"no session {session_id}; start it first")
    return SessionComplete(f"session {session_id} is complete ({record[0].complete_reason}); "
                           "start a new session")


def renumbered(actions: tuple[ActionRecord, ...], state: DialogueState) -> list[ActionRecord]:
    """Completed actions of an unsaved attempt, with the ids they have in the turn that
    follows `state` (the same session and nodes, this turn's number)."""
    turn = state.session_turns + 1
    return [replace(action, action_id=action_id(state.session_id, turn,
                                                action_node(action.action_id)))
            for action in actions]


class ShiftedClock:
    """The wall clock plus the pauses simulated so far (`mgi run` lines and transcript steps
    with `idle: SECONDS`, SPEC 8.5): `system.idle_seconds` then reads the pause."""

    def __init__(self, base: Callable[[], float] = time.time):
        self.base = base
        self.offset = 0.0

    def __call__(self) -> float:
        return self.base() + self.offset

    def pause(self, seconds: float) -> None:
        self.offset += seconds


class TurnResult(msgspec.Struct, omit_defaults=False):
    """One turn as the CLI reports it; `json_line()` gives the SPEC 7 fields (and `dropped`).
    `slots` and `nlu` are made when read (most callers of a turn read neither)."""

    turn: int  # session turn number (0: bot-first off, nothing said yet)
    user: str | None  # None for the opening
    node: str  # where the turn was handled
    next_node: str | None  # where the session is now; None once complete
    reason: str  # reason code of SPEC 6.2, "opening" for the opening
    complete: bool
    response: str | None  # None when the bot did not speak (bot-first off)
    decision: Decision | None = None
    focus: bool = False  # focus mode: next_node/reason/complete are what routing would do
    nlu_source: str | None = None  # which NLU produced `nlu` and why (NLUResult.source)
    _slots: dict[str, Any] = {}  # the session's slots after the turn, as stored
    _heard: NLUResult | None = None  # the NLU result routing read; None for the opening
    _intent: str | None = None  # its intent as routing read it (declared or null)
    safety_source: str | None = None  # who found the safety category: "detector" or "nlu"

    @property
    def slots(self) -> dict[str, Any]:
        """The slots after the turn: a copy, so a caller cannot change the stored session."""
        return dict(self._slots)

    @property
    def nlu(self) -> dict[str, Any] | None:
        """The NLU result as routing read it (intent and act corrected); None for the opening."""
        if self._heard is None or self.decision is None:
            return None
        heard = {"intent": self._intent, "dialogue_act": ir.ACTS[self.decision.act],
                 "slots": self._heard.slots, "confidence": self._heard.confidence}
        if self._heard.safety is not None:
            heard["safety"] = self._heard.safety
        if self._heard.candidates:  # SPEC 13.2: why this intent, or why none
            heard["candidates"] = [{"intent": c.intent, "score": c.score}
                                   for c in self._heard.candidates]
        if self._heard.intent_note:
            heard["intent_note"] = self._heard.intent_note
        return heard

    def understanding_lines(self) -> list[str]:
        """The detailed level's line on how sure the NLU was (SPEC 13.2): the confidence, the
        candidates and, when no intent was chosen though some scored, why."""
        heard = self._heard
        if heard is None or self.decision is None:
            return []
        line = f"nlu: confidence {heard.confidence:.2f}"
        if heard.candidates:
            line += "; candidates " + ", ".join(f"{c.intent} {c.score:.2f}"
                                                for c in heard.candidates)
        if heard.intent_note:
            line += f" ({heard.intent_note})"
        return [line]

    @property
    def dropped(self) -> list[dict[str, Any]]:
        """What routing did not take from the NLU result, and why (SPEC 6.2 step 2): an
        undeclared intent, an unknown act (both read as null), slot values not stored."""
        heard, decision = self._heard, self.decision
        if heard is None or decision is None:
            return []
        found: list[dict[str, Any]] = []
        if heard.intent is not None and self._intent is None:
            found.append({"intent": heard.intent, "reason": "undeclared_intent"})
        if heard.dialogue_act is not None and heard.dialogue_act not in KNOWN_ACTS:
            found.append({"dialogue_act": heard.dialogue_act, "reason": "unknown_act"})
        if decision.slot_update is not None:
            found.extend({"slot": name, "value": value, "reason": reason}
                         for name, value, reason in decision.slot_update.dropped)
        return found

    @property
    def passed(self) -> list[dict[str, str]]:
        """The nodes the turn passed through without waiting, each with its own exit reason
        (SPEC 8.3); empty when nothing was passed."""
        if self.decision is None:
            return []
        return [{"node": node, "reason": reason} for node, reason in self.decision.passed]

    def json_line(self) -> dict[str, Any]:
        """The machine contract of `mgi run --json` (SPEC 7, with `passed` of SPEC 8.3), plus
        `dropped` when the turn dropped part of its NLU result."""
        line = {"turn": self.turn, "user": self.user, "node": self.node,
                "next_node": self.next_node, "reason": self.reason, "complete": self.complete,
                "response": self.response, "slots": self.slots, "nlu": self.nlu,
                "passed": self.passed}
        dropped = self.dropped
        if dropped:
            line["dropped"] = dropped
        return line


class Engine:
    """Runs sessions of one program. Thread-safe as far as the store is (optimistic writes)."""

    def __init__(self, runtime: Runtime, nlu: NLU | None = None, nlg: NLG | None = None,
                 store: SessionStore | None = None, skills: SkillRegistry | None = None,
                 clock: Callable[[], float] = time.time, history_limit: int = HISTORY_LIMIT):
        self.runtime = runtime
        self.nlu = nlu if nlu is not None else ScriptedNLU()
        self.nlg = nlg if nlg is not None else TemplateNLG()
        self.store = store if store is not None else MemorySessionStore()
        self.skills = skills if skills is not None else SkillRegistry.default()
        self.clock = clock
        self.history_limit = history_limit

    # --- opening -----------------------------------------------------------------------

    def start(self, session_id: str, bot_first: bool | None = None,
              focus_node: str | None = None,
              profile: dict[str, Any] | None = None) -> TurnResult:
        """Create a session; with bot-first on, the start node speaks (SPEC 6.1). `profile`
        is checked against the scenario's declaration (`InvalidProfile`, SPEC 8.1)."""
        with self._day():
            checked = self.checked_profile(profile or {})
        if self.store.get(session_id) is not None:
            raise SessionExists(f"session {session_id} already exists; use another id")
        try:
            with self._day():
                return self._open(session_id, bot_first, focus_node, checked)
        except ir.IRError as error:  # a damaged node of the IR file, first read now
            raise EngineError(str(error)) from None

    def checked_profile(self, profile: Any) -> dict[str, Any]:
        """The profile with its values normalized, or `InvalidProfile` with one line."""
        if not isinstance(profile, dict):
            raise InvalidProfile("the profile must be a JSON object of field: value")
        checked = check_profile(self.runtime.profile_rules, profile)
        if isinstance(checked, str):
            raise InvalidProfile(checked)
        return checked

    def _open(self, session_id: str, bot_first: bool | None, focus_node: str | None,
              profile: dict[str, Any]) -> TurnResult:
        runtime = self.runtime
        table = runtime.nodes[runtime.entry]
        if focus_node is not None:
            table = runtime.node_named(focus_node)
            if table is None:
                known = ", ".join(n.id for n in runtime.nodes)
                raise UnknownNode(f"unknown node {focus_node!r}; the scenario has: {known}")
        speaks = runtime.program.bot_first if bot_first is None else bot_first
        now = self.clock()
        state = DialogueState(session_id, runtime.ir_hash, table.id,
                              node_turns=int(speaks), session_turns=int(speaks),
                              focus=focus_node is not None, profile=profile, created_at=now,
                              updated_at=now, version=1)
        if table.on_enter:  # the session enters its first node too (SPEC 14.5), before its skill
            state = replace(state, slots=apply_sets(runtime, state.slots, table.on_enter)[0])
        response = None
        if speaks:
            if needs_skill_run(table, state):
                state = run_node_skill(runtime, self.skills, table, state)
            decision = opening_decision(runtime, state)
            reply = speak(self.nlg, decision, RenderContext(runtime, state))
            response = reply.text
            entry = (None, response, table.id, "opening")
            state = replace(state, history=append_history([], entry, self.history_limit),
                            rotation=reply.rotation)
        else:
            decision = opening_decision(runtime, state)
        self.store.put(state, 0)
        return TurnResult(state.session_turns, None, table.id, table.id, "opening", False,
                          response, decision, state.focus, None, state.slots)

    # --- user turns --------------------------------------------------------------------

    def _day(self) -> contextlib.AbstractContextManager[None]:
        """Within: a date or time scenario's "today" is the engine clock's day in the
        scenario's timezone (SPEC 17.18); nothing for other scenarios."""
        if not self.runtime.uses_dates:
            return contextlib.nullcontext()
        from .understanding.dates import clock_at, day_of  # only scenarios with dates

        return clock_at(day_of(self.clock(), self.runtime.program.timezone))

    def turn(self, session_id: str, text: str, nlu_override: NLUResult | dict | None = None,
             outcome: ExecutorOutcome | None = None,
             carried: tuple[ActionRecord, ...] = ()) -> TurnResult:
        """One user turn (SPEC 6.2 steps 1-9); `nlu_override` replaces the NLU for it.
        `carried`: the skill runs of an earlier attempt at this same message whose state was
        never saved because another writer saved first (the service's version conflict): a
        node that ran one then does not run it again in this turn (SPEC 8.4)."""
        if not self.runtime.uses_dates:  # no context manager on the hot path
            return self._turn(session_id, text, nlu_override, outcome, carried)
        with self._day():
            return self._turn(session_id, text, nlu_override, outcome, carried)

    def _turn(self, session_id: str, text: str, nlu_override: NLUResult | dict | None,
              outcome: ExecutorOutcome | None, carried: tuple[ActionRecord, ...]) -> TurnResult:
        record = self.store.get(session_id)
        if record is None or record[0].complete:
            raise _refusal(session_id, record)
        state, version = record
        if carried:
            state = replace(state, actions=[*state.actions, *renumbered(carried, state)])
        bad = unstorable_at(text)
        if bad is not None:
            raise EngineError(f"the input holds a lone surrogate (U+{ord(text[bad]):04X}) at "
                              f"character {bad}; send valid Unicode text")
        runtime = self.runtime
        now = self.clock()
        idle = int(max(0.0, now - state.updated_at)) if state.session_turns else 0
        try:
            result, found_by = self._understand(text, state, nlu_override)
            decision = route_turn(runtime, state, result, outcome, idle)
            handled = runtime.nodes[decision.handled_node]
            if decision.kind == MOVE and not decision.focus:
                decision = self._enter(decision)
                speaker = runtime.nodes[decision.next_node]
            else:
                speaker = handled
            new = decision.state
            if needs_skill_run(speaker, new):
                new = run_node_skill(runtime, self.skills, speaker, new, decision)
            reply = speak(self.nlg, decision, RenderContext(runtime, new))
        except (RoutingError, ir.IRError) as error:  # IRError: a damaged node, first read now
            raise EngineError(str(error)) from None
        response = reply.text
        new = replace(new, history=append_history(
            new.history, (text, response, handled.id, decision.reason), self.history_limit),
            rotation=reply.rotation, updated_at=now, version=version + 1)
        self.store.put(new, version)
        turn = self._result(text, result, decision, new, handled.id, response)
        turn.safety_source = found_by
        return turn

    def _enter(self, decision: Decision) -> Decision:
        """Entry routing (SPEC 8.3): from the node the turn moved into, through every node
        that does not wait (a transient node, a task node whose slots are known), running
        each one's skill on the way, to the node that speaks. A node is passed at most once
        per turn; the skill result of the last node that ran one stays readable where the
        chain stops (unless that node has a skill of its own)."""
        runtime = self.runtime
        state, target = decision.state, decision.next_node
        if waits(runtime.nodes[target], state.slots):  # most moves: nothing to pass, no lists
            return decision
        passed: list[tuple[str, str]] = []
        defaults = list(decision.defaults)
        sets = list(decision.sets)
        complete = False
        while True:
            table = runtime.nodes[target]
            if waits(table, state.slots) or any(node == table.id for node, _ in passed):
                break
            if needs_skill_run(table, state):
                state = run_node_skill(runtime, self.skills, table, state, decision)
            hop = entry_route(runtime, decision, state, table)
            if hop is None:
                break
            passed.append((table.id, hop[1]))
            if hop[0] is None:  # a transient end node: the chain completes, and it speaks
                state = replace(state, complete=True, complete_reason=hop[1])
                complete = True
                break
            state, stored, done = self._hop(table, runtime.nodes[hop[0]], state, hop[2])
            defaults += stored
            if done:  # what the next node's entry routing reads as slots_updated (17.20)
                sets += done
                decision = replace(decision, sets=tuple(sets))
            target = hop[0]
        if not passed:
            return decision
        return replace(decision, next_node=target, state=state, complete=complete,
                       passed=tuple(passed), defaults=tuple(defaults), sets=tuple(sets))

    def _hop(self, left: Any, entered: Any, state: DialogueState,
             sets: Any = ()) -> tuple[DialogueState, tuple, tuple]:
        """The state after one hop of entry routing: the route's `sets` applied, `left`'s
        defaults stored, `entered`'s slots cleared and its `on_enter` applied (SPEC 17.20), a
        fresh visit; the skill result carried unless `entered` runs one."""
        slots, done = apply_sets(self.runtime, state.slots, sets) if sets else (state.slots, ())
        slots, pending, stored, entered_sets = crossed_slots(
            self.runtime, left, entered, slots, state.pending_confirmation, state.profile)
        done += entered_sets
        carried = entered.executor != ir.EXECUTOR_SKILL
        new = replace(state, current_node=entered.id, previous_node=left.id, node_turns=0,
                      fallback_retries=0, fallback_exhausted=False, turn_limit_reached=False,
                      slots=slots, pending_confirmation=pending,
                      skill_status=state.skill_status if carried else "none",
                      skill_data=state.skill_data if carried else {})
        return new, stored, done

    def _understand(self, text: str, state: DialogueState,
                    override: NLUResult | dict | None) -> tuple[NLUResult, str | None]:
        """Step 2's NLU call (empty input is silence without asking anyone), with the safety
        detector beside it: (the result with the merged category, who found the category)."""
        if not text or text.isspace():
            return NLUResult(dialogue_act="silence", text=text or ""), None
        if override is not None:
            try:
                result = nlu_result(override, text)
            except ValueError as error:
                raise EngineError(str(error)) from None
        else:
            table = self.runtime.node_named(state.current_node)
            if table is None:
                raise EngineError(f"node {state.current_node!r} is not in this scenario")
            context = NLUContext(self.runtime.program, table.node, state, self.runtime)
            result = nlu_result(self.nlu.parse(text, context), text)
        detected = self.runtime.safety.detect(text)
        safety = merge(detected, result.safety)
        if safety != result.safety:
            result = replace(result, safety=safety)
        return result, None if safety is None else "detector" if detected else "nlu"

    def _result(self, text: str, result: NLUResult, decision: Decision, state: DialogueState,
                handled: str, response: str) -> TurnResult:
        runtime = self.runtime
        next_node = runtime.nodes[decision.next_node].id \
            if decision.next_node is not None and not decision.complete else None
        intent = runtime.intent_names[decision.intent] if decision.intent is not None else None
        return TurnResult(state.session_turns, text, handled, next_node, decision.reason,
                          decision.complete, response, decision, state.focus,
                          result.source or None, state.slots, result, intent)

    # --- inspection --------------------------------------------------------------------

    def session(self, session_id: str) -> DialogueState:
        """A copy of the stored state of a session (`SessionNotFound` if there is none): what
        the caller changes in it never reaches the store."""
        record = self.store.get(session_id)
        if record is None:
            raise SessionNotFound(f"no session {session_id}; start it first")
        state = record[0]
        return replace(state, slots=dict(state.slots), skill_data=dict(state.skill_data),
                       history=list(state.history), rotation=dict(state.rotation))
