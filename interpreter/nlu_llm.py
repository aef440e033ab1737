"""The `llm` NLU: an LLM reads the utterance, constrained to the program's names and types.

In: a `ChatClient`, the `Program`, and a fallback NLU (the rules NLU unless given); then, per
turn, the utterance and an `NLUContext`. Out: an `NLUResult` whose `source` says who produced
it: `llm`, `llm (repaired: ...)`, or `rules (llm fallback: REASON)`.
After: the result is always one the router can read, whatever the server did. The answer is
asked for with structured output (`json_schema`; after a 400, `json_object`, then the schema in
the prompt alone; the step down is remembered) and validated strictly against the type of
`llm_prompts.reading_type` either way. An invalid answer gets one repair request that quotes
the validation error; an answer still invalid, an error, a timeout or a spent turn budget
hands the turn to the fallback NLU. Nothing here raises.

Confidence: the model is not asked for one (self-reported confidence is not calibrated);
a reading is 1.0, or 0.0 when it understood nothing (act null, no intent), like the rules NLU.
"""

from __future__ import annotations

from typing import Any

import msgspec

from . import ir
from .llm_client import ChatClient, LLMError, LLMRejected
from .llm_prompts import (nlu_messages, nlu_schema, read_answer, reading_type, repair_messages,
                          response_format)
from .nlu import NLU, NLUContext, NLUResult

FORMAT_MODES = ("json_schema", "json_object", "prompt")  # tried in this order


class InvalidAnswer(LLMError):
    """The model's answer broke the schema, and so did its repair."""


class LLMNLU:
    """NLU by an LLM over the chat-completions protocol, with the rules NLU as the safety net."""

    name = "llm"

    def __init__(self, client: ChatClient, program: ir.Program, fallback: NLU | None = None):
        self.client = client
        self.program = program
        self.reading = reading_type(program)
        self.schema = nlu_schema(self.reading)
        self.mode = FORMAT_MODES[0]
        self._fallback = fallback

    @property
    def fallback(self) -> NLU:
        if self._fallback is None:
            from .nlu_rules import RulesNLU

            self._fallback = RulesNLU(self.program)
        return self._fallback

    def parse(self, text: str, context: NLUContext) -> NLUResult:
        try:
            return self._read(text, context)
        except LLMError as failure:
            reason = str(failure)
        except Exception as error:  # noqa: BLE001 - an LLM failure never breaks a turn
            reason = f"internal error: {type(error).__name__}: {error}"
        result = self.fallback.parse(text, context)
        name = getattr(self.fallback, "name", "fallback")
        return msgspec.structs.replace(result, source=f"{name} (llm fallback: {reason})")

    def _read(self, text: str, context: NLUContext) -> NLUResult:
        state = context.state
        budget = self.client.budgets.for_turn(state.session_id, state.session_turns + 1)
        history = state.entries()

        def messages() -> list[dict]:
            return nlu_messages(self.program, context.node, history, text, self.schema,
                                self.mode == "json_schema")
        asked = messages()
        answer = self._complete(asked, budget, "nlu", messages)
        source = "llm"
        try:
            intent, act, slots = read_answer(answer, self.reading)
        except ValueError as error:
            repaired = self._complete(repair_messages(asked, answer, str(error)), budget,
                                      "nlu repair")
            try:
                intent, act, slots = read_answer(repaired, self.reading)
            except ValueError as again:
                raise InvalidAnswer(f"invalid answer after one repair: {again}") from None
            source = f"llm (repaired: {error})"
        understood = act != "null" or intent is not None
        return NLUResult(intent, act, slots, 1.0 if understood else 0.0, text, source)

    def _complete(self, messages: list[dict], budget: Any, purpose: str,
                  rebuild: Any = None) -> str:
        """One request; a 400 to a `response_format` steps down to the next format mode."""
        while True:
            try:
                return self.client.complete(messages, budget, purpose,
                                            response_format(self.mode, self.schema))
            except LLMRejected as rejected:
                if rejected.status != 400 or self.mode == FORMAT_MODES[-1]:
                    raise
                self.mode = FORMAT_MODES[FORMAT_MODES.index(self.mode) + 1]
                if rebuild is not None:  # the prompt now carries the schema itself
                    messages = rebuild()
