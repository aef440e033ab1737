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
          a two-member enum ("안 아파요" -> good) and drops a match in a larger one. integer:
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

Lemmas (SPEC 13.1, 13.2). Beside those tiers, the lemma tier (`understanding.evidence`, on
the lemmas of `understanding.morph`: Kiwi for Korean, simplemma for English) scores each
intent from `MIN_INTENT_SCORE` at `MIN_LEMMA_SIMILARITY` to `LEMMA_CEILING`, and under it a
candidate that did not make it. The stems and similarity tiers count only for an intent the
lemma tier sees too (some unit of it was said), so a word opening alone ("취소선" for "취소")
is no evidence. Up to `MAX_CANDIDATES` candidates are kept, best first; the best is chosen
when it reaches its threshold (`intents.NAME.threshold`, default `MIN_INTENT_SCORE`) by
`MARGIN` over the runner-up, in score or, on a tie, in lemma similarity (an exact example or
pattern, 1.0, needs no margin); otherwise the intent is None and the result's `intent_note`
says `ambiguous` or `below threshold`.

Calibration. `MIN_SIMILARITY` is one constant for every intent and language, chosen on the
labelled set of tests/test_nlu_rules.py together with the weights of `similarity` (a grid
over them, keeping the settings whose range of working thresholds was widest), then as the
middle of the range where no labelled utterance is read as an intent it does not have and
intent recall stays at 0.90 or more, on the original 312 lines and on the added ones alike
(0.41 to 0.50 with these weights): a false intent costs more than a missed one (it can end a
conversation). `tests/benchmarks/nlu_eval.py --sweep` prints precision and recall for every
threshold from 0.20 to 0.70.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from .. import ir, patterns
from . import lexicon as lex
from . import morph
from .acts import classify_act
from .evidence import LemmaIndex
from .nlu import AMBIGUOUS, BELOW_THRESHOLD, Candidate, NLUResult
from .similarity import ExampleIndex, example_stem, negations, stem_index, word_negated
from .text import normalise, span_negated as _span_negated  # noqa: F401 (normalise: public)
from .scope import Scope, declined, frameless
from .values import EnumReader, PatternReader, item_kind, pick_number

MIN_INTENT_SCORE = 0.5  # an intent scoring less is not heard
MIN_SIMILARITY = 0.45  # the similarity tier's one threshold: see "Calibration" above
SIMILARITY_CEILING = 0.8  # the score of similarity 1.0: what the example's stems score
NEGATED = -1.0  # an example or pattern matched, negated: the intent is ruled out for the turn
STEMS_SCORE = 0.8  # every stem of an example opens a word of the utterance
MIN_LEMMA_SIMILARITY = 0.5  # the lemma tier's threshold (`evidence`), chosen on the tuning sets
LEMMA_CEILING = 0.8  # the score of lemma similarity 1.0: what the example's stems score
MARGIN = 0.05  # SPEC 13.2: the chosen intent scores at least this much over the runner-up
MAX_CANDIDATES = 3

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_SCALE_WORDS = re.compile(r"\b(?:hundred|thousand)\b", re.IGNORECASE)
_DATE = re.compile(r"\d{2,4}\s*[-./]\s*\d{1,2}\s*[-./]\s*\d{1,4}")
_FREE_TEXT_ACTS = frozenset(("inform", "affirm", "deny"))
_NUMERIC_TYPES = frozenset(("integer", "number"))
_BOOLEAN_ACTS = {"affirm": True, "deny": False}


# --- intents -----------------------------------------------------------------------------------


def _bigrams(compact: str) -> frozenset[str]:
    if len(compact) < 2:
        return frozenset((compact,))
    return frozenset(map(str.__add__, compact, compact[1:]))


class _Example:
    """One intent example, normalised once."""

    def __init__(self, spaced: str):
        self.compact = spaced.replace(" ", "")
        self.negations = negations(spaced.split())  # "안 보낼래요" is itself negated
        self.regex = re.compile(lex.compact_regex(spaced))
        kept = [w for w in spaced.split() if w not in lex.INTENT_STOPWORDS] or spaced.split()
        self.stems = tuple(example_stem(w) for w in kept)
        self.head = self.compact[:2]
        # Every tier needs the head bigram or the first stem's opening bigram in the text, so
        # an example sharing neither is not scored at all (most examples, most turns).
        opening = self.stems[0].literal[:2] if self.stems else ""
        self.gates = frozenset(g for g in (self.head, opening) if len(g) == 2)
        self.always = len(self.head) < 2 or len(opening) < 2

    def score(self, spaced: str, compact: str, words: list[str]) -> float:
        """1.0 the utterance is the example, 0.9 contains it, 0.8 has its stems; `NEGATED`
        when it says the example only negated ("대화 종료하지 마세요"); else 0.0."""
        if compact == self.compact:
            return 1.0
        if self.compact in compact:
            spans = self.regex.finditer(spaced)
            negated = all(_span_negated(spaced, m.start(), m.end()) for m in spans)
            return NEGATED if negated and not self.negations else 0.9
        if any(stem.literal not in spaced for stem in self.stems):
            return 0.0
        negated = False
        for stem in self.stems:
            index = stem_index(stem, words)
            if index < 0:
                return 0.0
            negated = negated or word_negated(words, index, len(stem.literal))
        if negated and negations(words) <= self.negations:
            negated = False  # the utterance negates no more than the example itself does
        return NEGATED if negated else STEMS_SCORE


class IntentReading(NamedTuple):
    """What intent matching found: the intent (or None), its score, the candidates and, when
    no intent was chosen though some scored, why (`AMBIGUOUS`, `BELOW_THRESHOLD`)."""

    intent: str | None
    score: float
    candidates: tuple[Candidate, ...] = ()
    note: str = ""


_NO_INTENT = IntentReading(None, 0.0)


def lemma_score(similarity: float) -> float:
    """The score of a lemma similarity: linear from `MIN_INTENT_SCORE` at
    `MIN_LEMMA_SIMILARITY` to `LEMMA_CEILING` at 1.0; under the threshold, proportionally
    under `MIN_INTENT_SCORE` (a candidate that did not make it)."""
    if similarity < MIN_LEMMA_SIMILARITY:
        return MIN_INTENT_SCORE * similarity / MIN_LEMMA_SIMILARITY
    share = (similarity - MIN_LEMMA_SIMILARITY) / (1.0 - MIN_LEMMA_SIMILARITY)
    return MIN_INTENT_SCORE + (LEMMA_CEILING - MIN_INTENT_SCORE) * share


def similarity_score(similarity: float) -> float:
    """The score (and confidence) of a similarity of at least `MIN_SIMILARITY`: linear from
    `MIN_INTENT_SCORE` at the threshold to `SIMILARITY_CEILING` at 1.0."""
    share = (similarity - MIN_SIMILARITY) / (1.0 - MIN_SIMILARITY)
    return MIN_INTENT_SCORE + (SIMILARITY_CEILING - MIN_INTENT_SCORE) * share


def _pattern_score(regexes: tuple[re.Pattern, ...], raw: str) -> float:
    """1.0 when a pattern matches a non-blank, non-negated span of the utterance's first
    `patterns.MAX_SEARCH_CHARS` characters (what bounds the matching time); `NEGATED` when
    every match is negated ("취소 안 할게요"); else 0.0."""
    text = patterns.searched(raw)
    negated = False
    for regex in regexes:
        for match in regex.finditer(text):
            if not match.group(0).strip():
                continue
            if not _raw_span_negated(text, match.start(), match.end()):
                return 1.0
            negated = True
    return NEGATED if negated else 0.0


def _raw_span_negated(raw: str, start: int, end: int) -> bool:
    """`_span_negated` for a span of the raw utterance (patterns run on what the user typed)."""
    before, inside, after = normalise(raw[:start]), normalise(raw[start:end]), normalise(raw[end:])
    glue_before = " " if before and raw[start - 1].isspace() else ""
    glue_after = " " if after and raw[end].isspace() else ""
    span_start = len(before) + len(glue_before)
    text = before + glue_before + inside + glue_after + after
    return _span_negated(text, span_start, span_start + len(inside))


class _IntentMatcher:
    """Declared intents with their compiled patterns and normalised examples.

    Examples are indexed by their gate bigrams, so a turn scores only the examples that share
    an opening with the utterance instead of every example of every intent, and by the
    n-grams of their stems (`similarity.ExampleIndex`), so the similarity tier looks only at
    the examples that share one with the utterance."""

    def __init__(self, intents: list[ir.Intent], language: str = "ko"):
        self.names = [intent.name for intent in intents]
        self.thresholds = [MIN_INTENT_SCORE if i.threshold is None else i.threshold
                           for i in intents]
        self.language = language
        self.patterns: list[tuple[int, tuple[re.Pattern, ...]]] = []
        self.by_gate: dict[str, list[tuple[int, _Example]]] = {}
        self.ungated: list[tuple[int, _Example]] = []
        similar: list[tuple[int, list[str]]] = []
        for order, intent in enumerate(intents):
            compiled = ir.intent_patterns(intent)  # checked when the IR was loaded
            if compiled:
                self.patterns.append((order, compiled))
            for text in intent.examples:
                spaced = normalise(text)
                if not spaced:
                    continue
                example = _Example(spaced)
                similar.append((order, spaced.split()))
                if example.always:
                    self.ungated.append((order, example))
                for gate in () if example.always else example.gates:
                    self.by_gate.setdefault(gate, []).append((order, example))
        self.gate_keys = frozenset(self.by_gate)
        self.similar = ExampleIndex(similar)
        self._example_words = similar
        self._lemmas: LemmaIndex | None = None
        if similar:
            morph.preload(language)  # in the background: the first turn joins it

    def lemma_index(self) -> LemmaIndex:
        """The lemma tier, built at the first turn (the analyser loads off `mgi run`'s path)."""
        if self._lemmas is None:
            self._lemmas = LemmaIndex(self._example_words, morph.analyser(self.language))
        return self._lemmas

    def match(self, raw: str, spaced: str, words: list[str]) -> IntentReading:
        """The best-scoring declared intent and its score, or (None, 0.0); ties go to the first.

        An intent one of whose patterns or examples the utterance negates ("취소 안 할게요",
        "대화 종료하지 마세요") is out, whatever else of it matched, unless the utterance is
        one of its examples."""
        compact = spaced.replace(" ", "")
        scores = {order: _pattern_score(regexes, raw) for order, regexes in self.patterns}
        out = {order for order, score in scores.items() if score == NEGATED}
        exact = set()
        index = self.lemma_index() if self._example_words else None
        lemmas = index.scores(words) if index is not None else {}
        # an intent with an example of no unit ("안 할래요") is near an utterance of none
        unitless = index.unitless if index is not None and not index.units(words) else ()
        for order, example in self._candidates(_bigrams(compact)):
            score = example.score(spaced, compact, words)
            if score == STEMS_SCORE and order not in lemmas and order not in unitless:
                continue  # a stem opening a word is no lemma of it: "취소선" is no "취소"
            if score == NEGATED:
                out.add(order)
            elif score > scores.get(order, 0.0):
                scores[order] = score
            if score == 1.0:
                exact.add(order)
        out -= exact
        similar = self.similar.best(words, MIN_SIMILARITY, out)
        for order, similarity in similar.scores.items():
            # characters alone are no evidence: "취소선이 뭐예요" shares 취소 with no lemma
            if similarity >= MIN_SIMILARITY and (order in lemmas or order in unitless):
                scores[order] = max(scores.get(order, 0.0), similarity_score(similarity))
        out |= similar.negated - exact
        for order, similarity in lemmas.items():
            if similarity > 0.0:  # under the threshold, a candidate the trace shows
                scores[order] = max(scores.get(order, 0.0), lemma_score(similarity))
        for order in out:
            scores.pop(order, None)
        return self._choose(scores, lemmas)

    def _choose(self, scores: dict[int, float], lemmas: dict[int, float]) -> IntentReading:
        """The best intent when it reaches its threshold by `MARGIN` over the runner-up, in
        score or, on a tie of scores, in lemma similarity ("다시 보내" holds the stems of
        "그래 보내" and of "다시 보내 줘" alike); the candidates (best first, then the intent
        declared first) either way."""
        def rank(order: int) -> tuple[float, float, int]:
            return -scores[order], -lemmas.get(order, 0.0), order

        ranked = sorted((o for o in scores if scores[o] > 0.0), key=rank)[:MAX_CANDIDATES]
        candidates = tuple(Candidate(self.names[o], round(scores[o], 4)) for o in ranked)
        if not ranked:
            return _NO_INTENT
        best = ranked[0]
        if scores[best] < self.thresholds[best]:
            return IntentReading(None, 0.0, candidates, BELOW_THRESHOLD)
        if len(ranked) > 1 and scores[best] < 1.0:
            second = ranked[1]
            apart = max(scores[best] - scores[second],
                        lemmas.get(best, 0.0) - lemmas.get(second, 0.0))
            if apart < MARGIN - 1e-9:
                return IntentReading(None, 0.0, candidates, AMBIGUOUS)
        return IntentReading(self.names[best], scores[best], candidates)

    def _candidates(self, text_bigrams: frozenset[str]) -> list[tuple[int, _Example]]:
        hits = text_bigrams & self.gate_keys
        if not hits:
            return self.ungated
        found = {id(example): (order, example) for order, example in self.ungated}
        for bigram in hits:
            for order, example in self.by_gate[bigram]:
                found[id(example)] = (order, example)
        return list(found.values())


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
        self._intents = _IntentMatcher(program.intents, program.language)
        self._enums = {i: EnumReader(s) for i, s in enumerate(program.slots)
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
        found = self._intents.match(text, spaced, words) if words else _NO_INTENT
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
                from .dates import number_words  # "one hundred and five" (SPEC 14.1)

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
