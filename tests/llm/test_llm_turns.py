"""Whole turns with the LLM NLU and NLG against the loopback server: whatever the server does,
every turn ends as a valid turn, the trace says which NLU read it, and a turn never takes
longer than its budget."""

from __future__ import annotations

import re
import time

import pytest

from interpreter.cli.console import render_turn
from interpreter.engine import Engine
from interpreter.llm.client import ChatClient, LLMJournal, LLMSettings
from interpreter.wording.nlg import RenderContext, TemplateNLG
from interpreter.llm.nlg import LLMNLG
from interpreter.llm.nlu import LLMNLU
from interpreter.understanding.rules import RulesNLU

from support.llm_server import Reply, nlu_answer, reference_runtime

SENIMATE = reference_runtime("senimate")
RULES = RulesNLU(SENIMATE.program)
REASON = re.compile(r"^(action_end|global:\w+|(stay:)?next_nodes\[\d+\]|default_next|terminal|"
                    r"no_route|gate:\w+|fallback:(no_input|not_understood))$")


# Every way a server can let a turn down, as (NLU replies, NLG replies, expected NLU source).
FAILURES = {
    "slow": ([Reply(nlu_answer(), delay=0.5)], [Reply("늦었어요", delay=0.5)],
             "rules (llm fallback: timeout after 0.2 s)"),
    "500": ([Reply(status=500)] * 2, [Reply(status=500)] * 2,
            "rules (llm fallback: server error 500 after 2 attempts)"),
    "429": ([Reply(status=429, headers={"Retry-After": "9"})], [Reply(status=429)] * 2,
            "rules (llm fallback: rate limited 429 after 1 attempt; the server asks to wait 9 s, "
            "beyond the turn budget)"),
    "closed": ([Reply(drop=True)] * 2, [Reply(drop=True)] * 2,
               "rules (llm fallback: connection closed by the server (after 2 attempts))"),
    "not json": ([Reply(body=b"Internal oops")], [Reply(body=b"\x00\xff")],
                 "rules (llm fallback: malformed response: not a chat completion"),
    "prose": (["네, 사용자는 동의했습니다."] * 2, [""],
              "rules (llm fallback: invalid answer after one repair: JSON is malformed"),
    "undeclared intent": ([nlu_answer("wants_to_chat")] * 2, ["   "],
                          "rules (llm fallback: invalid answer after one repair: Invalid enum "
                          "value 'wants_to_chat' - at `$.intent`)"),
    "wrong slot type": ([nlu_answer(meal_status=True)] * 2, ['""'],
                        "rules (llm fallback: invalid answer after one repair: Expected "
                        "`str | null`, got `bool` - at `$.slots.meal_status`)"),
}


def engine_for(server, **options) -> tuple[Engine, LLMJournal]:
    settings = {"timeout": 0.2, "turn_budget": 1.0, "retries": 1, "backoff": 0.01, **options}
    journal = LLMJournal()
    client = ChatClient(LLMSettings(server.url, "m", **settings), journal)
    return Engine(SENIMATE, LLMNLU(client, SENIMATE.program, RULES), LLMNLG(client)), journal


@pytest.mark.parametrize("failure", list(FAILURES))
def test_every_failure_ends_in_a_valid_turn(llm, failure):
    nlu_replies, nlg_replies, source = FAILURES[failure]
    engine, journal = engine_for(llm)
    engine.start("s")
    llm.nlu(*nlu_replies)
    llm.nlg(*nlg_replies)
    started = time.monotonic()
    result = engine.turn("s", "네, 좋아요")
    assert time.monotonic() - started < 1.0  # the turn budget
    assert result.nlu_source.startswith(source), result.nlu_source
    expected = RULES.parse("네, 좋아요", None)
    assert result.nlu["dialogue_act"] == expected.dialogue_act  # the rules read the turn
    assert REASON.match(result.reason) and result.next_node == "daily_life_check"
    # worded from the state the turn was worded from: before this reply and its rotation
    template = TemplateNLG().render(result.decision, RenderContext(SENIMATE,
                                                                   result.decision.state))
    assert result.response == template  # the safe sentence took over
    nlg_sources = [e.source for e in journal.drain() if not hasattr(e, "request")]
    assert len(nlg_sources) == 1 and nlg_sources[0].startswith("template (llm fallback: ")


def test_a_conversation_survives_a_different_failure_every_turn(llm):
    engine, _ = engine_for(llm)
    engine.start("s")
    walk = ["네, 좋아요", "아침에 공원에서 산책했어요", "오후에는 친구를 만났어요",
            "점심은 국수로 맛있게 먹었어요", "요즘 무릎이 좀 쑤셔요", "계단 오를 때 시큰거려요",
            "다음 주에 손주가 놀러 온대요", "이제 그만할래요", "고마워요"]
    results = []
    for text, (nlu_replies, nlg_replies, _) in zip(walk, [*FAILURES.values()] * 2):
        llm.reset()
        llm.nlu(*nlu_replies)
        llm.nlg(*nlg_replies)
        results.append(engine.turn("s", text))
        assert results[-1].response and REASON.match(results[-1].reason)
    assert results[-1].complete and results[-1].reason == "terminal"


def test_llm_readings_drive_routing_and_the_trace_says_so(llm):
    engine, _ = engine_for(llm)
    engine.start("s")
    llm.nlu(nlu_answer(act="affirm"))
    llm.nlg("반가워요. 요즘 어떻게 지내세요?")
    result = engine.turn("s", "응")
    assert (result.nlu_source, result.reason, result.response) == (
        "llm", "default_next", "반가워요. 요즘 어떻게 지내세요?")
    llm.nlu(nlu_answer("user_wants_to_end", "inform"))
    result = engine.turn("s", "됐어 그만")
    assert result.reason == "global:user_wants_to_end"
    assert result.next_node == "conversation_closure"
    lines = render_turn(result, SENIMATE, "detailed")
    assert "  nlu: llm" in lines and lines.index("  nlu: llm") < lines.index(
        "  nlu: intent=user_wants_to_end act=inform")
    silent = engine.turn("s", "")
    assert silent.nlu_source is None  # silence asks no NLU
    assert silent.complete


def test_a_slow_nlu_leaves_the_nlg_only_what_is_left_of_the_turn(llm):
    engine, journal = engine_for(llm, timeout=0.5, turn_budget=0.6, retries=0)
    engine.start("s")
    llm.nlu(Reply(nlu_answer(), delay=0.55))
    llm.nlg(Reply("늦은 말", delay=0.5))
    started = time.monotonic()
    result = engine.turn("s", "네")
    assert time.monotonic() - started < 0.95  # not 0.5 + 0.5: the NLG had what was left
    assert result.nlu_source == "rules (llm fallback: timeout after 0.5 s)"
    (source,) = [e.source for e in journal.drain() if not hasattr(e, "request")]
    assert re.match(r"template \(llm fallback: (timeout after 0\.\d s|turn budget of 0\.6 s "
                    r"spent)\)", source), source
