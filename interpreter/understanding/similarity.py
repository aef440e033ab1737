"""How close an utterance is to an intent's examples, for the rules NLU (`understanding.rules`),
in two ways: the stems tier (`example_stem`, `stem_index`, `word_negated`: every word stem of
an example opens some word of the utterance, Korean endings tolerated) and the similarity of
character n-grams of word stems (`ExampleIndex`), described here. Standard library only;
nothing here knows about programs.

In: examples at construction (`ExampleIndex`: a key, the intent's index, and the normalised
words of each), then per turn the utterance's normalised words. Out (`Similar`): per key, the
best similarity in [0, 1] of its examples to the utterance, and the keys one of whose examples
the utterance negates; the caller decides what is enough (`intents.MIN_SIMILARITY`). Everything
derived from the examples (stems, weighted n-grams, an inverted index from n-gram to examples)
is built once; a turn stems its own words (stems are remembered across turns, 4096 words) and
looks up only the n-grams it has.

Stems. Korean is agglutinative: "취소할래요", "취소해 주세요" and "취소하고 싶어요" are one verb
(취소하다) under different endings, and spacing varies ("취소해주세요"). So each word is first
reduced to its stem (`stem`, tables in `understanding.lexicon`): a long particle ("까지",
"에서"), or else an auxiliary after the verb ("주세요", "싶어요", glued or as the next word) or
one verb ending (the longest) or a noun particle is stripped; under an ending or auxiliary, a
contracted last syllable is opened (바꿔 -> 바꾸, 해 -> 하), the ㄹ/ㄴ of a future or adnominal
form goes with its ending (할래요 -> 하, 끝낼게요 -> 끝내) and the 하 of a noun verb goes (취소하
-> 취소, so that the noun "접수 취소" meets the verb). A past form keeps its ㅆ ("끝냈어요"
reports, "끝낼게요" asks), and a reason or condition keeps its ending ("도와주셔서", "이만하면":
they ask for nothing). Words that say nothing about which intent is meant are left out: adverbs
and pronouns (이제, 그냥, 좀, 잘; "please", "just") and act words ("네", "그래요", "고마워요":
they say how, not what; goodbye words stay).

Meaning classes. A few stems mean the same for what a user asks of a conversation and are read
as one unit, their class (`lexicon.STEM_CLASSES`): stopping (그만, 이만, 여기까지, 끝내, 종료,
그만두), later (다음, 나중), changing (바꾸, 고치, 수정, 변경), not knowing (모르), help (도와,
돕, 도움), talk (얘기, 이야기, 대화). A typo inside such a word is then no longer near it
("대화종뇨"); the example and stem tiers of `rules` still tolerate endings and spacing.

N-grams. The stems are one sequence of units (a Hangul syllable; an English word or a class
whole; spacing ignored), read as its bigrams and trigrams, plus every whole unit on its own
(and a lone syllable, "안"). A syllable weighs 1, an English word `WORD_WEIGHT`, a class
`CLASS_WEIGHT`; an n-gram weighs the sum of its units, `LIGHT_WEIGHT` times that when all its
units are light words, those every topic uses ("얘기", "거", "있", "하": "더 얘기하고 싶어요"
shares only talk with "그만 얘기하자").

Similarity of an utterance U to an example E: Tversky's ratio over the weighted n-grams,

    sim = |E & U| / (|E & U| + MISSING_WEIGHT * |E - U| + EXTRA_WEIGHT * |U - E|)

1.0 when the two have the same stems. What the example says and the utterance does not weighs
far more than what the utterance adds: users wrap a request in more words ("피곤해서 이만
쉴게요") far more often than they leave part of it out. An example counts only with evidence:
shared n-grams of two characters or more weighing `MIN_SHARED` at least (a Hangul bigram),
unless the utterance holds all of the example ("안 할래요").

Negation. A similarity has no span to check, so negating words are counted ("안", "못", "않아요",
"없어요", "don't"): an example is not similar to an utterance with fewer of them ("예약해 주세요"
is no "예약 안 할래요") nor with more ("취소 안 할게요" is no "취소할게요"). In the second case,
when the example would reach the caller's threshold and a negating word stands next to a word
the two share ("취소는 안 할게요", "취소하지 마세요"), the utterance negates the example: its
key is reported in `Similar.negated`, and `rules` rules the intent out for the turn, whatever
else of it matched ("취소 안 할래요" contains the example "안 할래요" but refuses to cancel).

The weights were chosen together with the threshold on the labelled set of
tests/understanding/test_nlu_rules.py (see `intents.MIN_SIMILARITY`).
"""

from __future__ import annotations

import functools
from typing import NamedTuple
from collections.abc import Iterable

from . import lexicon as lex

MISSING_WEIGHT = 0.9  # an n-gram of the example the utterance lacks
EXTRA_WEIGHT = 0.1  # an n-gram of the utterance the example lacks
LIGHT_WEIGHT = 0.25  # an n-gram made of light words only ("얘기", "거", "있", "하")
CLASS_WEIGHT = 3.0  # a meaning class ("=stop"): what an example is about
WORD_WEIGHT = 2.0  # an English word
MIN_SHARED = 2.0  # the least shared weight of n-grams of two characters or more


# --- the stems tier: every word stem of an example opens some word of the utterance -----


class Stem(NamedTuple):
    """A word of an example: a literal prefix, then optionally one syllable of a vowel family
    (past: whether that syllable may carry the past tense's ㅆ, as the example's own did)."""

    literal: str
    next_initial: int | None = None
    next_vowels: tuple[int, ...] = ()
    past: bool = False


def example_stem(word: str) -> Stem:
    """The stem of an example word: 그만할래요 -> 그만 + ㅎ(ㅏ|ㅐ): 그만하, 그만할, 그만해."""
    ending = next((e for e in lex.INTENT_ENDINGS if word.endswith(e)), "")
    if word.isascii() or not ending or len(word) - len(ending) < 2:
        return Stem(word)  # "할래요", "거예요": too little stem to tolerate endings
    stem = word[: -len(ending)]
    parts = lex.syllable(stem[-1])
    if parts is None:
        return Stem(stem)
    return Stem(stem[:-1], parts[0], lex.vowel_family(parts[0], parts[1]),
                 parts[2] == lex.FINAL_SS)


def stem_index(stem: Stem, words: list[str]) -> int:
    """Index of the first word that begins with `stem`, or -1. A word that ends a reason or
    a condition ("도와주셔서", "그만하면") asks for nothing and is skipped."""
    size = len(stem.literal)
    for i, word in enumerate(words):
        if word.endswith(lex.SUBORDINATE_ENDINGS) and not stem.literal.endswith(
                lex.SUBORDINATE_ENDINGS):
            continue
        if stem.next_initial is None:
            if word == stem.literal or (not word.isascii() and word.startswith(stem.literal)):
                return i
        elif len(word) > size and word.startswith(stem.literal):
            parts = lex.syllable(word[size])
            # "끝냈어요" (finished) is no "끝낼게요" (will finish): the past tense is a report
            if parts and parts[0] == stem.next_initial and parts[1] in stem.next_vowels \
                    and (stem.past or parts[2] != lex.FINAL_SS):
                return i
    return -1


def word_negated(words: list[str], index: int, stem_size: int) -> bool:
    """Whether the word at `index`, matched on its first `stem_size` characters, is negated."""
    if index > 0 and words[index - 1] in lex.NEGATION_BEFORE:
        return True
    tail = words[index][stem_size:] + (" " + words[index + 1] if index + 1 < len(words) else "")
    after = lex.NEGATION_AFTER.match(tail)
    if after is not None and tail.count(" ", 0, after.end()) <= 1:
        return True
    # "그만하고 싶지 않아요": the negation follows an auxiliary's -지 form
    return (index + 2 < len(words) and words[index + 1].startswith(lex.NEGATABLE_AUXILIARIES)
            and lex.is_negation_word(words[index + 2]))


# --- n-gram similarity ----------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def stem(word: str, before_auxiliary: bool = False) -> str:
    """The stem of one normalised word, its meaning class when it has one, "" for a word with
    no content (see the module text). `before_auxiliary`: the next word is an auxiliary
    ("바꿔" in "바꿔 주세요"), so this one is a verb form."""
    if word in lex.SIMILARITY_STOPWORDS or word in lex.AUXILIARY_WORDS \
            or word in lex.SIMILARITY_ACT_WORDS:
        return ""
    if word.isascii():
        return word
    if word in lex.STEM_CLASSES:
        return lex.STEM_CLASSES[word]
    particle = _suffix(word, lex.LONG_PARTICLES, 2)
    if particle:  # "여기까지", "병원에서": a particle no verb ending looks like
        return stem(word[:-particle], before_auxiliary)
    if word.endswith(lex.SUBORDINATE_ENDINGS):
        return word  # "도와주셔서", "이만하면": a reason or a condition asks for nothing
    verbal, drop_final = before_auxiliary, False
    glued = _suffix(word, lex.GLUED_AUXILIARIES, 1)
    ending = 0 if glued else _suffix(word, lex.STEM_ENDINGS, 1)
    if glued:
        word, verbal = word[:-glued], True
    elif ending:
        drop_final = word[-ending:] in lex.AFTER_FINAL_ENDINGS
        word, verbal = word[:-ending], True
    else:
        particle = _suffix(word, lex.PARTICLES, 2)
        word = word[:-particle] if particle else word
    if verbal:
        word = word[:-1] + lex.open_syllable(word[-1], drop_final)
        if len(word) > 1 and word.endswith("하"):
            word = word[:-1]
    return lex.STEM_CLASSES.get(word, word)


def _suffix(word: str, table: frozenset[str], keep: int) -> int:
    """The length of the longest suffix of `word` in `table` that leaves `keep` characters or
    more, else 0."""
    for size in range(min(lex.MAX_SUFFIX, len(word) - keep), 0, -1):
        if word[-size:] in table:
            return size
    return 0


def stems(words: list[str]) -> list[str]:
    """The non-empty stems of `words`, in order."""
    last = len(words) - 1
    found = (stem(word, i < last and words[i + 1] in lex.AUXILIARY_WORDS)
             for i, word in enumerate(words))
    return [s for s in found if s]


def grams(words: list[str]) -> dict[tuple[str, ...], float]:
    """The weighted n-grams of the stems of `words` (see the module text)."""
    seq: list[str] = []
    weights: list[float] = []
    found: dict[tuple[str, ...], float] = {}
    for word in stems(words):
        units, light, whole = _units(word)
        weight = LIGHT_WEIGHT if light else 1.0
        if whole:
            weight *= CLASS_WEIGHT if word[0] == "=" else WORD_WEIGHT
            found[units] = weight
        seq += units
        weights += [weight] * len(units)
    size = len(seq)
    if size == 1 and not found:  # one syllable ("안")
        found[(seq[0],)] = weights[0]
    for i in range(size - 1):  # bigrams and trigrams
        pair = weights[i] + weights[i + 1]
        found[(seq[i], seq[i + 1])] = pair
        if i + 2 < size:
            found[(seq[i], seq[i + 1], seq[i + 2])] = pair + weights[i + 2]
    return found


@functools.lru_cache(maxsize=4096)
def _units(stemmed: str) -> tuple[tuple[str, ...], bool, bool]:
    """A stem's units, whether it is a light word, and whether it is one whole unit (an
    English word or a class: ASCII, as normalised text and class names are)."""
    whole = stemmed.isascii()
    return (stemmed,) if whole else tuple(stemmed), stemmed in lex.LIGHT_STEMS, whole


def _strong(gram: tuple[str, ...]) -> bool:
    """An n-gram that is evidence on its own: two characters or more (a syllable bigram, an
    English word, a class)."""
    return sum(map(len, gram)) >= 2


def negations(words: Iterable[str]) -> int:
    """How many of `words` negate ("안", "못", "않아요", "안돼", "없어요", "don't")."""
    return sum(map(_negates, words))


_negates = functools.lru_cache(maxsize=4096)(lex.is_negation_word)


class _Entry(NamedTuple):
    key: int  # the caller's key of the example (the intent's index)
    weight: float  # total weight of the example's n-grams
    negations: int  # negating words of the example itself ("안 할래요" has one)
    grams: frozenset[tuple[str, ...]]


class Similar(NamedTuple):
    """What `ExampleIndex.best` found: key -> the best similarity of its examples, and the
    keys one of whose examples the utterance says negated ("취소 안 할게요" for "취소할게요")."""

    scores: dict[int, float]
    negated: frozenset[int]


_NOTHING = Similar({}, frozenset())


class ExampleIndex:
    """Examples (with a key each) indexed by their n-grams; `best` scores an utterance."""

    def __init__(self, examples: Iterable[tuple[int, list[str]]]):
        """`examples`: (key, normalised words) of each example."""
        self._entries: list[_Entry] = []
        # n-gram -> (example number, its weight there, the part that is strong evidence)
        self._postings: dict[tuple[str, ...], list[tuple[int, float, float]]] = {}
        for key, words in examples:
            found = grams(words)
            if not found:
                continue
            number = len(self._entries)
            self._entries.append(_Entry(key, sum(found.values()), negations(words),
                                        frozenset(found)))
            for gram, weight in found.items():
                strong = weight if _strong(gram) else 0.0
                self._postings.setdefault(gram, []).append((number, weight, strong))

    def best(self, words: list[str], negated_at: float = 1.0,
             excluded: set[int] | frozenset[int] = frozenset()) -> Similar:
        """The best similarity per key (not `excluded`) of its examples to the utterance
        `words`, for the keys with an example that shares evidence with it; and the keys with
        an example that would reach `negated_at` but whose words the utterance negates (a
        negating word next to a word it shares with the example). See the module text."""
        found = grams(words)
        hits = found.keys() & self._postings.keys()
        if not hits:
            return _NOTHING  # most turns: nothing in common with any example
        shared: dict[int, float] = {}
        strong: dict[int, float] = {}
        for gram in hits:
            weight = found[gram]
            for number, example_weight, strong_weight in self._postings[gram]:
                common = weight if weight < example_weight else example_weight
                shared[number] = shared.get(number, 0.0) + common
                if strong_weight:
                    strong[number] = strong.get(number, 0.0) + common
        total = sum(found.values())
        said_negations = negations(words)
        best: dict[int, float] = {}
        negated: set[int] = set()
        for number, common in shared.items():
            entry = self._entries[number]
            if entry.key in excluded or said_negations < entry.negations:
                continue
            if strong.get(number, 0.0) < MIN_SHARED and common < entry.weight:
                continue
            similarity = common / (common + MISSING_WEIGHT * (entry.weight - common)
                                   + EXTRA_WEIGHT * (total - common))
            if said_negations > entry.negations:
                if similarity >= negated_at and _negates_shared(words, entry.grams):
                    negated.add(entry.key)
            elif similarity > best.get(entry.key, 0.0):
                best[entry.key] = similarity
        return Similar(best, frozenset(negated))


def _negates_shared(words: list[str], example: frozenset[tuple[str, ...]]) -> bool:
    """Whether a negating word stands at, just before or up to two words after a word that
    shares an n-gram of evidence with the example ("취소는 안 할게요", "취소하지 마세요")."""
    for i, word in enumerate(words):
        own = grams([word])
        if not any(_strong(gram) and gram in example for gram in own):
            continue
        if any(_negates(w) for w in words[max(i - 1, 0):i + 3]):
            return True
    return False
