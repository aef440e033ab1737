"""The `rules` NLU: table-driven cases for each rule, invariants, and accuracy on a labelled set.

Three small programs stand in for the real scenarios (built directly from the IR structs): a
senimate-like one (companion bot for elderly people), a form-filling one (clinic
registration) and the intents and slots of scenarios/clinic_booking.json (a booking).
`tests/data/nlu_labelled.jsonl` holds hand-labelled utterances, one JSON object a line:
`text`, `act`, `intent` (or null), `slots` (what a person would say the utterance fills at
that node), `scenario` ("senimate" | "form" | "clinic") and `node` (the node the user answers;
it decides which slots are collected). The free-text slots `symptom` and `health_issue` are
not labelled: no single wording is right for them. Lines 1-312 are the original set; the lines
after them add paraphrases of the scenarios' intents and near misses that must not match
(the last 24 were written after the similarity threshold was calibrated).

`evaluate(labelled, nlu)` scores any NLU on that set; run `pytest tests/test_nlu_rules.py -s`
to see the report, or `tests/benchmarks/nlu_eval.py` for precision and recall per intent,
the cost of a parse and the threshold sweep.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Mapping

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from interpreter import ir
from interpreter.understanding import lexicon as lex
from interpreter.understanding import rules
from interpreter.understanding.lexicon import free_text
from interpreter.understanding.rules import RulesNLU, normalise

try:
    from interpreter.understanding import similarity
except ImportError:  # an older tree, measured by `tests/benchmarks/nlu_eval.py --code DIR`
    similarity = None

LABELLED = Path(__file__).parents[1] / "data" / "nlu_labelled.jsonl"

# --- fixtures: three programs mirroring the scenarios -------------------------------------------


def _slot(name: str, value_type: str, **fields: Any) -> ir.Slot:
    return ir.Slot(name=name, value_type=value_type, required=False, **fields)


def _node(node_id: str, collect: list[int]) -> ir.Node:
    return ir.Node(id=node_id, name=node_id, description="", executor=0, end=0, responses={},
                   collect_slots=collect, required_slots=[], transitions=[])


def _program(name: str, slots: list[ir.Slot], intents: list[ir.Intent],
             nodes: list[ir.Node]) -> ir.Program:
    return ir.Program(name=name, language="ko", version="1.0.0", description="", prompt_bot="",
                      prompt_nlu="", entry=0, bot_first=True, closing_acts=[], nodes=nodes,
                      global_transitions=[], slots=slots, intents=intents, source_map=[])


def senimate_program() -> ir.Program:
    slots = [
        _slot("daily_life", "string"),
        _slot("meal_status", "enum", values=["adequate", "skipped"], synonyms={
            "adequate": ["먹었", "챙겨 먹", "드셨", "밥 먹"],
            "skipped": ["안 먹", "못 먹", "굶", "거르", "걸렀"]}),
        _slot("health_status", "enum", values=["good", "complaint"], synonyms={
            "good": ["괜찮", "건강", "좋아"],
            "complaint": ["아프", "아파", "불편", "쑤시", "결리"]}),
        _slot("pain_level", "integer", min=0, max=10),
        _slot("health_issue", "string"),
        _slot("symptom", "string"),
    ]
    intents = [ir.Intent("user_wants_to_end", examples=[
        "대화 종료", "그만할래요", "이제 끝낼게요", "그만 얘기하자", "이만 끊을게요", "다음에 얘기해요",
        "stop", "end the conversation", "I want to stop"])]
    nodes = [_node("greeting_introduction", []), _node("daily_life_check", [0]),
             _node("meal_check", [1]), _node("health_check", [2, 3, 4, 5]),
             _node("general_conversation", []), _node("conversation_closure", [])]
    return _program("senimate", slots, intents, nodes)


def form_program() -> ir.Program:
    slots = [
        _slot("patient_name", "string"),
        _slot("birth_year", "integer", min=1900, max=2025),
        _slot("department", "enum", values=["internal", "orthopedics", "dental"], synonyms={
            "internal": ["내과", "소화", "감기", "배가 아프", "속이 안 좋", "열이 나"],
            "orthopedics": ["정형외과", "관절", "뼈", "허리", "무릎", "어깨"],
            "dental": ["치과", "치아", "이빨", "잇몸", "이가 아프", "충치"]}),
        _slot("contact_email", "email"),
        _slot("confirmed", "boolean"),
    ]
    intents = [
        ir.Intent("user_wants_to_cancel", examples=[
            "취소할게요", "접수 취소", "그만둘래요", "안 할래요", "cancel", "never mind",
            "I want to cancel"], patterns=[r"취소"]),
        ir.Intent("user_needs_help", examples=[
            "도와주세요", "잘 모르겠어요", "어떻게 하는 거예요", "help", "I don't understand"]),
    ]
    nodes = [_node("ask_name", [0]), _node("ask_birth_year", [1]), _node("ask_department", [2]),
             _node("ask_email", [3]), _node("confirm", [4]), _node("done", [])]
    return _program("form", slots, intents, nodes)


def clinic_program() -> ir.Program:
    """The intents and slots of scenarios/clinic_booking.json (copied: a fixture that does not
    move when the scenario is edited), its synonyms shortened."""
    slots = [
        _slot("patient_name", "string", min_length=2, max_length=20),
        _slot("birth_year", "integer", min=1900, max=2025),
        _slot("department", "enum", values=["내과", "정형외과", "치과"], synonyms={
            "내과": ["내과", "소화가 안", "속이 안 좋", "배가 아", "감기", "열이 나"],
            "정형외과": ["정형외과", "허리", "무릎", "관절", "어깨", "뼈"],
            "치과": ["치과", "치아", "이가 아", "이빨", "잇몸", "충치"]}),
        _slot("visit_date", "string", pattern=r"^\d{4}-\d{2}-\d{2}$"),
        _slot("contact_email", "email", max_length=100),
        _slot("note", "string", max_length=200),
    ]
    intents = [
        ir.Intent("user_wants_to_cancel", examples=[
            "예약 취소할게요", "취소해 주세요", "예약 안 할래요", "예약 그만할게요", "그만둘게요",
            "다음에 할게요", "됐어요, 안 할래요", "예약 안 해도 돼요", "처음부터 안 할게요", "cancel",
            "cancel the booking", "never mind", "I don't want to book", "forget it"],
            patterns=[r"예약\s*(을\s*)?(취소|안\s*할|그만)"]),
        ir.Intent("user_wants_to_modify", examples=[
            "수정할게요", "고칠게요", "바꾸고 싶어요", "잘못 말했어요", "날짜를 바꿔 주세요",
            "진료과를 바꿀게요", "이메일이 틀렸어요", "이름이 잘못됐어요", "I want to change something",
            "change the date", "that's wrong", "edit the booking"]),
    ]
    nodes = [_node("greeting", []), _node("collect_patient_info", [0, 1]),
             _node("collect_visit_info", [2, 3]), _node("collect_contact", [4]),
             _node("ask_note", [5]), _node("confirm_booking", []),
             _node("modify_booking", [0, 1, 2, 3, 4])]
    return _program("clinic", slots, intents, nodes)


@dataclass(frozen=True)
class Context:
    """The part of `NLUContext` an NLU may read: the program and the node being answered."""

    program: ir.Program
    node: ir.Node


def context(program: ir.Program, node_id: str) -> Context:
    return Context(program, next(n for n in program.nodes if n.id == node_id))


PROGRAMS = {"senimate": senimate_program(), "form": form_program(), "clinic": clinic_program()}
NLUS = {name: RulesNLU(program) for name, program in PROGRAMS.items()}


def parse(text: str, node: str = "general_conversation", scenario: str = "senimate"):
    return NLUS[scenario].parse(text, context(PROGRAMS[scenario], node))


# --- evaluation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Labelled:
    """One hand-labelled utterance and the context it was said in."""

    text: str
    act: str
    intent: str | None
    slots: dict[str, Any]
    scenario: str
    context: Context


def load_labelled(path: Path = LABELLED,
                  programs: Mapping[str, ir.Program] = PROGRAMS) -> list[Labelled]:
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            program = programs[row["scenario"]]
            node = row.get("node") or program.nodes[0].id
            cases.append(Labelled(row["text"], row["act"], row["intent"], row["slots"],
                                  row["scenario"], context(program, node)))
    return cases


def _same_value(expected: Any, got: Any) -> bool:
    # Free text is the same answer whatever its spacing and punctuation.
    if isinstance(expected, str) and isinstance(got, str):
        return normalise(expected).replace(" ", "") == normalise(got).replace(" ", "")
    return expected == got and type(expected) is type(got)


def _same_slots(expected: dict[str, Any], got: dict[str, Any]) -> bool:
    return expected.keys() == got.keys() and all(_same_value(v, got[k])
                                                 for k, v in expected.items())


def evaluate(labelled: Iterable[Labelled], nlu: Any) -> dict[str, Any]:
    """Act, intent and slot accuracy of `nlu` (one NLU, or scenario name -> NLU) on `labelled`.

    An utterance counts right for intents when the intent (or its absence) matches, and for
    slots when the whole slot dict matches; `intent_recall` (labelled intents found),
    `intent_false_alarms` and `slot_values` (precision and recall over single slot values)
    show what those totals hide."""
    per_act: dict[str, Counter] = {}
    per_intent: dict[str, Counter] = {}
    totals, values, misses = Counter(), Counter(), []
    for case in labelled:
        parser = nlu[case.scenario] if isinstance(nlu, Mapping) else nlu
        result = parser.parse(case.text, case.context)
        act = result.dialogue_act or "null"
        checks = {"act": act == case.act, "intent": result.intent == case.intent,
                  "slots": _same_slots(case.slots, dict(result.slots))}
        totals.update(k for k, ok in checks.items() if ok)
        totals.update(n=1, with_intent=case.intent is not None,
                      intent_found=case.intent is not None and checks["intent"],
                      intent_false=case.intent is None and result.intent is not None)
        per_act.setdefault(case.act, Counter()).update(n=1, correct=int(checks["act"]))
        _count_intent(per_intent, case.intent, result.intent)
        _count_values(values, case.slots, dict(result.slots))
        if not all(checks.values()):
            misses.append({"text": case.text, "node": case.context.node.id,
                           "expected": [case.act, case.intent, case.slots],
                           "got": [act, result.intent, dict(result.slots)]})
    n = max(totals["n"], 1)
    return {
        "n": totals["n"],
        "act_accuracy": totals["act"] / n,
        "intent_accuracy": totals["intent"] / n,
        "slot_accuracy": totals["slots"] / n,
        "intent_recall": totals["intent_found"] / max(totals["with_intent"], 1),
        "intent_precision": _precision(sum(per_intent.values(), Counter())),
        "intent_false_alarms": totals["intent_false"],
        "per_intent": {name: {"support": c["support"], "precision": _precision(c),
                              "recall": c["tp"] / max(c["support"], 1),
                              "tp": c["tp"], "fp": c["fp"], "fn": c["fn"]}
                       for name, c in sorted(per_intent.items())},
        "per_act": {a: {"n": c["n"], "accuracy": c["correct"] / c["n"]}
                    for a, c in sorted(per_act.items())},
        "slot_values": {"precision": values["tp"] / max(values["tp"] + values["fp"], 1),
                        "recall": values["tp"] / max(values["tp"] + values["fn"], 1)},
        "misses": misses,
    }


def _count_intent(per_intent: dict[str, Counter], expected: str | None, got: str | None) -> None:
    """Per intent: `support` (labelled with it), `tp`, `fp` (found where another or none was
    meant) and `fn` (meant, and another or none found)."""
    if expected is not None:
        per_intent.setdefault(expected, Counter()).update(support=1, tp=int(got == expected),
                                                           fn=int(got != expected))
    if got is not None and got != expected:
        per_intent.setdefault(got, Counter()).update(fp=1)


def _precision(counts: Counter) -> float:
    """tp / (tp + fp); 1.0 when nothing was found (no false alarm)."""
    found = counts["tp"] + counts["fp"]
    return counts["tp"] / found if found else 1.0


def _count_values(counter: Counter, expected: dict[str, Any], got: dict[str, Any]) -> None:
    for name, value in expected.items():
        counter["tp" if name in got and _same_value(value, got[name]) else "fn"] += 1
    counter["fp"] += sum(1 for name, value in got.items()
                         if name not in expected or not _same_value(expected[name], value))


def format_report(report: dict[str, Any]) -> str:
    values = report["slot_values"]
    lines = [f"NLU accuracy on {report['n']} labelled utterances: "
             f"act {report['act_accuracy']:.3f}, intent {report['intent_accuracy']:.3f}, "
             f"slots {report['slot_accuracy']:.3f}",
             f"  intents: precision {report['intent_precision']:.3f}, recall "
             f"{report['intent_recall']:.3f}, false alarms "
             f"{report['intent_false_alarms']}; slot values: precision "
             f"{values['precision']:.3f}, recall {values['recall']:.3f}"]
    lines += [f"  {name:22} precision {row['precision']:.3f}  recall {row['recall']:.3f}  "
              f"(support {row['support']}, false alarms {row['fp']})"
              for name, row in report["per_intent"].items()]
    lines += [f"  {act:9} {row['accuracy']:.3f}  (n={row['n']})"
              for act, row in report["per_act"].items()]
    lines += [f"  miss [{m['node']}] {m['text']!r}: expected {m['expected']}, got {m['got']}"
              for m in report["misses"]]
    return "\n".join(lines)


def test_accuracy_on_the_labelled_set():
    labelled = load_labelled()
    assert len(labelled) >= 150
    report = evaluate(labelled, NLUS)
    print("\n" + format_report(report))
    assert report["act_accuracy"] >= ACT_ACCURACY_BEFORE
    assert report["intent_accuracy"] >= 0.85
    assert report["slot_accuracy"] >= 0.85


ORIGINAL_LINES = 312  # the labelled set before paraphrases and near misses were added
ACT_ACCURACY_BEFORE = 311 / 312  # 0.997 on the original lines, before intents by similarity


@pytest.mark.parametrize("part", [slice(None), slice(None, ORIGINAL_LINES),
                                  slice(ORIGINAL_LINES, None)], ids=["all", "original", "added"])
def test_intent_recall_and_precision_on_the_labelled_set(part):
    """Issue 16: intent recall at least 0.90 at precision at least 0.97, on the whole set and
    on each of its parts (the threshold was calibrated on them: see `intents.MIN_SIMILARITY`)."""
    report = evaluate(load_labelled()[part], NLUS)
    assert report["intent_recall"] >= 0.90, format_report(report)
    assert report["intent_precision"] >= 0.97, format_report(report)
    assert report["act_accuracy"] >= ACT_ACCURACY_BEFORE, format_report(report)


def test_the_labelled_set_is_well_formed():
    labelled = load_labelled()
    counts = Counter(case.scenario for case in labelled)
    assert counts["senimate"] > counts["form"] > 0
    for case in labelled:
        program = case.context.program
        assert case.act in ir.ACTS
        assert case.intent is None or case.intent in {i.name for i in program.intents}
        assert set(case.slots) <= {s.name for s in program.slots}
    korean = sum(1 for case in labelled if re.search("[가-힣ㄱ-ㅎ]", case.text))
    assert korean > len(labelled) * 0.7


# --- dialogue acts -----------------------------------------------------------------------------

ACTS = [
    # affirm
    ("응", "affirm"), ("네", "affirm"), ("ㅇㅋ", "affirm"), ("그래요", "affirm"),
    ("좋아요", "affirm"), ("yes", "affirm"), ("yeah", "affirm"), ("ok", "affirm"),
    ("네 네 알겠어요", "affirm"),
    # deny; "아니 조금만 더" refuses the closing
    ("아니", "deny"), ("아니요", "deny"), ("아니 조금만 더 얘기해요", "deny"), ("싫어", "deny"),
    ("아니 괜찮아요", "deny"), ("no", "deny"), ("not yet", "deny"), ("no thank you", "deny"),
    # thank, and thanks after a yes
    ("고마워요", "thank"), ("감사합니다", "thank"), ("네 고마워요", "thank"), ("thanks", "thank"),
    ("고마워요ㅎㅎ", "thank"),
    # goodbye
    ("잘 있어요", "goodbye"), ("안녕히 계세요", "goodbye"), ("다음에 봐요", "goodbye"),
    ("bye", "goodbye"), ("감사합니다 안녕히 계세요", "goodbye"),
    # greet
    ("안녕하세요", "greet"), ("hello", "greet"),
    # question: a "?", an ending, a question word
    ("그런데 너는 누구야?", "question"), ("오늘 날씨 어때?", "question"), ("오늘 날씨 어때", "question"),
    ("병원에 가야 하나요", "question"), ("같이 산책할까요", "question"), ("밥 먹었어요?", "question"),
    ("이거 뭐", "question"), ("누구", "question"), ("어디 가", "question"), ("언제 와", "question"),
    ("왜", "question"), ("어떻게 해", "question"), ("괜찮은가요", "question"),
    ("어디가 아픕니까", "question"), ("who are you?", "question"), ("네?", "question"),
    ("아니 근데 너 누구야?", "question"),
    # inform: content, including what only looks like a question
    ("요즘 무릎이 아파서요", "inform"), ("아침은 먹었어", "inform"), ("I skipped lunch", "inform"),
    ("병원에 가요", "inform"), ("아프니까 쉬었어", "inform"), ("언제나 건강해요", "inform"),
    ("뭐 먹었는지 기억이 안 나", "inform"), ("뭐 그냥 그래요", "inform"), ("어머니", "inform"),
    ("미안 이제 이야기 할 수 있어", "inform"), ("7", "inform"),
    # null: nothing understood; spoken input is never silence
    ("ㅁㄴㅇㄹ", "null"), ("asdf", "null"), ("...", "null"), ("?!", "null"), ("ㅋㅋㅋ", "null"),
    ("음", "null"), ("아 잠깐만요", "null"), ("hmm", "null"), ("😊", "null"), ("ㅠㅠ", "null"),
    # silence: nothing typed at all
    ("", "silence"), ("   ", "silence"), ("\n\t", "silence"),
]


@pytest.mark.parametrize(("text", "act"), ACTS)
def test_dialogue_act(text, act):
    assert parse(text, "conversation_closure").dialogue_act == act


@settings(deadline=None)  # example count left to the active hypothesis profile
@given(st.text(max_size=40))
def test_results_stay_inside_the_declarations(text):
    for scenario, program in PROGRAMS.items():
        for node in program.nodes:
            result = NLUS[scenario].parse(text, context(program, node.id))
            assert result.dialogue_act in ir.ACTS
            assert (result.dialogue_act == "silence") == (not text.strip())
            assert result.intent is None or result.intent in {i.name for i in program.intents}
            assert set(result.slots) <= {s.name for s in program.slots}
            assert 0.0 <= result.confidence <= 1.0
            assert result.text == text


# --- intents -----------------------------------------------------------------------------------

END = "user_wants_to_end"
INTENTS = [
    ("대화 종료", END, 1.0), ("그만할래요", END, 1.0), ("stop", END, 1.0),  # exact
    ("이제 대화 종료", END, 0.9), ("stop it please", END, 0.9),  # contained
    ("대화를 종료할게요", END, 0.8), ("그만하자", END, 0.8), ("이만 끊어요", END, 0.8),  # stems
    ("end this conversation", END, 0.8), ("다음에 또 얘기하자", END, 0.8),
    ("이만 끊을께요", END, 0.8),  # a misspelt ending is still the stem
    ("오늘은 여기까지 할게요", END, None), ("그럼 이만", END, None),  # similar: one meaning
    ("피곤해서 이만 쉴게요", END, None),  # similar, wrapped in more words
    ("얘기하자", None, None), ("요즘 무릎이 아파서요", None, None), ("응", None, None),  # unrelated
    ("대화 종료하지 마세요", None, None), ("끝내지 말고 더 얘기해요", None, None),  # negated
    ("don't stop", None, None), ("그만두지 않을래요", None, None),
    ("아직 그만하고 싶지 않아요", None, None), ("청소 다 끝냈어요", None, None),  # a report
    ("그만큼 힘들었어요", None, None), ("더 얘기하고 싶어요", None, None),  # near misses
]


@pytest.mark.parametrize(("text", "intent", "confidence"), INTENTS)
def test_intent(text, intent, confidence):
    result = parse(text)
    assert result.intent == intent
    if confidence is not None:
        assert result.confidence == pytest.approx(confidence)
    if intent is not None and confidence is None:
        assert 0.5 <= result.confidence <= 0.8  # similar


@pytest.mark.parametrize(("text", "intent"), [
    ("접수 취소해 주세요", "user_wants_to_cancel"),  # pattern
    ("그냥 취소", "user_wants_to_cancel"),
    ("취소 안 할게요", None),  # a negated pattern match
    ("취소 안 할래요", None),  # negated, though "안 할래요" is an example of the same intent
    ("취소하지 마세요", None), ("접수 안 할게요", "user_wants_to_cancel"),
    ("잘 모르겠는데요", "user_needs_help"), ("어떻게 해야 할지 모르겠어요", "user_needs_help"),
    ("never mind", "user_wants_to_cancel"),
    ("도와주세요", "user_needs_help"),
    ("김철수", None),
])
def test_intent_patterns_and_several_intents(text, intent):
    assert parse(text, "ask_name", "form").intent == intent


def test_a_null_act_with_an_intent_is_inform():
    program = _program("p", [], [ir.Intent("laugh", patterns=["ㅋㅋ"])], [_node("n", [])])
    result = RulesNLU(program).parse("ㅋㅋㅋ", context(program, "n"))
    assert (result.intent, result.dialogue_act, result.confidence) == ("laugh", "inform", 1.0)


def test_an_invalid_intent_pattern_is_reported_at_construction():
    program = _program("p", [], [ir.Intent("broken", patterns=["(unclosed"])], [_node("n", [])])
    with pytest.raises(ir.IRError, match="intent broken has an invalid pattern"):
        RulesNLU(program)


# --- intents by similarity (issue 16) ----------------------------------------------------------

CANCEL = "user_wants_to_cancel"


def _one_intent_program(*examples: str, patterns: tuple[str, ...] = ()) -> ir.Program:
    return _program("p", [], [ir.Intent(CANCEL, examples=list(examples), patterns=list(patterns))],
                    [_node("n", [])])


def _parse_in(program: ir.Program, text: str):
    return RulesNLU(program).parse(text, context(program, "n"))


def test_a_paraphrase_matches_by_its_stem():
    """"그냥 취소할래요" says what "취소해 주세요" says: the stem 취소(하다) under other endings."""
    program = _one_intent_program("취소해 주세요")
    result = _parse_in(program, "그냥 취소할래요")
    assert result.intent == CANCEL
    assert rules.MIN_INTENT_SCORE <= result.confidence <= rules.SIMILARITY_CEILING


def test_confidence_falls_from_the_example_to_its_paraphrases():
    program = _one_intent_program("취소해 주세요")
    said = ["취소해 주세요", "지금 취소해 주세요", "취소할래요", "이번 예약은 취소할래요"]
    confidences = [_parse_in(program, text).confidence for text in said]
    assert confidences[0] == 1.0  # the example itself
    assert confidences[1] == pytest.approx(0.9)  # contains it
    assert confidences[1] > confidences[2] > confidences[3] >= rules.MIN_INTENT_SCORE  # similar
    assert all(_parse_in(program, text).intent == CANCEL for text in said)


@pytest.mark.parametrize("text", [
    "취소 안 할래요", "취소는 안 할게요", "취소하지 마세요", "취소하지 않을래요", "취소 안 해도 돼요",
])
def test_a_negated_paraphrase_is_not_the_intent(text):
    # "안 할래요" is an example too: the negation it carries is no licence to negate the intent
    program = _one_intent_program("취소해 주세요", "안 할래요")
    assert _parse_in(program, text).intent is None


@pytest.mark.parametrize(("word", "stem"), [
    ("취소할래요", "취소"), ("취소할게요", "취소"), ("취소하고", "취소"), ("취소해주세요", "취소"),
    ("모르겠어요", "=unknown"), ("끝낼게요", "=stop"), ("그만하자", "=stop"), ("여기까지", "=stop"),
    ("바꿀게요", "=change"), ("고쳐주세요", "=change"), ("날짜를", "날짜"), ("이름이", "이름"),
    ("끝냈어요", "끝냈"), ("그만큼", "그만큼"), ("이만하면", "이만하면"),  # a report, no stem of a request
    ("네", ""), ("그냥", ""), ("주세요", ""),  # no content
])
def test_word_stems(word, stem):
    assert similarity.stem(word) == stem


def test_the_same_stems_are_similarity_one():
    index = similarity.ExampleIndex([(0, normalise("날짜를 바꿔 주세요").split())])
    assert index.best(normalise("날짜 바꿀게요").split()).scores == {0: pytest.approx(1.0)}
    assert index.best(normalise("오늘 날씨 좋네요").split()).scores == {}
    assert index.best(normalise("날짜는 안 바꿀게요").split(), 0.3).negated == {0}


def test_the_similarity_score_spans_the_confidence_of_a_similar_intent():
    assert rules.similarity_score(rules.MIN_SIMILARITY) == pytest.approx(rules.MIN_INTENT_SCORE)
    assert rules.similarity_score(1.0) == pytest.approx(rules.SIMILARITY_CEILING)


# Syllables that occur in no example, pattern or lexicon entry: text made of them is far from
# every intent.
FAR = "뷁쀍퓽쏼뙇쀓뜗퉯휏껋"


def test_the_far_syllables_are_far():
    said = [text for program in PROGRAMS.values() for intent in program.intents
            for text in (*intent.examples, *intent.patterns)]
    said += [case.text for case in load_labelled()]
    assert not set(FAR) & set("".join(said))


@settings(max_examples=examples(100), deadline=None)
@given(st.text(alphabet=FAR + " ", max_size=40))
def test_text_far_from_every_example_has_no_intent(text):
    for scenario, program in PROGRAMS.items():
        result = NLUS[scenario].parse(text, context(program, program.nodes[0].id))
        assert result.intent is None
        assert 0.0 <= result.confidence <= 1.0


LABELLED_CASES = load_labelled()


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, len(LABELLED_CASES) - 1), st.text(alphabet=FAR, min_size=1, max_size=12),
       st.booleans())
def test_unrelated_words_never_create_an_intent_nor_raise_its_confidence(index, noise, before):
    case = LABELLED_CASES[index]
    nlu = NLUS[case.scenario]
    plain = nlu.parse(case.text, case.context)
    noisy = nlu.parse(f"{noise} {case.text}" if before else f"{case.text} {noise}", case.context)
    assert noisy.intent in (None, plain.intent)
    if noisy.intent is not None:
        assert noisy.confidence <= plain.confidence


_HANGUL_WORDS = st.lists(st.text(st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3),
                                 min_size=1, max_size=6), max_size=8).map(" ".join)


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(_HANGUL_WORDS, st.text(max_size=40)))
def test_any_text_parses_with_a_confidence_in_range(text):
    for scenario, program in PROGRAMS.items():
        result = NLUS[scenario].parse(text, context(program, program.nodes[-1].id))
        assert 0.0 <= result.confidence <= 1.0
        assert result.intent is None or result.confidence >= rules.MIN_INTENT_SCORE


# --- string slots with a pattern ----------------------------------------------------------------

PHONE = r"01[016789]-\d{3,4}-\d{4}"


@pytest.mark.parametrize(("pattern", "text", "value"), [
    (PHONE, "제 번호는 010-1234-5678이에요", "010-1234-5678"),  # inside a sentence
    ("^" + PHONE + "$", "제 번호는 010-1234-5678이에요", "010-1234-5678"),  # anchors bind the value
    (PHONE, "010-1234-5678", "010-1234-5678"),
    (PHONE, "번호는 010-1234-5678 이고 집은 02-123-4567", "010-1234-5678"),  # the first that fits
    (PHONE, "010-1234-56789 이에요", "010-1234-56789"),  # no cut: the trimmed answer, refused later
    (r"^\d{4}-\d{2}-\d{2}$", "2025-03-20에 갈게요", "2025-03-20"),
    (r"^\d{4}-\d{2}-\d{2}$", "다음 주 화요일이요", "다음 주 화요일이요"),  # as before: the answer
    # refused as a search: not searched; the answer without its frame (SPEC 18.6)
    (r".*a.*b", "it is a1b here", "a1b here"),
])
def test_a_pattern_slot_is_found_inside_the_utterance(pattern, text, value):
    program = _one_slot_program(_slot("phone", "string", pattern=pattern))
    assert RulesNLU(program).parse(text, context(program, "n")).slots == {"phone": value}


def test_a_pattern_slot_is_found_beside_other_slots():
    # collect_visit_info asks for the department and the date; modify_booking for two strings
    assert parse("내과로 2025-03-14에 예약할게요", "collect_visit_info", "clinic").slots == {
        "department": "내과", "visit_date": "2025-03-14"}
    assert parse("날짜는 2025-03-20으로 바꿔 주세요", "modify_booking", "clinic").slots == {
        "visit_date": "2025-03-20"}


# --- enum slots --------------------------------------------------------------------------------

ENUMS = [
    ("meal_check", "아침은 먹었어", {"meal_status": "adequate"}),
    ("meal_check", "밥 먹었어요", {"meal_status": "adequate"}),
    ("meal_check", "챙겨먹었어", {"meal_status": "adequate"}),
    # negation: none of these is adequate although "먹었" is in each
    ("meal_check", "안 먹었어", {"meal_status": "skipped"}),
    ("meal_check", "못 먹었어요", {"meal_status": "skipped"}),
    ("meal_check", "안 먹었어요", {"meal_status": "skipped"}),
    ("meal_check", "안먹었어", {"meal_status": "skipped"}),
    ("meal_check", "굶었어", {"meal_status": "skipped"}),
    ("meal_check", "먹지 않았어요", {"meal_status": "skipped"}),
    ("meal_check", "아침 안 챙겨 먹었어", {"meal_status": "skipped"}),
    ("meal_check", "아침 걸렀어", {"meal_status": "skipped"}),
    ("meal_check", "I skipped lunch", {"meal_status": "skipped"}),  # the member name
    # a negated member of a two-member enum is the other member
    ("health_check", "안 아파요", {"health_status": "good"}),
    ("health_check", "아프지 않아요", {"health_status": "good"}),
    ("health_check", "불편한 데 없어요", {"health_status": "good"}),
    ("health_check", "안 괜찮아", {"health_status": "complaint"}),
    ("health_check", "별로 안 좋아요", {"health_status": "complaint"}),
    ("health_check", "허리가 쑤셔요", {"health_status": "complaint"}),  # 쑤시 -> 쑤셔
    ("health_check", "어깨가 결려", {"health_status": "complaint"}),  # 결리 -> 결려
    ("health_check", "not good", {"health_status": "complaint"}),
    # a negated member of a larger enum says only what it is not
    ("ask_department", "치과는 안 가요", {}),
    ("ask_department", "내과 말고 정형외과요", {"department": "orthopedics"}),
    ("ask_department", "이가 아파요", {"department": "dental"}),
]


@pytest.mark.parametrize(("node", "text", "slots"), ENUMS)
def test_enum_slot(node, text, slots):
    scenario = "form" if node.startswith("ask") else "senimate"
    assert parse(text, node, scenario).slots == slots


def _one_slot_program(slot: ir.Slot) -> ir.Program:
    return _program("p", [slot], [], [_node("n", [0])])


@pytest.mark.parametrize(("text", "value"), [
    ("I had lunch", "adequate"), ("I ate", "adequate"),
    ("I haven't had lunch", "skipped"), ("I didn't eat", "skipped"), ("not ate", "skipped"),
    ("I skipped it", "skipped"),
])
def test_english_negation_before_a_synonym(text, value):
    program = _one_slot_program(_slot("meal", "enum", values=["adequate", "skipped"], synonyms={
        "adequate": ["had lunch", "ate", "eat"], "skipped": ["skipped"]}))
    assert RulesNLU(program).parse(text, context(program, "n")).slots == {"meal": value}


def test_the_longest_synonym_wins():
    program = _program("p", [_slot("drink", "enum", values=["tea", "green_tea"], synonyms={
        "tea": ["차"], "green_tea": ["녹차"]})], [], [_node("n", [0])])
    assert RulesNLU(program).parse("녹차 마셨어", context(program, "n")).slots == {"drink": "green_tea"}


@pytest.mark.parametrize(("node", "text", "slots"), [
    # over-answer; the node's free text keeps the words no value of its own took (SPEC 18.2)
    ("daily_life_check", "요즘 무릎이 아파서요", {"health_status": "complaint",
                                            "daily_life": "요즘 무릎이 아파서요"}),
    ("general_conversation", "점심 먹었어", {"meal_status": "adequate"}),
    ("general_conversation", "3시에 먹었어", {"meal_status": "adequate"}),  # no pain_level
    ("conversation_closure", "아니 괜찮아요", {}),  # act words only: no over-answer
    ("meal_check", "너는 밥 먹었어?", {}),  # a question about the bot
    ("meal_check", "밥 먹었어?", {}),  # the asked word is no answer
])
def test_over_answering(node, text, slots):
    assert parse(text, node).slots == slots


# --- numbers, booleans, emails, free text -------------------------------------------------------

NUMBERS = [
    ("7", 7), ("7점", 7), ("칠", 7), ("칠이요", 7), ("일곱", 7), ("일곱 정도요", 7), ("열", 10),
    ("다섯 살", 5), ("세 번", 3), ("두 개", 2), ("한 삼 정도", 3), ("영", 0), ("0", 0),
    ("10점 만점에 8점", 8), ("0에서 10 중에 4", 4), ("seven", 7), ("7 out of 10", 7),
    ("열이 나고 아파요", None), ("네", None), ("이 사람이 아파요", None), ("하나도 안 아파요", None),
    ("30", 30),  # out of bounds: given to the engine, which rejects it with a reason
]


@pytest.mark.parametrize(("text", "value"), NUMBERS)
def test_pain_level_numbers(text, value):
    assert parse(text, "health_check").slots.get("pain_level") == value


_SINO = ["", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구"]
_NATIVE_UNITS = ["", "하나", "둘", "셋", "넷", "다섯", "여섯", "일곱", "여덟", "아홉"]
_NATIVE_TENS = ["", "열", "스물", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔"]


def _sino_word(n: int) -> str:
    tens, units = divmod(n, 10)
    return ("" if tens == 0 else ("" if tens == 1 else _SINO[tens]) + "십") + _SINO[units]


@pytest.mark.parametrize("n", range(1, 100))
def test_every_korean_numeral_to_99(n):
    """Sino-Korean (칠, 이십삼) and native (일곱, 스물셋) forms, with a counter and alone."""
    native = _NATIVE_TENS[n // 10] + _NATIVE_UNITS[n % 10]
    for said in (_sino_word(n) + " 점", native + " 살", native):
        assert lex.numbers(said.split())[:1] == [(n, "", 0)], said
    assert lex.word_number(_sino_word(n) + "점")[:2] == (n, "점")


def test_a_number_slot_keeps_decimals():
    program = _one_slot_program(_slot("temperature", "number", min=30, max=45))
    result = RulesNLU(program).parse("열이 좀 있어요 36.5도", context(program, "n"))
    assert result.slots == {"temperature": 36.5}


@pytest.mark.parametrize(("text", "value"), [
    ("1950년생", 1950), ("1950", 1950), ("천구백오십년생이에요", 1950), ("오십년생", 1950),
    ("52년생이요", 1952), ("1955년 3월 2일", 1955), ("born in 1948", 1948), ("스물다섯", 25),
    ("이십", 20), ("구십구", 99), ("아흔아홉", 99), ("열한 살", 11), ("스무 살", 20),
])
def test_birth_year_numbers(text, value):
    assert parse(text, "ask_birth_year", "form").slots.get("birth_year") == value


@pytest.mark.parametrize(("text", "value"), [
    ("네", True), ("응", True), ("맞아요", True), ("yes", True), ("아니요", False), ("no", False),
    ("아니요 틀렸어요", False), ("뭐라고요?", None), ("음", None),
])
def test_boolean_from_affirm_and_deny(text, value):
    assert parse(text, "confirm", "form").slots.get("confirmed") == value


def test_booleans_only_for_the_collected_slot():
    assert "confirmed" not in parse("네", "ask_name", "form").slots


@pytest.mark.parametrize(("node", "text", "value"), [
    ("ask_email", "kim@example.com", "kim@example.com"),
    ("ask_email", "제 메일은 happy.bell80@gmail.co.kr 이에요", "happy.bell80@gmail.co.kr"),
    ("ask_email", "메일 없어요", None),
    ("ask_name", "김철수 kim@example.com", "kim@example.com"),  # the only email slot: over-answer
])
def test_email(node, text, value):
    assert parse(text, node, "form").slots.get("contact_email") == value


@pytest.mark.parametrize(("node", "text", "slots"), [
    ("daily_life_check", " 요즘 아침마다 산책해요. ", {"daily_life": "요즘 아침마다 산책해요"}),
    ("daily_life_check", "산책했어요", {"daily_life": "산책했어요"}),
    ("daily_life_check", "네", {}), ("daily_life_check", "아니요", {}),  # act words only
    ("daily_life_check", "고마워요", {}), ("daily_life_check", "잘 있어요", {}),
    ("daily_life_check", "ㅁㄴㅇㄹ", {}), ("daily_life_check", "", {}),
    ("daily_life_check", "오늘 날씨 어때?", {}), ("daily_life_check", "그만할래요", {}),
    ("daily_life_check", "아니요 집에만 있었어요", {"daily_life": "아니요 집에만 있었어요"}),
    ("health_check", "목이 칼칼해요", {}),  # two string slots: which one is unknowable
    ("general_conversation", "목이 칼칼해요", {}),
])
def test_free_text(node, text, slots):
    assert parse(text, node).slots == slots


@pytest.mark.parametrize(("text", "name"), [
    ("김철수", "김철수"), ("제 이름은 김철수입니다", "김철수"), ("저는 김철수예요", "김철수"),
    ("김민준이요", "김민준"), ("김철수요", "김철수"), ("이순자라고 해요", "이순자"),
    ("my name is John Smith", "John Smith"), ("John Smith.", "John Smith"),
    ("저는 요즘 산책을 자주 해요", "저는 요즘 산책을 자주 해요"),  # a sentence keeps its wording
])
def test_free_text_answer_frames(text, name):
    assert free_text(text) == name
    assert parse(text, "ask_name", "form").slots == {"patient_name": name}


# --- confidence and cost -----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "confidence"), [
    ("네", 1.0), ("", 1.0), ("네 먹었어요", 0.85), ("오늘 날씨 어때?", 0.9),
    ("아침은 먹었어", 0.6), ("ㅁㄴㅇㄹ", 0.0), ("대화 종료", 1.0),
])
def test_confidence(text, confidence):
    assert parse(text).confidence == pytest.approx(confidence)


def test_an_affirm_word_that_answers_with_a_value_is_inform():
    assert parse("괜찮아요", "health_check").dialogue_act == "inform"
    assert parse("괜찮아요", "conversation_closure").dialogue_act == "affirm"


def test_parse_compiles_no_regex(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a regex was compiled inside parse")

    for name in ("compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "split"):
        monkeypatch.setattr(re, name, refuse)
    for text in ("아침은 안 먹었어", "10점 만점에 7점", "kim@example.com", "대화 종료하지 마세요",
                 "그냥 취소할래요", "2025-03-20에 갈게요", "예약 취소는 안 할게요"):
        parse(text, "health_check")
        parse(text, "ask_email", "form")
        parse(text, "collect_visit_info", "clinic")
