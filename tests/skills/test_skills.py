"""Skills: the weather built-in, the registry and plug-ins, timeouts, and skill nodes in a session."""

from __future__ import annotations

import threading
from importlib import metadata

import pytest

from interpreter.engine import Engine
from interpreter.skills import (OfflineWeatherProvider, Skill, SkillContext, SkillRegistry,
                                SkillResult, WeatherSkill, run_skill)

from support.irkit import ProgramBuilder, eq, nlu

CONTEXT = SkillContext("s", "greeting", "ko", {})


class BlockingProvider:
    """A provider that answers only when the test releases it (a timeout without sleeping)."""

    def __init__(self):
        self.release = threading.Event()

    def current(self, location):
        self.release.wait(5)
        return {"location": location, "summary": "늦은 답", "temperature": 0}


class EchoSkill(Skill):
    name = "echo"

    def run(self, args, context):
        return SkillResult("ok", {"echo": args.get("text", ""), "node": context.node_id})


class BrokenSkill(Skill):
    name = "broken"

    def run(self, args, context):
        raise RuntimeError("backend down")


def test_offline_weather_is_deterministic():
    skill = WeatherSkill()
    first = run_skill(skill, {"location": "서울"}, CONTEXT, 1000)
    assert first == SkillResult("ok", {"location": "서울", "summary": "맑고 포근해요",
                                       "temperature": 21})
    assert run_skill(skill, {"location": "서울"}, CONTEXT, 1000) == first


def test_weather_defaults_to_seoul_and_fails_on_unknown_location():
    assert run_skill(WeatherSkill(), {}, CONTEXT, 1000).data["location"] == "서울"
    failed = run_skill(WeatherSkill(), {"location": "아틀란티스"}, CONTEXT, 1000)
    assert failed.status == "failed" and failed.data["error"] == "unknown location"


def test_weather_provider_is_pluggable():
    class Fixed:
        def current(self, location):
            return {"location": location, "summary": "눈", "temperature": -3}
    result = run_skill(WeatherSkill(Fixed()), {"location": "평창"}, CONTEXT, 1000)
    assert result.data["summary"] == "눈"
    assert OfflineWeatherProvider().current("SEOUL")["temperature"] == 21


def test_timeout_is_reported_without_waiting_for_the_skill():
    provider = BlockingProvider()
    try:
        result = run_skill(WeatherSkill(provider), {"location": "서울"}, CONTEXT, 20)
        assert result.status == "timeout"
    finally:
        provider.release.set()


@pytest.mark.parametrize("skill,error", [
    (BrokenSkill(), "RuntimeError: backend down"),
    (None, "unknown skill"),
])
def test_failures_never_raise(skill, error):
    result = run_skill(skill, {}, CONTEXT, 1000)
    assert result.status == "failed" and result.data["error"] == error


@pytest.mark.parametrize("returned", [
    {"status": "ok"}, SkillResult("none", {}), SkillResult("ok", {"f": object()}),
])
def test_malformed_results_are_failures(returned):
    class Odd(Skill):
        name = "odd"

        def run(self, args, context):
            return returned
    assert run_skill(Odd(), {}, CONTEXT, 1000).status == "failed"


def test_registry_builtins_register_and_replace():
    registry = SkillRegistry.default(discover=False)
    assert registry.names() == ["email", "weather"]
    registry.register(EchoSkill())
    assert registry.get("echo").name == "echo" and registry.get("nope") is None
    with pytest.raises(ValueError):
        registry.register(object())


def test_entry_point_discovery(monkeypatch):
    points = [metadata.EntryPoint("echo", "test_skills:EchoSkill", "mago.skills"),
              metadata.EntryPoint("ghost", "no_such_module_xyz:Skill", "mago.skills")]
    monkeypatch.setattr(metadata, "entry_points",
                        lambda group: points if group == "mago.skills" else [])
    registry = SkillRegistry.default()
    assert "echo" in registry.names() and "weather" in registry.names()
    assert len(registry.problems) == 1 and "ghost" in registry.problems[0]


# --- skill nodes in a session ------------------------------------------------------------------


def weather_program(location="서울", bot_first=True):
    b = ProgramBuilder(bot_first=bot_first)
    b.node("greeting", skill="weather", skill_args={"location": location}, timeout_ms=500,
           fallback="날씨 정보를 지금은 가져오지 못했어요.",
           responses={"default": "오늘 {skill.data.location} 날씨는 {skill.data.summary}. "
                                 "저는 마고예요."}) \
        .to("ok_path", eq("skill.status", "ok")).default("failed_path")
    b.node("ok_path")
    b.node("failed_path")
    return b.runtime()


def test_skill_runs_at_the_opening_and_shapes_the_response():
    engine = Engine(weather_program())
    opening = engine.start("s")
    assert opening.response == "오늘 서울 날씨는 맑고 포근해요. 저는 마고예요."
    state = engine.session("s")
    assert state.skill_status == "ok" and state.skill_data["temperature"] == 21


def test_failed_skill_speaks_the_fallback_and_drops_unfillable_sentences():
    engine = Engine(weather_program(location="아틀란티스"))
    opening = engine.start("s")
    assert opening.response == "날씨 정보를 지금은 가져오지 못했어요. 저는 마고예요."
    assert "{" not in opening.response
    assert engine.session("s").skill_status == "failed"


def test_timeout_skill_status_in_a_session():
    provider = BlockingProvider()
    registry = SkillRegistry([WeatherSkill(provider)])
    try:
        engine = Engine(weather_program(), skills=registry)
        opening = engine.start("s")
        assert engine.session("s").skill_status == "timeout"
        assert opening.response.startswith("날씨 정보를 지금은 가져오지 못했어요.")
    finally:
        provider.release.set()


def test_skill_status_holds_for_the_visit_and_routes():
    engine = Engine(weather_program())
    engine.start("s")
    result = engine.turn("s", "네", nlu("affirm"))
    assert (result.reason, result.next_node) == ("next_nodes[0]", "ok_path")
    engine = Engine(weather_program(location="아틀란티스"))
    engine.start("s")
    assert engine.turn("s", "네", nlu("affirm")).next_node == "failed_path"


def test_skill_runs_once_per_visit_and_again_on_a_new_visit():
    calls = []

    class Counting(Skill):
        name = "count"

        def run(self, args, context):
            calls.append(context.node_id)
            return SkillResult("ok", {"n": len(calls)})
    b = ProgramBuilder()
    b.node("start").to("tool", eq("nlu.dialogue_act", "inform")).stay()
    b.node("tool", skill="count", responses={"default": "{skill.data.n}번째"}) \
        .stay(eq("nlu.dialogue_act", "question")).default("start")
    engine = Engine(b.runtime(), skills=SkillRegistry([Counting()]))
    engine.start("s")
    assert engine.turn("s", "가자", nlu("inform")).response == "1번째"
    engine.turn("s", "뭐야?", nlu("question"))  # stays: no second run
    assert calls == ["tool"]
    engine.turn("s", "응", nlu("affirm"))  # back to start
    assert engine.turn("s", "다시", nlu("inform")).response == "2번째"
    assert calls == ["tool", "tool"]


def test_bot_first_off_runs_the_entry_skill_on_its_first_words():
    engine = Engine(weather_program(bot_first=False))
    opening = engine.start("s")
    assert opening.response is None and engine.session("s").skill_status == "none"
    b = ProgramBuilder(bot_first=False)
    b.node("greeting", skill="weather", responses={"default": "{skill.data.summary}"}) \
        .stay(eq("nlu.dialogue_act", "greet")).default("next")
    b.node("next")
    engine = Engine(b.runtime())
    engine.start("s")
    assert engine.turn("s", "안녕", nlu("greet")).response == "맑고 포근해요"
