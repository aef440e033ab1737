"""Safety on lemmas (SPEC 13.4, issue 22): the lemma rules of `safety_lemmas`, read by a
program's detector when its rules NLU loads the analyser, beside the lexicon.

The cases below are each missed by the lexicon alone (asserted), so they show what the lemma
tier adds; negation, idioms and near misses show what it must not find. The tuning sets of
tests/data (what the rules were chosen on) are held to the issue's targets; the frozen
held-out figures are printed by `tests/benchmarks/nlu_eval.py --sets`, never asserted.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from support import nlu_sets
from interpreter.understanding import safety_lemmas
from interpreter.understanding.safety import CATEGORIES, Detector, detector_for

LEXICON = Detector()
KO, EN = Detector(language="ko"), Detector(language="en")

ADDED = [  # (text, language, category): inflections and word orders no regex spelled
    ("계단에서 굴러서 허리를 못 움직이겠어", "ko", "medical_emergency"),
    ("욕실에서 넘어져서 꼼짝을 못 하겠어", "ko", "medical_emergency"),
    ("어젯밤에 넘어졌는데 아직도 바닥에 누워 있어", "ko", "medical_emergency"),
    ("가슴을 쥐어짜는 것 같아요", "ko", "medical_emergency"),
    ("엄마가 불러도 대답을 안 해요", "ko", "medical_emergency"),
    ("남편이 말을 못 하고 얼굴 한쪽이 처졌어요", "ko", "medical_emergency"),
    ("번개탄을 사 놨어", "ko", "self_harm"),
    ("죽는 방법을 찾아봤어", "ko", "self_harm"),
    ("아들이 내 도장을 가져가서 대출을 받았어", "ko", "abuse"),
    ("며느리가 소리 지르고 밀쳐요", "ko", "abuse"),
    ("조카가 내 땅 문서를 몰래 가져갔어", "ko", "abuse"),
    ("my wife fell down the stairs and she's not answering", "en", "medical_emergency"),
]


@pytest.mark.parametrize("text, language, category", ADDED)
def test_the_lemma_rules_find_what_the_lexicon_misses(text, language, category):
    assert LEXICON.detect(text) is None, "the lexicon finds it: not a case of the lemma tier"
    detector = KO if language == "ko" else EN
    assert detector.detect(text) == category
    assert any(f.source == "lemmas" for f in detector.findings(text))


NOT_A_CRISIS = [
    "아들이 저를 때린 적은 없어요", "아들이 때리는 건 아니고 말을 안 들어요",  # negated
    "넘어졌는데 금방 일어났어요", "넘어질 뻔했어", "넘어지지 않게 조심할게요",  # near misses
    "손자가 장난감 망치로 못을 때렸어요", "그 사람이 나를 때리는 꿈을 꿨어",  # toys, dreams
    "심장이 터질 것 같이 설레", "그 소식 듣고 가슴이 찢어지는 줄 알았어",  # idioms
    "딸이 내 카드로 장을 봐 왔어", "한강 다리 위로 지나갔어", "어제 술을 너무 마셔서 머리가 깨질 것 같아",
]


@pytest.mark.parametrize("text", NOT_A_CRISIS)
def test_negations_idioms_and_near_misses_are_no_crisis(text):
    assert KO.detect(text) is None, KO.findings(text)


def test_a_negation_cancels_a_rule_and_a_negated_part_needs_one():
    assert KO.detect("아들이 때려요") == "abuse"
    assert KO.detect("아들이 때리지 않아요") is None
    assert safety_lemmas.findings("en", "I didn't fall and I can get up") == []
    assert safety_lemmas.findings("en", "I slipped in the shower and can't get up")


def test_a_program_reads_lemmas_only_when_its_rules_nlu_loads_the_analyser():
    senimate = nlu_sets.program("senimate")
    assert detector_for(senimate).language == senimate.language
    bare = senimate.__class__(**{**{f: getattr(senimate, f) for f in senimate.__struct_fields__},
                                 "intents": []})
    assert detector_for(bare).language is None


def test_the_rules_are_well_formed():
    names = [rule.name for rule in safety_lemmas.RULES]
    assert len(names) == len(set(names))
    for rule in safety_lemmas.RULES:
        assert rule.category in CATEGORIES and rule.language in ("ko", "en"), rule
        assert len(rule.parts) >= 2 and all(rule.parts), rule
        assert all(i < len(rule.parts) for i in rule.negated), rule


@pytest.mark.parametrize("language", ["ko", "en"])
def test_the_tuning_sets_meet_the_issue_targets(language):
    report = nlu_sets.safety_report("tuning", language)
    print(f"\ntuning {language}: {report['recall']}, false alarms {report['false_alarms']}/"
          f"{report['traps']}")
    assert all(value >= 0.95 for value in report["recall"].values()), report["misses"]
    assert report["false_alarm_rate"] <= 0.01, report["misses"]


@given(st.text(max_size=60))
def test_the_lemma_tier_never_raises_and_is_deterministic(text):
    assert KO.findings(text) == KO.findings(text)
    assert EN.detect(text) == EN.detect(text)


@pytest.mark.parametrize("text", ["가" * 64_000, "아들이 " + "자꾸 " * 990,
                                  " ".join(f"말{i}" for i in range(2000))])
def test_a_long_text_is_read_within_its_first_words(text):
    """The lemma tier reads the first `MAX_WORDS` words of the first `MAX_CHARS` characters,
    words of at most `MAX_WORD` characters: new words cost the analyser once each."""
    KO.detect("준비")
    started = time.perf_counter()
    KO.detect(text)
    assert time.perf_counter() - started < 0.5
    assert len(safety_lemmas.lemmas_of("ko", text)) <= 2 * safety_lemmas.MAX_WORDS


def test_the_earlier_labelled_set_holds_with_lemmas_too():
    """tests/data/safety_labelled.jsonl (tuning data, SPEC 17.17) read by SeniMate's detector,
    lemma rules included: every line as labelled (the lexicon alone is held to its own bar
    in test_safety.py)."""
    detector = detector_for(nlu_sets.program("senimate"))
    path = Path(__file__).parents[1] / "data" / "safety_labelled.jsonl"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    wrong = [(r["text"], r["category"], got) for r in rows
             if (got := detector.detect(r["text"])) != r["category"]]
    assert not wrong, wrong
