"""Text as the rules NLU and its readers see it: normalised words, and negation around a match.

In: an utterance, or a normalised text and a span in it. Out: the normalised text (lowercase,
NFC, punctuation to spaces, apostrophes dropped, one space between words), or whether the
span is negated by the words around it (the word tables are `lexicon`'s).
"""

from __future__ import annotations

import re
import unicodedata

from . import lexicon as lex

_PUNCTUATION = "!\"#$%&()*+,/:;<=>?[\\]^_{|}~-@，。、！？…·「」『』（）【】《》〈〉“”"
_NORMALISE = str.maketrans({**{c: " " for c in _PUNCTUATION}, "'": None, "’": None,
                            "‘": None, "`": None})
_STRAY_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")  # keep the point of "36.5"
_LAUGHTER = re.compile(r"(?<=[가-힣a-z0-9])([ㅋㅎㅠㅜ]+)")  # "좋아요ㅋㅋ" -> "좋아요 ㅋㅋ"


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


def span_negated(spaced: str, start: int, end: int) -> bool:
    """Whether the match `spaced[start:end]` is negated by the words around it."""
    word_start = spaced.rfind(" ", 0, start) + 1
    if spaced[word_start:start] in lex.NEGATION_PREFIX:
        return True
    if word_start > 0 and spaced[:word_start - 1].rsplit(" ", 1)[-1] in lex.NEGATION_BEFORE:
        return True
    after = lex.NEGATION_AFTER.match(spaced, end)
    return after is not None and spaced.count(" ", end, after.end()) <= 2  # the next two words
