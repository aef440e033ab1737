"""Understanding that generalises (SPEC 13, 17.13-17.17): the issue's examples on the shipped
scenarios, the intent confidence and its candidates, thresholds and the margin, the lemma
layer's loading rules, safety patterns and negation, and the tuning and held-out sets.

The scenarios are compiled from `scenarios/` (`nlu_sets.program`); the figures of the sets
are printed by `tests/benchmarks/nlu_eval.py`, not asserted here (a benchmark, not a test),
except that they are computed and in range.
"""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest

from support import nlu_sets
from interpreter.understanding import morph, rules
from interpreter.understanding.nlu import AMBIGUOUS, BELOW_THRESHOLD
from interpreter.understanding.rules import RulesNLU
from interpreter.understanding.safety import Detector, negated_outside

DETECTOR = Detector()


def parse(scenario: str, node: str, text: str, with_patterns: bool = True):
    program = nlu_sets.program(scenario, with_patterns)
    nlu = RulesNLU(program) if with_patterns else nlu_sets.nlu(scenario)
    return nlu.parse(text, nlu_sets.Ctx(program, next(n for n in program.nodes if n.id == node)))


# --- the issue's examples -----------------------------------------------------------------


@pytest.mark.parametrize("text, category", [
    ("방금 넘어져서 혼자 못 일어나겠어요", "medical_emergency"),
    ("I fell and I can't get up", "medical_emergency"),
    ("말이 어눌해지고 한쪽 팔에 힘이 없어요", "medical_emergency"),  # stroke signs
    ("my face is drooping and my arm is weak", "medical_emergency"),
    ("I suddenly can't lift my left arm", "medical_emergency"),
    ("오늘 밤에 뛰어내릴 거예요", "self_harm"),
    ("I'm going to jump tonight", "self_harm"),
    ("I took too many pills", "medical_emergency"),
    ("I swallowed the whole bottle", "medical_emergency"),
    ("딸이 내 돈을 가져가요", "abuse"),  # financial abuse
    ("my nephew drained my savings account", "abuse"),
])
def test_the_issues_crisis_examples_are_their_category(text, category):
    assert DETECTOR.detect(text) == category


@pytest.mark.parametrize("text", ["I didn't take too many pills", "I'm not going to jump",
                                  "배고파 죽겠다", "넘어질 뻔했는데 괜찮아", "I fell asleep"])
def test_negated_statements_and_idioms_are_no_crisis(text):
    assert DETECTOR.detect(text) is None


def test_do_you_take_mastercard_is_a_payment_question_from_examples_only():
    result = parse("support_bot", "menu", "do you take mastercard", with_patterns=False)
    assert result.intent == "payment_methods"
    assert 0.5 <= result.confidence <= 1.0


@pytest.mark.parametrize("text, intent", [
    ("my delivery is late", "track_order"), ("I can't get into my account", "account_access")])
def test_the_issues_support_questions_find_their_intent(text, intent):
    assert parse("support_bot", "menu", text, with_patterns=False).intent == intent


@pytest.mark.parametrize("scenario, node, text", [
    ("email_compose", "confirming", "메일 잘 썼네"),  # praise of what was written
    ("clinic", "collect_visit_info", "취소된 줄 알았어요"),  # what the user thought
    ("email_compose", "modify_menu", "받는 사람이 누구였지"),  # a question, no change
])
def test_a_korean_past_statement_or_question_asks_for_nothing(scenario, node, text):
    assert parse(scenario, node, text, with_patterns=False).intent is None


@pytest.mark.parametrize("scenario, node, text, intent", [
    ("clinic", "confirm_booking", "이름이 틀렸어요", "user_wants_to_modify"),  # a state now
    ("senimate", "general_conversation", "이제 끊어요", "user_wants_to_end"),  # one verb
    ("email_compose", "modify_recipient", "바꾸지 마", "keep_as_is"),  # "-지 마" negates
    ("support_bot", "menu", "I think my account was hacked", "account_access"),  # a hedge
])
def test_past_states_lone_verbs_and_hedges_keep_their_intent(scenario, node, text, intent):
    assert parse(scenario, node, text, with_patterns=False).intent == intent


def test_a_word_ma_alone_is_a_negation_and_a_past_of_a_state_is_told_apart():
    analyse, past = morph.analyser("ko"), morph.said_in_past("ko")
    assert analyse("마") == (morph.NEG,)
    assert (past("썼네"), past("틀렸어요"), past("보내")) == (2, 1, 0)
    assert morph.said_in_past("en") is None and morph.said_as_verb("en") is None


@pytest.mark.parametrize("with_patterns", [True, False], ids=["patterns", "examples only"])
def test_a_strikethrough_is_no_cancel(with_patterns):
    result = parse("clinic", "collect_visit_info", "취소선이 뭐예요", with_patterns)
    assert result.intent is None
    assert parse("clinic", "collect_visit_info", "예약 취소할게요", with_patterns).intent \
        == "user_wants_to_cancel"


# --- confidence, candidates, thresholds, margin ---------------------------------------------


def test_candidates_are_at_most_three_best_first_and_in_range():
    for row in nlu_sets.rows("intents", "tuning", "en") + nlu_sets.rows("intents", "tuning", "ko"):
        result = parse(row["scenario"], row["node"], row["text"], with_patterns=False)
        scores = [c.score for c in result.candidates]
        assert len(scores) <= rules.MAX_CANDIDATES
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 <= s <= 1.0 for s in scores) and 0.0 <= result.confidence <= 1.0
        if result.intent is not None:
            assert result.candidates[0].intent == result.intent
            assert result.confidence == pytest.approx(result.candidates[0].score, abs=1e-4)


def _with_threshold(scenario: str, intent: str, threshold: float):
    program = nlu_sets.program(scenario)
    intents = [msgspec.structs.replace(i, threshold=threshold) if i.name == intent else i
               for i in program.intents]
    return msgspec.structs.replace(program, intents=intents)


def test_an_intent_under_its_own_threshold_is_not_chosen_and_the_trace_says_why():
    program = _with_threshold("support_bot", "payment_methods", 0.99)
    node = program.nodes[0]
    result = RulesNLU(program).parse("do you take mastercard", nlu_sets.Ctx(program, node))
    assert result.intent is None and result.intent_note == BELOW_THRESHOLD
    assert result.candidates[0].intent == "payment_methods"


def test_two_intents_within_the_margin_are_ambiguous():
    matcher = RulesNLU(nlu_sets.program("support_bot"))._intents
    reading = matcher._choose({0: 0.7, 1: 0.68}, {0: 0.5, 1: 0.49})
    assert reading.intent is None and reading.note == AMBIGUOUS
    assert [c.intent for c in reading.candidates] == [matcher.names[0], matcher.names[1]]
    assert matcher._choose({0: 0.7, 1: 0.6}, {}).intent == matcher.names[0]


def test_the_rules_nlu_is_deterministic():
    first = [parse("email_compose", "confirming", row["text"])
             for row in nlu_sets.rows("intents", "tuning", "ko")]
    again = [parse("email_compose", "confirming", row["text"])
             for row in nlu_sets.rows("intents", "tuning", "ko")]
    assert first == again


# --- the analysers load only where they are needed ------------------------------------------


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, timeout=120)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_mgc_never_imports_an_analyser():
    loaded = _modules_after("import compiler.cli, compiler.driver")
    assert not {"kiwipiepy", "simplemma"} & loaded


def test_an_english_scenario_loads_simplemma_and_never_kiwi():
    loaded = _modules_after(
        "import sys; sys.path.insert(0, 'tests'); from support import nlu_sets\n"
        "n = nlu_sets.nlu('support_bot'); n.parse('where is my order', "
        "nlu_sets.context('support_bot', 'menu'))")
    assert "simplemma" in loaded and "kiwipiepy" not in loaded


def test_language_tags_choose_the_analyser():
    assert morph.primary("ko-KR") == "ko" and morph.primary("en-GB") == "en"
    assert morph.analyser("en")("pills") == ("pill",)
    assert morph.analyser("en")("dont") == ("do", morph.NEG)


# --- safety patterns and negation -------------------------------------------------------------


def test_scenario_patterns_honour_negation_unless_not_negatable():
    negatable = Detector([("medical_emergency", r"too many pills")])
    fixed = Detector([("medical_emergency", r"too many pills", False)])
    assert negatable.detect("I took too many pills") == "medical_emergency"
    assert negatable.detect("I didn't take too many pills") is None
    assert fixed.detect("I didn't take too many pills") == "medical_emergency"
    korean = Detector([("medical_emergency", r"약을 많이 먹었")])
    assert korean.detect("약을 많이 먹었어요") == "medical_emergency"
    assert korean.detect("약을 많이 먹었지는 않아요") is None


def test_a_negation_inside_the_match_is_the_crisis_itself():
    text = "숨을 못 쉬겠어"
    assert not negated_outside(text, 0, len(text))
    assert negated_outside("I did not take too many pills", 11, len("I did not take too many pills"))


# --- the sets ---------------------------------------------------------------------------------


@pytest.mark.parametrize("part", ["heldout", "tuning"])
@pytest.mark.parametrize("language", ["ko", "en"])
def test_the_sets_are_well_formed_and_scored(part, language):
    intents = nlu_sets.rows("intents", part, language)
    safety = nlu_sets.rows("safety", part, language)
    if part == "heldout":
        assert len(intents) >= 300 and len(safety) >= 100
        traps = sum(1 for row in intents if row["intent"] is None)
        assert traps >= len(intents) / 3 - 1
    for row in intents:
        declared = {i.name for i in nlu_sets.program(row["scenario"]).intents}
        assert row["intent"] is None or row["intent"] in declared
    report = nlu_sets.intent_report(part, language)
    assert 0.0 <= report["precision"] <= 1.0 and 0.0 <= report["recall"] <= 1.0
    found = nlu_sets.safety_report(part, language)
    assert set(found["recall"]) == {"medical_emergency", "self_harm", "abuse"}
