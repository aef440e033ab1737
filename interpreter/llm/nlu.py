"""The `llm` NLU: an LLM reads the utterance, constrained to the program's names and types.

In: a `ChatClient`, the `Program`, and the fallback NLU (the rules NLU); then, per turn,
the utterance and an `NLUContext`. Out: an `NLUResult` whose `source` says who produced
it: `llm`, `llm (repaired: ...)`, or `rules (llm fallback: REASON)`.
After: the result is always one the router can read, whatever the server did. The model's
`safety` category goes into `NLUResult.safety`; the engine adds it only when the detector
found none (it can never remove the detector's finding). The answer is
asked for with structured output (`json_schema`; after a 400, `json_object`, then the schema in
the prompt alone; the step down is remembered) and validated strictly against the type of
`llm.prompts.reading_type` either way. An invalid answer gets one repair request that quotes
the validation error; an answer still invalid, an error, a timeout or a spent turn budget
hands the turn to the fallback NLU. Nothing here raises.

Confidence: the model is not asked for one (self-reported confidence is not calibrated);
a reading is 1.0, or 0.0 when it understood nothing (act null, no intent), like the rules NLU.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import msgspec

from .. import ir
from .client import ChatClient, LLMError, LLMRejected, failure_reason, fallback_source
from .prompts import (nlu_format, nlu_head, nlu_schema, nlu_turn_messages, read_answer,
                          reading_type, repair_messages, response_format)
from ..understanding.nlu import NLU, NLUContext, NLUResult

FORMAT_MODES = ("json_schema", "json_object", "prompt")  # tried in this order


class InvalidAnswer(LLMError):
    """The model's answer broke the schema, and so did its repair."""


class LLMNLU:
    """NLU by an LLM over the chat-completions protocol, with the rules NLU as the safety net."""

    name = "llm"

    def __init__(self, client: ChatClient, program: ir.Program, fallback: NLU):
        self.client = client
        self.program = program
        self.fallback = fallback
        self.reading = reading_type(program)
        self.schema = nlu_schema(self.reading)
        self.mode = FORMAT_MODES[0]
        # What never changes for a mode: the prompt's answer format and the response_format.
        self._formats = {mode: (nlu_format(program, self.schema, mode == "json_schema"),
                                response_format(mode, self.schema)) for mode in FORMAT_MODES}
        self._heads: dict[str, str] = {}  # node id -> the prompt's fixed part (`nlu_head`)

    def parse(self, text: str, context: NLUContext) -> NLUResult:
        try:
            return self._read(text, context)
        except Exception as error:  # noqa: BLE001 - an LLM failure never breaks a turn
            reason = failure_reason(error)
        result = self.fallback.parse(text, context)
        used = getattr(self.fallback, "name", "fallback")
        return msgspec.structs.replace(result, source=fallback_source(used, reason))

    def _read(self, text: str, context: NLUContext) -> NLUResult:
        state, node = context.state, context.node
        budget = self.client.budgets.for_turn(state.session_id, state.session_turns + 1)
        history = state.entries()
        head = self._heads.get(node.id)
        if head is None:
            head = self._heads[node.id] = nlu_head(self.program, node)

        def messages() -> list[dict]:  # the current mode's: a step down changes the format
            return nlu_turn_messages(head, history, text, self._formats[self.mode][0])
        answer, sent = self._complete(messages, budget, "nlu")
        source = "llm"
        try:
            intent, act, slots, safety = read_answer(answer, self.reading)
        except ValueError as error:
            problem = str(error)
            repaired, _ = self._complete(lambda: repair_messages(sent, answer, problem), budget,
                                         "nlu repair")
            try:
                intent, act, slots, safety = read_answer(repaired, self.reading)
            except ValueError as again:
                raise InvalidAnswer(f"invalid answer after one repair: {again}") from None
            source = f"llm (repaired: {problem})"
        understood = act != "null" or intent is not None or safety is not None
        return NLUResult(intent, act, slots, 1.0 if understood else 0.0, text, source, safety)

    def _complete(self, build: Callable[[], list[dict]], budget: Any,
                  purpose: str) -> tuple[str, list[dict]]:
        """(answer, the messages it answers): one request with the messages `build` makes; a
        400 to a `response_format` steps down to the next format mode and builds them again."""
        while True:
            messages = build()
            try:
                return self.client.complete(messages, budget, purpose,
                                            self._formats[self.mode][1]), messages
            except LLMRejected as rejected:
                if rejected.status != 400 or self.mode == FORMAT_MODES[-1]:
                    raise
                self.mode = FORMAT_MODES[FORMAT_MODES.index(self.mode) + 1]
