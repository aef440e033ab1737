"""Slot values in an utterance, as the rules NLU reads them: enum members through their
synonyms, values of a string slot's `pattern` found inside the sentence, numbers in a slot's
bounds, and every item of a list slot (SPEC 8.2).

In: an `ir.Slot` at construction (`EnumReader`, `PatternReader`), then normalised or raw
utterances. Out: the member, value or items heard, or None / an empty list.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .. import ir, patterns
from ..slots import normalized_text
from . import lexicon as lex
from .polarity import Polarity, may_negate
from .text import normalise, span_negated


class EnumReader:
    """An enum slot's synonyms and member names as one alternation, longest first.

    Polarity (SPEC 18.1): a synonym the utterance negates ("먹었" in "안 먹었어", "delivery"
    in "I don't want delivery") does not name its member; a synonym written negated ("안 먹",
    "not yet") matches only negated forms, however spaced ("안먹었어", "먹지 않았어"). Among
    the members named, the longest synonym wins, then the one nearest the end of the utterance
    (SPEC 18.1: "formal, no, casual" is casual). An utterance
    holding one of a member's `not_synonyms` (18.5) never names that member.

    In Korean, given `polarity_of` (`polarity.reader`), what negates a synonym is read from
    the utterance's morphemes (a negator outside the synonym that negates its last word), a
    synonym put in doubt ("먹었나 모르겠네") names nothing, and a negated synonym of one
    stem ("안 먹", "못 먹") also names its member wherever a negator of its kind negates a
    word of that stem ("못 챙겨 먹었어"). Without it (English), the words around a match
    say (`text.span_negated`, and a negating verb earlier in an English clause)."""

    def __init__(self, slot: ir.Slot, polarity_of: Callable[[str], Polarity] | None = None):
        self.polarity_of = polarity_of
        members = list(slot.values)
        # Negating one of two members means the other ("안 아파요" -> good); among more
        # members a negation says only what it is not, so the match is dropped.
        self.flip = {members[0]: members[1], members[1]: members[0]} if len(members) == 2 else {}
        alternatives: dict[str, tuple[str, str, bool, int]] = {}  # regex -> first char, reading
        self.negated_stems: list[tuple[str, str, str, int]] = []  # kind, stem, member, size
        for member in members:
            for phrase in (*slot.synonyms.get(member, ()), member.replace("_", " ")):
                spaced = normalise(phrase)
                if not spaced:
                    continue
                size = len(spaced.replace(" ", ""))
                head, _, stem = spaced.partition(" ")
                if head in lex.NEGATION_PREFIX and stem and " " not in stem:
                    self.negated_stems.append((head, stem, member, size))
                alternatives.setdefault(lex.synonym_regex(spaced), (spaced[0], member, False, size))
                for regex, first in _polar_forms(spaced):
                    alternatives.setdefault(regex, (first, member, regex.startswith("!"), size))
        # longest first; at one size a reading spelt negated ("먹지 않") after the others, so
        # the negated synonym's own reading of the same words ("안 먹" of not_yet) is tried first
        ordered = sorted(alternatives.items(), key=lambda item: (-item[1][3],
                                                                  item[0].startswith("!")))
        self.regex = re.compile(lex.guarded([f"({regex.lstrip('!')})" for regex, _ in ordered],
                                         {reading[0] for _, reading in ordered}))
        self.readings = [reading[1:] for _, reading in ordered]
        self.excluded = {member: re.compile("|".join(lex.compact_regex(normalise(p))
                                                     for p in phrases if normalise(p)))
                         for member, phrases in slot.not_synonyms.items()
                         if any(normalise(p) for p in phrases)}

    def read_all(self, spaced: str) -> list[str]:
        """Every member `spaced` names, in order (the items of a list slot, SPEC 8.2)."""
        found: list[str] = []
        polar = self._polarity(spaced)
        for match in self.regex.finditer(spaced):
            member, negated, _ = self.readings[match.lastindex - 1]
            if not negated and not self._negated(spaced, match.start(), match.end(), polar) \
                    and member not in found and not self._excluded(member, spaced):
                found.append(member)
        return found

    def read(self, spaced: str) -> str | None:
        """The member `spaced` names (the longest synonym wins, then the last), or None."""
        found = self.read_span(spaced)
        return found[0] if found else None

    def read_span(self, spaced: str) -> tuple[str, int, int] | None:
        """The member `spaced` names and where its synonym stands, or None."""
        polar = self._polarity(spaced)
        best_size, best = 0, None
        for match in self.regex.finditer(spaced):
            member, negated, size = self.readings[match.lastindex - 1]
            start, end = match.span()
            if negated or self._negated_here(spaced, start, end, polar):
                member = self.flip.get(member)
            elif spaced.isascii() and _clause_negated(spaced, start):
                member = None  # "I haven't decided on delivery" says neither member
            elif polar is not None and polar.doubted(start, end):
                member = None  # "먹었나 모르겠네" says it was not checked
            # `>=`: on a tie the later match wins (SPEC 18.1: "nearest the end")
            if member is not None and size >= best_size and not self._excluded(member, spaced):
                best_size, best = size, (member, start, end)
        for member, start, end, size in self._negated_stem_readings(spaced, polar):
            if (size, start) >= (best_size, best[1] if best else -1) \
                    and not self._excluded(member, spaced):
                best_size, best = size, (member, start, end)
        return best

    def _polarity(self, spaced: str) -> Polarity | None:
        """The morphemes' reading of a Korean utterance that may hold a negator, else None."""
        if self.polarity_of is None or spaced.isascii() or not may_negate(spaced):
            return None
        return self.polarity_of(spaced)

    def _negated_here(self, spaced: str, start: int, end: int, polar: Polarity | None) -> bool:
        """Whether the words next to the match `spaced[start:end]` negate it: in Korean by
        their morphemes, else by the word tables (`span_negated`)."""
        if polar is not None:
            return polar.negated(start, end)
        if self.polarity_of is not None and not spaced.isascii():
            return False  # no syllable of the utterance may negate
        return span_negated(spaced, start, end)

    def _negated(self, spaced: str, start: int, end: int, polar: Polarity | None) -> bool:
        """Whether the match is negated, put in doubt (Korean), or negated by a verb earlier
        in its English clause ("I don't think I want delivery")."""
        if self._negated_here(spaced, start, end, polar):
            return True
        if polar is not None:
            return polar.doubted(start, end)
        return spaced.isascii() and _clause_negated(spaced, start)

    def _negated_stem_readings(self, spaced: str, polar: Polarity | None):
        """(member, start, end, size) for each word a negated synonym's negator negates and
        that opens with its stem ("못 먹" in "못 챙겨 먹었어")."""
        if polar is None or not self.negated_stems:
            return
        for kind, stem, member, size in self.negated_stems:
            for _, start, end in polar.negated_words(kind):
                if spaced.startswith(stem, start):
                    yield member, start, end, size

    def names_whole(self, spaced: str) -> str | None:
        """The member when `spaced` is nothing but one of its synonyms ("riverside" of
        "riverside?", SPEC 18.6), else None."""
        found = self.read_span(spaced)
        return found[0] if found and found[1] == 0 and found[2] == len(spaced) else None

    def _excluded(self, member: str, spaced: str) -> bool:
        exclusion = self.excluded.get(member) if self.excluded else None
        return exclusion is not None and exclusion.search(spaced) is not None


def _polar_forms(spaced: str) -> list[tuple[str, str]]:
    """The other spellings of a synonym's polarity, each with its first character: a
    positive verb synonym negated by "-지 않", a noun + 하다 one by "안/못 하다" (marked "!":
    that reading is negated); a
    negated one ("안 먹", "못 먹") also as "먹지 않", "먹지 못" (a positive reading)."""
    if spaced.isascii():
        return []
    head, _, rest = spaced.partition(" ") if spaced[:1] in lex.NEGATION_PREFIX else ("", "", "")
    if head in lex.NEGATION_PREFIX and rest:
        stem = rest.replace(" ", "")
        return [(lex.compact_regex(stem) + r"지(?:도|는|를)?\s*(?:않|못)", stem[0])]
    if spaced[:1] in lex.NEGATION_PREFIX and len(spaced) > 1 and " " not in spaced:
        return []  # "안먹": its regex already matches "안 먹" (Korean ignores spacing)
    stem = lex.negatable_stem(spaced)
    if not stem:
        return []
    forms = [("!" + lex.compact_regex(stem) + r"지(?:도|는|를)?\s*(?:않|못|말)", stem[0])]
    if stem.endswith("하") and len(stem) > 2:  # "식사했": "식사 안 했어", "식사를 못 했어"
        forms.append(("!" + lex.compact_regex(stem[:-1]) + r"(?:을|를)?\s*(?:안|못)\s*[하했해할한]",
                      stem[0]))
    return forms


def _clause_negated(spaced: str, start: int) -> bool:
    words = spaced[:start].split()
    for word in reversed(words):
        if word in _CLAUSE_BREAKS:
            return False
        if word in _CLAUSE_NEGATORS:
            return True
    return False


_CLAUSE_BREAKS = frozenset(("but", "and", "so", "because", "then", "though", "or", "yes",
                            "yeah", "actually"))
_CLAUSE_NEGATORS = frozenset(("not", "never", "dont", "didnt", "doesnt", "cant", "cannot",
                              "couldnt", "wont", "wouldnt", "havent", "hasnt", "hadnt", "isnt",
                              "arent", "wasnt", "werent", "shouldnt"))


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
