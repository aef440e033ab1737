"""NLG plug-in boundary and the `template` NLG (SPEC 6.2 step 8).

In: a routing `Decision` (already decided: wording never changes where the session goes) and
a `RenderContext` (runtime, state after the turn, skill results included). Out: the response.
After: the template NLG speaks for
- the opening: the node's `responses.default`, else the question of its first missing
  slot, else a common greeting;
- a move: the TARGET node, the same way (a resume from a closing node is worded by the node
  it resumes to, never by the closing node's farewell);
- a safety turn (SPEC 10): a move like any move (the target's `responses.default`: the help
  the user needs), a hold the current node's `responses.default` again, whatever else holds
  (an end node's farewell rule, the turn limit, a re-ask); no slot confirmation is asked;
- a stay: the current node: a failed validation re-asks that slot; the turn limit uses
  `responses.turn_limit`; a required-slot gate re-asks the first missing slot; a fallback
  that reached routing uses the fallback wording; at an end node a stay never repeats the
  farewell; otherwise `responses.default`;
- a re-prompt: `responses.no_input` / `not_understood`, else a common message;
- completion: `responses.complete`, else a short common acknowledgement.
A confirmation raised this turn (slot `on_conflict: confirm`) is asked first. A skill node
whose skill failed or timed out puts `params.fallback` before its sentence.

Placeholders `{slots.NAME}`, `{profile.NAME}` and `{skill.data.KEY}` are filled by plain
lookup (`interpreter.placeholders`). A sentence whose placeholder has no value is left out, so
the response never leaks braces or a half sentence ("오늘 날씨는 {skill.data.summary}."
disappears when the weather is unknown). Common messages are Korean or English after `program.language`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from ..executors import missing_slots
from ..placeholders import fill_placeholders, format_value, unfilled_placeholders  # noqa: F401
from ..routing import COMPLETE, FALLBACK, MOVE, OPEN, Decision

if TYPE_CHECKING:
    from ..loader import NodeTable, Runtime
    from ..state import DialogueState, PendingConfirmation

MESSAGES: dict[str, dict[str, str]] = {
    "ko": {
        "greeting": "안녕하세요! 오늘 이야기 나눠요.",
        "continue": "네, 말씀해 주세요.",
        "no_input": "혹시 듣고 계세요? 편하실 때 말씀해 주세요.",
        "not_understood": "죄송해요, 잘 이해하지 못했어요. 다시 말씀해 주시겠어요?",
        "goodbye": "네, 알겠습니다. 좋은 하루 보내세요.",
        "ask_slot": "{slot}을(를) 알려 주시겠어요?",
        "invalid": "말씀하신 내용을 확인하지 못했어요.",
        "confirm": "앞서 말씀하신 {old}을(를) {new}(으)로 바꿀까요?",
        "true": "네", "false": "아니요",
    },
    "en": {
        "greeting": "Hello! Let's talk.",
        "continue": "Sure, go on.",
        "no_input": "Are you still there? Take your time.",
        "not_understood": "Sorry, I didn't quite get that. Could you say it again?",
        "goodbye": "All right. Have a nice day.",
        "ask_slot": "Could you tell me your {slot}?",
        "invalid": "I couldn't use that answer.",
        "confirm": "Should I change {old} to {new}?",
        "true": "yes", "false": "no",
    },
}



class RenderContext(msgspec.Struct, frozen=True):
    """What an NLG may look at besides the decision."""

    runtime: Runtime
    state: DialogueState


class NLG(Protocol):
    """Anything that words a decision."""

    def render(self, decision: Decision, context: RenderContext) -> str: ...


def pending_confirmation(decision: Decision, state: DialogueState) -> PendingConfirmation | None:
    """The confirmation a reply asks first: the one raised this turn, else, on a re-prompt,
    the one still unanswered."""
    update = decision.slot_update
    pending = update.asked if update is not None else None
    if pending is None and decision.kind == FALLBACK:
        pending = state.pending_confirmation  # still unanswered: ask again
    return pending


class TemplateNLG:
    """Responses from the scenario's texts with placeholders; common messages otherwise."""

    name = "template"

    def render(self, decision: Decision, context: RenderContext) -> str:
        runtime, state = context.runtime, context.state
        words = MESSAGES[runtime.language]
        body = self._body(decision, runtime, state, words) or words["continue"]
        pending = pending_confirmation(decision, state)
        if pending is not None and decision.tier != "safety":  # help first, questions later
            return _confirm_question(runtime, pending, words) + " " + body
        return body

    def _body(self, decision: Decision, runtime: Runtime, state: DialogueState,
              words: dict[str, str]) -> str:
        kind = decision.kind
        if kind == COMPLETE:
            node = runtime.nodes[decision.handled_node]
            return self._response(node, "complete", state, words) or words["goodbye"]
        if kind == OPEN:
            opening = runtime.nodes[decision.handled_node]
            return self._speak_for(runtime, opening, state, words) or words["greeting"]
        if kind == MOVE:
            target = runtime.nodes[decision.next_node]
            return self._speak_for(runtime, target, state, words) or words["continue"]
        table = runtime.nodes[decision.handled_node]
        if kind == FALLBACK:
            return self._fallback(table, decision.fallback, state, words)
        return self._stay(decision, runtime, table, state, words)

    def _stay(self, decision: Decision, runtime: Runtime, table: NodeTable,
              state: DialogueState, words: dict[str, str]) -> str:
        if decision.tier == "safety":  # a hold keeps helping: the node's help again
            return self._speak_for(runtime, table, state, words) or words["continue"]
        invalid = decision.slot_update.invalid if decision.slot_update is not None else ()
        if invalid:
            return words["invalid"] + " " + _ask(runtime, invalid[0], words)
        if decision.turn_limit_reached:
            said = self._response(table, "turn_limit", state, words)
            if said:
                return said
        if decision.reason == "gate:required_slots" and decision.missing_slots:
            return _ask(runtime, decision.missing_slots[0], words)
        if decision.fallback is not None:
            return self._fallback(table, decision.fallback, state, words)
        if table.is_end:  # staying at a closing node: never repeat the farewell
            return words["continue"]
        return self._speak_for(runtime, table, state, words) or words["continue"]

    def _fallback(self, table: NodeTable, kind: str | None, state: DialogueState,
                  words: dict[str, str]) -> str:
        kind = kind or "not_understood"
        return self._response(table, kind, state, words) or words[kind]

    def _speak_for(self, runtime: Runtime, table: NodeTable, state: DialogueState,
                   words: dict[str, str]) -> str:
        """What a node says when it speaks: its default, else the question it needs answered."""
        said = self._response(table, "default", state, words)
        here = table.id == state.current_node
        if here and state.skill_status in ("failed", "timeout") and table.node.fallback:
            said = f"{table.node.fallback} {said}".strip()
        if said:
            return said
        for index in missing_slots(table, state.slots) or _unfilled(table, state):
            return _ask(runtime, index, words)
        return ""

    def _response(self, table: NodeTable, kind: str, state: DialogueState,
                  words: dict[str, str]) -> str:
        text = table.responses.get(kind)
        if not text or "{" not in text:
            return text or ""
        here = table.id == state.current_node
        return fill_placeholders(text, state.slots, state.skill_data if here else {}, words,
                                 state.profile)


def _unfilled(table: NodeTable, state: DialogueState) -> tuple[int, ...]:
    """Collect slots (optional ones too) without a value, in order."""
    slots = state.slots
    return tuple(i for i, name in zip(table.collect, table.collect_names)
                 if slots.get(name) is None)


def _ask(runtime: Runtime, index: int, words: dict[str, str]) -> str:
    """The slot's question, else a common question naming it."""
    slot = runtime.program.slots[index]
    if slot.question:
        return slot.question
    return words["ask_slot"].replace("{slot}", slot.description or slot.name)


def _confirm_question(runtime: Runtime, pending, words: dict[str, str]) -> str:
    # No slot label: `description` is guidance for the NLU, not words for the user.
    return (words["confirm"].replace("{old}", format_value(pending.previous, words))
            .replace("{new}", format_value(pending.value, words)))
