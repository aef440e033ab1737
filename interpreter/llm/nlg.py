"""The `llm` NLG: an LLM words each reply within what the node and the decision allow.

In: a `ChatClient` (the template NLG gives the safe wording); then, per turn, a routing
`Decision` and a `RenderContext`. Out: the reply.
After: the reply is the model's words, or the template's sentence when the model's answer is
empty, too long, an error or too late (the per-turn budget it shares with the NLU of the same
turn). The template's sentence is computed first and given to the model as the reference
sentence, so both wordings speak for the same node with the same intent (SPEC 6.2 step 8),
with every variant of the response it came from beside it (SPEC 9); the rotation the reply
hands back is the template's.
An opening whose node has `responses.default` says it without an LLM call (SPEC 6.1). Each
render records an `LLMOutcome` ("llm" or "template (llm fallback: REASON)") in the client's
journal when it has one. Nothing here raises.
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from .client import ChatClient, LLMError, LLMOutcome, failure_reason, fallback_source
from .prompts import nlg_messages, strip_reasoning
from ..wording.nlg import RenderContext, Reply, TemplateNLG
from ..routing import OPEN, Decision

MAX_REPLY_CHARS = 1200  # a reply is a few sentences; more is a runaway generation
_QUOTES = {'"': '"', "'": "'", "“": "”", "「": "」", "『": "』"}


class EmptyAnswer(LLMError):
    """The model answered with nothing usable as a reply."""


class LLMNLG:
    """Wording by an LLM over the chat-completions protocol, with the template as the net."""

    name = "llm"

    def __init__(self, client: ChatClient):
        self.client = client
        self.template = TemplateNLG()

    def render(self, decision: Decision, context: RenderContext) -> str:
        return self.reply(decision, context).text

    def reply(self, decision: Decision, context: RenderContext) -> Reply:
        """The model's words for the template's reply (the rotation is the template's: the
        reference it was given is the variant the template chose)."""
        safe = self.template.reply(decision, context)
        if decision.kind == OPEN and _declares_opening(context.runtime.nodes[
                decision.handled_node]):
            return safe  # SPEC 6.1: a declared opening sentence is said as is
        try:
            said, source = self._generate(decision, context, safe), "llm"
        except Exception as error:  # noqa: BLE001 - an LLM failure never breaks a turn
            said, source = safe.text, fallback_source(self.template.name, failure_reason(error))
        if self.client.journal is not None:
            self.client.journal.record(LLMOutcome("nlg", source))
        return replace(safe, text=said)

    def _generate(self, decision: Decision, context: RenderContext, reference: Reply) -> str:
        state = context.state
        budget = self.client.budgets.for_turn(state.session_id, state.session_turns)
        messages = nlg_messages(context.runtime, decision, state, reference.text,
                                state.entries(), reference.variants)
        return reply_text(self.client.complete(messages, budget, "nlg"))


def _declares_opening(table: Any) -> bool:
    """Whether the node writes its `responses.default`: variants, or conditional lines
    (SPEC 14.4: the template says the lines that hold)."""
    return bool(table.responses.get("default")) or bool(table.lines and "default" in table.lines)


def reply_text(answer: str) -> str:
    """The words to say from a model's answer: reasoning blocks and wrapping quotes taken off;
    `EmptyAnswer` when nothing is left or the answer is a runaway."""
    text = strip_reasoning(answer).strip()
    if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    if not text:
        raise EmptyAnswer("empty answer")
    if len(text) > MAX_REPLY_CHARS:
        raise EmptyAnswer(f"answer too long ({len(text)} characters)")
    return text
