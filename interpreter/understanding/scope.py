"""Which slot a turn's words answer (SPEC 18.2, 18.3, 18.6, 18.7): the scope of the node that
hears them, declines, and the span a free-text value is.

In: a `Program` at construction, then per turn the indices of the slots the current node
collects and the words said. Out: for a slot the node does not collect, whether its value may
be read from the words (`Scope.off_node`); whether an answer is a bare decline (`declined`);
the span of a free-text answer without its frame (`frameless`).

Node scope (18.2). The node's own slots are read first, and the words that filled one are not
read again. A slot of another node is read from what is left only when the node collects no
slot of the same kind, or when the words name that slot: its name ("branch"), one of its labels
("Riverside branch"), or a phrase of its question or description ("date of birth"). A number
said off its node must be named ("2" says no slot). An end node reads values like any other:
SeniMate's closing node resumes on what the user goes on to say ("무릎이 아파요"). Kinds:
an enum, a pattern (each pattern its own kind), a number, an e-mail address. A kind a new value
type reads with is added to `_KIND` (a date slot plugs in the same way).
"""

from __future__ import annotations

import re

from .. import ir
from . import lexicon as lex
from .text import normalise

# Bare declines (18.3), normalised, with or without a leading "no" / "아니".
DECLINES = frozenset((
    "없어", "없어요", "없습니다", "없음", "없다", "없는데", "없는데요", "없고", "별로 없어",
    "별로 없어요", "딱히 없어", "딱히 없어요", "전혀 없어", "전혀 없어요", "아무것도 없어",
    "아무것도 없어요", "아니", "아니요", "아뇨", "괜찮아", "괜찮아요", "none", "nothing",
    "no", "nope", "nothing really", "not really", "nah", "none really", "no thanks",
    "nothing at all", "none at all", "not at all", "no nothing", "theres nothing",
    "there is nothing", "there isnt any", "i have none", "i dont have any", "dont have one",
))
_LEADING_NO = ("아니", "아니요", "아뇨", "no", "nope")

# Frames said before a free-text value (18.6): "it's", "my address is", "제 주소는".
_FRAME = re.compile(
    r"^(?:(?:well|so|um|uh|oh)[, ]+)?(?:it'?s|it is|that'?s|that is|this is|"
    r"(?:my|the|our)(?: [a-z]+){1,3} (?:is|will be|would be)|"
    r"(?:제|저의|내|저희|우리) \S+(?:은|는))\s+", re.IGNORECASE)
_TRAILING_YO = re.compile(r"(?<=\S)(?:이요|요)$")

_KIND = {"enum": "enum", "email": "email", "integer": "number", "number": "number",
         "date": "date", "time": "time"}
_NAMED_ONLY = frozenset(("number", "date", "time"))  # kinds that are read off their node only when named


def declined(spaced: str) -> bool:
    """Whether a normalised answer is nothing but a decline ("없어", "아니 없어", "none")."""
    if spaced in DECLINES:
        return True
    head, _, rest = spaced.partition(" ")
    return head in _LEADING_NO and rest in DECLINES


def frameless(answer: str) -> str:
    """A free-text answer without its leading frame ("it's 10 Pine Road" -> "10 Pine Road");
    the answer itself when nothing is left or it has no frame."""
    stripped = _FRAME.sub("", answer, count=1).strip()
    if stripped is answer or not stripped:
        return answer
    unwrapped = _TRAILING_YO.sub("", stripped) if " " not in stripped else stripped
    return unwrapped or stripped


def question_phrases(text: str) -> list[str]:
    """The English phrases of two words or more a slot's question or description names it
    by ("date of birth", "prescription number"): runs of words that are not function words,
    "of" allowed inside. Korean questions give none (their words are inflected: a name or a
    label names a Korean slot)."""
    spaced = normalise(re.sub(r"\{[^{}]*\}", " , ", text))
    if not spaced.isascii():
        return []
    runs, run = [], []
    for word in (*spaced.split(), ""):
        if word and word not in _FUNCTION_WORDS and not word[0].isdigit():
            run.append(word)
            continue
        if word == "of" and run:
            run.append(word)
            continue
        while run and run[-1] == "of":
            run.pop()
        if len(run) >= 2:
            runs.append(" ".join(run))
        run = []
    return runs


_FUNCTION_WORDS = frozenset((
    "what", "which", "when", "where", "who", "why", "how", "is", "are", "was", "be", "will",
    "would", "should", "could", "can", "do", "does", "did", "your", "you", "my", "me", "i",
    "we", "our", "us", "the", "a", "an", "please", "say", "it", "its", "like", "to", "at",
    "or", "and", "for", "on", "in", "this", "that", "there", "any", "have", "has", "with",
    "as", "from", "tell", "give", "if", "so", "then", "again", "now", "just", "also", "of",
))


def kind(slot: ir.Slot) -> str | None:
    """The kind of value a slot reads (the pattern itself for a pattern slot), or None for
    free text and booleans (never read off their node)."""
    if slot.value_type == "string":
        return "pattern:" + slot.pattern if slot.pattern else None
    return _KIND.get(slot.value_type)


class Scope:
    """The node-scope rules of one program: per slot its kind and the words that name it."""

    def __init__(self, program: ir.Program):
        self.slots = program.slots
        self.kinds = [kind(s) for s in program.slots]
        self.free_text = [s.value_type == "string" and not s.pattern for s in program.slots]
        self.names = [self._naming(s) for s in program.slots]

    @staticmethod
    def _naming(slot: ir.Slot) -> re.Pattern | None:
        phrases = {normalise(slot.name.replace("_", " "))}
        phrases.update(normalise(label) for label in slot.labels.values())
        for text in (slot.question or "", slot.description):
            phrases.update(question_phrases(text))
        phrases.discard("")
        return re.compile("|".join(lex.compact_regex(p) for p in sorted(phrases, key=len,
                                                                        reverse=True)))

    def off_node(self, index: int, node: ir.Node | None, spaced: str) -> bool:
        """Whether slot `index`, which `node` does not collect, may be read from `spaced`."""
        own = self.kinds[index]
        if own is None:
            return False
        named = self.names[index]
        if named is not None and named.search(spaced) is not None:
            return True
        if node is None or own in _NAMED_ONLY:
            return False
        return not any(self.kinds[i] == own for i in node.collect_slots)
