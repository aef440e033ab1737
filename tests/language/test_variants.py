"""Response variants (SPEC 9): the rotation, the chain of candidates, and the session state.

`variants.choose` is checked as a property (never the previous sentence when the chain holds
another; a response says its variants in turn), then through the engine: stays and re-entries
rotate, the first time says variant 0, the rotation is saved with the turn and only for
responses with several variants, a variant equal to the previous reply is passed over; last,
what the compiler emits for variants, `mgc inspect` and `mgc schema`, and a hand-made IR file
whose responses mgc would never write (one line, no traceback).
"""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from compiler.driver import check_source
from compiler.render import inspect_data, inspect_text
from compiler.schema import scenario_json_schema
from interpreter import ir
from interpreter.engine import Engine
from interpreter.loader import load_program
from interpreter.skills.registry import SkillRegistry
from interpreter.state import decode_state, encode_state
from interpreter.wording.nlg import MESSAGES, Reply, TemplateNLG, speak
from interpreter.wording.variants import Candidates, choose, start_of

from conftest import examples
from support.irkit import ProgramBuilder, body_tree, eq, forge, nlu, senimate_like

RESPONSES = [f.name for f in msgspec.structs.fields(ir.Node)].index("responses")
SENTENCES = st.sampled_from(["가", "나", "다", "라", ""])
CHAINS = st.lists(st.builds(Candidates, st.sampled_from([None, "n:default", "n:no_input"]),
                            st.lists(SENTENCES, max_size=4).map(tuple)), max_size=4)


@settings(max_examples=examples(300))
@given(CHAINS, st.dictionaries(st.sampled_from(["n:default", "n:no_input"]), st.integers(0, 5)),
       st.one_of(st.none(), SENTENCES))
def test_the_choice_is_never_the_previous_sentence_when_the_chain_has_another(
        chain, rotation, previous):
    choice = choose(chain, rotation, previous)
    said = {t for c in chain for t in c.texts if t}
    assert choice.text == "" if not said else choice.text in said
    if said - {previous}:
        assert choice.text != previous
    assert choose(chain, rotation, previous) == choice  # deterministic
    changed = {k for k in choice.rotation if choice.rotation.get(k) != rotation.get(k)}
    assert changed <= ({choice.source.key} if choice.source is not None else set())


@settings(max_examples=examples(100))
@given(st.integers(1, 6), st.integers(0, 20))
def test_a_response_said_again_and_again_says_every_variant_in_turn(count, rounds):
    texts = tuple(f"문장 {i}" for i in range(count))
    rotation: dict[str, int] = {}
    said = []
    for _ in range(rounds + count):
        choice = choose([Candidates("n:default", texts)], rotation, None)
        rotation = choice.rotation
        said.append(choice.text)
    assert said[:count] == list(texts)  # variant 0 first, then each in order
    assert said == [texts[i % count] for i in range(len(said))]
    assert rotation == ({} if count == 1 else {"n:default": (len(said) - 1) % count})


def test_a_response_starts_after_the_variant_said_last():
    three = Candidates("n:default", ("a", "b", "c"))
    assert start_of(three, {}) == 0
    assert start_of(three, {"n:default": 1}) == 2
    assert start_of(three, {"n:default": 2}) == 0
    assert start_of(three, {"n:default": 7}) == 2  # a recompiled scenario with fewer variants
    assert start_of(Candidates(None, ("a", "b")), {"n:default": 0}) == 0  # fixed: in order
    assert choose([three], {"n:default": 1}, "c").text == "a"  # c was the reply before


def test_a_variant_equal_to_the_previous_reply_is_passed_over_and_counted():
    choice = choose([Candidates("n:default", ("a", "b", "c"))], {"n:default": 2}, "a")
    assert (choice.text, choice.rotation) == ("b", {"n:default": 1})
    only = choose([Candidates("n:default", ("a",)), Candidates(None, ("a",))], {}, "a")
    assert only.text == "a"  # nothing else to say: said again


def test_a_prefix_counts_in_the_comparison():
    chain = [Candidates(None, ("a", "b"))]
    assert choose(chain, {}, "Q? a", prefix="Q? ").text == "b"
    assert choose(chain, {}, "a", prefix="Q? ").text == "a"


# --- through the engine ----------------------------------------------------------------------


def chat_builder(**responses) -> ProgramBuilder:
    b = ProgramBuilder()
    b.intent("bye")
    b.node("chat", responses=responses, max_fallback_retries=9) \
        .to("done", eq("nlu.intent", "bye")).stay()
    b.node("done", responses={"complete": ["잘 가요.", "또 봐요."]})
    return b


def started(builder: ProgramBuilder) -> Engine:
    engine = Engine(builder.runtime())
    engine.start("s")
    return engine


def test_a_stay_rotates_the_default_and_the_opening_says_variant_zero():
    e = Engine(chat_builder(default=["하나", "둘", "셋"]).runtime())
    assert e.start("s").response == "하나"
    assert [e.turn("s", "음", nlu("inform")).response for _ in range(4)] == \
        ["둘", "셋", "하나", "둘"]
    assert e.session("s").rotation == {"chat:default": 1}


def test_a_plain_string_stores_no_rotation():
    e = started(chat_builder(default="하나", no_input="천천히요."))
    e.turn("s", "", None)
    e.turn("s", "음", nlu("inform"))
    assert e.session("s").rotation == {}


def test_each_response_key_has_its_own_rotation():
    e = started(chat_builder(default=["하나", "둘"], no_input=["천천히요.", "괜찮아요."]))
    said = [e.turn("s", text, nlu("inform") if text else None).response
            for text in ("", "음", "", "음")]
    assert said == ["천천히요.", "둘", "괜찮아요.", "하나"]
    assert e.session("s").rotation == {"chat:default": 0, "chat:no_input": 1}


def test_the_rotation_survives_the_stored_session():
    e = started(chat_builder(default=["하나", "둘", "셋"]))
    e.turn("s", "음", nlu("inform"))
    state = decode_state(encode_state(e.session("s")))
    assert state.rotation == {"chat:default": 1}
    assert e.turn("s", "음", nlu("inform")).response == "셋"


def test_a_variant_that_would_repeat_the_previous_reply_is_passed_over():
    # the no_input re-prompt says "둘"; the stay after it skips "둘" and says "셋"
    e = started(chat_builder(default=["하나", "둘", "셋"], no_input="둘"))
    assert e.turn("s", "", None).response == "둘"
    assert e.turn("s", "음", nlu("inform")).response == "셋"
    assert e.session("s").rotation == {"chat:default": 2}


def test_a_stay_with_one_default_says_the_common_sentence_instead_of_repeating_it():
    e = started(chat_builder(default="하나"))
    said = [e.turn("s", "음", nlu("inform")).response for _ in range(3)]
    assert said == [MESSAGES["ko"]["continue"], "하나", MESSAGES["ko"]["continue"]]


def test_completion_says_the_complete_variants_from_the_first():
    e = started(chat_builder(default=["하나", "둘"]))
    e.turn("s", "그만", nlu("inform", intent="bye"))
    assert e.turn("s", "네", nlu("affirm")).response == "잘 가요."


def test_a_safety_hold_repeats_its_help_rather_than_say_a_filler():
    b = ProgramBuilder()
    b.node("talk", responses={"default": "말씀하세요."}).stay()
    b.node("help", responses={"default": "119에 전화하세요."}).stay()
    b.safety("medical_emergency", "help")
    e = started(b)
    said = [e.turn("s", "가슴이 너무 아파요", nlu("inform")).response for _ in range(3)]
    assert said == ["119에 전화하세요."] * 3


def test_a_safety_hold_with_variants_rotates_its_help():
    b = ProgramBuilder()
    b.node("talk", responses={"default": "말씀하세요."}).stay()
    b.node("help", responses={"default": ["119에 전화하세요.", "지금 119에 연락하세요."]}).stay()
    b.safety("medical_emergency", "help")
    e = started(b)
    said = [e.turn("s", "가슴이 너무 아파요", nlu("inform")).response for _ in range(3)]
    assert said == ["119에 전화하세요.", "지금 119에 연락하세요.", "119에 전화하세요."]


def test_an_nlg_without_reply_leaves_the_rotation_alone():
    class Plain:
        def render(self, decision, context):
            return "늘 같은 말"
    e = Engine(chat_builder(default=["하나", "둘"]).runtime(), nlg=Plain())
    e.start("s")
    e.turn("s", "음", nlu("inform"))
    assert e.session("s").rotation == {}


def test_the_template_reply_carries_the_rotation_and_the_variants_it_chose_from():
    replies = []

    class Capture(TemplateNLG):
        def reply(self, decision, context):
            replies.append(super().reply(decision, context))
            return replies[-1]
    e = Engine(chat_builder(default=["하나", "둘"], no_input="천천히요.").runtime(),
               nlg=Capture())
    e.start("s")
    e.turn("s", "음", nlu("inform"))
    e.turn("s", "", None)
    assert replies == [Reply("하나", {"chat:default": 0}, ("하나", "둘")),
                       Reply("둘", {"chat:default": 1}, ("하나", "둘")),
                       Reply("천천히요.", {"chat:default": 1}, ())]


def test_speak_asks_an_nlg_without_reply_for_its_text():
    class Plain:
        def render(self, decision, context):
            return "늘 같은 말"
    e = Engine(chat_builder(default=["하나", "둘"]).runtime(), nlg=Plain())
    assert e.start("s").response == "늘 같은 말"
    assert speak(TemplateNLG(), *_opening(e)).text == "하나"


def _opening(engine: Engine):
    from interpreter.routing import opening_decision
    from interpreter.wording.nlg import RenderContext

    state = engine.session("s")
    return opening_decision(engine.runtime, state), RenderContext(engine.runtime, state)


@pytest.mark.parametrize("failed", [True, False])
def test_a_failed_skill_puts_its_fallback_before_every_variant(failed):
    b = ProgramBuilder()
    b.node("hello", skill="weather", skill_args={"location": "atlantis" if failed else "서울"},
           fallback="날씨를 몰라요.", responses={"default": ["안녕하세요.", "반가워요."]}) \
        .to("bye", eq("nlu.dialogue_act", "goodbye")).stay()
    b.node("bye")
    e = Engine(b.runtime(), skills=SkillRegistry.default())
    first = e.start("s").response
    second = e.turn("s", "음", nlu("inform")).response
    if failed:
        assert (first, second) == ("날씨를 몰라요. 안녕하세요.", "날씨를 몰라요. 반가워요.")
    else:
        assert (first, second) == ("안녕하세요.", "반가워요.")


# --- the compiler, the IR and the views ----------------------------------------------------------


def test_variants_compile_to_lists_and_inspect_and_the_schema_show_both_forms():
    scenario = {"metadata": {"name": "v", "language": "ko"}, "graph": {"entry": "a", "nodes": [
        {"id": "a", "description": "a", "default_next": "b",
         "responses": {"default": "하나뿐이에요.", "no_input": ["천천히요.", "괜찮아요."]}},
        {"id": "b", "description": "b"}]}}
    result = check_source("v.json", json.dumps(scenario, ensure_ascii=False))
    assert not result.diagnostics
    envelope, program = ir.decode_ir(result.ir_bytes())
    assert program.nodes[0].responses == {"default": ["하나뿐이에요."],
                                          "no_input": ["천천히요.", "괜찮아요."]}
    text = inspect_text(inspect_data(envelope, program))
    assert "says default:" in text and "says no_input 2/2:" in text and "괜찮아요." in text
    forms = scenario_json_schema()["$defs"]["Responses"]["properties"]["no_input"]["anyOf"]
    assert {"type": "string"} in forms
    assert {"type": "array", "minItems": 1, "uniqueItems": True,
            "items": {"type": "string", "minLength": 1}} in forms


@pytest.mark.parametrize("responses, problem", [
    ({"default": []}, 'response "default" has no variants'),
    ({"greeting": ["안녕"]}, 'response "greeting" is not one of default, no_input'),
    ({"default": "안녕"}, "does not match this mgi's format"),  # a format-3 layout
])
def test_a_hand_made_node_with_unusable_responses_is_one_line(tmp_path, responses, problem):
    body = body_tree(senimate_like().build())
    body["nodes"][0][RESPONSES] = responses
    path = tmp_path / "hand.ir"
    path.write_bytes(forge(body))
    with pytest.raises(ir.IRError) as info:
        load_program(path, verify=True)
    message = str(info.value)
    assert problem in message and message.endswith("recompile with `mgc compile`"), message
    assert len(message.splitlines()) == 1

