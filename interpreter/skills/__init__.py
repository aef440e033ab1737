"""Skills: named side-effecting helpers a skill node runs when it first speaks.

`registry` is the boundary: `Skill`, `SkillResult`, `SkillContext`, `SkillRegistry` (built-in
skills, plus installed plug-ins from the `mago.skills` entry-point group) and `run_skill`,
which never raises and never blocks past its timeout. `weather` is the built-in weather skill
with its offline provider; `email` the built-in e-mail skill (SMTP or an outbox folder, SPEC
8.4). Plug-in authors import from `interpreter.skills`, as before.

May import: the core and this room. The core imports only `registry`.
"""

from typing import Any

from .registry import (DEFAULT_TIMEOUT_MS, ENTRY_POINT_GROUP, STATUSES, Skill, SkillContext,
                       SkillRegistry, SkillResult, run_skill)

# The built-in skills load when first named: the core imports `registry`, which imports this
# package first, and a run whose scenario has no skill node never needs them.
_BUILT_IN = {"EmailSkill": "email", "OfflineWeatherProvider": "weather",
             "WeatherProvider": "weather", "WeatherSkill": "weather"}


def __getattr__(name: str) -> Any:
    if name not in _BUILT_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_BUILT_IN[name]}", __name__), name)

ROOM = "plug-in"
BOUNDARY = ("registry",)

__all__ = ["DEFAULT_TIMEOUT_MS", "ENTRY_POINT_GROUP", "STATUSES", "EmailSkill",
           "OfflineWeatherProvider", "Skill", "SkillContext", "SkillRegistry", "SkillResult",
           "WeatherProvider", "WeatherSkill", "run_skill"]
