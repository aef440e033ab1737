"""Dialogue acts of the rules NLU (SPEC 6.2 step 2): what kind of turn an utterance is.

In: the utterance normalised (`text.normalise`) and as typed. Out: an `ActReading` (the act,
how sure, and whether the utterance held nothing but act words), from the lexicon's act
words, leads, endings and question marks; no intent or slot is read here (`rules` does).
"""

from __future__ import annotations

from typing import NamedTuple

from . import lexicon as lex

_ACT_OR_FILLER_WORDS = frozenset(lex.EXACT_ACTS) | lex.FILLER_WORDS


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
