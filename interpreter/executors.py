"""Executors (SPEC 6.2 step 5): what the current node's kind contributes to a turn.

The kind is decided by the compiler (`ir.EXECUTOR_*`); nodes are never classified by name.
- general: nothing structural.
- task: the missing required collect slots, in `collect_slots` order; the first is asked next.
- skill: runs its skill when the node first speaks in a visit (the opening, or the turn that
  moves into it), so the result can shape that response; `skill_status` / `skill_data` then
  hold for the rest of the visit. Its arguments (`skill_arguments`): each text's placeholders
  filled by plain lookup (raw values, never labels; no value: empty text); an argument
  written as conditional lines (SPEC 14.4, 17.21) rendered as a reply's lines are, on the
  facts of the skill's node after the move (`routing.speaker_facts`; an opening's at an
  opening): the lines whose `when` holds, each filled like a reply sentence (one whose
  placeholder has no value is left out), joined; left out when no line holds (as a response
  none of whose lines holds counts as not written). The facts are built only when a line
  has a `when`. Failure or timeout makes `params.fallback` the response hint.
Every kind applies the turn limit: at an end node it is Action END, elsewhere it sets
`turn_limit_reached`, which lifts the min_turns and required-slot gates.

In: a `NodeTable` and the turn's slots (`missing_slots`, `all_collected`, pure), or the state
after routing (`run_node_skill`, the I/O part). Out: the missing slots, or a state with the
skill's result. `ExecutorOutcome` is what an executor or a policy outside the pure core hands to
`route_turn` (a transition request, a hint).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from . import ir
from .placeholders import fill_argument, fill_placeholders
from .skills.registry import SkillContext, SkillRegistry, run_skill
from .state import ACTIONS_KEPT, ActionRecord

if TYPE_CHECKING:
    from .loader import NodeTable, Runtime
    from .routing import Decision
    from .state import DialogueState


class ExecutorOutcome(msgspec.Struct, frozen=True):
    """A request from outside the pure core: go to `request` (node index) because of `source`."""

    request: int | None = None
    source: str = ""  # the reason reads `request:SOURCE`
    hint: str | None = None  # passed through to the NLG


def missing_slots(table: NodeTable, slots: dict[str, Any]) -> tuple[int, ...]:
    """Required collect slots of the node that are not known, in declaration order (a list
    slot is known with at least `min_items` items)."""
    if not table.required:
        return ()
    return tuple(index for index, name, least in
                 zip(table.required, table.required_names, table.required_mins)
                 if (value := slots.get(name)) is None or value == [] or (
                     least and len(value) < least))


def all_collected(table: NodeTable, slots: dict[str, Any]) -> bool:
    """Whether every collect slot of the node is known (SPEC 8.3 `skip:filled`)."""
    return all((value := slots.get(name)) is not None and value != [] and not (
        least and len(value) < least) for name, least in zip(table.collect_names, table.collect_mins))


def needs_skill_run(table: NodeTable, state: DialogueState) -> bool:
    """True when the node speaking now is a skill node that has not run in this visit."""
    return (table.executor == ir.EXECUTOR_SKILL and state.skill_status == "none"
            and not state.complete)


def action_id(session_id: str, turn: int, node_id: str) -> str:
    """The id of a skill run (SPEC 8.4): SESSION:TURN:NODE, the same when a turn that was
    not saved is tried again (its turn number is the same)."""
    return f"{session_id}:{turn}:{node_id}"


def kept_actions(state: DialogueState) -> list[Any]:
    """The completed actions a new one joins: every one of this turn (however long its chain:
    an id must never run twice in a turn) and the latest of earlier turns, `ACTIONS_KEPT` in
    all when the turn's own allow it."""
    this_turn = action_id(state.session_id, state.session_turns, "")
    current = [a for a in state.actions if a.action_id.startswith(this_turn)]
    earlier = [a for a in state.actions if not a.action_id.startswith(this_turn)]
    room = max(0, ACTIONS_KEPT - 1 - len(current))
    return [*(earlier[-room:] if room else []), *current]


def action_node(action: str) -> str:
    """The node of an action id (node ids hold no ':'; session ids may)."""
    return action.rpartition(":")[2]


def run_node_skill(runtime: Runtime, registry: SkillRegistry, table: NodeTable,
                   state: DialogueState, decision: Decision | None = None) -> DialogueState:
    """The state with the node's skill result for this visit (I/O: runs the skill), the run
    recorded as a completed action. A run whose action id is recorded is not run again: its
    recorded result is used. The skill gets its arguments filled (`skill_arguments`: an
    argument written as lines reads the facts of `decision`, None at an opening)."""
    node = table.node
    action = action_id(state.session_id, state.session_turns, node.id)
    done = next((a for a in state.actions if a.action_id == action), None)
    if done is not None:
        return msgspec.structs.replace(state, skill_status=done.status, skill_data=done.data)
    skill = registry.get(node.skill) if node.skill else None
    context = SkillContext(state.session_id, node.id, runtime.program.language,
                           dict(state.slots), action_id=action)
    args = skill_arguments(runtime, table, state, decision)
    result = run_skill(skill, args, context, node.timeout_ms)
    actions = [*kept_actions(state), ActionRecord(action, result.status, result.data)]
    return msgspec.structs.replace(state, skill_status=result.status, skill_data=result.data,
                                   actions=actions)


def skill_arguments(runtime: Runtime, table: NodeTable, state: DialogueState,
                    decision: Decision | None) -> dict[str, Any]:
    """The node's `skill_args` filled, and its arguments written as lines rendered."""
    args: dict[str, Any] = fill_argument(table.node.skill_args, state.slots, state.profile)
    if table.skill_lines is None:
        return args
    facts = _line_facts(runtime, table, state, decision) if any(
        test is not None for _, lines in table.skill_lines.values() for test, _ in lines) \
        else []  # no line reads a fact
    for argument, (joiner, lines) in table.skill_lines.items():
        held = [text for test, text in lines if test is None or test(facts)]
        if held:
            parts = [fill_placeholders(text, state.slots, {}, None, state.profile)
                     for text in held]
            args[argument] = joiner.join(part for part in parts if part)
    return args


def _line_facts(runtime: Runtime, table: NodeTable, state: DialogueState,
                decision: Decision | None) -> list[Any]:
    """The facts a line of the skill's node reads (an opening's when there is no decision)."""
    from .routing import opening_decision, speaker_facts  # routing imports this module

    return speaker_facts(runtime, decision or opening_decision(runtime, state), table, state)
