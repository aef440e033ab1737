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
          every word stem of an example opening some utterance word, Korean endings tolerated;
          a character-bigram Dice overlap. Negated matches ("그만하지 마") do not count.
  slots   enum: synonyms and member names, spacing-insensitive, longest first; negation flips
          a two-member enum ("안 아파요" -> good) and drops a match in a larger one. integer:
          digits and Korean/English numerals, the first in the slot's bounds. boolean:
          affirm/deny. email: a regex. string: the trimmed answer for the node's single
          string slot when nothing else was heard. Slots the node does not collect are only
          read when the utterance names them unmistakably (enum synonyms, emails): a bare
          number or sentence does not say which slot it answers.

Confidence, one number per result: the intent's score when an intent matched, else the
act's. 1.0 an exact lexicon entry, a pattern or an exact example; 0.9 a lexicon phrase, a
question or an example contained in the utterance; 0.85 a leading "yes"/"no" with content
after it; 0.8 example stems; 0.5-0.8 bigram overlap; 0.6 inform by default (words, nothing
recognised); 0.0 null (nothing understood).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, NamedTuple

from .. import ir, patterns
from . import lexicon as lex
from .nlu import NLUResult

MIN_INTENT_SCORE = 0.5
MIN_BIGRAM_DICE = 0.6

_PUNCTUATION = "!\"#$%&()*+,/:;<=>?[\\]^_{|}~-@，。、！？…·「」『』（）【】《》〈〉“”"
_NORMALISE = str.maketrans({**{c: " " for c in _PUNCTUATION}, "'": None, "’": None,
                            "‘": None, "`": None})
_STRAY_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")  # keep the point of "36.5"
_LAUGHTER = re.compile(r"(?<=[가-힣a-z0-9])([ㅋㅎㅠㅜ]+)")  # "좋아요ㅋㅋ" -> "좋아요 ㅋㅋ"
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_DATE = re.compile(r"\d{2,4}\s*[-./]\s*\d{1,2}\s*[-./]\s*\d{1,4}")
_ACT_OR_FILLER_WORDS = frozenset(lex.EXACT_ACTS) | lex.FILLER_WORDS
_FREE_TEXT_ACTS = frozenset(("inform", "affirm", "deny"))
_NUMERIC_TYPES = frozenset(("integer", "number"))
_BOOLEAN_ACTS = {"affirm": True, "deny": False}


# --- text --------------------------------------------------------------------------------------


def normalise(text: str) -> str:
    """Lowercase, NFC, punctuation to spaces, apostrophes dropped, one space between words."""
    lowered = text.lower()
    if not lowered.isascii() and not unicodedata.is_normalized("NFC", lowered):
        lowered = unicodedata.normalize("NFC", lowered)
    spaced = lowered.translate(_NORMALISE)
    if "." in spaced:
        spaced = _STRAY_DOT.sub(" ", spaced)
    if not spaced.isascii() and any(ch in spaced for ch in "ㅋㅎㅠㅜ"):
        spaced = _LAUGHTER.sub(r" \1", spaced)
    return " ".join(spaced.split())


def _span_negated(spaced: str, start: int, end: int) -> bool:
    """Whether the match `spaced[start:end]` is negated by the words around it."""
    word_start = spaced.rfind(" ", 0, start) + 1
    if spaced[word_start:start] in lex.NEGATION_PREFIX:
        return True
    if word_start > 0 and spaced[:word_start - 1].rsplit(" ", 1)[-1] in lex.NEGATION_BEFORE:
        return True
    after = lex.NEGATION_AFTER.match(spaced, end)
    return after is not None and spaced.count(" ", end, after.end()) <= 2  # the next two words


# --- dialogue acts -----------------------------------------------------------------------------


class ActReading(NamedTuple):
    """The act, how sure, and whether the utterance held nothing but act words."""

    act: str
    confidence: float
    act_words_only: bool = False


_NULL = ActReading("null", 0.0, True)


def classify_act(spaced: str, raw: str) -> ActReading:
    """The dialogue act of an utterance (`spaced` is `normalise(raw)`)."""
    if not raw.strip():
        return ActReading("silence", 1.0, True)
    words = spaced.split()
    if not words:
        return _NULL  # punctuation only
    return _classify_words(words, _asks_with_mark(raw, words))


def _asks_with_mark(raw: str, words: list[str]) -> bool:
    """A "?" that ends the text asks; "성함이요? 김순자" echoes and then answers."""
    mark = max(raw.rfind("?"), raw.rfind("？"))
    if mark < 0 or any(ch.isalnum() for ch in raw[mark + 1:]):
        return False
    # "한 4점?" hedges an answer; it does not ask one.
    return not any(index == len(words) - 1 for _, _, index in lex.numbers(words))


def _lead(words: list[str]) -> tuple[str | None, int]:
    """The marker the utterance opens with ('affirm', 'deny', 'filler') and its word count."""
    if len(words) >= 2 and words[0] + words[1] in lex.LEAD_DENY:
        return "deny", 2
    first = words[0]
    if first in lex.LEAD_DENY:
        return "deny", 1
    if first in lex.FILLER_WORDS:
        return "filler", 1
    if first in lex.LEAD_AFFIRM:
        return "affirm", 1
    return None, 0


def _classify_words(words: list[str], has_mark: bool) -> ActReading:
    compact = "".join(words)
    if not has_mark and compact in lex.EXACT_ACTS:
        return ActReading(lex.EXACT_ACTS[compact], 1.0, True)
    lead, size = _lead(words)
    rest = words[size:]
    if lead == "filler" or (lead and rest and rest[0] in lex.CONNECTIVES):
        rest = rest if lead == "filler" else rest[1:]
        return _classify_words(rest, has_mark) if rest else _NULL
    if _is_question(words, has_mark):
        return ActReading("question", 0.9)
    return _classify_statement(words, lead)


def _classify_statement(words: list[str], lead: str | None) -> ActReading:
    # Only act words ("좋아요", "아니 괜찮아요", "네 고마워요") answer the act; they carry no
    # content for free text or for slots the node does not ask for.
    only = _ACT_OR_FILLER_WORDS.issuperset(words)
    spaced = " ".join(words)
    if lex.GOODBYE_RE.search(spaced):
        return ActReading("goodbye", 0.9, only)
    if lead == "deny":  # "no, thank you" declines: a refusal before thanks is a refusal
        return ActReading("deny", 1.0 if only else 0.85, only)
    if lex.THANK_RE.search(spaced):
        return ActReading("thank", 0.9, only)
    if lex.GREET_RE.search(spaced):
        return ActReading("greet", 0.9, only)
    if lead == "affirm":
        return ActReading("affirm", 1.0 if only else 0.85, only)
    if all(lex.is_noise(word) for word in words):
        return _NULL
    return ActReading("inform", 0.6)


def _is_question(words: list[str], has_mark: bool) -> bool:
    if has_mark or lex.has_question_ending(words[-1]):
        return True
    first = words[0]
    if first in lex.EN_WH:
        return True
    if first in lex.EN_AUX and len(words) > 1 and words[1] in lex.EN_SUBJECTS:
        return True
    return _has_question_word(words)


def _has_question_word(words: list[str]) -> bool:
    if not lex.WH_WORD_RE.search(" ".join(words)):
        return False
    if any(lex.is_indirect_question(word) for word in words):
        return False  # "뭐 먹었는지 모르겠어" mentions a question, it does not ask one
    if words[-1].startswith(lex.NEGATIVE_ENDINGS) or (len(words) > 1 and words[-2] in ("안", "못")):
        return False  # "어디 아픈 데는 없어": an indefinite under negation, "nowhere"
    last = len(words) - 1
    for i, word in enumerate(words):
        if not word.startswith(lex.WH_PREFIXES) or word.startswith(lex.WH_EXCLUDED):
            continue
        if word == "뭐" and ((i < last and words[i + 1] in lex.WH_FILLER_NEXT)
                            or (i == last and i > 0 and words[i - 1].endswith("지"))):
            continue  # "뭐 그냥 그래", "똑같지 뭐": a filler
        return True
    return False


# --- intents -----------------------------------------------------------------------------------


def _bigrams(compact: str) -> frozenset[str]:
    if len(compact) < 2:
        return frozenset((compact,))
    return frozenset(map(str.__add__, compact, compact[1:]))


class _Stem(NamedTuple):
    """A word of an example: a literal prefix, then optionally one syllable of a vowel family."""

    literal: str
    next_initial: int | None = None
    next_vowels: tuple[int, ...] = ()


def _example_stem(word: str) -> _Stem:
    """The stem of an example word: 그만할래요 -> 그만 + ㅎ(ㅏ|ㅐ): 그만하, 그만할, 그만해."""
    ending = next((e for e in lex.INTENT_ENDINGS if word.endswith(e)), "")
    if word.isascii() or not ending or len(word) - len(ending) < 2:
        return _Stem(word)  # "할래요", "거예요": too little stem to tolerate endings
    stem = word[: -len(ending)]
    parts = lex.syllable(stem[-1])
    if parts is None:
        return _Stem(stem)
    return _Stem(stem[:-1], parts[0], lex.vowel_family(parts[0], parts[1]))


def _stem_index(stem: _Stem, words: list[str]) -> int:
    """Index of the first word that begins with `stem`, or -1."""
    size = len(stem.literal)
    for i, word in enumerate(words):
        if stem.next_initial is None:
            if word == stem.literal or (not word.isascii() and word.startswith(stem.literal)):
                return i
        elif len(word) > size and word.startswith(stem.literal):
            parts = lex.syllable(word[size])
            if parts and parts[0] == stem.next_initial and parts[1] in stem.next_vowels:
                return i
    return -1


def _word_negated(words: list[str], index: int, stem_size: int) -> bool:
    if index > 0 and words[index - 1] in lex.NEGATION_BEFORE:
        return True
    tail = words[index][stem_size:] + (" " + words[index + 1] if index + 1 < len(words) else "")
    after = lex.NEGATION_AFTER.match(tail)
    return after is not None and tail.count(" ", 0, after.end()) <= 1


class _Example:
    """One intent example, normalised once."""

    def __init__(self, text: str):
        spaced = normalise(text)
        self.compact = spaced.replace(" ", "")
        self.regex = re.compile(lex.compact_regex(spaced))
        kept = [w for w in spaced.split() if w not in lex.INTENT_STOPWORDS] or spaced.split()
        self.stems = tuple(_example_stem(w) for w in kept)
        self.bigrams = _bigrams(self.compact)
        self.head = self.compact[:2]
        # Every tier needs the head bigram or the first stem's opening bigram in the text, so
        # an example sharing neither is not scored at all (most examples, most turns).
        opening = self.stems[0].literal[:2] if self.stems else ""
        self.gates = frozenset(g for g in (self.head, opening) if len(g) == 2)
        self.always = len(self.head) < 2 or len(opening) < 2

    def score(self, spaced: str, compact: str, words: list[str]) -> float:
        if compact == self.compact:
            return 1.0
        if self.compact in compact:
            spans = self.regex.finditer(spaced)
            return 0.0 if all(_span_negated(spaced, m.start(), m.end()) for m in spans) else 0.9
        if any(stem.literal not in spaced for stem in self.stems):
            return 0.0
        for stem in self.stems:
            index = _stem_index(stem, words)
            if index < 0 or _word_negated(words, index, len(stem.literal)):
                return 0.0
        return 0.8

    def fuzzy_score(self, text_bigrams: frozenset[str]) -> float:
        """Dice overlap of character bigrams, when the text keeps the example's opening bigram.

        Korean varies the end of a phrase and keeps its head, so a text without the head
        ("얘기하자" against "그만 얘기하자") is a different phrase."""
        if self.head not in text_bigrams:
            return 0.0
        dice = 2 * len(self.bigrams & text_bigrams) / (len(self.bigrams) + len(text_bigrams))
        return 0.8 * dice if dice >= MIN_BIGRAM_DICE else 0.0


def _pattern_score(regexes: tuple[re.Pattern, ...], raw: str) -> float:
    """1.0 when a pattern matches a non-blank, non-negated span of the utterance's first
    `patterns.MAX_SEARCH_CHARS` characters (what bounds the matching time), else 0.0."""
    text = patterns.searched(raw)
    for regex in regexes:
        for match in regex.finditer(text):
            if match.group(0).strip() and not _raw_span_negated(text, match.start(), match.end()):
                return 1.0
    return 0.0


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
    an opening with the utterance instead of every example of every intent."""

    def __init__(self, intents: list[ir.Intent]):
        self.names = [intent.name for intent in intents]
        self.patterns: list[tuple[int, tuple[re.Pattern, ...]]] = []
        self.by_gate: dict[str, list[tuple[int, _Example]]] = {}
        self.ungated: list[tuple[int, _Example]] = []
        for order, intent in enumerate(intents):
            compiled = ir.intent_patterns(intent)  # checked when the IR was loaded
            if compiled:
                self.patterns.append((order, compiled))
            for example in (_Example(e) for e in intent.examples if normalise(e)):
                if example.always:
                    self.ungated.append((order, example))
                for gate in () if example.always else example.gates:
                    self.by_gate.setdefault(gate, []).append((order, example))
        self.gate_keys = frozenset(self.by_gate)

    def match(self, raw: str, spaced: str, words: list[str]) -> tuple[str | None, float]:
        """The best-scoring declared intent and its score, or (None, 0.0); ties go to the first."""
        compact = spaced.replace(" ", "")
        text_bigrams = _bigrams(compact)
        scores = {order: _pattern_score(regexes, raw) for order, regexes in self.patterns}
        fuzzy = None
        for order, example in self._candidates(text_bigrams):
            score = scores.get(order, 0.0)
            if score >= 1.0:
                continue
            score = max(score, example.score(spaced, compact, words))
            if score < MIN_INTENT_SCORE:
                fuzzy = _trusts_fuzzy(words) if fuzzy is None else fuzzy
                score = max(score, example.fuzzy_score(text_bigrams) if fuzzy else 0.0)
            scores[order] = score
        best = min(scores, key=lambda order: (-scores[order], order), default=None)
        if best is None or scores[best] < MIN_INTENT_SCORE:
            return None, 0.0
        return self.names[best], scores[best]

    def _candidates(self, text_bigrams: frozenset[str]) -> list[tuple[int, _Example]]:
        hits = text_bigrams & self.gate_keys
        if not hits:
            return self.ungated
        found = {id(example): (order, example) for order, example in self.ungated}
        for bigram in hits:
            for order, example in self.by_gate[bigram]:
                found[id(example)] = (order, example)
        return list(found.values())


def _trusts_fuzzy(words: list[str]) -> bool:
    """A fuzzy match has no span to check for negation: in a negated sentence it is skipped."""
    return not any(w in lex.NEGATION_BEFORE or w.startswith(lex.NEGATED_VERB_PREFIXES)
                   or "지않" in w or "지못" in w for w in words)


# --- slots -------------------------------------------------------------------------------------


class _EnumSlot:
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

    def read(self, spaced: str) -> str | None:
        """The member `spaced` names (the longest synonym wins), or None."""
        best_size, best = 0, None
        for match in self.regex.finditer(spaced):
            member, negated, size = self.readings[match.lastindex - 1]
            if negated or _span_negated(spaced, match.start(), match.end()):
                member = self.flip.get(member)
            if member is not None and size > best_size:
                best_size, best = size, member
        return best


def _in_bounds(value: int | float, slot: ir.Slot) -> bool:
    return (slot.min is None or value >= slot.min) and (slot.max is None or value <= slot.max)


def _pick_number(found: list[tuple[int | float, str, int]], slot: ir.Slot) -> int | float | None:
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
    in_bounds = [v for v in candidates if _in_bounds(v, slot)]
    return (in_bounds or candidates or [None])[0]


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
        self._intents = _IntentMatcher(program.intents)
        self._enums = {i: _EnumSlot(s) for i, s in enumerate(program.slots)
                       if s.value_type == "enum" and s.values}
        emails = [i for i, s in enumerate(program.slots) if s.value_type == "email"]
        self._emails_anywhere = tuple(emails) if len(emails) == 1 else ()

    def parse(self, text: str, context: Any) -> NLUResult:
        spaced = normalise(text)
        reading = classify_act(spaced, text)
        if reading.act == "silence":
            return NLUResult(dialogue_act="silence", confidence=1.0, text=text)
        words = spaced.split()
        intent, score = self._intents.match(text, spaced, words) if words else (None, 0.0)
        act = "inform" if reading.act == "null" and intent else reading.act
        node = getattr(context, "node", None)
        collected = tuple(node.collect_slots) if node is not None else ()
        slots = self._read_slots(text, words, act, reading.act_words_only, intent, collected)
        if act == "affirm" and reading.act_words_only and self._names_a_member(slots, collected):
            act = "inform"  # "괜찮아요" to "how are you?" answers with a value; it agrees to nothing
        confidence = score if intent else reading.confidence
        return NLUResult(intent=intent, dialogue_act=act, slots=slots,
                         confidence=confidence, text=text)

    def _names_a_member(self, slots: dict[str, Any], collected: tuple[int, ...]) -> bool:
        return any(i in self._enums and self.program.slots[i].name in slots for i in collected)

    def _read_slots(self, raw: str, words: list[str], act: str, act_words_only: bool,
                    intent: str | None, collected: tuple[int, ...]) -> dict[str, Any]:
        if act == "question":
            if not lex.SECOND_PERSON.isdisjoint(words):
                return {}  # "너는 밥 먹었어?" is about the bot
            words = words[:-1]  # the asked word is no answer ("밥 먹었어?")
        content = [w for w in words if w not in lex.POLITE_ACT_WORDS]
        heard = _Heard(raw, words, " ".join(words), " ".join(content))
        found: dict[str, Any] = {}
        for index in collected:
            value = self._read_collected(index, heard, act)
            if value is not None:
                found[self.program.slots[index].name] = value
        # Over-answering needs content: "아니 괜찮아요" declines, it is no health report.
        for index in () if act_words_only else (*self._enums, *self._emails_anywhere):
            if index not in collected:
                value = self._read_named(index, heard.content, raw)
                if value is not None:
                    found[self.program.slots[index].name] = value
        strings = [i for i in collected if self.program.slots[i].value_type == "string"]
        if (len(strings) == 1 and not found and intent is None and act in _FREE_TEXT_ACTS
                and not act_words_only):
            found[self.program.slots[strings[0]].name] = lex.free_text(raw)
        return found

    def _read_collected(self, index: int, heard: _Heard, act: str) -> Any:
        slot = self.program.slots[index]
        if slot.value_type in _NUMERIC_TYPES:
            words = heard.words
            if _DATE.search(heard.raw):  # "2025-03-20" is a date, not the number 2025
                words = normalise(_DATE.sub(" ", heard.raw)).split()
            return _pick_number(lex.numbers(words), slot)
        if slot.value_type == "boolean":
            return _BOOLEAN_ACTS.get(act)
        return self._read_named(index, heard.text, heard.raw)

    def _read_named(self, index: int, text: str, raw: str) -> Any:
        """An enum member or an email: the values an utterance names unmistakably."""
        if index in self._enums:
            return self._enums[index].read(text)
        if self.program.slots[index].value_type == "email":
            match = _EMAIL.search(raw) if "@" in raw else None
            return match.group(0) if match else None
        return None
