"""The built-in `weather` skill, behind the `WeatherProvider` interface that a real HTTP
provider would implement; the default provider is an offline, deterministic table."""

from __future__ import annotations

from typing import Any, Protocol

from .registry import Skill, SkillContext, SkillResult


class WeatherProvider(Protocol):
    """Where the weather comes from: a report dict for a location, or None if unknown."""

    def current(self, location: str) -> dict[str, Any] | None: ...


class OfflineWeatherProvider:
    """A fixed table, the same answer every day: deterministic and network-free."""

    TABLE: dict[str, tuple[str, int]] = {
        "서울": ("맑고 포근해요", 21),
        "부산": ("구름이 조금 있고 선선해요", 19),
        "대구": ("햇볕이 강하고 더워요", 27),
        "광주": ("흐리고 가끔 비가 와요", 18),
        "제주": ("바람이 불고 흐려요", 17),
        "seoul": ("clear and mild", 21),
        "busan": ("partly cloudy and cool", 19),
        "london": ("grey with light rain", 12),
    }

    def current(self, location: str) -> dict[str, Any] | None:
        row = self.TABLE.get(location) or self.TABLE.get(location.strip().lower())
        if row is None:
            return None
        return {"location": location, "summary": row[0], "temperature": row[1]}


class WeatherSkill(Skill):
    """`weather`: args `{"location": ...}` (default 서울); unknown location -> failed."""

    name = "weather"
    default_location = "서울"

    def __init__(self, provider: WeatherProvider | None = None):
        self.provider = provider or OfflineWeatherProvider()

    def run(self, args: dict[str, Any], context: SkillContext) -> SkillResult:
        location = args.get("location") or self.default_location
        if not isinstance(location, str):
            return SkillResult("failed", {"error": "location must be text"})
        report = self.provider.current(location)
        if report is None:
            return SkillResult("failed", {"location": location, "error": "unknown location"})
        return SkillResult("ok", dict(report))
