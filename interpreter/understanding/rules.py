"""The `rules` NLU: dialogue act, intent, slot values and a confidence from word tables and the
scenario's own declarations. Korean and English, no model, standard library only.

In: a `Program` at construction; then, per turn, an utterance and a context whose `node` says
which slots the current node collects (nothing else of the context or the engine is used).
Out: an `NLUResult(intent, dialogue_act, slots, confidence, text)`.
Holds after: the act is one of `ir.ACTS`, and `silence` exactly when the text is blank; the
intent is a declared intent or None; slot names are declared slots and values have the slot's
type (enum members, ints, bools, strings); bounds are not checked here, the engine validates
and records what it drops. Everything derived from the program (normalised examples, compiled
patterns, synonym tables) is built once in `__init__`; `parse` compiles no regex.

How each part is read (word tables and word-form readers live in `understanding.lexicon`):
  act     in order: a whole-utterance lexicon entry; a leading filler or "yes/no + but"
          (skipped, the rest decides); a question ("?" ending the text, a question ending, a
          question word); goodbye; a leading "no"; thanks; greeting; a leading "yes"; only
          noise (fillers, jamo runs, keyboard mashing) -> null; anything else -> inform.
  intent  per declared intent, the best of: a `patterns` regex (searched in the first
          `patterns.MAX_SEARCH_CHARS` characters); an example equal to, or
          contained in, the utterance (spacing ignored in Korean, whole words in English);
          every word stem of an example opening some utterance word, Korean endings tolerated
          (not a past form, "끝냈어요", nor a reason or condition, "도와주셔서"); the
          similarity of the utterance to an example (`understanding.similarity`: character
          n-grams of word stems, so "그냥 취소할래요" is near "취소해 주세요"), when it reaches
          `MIN_SIMILARITY`. An intent scoring under `MIN_INTENT_SCORE` is not heard; ties go to
          the intent declared first. Negation: a negated match ("그만하지 마") does not count,
          and an intent one of whose patterns or examples the utterance negates is ruled out
          for the turn, whatever else of it matched ("취소 안 할래요" holds the example "안
          할래요" but refuses to cancel), unless the utterance is one of its examples.
  slots   enum: synonyms and member names, spacing-insensitive, longest first; negation flips
          a two-member enum ("안 아파요" -> good) and drops a match in a larger one; in Korean
          negation and doubt are read from Kiwi's morphemes (`understanding.polarity`, loaded
          for a Korean program with an enum slot), in English from its words. integer:
          digits and Korean/English numerals, the first in the slot's bounds. boolean:
          affirm/deny. email: a regex. string with a `pattern`, when collected: the trimmed
          answer if the pattern matches it in full, else the first substring of the utterance
          the pattern matches ("제 번호는 010-1234-5678이에요" -> "010-1234-5678"; `values.PatternReader`
          says how anchors are read). string: the trimmed answer for the node's single string
          slot when nothing else was heard (the engine refuses it when a pattern does not
          match). Slots the node does not collect are only read when the utterance names them
          unmistakably (enum synonyms, emails): a bare number or sentence does not say which
          slot it answers.

Confidence, one number per result in [0, 1]: the intent's score when an intent matched, else
the act's. 1.0 an exact lexicon entry, a pattern or an exact example; 0.9 a lexicon phrase, a
question or an example contained in the utterance; 0.85 a leading "yes"/"no" with content
after it; 0.8 example stems; 0.5-0.8 similarity, linear from 0.5 at `MIN_SIMILARITY` to 0.8 at
1.0 (`similarity_score`); 0.6 inform by default (words, nothing recognised); 0.0 null (nothing
understood). A matched intent always has 0.5 at least.

Intent matching (the tiers above, the lemma tier, the margin and how the thresholds were
calibrated) is `understanding.intents`.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from .. import ir, patterns
from . import lexicon as lex, morph, polarity
from .acts import classify_act
from .intents import (  # noqa: F401 (the thresholds and scores: public here as before)
    LEMMA_CEILING, MARGIN, MAX_CANDIDATES, MIN_INTENT_SCORE, MIN_LEMMA_SIMILARITY,
    MIN_SIMILARITY, SIMILARITY_CEILING, IntentMatcher, IntentReading, NO_INTENT, lemma_score,
    similarity_score)
from .nlu import NLUResult
from .text import normalise  # noqa: F401 (public: tests and benchmarks read it here)
from .scope import Scope, declined, frameless
from .values import EnumReader, PatternReader, item_kind, pick_number

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_SCALE_WORDS = re.compile(r"\b(?:hundred|thousand)\b", re.IGNORECASE)
_DATE = re.compile(r"\d{2,4}\s*[-./]\s*\d{1,2}\s*[-./]\s*\d{1,4}")
_FREE_TEXT_ACTS = frozenset(("inform", "affirm", "deny"))
_NUMERIC_TYPES = frozenset(("integer", "number"))
_BOOLEAN_ACTS = {"affirm": True, "deny": False}


class _Heard(NamedTuple):
    """What slot reading may look at: the answer part of the utterance, as words and text."""

    raw: str
    words: list[str]  # without the asked last word of a question ("밥 먹었어?")
    text: str  # the same words joined
    content: str  # the same without polite act words, for slots the node does not ask


# --- the NLU -----------------------------------------------------------------------------------


class RulesNLU:
    """The built-in rules NLU for one program; see the module docstring for what it reads."""

    name = "rules"

    def __init__(self, program: ir.Program):
        self.program = program
        self._intents = IntentMatcher(program.intents, program.language)
        polarity_of = None  # SPEC 18.1: Korean negation read from Kiwi's morphemes
        if morph.needs_polarity(program):
            polarity_of = polarity.reader_for(morph.primary(program.language))
        self._enums = {i: EnumReader(s, polarity_of) for i, s in enumerate(program.slots)
                       if item_kind(s) == "enum" and s.values}
        emails = [i for i, s in enumerate(program.slots) if s.value_type == "email"]
        self._scope = Scope(program)
        self._patterned: dict[int, PatternReader] = {}
        self._dates = None  # SPEC 14.1: the date and time reader, for a program that has them
        if any(item_kind(s) in ir.TEMPORAL_KINDS for s in program.slots):
            from . import dates

            self._dates = dates
        for i, slot in enumerate(program.slots):
            if item_kind(slot) == "string" and slot.pattern:
                try:
                    self._patterned[i] = PatternReader(slot)
                except patterns.PatternError:
                    pass  # the engine refuses the program (`slots`); the slot reads as before
        # 18.7: what may be read off its node, enums first; one e-mail slot only (two would
        # not say which address is which)
        self._off_node = (*self._enums, *(emails if len(emails) == 1 else ()),
                          *(i for i in self._patterned if i not in self._enums),
                          *(i for i, s in enumerate(program.slots)
                            if s.value_type in _NUMERIC_TYPES or s.value_type in ir.TEMPORAL_KINDS))
        self._off_node = tuple(i for i in dict.fromkeys(self._off_node)
                               if program.slots[i].value_type != "list")

    def parse(self, text: str, context: Any) -> NLUResult:
        spaced = normalise(text)
        reading = classify_act(spaced, text)
        if reading.act == "silence":
            return NLUResult(dialogue_act="silence", confidence=1.0, text=text)
        words = spaced.split()
        found = self._intents.match(text, spaced, words) if words else NO_INTENT
        intent, score = found.intent, found.score
        act = "inform" if reading.act == "null" and intent else reading.act
        node = getattr(context, "node", None)
        collected = tuple(node.collect_slots) if node is not None else ()
        slots = self._read_slots(text, words, act, reading.act_words_only, intent, node)
        if act == "affirm" and reading.act_words_only and self._names_a_member(slots, collected):
            act = "inform"  # "괜찮아요" to "how are you?" answers with a value; it agrees to nothing
        elif act == "inform" and collected and not slots and declined(spaced):
            act = "deny"  # SPEC 18.3: "없어" to "any side effects?" declines the question
        confidence = score if intent else reading.confidence
        return NLUResult(intent=intent, dialogue_act=act, slots=slots,
                         confidence=confidence, text=text, candidates=found.candidates,
                         intent_note=found.note)

    def _names_a_member(self, slots: dict[str, Any], collected: tuple[int, ...]) -> bool:
        return any(i in self._enums and self.program.slots[i].name in slots for i in collected)

    def _read_slots(self, raw: str, words: list[str], act: str, act_words_only: bool,
                    intent: str | None, node: ir.Node | None) -> dict[str, Any]:
        """The values of a turn in SPEC 18's order: the node's own slots, then the others
        from the words left (`scope`), then the node's free text from what nothing took."""
        collected = tuple(node.collect_slots) if node is not None else ()
        if act == "question":
            if not lex.SECOND_PERSON.isdisjoint(words):
                return {}  # "너는 밥 먹었어?" is about the bot
            bare = self._bare_answer(raw, collected)
            if bare:
                return bare  # 18.6: "riverside?" answers "which branch?"
            words = words[:-1]  # the asked word is no answer ("밥 먹었어?")
        content = [w for w in words if w not in lex.POLITE_ACT_WORDS]
        heard = _Heard(raw, words, " ".join(words), " ".join(content))
        found: dict[str, Any] = {}
        for index in collected:
            value = self._read_collected(index, heard, act)
            if value is not None:
                found[self.program.slots[index].name] = value
        # Over-answering needs content: "아니 괜찮아요" declines, it is no health report.
        typed = not act_words_only and self._read_off_node(heard, node, found)
        strings = [i for i in collected if self.program.slots[i].value_type == "string"]
        if (len(strings) == 1 and not typed and intent is None and act in _FREE_TEXT_ACTS
                and not act_words_only and not declined(heard.text)
                and not any(self.program.slots[i].name in found for i in collected)):
            found[self.program.slots[strings[0]].name] = frameless(lex.free_text(raw))
        return found

    def _read_off_node(self, heard: _Heard, node: ir.Node | None,
                       found: dict[str, Any]) -> bool:
        """18.2, 18.7: the values of slots the node does not collect, from the words its own
        values did not take, into `found`; whether a typed value (not an enum member) was
        among them: the answer was then that value, no free text ("my date of birth is
        1984-07-12" at the address node), while a member is heard beside it ("요즘 무릎이
        아파서요" tells the day and the health)."""
        typed = False
        spaced, raw = heard.content, heard.raw
        for value in found.values():  # the words that filled a slot of the node are taken
            if isinstance(value, str) and value:
                spaced = spaced.replace(normalise(value), " ")
                raw = raw.replace(value, " ")
        collected = node.collect_slots if node is not None else ()
        for index in self._off_node:
            if index in collected or not self._scope.off_node(index, node, spaced):
                continue
            value = self._read_named(index, spaced, raw)
            if value is None and index in self._patterned:
                value = self._patterned[index].read(raw)
            elif value is None and item_kind(self.program.slots[index]) in _NUMERIC_TYPES:
                value = pick_number(lex.numbers(spaced.split()), self.program.slots[index])
            elif value is None and item_kind(self.program.slots[index]) in ir.TEMPORAL_KINDS:
                value = self._read_temporal(self.program.slots[index], raw)
            if value is not None:
                found[self.program.slots[index].name] = value
                typed = typed or index not in self._enums
        return typed

    def _bare_answer(self, raw: str, collected: tuple[int, ...]) -> dict[str, Any]:
        """A value of the node's own slot said as a question ("riverside?", "delivery?")."""
        answer = raw.strip().rstrip("?？ ")
        if not answer or len(answer.split()) > 3:
            return {}
        for index in collected:
            slot = self.program.slots[index]
            if index in self._enums and slot.value_type != "list":
                value = self._enums[index].names_whole(normalise(answer))
            elif index in self._patterned:
                value = self._patterned[index].read(answer)
            else:
                continue
            if value is not None:
                return {slot.name: value}
        return {}

    def _read_collected(self, index: int, heard: _Heard, act: str) -> Any:
        slot = self.program.slots[index]
        if slot.value_type == "list":
            return self._read_items(index, heard) or None
        if slot.value_type in _NUMERIC_TYPES:
            words = heard.words
            if _DATE.search(heard.raw):  # "2025-03-20" is a date, not the number 2025
                words = normalise(_DATE.sub(" ", heard.raw)).split()
            elif _SCALE_WORDS.search(heard.raw) and not self.program.language.startswith("ko"):
                from .numerals import number_words  # "one hundred and five" (SPEC 14.1)

                words = normalise(number_words(heard.raw)).split()
            return pick_number(lex.numbers(words), slot)
        if slot.value_type == "boolean":
            return _BOOLEAN_ACTS.get(act)
        if slot.value_type in ir.TEMPORAL_KINDS:
            return self._read_temporal(slot, heard.raw)
        if index in self._patterned:
            return self._patterned[index].read(heard.raw)
        return self._read_named(index, heard.text, heard.raw)

    def _read_temporal(self, slot: ir.Slot, raw: str) -> str | None:
        """A date (in the scenario's date order, looking back for a slot whose max is today
        or earlier) or a time of day (SPEC 14.1, 17.18)."""
        language, dates = self.program.language, self._dates
        assert dates is not None  # set when the program has a date or time slot
        if slot.value_type == "time":
            return dates.read_time(raw, language)
        return dates.read_date(raw, language, self.program.date_order,
                               dates.looks_back(slot.max_bound))

    def _read_items(self, index: int, heard: _Heard) -> list:
        """The items a collected list slot hears (SPEC 8.2): every member named, every
        e-mail address, every number, every match of the items' pattern; a list of plain
        strings is not read (there is no telling where one item ends)."""
        slot = self.program.slots[index]
        if index in self._enums:
            return self._enums[index].read_all(heard.text)
        if index in self._patterned:
            return self._patterned[index].read_all(heard.raw)
        if slot.items == "email":
            return list(dict.fromkeys(_EMAIL.findall(heard.raw)))
        if slot.items in _NUMERIC_TYPES:
            whole = slot.items == "integer"
            return [int(v) if whole else v for v, _, _ in lex.numbers(heard.words)
                    if not whole or float(v).is_integer()]
        return []

    def _read_named(self, index: int, text: str, raw: str) -> Any:
        """An enum member or an email: the values an utterance names unmistakably."""
        if index in self._enums:
            return self._enums[index].read(text)
        if self.program.slots[index].value_type == "email":
            match = _EMAIL.search(raw) if "@" in raw else None
            return match.group(0) if match else None
        return None
