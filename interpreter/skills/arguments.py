"""A skill's arguments as the skill gets them (SPEC 8.4, 14.4, 17.21, 17.24).

In: the node table of the skill's node, the state that node sees, and the turn's decision
(None at an opening). Out: the arguments. Each text's placeholders are filled by plain
lookup (raw values, never labels; a placeholder without a value is empty text). An argument
written as conditional lines is rendered as a reply's lines are: the lines whose `when` holds
on the facts of the skill's node after the move (`routing.speaker_facts`, what the node's
reply lines read), each filled like a reply sentence (a sentence whose placeholder has no
value is left out), joined by the lines' `join`. When no line holds, the argument is left
out, as a response none of whose lines holds counts as not written (SPEC 17.21): the skill
gets what it gets for an argument not given. The facts are built only when a line has a
`when`, so a node without one pays nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..placeholders import fill_argument, fill_placeholders

if TYPE_CHECKING:
    from ..loader import NodeTable, Runtime
    from ..routing import Decision
    from ..state import DialogueState


def skill_arguments(runtime: Runtime, table: NodeTable, state: DialogueState,
                    decision: Decision | None) -> dict[str, Any]:
    """The node's `skill_args` filled, and its arguments written as lines rendered."""
    args = fill_argument(table.node.skill_args, state.slots, state.profile)
    if table.skill_lines is None:
        return args
    facts = _facts(runtime, table, state, decision) if any(
        test is not None for _, lines in table.skill_lines.values() for test, _ in lines) \
        else []  # no line reads a fact
    for argument, (joiner, lines) in table.skill_lines.items():
        held = [text for test, text in lines if test is None or test(facts)]
        if held:
            parts = [fill_placeholders(text, state.slots, {}, None, state.profile)
                     for text in held]
            args[argument] = joiner.join(part for part in parts if part)
    return args


def _facts(runtime: Runtime, table: NodeTable, state: DialogueState,
           decision: Decision | None) -> list:
    """The facts a line of the skill's node reads (an opening's when there is no decision)."""
    from ..routing import opening_decision, speaker_facts  # routing imports the executors

    return speaker_facts(runtime, decision or opening_decision(runtime, state), table, state)
