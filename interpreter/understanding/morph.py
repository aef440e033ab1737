"""Lemmas of words from maintained analysers (SPEC 13.1): Kiwi for Korean, simplemma for English.

In: a language ("ko", "en", or a BCP 47 tag with that primary subtag) and normalised words
(`text.normalise`). Out: per word, its content lemmas (a tuple of strings, possibly empty),
with `NEG` standing for a negating morpheme ("안", "못", "않", "not", "never", "n't")
(`analyser`); and per word its morphemes with their tags (`morphemes`: Kiwi's forms and
Sejong tags for Korean, "먹었어" -> (("먹", "VV"), ("었", "EP"), ("어", "EF")); for English a
word's lemma tagged "EN", or "NEG"), from which `polarity` reads negation scope.

Cost and loading. Kiwi (kiwipiepy with kiwipiepy-model from PyPI) takes about 2 s and 240 MB
to load; simplemma's English table about 1.5 s and 30 MB. So an analyser is loaded once
per process, only for a program in its language, and in a background thread (`preload`,
called when a rules NLU is built) that the first analysis joins (`analyser`): `mgi run` prints
its first line before the model is there, and every analysis waits for it, so the same text
always gives the same lemmas. Nothing here is imported by `mgc` or by the engine core; the
libraries themselves are imported only inside the loading thread. Words are analysed one at a
time and remembered (`CACHE_WORDS` per process): a user's words repeat, the model is not asked
twice about one.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import NamedTuple

NEG = "NEG"  # the lemma of a negating morpheme
WH = "=wh"  # the lemma of a question word ("어떤", "뭐", "what", "which"): asking is no request
CACHE_WORDS = 65536

# Kiwi's tags whose morphemes carry what a word is about: nouns, verbs, adjectives, roots,
# adverbs (negating ones become NEG), foreign words and numbers.
_KO_CONTENT = frozenset(("NNG", "NNP", "NR", "NP", "VV", "VA", "XR", "MAG", "SL", "SN",
                         "VV-R", "VV-I", "VA-R", "VA-I"))
_KO_NEGATORS = frozenset(("안", "못", "않", "아니", "말"))  # 말다 only as an auxiliary (VX)
_KO_LIGHT = frozenset(("하", "되", "있", "주", "드리", "좀", "그냥", "이제", "잘", "더", "다", "또", "꼭",
                       "정말", "진짜", "너무", "지금", "그럼", "아", "나", "저", "너",
                       "이거", "그거", "저거", "우리", "제", "내", "그렇", "이렇"))
_KO_WH = frozenset(("어떤", "무슨", "뭐", "무엇", "어디", "왜", "어떻", "언제", "누구", "몇", "어느"))
_KO_REPORTED = frozenset(("다는", "ᆫ다는", "는다는", "라는", "자는", "냐는"))  # "옮겼다는 내용"
_EN_WH = frozenset(("what", "which", "where", "when", "why", "who", "how", "whats", "wheres"))
_EN_NEGATORS = frozenset(("not", "no", "never", "dont", "doesnt", "didnt", "isnt", "wasnt",
                          "arent", "werent", "havent", "hasnt", "hadnt", "wont", "cant",
                          "cannot", "couldnt", "shouldnt", "wouldnt", "aint", "nothing",
                          "nobody", "without"))
_EN_NEGATED_VERBS = {"dont": "do", "doesnt": "do", "didnt": "do", "cant": "can",
                     "cannot": "can", "couldnt": "could", "wont": "will", "isnt": "be",
                     "wasnt": "be", "arent": "be", "werent": "be", "havent": "have",
                     "hasnt": "have", "hadnt": "have", "shouldnt": "should",
                     "wouldnt": "would"}


Morphemes = tuple[tuple[str, str], ...]  # (form, tag) per morpheme of one word


class Analysis(NamedTuple):
    """What an analyser gives for one word: its content lemmas, and its tagged morphemes."""

    lemmas: Callable[[str], tuple[str, ...]]
    morphemes: Callable[[str], Morphemes]


def primary(language: str) -> str:
    """"ko" or "en" for a language tag ("ko-KR" -> "ko"); anything else reads as "ko"."""
    return "en" if language.split("-")[0].lower() == "en" else "ko"


class _Loader:
    """One analyser per language, built once in a background thread."""

    def __init__(self, build: Callable[[], Analysis]):
        self._build = build
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._result: Analysis | None = None
        self._error: BaseException | None = None

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mago-morph",
                                                daemon=True)
                self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._build()
        except BaseException as error:  # reported at the first analysis, in the turn
            self._error = error

    def wait(self) -> None:
        """Wait for a load that was started; nothing when none was."""
        if self._thread is not None:
            self._thread.join()

    def get(self) -> Analysis:
        if self._result is not None:
            return self._result  # loaded: no lock and no join (every analysis asks)
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._result is None:
            raise RuntimeError(f"the morphological analyser did not load: {self._error}")
        return self._result


def _korean() -> Analysis:
    from kiwipiepy import Kiwi  # imported here only: never on mgc's path or for English

    # One thread (a word at a time gains nothing from Kiwi's pool) and no default dictionary
    # (proper nouns from Wikipedia): 1.8 s and 240 MB to load instead of 3.2 s and 307 MB,
    # with the same figures on every tuning and held-out set (nlu_eval.py --sets).
    with warnings.catch_warnings():  # Kiwi warns that 0 meant "all cores" before 0.21
        warnings.simplefilter("ignore", DeprecationWarning)
        kiwi = Kiwi(num_workers=0, load_default_dict=False, load_typo_dict=False,
                    load_multi_dict=False)

    @functools.lru_cache(maxsize=CACHE_WORDS)
    def morphemes(word: str) -> Morphemes:
        return tuple((token.form, token.tag) for token in kiwi.tokenize(word))

    @functools.lru_cache(maxsize=CACHE_WORDS)
    def lemmas(word: str) -> tuple[str, ...]:
        return _korean_lemmas(morphemes(word))

    lemmas("준비")  # the first analysis builds Kiwi's tables: do it while loading
    return Analysis(lemmas, morphemes)


def _korean_lemmas(tagged: Morphemes) -> tuple[str, ...]:
    """The content lemmas of one word's morphemes (NEG for a negator, WH for a question word)."""
    found: list[str] = []
    last_tag = ""
    for form, tag in tagged:
        if tag == "NNG" and last_tag == "NNG" and len(form) == 1 and found:
            found[-1] += form  # "취소선" is a strikethrough, no cancelling: one noun
        elif tag == "ETM" and form in _KO_REPORTED and found and last_tag in ("EP", "VV"):
            found.pop()  # "옮겼다는 내용": what the content says, not what is asked
        elif form in _KO_WH:
            found.append(WH)
        elif form in _KO_NEGATORS and tag in ("MAG", "VX", "VCN", "VA", "VV") or \
                (form == "마" and tag == "IC" and len(tagged) == 1):
            found.append(NEG)  # a word "마" alone is the "-지 마" of the word before it
        elif tag in _KO_CONTENT and form not in _KO_LIGHT:
            found.append(form)
        last_tag = tag
    return tuple(found)


def _english() -> Analysis:
    import simplemma  # imported here only: never on mgc's path or for Korean

    simplemma.lemmatize("ready", lang="en")  # loads the English table now

    @functools.lru_cache(maxsize=CACHE_WORDS)
    def lemmas(word: str) -> tuple[str, ...]:
        if word in _EN_NEGATORS:
            verb = _EN_NEGATED_VERBS.get(word)
            return (verb, NEG) if verb else (NEG,)
        if word in _EN_WH:
            return (WH,)
        if not word.isascii():
            return (word,)
        return (simplemma.lemmatize(word, lang="en"),)

    @functools.lru_cache(maxsize=CACHE_WORDS)
    def morphemes(word: str) -> Morphemes:
        return tuple((lemma, NEG if lemma == NEG else "EN") for lemma in lemmas(word))

    return Analysis(lemmas, morphemes)


_LOADERS = {"ko": _Loader(_korean), "en": _Loader(_english)}


def preload(language: str) -> None:
    """Start loading the analyser of `language` in the background (returns at once)."""
    _LOADERS[primary(language)].start()


def preload_for(program) -> None:
    """`preload` the analyser of a program's language when it has intent examples to read, or
    Korean enum values (whose negation is read from morphemes: `polarity`), as the rules NLU
    would need at its first turn; nothing otherwise."""
    if any(intent.examples for intent in program.intents) or needs_polarity(program):
        preload(program.language)


def needs_polarity(program) -> bool:
    """Whether the rules NLU reads negation scope from morphemes for `program`: a Korean
    program with an enum slot."""
    return primary(program.language) == "ko" and any(
        slot.values for slot in program.slots)


def load_for(programs) -> None:
    """Load, and wait for, the analysers the programs' rules NLU will read with (`mgi serve`
    does this before a worker answers, so that no first turn waits seconds for one). A load
    that fails is reported by the first analysis, in the turn, as it would be without this."""
    for program in programs:
        preload_for(program)
    for loader in _LOADERS.values():
        loader.wait()


_KO_PAST = frozenset(("었", "았", "였", "ㅆ"))
# Verbs whose past tells a present state: "날짜가 틀렸어요" says the date is wrong now.
_KO_STATES = frozenset(("틀리", "잘못", "잘못되", "늦", "고장", "망가지", "바뀌"))


def said_in_past(language: str) -> Callable[[str], int] | None:
    """For Korean, word -> 2 when its morphemes hold a past-tense ending that tells what was
    ("썼네", "알았어요"), 1 for the past of a verb that tells a state now (`_KO_STATES`:
    "틀렸어요"), 0 for no past; None for another language (English requests are often in the
    past: "I forgot my password")."""
    if primary(language) != "ko":
        return None
    read = morphemes(language)

    def in_past(word: str) -> int:
        tagged = read(word)
        if not any(tag == "EP" and form in _KO_PAST for form, tag in tagged):
            return 0
        return 1 if any(form in _KO_STATES for form, _ in tagged) else 2
    return in_past


_KO_VERBS = frozenset(("VV", "VA", "VV-R", "VV-I", "VA-R", "VA-I"))


def said_as_verb(language: str) -> Callable[[str], bool] | None:
    """For Korean, word -> whether a content verb or adjective is in it ("끊어요", not
    "얘기하자", whose verb is the light 하다); None for another language."""
    if primary(language) != "ko":
        return None
    read = morphemes(language)
    return lambda word: any(tag in _KO_VERBS and form not in _KO_LIGHT for form, tag in read(word))


def analyser(language: str) -> Callable[[str], tuple[str, ...]]:
    """The word -> lemmas function of `language`, waiting for it to load."""
    return _LOADERS[primary(language)].get().lemmas


def morphemes(language: str) -> Callable[[str], Morphemes]:
    """The word -> tagged morphemes function of `language`, waiting for it to load."""
    return _LOADERS[primary(language)].get().morphemes
