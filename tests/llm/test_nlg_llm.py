"""The LLM NLG: what its prompt carries, that no prompt pulls two ways (every node and decision
kind of the reference scenarios), and the template's sentence whenever the model fails."""

from __future__ import annotations

import time
from itertools import product

import pytest

from interpreter import ir
from interpreter.engine import Engine
from interpreter.executors import missing_slots
from interpreter.llm.client import ChatClient, LLMJournal, LLMOutcome, LLMSettings
from interpreter.llm.prompts import SITUATIONS, nlg_messages, nlg_parts, situation
from interpreter.wording.nlg import RenderContext, TemplateNLG
from interpreter.llm.nlg import MAX_REPLY_CHARS, EmptyAnswer, LLMNLG, reply_text
from interpreter.understanding.nlu import NLUResult
from interpreter.routing import COMPLETE, FALLBACK, MOVE, OPEN, STAY, Decision
from interpreter.state import DialogueState, HistoryEntry, append_history

from support.irkit import ProgramBuilder, eq
from support.llm_server import REFERENCE_SCENARIOS, Reply, reference_runtime

SENIMATE = reference_runtime("senimate")
TEMPLATE = TemplateNLG()


def http_nlg(server, **options) -> LLMNLG:
    settings = {"timeout": 1.0, "turn_budget": 3.0, "backoff": 0.01, **options}
    return LLMNLG(ChatClient(LLMSettings(server.url, "m", **settings), LLMJournal()))


def outcomes(nlg: LLMNLG) -> list[str]:
    return [e.source for e in nlg.client.journal.drain() if isinstance(e, LLMOutcome)]


# --- every (node, decision kind) of the reference scenarios -------------------------------------


def state_at(runtime, node: str, **fields) -> DialogueState:
    return DialogueState("s", runtime.ir_hash, node, node_turns=1, session_turns=3, **fields)


def facts(runtime, text: str) -> list:
    row = [None] * runtime.field_count
    row[ir.FIELD_INDEX["nlu.text"]] = text
    return row


def edges(runtime, table) -> set[int]:
    """Where routing can move from `table`: its transition targets and other nodes' globals."""
    targets = {t.target for t in table.node.transitions if t.target != ir.STAY}
    return targets | {g.target for g in runtime.globals if g.target != table.index}


def decisions(runtime):
    """Every decision kind at every node with every act: openings, stays (plain and gated),
    re-prompts, completions, and moves along every edge (resumes included)."""
    act_of = {name: i for i, name in enumerate(ir.ACTS)}
    for table, (act, a) in product(runtime.nodes, act_of.items()):
        text = "" if act == "silence" else "음 그러니까요"
        here = state_at(runtime, table.id)
        resuming = table.is_end and a not in runtime.closing_acts
        common = {"act": a, "facts": facts(runtime, text), "resuming": resuming}
        missing = missing_slots(table, here.slots)
        yield Decision(table.index, table.index, OPEN, "opening", "opening", here,
                       missing_slots=missing)
        yield Decision(table.index, table.index, STAY, "no_route", "no_route", here,
                       missing_slots=missing, **common)
        if missing:
            yield Decision(table.index, table.index, STAY, "gate:required_slots", "gate", here,
                           missing_slots=missing, **common)
        for kind in ("no_input", "not_understood"):
            retried = state_at(runtime, table.id, fallback_retries=1)
            yield Decision(table.index, table.index, FALLBACK, "fallback:" + kind, "fallback",
                           retried, fallback=kind, missing_slots=missing, **common)
        yield Decision(table.index, None, COMPLETE, "terminal", "terminal",
                       state_at(runtime, table.id, complete=True, complete_reason="terminal"),
                       complete=True, **common)
        for target in edges(runtime, table):
            moved = state_at(runtime, runtime.nodes[target].id, previous_node=table.id)
            yield Decision(table.index, target, MOVE, "next_nodes[0]", "next_nodes", moved,
                           **common)
        if text:  # SPEC 10: every safety rule from every node, a hold at its own target
            for rule in runtime.safety_routes.values():
                row = facts(runtime, "살려 주세요")
                row[ir.FIELD_INDEX["nlu.safety"]] = rule.category
                hold = rule.target == table.index
                after = here if hold else state_at(runtime, runtime.nodes[rule.target].id,
                                                   previous_node=table.id)
                yield Decision(table.index, rule.target, STAY if hold else MOVE, rule.reason,
                               "safety", after, **{**common, "facts": row})


def all_prompts():
    for name in REFERENCE_SCENARIOS:
        runtime = reference_runtime(name)
        for decision in decisions(runtime):
            state = decision.state
            reference = TEMPLATE.render(decision, RenderContext(runtime, state))
            yield name, runtime, decision, reference, nlg_messages(
                runtime, decision, state, reference, [])


PROMPTS = list(all_prompts())
FAREWELL_SITUATIONS = (SITUATIONS["closing"], SITUATIONS["complete"])
GO_ON_SITUATIONS = tuple(text for key, text in SITUATIONS.items()
                         if key not in ("closing", "complete"))


def closing_texts(runtime) -> list[str]:
    """What closing nodes say and are told: their descriptions and farewell sentences."""
    texts = []
    for table in runtime.nodes:
        if table.is_end:
            texts.append(table.node.description)
            texts += [text for k in ("default", "complete") for text in table.responses.get(k, ())]
    return texts


def test_the_enumeration_covers_every_kind_and_situation():
    seen_kinds = {d.kind for _, _, d, _, _ in PROMPTS}
    seen = {situation(rt, d) for _, rt, d, _, _ in PROMPTS}
    assert seen_kinds == {OPEN, STAY, FALLBACK, COMPLETE, MOVE}
    assert seen == set(SITUATIONS)
    assert len(PROMPTS) > 1000


def test_no_prompt_says_both_goodbye_and_go_on():
    for name, _runtime, decision, _, messages in PROMPTS:
        system = messages[0]["content"]
        farewell = any(t in system for t in FAREWELL_SITUATIONS)
        go_on = any(t in system for t in GO_ON_SITUATIONS)
        assert farewell != go_on, (name, decision.kind, decision.reason, system)
        assert sum(t in system for t in SITUATIONS.values()) == 1, (name, system)


def test_a_resume_turn_carries_no_closing_description_or_farewell():
    resumes = 0
    for name, runtime, decision, _reference, messages in PROMPTS:
        if not decision.resuming or decision.complete or decision.tier == "safety":
            continue  # a safety turn speaks its node's help, at an end node too (below)
        system = messages[0]["content"]
        if decision.kind == MOVE and runtime.nodes[decision.next_node].is_end:
            continue  # routing closed elsewhere (clinic: cancel after booking): a closing turn
        resumes += 1
        for text in closing_texts(runtime):
            assert text not in system, (name, decision.kind, text)
        assert not any(t in system for t in FAREWELL_SITUATIONS)
    assert resumes > 50


def test_a_completion_asks_nothing():
    completions = 0
    for name, runtime, decision, reference, messages in PROMPTS:
        if decision.kind != COMPLETE:
            continue
        completions += 1
        system = messages[0]["content"]
        parts = nlg_parts(runtime, decision, decision.state, reference)
        assert not [p for p in parts if p.kind in ("ask", "confirm", "purpose")], (name, parts)
        for slot in runtime.program.slots:
            assert not slot.question or slot.question not in system, (name, slot.name)
        assert SITUATIONS["complete"] in system and "?" not in reference, (name, reference)
    assert completions == sum(len(reference_runtime(n).nodes) * len(ir.ACTS)
                              for n in REFERENCE_SCENARIOS)


def test_a_safety_turn_gives_the_help_of_its_node_and_nothing_else():
    """SPEC 10: the safety situation and category, the safety node's purpose (at an end node
    too: clinic_booking's urgent_care), its help as the reference; no farewell, no question
    about slots, no resume guidance."""
    seen = 0
    for name, runtime, decision, reference, messages in PROMPTS:
        if decision.tier != "safety":
            continue
        seen += 1
        system = messages[0]["content"]
        table = runtime.nodes[decision.next_node]
        parts = nlg_parts(runtime, decision, decision.state, reference)
        kinds = [p.kind for p in parts]
        assert situation(runtime, decision) == "safety" and SITUATIONS["safety"] in system
        assert "safety" in kinds and "ask" not in kinds and "confirm" not in kinds, (name, kinds)
        assert f"Purpose: {table.node.description}" in system, (name, table.id)
        assert reference in table.responses["default"], (name, reference)
        assert not any(t in system for t in FAREWELL_SITUATIONS), name
    assert seen == sum(len(reference_runtime(n).nodes) * len(reference_runtime(n).safety_routes)
                       * (len(ir.ACTS) - 1) for n in REFERENCE_SCENARIOS)


def test_a_closing_turn_has_no_resume_guidance_and_asks_nothing():
    for name, runtime, decision, reference, messages in PROMPTS:
        if situation(runtime, decision) != "closing":
            continue
        system = messages[0]["content"]
        assert SITUATIONS["resume"] not in system and SITUATIONS["continue"] not in system
        parts = nlg_parts(runtime, decision, decision.state, reference)
        assert not [p for p in parts if p.kind == "ask"], (name, decision.reason)


def test_the_template_fallback_reads_well_on_its_own():
    for name, _runtime, decision, reference, _ in PROMPTS:
        assert reference.strip(), (name, decision.kind, decision.reason)
        assert "{" not in reference and "}" not in reference, (name, reference)
        assert reference[-1] in ".?!요다", (name, reference)
        assert ".을(를)" not in reference and ".를" not in reference, (name, reference)


# --- what a prompt carries ----------------------------------------------------------------------


def senimate_decision(kind_text: str) -> tuple[Decision, DialogueState]:
    """A real decision from the engine: the resume from the closure on a 'no'."""
    captured = {}

    class Capture:
        def render(self, decision, context):
            captured["decision"], captured["state"] = decision, context.state
            return TEMPLATE.render(decision, context)

    engine = Engine(SENIMATE, nlg=Capture())
    engine.start("s")
    engine.turn("s", "네", NLUResult(dialogue_act="affirm"))
    engine.turn("s", "그만할래요", NLUResult(intent="user_wants_to_end"))
    engine.turn("s", kind_text, NLUResult(dialogue_act="deny"))
    return captured["decision"], captured["state"]


def test_a_resume_prompt_speaks_for_the_target_with_its_reference_and_the_history():
    decision, state = senimate_decision("아니 더 얘기해요")
    closure, daily = SENIMATE.node_named("conversation_closure"), SENIMATE.node_named(
        "daily_life_check")
    assert (decision.kind, decision.resuming, decision.next_node) == (MOVE, True, daily.index)
    reference = TEMPLATE.render(decision, RenderContext(SENIMATE, state))
    messages = nlg_messages(SENIMATE, decision, state, reference, state.entries())
    system = messages[0]["content"]
    assert system.startswith(SENIMATE.program.prompt_bot.strip())
    assert "You speak for node daily_life_check (일상 안부)." in system
    assert daily.node.description in system and closure.node.description not in system
    assert reference in daily.responses["default"]
    assert f"reword it naturally, keep its meaning): {reference}" in system
    assert ("Decision: move: conversation_closure -> daily_life_check (next_nodes[0])."
            in system)
    assert SITUATIONS["resume"] in system and "do not argue or insist" in system
    assert "Reply in Korean" in system
    assert [m["role"] for m in messages[1:]] == ["assistant", "user", "assistant", "user",
                                                 "assistant", "user"]
    assert messages[-1] == {"role": "user", "content": "아니 더 얘기해요"}


def test_missing_slots_and_skill_results_are_in_the_prompt():
    b = ProgramBuilder()
    b.slot("name", "string", required=True, question="성함이 어떻게 되세요?")
    b.node("hello", skill="weather", responses={"default": "안녕하세요."}).default("ask")
    b.node("ask", collect=["name"]).default("end")
    b.node("end")
    runtime = b.runtime()
    here = state_at(runtime, "ask")
    gate = Decision(1, 1, STAY, "gate:required_slots", "gate", here, missing_slots=(0,),
                    facts=facts(runtime, "글쎄요"))
    system = nlg_messages(runtime, gate, here, "성함이 어떻게 되세요?", [])[0]["content"]
    assert "Still needed: name (ask: 성함이 어떻게 되세요?)" in system
    assert SITUATIONS["ask"] in system
    sunny = state_at(runtime, "hello", skill_status="ok", skill_data={"summary": "맑음"})
    opening = Decision(0, 0, OPEN, "opening", "opening", sunny)
    system = nlg_messages(runtime, opening, sunny, "안녕하세요.", [])[0]["content"]
    assert 'Result of weather: {"summary": "맑음"}' in system


def test_every_variant_is_a_reference_and_the_rotation_is_the_templates(llm):
    """SPEC 9: the LLM NLG is given all the variants of the response the template chose
    from, and hands back the template's rotation, so the safe sentence rotates too."""
    b = ProgramBuilder()
    b.node("chat", responses={"default": ["첫 번째 말이에요.", "두 번째 말이에요."]}) \
        .to("other", eq("nlu.dialogue_act", "goodbye")).stay()
    b.node("other")
    runtime = b.runtime()
    llm.nlg("모델의 말이에요.", "모델의 또 다른 말이에요.")
    engine = Engine(runtime, nlg=http_nlg(llm))
    assert engine.start("s").response == "첫 번째 말이에요."  # a declared opening: as is
    assert engine.turn("s", "음", NLUResult(dialogue_act="inform")).response == "모델의 말이에요."
    assert engine.session("s").rotation == {"chat:default": 1}
    system = llm.requests[0]["messages"][0]["content"]
    assert "keep its meaning): 두 번째 말이에요." in system
    assert "several ways" in system and "- 첫 번째 말이에요.\n- 두 번째 말이에요." in system
    one = nlg_parts(runtime, opening_of(runtime), state_at(runtime, "chat"), "말", ["말"])
    assert "variants" not in [part.kind for part in one]  # one wording: nothing to list


def opening_of(runtime) -> Decision:
    return Decision(0, 0, OPEN, "opening", "opening", state_at(runtime, "chat"))


def test_a_reprompt_says_which_attempt_it_is():
    here = state_at(SENIMATE, "meal_check", fallback_retries=2)
    decision = Decision(2, 2, FALLBACK, "fallback:no_input", "fallback", here,
                        act=ir.ACTS.index("silence"), fallback="no_input",
                        facts=facts(SENIMATE, ""))
    messages = nlg_messages(SENIMATE, decision, here, "천천히 말씀하세요.", [])
    assert "Re-prompt 2 of 2 at this node." in messages[0]["content"]
    assert SITUATIONS["reprompt:no_input"] in messages[0]["content"]
    assert messages[-1]["content"] == "(the user said nothing)"


def test_the_history_is_bounded():
    raw: list[bytes] = []
    for i in range(20):
        raw = append_history(raw, HistoryEntry(f"말 {i} " + "가" * 2000, f"답 {i}", "a", "x"),
                             limit=20)
    state = state_at(SENIMATE, "meal_check", history=raw)
    decision = Decision(2, 2, STAY, "no_route", "no_route", state, facts=facts(SENIMATE, "네"))
    messages = nlg_messages(SENIMATE, decision, state, "네.", state.entries())
    assert len(messages) == 1 + 2 * 6 + 1
    assert messages[1]["content"].startswith("말 14 ") and len(messages[1]["content"]) < 700


# --- against the server -------------------------------------------------------------------------


def moved_to_meal() -> tuple[Decision, RenderContext]:
    here = state_at(SENIMATE, "meal_check", previous_node="daily_life_check")
    decision = Decision(1, 2, MOVE, "default_next", "default_next", here,
                        act=ir.ACTS.index("inform"), facts=facts(SENIMATE, "산책했어요"))
    return decision, RenderContext(SENIMATE, here)


def test_the_model_words_the_reply(llm):
    llm.nlg("  \"산책 좋으셨겠어요. 오늘 식사는 하셨어요?\"  ")
    nlg = http_nlg(llm)
    decision, ctx = moved_to_meal()
    assert nlg.render(decision, ctx) == "산책 좋으셨겠어요. 오늘 식사는 하셨어요?"
    assert outcomes(nlg) == ["llm"]
    (request,) = llm.requests
    assert "response_format" not in request
    assert SENIMATE.node_named("meal_check").node.description in request["messages"][0]["content"]


@pytest.mark.parametrize("replies,reason", [
    ([Reply(status=500)] * 3, "server error 500 after 3 attempts"),
    ([Reply("늦은 답", delay=0.6)], "timeout after 0.2 s"),
    ([Reply("")], "empty answer"),
    ([Reply("  \n ")], "empty answer"),
    ([Reply("<think>생각 중</think>")], "empty answer"),
    ([Reply("가" * (MAX_REPLY_CHARS + 1))], f"answer too long ({MAX_REPLY_CHARS + 1} characters)"),
    ([Reply(body=b"{not json")], "malformed response: not a chat completion"),
    ([Reply(drop=True)] * 3, "connection closed by the server (after 3 attempts)"),
    ([Reply(status=429, headers={"Retry-After": "60"})], "the server asks to wait 60 s"),
])
def test_a_failed_generation_says_the_template_sentence(llm, replies, reason):
    llm.nlg(*replies)
    nlg = http_nlg(llm, timeout=0.2)
    decision, ctx = moved_to_meal()
    started = time.monotonic()
    assert nlg.render(decision, ctx) == TEMPLATE.render(decision, ctx) == \
        SENIMATE.node_named("meal_check").responses["default"][0]
    assert time.monotonic() - started < 0.6
    (source,) = outcomes(nlg)
    assert source.startswith("template (llm fallback: ") and reason in source


def test_an_opening_with_a_declared_sentence_calls_no_one(llm):
    nlg = http_nlg(llm)
    engine = Engine(SENIMATE, nlg=nlg)
    assert engine.start("s").response == SENIMATE.nodes[SENIMATE.entry].responses["default"][0]
    assert llm.requests == []


def test_an_opening_without_a_sentence_is_worded_by_the_model(llm):
    b = ProgramBuilder()
    b.node("hello", description="인사하고 안부를 여쭙니다.").default("end")
    b.node("end")
    llm.nlg("안녕하세요! 오늘 기분은 어떠세요?")
    engine = Engine(b.runtime(), nlg=http_nlg(llm))
    assert engine.start("s").response == "안녕하세요! 오늘 기분은 어떠세요?"
    system = llm.requests[0]["messages"][0]["content"]
    assert "인사하고 안부를 여쭙니다." in system and SITUATIONS["opening"] in system
    assert llm.requests[0]["messages"][-1]["content"] == "(the conversation starts: speak first)"


@pytest.mark.parametrize("answer,said", [
    ("네, 좋아요.", "네, 좋아요."), ("“네, 좋아요.”", "네, 좋아요."), ("'네'", "네"),
    ("<think>\n무엇을 말할까\n</think>\n\n네, 좋아요.", "네, 좋아요."),
    ('"따옴표" 안의 말이에요.', '"따옴표" 안의 말이에요.'),
])
def test_reply_text(answer, said):
    assert reply_text(answer) == said


def test_reply_text_refuses_nothing():
    with pytest.raises(EmptyAnswer):
        reply_text('""')
