"""Slot and profile field definitions (SPEC 2.1, 8.1, 8.2): their checks and IR form.

In: the decoded `slots` and `profile` of a scenario (a definition the schema pass rejected
is not judged again). Out: E106 for a slot's problems of SPEC 2.1 (bounds that do not fit
its type, enum members and synonyms, patterns); E108 for SPEC 8's (any problem of a profile
field, the list parts of a slot, a default that is not a valid value or reads an undeclared
or differently typed profile field); and
`build_slot`, the `ir.Slot` of a definition, shared with the emitter.
A list slot's constraints are its items' (`items`, with `min_items`/`max_items`).
"""

from __future__ import annotations

import re
from collections import Counter

from interpreter import ir, patterns
from interpreter.slots import SlotRule, check_value

from .conditions import print_value
from .diagnostics import Diagnostics, Names, did_you_mean, join
from .schema import Scenario, SlotDef

PROFILE_DEFAULT = re.compile(r"\{profile\.([^{}]*)\}")  # a slot default read from the profile
NUMERIC = ("integer", "number")
TEXTUAL = ("string", "email")
TEMPORAL = ("date", "time")


def check_slots(scenario: Scenario, diags: Diagnostics) -> None:
    """E106 for a slot definition's problems of SPEC 2.1; E108 for what SPEC 8 adds: every
    problem of a profile field, a slot's `default`, the list parts of a slot; E114 for the
    language's (14.1-14.3), the scenario's `metadata.timezone` included."""
    zone = getattr(scenario.metadata, "timezone", "")
    if zone and not _known_zone(zone):
        diags.report("E114", f"unknown timezone {zone!r}", "/metadata/timezone",
                     hint='an IANA name such as "Asia/Seoul" or "America/New_York"')
    for name, slot in scenario.slots.items():
        if slot.value_type is None or slot.values is None:
            continue  # rejected by the schema pass
        base, tasks = slot_problems(slot), list_problems(slot)
        report(diags, "E106", join("/slots", name), slot, base)
        if not base and not tasks:  # a default is judged against a sound definition
            tasks = default_problems(name, slot, scenario.profile)
        report(diags, "E108", join("/slots", name), slot, tasks)
        report(diags, "E114", join("/slots", name), slot, language_problems(slot))
        if not base:
            report(diags, "E114", join("/slots", name), slot, context_problems(name, slot))
    for name, field in scenario.profile.items():
        if field.value_type is not None and field.values is not None:
            report(diags, "E108", join("/profile", name), field, slot_problems(field))


def report(diags: Diagnostics, code: str, where: str, slot, problems: list[tuple]) -> None:
    """One diagnostic per (field, message[, hint]) problem of the definition at `where`."""
    for key, message, *hint in problems:
        diags.report(code, message, where + (f"/{key}" if key else ""),
                     at_key=key.startswith(("synonyms/", "labels/", "not_synonyms/")),
                     hint=hint[0] if hint else
                     f"see the slot table in docs/concepts/language.md for '{slot.value_type}' slots")


def language_problems(slot: SlotDef) -> list[tuple]:
    """SPEC 14.1-14.3 (E114): date or time bounds that are not one (`temporal_problems`),
    `normalize` on a slot whose values are not text, `labels` on a slot that is not an enum
    (or a list of enum items), a label for a non-member or empty."""
    kind = slot.items if slot.value_type == "list" else slot.value_type
    problems: list[tuple] = temporal_problems(slot) if kind in TEMPORAL else []
    if slot.normalize and kind not in TEXTUAL:
        problems.append(("normalize", f"normalize on a {slot.value_type} slot",
                         "normalize applies to string and email slots"))
    if slot.labels and kind != "enum":
        problems.append(("labels", f"labels on a {slot.value_type} slot",
                         "labels name the members of an enum slot"))
        return problems
    members = Names(slot.values if isinstance(slot.values, list) else ())
    for member, label in slot.labels.items():
        if member not in members:
            problems.append((f"labels/{member}", f"label for '{member}', which is not a member",
                             did_you_mean(member, members) or "label a member of values"))
        elif not label.strip():
            problems.append((f"labels/{member}", f"the label of '{member}' is empty",
                             "write the words said for it, or leave it out"))
    return problems


def temporal_problems(slot: SlotDef) -> list[tuple]:
    """A date slot's `min`/`max` are ISO dates, "today", "today+Nd" or "today-Ny" (units d,
    w, m, y); a time slot's HH:MM; min not after max when both are fixed (SPEC 14.1)."""
    from interpreter.understanding.dates import bound_problem, resolve

    problems: list[tuple] = []
    for key in ("min", "max"):
        bound = getattr(slot, key)
        problem = bound_problem(slot.value_type, bound) if bound is not None else None
        if problem is not None:
            problems.append((key, f"{key} of a {slot.value_type} slot: {problem}",
                             'e.g. "1900-01-01", "today", "today-18y"' if slot.value_type ==
                             "date" else 'e.g. "09:00"'))
    if not problems and isinstance(slot.min, str) and isinstance(slot.max, str) and \
            resolve(slot.min) > resolve(slot.max):
        problems.append(("min", f"min ({slot.min}) is after max ({slot.max})",
                         "swap them, or widen the range"))
    return problems


def context_problems(name: str, slot: SlotDef) -> list[tuple]:
    """SPEC 18 (E114): `affirm_value`, `deny_value` and `not_synonyms` on a slot that is not
    an enum, or naming a non-member; an empty exclusion; a `none_value` that is not a valid
    value of the slot."""
    problems: list[tuple] = []
    members = Names(slot.values if isinstance(slot.values, list) else ())
    for key in ("affirm_value", "deny_value"):
        value = getattr(slot, key)
        if value is None:
            continue
        if slot.value_type != "enum":
            problems.append((key, f"{key} on a {slot.value_type} slot",
                             "a bare yes or no stores a member of an enum slot"))
        elif value not in members:
            problems.append((key, f"{key} '{value}' is not a member",
                             did_you_mean(value, members) or "write one of the slot's values"))
    if slot.not_synonyms and slot.value_type != "enum":
        problems.append(("not_synonyms", f"not_synonyms on a {slot.value_type} slot",
                         "not_synonyms keep phrases from naming a member of an enum slot"))
    elif slot.not_synonyms:
        problems += _exclusion_problems(slot, members)
    if slot.none_value is not None:
        ok, _, reason = check_value(SlotRule(0, build_slot(name, slot)), slot.none_value)
        if not ok:
            problems.append(("none_value", f"none_value {print_value(slot.none_value)} is not "
                                           f"a valid value of this slot ({reason})",
                             "write the value stored when the user declines"))
    return problems


def _exclusion_problems(slot: SlotDef, members: Names) -> list[tuple]:
    problems: list[tuple] = []
    for member, phrases in slot.not_synonyms.items():
        where = f"not_synonyms/{member}"
        if member not in members:
            problems.append((where, f"not_synonyms for '{member}', which is not a member",
                             did_you_mean(member, members) or "exclude phrases of a member"))
        elif any(not phrase.strip() for phrase in phrases):
            problems.append((where, f"an empty phrase in the not_synonyms of '{member}'",
                             "write the words that must not be read as it"))
    return problems


def default_problems(name: str, slot: SlotDef, profile: dict) -> list[tuple]:
    """A slot's `default` (SPEC 8.2) is a valid value of the slot, or the one placeholder
    `{profile.NAME}` of a declared profile field of the slot's type (its item type for a
    list)."""
    default = slot.default
    if default is None:
        return []
    reference = PROFILE_DEFAULT.fullmatch(default) if isinstance(default, str) else None
    if reference is not None:
        field = profile.get(reference.group(1))
        if field is None:
            hint = did_you_mean(reference.group(1), Names(profile)) or \
                'declare it under "profile"'
            return [("default", f"default reads undeclared profile field "
                                f"'{reference.group(1)}'", hint)]
        if field.value_type not in (slot.value_type, slot.items):
            return [("default", f"default reads profile field '{reference.group(1)}' "
                                f"({field.value_type}) for a {slot.value_type} slot",
                     "use a profile field of the same type")]
        return []
    ok, _, reason = check_value(SlotRule(0, build_slot(name, slot)), default)
    if not ok:
        return [("default", f"default {print_value(default)} is not a valid value of this "
                            f"slot ({reason})", "write a value the slot accepts, or "
                            '"{profile.NAME}"')]
    return []


def build_slot(name: str, slot, profile: dict | None = None) -> ir.Slot:
    """The IR form of a slot (or of a profile field) definition; a default that reads the
    profile is kept as the field's name (`default_profile`)."""
    default = getattr(slot, "default", None)
    reference = PROFILE_DEFAULT.fullmatch(default) if isinstance(default, str) else None
    items = getattr(slot, "items", None)
    on_conflict = getattr(slot, "on_conflict", None) or (
        "append" if slot.value_type == "list" else "overwrite")
    return ir.Slot(
        name=name, value_type=slot.value_type, required=getattr(slot, "policy", "") == "required",
        values=list(slot.values) if isinstance(slot.values, list) else [],
        synonyms=synonyms_with_labels(slot), description=slot.description,
        question=getattr(slot, "question", None),
        min=None if slot.value_type in TEMPORAL else slot.min,
        max=None if slot.value_type in TEMPORAL else slot.max,
        min_length=slot.min_length, max_length=slot.max_length, pattern=slot.pattern,
        on_conflict=on_conflict, default=None if reference else default,
        default_profile=reference.group(1) if reference else None, items=items,
        min_items=getattr(slot, "min_items", None), max_items=getattr(slot, "max_items", None),
        normalize=list(getattr(slot, "normalize", ())),
        labels=dict(getattr(slot, "labels", {})),
        min_bound=slot.min if slot.value_type in TEMPORAL else None,
        max_bound=slot.max if slot.value_type in TEMPORAL else None,
        none_value=getattr(slot, "none_value", None),
        affirm_value=getattr(slot, "affirm_value", None),
        deny_value=getattr(slot, "deny_value", None),
        not_synonyms={k: list(v) for k, v in getattr(slot, "not_synonyms", {}).items()},
    )


def synonyms_with_labels(slot) -> dict[str, list[str]]:
    """The synonyms of a slot with each member's label among them (SPEC 14.3: the NLU reads a
    label as a synonym, so "Northgate branch" is heard as the member it displays)."""
    synonyms = {k: list(v) for k, v in slot.synonyms.items()}
    for member, label in getattr(slot, "labels", {}).items():
        words = synonyms.setdefault(member, [])
        if label.strip() and label not in words:
            words.append(label)
    return synonyms


def slot_problems(slot: SlotDef) -> list[tuple]:
    """(field, message) or (field, message, hint) for every problem of SPEC 2.1 of one slot
    definition (or profile field): bounds, members, synonyms, patterns. A definition whose type or members the schema pass
    rejected (None) is not judged again. A list slot's constraints are its items'."""
    problems: list[tuple] = []
    kind = slot.value_type
    if kind is None or slot.values is None:
        return problems
    if kind == "list":
        kind = getattr(slot, "items", None) or "string"
    values = slot.values if isinstance(slot.values, list) else None
    if kind == "enum":
        if not values:
            problems.append(("values" if values is not None else "", "enum slot needs a non-empty 'values' list"))
        elif len(set(values)) != len(values):
            dupes = sorted(value for value, count in Counter(values).items() if count > 1)
            problems.append(("values", f"duplicate enum values: {', '.join(dupes)}"))
        members = Names(values or ())
        for member in slot.synonyms:
            if values and member not in members:
                problems.append((f"synonyms/{_escape_key(member)}",
                                 f"synonyms for '{member}', which is not a member"
                                 f"{_hint_suffix(member, members)}"))
    else:
        if values is not None:
            problems.append(("values", f"'values' is only for enum slots, not {kind}"))
        if slot.synonyms:
            problems.append(("synonyms", f"'synonyms' is only for enum slots, not {kind}"))
    problems += bound_problems(slot, kind)
    return problems


def list_problems(slot: SlotDef) -> list[tuple]:
    """What is wrong with the list parts of a definition: `items` exactly on a list slot,
    item bounds only there and in order, `append` only for a list."""
    problems: list[tuple] = []
    is_list = slot.value_type == "list"
    items = getattr(slot, "items", None)
    if is_list and items is None:
        problems.append(("", "list slot needs 'items' (the item type)",
                         "items: string, enum, email, integer or number"))
    elif not is_list and items is not None:
        problems.append(("items", f"'items' is only for list slots, not {slot.value_type}"))
    least, most = getattr(slot, "min_items", None), getattr(slot, "max_items", None)
    for key, bound in (("min_items", least), ("max_items", most)):
        if bound is not None and not is_list:
            problems.append((key, f"'{key}' is only for list slots, not {slot.value_type}"))
        elif bound is not None and bound < (0 if key == "min_items" else 1):
            problems.append((key, f"'{key}' must be at least {0 if key == 'min_items' else 1}"))
    if is_list and least is not None and most is not None and least > most:
        problems.append(("min_items", f"min_items ({least}) is greater than max_items ({most})"))
    if getattr(slot, "on_conflict", None) == "append" and not is_list:
        problems.append(("on_conflict", "'append' is only for list slots",
                         "use overwrite, keep or confirm"))
    return problems


def bound_problems(slot: SlotDef, kind: str | None = None) -> list[tuple]:
    kind, problems = kind or slot.value_type, []
    for key in ("min", "max"):
        bound = getattr(slot, key)
        if bound is not None and kind not in NUMERIC and kind not in TEMPORAL:
            problems.append((key, f"'{key}' is only for integer, number, date and time slots, "
                                  f"not {kind}"))
        elif isinstance(bound, str) and kind in NUMERIC:
            problems.append((key, f"'{key}' of a {kind} slot is a number, not {bound!r}"))
    if isinstance(slot.min, (int, float)) and isinstance(slot.max, (int, float)) \
            and slot.min > slot.max:
        problems.append(("min", f"min ({slot.min}) is greater than max ({slot.max})"))
    return problems + _length_problems(slot, kind)


def _length_problems(slot: SlotDef, kind: str) -> list[tuple]:
    problems: list[tuple] = []
    for key in ("min_length", "max_length", "pattern"):
        if getattr(slot, key) is not None and kind not in TEXTUAL:
            problems.append((key, f"'{key}' is only for string and email slots, not {kind}"))
    for key in ("min_length", "max_length"):
        if (getattr(slot, key) or 0) < 0:
            problems.append((key, f"'{key}' must not be negative"))
    if slot.min_length is not None and slot.max_length is not None and slot.min_length > slot.max_length:
        problems.append(("min_length", f"min_length ({slot.min_length}) is greater than "
                                       f"max_length ({slot.max_length})"))
    found = patterns.problem(slot.pattern, patterns.SLOT) if slot.pattern is not None else None
    if found is not None and found.invalid:
        problems.append(("pattern", f"invalid pattern: {found.message}"))
    elif found is not None:
        problems.append(("pattern", found.message, found.hint))
    return problems


def _known_zone(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _escape_key(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _hint_suffix(name: str, candidates: Names) -> str:
    hint = did_you_mean(name, candidates)
    return f" ({hint})" if hint else ""
