"""NLU plug-in boundary: the result type, the protocol, and the `scripted` NLU.

In: the user's text and an `NLUContext` (program, current node, state, runtime).
Out: an `NLUResult` with names as the NLU produced them (intent, dialogue act, slot values).
After: nothing is interpreted here; the router corrects and interns the result (SPEC 6.2
step 2: silence on spoken input -> null, negate -> deny, null act with a declared intent ->
inform, undeclared intent -> null), so every NLU gets the same rules.

`scripted` is the NLU of tests and `mgi run --json`: the result comes with the input.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol
from collections.abc import Iterable

import msgspec

from .. import ir

if TYPE_CHECKING:
    from ..loader import Runtime
    from ..state import DialogueState


Safety = Literal["medical_emergency", "self_harm", "abuse"]  # ir.SAFETY_CATEGORIES


class Candidate(msgspec.Struct, frozen=True):
    """An intent the NLU weighed, and its score in [0, 1] (SPEC 13.2)."""

    intent: str
    score: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]


AMBIGUOUS, BELOW_THRESHOLD = "ambiguous", "below threshold"  # intent notes (SPEC 17.14)


class NLUResult(msgspec.Struct, frozen=True, omit_defaults=True):
    """What an NLU heard. `dialogue_act` None means not understood (read as `null`).
    `source` says which NLU produced it and why, when that is worth a trace line ("llm",
    "rules (llm fallback: timeout after 2.0 s)"); the routing never reads it.
    `safety`: a safety category (SPEC 10) when the NLU heard one; the engine merges it with
    the detector's finding (`understanding.safety.merge`) before routing reads it."""

    intent: str | None = None
    dialogue_act: str | None = None
    slots: dict[str, Any] = {}
    confidence: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 1.0
    text: str = ""
    source: str = ""
    safety: Safety | None = None
    candidates: tuple[Candidate, ...] = ()  # SPEC 13.2: the best intents, best first (<= 3)
    intent_note: str = ""  # "ambiguous" or "below threshold" when no intent was chosen


class NLUContext(msgspec.Struct, frozen=True):
    """What an NLU may look at: the program, the node the user is answering, the state."""

    program: ir.Program
    node: ir.Node
    state: DialogueState
    runtime: Runtime | None = None


class NLU(Protocol):
    """Anything that turns text into an `NLUResult`."""

    def parse(self, text: str, context: NLUContext) -> NLUResult: ...


class ScriptedNLU:
    """Results given in advance, one per `parse`; an empty queue means not understood.

    Usually the result travels with the input (`Engine.turn(..., nlu_override=...)`); the
    queue serves scripts that feed results separately.
    """

    name = "scripted"

    def __init__(self, results: Iterable[NLUResult | dict] = ()):
        self._queue: deque[NLUResult] = deque(nlu_result(r) for r in results)

    def push(self, result: NLUResult | dict) -> None:
        """Queue the result of a later `parse`."""
        self._queue.append(nlu_result(result))

    def parse(self, text: str, context: NLUContext) -> NLUResult:
        if self._queue:
            result = self._queue.popleft()
            return result if result.text == text else msgspec.structs.replace(result, text=text)
        return NLUResult(text=text)


def nlu_result(value: NLUResult | dict | None, text: str | None = None) -> NLUResult:
    """An `NLUResult` from itself or its JSON object form (`--json` lines); `ValueError` if malformed.

    `text`, when given, replaces the result's text (the result describes that utterance).
    """
    if isinstance(value, dict):  # every field checked, the confidence range too
        if text is not None and "text" not in value:  # made with its text: no second copy
            value = {**value, "text": text}
        try:
            result = msgspec.convert(value, NLUResult)
        except msgspec.ValidationError as error:
            raise ValueError(f"malformed nlu object: {error}") from None
    elif isinstance(value, NLUResult):
        result = value
        if not 0.0 <= result.confidence <= 1.0:  # a plug-in's own result is not checked (NaN too)
            result = msgspec.structs.replace(result,
                                             confidence=min(1.0, max(0.0, result.confidence)))
    elif value is None:
        result = NLUResult()
    else:
        raise ValueError(f"nlu must be an object, got {type(value).__name__}")
    if text is not None and result.text != text:
        result = msgspec.structs.replace(result, text=text)
    return result
