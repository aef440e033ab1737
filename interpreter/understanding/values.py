"""Slot values in an utterance, as the rules NLU reads them: enum members through their
synonyms, values of a string slot's `pattern` found inside the sentence, numbers in a slot's
bounds, and every item of a list slot (SPEC 8.2).

In: an `ir.Slot` at construction (`EnumReader`, `PatternReader`), then normalised or raw
utterances. Out: the member, value or items heard, or None / an empty list.
"""

from __future__ import annotations

import re

from .. import ir, patterns
from ..slots import normalized_text
from . import lexicon as lex
from .text import normalise, span_negated


class EnumReader:
    """An enum slot's synonyms and member names as one alternation, longest first."""

    def __init__(self, slot: ir.Slot):
        members = list(slot.values)
        # Negating one of two members means the other ("안 아파요" -> good); among more
        # members a negation says only what it is not, so the match is dropped.
        self.flip = {members[0]: members[1], members[1]: members[0]} if len(members) == 2 else {}
        alternatives: dict[str, tuple[str, str, bool, int]] = {}  # regex -> first char, reading
        for member in members:
            for phrase in (*slot.synonyms.get(member, ()), member.replace("_", " ")):
                spaced = normalise(phrase)
                if not spaced:
                    continue
                size = len(spaced.replace(" ", ""))
                alternatives.setdefault(lex.synonym_regex(spaced), (spaced[0], member, False, size))
                stem = lex.negatable_stem(spaced)
                if stem:
                    negated = lex.compact_regex(stem) + r"지(?:도|는|를)?\s*(?:않|못|말)"
                    alternatives.setdefault(negated, (stem[0], member, True, size))
        ordered = sorted(alternatives.items(), key=lambda item: -item[1][3])
        self.regex = re.compile(lex.guarded([f"({regex})" for regex, _ in ordered],
                                         {reading[0] for _, reading in ordered}))
        self.readings = [reading[1:] for _, reading in ordered]

    def read_all(self, spaced: str) -> list[str]:
        """Every member `spaced` names, in order (the items of a list slot, SPEC 8.2)."""
        found: list[str] = []
        for match in self.regex.finditer(spaced):
            member, negated, _ = self.readings[match.lastindex - 1]
            if not negated and not span_negated(spaced, match.start(), match.end()) \
                    and member not in found:
                found.append(member)
        return found

    def read(self, spaced: str) -> str | None:
        """The member `spaced` names (the longest synonym wins), or None."""
        best_size, best = 0, None
        for match in self.regex.finditer(spaced):
            member, negated, size = self.readings[match.lastindex - 1]
            if negated or span_negated(spaced, match.start(), match.end()):
                member = self.flip.get(member)
            if member is not None and size > best_size:
                best_size, best = size, member
        return best


class PatternReader:
    """A string slot with a `pattern`, found inside the utterance ("제 번호는 010-1234-5678이에요").

    A pattern is the shape of the value, so its outer anchors (`^`, `$`, `\\A`, `\\Z`) bind the
    value, not the utterance: the utterance is searched for the pattern without them. The
    value is the first matched substring that does not cut a run of ASCII letters and digits
    (no "010-1234-5678" out of "010-1234-56789") and that the whole pattern matches in full,
    as the engine will check it. The pattern was checked for a bounded matching time as a
    full match (`patterns.SLOT`); a search tries every start, so the anchorless pattern is
    checked again as a search, and a pattern refused as one is not searched (the slot is then
    read as before: the trimmed answer, when it is the node's only string slot). Only the
    utterance's first `patterns.MAX_SEARCH_CHARS` characters are searched."""

    def __init__(self, slot: ir.Slot):
        # checked when the IR was loaded (`slots.SlotRule`); a hand-built program's refused
        # pattern raises `patterns.PatternError` here
        self.full = patterns.compile_pattern(slot.pattern, patterns.SLOT)
        self.normalize = tuple(slot.normalize)  # SPEC 14.2, 17.19: before the pattern
        body = lex.unanchored(slot.pattern)
        try:
            self.search = patterns.compile_pattern(body, _SLOT_SEARCH) if body else None
        except patterns.PatternError:
            self.search = None

    def read_all(self, raw: str) -> list[str]:
        """Every value the utterance holds, in order (the items of a list slot)."""
        found: list[str] = []
        text = patterns.searched(raw)
        for match in self.search.finditer(text) if self.search is not None else ():
            value = match.group(0).strip()
            if value and not lex.cuts_a_token(text, *match.span()) and value not in found \
                    and patterns.fullmatches(self.full, value):
                found.append(value)
        return found

    def read(self, raw: str) -> str | None:
        """The value the utterance holds, or None; with `normalize`, the whole answer is tried
        normalised first (17.19: "rx 7654321" is the value RX7654321)."""
        answer = lex.free_text(raw)
        if answer and self.normalize:
            return self._normalized_span(answer)
        if answer and patterns.fullmatches(self.full, answer):
            return answer
        if self.search is None:
            return None
        text = patterns.searched(raw)
        for match in self.search.finditer(text):
            start, end = match.span()
            value = match.group(0)
            if not value.strip() or lex.cuts_a_token(text, start, end):
                continue
            value = value.strip()
            if patterns.fullmatches(self.full, value):
                return value
        return None


    def _normalized_span(self, answer: str) -> str | None:
        """17.19: the longest run of words, earliest first, that is the value once
        normalised ("my number is rx 765 4321" -> RX7654321); the whole answer first. Only
        the first `_SPAN_WORDS` words are tried, so the cost stays bounded."""
        words = answer.split()[:_SPAN_WORDS]
        for size in range(len(words), 0, -1):
            for start in range(len(words) - size + 1):
                value = normalized_text(self.normalize, " ".join(words[start:start + size]))
                if value and patterns.fullmatches(self.full, value):
                    return value
        return None


_SPAN_WORDS = 12
_SLOT_SEARCH = patterns.Use(patterns.SLOT.flags, True, "pattern")


def in_bounds(value: int | float, slot: ir.Slot) -> bool:
    return (slot.min is None or value >= slot.min) and (slot.max is None or value <= slot.max)


def pick_number(found: list[tuple[int | float, str, int]], slot: ir.Slot) -> int | float | None:
    """The first number in the slot's bounds, else the first number (the engine rejects it)."""
    candidates = []
    for value, suffix, _ in found:
        if slot.value_type == "integer" and isinstance(value, float):
            if not value.is_integer():
                continue
            value = int(value)
        # "50년생": elderly people give their birth year in two digits.
        if slot.min is not None and slot.min >= 1000 and value < 100 and suffix.startswith("년"):
            value = 1900 + value
        candidates.append(value)
    fitting = [v for v in candidates if in_bounds(v, slot)]
    return (fitting or candidates or [None])[0]


def item_kind(slot: ir.Slot) -> str:
    """The value type a slot's values are read as: its items' for a list slot."""
    return slot.items if slot.value_type == "list" and slot.items else slot.value_type
