"""The template NLG: who speaks on each kind of decision, placeholders, common messages."""

from __future__ import annotations

import pytest

from interpreter.engine import Engine
from interpreter.wording.nlg import MESSAGES, fill_placeholders

from support.irkit import SILENT, ProgramBuilder, eq, nlu

KO = MESSAGES["ko"]


def started(builder, **start) -> Engine:
    e = Engine(builder.runtime())
    e.start("s", **start)
    return e


@pytest.mark.parametrize("text,slots,data,expected", [
    ("식사는 {slots.meal}였군요.", {"meal": "skipped"}, {}, "식사는 skipped였군요."),
    ("이름은 {slots.name}. 반가워요!", {}, {}, "반가워요!"),
    ("{skill.data.summary}. 좋아요.", {}, {"summary": "맑음"}, "맑음. 좋아요."),
    ("{skill.data.today.t}도예요.", {}, {"today": {"t": 21.0}}, "21도예요."),
    ("동의: {slots.ok}.", {"ok": True}, {}, "동의: 네."),
    ("값 {slots.v}!", {"v": "{slots.w}"}, {}, "값 {slots.w}!"),  # never re-expanded
    ("중괄호 {그대로} 둬요.", {}, {}, "중괄호 {그대로} 둬요."),
    ("{slots.a} 그리고 {slots.b}.", {"a": "x"}, {}, ""),
    ("빈 값 {slots.e}.", {"e": ""}, {}, ""),
])
def test_fill_placeholders(text, slots, data, expected):
    assert fill_placeholders(text, slots, data, KO) == expected


@pytest.mark.parametrize("text,slots,expected", [
    ("{{literal}} and {slots.a}.", {"a": "x"}, "{literal} and x."),
    ("{{slots.a}} is written so.", {"a": "x"}, "{slots.a} is written so."),  # escape first
    ("a }} b {{", {}, "a } b {"),
    ("{{{slots.a}}}", {"a": "x"}, "{x}"),
])
def test_doubled_braces_are_literal_braces(text, slots, expected):
    """SPEC 17.23: `{{` and `}}` write literal braces, in responses and skill arguments."""
    assert fill_placeholders(text, slots, {}, KO) == expected
    from interpreter.placeholders import fill_argument
    assert fill_argument(text, slots, {}) == expected


def test_a_slot_question_is_filled_like_a_response():
    """SPEC 14.8: `{slots.X}` in a question is filled (the designer's case: it was said
    literally); a question whose every sentence lacks a value falls back to the common ask."""
    b = ProgramBuilder(language="en")
    b.slot("branch", "string")
    b.slot("when", "string", required=True,
           question="When will you pick it up at {slots.branch}?", description="pickup day")
    b.node("start", collect=["branch"]).default("ask")
    b.node("ask", collect=["when"]).default("done")
    b.node("done", responses={"default": "Done."})
    e = started(b)
    said = e.turn("s", "Northgate", nlu("inform", branch="Northgate")).response
    assert said == "When will you pick it up at Northgate?"
    said = started(b).turn("s", "hm", nlu("inform")).response
    assert "{" not in said and "pickup day" in said


def test_fill_is_not_python_formatting():
    assert fill_placeholders("{0} {slots.x.__class__}", {"x": "y"}, {}) == ""
    assert fill_placeholders("{0} 그대로", {}, {}) == "{0} 그대로"


def task_builder(question="성함이 어떻게 되세요?", language="ko"):
    b = ProgramBuilder(language=language)
    b.slot("name", "string", required=True, question=question, description="성함")
    b.slot("age", "integer", min=0, max=130, question="연세가 어떻게 되세요?")
    b.node("start", responses={"default": "시작할게요."}).default("ask")
    b.node("ask", collect=["name", "age"], min_turns=1,
           responses={"no_input": "천천히 말씀하셔도 돼요."}).default("done")
    b.node("done", responses={"default": "{slots.name}님, 고마워요."})
    return b


def test_move_into_a_node_without_default_asks_its_first_missing_slot():
    e = started(task_builder())
    assert e.turn("s", "네", nlu("affirm")).response == "성함이 어떻게 되세요?"


def test_required_gate_re_asks_with_the_question_never_twice_in_the_same_words():
    e = started(task_builder())
    assert e.turn("s", "네", nlu("affirm")).response == "성함이 어떻게 되세요?"
    said = [e.turn("s", "음 글쎄요", nlu("inform")) for _ in range(3)]
    assert {r.reason for r in said} == {"gate:required_slots"}
    assert [r.response for r in said] == ["다시 한번 여쭤볼게요. 성함이 어떻게 되세요?",
                                          "성함이 어떻게 되세요?",
                                          "다시 한번 여쭤볼게요. 성함이 어떻게 되세요?"]


def test_gate_without_question_uses_common_ask_with_description():
    e = started(task_builder(question=None))
    assert e.turn("s", "네", nlu("affirm")).response == "성함을(를) 알려 주시겠어요?"
    assert e.turn("s", "음", nlu("inform")).response == \
        "다시 한번 여쭤볼게요. 성함을(를) 알려 주시겠어요?"


def test_validation_failure_re_asks_that_slot():
    e = started(task_builder())
    e.turn("s", "네", nlu("affirm"))
    r = e.turn("s", "200살이에요", nlu("inform", age=200))
    assert r.response == KO["invalid"] + " 연세가 어떻게 되세요?"


def test_move_speaks_for_the_target_with_filled_placeholders():
    e = started(task_builder())
    e.turn("s", "네", nlu("affirm"))
    r = e.turn("s", "김철수요", nlu("inform", name="김철수"))
    assert (r.next_node, r.response) == ("done", "김철수님, 고마워요.")


def test_reprompt_uses_node_response_then_the_re_ask_of_the_first_missing_slot():
    e = started(task_builder())
    e.turn("s", "네", nlu("affirm"))
    assert e.turn("s", "", None).response == "천천히 말씀하셔도 돼요."
    assert e.turn("s", "뭐라고", nlu(None)).response == "성함이 어떻게 되세요?"


@pytest.mark.parametrize("responses,slot,said", [
    # SPEC 9: the fallback's variants, else the re-ask of the first missing slot, else the
    # default, else the common message; the next in that order when one would repeat
    ({"default": "이름이요?", "not_understood": ["다시요?", "한 번 더요?"]}, True,
     ["다시요?", "한 번 더요?", "다시요?"]),
    ({"default": "이름이요?", "not_understood": "다시요?"}, True,
     ["다시요?", "성함이 어떻게 되세요?", "다시요?"]),
    ({"default": "이름이요?"}, True, ["성함이 어떻게 되세요?", "이름이요?", "성함이 어떻게 되세요?"]),
    ({"default": "이름이요?"}, False, [KO["not_understood"], "이름이요?", KO["not_understood"]]),
    ({}, False, [KO["not_understood"], "제가 아직 잘 못 알아들었어요. 조금 다르게 말씀해 주시겠어요?",
                 KO["not_understood"]]),
])
def test_reprompt_order_never_says_the_previous_sentence_again(responses, slot, said):
    b = ProgramBuilder()
    b.slot("name", "string", question="성함이 어떻게 되세요?")
    b.node("start", responses={"default": "시작할게요."}).default("ask")
    b.node("ask", collect=["name"] if slot else [], max_fallback_retries=9,
           responses=responses).default("done")
    b.node("done")
    e = started(b)
    e.turn("s", "네", nlu("affirm"))
    replies = [e.turn("s", "뭐라고", nlu(None)) for _ in range(3)]
    assert {r.reason for r in replies} == {"fallback:not_understood"}
    assert [r.response for r in replies] == said


def test_turn_limit_response_on_a_stay():
    b = ProgramBuilder()
    b.node("chat", max_turns=2, responses={"default": "더 이야기해요.",
                                          "turn_limit": "이제 마무리할게요."}) \
        .stay(eq("nlu.dialogue_act", "inform")).default("end")
    b.node("end")
    e = started(b)
    assert e.turn("s", "그래서요", nlu("inform")).response == "이제 마무리할게요."


def test_completion_without_complete_response_is_a_short_acknowledgement():
    for language in ("ko", "en"):
        b = ProgramBuilder(language=language)
        b.node("a").default("b")
        b.node("b", responses={"default": "Bye now."})
        e = started(b)
        e.turn("s", "ok", nlu("affirm"))
        r = e.turn("s", "ok", nlu("affirm"))
        assert r.complete and r.response == MESSAGES[language]["goodbye"]


def test_stay_at_a_closing_node_never_repeats_the_farewell():
    b = ProgramBuilder()
    b.node("a").to("closure", eq("nlu.dialogue_act", "goodbye")).stay()
    b.node("closure", terminal=True, responses={"default": "다음에 또 뵐게요."}) \
        .stay(eq("nlu.dialogue_act", "question"))
    e = started(b)
    assert e.turn("s", "잘 있어", nlu("goodbye")).response == "다음에 또 뵐게요."
    r = e.turn("s", "너는 누구야?", nlu("question"))
    assert r.reason == "stay:next_nodes[0]" and "뵐게요" not in r.response


def test_confirmation_is_asked_and_asked_again_after_a_reprompt():
    b = ProgramBuilder()
    b.slot("meal", "enum", values=["adequate", "skipped"], on_conflict="confirm",
           description="식사 상태")
    b.node("a", collect=["meal"], responses={"default": "식사는요?"}) \
        .stay(eq("nlu.dialogue_act", "inform")).default("b")
    b.node("b")
    e = Engine(b.runtime())
    e.start("s")
    e.turn("s", "먹었어요", nlu("inform", meal="adequate"))
    r = e.turn("s", "아니 굶었어요", nlu("inform", meal="skipped"))
    assert r.response.startswith("앞서 말씀하신 adequate을(를) skipped(으)로 바꿀까요?")
    assert r.slots == {"meal": "adequate"}
    r = e.turn("s", "", None)
    assert r.response.startswith("앞서 말씀하신 adequate을(를) skipped")
    r = e.turn("s", "네", nlu("affirm"))
    assert r.slots == {"meal": "skipped"}


def test_english_common_messages():
    b = ProgramBuilder(language="en")
    b.node("a").stay(eq("nlu.dialogue_act", "inform")).default("b")
    b.node("b")
    e = started(b)
    assert e.turn("s", "", None).response == MESSAGES["en"]["no_input"]


def test_silence_reprompt_with_the_default_messages():
    b = ProgramBuilder()
    b.node("a").default("b")
    b.node("b")
    e = started(b)
    r = e.turn("s", "", SILENT)
    assert (r.reason, r.response) == ("fallback:no_input", KO["no_input"])
