"""Skills: named side-effecting helpers a skill node runs when it first speaks.

In: a skill name, the node's `skill_args`, a `SkillContext`. Out: a `SkillResult(status, data)`
with status `ok`, `failed` or `timeout` and JSON-able data.
After: `run_skill` never raises and never blocks longer than the timeout: the skill runs in a
daemon worker thread; an exception, a malformed result or unencodable data is `failed`, a
late answer is `timeout` (and is discarded when it arrives).

Plug-ins: a class with `name` and `run(args, context) -> SkillResult`, registered in code
(`SkillRegistry.register`) or advertised by an installed package under the `mago.skills`
entry-point group (the entry point loads a `Skill` subclass, instance or factory).
Built in (`default()`): `weather` (`skills.weather`), `email` (`skills.email`).
"""

from __future__ import annotations

import threading
from typing import Any
from collections.abc import Iterable

import msgspec

ENTRY_POINT_GROUP = "mago.skills"
DEFAULT_TIMEOUT_MS = 5000  # a node without `timeout_ms` still never hangs a turn
STATUSES = ("ok", "failed", "timeout")


class SkillResult(msgspec.Struct, frozen=True):
    """The outcome of one skill run; `data` feeds `{skill.data.KEY}` placeholders."""

    status: str
    data: dict[str, Any] = {}


class SkillContext(msgspec.Struct, frozen=True):
    """What a skill may know about the conversation (a snapshot, not the live state)."""

    session_id: str
    node_id: str
    language: str
    slots: dict[str, Any] = {}
    action_id: str = ""  # stable per session turn and node: SESSION:TURN:NODE (SPEC 8.4)


class Skill:
    """Base class of a skill: give it a `name` and implement `run`."""

    name: str = ""

    def run(self, args: dict[str, Any], context: SkillContext) -> SkillResult:
        raise NotImplementedError


# --- registry ----------------------------------------------------------------------------

_BUILT_INS = {"weather": ("weather", "WeatherSkill"), "email": ("email", "EmailSkill")}
_MAKING = threading.Lock()


class SkillRegistry:
    """Skills by name. `default()` holds the built-ins plus installed plug-ins."""

    def __init__(self, skills: Iterable[Skill] = ()):
        self._skills: dict[str, Skill] = {}
        # built-ins not made yet: name -> (module beside this one, class); made when first got
        self._unmade: dict[str, tuple[str, str]] = {}
        self.problems: list[str] = []  # plug-ins that could not be loaded, one line each
        for skill in skills:
            self.register(skill)

    @classmethod
    def default(cls, discover: bool = True) -> SkillRegistry:
        """The built-ins (imported when a node first runs one: a run whose scenario has no
        skill node never imports them), plus installed plug-ins when `discover`."""
        registry = cls()
        registry._unmade = dict(_BUILT_INS)
        if discover:
            registry.discover()
        return registry

    def register(self, skill: Skill) -> None:
        """Add or replace a skill under its name."""
        if not getattr(skill, "name", None) or not callable(getattr(skill, "run", None)):
            raise ValueError(f"{skill!r} is not a skill (needs `name` and `run`)")
        self._skills[skill.name] = skill
        self._unmade.pop(skill.name, None)

    def with_skills(self, skills: Iterable[Skill]) -> SkillRegistry:
        """A copy of this registry with `skills` added (a scenario's webhooks)."""
        layered = SkillRegistry(self._skills.values())
        layered._unmade = dict(self._unmade)
        layered.problems = list(self.problems)
        for skill in skills:
            layered.register(skill)
        return layered

    def get(self, name: str) -> Skill | None:
        skill = self._skills.get(name)
        if skill is None and name in self._unmade:
            with _MAKING:  # the service's workers may ask at once: one instance
                if name in self._unmade:
                    import importlib

                    module, cls = self._unmade[name]
                    made = getattr(importlib.import_module(f".{module}", __package__), cls)()
                    self._skills[name] = made
                    del self._unmade[name]
            skill = self._skills.get(name)
        return skill

    def names(self) -> list[str]:
        return sorted({*self._skills, *self._unmade})

    def discover(self, group: str = ENTRY_POINT_GROUP) -> None:
        """Register every skill advertised under the entry-point `group`."""
        from importlib import metadata  # 15-50 ms to import: only when plug-ins are looked for

        for entry in metadata.entry_points(group=group):
            try:
                loaded = entry.load()
                skill = loaded() if isinstance(loaded, type) or not hasattr(loaded, "run") \
                    else loaded
                self.register(skill)
            except Exception as error:  # a broken plug-in must not stop the interpreter
                self.problems.append(f"skill plug-in {entry.name!r} not loaded: {error}")


# --- running -----------------------------------------------------------------------------


def run_skill(skill: Skill | None, args: dict[str, Any], context: SkillContext,
              timeout_ms: int | None = None) -> SkillResult:
    """Run `skill` in a worker thread with a timeout; never raises."""
    if skill is None:
        return SkillResult("failed", {"error": "unknown skill"})
    box: list[SkillResult] = []

    def work() -> None:
        try:
            box.append(_checked(skill.run(dict(args), context)))
        except Exception as error:
            box.append(SkillResult("failed", {"error": f"{type(error).__name__}: {error}"}))

    worker = threading.Thread(target=work, name=f"skill-{skill.name}", daemon=True)
    worker.start()
    if timeout_ms is None:  # a webhook carries its own budget (SPEC 17.9: never timeout_ms)
        timeout_ms = getattr(skill, "timeout_ms", None) or DEFAULT_TIMEOUT_MS
    worker.join(timeout_ms / 1000.0)
    if not box:
        return SkillResult("timeout", {})
    return box[0]


def _checked(result: Any) -> SkillResult:
    """The result if it is well formed (known status, encodable data), else `failed`."""
    if not isinstance(result, SkillResult) or result.status not in STATUSES:
        return SkillResult("failed", {"error": f"skill returned {result!r}"})
    if not isinstance(result.data, dict):
        return SkillResult("failed", {"error": "skill data is not an object"})
    try:
        msgspec.msgpack.encode(result.data)
    except (TypeError, msgspec.EncodeError) as error:
        return SkillResult("failed", {"error": f"skill data cannot be stored: {error}"})
    return result
