"""Negation scope read from Kiwi's morphemes (SPEC 13.1, 18.1; issue 29): `morph.morphemes`
keeps the tags, `polarity` reads which words a negator negates or a doubt puts in question,
and the rules NLU reads Korean enum values with it (the reminder bot, `med_reminder.json`,
and SeniMate's health and meal questions).
"""

from __future__ import annotations

from functools import cache

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from interpreter import ir
from interpreter.understanding import morph, polarity
from interpreter.understanding.rules import RulesNLU
from interpreter.understanding.text import normalise
from support.strategies import korean_utterances
from test_values_context import Ctx, nlu_of  # the shipped scenarios, compiled once


def program(name: str) -> ir.Program:
    return nlu_of(name)[0]


@cache
def nlu(name: str, bare: bool = False) -> RulesNLU:
    """The scenario's rules NLU; `bare`: without its `not_synonyms` (the issue's workaround)."""
    built, understood = nlu_of(name)
    if not bare:
        return understood
    slots = [msgspec.structs.replace(s, not_synonyms={}) for s in built.slots]
    return RulesNLU(msgspec.structs.replace(built, slots=slots))


def slots(name: str, node: str, text: str, bare: bool = False) -> dict:
    built = program(name)
    context = Ctx(built, next(n for n in built.nodes if n.id == node))
    return nlu(name, bare).parse(text, context).slots


def reading(text: str) -> polarity.Polarity:
    return polarity.reader(morph.morphemes("ko"))(normalise(text))


def negated_words(text: str) -> list[str]:
    found = reading(text)
    return [found.words[i] for i, negators in enumerate(found.negators) if negators]


# --- the morphemes -----------------------------------------------------------------------------


def test_morphemes_keep_kiwis_tags_and_lemmas_stay_as_they_were():
    assert morph.morphemes("ko")("먹었어") == (("먹", "VV"), ("었", "EP"), ("어", "EF"))
    assert morph.morphemes("ko")("안먹었어")[0] == ("안", "MAG")
    assert morph.analyser("ko")("안먹었어") == (morph.NEG, "먹")
    assert morph.morphemes("en")("dont") == (("do", "EN"), (morph.NEG, morph.NEG))


# --- what negates what -------------------------------------------------------------------------


@pytest.mark.parametrize("text, negated", [
    ("안 먹었어", ["먹었어"]), ("안먹었어", ["안먹었어"]), ("아직 못 먹었어요", ["먹었어요"]),
    ("먹지 않았어", ["먹지"]), ("아프진 않아", ["아프진"]), ("먹지 못했어", ["먹지", "못했어"]),
    ("안 챙겨 먹었어", ["챙겨", "먹었어"]), ("복용 안 했어", ["복용", "했어"]),
    ("먹고 싶지 않아", ["먹고", "싶지"]), ("기침 없어", ["기침"]),
    ("아픈 데는 없어", ["아픈", "데는"]), ("먹은 적 없어", ["먹은", "적"]),
    ("관절이 안 좋아요", ["좋아요"]),  # a subject is what the negated predicate is said of
    ("정형외과 말고 내과", ["정형외과"]), ("커피 마시지 말고", ["마시지"]),
    ("아프지않아", ["아프지않아"]), ("먹지못했어", ["먹지못했어"]), ("아프진않아", ["아프진않아"]),
])
def test_a_negator_negates_its_predicate_by_part_of_speech(text, negated):
    assert negated_words(text) == negated


@pytest.mark.parametrize("text, negated", [
    ("무릎이 아파 못 걷겠어", ["걷겠어"]),  # the 못 of the next clause does not reach back
    ("먹었는데 안 아파", ["아파"]), ("아파서 안 갔어", ["갔어"]),
    ("안경 썼어", []), ("안녕하세요", []), ("못생겼어", []),  # no negator at all
])
def test_a_negator_stops_at_its_clause_and_spelling_is_not_negation(text, negated):
    assert negated_words(text) == negated


@pytest.mark.parametrize("text", ["먹었나 모르겠네", "먹었는지 모르겠어", "먹었나 기억이 안 나"])
def test_a_doubt_is_read_from_the_ending_and_the_next_word(text):
    found = reading(text)
    assert found.doubted(0, 2)  # "먹었"
    assert not reading("먹었어 모르겠네").doubted(0, 2)  # a plain ending asserts


# --- the values the reminder bot and SeniMate read ---------------------------------------------


@pytest.mark.parametrize("text, value", [
    ("아직 안 먹었어", "not_yet"), ("안 먹었어", "not_yet"), ("아직 못 먹었어요", "not_yet"),
    ("오늘 못 챙겨 먹었어", "skipped"), ("아직 복용 안 했어요", "not_yet"),
    ("아직 먹지 않았어", "not_yet"), ("약 먹었고 안 어지러워", "taken"),
])
def test_the_reminder_reads_negated_forms_of_any_verb(text, value):
    assert slots("med_reminder", "ask_status", text) == {"med_status": value}


@pytest.mark.parametrize("text", ["먹었나 모르겠네", "먹었는지 잘 모르겠네"])
def test_a_doubted_taken_is_no_value_without_not_synonyms(text):
    # the workaround was listing "먹었나" and "먹었는지" as not_synonyms of taken
    assert slots("med_reminder", "ask_status", text, bare=True) == {}


def test_rice_eaten_is_still_excluded_by_its_not_synonym():
    # "밥은 먹었어" asserts eating: only the designer can say it is not the pills (18.5)
    assert slots("med_reminder", "ask_status", "밥은 먹었어") == {}
    assert slots("med_reminder", "ask_status", "밥은 먹었어", bare=True) == {"med_status": "taken"}


@pytest.mark.parametrize("text, value", [
    ("허리가 아파 못 앉아 있겠어", "complaint"), ("무릎이 아파 못 걷겠어", "complaint"),
    ("아프진 않아", "good"), ("하나도 안 아파", "good"), ("불편한 곳은 없어요", "good"),
    ("안 아파요", "good"), ("아프지않아요", "good"),
])
def test_senimate_health_reads_polarity_from_morphemes(text, value):
    assert slots("senimate", "health_check", text) == {"health_status": value}


@pytest.mark.parametrize("text", ["저녁 식사 안 했어", "식사를 못 했어요", "밥을 못 먹었어"])
def test_a_meal_not_had_is_skipped(text):
    assert slots("senimate", "meal_check", text) == {"meal_status": "skipped"}


def test_english_keeps_its_negation_words():
    assert slots("pharmacy_refill", "ask_method", "I can't come in") == {"method": "delivery"}
    assert slots("pharmacy_refill", "ask_method", "I'll come in") == {"method": "pickup"}


def test_a_korean_enum_program_preloads_kiwi_and_an_english_one_does_not():
    assert morph.needs_polarity(program("med_reminder"))
    assert not morph.needs_polarity(program("pharmacy_refill"))


# --- properties --------------------------------------------------------------------------------


@given(korean_utterances())
@settings(max_examples=examples(200))
def test_nothing_is_negated_without_a_negating_syllable(spaced):
    # `may_negate` is the cheap test that lets a reader skip the morphemes: it must be sound
    found = reading(spaced)
    if not polarity.may_negate(spaced):
        assert not any(found.negators) and not any(found.doubts)


@given(korean_utterances(), st.data())
@settings(max_examples=examples(200))
def test_every_negator_stands_at_a_negating_syllable(spaced, data):
    found = reading(spaced)
    for negators in found.negators:
        assert all(spaced[place] in polarity.MAY_NEGATE for place, _ in negators)
        assert all(kind in ("안", "못") for _, kind in negators)
    start = data.draw(st.integers(0, len(spaced)))
    end = data.draw(st.integers(start, len(spaced)))
    assert found.negated(start, end) in (True, False) and found.doubted(start, end) in (True, False)
