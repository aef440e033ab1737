"""NLG plug-in boundary and the `template` NLG (SPEC 6.2 step 8, SPEC 9).

In: a routing `Decision` (already decided: wording never changes where the session goes) and
a `RenderContext` (runtime, state after the turn, skill results included). Out: a `Reply`:
the response and the session's rotation after it (`speak` gets one from any NLG; an NLG
without `reply` leaves the rotation alone), which the engine saves with the turn.
After: the template NLG speaks for
- the opening: the node's `responses.default`, else the question of its first missing
  slot, else a common greeting;
- a move: the TARGET node, the same way (a resume from a closing node is worded by the node
  it resumes to, never by the closing node's farewell);
- a safety turn (SPEC 10): a move like any move (the target's `responses.default`: the help
  the user needs), a hold the current node's `responses.default` again, whatever else holds
  (an end node's farewell rule, the turn limit, a re-ask); no slot confirmation is asked;
- a stay: the current node: a failed validation re-asks that slot; the turn limit uses
  `responses.turn_limit`; a required-slot gate re-asks the first missing slot (its question,
  or `ask_again` around it, never the default, which may ask what is known); a fallback
  that reached routing is worded as a re-prompt; at an end node a stay never repeats the
  farewell; otherwise `responses.default`;
- a re-prompt: `responses.no_input` / `not_understood`, else the re-ask of the node's first
  missing slot, else its `responses.default` (not at a closing node), else a common message;
- completion: `responses.complete`, else a short common acknowledgement.
Each case is a chain of candidates, the sentence it prefers first and the others after it
(the rest of the list above), and `variants.choose` says the first that is not the bot's
previous sentence: a response with variants says its next variant in rotation (the first
the first time), and when that would repeat the previous reply word for word the next
candidate speaks instead; a common message has a second wording (`AGAIN`) for that. Only a
chain with nothing else to say repeats itself, and a safety hold repeats its help rather
than say a filler.
A confirmation raised this turn (slot `on_conflict: confirm`) is asked first. A skill node
whose skill failed or timed out puts `params.fallback` before its sentence.

Placeholders `{slots.NAME}`, `{profile.NAME}` and `{skill.data.KEY}` are filled by plain
lookup (`interpreter.placeholders`). A sentence whose placeholder has no value is left out,
so the response never leaks braces or a half sentence ("오늘 날씨는 {skill.data.summary}."
disappears when the weather is unknown); a variant left with no words is passed over. Common messages
are Korean or English after `program.language`.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol
from collections.abc import Iterator

import msgspec

from ..executors import missing_slots
from ..placeholders import (fill_placeholders, format_value, has_markup,  # noqa: F401
                            unfilled_placeholders)
from ..routing import COMPLETE, FALLBACK, MOVE, OPEN, Decision, speaker_facts
from .variants import Candidates, Choice, choose, choose_first

if TYPE_CHECKING:
    from ..loader import NodeTable, Runtime
    from ..state import DialogueState, PendingConfirmation

# The reply being made (runtime, decision): what conditional lines read their facts from. A
# context variable, so one TemplateNLG serves concurrent sessions (threads, tasks) safely.
_SPEAKING: ContextVar[tuple[Any, Any]] = ContextVar("mago_speaking")

MESSAGES: dict[str, dict[str, str]] = {
    "ko": {
        "greeting": "안녕하세요! 오늘 이야기 나눠요.",
        "continue": "네, 말씀해 주세요.",
        "no_input": "혹시 듣고 계세요? 편하실 때 말씀해 주세요.",
        "not_understood": "죄송해요, 잘 이해하지 못했어요. 다시 말씀해 주시겠어요?",
        "goodbye": "네, 알겠습니다. 좋은 하루 보내세요.",
        "ask_slot": "{slot}을(를) 알려 주시겠어요?",
        "ask_again": "다시 한번 여쭤볼게요. {question}",
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
        "ask_again": "Let me ask again: {question}",
        "invalid": "I couldn't use that answer.",
        "confirm": "Should I change {old} to {new}?",
        "true": "yes", "false": "no",
    },
}
# The second wording of each common sentence: said when the first would repeat the reply
# before it word for word.
AGAIN: dict[str, dict[str, str]] = {
    "ko": {
        "greeting": "반가워요. 편하게 이야기 나눠요.",
        "continue": "네, 듣고 있어요. 편하게 이야기해 주세요.",
        "no_input": "천천히 하셔도 괜찮아요. 준비되시면 말씀해 주세요.",
        "not_understood": "제가 아직 잘 못 알아들었어요. 조금 다르게 말씀해 주시겠어요?",
        "goodbye": "네, 다음에 또 이야기 나눠요.",
        "invalid": "죄송해요, 그 답으로는 아직 확인이 어려워요.",
    },
    "en": {
        "greeting": "Hi there. Let's have a chat.",
        "continue": "I'm listening. Tell me more.",
        "no_input": "No rush. Say something whenever you're ready.",
        "not_understood": "I'm still not sure I understood. Could you put it another way?",
        "goodbye": "Okay, talk to you another time.",
        "invalid": "Sorry, that answer didn't work for me.",
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


class Reply(msgspec.Struct, frozen=True):
    """A worded decision: the text, the session's rotation after it (`DialogueState.rotation`:
    the engine saves it with the turn), and the variants of the response the text came from,
    filled ("" for one left without words; the references an LLM NLG rewords; empty when
    the text is no response with variants)."""

    text: str
    rotation: dict[str, int]
    variants: tuple[str, ...] = ()


def speak(nlg: NLG, decision: Decision, context: RenderContext) -> Reply:
    """The reply of any NLG: its `reply` when it has one (the template and LLM NLGs, which
    say which variant they used), else its `render` with the rotation left as it was."""
    reply = getattr(nlg, "reply", None)
    if reply is not None:
        return reply(decision, context)
    return Reply(nlg.render(decision, context), context.state.rotation)


class TemplateNLG:
    """Responses from the scenario's texts with placeholders; common messages otherwise."""

    name = "template"

    def render(self, decision: Decision, context: RenderContext) -> str:
        return self.reply(decision, context).text

    def reply(self, decision: Decision, context: RenderContext) -> Reply:
        """The reply and the rotation after it: the chain of what the decision may say
        (`_chain`), the first candidate that is not the previous sentence (`choose`). Most
        replies are decided by the chain's first source (`_first`, `choose_first`): then no
        chain is made; the conditional lines' context is set only for a node with lines."""
        runtime, state = context.runtime, context.state
        words = MESSAGES[runtime.language]
        pending = pending_confirmation(decision, state)
        prefix = ""
        if pending is not None and decision.tier != "safety":  # help first, questions later
            prefix = _confirm_question(runtime, pending, words) + " "
        token = _SPEAKING.set((runtime, decision)) if _has_lines(runtime, decision) else None
        try:
            previous = state.last_said()
            first = self._first(decision, runtime, state, words)
            choice = choose_first(first, state.rotation, previous, prefix) \
                if first is not None else None
            if choice is None:
                choice = choose(self._chain(decision, runtime, state, words), state.rotation,
                                previous, prefix)
        finally:
            if token is not None:
                _SPEAKING.reset(token)
        self._said(choice, state)
        source = choice.source
        variants = tuple(source.texts) if source is not None and len(source.raw) > 1 else ()
        return Reply(prefix + (choice.text or words["continue"]), choice.rotation, variants)

    def _first(self, decision: Decision, runtime: Runtime, state: DialogueState,
               words: dict[str, str]) -> Candidates | None:
        """The first source `_chain` yields, for the kinds whose first source is one lookup
        (a move, the opening, completion, a re-prompt); None for a stay."""
        kind = decision.kind
        if kind == MOVE:
            return self._default(runtime.nodes[decision.next_node], state, words)
        if kind == COMPLETE:
            return self._variants(runtime.nodes[decision.handled_node], "complete", state, words)
        if kind == OPEN:
            return self._default(runtime.nodes[decision.handled_node], state, words)
        if kind == FALLBACK:
            return self._variants(runtime.nodes[decision.handled_node],
                                  decision.fallback or "not_understood", state, words)
        return None

    def _said(self, choice: Choice, state: DialogueState) -> None:
        """Called with every choice (`mgi fuzz` audits what was said here)."""

    def _chain(self, decision: Decision, runtime: Runtime, state: DialogueState,
               words: dict[str, str]) -> Iterator[Candidates]:
        """The candidates of the decision, best first; made as `choose` reads them (most
        replies are the first), so the ones after the chosen one cost nothing."""
        kind = decision.kind
        if kind == COMPLETE:
            node = runtime.nodes[decision.handled_node]
            yield self._variants(node, "complete", state, words)
            yield _common(runtime, "goodbye")
        elif kind in (OPEN, MOVE):  # the opening node, or the target of the move
            table = runtime.nodes[decision.handled_node if kind == OPEN else decision.next_node]
            yield self._default(table, state, words)  # `_speak_for`, written out: every move
            yield self._reask(runtime, table, state, words)
            yield _common(runtime, "greeting" if kind == OPEN else "continue")
        elif kind == FALLBACK:
            yield from self._reprompt(runtime, runtime.nodes[decision.handled_node],
                                      decision.fallback, state, words)
        else:
            yield from self._stay(decision, runtime, runtime.nodes[decision.handled_node],
                                  state, words)

    def _stay(self, decision: Decision, runtime: Runtime, table: NodeTable,
              state: DialogueState, words: dict[str, str]) -> Iterator[Candidates]:
        if decision.tier == "safety":  # a hold keeps helping: the node's help, never a filler
            yield from self._speak_for(runtime, table, state, words)
            return
        invalid = decision.slot_update.invalid if decision.slot_update is not None else ()
        if invalid:
            question = _ask(runtime, invalid[0], words, state)
            yield Candidates(None, tuple(f"{said} {question}"
                                         for said in _common(runtime, "invalid").texts))
            return
        if decision.turn_limit_reached:
            yield self._variants(table, "turn_limit", state, words)
        if decision.reason == "gate:required_slots" and decision.missing_slots:
            # the question, or it asked again; not the default, which may ask what is known
            question = _ask(runtime, decision.missing_slots[0], words, state)
            yield Candidates(None, (question, words["ask_again"].replace("{question}", question)))
        elif decision.fallback is not None:
            yield from self._reprompt(runtime, table, decision.fallback, state, words)
        elif table.is_end:  # staying at a closing node: never repeat the farewell
            yield _common(runtime, "continue")
        else:
            yield from self._speak_for(runtime, table, state, words)
            yield _common(runtime, "continue")

    def _reprompt(self, runtime: Runtime, table: NodeTable, kind: str | None,
                  state: DialogueState, words: dict[str, str]) -> Iterator[Candidates]:
        """SPEC 9's order: the fallback's variants, the re-ask of the first missing slot, the
        default (never a closing node's farewell), then the common message."""
        kind = kind or "not_understood"
        yield self._variants(table, kind, state, words)
        yield self._reask(runtime, table, state, words)
        if not table.is_end:
            yield self._default(table, state, words)
        yield _common(runtime, kind)

    def _speak_for(self, runtime: Runtime, table: NodeTable, state: DialogueState,
                   words: dict[str, str]) -> Iterator[Candidates]:
        """What a node says when it speaks: its default, else the question it needs answered."""
        yield self._default(table, state, words)
        yield self._reask(runtime, table, state, words)

    def _default(self, table: NodeTable, state: DialogueState,
                 words: dict[str, str]) -> Candidates:
        """The node's default variants; a skill that failed here puts `params.fallback` first."""
        default = self._variants(table, "default", state, words)
        fallback = table.node.fallback
        if fallback and table.id == state.current_node and \
                state.skill_status in ("failed", "timeout"):
            texts = tuple(f"{fallback} {said}".strip() for said in default.texts)
            return msgspec.structs.replace(default, texts=texts or (fallback,))
        return default

    def _reask(self, runtime: Runtime, table: NodeTable, state: DialogueState,
               words: dict[str, str]) -> Candidates:
        """The question of the node's first missing slot (required first), if any."""
        for index in missing_slots(table, state.slots) or _unfilled(table, state):
            return Candidates(None, (_ask(runtime, index, words, state),))
        return Candidates(None, ())

    def _variants(self, table: NodeTable, kind: str, state: DialogueState,
                  words: dict[str, str]) -> Candidates:
        """The node's `responses.KIND` variants, placeholders filled (skill data only where
        the skill ran: the current node); a response of conditional lines says the lines
        whose `when` holds (`_lines`)."""
        if table.lines is not None and kind in table.lines:
            return self._lines(table, kind, state, words)
        made = table.said.get(kind)
        if made is not None:  # a response without placeholders: the same every time
            return made
        texts = table.responses.get(kind, ())
        if not any(map(has_markup, texts)):
            made = table.said[kind] = Candidates(table.id + ":" + kind, texts, texts)
            return made
        data = state.skill_data if table.id == state.current_node else {}
        said = [fill_placeholders(text, state.slots, data, words, state.profile,
                                  table.slot_labels) for text in texts]
        return Candidates(table.id + ":" + kind, said, texts)

    def _lines(self, table: NodeTable, kind: str, state: DialogueState,
               words: dict[str, str]) -> Candidates:
        """SPEC 14.4, 17.21: the lines whose `when` holds on the facts of the node that
        speaks, joined; variant k of the response joins variant k of each line (each line
        cycling through its own), so the rotation and the no-repeat rule see the joined
        text. No line holds: nothing to say (the usual fallbacks follow)."""
        speaking = _SPEAKING.get(None)  # None: asked outside a reply (only `when`-less lines)
        joiner, lines = table.lines[kind]
        facts = speaker_facts(speaking[0], speaking[1], table, state) if speaking and any(
            test is not None for test, _ in lines) else None
        said = [texts for test, texts in lines
                if test is None or (facts is not None and test(facts))]
        if not said:
            return Candidates(None, ())
        data = state.skill_data if table.id == state.current_node else {}
        count = max(len(texts) for texts in said)
        raw, filled = [], []
        for k in range(count):
            picked = [texts[k % len(texts)] for texts in said]
            raw.append(joiner.join(picked))
            parts = [fill_placeholders(text, state.slots, data, words, state.profile,
                                       table.slot_labels) for text in picked]
            filled.append(joiner.join(part for part in parts if part))
        return Candidates(table.id + ":" + kind, filled, raw)


def _has_lines(runtime: Runtime, decision: Decision) -> bool:
    """Whether a node the reply may word (the one that handled the turn, the one it moved
    to) has conditional lines, which read the reply's facts (`_SPEAKING`)."""
    if runtime.nodes[decision.handled_node].lines is not None:
        return True
    target = decision.next_node
    return target is not None and runtime.nodes[target].lines is not None


def _common(runtime: Runtime, key: str) -> Candidates:
    """A common sentence and its second wording, in the scenario's language."""
    return Candidates(None, (MESSAGES[runtime.language][key], AGAIN[runtime.language][key]))


def _unfilled(table: NodeTable, state: DialogueState) -> tuple[int, ...]:
    """Collect slots (optional ones too) without a value, in order."""
    slots = state.slots
    return tuple(i for i, name in zip(table.collect, table.collect_names)
                 if slots.get(name) is None)


def _ask(runtime: Runtime, index: int, words: dict[str, str], state: DialogueState) -> str:
    """The slot's question, its placeholders filled like a response's (SPEC 14.8), else a
    common question naming it (also when every sentence of the question needs a value that
    is not there)."""
    slot = runtime.program.slots[index]
    question = slot.question
    if question and has_markup(question):
        question = fill_placeholders(question, state.slots, {}, words, state.profile,
                                     runtime.slot_labels)
    if question:
        return question
    return words["ask_slot"].replace("{slot}", slot.description or slot.name)


def _confirm_question(runtime: Runtime, pending, words: dict[str, str]) -> str:
    # No slot label: `description` is guidance for the NLU, not words for the user.
    return (words["confirm"].replace("{old}", format_value(pending.previous, words))
            .replace("{new}", format_value(pending.value, words)))
