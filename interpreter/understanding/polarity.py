"""Negation scope of a Korean utterance, read from Kiwi's morphemes (SPEC 13.1, 18.1).

In: a normalised utterance (`text.normalise`) and the word -> tagged morphemes function of
`morph`. Out: a `Polarity`: per word, the negators that negate it and the words that doubt
it, each with the place (a character offset of the utterance) it stands, so that a reader
can ask whether a synonym it matched is negated from outside the synonym (`negated`), put in
doubt (`doubted`), and which words a negator of a kind negates (`negated_words`).

What negates a word (by part of speech, not by spelling, so "안경", "안녕", "못생겼어" negate
nothing, and the 안 of the next clause, "아파 못 걷겠어", does not reach back):
- the adverb 안 or 못 (MAG), as a word of its own or glued ("안 먹었어", "안먹었어"): the next
  predicate, and on through verbs joined by -아/-어 ("안 챙겨 먹었어"); a noun or a noun with
  its particle right before it too ("복용 안 했어", "허리는 안 아프고"), but not a subject
  ("관절이 안 좋아요" is about the joints); 말고 the noun before it ("정형외과 말고 내과");
- -지 followed by 않다, 못하다 or 말다 (VX, or 못 + 하): the verb of -지 ("먹지 않았어",
  "아프진 않아", "먹지 못했어", glued "아프지않아"), and the verb before an auxiliary so
  negated ("먹고 싶지 않아");
- 없다 after a noun, or after a verb's -ㄴ/-은 with at most one noun between ("기침 없어",
  "아픈 데는 없어", "먹은 적 없어").
What doubts a word: -나 / -는지 / -ㄴ지 / -ㄹ지 followed (adverbs between) by 모르다, 기억,
확실, 헷갈리다 ("먹었나 모르겠네", "먹었는지 잘 모르겠어", "먹었나 기억이 안 나"): nothing is
asserted, so no value is read.
A negator is recorded by kind: "안" (안, 않다, 말다, 없다) or "못" (못, 못하다).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from functools import cache, lru_cache

from . import morph
from .morph import Morphemes

_ADVERBS = frozenset(("안", "못"))
_AUXILIARY_NEGATORS = {"않": "안", "말": "안", "못": "못"}  # 않다, 말다 (VX); 못 + 하다
_SERIAL_ENDINGS = frozenset(("어", "아", "여"))  # 챙겨 먹다, 먹어 보다: one predicate
_DOUBT_ENDINGS = frozenset(("나", "는지", "은지", "ᆫ지", "을지", "ᆯ지", "는가", "ᆫ가"))
_DOUBT_WORDS = frozenset(("모르", "기억", "확실", "헷갈리", "글쎄"))
_NOUNISH = ("N", "J", "XR", "XSN", "SN", "SL")  # a noun, its particle, a root: 허리는, 복용
CACHE_UTTERANCES = 4096
REACH = 2  # words a rule looks at on each side of a negator or a doubt word


class Polarity:
    """The negators and doubts of one utterance's words; see the module docstring."""

    def __init__(self, words: list[str], tagged: list[Morphemes]):
        self.words = words
        self.starts: list[int] = []
        offset = 0
        for word in words:
            self.starts.append(offset)
            offset += len(word) + 1
        self.tagged = tagged
        self.negators: list[list[tuple[int, str]]] = [[] for _ in words]  # (place, kind)
        self.doubts: list[list[int]] = [[] for _ in words]
        for index in range(len(words)):
            self._read_word(index)

    # --- reading -----------------------------------------------------------------------

    def _read_word(self, i: int) -> None:
        tagged, place = self.tagged[i], self.starts[i]
        if not tagged:
            return
        form, tag = tagged[0]
        if tag == "MAG" and form in _ADVERBS:
            if len(tagged) == 1:
                if i + 1 < len(self.words):
                    self._negate_onwards(i + 1, place, form)
                if i > 0 and self._nounish(i - 1) and i + 1 < len(self.words) \
                        and self.tagged[i - 1][-1][1] != "JKS":
                    self._negate(i - 1, place, form)  # a subject is what is said of: "관절이 안 좋아"
            elif tagged[1][1][:1] == "V" or tagged[1][1] in ("XSV", "XSA"):
                self._negate_onwards(i, place, form)
        if form == "말" and tag in ("VV", "VX") and tagged[-1] == ("고", "EC") and i > 0 \
                and self._nounish(i - 1):
            self._negate(i - 1, place, "안")  # "정형외과 말고 내과": not X but Y
        if self._ends_in_ji(i) and i + 1 < len(self.words):
            kind = _auxiliary_negator(self.tagged[i + 1])
            if kind:
                self._negate_with_auxiliary(i, self.starts[i + 1], kind)
        self._read_glued_ji(i)
        self._read_absence(i)
        if tagged[-1][1] == "EC" and tagged[-1][0] in _DOUBT_ENDINGS:
            self._read_doubt(i)

    def _read_glued_ji(self, i: int) -> None:
        """-지 않다 written as one word ("아프지않아", "먹지못했어", "아프진않아"): the negator
        stands where its syllable does ("않", "못", "말" or "마"), so a synonym that holds it
        ("아프지 않") is not negated again."""
        tagged, word = self.tagged[i], self.words[i]
        for k in range(1, len(tagged) - 1):
            if tagged[k] == ("지", "EC"):
                rest = tagged[k + 2:] if tagged[k + 1][1] == "JX" else tagged[k + 1:]
                kind = _auxiliary_negator(rest)
                at = max(word.rfind(syllable) for syllable in "않못말마")
                if kind and at > 0:
                    self._negate(i, self.starts[i] + at, kind)
                return

    def _read_doubt(self, i: int) -> None:
        """-나 / -는지 then a word of doubt, adverbs between ("먹었는지 잘 모르겠네")."""
        j = i + 1
        while j < len(self.words) and len(self.tagged[j]) == 1 \
                and self.tagged[j][0][1] == "MAG" and self.tagged[j][0][0] not in _ADVERBS:
            j += 1
        if j < len(self.words) and self.tagged[j] and self.tagged[j][0][0] in _DOUBT_WORDS:
            self.doubts[i].append(self.starts[j])

    def _read_absence(self, i: int) -> None:
        """없다 after a noun, or after -ㄴ/-은 with at most one noun between."""
        for gap in (1, 2):
            j = i + gap
            if j >= len(self.words) or not self.tagged[j] or self.tagged[j][0] != ("없", "VA"):
                continue
            last = self.tagged[i][-1]
            adnominal = last[1] == "ETM" or (last[1] == "EC" and last[0].endswith("데"))
            if gap == 1 and (adnominal or self._nounish(i)):
                self._negate(i, self.starts[j], "안")
            elif gap == 2 and adnominal and self._nounish(i + 1):
                self._negate(i, self.starts[j], "안")
                self._negate(i + 1, self.starts[j], "안")

    def _negate(self, i: int, place: int, kind: str) -> None:
        self.negators[i].append((place, kind))

    def _negate_onwards(self, i: int, place: int, kind: str) -> None:
        """Negate word `i` and the verbs joined to it by -아/-어 ("안 챙겨 먹었어")."""
        self._negate(i, place, kind)
        while i + 1 < len(self.words) and self.tagged[i][-1][0] in _SERIAL_ENDINGS \
                and self.tagged[i][-1][1] in ("EC", "EF") and self.tagged[i + 1] \
                and self.tagged[i + 1][0][1][:1] == "V":
            i += 1
            self._negate(i, place, kind)

    def _negate_with_auxiliary(self, i: int, place: int, kind: str) -> None:
        """Negate the verb of -지, and the verb before it when that is an auxiliary
        ("먹고 싶지 않아": 먹다 is what is not wanted)."""
        self._negate(i, place, kind)
        if i > 0 and self.tagged[i][0][1] == "VX" and self.tagged[i - 1] \
                and self.tagged[i - 1][-1][1] in ("EC", "EF"):
            self._negate(i - 1, place, kind)

    def _ends_in_ji(self, i: int) -> bool:
        tagged = self.tagged[i]
        if tagged[-1][1] == "JX" and len(tagged) > 1:
            tagged = tagged[:-1]  # "아프진", "먹지도", "먹지는"
        return len(tagged) > 1 and tagged[-1][0] == "지" and tagged[-1][1] in ("EC", "EF")

    def _nounish(self, i: int) -> bool:
        tagged = self.tagged[i]
        return bool(tagged) and tagged[-1][1].startswith(_NOUNISH)

    # --- asking ------------------------------------------------------------------------

    def word_at(self, offset: int) -> int:
        """The index of the word holding character `offset`."""
        return max(bisect.bisect_right(self.starts, offset) - 1, 0)

    def negated(self, start: int, end: int) -> bool:
        """Whether the last word of `[start, end)` is negated by a negator outside it."""
        head = self.word_at(max(end - 1, start))
        return any(not start <= place < end for place, _ in self.negators[head])

    def doubted(self, start: int, end: int) -> bool:
        """Whether the last word of `[start, end)` is put in doubt ("먹었나 모르겠네")."""
        head = self.word_at(max(end - 1, start))
        return any(not start <= place < end for place in self.doubts[head])

    def negated_words(self, kind: str):
        """(index, start, end) of each word a negator of `kind` ("안" or "못") negates."""
        for index, negators in enumerate(self.negators):
            if any(k == kind for _, k in negators):
                start = self.starts[index]
                yield index, start, start + len(self.words[index])


def _auxiliary_negator(tagged: Morphemes) -> str | None:
    """The kind of negator a word after -지 is: 않다 / 말다 ("안"), 못하다 ("못"), or None."""
    if not tagged:
        return None
    form, tag = tagged[0]
    if tag == "VX" or (form == "말" and tag == "VV") or (
            tag == "MAG" and len(tagged) > 1 and tagged[1][0] == "하"):
        return _AUXILIARY_NEGATORS.get(form)
    return None


def reader(morphemes: Callable[[str], Morphemes]) -> Callable[[str], Polarity]:
    """A cached normalised utterance -> `Polarity` function over `morphemes`."""

    @lru_cache(maxsize=CACHE_UTTERANCES)
    def polarity(spaced: str) -> Polarity:
        words = spaced.split()
        # Only words within `REACH` of one that may negate are analysed: no rule looks
        # further, and an unseen word costs Kiwi's analysis at first sight.
        near = {j for i, word in enumerate(words) if may_negate(word)
                for j in range(i - REACH, i + REACH + 1)}
        return Polarity(words, [morphemes(word) if i in near else ()
                                for i, word in enumerate(words)])

    return polarity


@cache
def reader_for(language: str) -> Callable[[str], Polarity]:
    """`reader` over the analyser of `language`, started loading now (in the background) and
    waited for at the first utterance read; one per language and process (every program of
    that language shares its cache of utterances)."""
    morph.preload(language)
    built: list[Callable[[str], Polarity]] = []

    def polarity(spaced: str) -> Polarity:
        if not built:
            built.append(reader(morph.morphemes(language)))
        return built[0](spaced)

    return polarity


MAY_NEGATE = frozenset("안못않말마없모기확헷글")  # a syllable without which nothing negates or doubts


def may_negate(spaced: str) -> bool:
    """Whether `spaced` holds a syllable some negator or doubt starts with (a cheap test
    before the morphemes are read)."""
    return not MAY_NEGATE.isdisjoint(spaced)
