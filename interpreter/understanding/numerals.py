"""Number words as digits, for the date and time reader and for number slots (SPEC 14.1).

In: an utterance. Out: the same text with its number words written as digits:
`number_words` (English: "one hundred and five" -> "105", what a number slot reads),
`english_digits` (lower-cased, ordinals too: "twenty-first" -> "21th", "a week" -> "1 week"),
`korean_digits` (Sino-Korean numerals before 년/월/일/시/분 and native hours: "삼월 사일" ->
"3월 4일", "세 시" -> "3시"). The word tables are `understanding.lexicon`'s numbers plus the
ordinals and scales below; the date reader (`understanding.dates`) reads the result.
"""

from __future__ import annotations

import re

from . import lexicon as lex

_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
             "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12,
             "thirteenth": 13, "fourteenth": 14, "fifteenth": 15, "sixteenth": 16,
             "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
             "thirtieth": 30}
_SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_WORD = "|".join(sorted((*lex.EN_NUMBERS, *_SCALES, *_ORDINALS), key=len, reverse=True))
_NUMBER_RUN = re.compile(rf"\b(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*\b")
_ONE_UNIT = re.compile(r"\ban? (?=(?:day|week|month|year)s?\b)")


def english_digits(text: str) -> str:
    """Lower-cased `text` with number and ordinal words as digits ("twenty-first" -> "21th",
    "two weeks" -> "2 weeks", "three thirty" -> "3 30"); "a"/"an" before a unit is 1."""
    return number_words(_ONE_UNIT.sub("1 ", text.lower()))


def number_words(text: str) -> str:
    """Lower-cased `text` with English number words as digits ("one hundred and five" ->
    "105", "a thousand" -> "a 1000"): what a number slot reads (SPEC 14.1)."""
    return _NUMBER_RUN.sub(lambda m: " ".join(_numbers_of(re.split(r"[\s-]+", m.group(0)))),
                           text.lower())


def _numbers_of(words: list[str]) -> list[str]:
    """The numbers a run of number words says, each as digits (an ordinal ends with "th")."""
    out: list[str] = []
    value: int | None = None
    for word in words:
        if word == "and":
            continue
        if word in _SCALES:
            value = (value or 1) * _SCALES[word] if value is None or value < 1000 or \
                _SCALES[word] == 1000 else value - value % 1000 + (value % 1000 or 1) * 100
            continue
        unit = lex.EN_NUMBERS.get(word, _ORDINALS.get(word, 0))
        if value is not None and not _extends(value, unit):
            out.append(str(value))
            value = None
        value = unit if value is None else value + unit
        if word in _ORDINALS:
            out.append(f"{value}th")
            value = None
    if value is not None:
        out.append(str(value))
    return out


def _extends(value: int, unit: int) -> bool:
    """Whether `unit` continues the number `value` ("twenty" "one", "hundred" "five")."""
    if value >= 100 and value % 100 == 0:
        return unit < 100
    if value >= 20 and value % 10 == 0:
        return unit < 10
    return False


_SINO_RUN = re.compile(r"(?<![가-힣])([일이삼사오육칠팔구십백천]+)(?=년|월|일(?!요)|시|분)")
_SINO_SPACED = re.compile(r"(?<![가-힣])([일이삼사오육칠팔구십]+)\s+(?=시|분)")
_NATIVE_HOURS = {"열한": 11, "열두": 12, "열": 10, "한": 1, "두": 2, "세": 3, "네": 4, "다섯": 5,
                 "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}
_NATIVE_HOUR = re.compile(r"(?<![가-힣])(" + "|".join(_NATIVE_HOURS) + r")\s*시(?![가-힣])")


def korean_digits(text: str) -> str:
    """`text` with Sino-Korean numerals before 년/월/일/시/분 and native hours ("세 시") as
    digits."""
    def as_digits(match: re.Match) -> str:
        value = lex.sino_numeral(match.group(1))
        return match.group(0) if value is None else str(value)
    text = _SINO_RUN.sub(as_digits, text)
    text = _SINO_SPACED.sub(as_digits, text)
    return _NATIVE_HOUR.sub(lambda m: f"{_NATIVE_HOURS[m.group(1)]}시", text)
