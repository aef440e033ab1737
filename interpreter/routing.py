"""The routing core: one user turn as a pure function (SPEC 6.2 steps 1-7).

In: a `Runtime`, the session's `DialogueState`, the turn's `NLUResult` and, optionally, an
`ExecutorOutcome` (a transition requested from outside the pure core).
Out: a `Decision`: where the turn was handled, where the session goes (`next_node`, None once
complete), the kind (move / stay / complete / fallback), the reason code of SPEC 6.2, the
fallback kind, the missing slots, the turn-limit flag, the slot update, the tier that fired
and the facts the conditions read. `Decision.state` is the new state. The trace of every
transition evaluated is not kept: `evaluations` replays it from the facts when asked.
After: no I/O happened and the input state is untouched: the new state is built in one
`msgspec.structs.replace` at the end, so nothing is half-updated if anything raises.

The rules that bit the original system (seed 002) live here:
- a global transition whose target is the current node is skipped (it never pins a node);
- `system.conversation_resuming` is true exactly on an end node, on a user turn, when the act
  is not a closing act (`null` never is: a user who spoke is still there);
- spoken input labelled `silence` is `null`; `negate` is `deny`; a `null` act with a declared
  intent is `inform`; an undeclared intent is null; empty input is `silence` whatever the NLU
  said (its slots are ignored);
- the fallback policy re-prompts at most `max_fallback_retries` consecutive times, then sets
  `fallback_exhausted` and lets routing decide; it never ends the session itself;
- the turn limit at an end node is Action END (before every tier but safety); elsewhere it
  sets `turn_limit_reached`, which lifts the min_turns and required-slot gates;
- safety (SPEC 10) comes first: a turn whose safety category (`NLUResult.safety`, the
  detector's finding merged with the NLU's by the engine) has a `graph.safety` rule goes to
  its target, before the fallback policy and Action END (reason `safety:CATEGORY`, tier
  `safety`); a rule that targets the current node holds it and is still reported. A `null`
  act with a safety finding is read as `inform` (the user said something that matters: never
  "I did not understand"); silence has no category.

- tasks (SPEC 8): a global transition that reads `system.idle_seconds` is tried before the
  fallback policy (tier `idle`): after a long pause the first words, understood or not,
  never keep a stale task alive; a move stores the defaults of the node left and clears the
  `clear_slots` of the node entered (`crossed_slots`); `entry_route` is the routing of a
  node entered that does not wait (transient, or a task node whose slots are known).

Focus mode (`state.focus`): the decision reports what routing would do; the state stays in
the node (a would-be move or completion restarts the visit's counters, like a re-entry).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from . import MagoError
from . import ir
from .executors import ExecutorOutcome, all_collected, missing_slots
from .loader import NodeTable, Runtime, display_value
from .understanding.expects import NOTE as EXPECTS_NOTE, unexpected
from .understanding.nlu import NLUResult
from .slots import VALIDATION_REASONS, SlotUpdate, apply_sets, apply_slots, check_value
from .state import DialogueState

ACT_INDEX = {name: i for i, name in enumerate(ir.ACTS)}
AFFIRM, DENY, INFORM = ACT_INDEX["affirm"], ACT_INDEX["deny"], ACT_INDEX["inform"]
SILENCE, NULL = ACT_INDEX["silence"], ACT_INDEX["null"]
NEGATE = "negate"  # an act an NLU may say that is read as deny (SPEC 6.2 step 2)
KNOWN_ACTS = frozenset(ir.ACTS) | {NEGATE}  # any other act is unknown, read as null

MOVE, STAY, COMPLETE, FALLBACK, OPEN = "move", "stay", "complete", "fallback", "open"

# The facts list mirrors ir.FIXED_FIELDS; fail loudly at import if that table ever changes.
_FACT_ORDER = (
    "nlu.intent", "nlu.dialogue_act", "nlu.confidence", "nlu.text", "nlu.safety",
    "system.current_node",
    "system.previous_node", "system.node_turns", "system.session_turns",
    "system.no_input_count", "system.not_understood_count", "system.fallback_exhausted",
    "system.conversation_resuming", "system.turn_limit_reached", "system.min_turns_met",
    "system.required_slots_filled", "skill.status", "system.slots_updated",
    "system.idle_seconds",
)
if tuple(f[0] for f in ir.FIXED_FIELDS) != _FACT_ORDER:
    raise ImportError("interpreter.routing: the facts layout no longer matches ir.FIXED_FIELDS")


class RoutingError(MagoError):
    """The state cannot be routed (complete session, node gone from the scenario)."""


class Decision(msgspec.Struct, frozen=True):
    """Everything a turn decided; the NLG words it, the CLI prints it, the engine saves `state`."""

    handled_node: int  # node index where the turn was handled
    next_node: int | None  # where the session is now (None once complete)
    kind: str  # "move", "stay", "complete", "fallback" (a re-prompt) or "open"
    reason: str  # reason code of SPEC 6.2 ("opening" for the opening)
    tier: str  # the routing tier that fired
    state: DialogueState  # the state after this turn
    intent: int | None = None  # read intent (index into program.intents)
    act: int = NULL  # read dialogue act (index into ir.ACTS)
    fallback: str | None = None  # "no_input" / "not_understood" on a silent / null turn
    fallback_exhausted: bool = False
    missing_slots: tuple[int, ...] = ()  # required collect slots of the handled node
    turn_limit_reached: bool = False
    complete: bool = False
    resuming: bool = False  # system.conversation_resuming
    slot_update: SlotUpdate | None = None  # None: no slot values and nothing pending
    notes: tuple[str, ...] = ()  # how the NLU result was read (corrections)
    facts: Any = None  # the facts the conditions read (list laid out like the field table)
    hint: str | None = None  # from the executor outcome
    focus: bool = False  # focus mode: the state did not follow the decision
    defaults: tuple = ()  # ((slot, value), ...) stored on leaving a node (SPEC 8.2)
    passed: tuple = ()  # ((node id, reason), ...) nodes the turn passed through (SPEC 8.3)
    sets: tuple = ()  # ((slot, value, problem), ...) of `set` and `on_enter` (SPEC 14.5)


def read_nlu(runtime: Runtime, nlu: NLUResult) -> tuple[int | None, int, tuple[str, ...]]:
    """(intent index or None, act index, notes): the NLU result read by the rules of step 2."""
    text = nlu.text
    if not text or text.isspace():
        noted = () if nlu.dialogue_act in (None, "silence") else (
            f"empty input is silence (NLU said {nlu.dialogue_act})",)
        return None, SILENCE, noted
    name = nlu.dialogue_act
    act = NULL if name is None else ACT_INDEX.get(name)
    intent = None if nlu.intent is None else runtime.intent_index.get(nlu.intent)
    if act is None or act == SILENCE or (intent is None) is not (nlu.intent is None) or (
            act == NULL and intent is not None):
        return _corrected(name, act, intent, nlu.intent)
    return intent, act, ()


def _corrected(name: str | None, act: int | None, intent: int | None,
               intent_name: str | None) -> tuple[int | None, int, tuple[str, ...]]:
    """The reading rules that change what the NLU said, each with its note."""
    notes: list[str] = []
    if name == NEGATE:
        act = DENY
        notes.append("negate read as deny")
    elif act is None:
        act = NULL
        notes.append(f"unknown act {name!r} read as null")
    if act == SILENCE:
        act = NULL
        notes.append("spoken input labelled silence read as null")
    if intent is None and intent_name is not None:
        notes.append(f"undeclared intent {intent_name!r} read as null")
    if act == NULL and intent is not None:
        act = INFORM
        notes.append("null act with a declared intent read as inform")
    return intent, act, tuple(notes)


_FALLBACK_KINDS = {SILENCE: "no_input", NULL: "not_understood"}
# Indices into the facts list (the field table) that tier selection reads back.
F_NODE_TURNS = ir.FIELD_INDEX["system.node_turns"]
F_TURN_LIMIT = ir.FIELD_INDEX["system.turn_limit_reached"]
F_SAFETY = ir.FIELD_INDEX["nlu.safety"]
F_ACT, F_NODE = ir.FIELD_INDEX["nlu.dialogue_act"], ir.FIELD_INDEX["system.current_node"]
F_PREVIOUS = ir.FIELD_INDEX["system.previous_node"]
F_EXHAUSTED = ir.FIELD_INDEX["system.fallback_exhausted"]
F_RESUMING = ir.FIELD_INDEX["system.conversation_resuming"]
F_MIN_TURNS_MET = ir.FIELD_INDEX["system.min_turns_met"]
F_REQUIRED = ir.FIELD_INDEX["system.required_slots_filled"]
F_SKILL = ir.FIELD_INDEX["skill.status"]
F_UPDATED = ir.FIELD_INDEX["system.slots_updated"]
_NO_LATE_FACTS = [False]  # `ir.LATE_FIELDS` of a turn no NLU ran: nothing declined
if len(_NO_LATE_FACTS) != len(ir.LATE_FIELDS):
    raise ImportError("interpreter.routing: the late facts no longer match ir.LATE_FIELDS")
_CATEGORIES = ir.SAFETY_CATEGORIES  # a tuple: `in` never hashes what a plug-in put there
SAFETY_NOTE = "null act with a safety finding read as inform"


def safety_of(decision: Decision) -> str | None:
    """The safety category a turn's routing read (None: none, or no NLU: the opening)."""
    facts = decision.facts
    found = facts[F_SAFETY] if facts is not None else None
    return found if found in _CATEGORIES else None


def route_turn(runtime: Runtime, state: DialogueState, nlu: NLUResult,
               outcome: ExecutorOutcome | None = None, idle: int = 0) -> Decision:
    """Steps 1-7 of SPEC 6.2 for one user turn; pure. `idle`: seconds since the session's
    previous turn (`system.idle_seconds`, from the engine's clock). At a node that declares
    `params.expects` (SPEC 13.3), a turn that heard none of it, and that neither the safety
    tier nor a global transition takes, is routed again read as not understood."""
    decision = _route_turn(runtime, state, nlu, outcome, idle)
    node = runtime.nodes[decision.handled_node].node
    if node.expects is None or decision.tier in ("safety", "global"):
        return decision
    update = decision.slot_update
    stored = tuple(name for name, _ in update.stored) if update is not None else ()
    if not unexpected(runtime, node, decision.intent, ir.ACTS[decision.act], stored,
                              state.pending_confirmation is not None):
        return decision
    unheard = replace(nlu, intent=None, dialogue_act=None)
    again = _route_turn(runtime, state, unheard, outcome, idle)
    return replace(again, notes=(*again.notes, EXPECTS_NOTE))


def _route_turn(runtime: Runtime, state: DialogueState, nlu: NLUResult,
                outcome: ExecutorOutcome | None, idle: int) -> Decision:
    """Steps 1-7 of SPEC 6.2; the hot path of every turn, so the steps are written out here
    in order rather than in one function each."""
    table = _current_table(runtime, state)
    if outcome is not None:
        _check_outcome(runtime, outcome)
    intent, act, notes = read_nlu(runtime, nlu)
    safety = nlu.safety if act != SILENCE and nlu.safety in _CATEGORIES else None
    if safety is not None and act == NULL:
        act, notes = INFORM, (*notes, SAFETY_NOTE)
    update, slots, pending = None, state.slots, state.pending_confirmation
    heard = nlu.slots
    declined = act == DENY and table.declines and pending is None and not (
        heard and any(heard.get(name) is not None for name in table.collect_names))
    if table.answers is not None and pending is None and act in table.answers:
        heard = answered(heard, table.answers[act])  # SPEC 18.3-18.4: a bare yes or no
    if (heard and act != SILENCE) or pending is not None:  # step 2, slot part
        update = apply_slots(runtime, slots, pending, heard if act != SILENCE else {}, act)
        slots, pending = update.slots, update.pending
    fallback = _FALLBACK_KINDS.get(act)  # step 4: the fallback policy
    retries = state.fallback_retries if fallback is not None else 0
    reprompt = fallback is not None and retries < table.max_fallback_retries
    exhausted = fallback is not None and not reprompt
    node_turns = state.node_turns + 1  # step 5: the executor's structural part
    limit = table.turn_limit
    limit_hit = limit is not None and node_turns >= limit and not reprompt
    turn_limit = state.turn_limit_reached or limit_hit
    missing = missing_slots(table, slots) if table.required else ()
    session_turns = state.session_turns + 1
    no_input = state.no_input_count + 1 if act == SILENCE else 0
    not_understood = state.not_understood_count + 1 if act == NULL else 0
    resuming = table.is_end and act not in runtime.closing_acts
    facts = [
        intent, act, nlu.confidence, nlu.text, safety or "none", table.index,
        runtime.node_index.get(state.previous_node) if state.previous_node else None,
        node_turns, session_turns, no_input, not_understood, exhausted, resuming, turn_limit,
        node_turns >= table.min_turns, not missing, state.skill_status,
        update is not None and bool(update.stored), idle,
    ]
    facts.extend(map(slots.get, runtime.slot_names))
    if runtime.profile_names:
        facts.extend(map(state.profile.get, runtime.profile_names))
    facts.append(declined)  # ir.LATE_FIELDS
    rule = runtime.safety_routes.get(safety) if safety is not None else None
    if rule is not None:  # SPEC 10: before the fallback policy and Action END
        kind = STAY if rule.target == table.index else MOVE
        target, reason, tier = rule.target, rule.reason, "safety"
    elif reprompt and (pause := _pause_route(runtime, table, facts)) is not None:
        kind, target, reason, tier = MOVE, pause.target, pause.reason, "idle"
        retries = 0
    elif reprompt:  # step 6: the node holds and routing is skipped
        kind, target, reason, tier = FALLBACK, table.index, "fallback:" + fallback, "fallback"
        retries += 1
    elif limit_hit and table.is_end:  # Action END: nothing else is evaluated
        kind, target, reason, tier = COMPLETE, None, "action_end", "action_end"
    else:
        asking = update is not None and update.asked is not None
        kind, target, reason, tier = _choose(runtime, table, facts, missing, outcome, asking)
    complete = kind == COMPLETE  # step 7: the state after the turn, built in one go
    defaults = done = ()
    if table.sets or runtime.global_sets:  # SPEC 17.20: the route's set, before the move
        route_sets = route_sets_of(runtime, table, tier, reason)
        if route_sets:
            slots, done = apply_sets(runtime, slots, route_sets)
    if kind == MOVE and not state.focus:
        entered = runtime.nodes[target]
        if entered.clear or entered.on_enter or (runtime.defaults and table.collect):
            slots, pending, defaults, entered_sets = crossed_slots(
                runtime, table, entered, slots, pending, state.profile)
            done += entered_sets
        new_state = replace(
            state, current_node=entered.id, previous_node=table.id,
            node_turns=0, session_turns=session_turns, no_input_count=no_input,
            not_understood_count=not_understood, fallback_retries=0, fallback_exhausted=False,
            turn_limit_reached=False, slots=slots, pending_confirmation=pending,
            skill_status="none", skill_data={})
    elif state.focus and (kind == MOVE or complete):  # report, do not follow: a new visit
        new_state = replace(
            state, node_turns=0, session_turns=session_turns, no_input_count=no_input,
            not_understood_count=not_understood, fallback_retries=0, fallback_exhausted=False,
            turn_limit_reached=False, slots=slots, pending_confirmation=pending)
    else:
        new_state = replace(
            state, node_turns=node_turns, session_turns=session_turns, no_input_count=no_input,
            not_understood_count=not_understood, fallback_retries=retries,
            fallback_exhausted=exhausted, turn_limit_reached=turn_limit, slots=slots,
            pending_confirmation=pending, complete=complete,
            complete_reason=reason if complete else None)
    return Decision(
        table.index, target, kind, reason, tier, new_state, intent, act, fallback, exhausted,
        missing, turn_limit, complete, resuming, update, notes, facts,
        outcome.hint if outcome is not None else None, state.focus, defaults, sets=done)


def answered(heard: dict, values: tuple) -> dict:
    """The values heard, with the value a bare affirm or deny stores for each collect slot
    the NLU heard nothing for (SPEC 18.3-18.4: "응" to "약 드셨어요?" is `taken`)."""
    missing = [(name, value) for name, value in values if heard.get(name) is None]
    return {**heard, **dict(missing)} if missing else heard


def route_sets_of(runtime: Runtime, table: NodeTable, tier: str, reason: str) -> Any:
    """The `set` of the route a turn took (None: it sets nothing)."""
    if tier in ("global", "idle"):
        return runtime.global_sets.get(reason)
    if tier in ("next_nodes", "default_next"):
        return table.sets.get(reason)
    return None


# --- crossing from node to node (SPEC 8.2, 8.3, 8.5) ---------------------------------------


def crossed_slots(runtime: Runtime, left: NodeTable, entered: NodeTable, slots: dict,
                  pending: Any, profile: dict) -> tuple[dict, Any, tuple, tuple]:
    """The slots after leaving `left` and entering `entered`: the defaults of `left`'s collect
    slots that are still empty are stored (a `{profile.NAME}` default only when the profile
    has a value), then `entered`'s `clear_slots` are cleared (a confirmation pending on one
    of them is dropped), then its `on_enter.set` applies (SPEC 17.20). (slots, pending,
    ((slot, default), ...), sets as `apply_sets` gives them); the input is not changed."""
    stored = []
    for name in left.collect_names:
        if slots.get(name) is None and name in runtime.defaults:
            literal, field = runtime.defaults[name]
            value = literal if field is None else profile_default(runtime, name, profile.get(field))
            if value is not None:
                stored.append((name, value))
    if stored:
        slots = {**slots, **dict(stored)}
    if entered.clear:
        slots = {name: value for name, value in slots.items() if name not in entered.clear}
        if pending is not None and pending.slot in entered.clear:
            pending = None
    done: tuple = ()
    if entered.on_enter:
        slots, done = apply_sets(runtime, slots, entered.on_enter)
    return slots, pending, tuple(stored), done


def profile_default(runtime: Runtime, slot: str, value: Any) -> Any:
    """A profile value as the default of `slot`, when the slot accepts it (its pattern and
    bounds are the slot's, not the profile field's), else None; one item makes a list."""
    if value is None:
        return None
    ok, normal, _ = check_value(runtime.slot_rules[runtime.slot_index[slot]], value)
    return normal if ok else None


def waits(table: NodeTable, slots: dict) -> bool:
    """Whether a node a turn has entered waits for the user (and speaks): not a transient
    node, nor a task node whose collect slots are all known (`skip:filled`)."""
    return not table.transient and not (table.skips_filled and all_collected(table, slots))


def entry_route(runtime: Runtime, decision: Decision, state: DialogueState,
                table: NodeTable) -> tuple[int | None, str, Any] | None:
    """The entry routing of a node the turn has just entered that does not wait (SPEC 8.3):
    its `next_nodes`, then `default_next` (no gates, no globals, no fallback), on the turn's
    NLU facts and the node's fresh system facts (node turn 0, its skill status).
    (target, reason, sets) for a route taken (reason `skip:filled` for a task node passed
    because its slots are known; `sets`: the route's `set`); (None, "terminal", ()) for a
    transient end node where the chain
    completes; None when the node stays after all (it then speaks)."""
    facts = entry_facts(runtime, decision.facts, table, state)
    if decision.sets:  # SPEC 17.20: sets count for system.slots_updated
        facts[F_UPDATED] = True
    for route in table.routes:
        if route.test is None or route.test(facts):
            if route.target == ir.STAY:
                return None
            sets = table.sets.get(route.reason, ()) if table.sets else ()
            return route.target, route.reason if table.transient else "skip:filled", sets
    if table.transient and table.is_end:
        return None, "terminal", ()
    return None


def entry_facts(runtime: Runtime, turn_facts: list, table: NodeTable,
                state: DialogueState) -> list:
    """The turn's facts as a node just entered sees them: the NLU part and the counters of the
    turn, this node's fresh visit (node turn 0, no limit, its gates, its skill status) and the
    slots as they are now."""
    facts = list(turn_facts[:ir.SLOT_FIELD_BASE])
    slots = state.slots
    missing = missing_slots(table, slots)
    facts[F_NODE] = table.index
    facts[F_PREVIOUS] = runtime.node_index.get(state.previous_node) if state.previous_node \
        else None
    facts[F_NODE_TURNS] = 0
    facts[F_EXHAUSTED] = False
    facts[F_RESUMING] = table.is_end and facts[F_ACT] not in runtime.closing_acts
    facts[F_TURN_LIMIT] = False
    facts[F_MIN_TURNS_MET] = table.min_turns <= 0
    facts[F_REQUIRED] = not missing
    facts[F_SKILL] = state.skill_status
    facts.extend(map(slots.get, runtime.slot_names))
    facts.extend(map(state.profile.get, runtime.profile_names))
    facts.extend(late_facts(runtime, turn_facts))
    return facts


def late_facts(runtime: Runtime, turn_facts: list) -> list:
    """The `ir.LATE_FIELDS` part of a turn's facts (a turn's own: `system.slot_declined` is
    true for that turn, at the node entered too); none for an opening's."""
    if len(turn_facts) != runtime.field_count:
        return _NO_LATE_FACTS
    return turn_facts[runtime.field_count - len(ir.LATE_FIELDS):]


# The facts of an opening (no NLU ran): a first turn at the node, nothing heard.
_OPENING_FACTS = [None, NULL, None, "", "none", 0, None, 1, 1, 0, 0, False, False, False,
                  True, True, "none", False, 0]


def speaker_facts(runtime: Runtime, decision: Decision, table: NodeTable,
                  state: DialogueState) -> list:
    """The facts a conditional line of the node that speaks reads (SPEC 17.21: that node's,
    after the move): on a move, the node entered as entry routing sees it; on a stay, the
    turn's facts; the slots as they are now; sets count for `system.slots_updated`."""
    turn = decision.facts if decision.facts is not None else _OPENING_FACTS
    if decision.kind == MOVE or decision.facts is None:
        facts = entry_facts(runtime, turn, table, state)
        facts[F_NODE_TURNS] = turn[F_NODE_TURNS] if decision.facts is None else 0
    else:
        facts = list(turn[:ir.SLOT_FIELD_BASE])
        facts.extend(map(state.slots.get, runtime.slot_names))
        facts.extend(map(state.profile.get, runtime.profile_names))
        facts.extend(late_facts(runtime, turn))
    if decision.sets:
        facts[F_UPDATED] = True
    return facts


def _pause_route(runtime: Runtime, table: NodeTable, facts: list) -> Any:
    """The first global transition that reads `system.idle_seconds` and matches, on a turn the
    fallback policy would re-prompt (None: none). After a long pause, what the user says first
    ("음...") must not keep a stale task alive: the pause decides (seed 004's 30-minute reset).
    Like every global, one that targets the current node is skipped."""
    for route in runtime.idle_globals:
        if route.target != table.index and route.test(facts):
            return route
    return None


def _current_table(runtime: Runtime, state: DialogueState) -> NodeTable:
    if state.complete:
        raise RoutingError(f"session {state.session_id} is complete")
    index = runtime.node_index.get(state.current_node)
    if index is None:
        raise RoutingError(f"node {state.current_node!r} of session {state.session_id} "
                           "is not in this scenario")
    return runtime.nodes[index]


def _check_outcome(runtime: Runtime, outcome: ExecutorOutcome) -> None:
    if outcome.request is not None and not 0 <= outcome.request < len(runtime.nodes):
        raise RoutingError(f"executor requested unknown node index {outcome.request}")


def _choose(runtime: Runtime, table: NodeTable, facts: list, missing: tuple[int, ...],
            outcome: ExecutorOutcome | None, asking: bool,
            record: list | None = None) -> tuple[str, Any, str, str]:
    """Step 6, tiers 2-8 (tier 1, Action END, is decided before). `asking`: this turn raised a
    slot confirmation, which holds the node like a gate so that the next turn answers it
    before anything moves on (one question at a time). `record`, when given, receives
    (source, result) for every transition looked at (`evaluations` replays a turn with it)."""
    here = table.index
    for route in runtime.globals:
        if route.target == here:  # going where you are instructs nothing (seed 002)
            if record is not None:
                record.append((route.source, None))
            continue
        matched = route.test is None or route.test(facts)
        if record is not None:
            record.append((route.source, matched))
        if matched:
            return MOVE, route.target, route.reason, "global"
    if outcome is not None and outcome.request is not None and outcome.request != here:
        return MOVE, outcome.request, "request:" + outcome.source, "request"
    if not facts[F_TURN_LIMIT]:  # the turn limit lifts both gates
        if facts[F_NODE_TURNS] < table.min_turns:
            return STAY, here, "gate:min_turns", "gate"
        if missing:
            return STAY, here, "gate:required_slots", "gate"
        if asking:
            return STAY, here, "gate:confirmation", "gate"
    for route in table.routes:
        matched = route.test is None or route.test(facts)
        if record is not None:
            record.append((route.source, matched))
        if matched:
            if route.target == ir.STAY:
                return STAY, here, route.reason, route.tier
            return MOVE, route.target, route.reason, route.tier
    if table.is_end:
        return COMPLETE, None, "terminal", "terminal"
    return STAY, here, "no_route", "no_route"


def opening_decision(runtime: Runtime, state: DialogueState) -> Decision:
    """The decision of an opening turn (SPEC 6.1): no NLU, no routing, the node speaks."""
    table = _current_table(runtime, state)
    return Decision(table.index, table.index, OPEN, "opening", "opening", state,
                    missing_slots=missing_slots(table, state.slots), focus=state.focus)


# --- trace --------------------------------------------------------------------------------


def evaluations(runtime: Runtime, decision: Decision) -> list[tuple[int, bool | None]]:
    """(source index, True | False | None = skipped) for every transition routing looked at
    in `decision`, in order. Replayed on the decision's facts (conditions are pure), so a turn
    that nobody traces records nothing."""
    if decision.facts is None or decision.tier in ("fallback", "action_end", "safety"):
        return []
    if decision.tier == "idle":  # the one global tried before the fallback policy
        route = next(r for r in runtime.idle_globals if r.reason == decision.reason)
        return [(route.source, True)]
    asking = decision.slot_update is not None and decision.slot_update.asked is not None
    request = ExecutorOutcome(decision.next_node) if decision.tier == "request" else None
    record: list = []
    _choose(runtime, runtime.nodes[decision.handled_node], decision.facts,
            decision.missing_slots, request, asking, record)
    return record


def describe_transition(runtime: Runtime, source: int, facts: Any, result: bool | None) -> str:
    """`label: display  [field = value, ...] -> true|false` (or `-> skipped`)."""
    entry = runtime.program.source_map[source]
    display = entry.display or "(always)"
    if result is None:
        return f"{entry.label}: {display}  -> skipped (targets the current node)"
    values = ", ".join(
        f"{ir.field_name(runtime.program, i)} = {display_value(runtime, i, facts[i])}"
        for i in runtime.source_fields[source]) if facts is not None else ""
    shown = f"  [{values}]" if values else ""
    return f"{entry.label}: {display}{shown} -> {'true' if result else 'false'}"


def trace_lines(runtime: Runtime, decision: Decision, detailed: bool = True) -> list[str]:
    """The decision explained, one line per fact; transitions only when `detailed`."""
    lines = [_nlu_line(runtime, decision)] if decision.kind != OPEN else []
    lines += [f"nlu: {note}" for note in decision.notes]
    if decision.slot_update is not None:
        lines += _slot_lines(decision.slot_update)
    if decision.fallback is not None:
        budget = runtime.nodes[decision.handled_node].max_fallback_retries
        state = (f"re-prompt {decision.state.fallback_retries} of {budget}"
                 if decision.kind == FALLBACK else "budget spent, routing decides")
        lines.append(f"policy: fallback {decision.fallback} ({state})")
    if decision.missing_slots:
        names = ", ".join(runtime.slot_names[i] for i in decision.missing_slots)
        lines.append(f"executor: missing required slots: {names}")
    if decision.turn_limit_reached:
        lines.append("executor: turn limit reached")
    if decision.resuming:
        lines.append("system: conversation_resuming")
    safety = safety_of(decision)
    if safety is not None:
        rule = runtime.safety_routes.get(safety)
        lines.append(f"safety: {safety}" + ("" if rule is not None else " (no graph.safety rule)"))
    if detailed:
        lines += ["transition " + describe_transition(runtime, source, decision.facts, result)
                  for source, result in evaluations(runtime, decision)]
    lines += [f"slot default: {name} = {_json(value)}" for name, value in decision.defaults]
    lines += [f"slot stored: {name} = {_json(value)} (set)" if not problem else
              f"slot dropped: {name} = {_json(value)} (set: {problem})"
              for name, value, problem in decision.sets]
    lines += [f"passed: {node} ({reason})" for node, reason in decision.passed]
    target = "complete" if decision.next_node is None or decision.complete \
        else runtime.nodes[decision.next_node].id
    lines.append(f"route: {decision.tier} -> {decision.reason} ({decision.kind} -> {target})")
    return lines


def _nlu_line(runtime: Runtime, decision: Decision) -> str:
    intent = runtime.intent_names[decision.intent] if decision.intent is not None else "null"
    return f"nlu: intent={intent} act={ir.ACTS[decision.act]}"


def _slot_lines(update: SlotUpdate) -> list[str]:
    lines = [f"slot stored: {name} = {_json(value)}" for name, value in update.stored]
    for name, value, reason in update.dropped:
        kind = "invalid" if reason in VALIDATION_REASONS else "dropped"
        lines.append(f"slot {kind}: {name} = {_json(value)} ({reason})")
    if update.asked is not None:
        lines.append(f"slot confirm: {update.asked.slot} = {_json(update.asked.value)}?")
    if update.resolved is not None:
        lines.append(f"slot confirmation {update.resolved}")
    return lines


def _json(value: Any) -> str:
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return repr(value)
