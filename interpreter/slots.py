"""Slot filling (SPEC 6.2 step 2, slot part): validate extracted values and store the valid ones.

In: the slots of the state, its pending confirmation, the values an NLU extracted and the
turn's (already corrected) dialogue act. Out: a `SlotUpdate`: the new slots dict, the pending
confirmation after this turn, what was stored, what was dropped and why, which slots failed
validation (the NLG re-asks them) and what happened to a confirmation.
After: the input dict is never modified (copy-on-write); a value is stored only when it has
the slot's type and meets its constraints; an undeclared slot, an invalid value or null is
dropped and never clears a filled slot. Any declared slot may be filled (users over-answer).

Decisions where the SPEC is silent:
- integer: ints (never bool), integral floats (`7.0` -> 7) and decimal strings (`"7"`,
  `" -3 "`) are accepted, because NLUs and LLMs often hand numbers back as text; `"7.5"` is not.
- number: ints and floats (never bool, nan or inf) and numeric strings (`"36.5"`).
- boolean: `true`/`false` and the strings "true"/"false" (any case).
- enum: a member, or a member spelled in another case (stored as declared).
- string and email: text, stripped; an empty string is "nothing heard" (dropped as null).
- email: one `@`, no spaces, a dot in the domain; `pattern` and length bounds also apply.
- pattern: a full match, tried on at most `patterns.MAX_VALUE_CHARS` characters: a longer
  value is refused (`pattern`), so that the matching time stays bounded (`patterns`).
- list (SPEC 8.2): one item or a list of items, each checked against the item type; one bad
  item drops the whole value (its reason); repeats are ignored. Under `append` (the default
  for lists) new items join the stored ones; more than `max_items` is dropped (`max_items`,
  re-asked). `min_items` decides when the slot counts as known (`executors.missing_slots`), not what may
  be stored, so that items can arrive one by one.
- profile (SPEC 8.1): `check_profile` checks a session's profile with the same rules.
- confirm: a pending confirmation is resolved by the next understood turn: `affirm` stores the
  new value, `deny` keeps the old one, any other understood act drops the offer (the old value
  stays, since the user did not agree); a silent or not-understood turn leaves it pending so
  the re-prompt can ask again. One confirmation is pending at a time; a second `confirm`
  conflict meanwhile is dropped (`confirmation_pending`).
"""

from __future__ import annotations

import math
import re
from typing import Any, Protocol
from collections.abc import Sequence

import msgspec

from . import ir, patterns
from .state import PendingConfirmation, unstorable_at



class SlotTables(Protocol):
    """What slot checking reads of a loaded program (a `loader.Runtime` is one): slots by
    name and their prepared rules. A protocol, so that this module does not import the
    loader that builds the rules with it."""

    slot_index: dict[str, int]
    slot_names: Sequence[str]
    slot_rules: Sequence[SlotRule]

AFFIRM, DENY = ir.ACTS.index("affirm"), ir.ACTS.index("deny")
SILENCE, NULL = ir.ACTS.index("silence"), ir.ACTS.index("null")

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
_INTEGER_TEXT = re.compile(r"[+-]?\d+")
# Reasons a value is dropped; `VALIDATION_REASONS` are the ones the NLG re-asks for.
VALIDATION_REASONS = frozenset({"type", "range", "not_member", "min", "max", "min_length",
                                "max_length", "pattern", "max_items"})


class SlotRule:
    """A slot definition prepared for checking (members as a set, pattern compiled once)."""

    __slots__ = ("index", "name", "kind", "members", "folded", "min", "max", "min_length",
                 "max_length", "pattern", "on_conflict", "slot", "item", "min_items",
                 "max_items", "normalize", "bounds")

    def __init__(self, index: int, slot: ir.Slot):
        self.index = index
        self.name = slot.name
        self.kind = slot.value_type
        self.members = frozenset(slot.values)
        self.folded = {v.casefold(): v for v in slot.values}
        self.min, self.max = slot.min, slot.max
        self.min_length, self.max_length = slot.min_length, slot.max_length
        try:
            self.pattern = None if slot.pattern is None else \
                patterns.compile_pattern(slot.pattern, patterns.SLOT)
        except patterns.PatternError as error:
            raise ir.IRError(f"slot {slot.name!r} has an invalid pattern ({error}); fix it "
                             "and recompile with `mgc compile`") from None
        self.on_conflict = slot.on_conflict
        self.normalize = tuple(slot.normalize)
        self.slot = slot
        # A list slot (SPEC 8.2): each item is checked by `item`, the rule of its item type.
        self.item = SlotRule(index, msgspec.structs.replace(
            slot, value_type=slot.items, items=None)) if slot.items is not None else None
        self.min_items, self.max_items = slot.min_items, slot.max_items
        self.bounds = (slot.min_bound, slot.max_bound)  # a date or time slot's (SPEC 14.1)


def compile_slot_rules(program: ir.Program) -> tuple[SlotRule, ...]:
    """One rule per declared slot, in slot-index order."""
    return tuple(SlotRule(i, slot) for i, slot in enumerate(program.slots))


def compile_profile_rules(program: ir.Program) -> tuple[SlotRule, ...]:
    """One rule per profile field (SPEC 8.1: the slot value types and constraints)."""
    return tuple(SlotRule(i, field) for i, field in enumerate(program.profile))


def check_profile(rules: Sequence[SlotRule], given: dict[str, Any]) -> dict[str, Any] | str:
    """The given profile with its values normalized, or one line naming the first field that
    is undeclared or invalid (the session is then not started)."""
    by_name = {rule.name: rule for rule in rules}
    checked: dict[str, Any] = {}
    for name, value in given.items():
        rule = by_name.get(name) if isinstance(name, str) else None
        if rule is None:
            known = ", ".join(by_name) or "none are declared"
            return f"profile field {name!r} is not declared (profile fields: {known})"
        if value is None:
            continue  # not known: reads as null
        ok, normal, reason = check_value(rule, value)
        if not ok:
            return f"profile field {name!r} has an invalid value {value!r} ({reason})"
        checked[name] = normal
    return checked


class SlotUpdate(msgspec.Struct, frozen=True):
    """What step 2 did to the slots this turn."""

    slots: dict[str, Any]
    pending: PendingConfirmation | None = None
    stored: tuple = ()  # ((name, value), ...)
    dropped: tuple = ()  # ((name, value, reason), ...)
    invalid: tuple[int, ...] = ()  # slot indices that failed validation, in order
    asked: PendingConfirmation | None = None  # a confirmation raised this turn
    resolved: str | None = None  # "confirmed", "declined" or "expired"




def check_value(rule: SlotRule, value: Any) -> tuple[bool, Any, str]:
    """(ok, normalized value, reason) for one value against one slot; a list slot takes one
    item or a list of them (normalized to a list without repeats, each item checked)."""
    kind = rule.kind
    if rule.item is not None:
        return _check_items(rule, value)
    if kind in ("integer", "number"):
        number = _as_number(value, kind == "integer")
        if number is None:
            return False, value, "type"
        if type(number) is int and not ir.fits_int64(number):
            return False, value, "range"  # a session must stay storable (MessagePack: 64 bits)
        if rule.min is not None and number < rule.min:
            return False, value, "min"
        if rule.max is not None and number > rule.max:
            return False, value, "max"
        return True, number, ""
    if kind == "boolean":
        if isinstance(value, bool):
            return True, value, ""
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return True, value.strip().lower() == "true", ""
        return False, value, "type"
    if not isinstance(value, str) or unstorable_at(value) is not None:
        return False, value, "type"
    if kind in ir.TEMPORAL_KINDS:  # only scenarios with a date or time slot get here
        from .understanding.dates import check as check_temporal

        reason = check_temporal(kind, value.strip(), *rule.bounds)
        return (False, value, reason) if reason else (True, value.strip(), "")
    if kind == "enum":
        member = value if value in rule.members else rule.folded.get(value.strip().casefold())
        return (True, member, "") if member is not None else (False, value, "not_member")
    text = value.strip()
    return _check_text(rule, normalized_text(rule.normalize, text) if rule.normalize else text)


_NORMALIZE = {"trim": str.strip, "lower": str.lower, "upper": str.upper,
              "collapse_spaces": lambda text: " ".join(text.split()),
              "remove_spaces": lambda text: "".join(text.split())}


def normalized_text(steps: Sequence[str], text: str) -> str:
    """A heard text after a slot's `normalize` steps (SPEC 14.2), in written order: "rx
    7654321" with upper and remove_spaces is "RX7654321", which its pattern then checks."""
    for step in steps:
        text = _NORMALIZE[step](text)
    return text


def _check_items(rule: SlotRule, value: Any) -> tuple[bool, Any, str]:
    items: list = []
    for item in value if isinstance(value, list) else [value]:
        ok, normal, reason = check_value(rule.item, item)
        if not ok:
            return False, value, reason
        if normal not in items:
            items.append(normal)
    if rule.max_items is not None and len(items) > rule.max_items:
        return False, value, "max_items"
    return True, items, ""


def _merged(rule: SlotRule, old: Any, value: Any) -> tuple[Any, str]:
    """A list slot's new value under `append` (new items added, repeats ignored), or the
    reason it cannot be stored ("max_items")."""
    merged = list(old) + [item for item in value if item not in old]
    if rule.max_items is not None and len(merged) > rule.max_items:
        return old, "max_items"
    return merged, ""


def _check_text(rule: SlotRule, text: str) -> tuple[bool, Any, str]:
    if rule.kind == "email" and not _EMAIL.fullmatch(text):
        return False, text, "type"
    if rule.min_length is not None and len(text) < rule.min_length:
        return False, text, "min_length"
    if rule.max_length is not None and len(text) > rule.max_length:
        return False, text, "max_length"
    if rule.pattern is not None and not patterns.fullmatches(rule.pattern, text):
        return False, text, "pattern"  # a text over patterns.MAX_VALUE_CHARS included
    return True, text, ""


def _as_number(value: Any, integer: bool) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER_TEXT.fullmatch(text):
            return int(text)
        if integer:
            return None
        try:
            value = float(text)
        except ValueError:
            return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        if integer:
            return int(value) if value.is_integer() else None
        return value
    return None


def apply_slots(runtime: SlotTables, slots: dict[str, Any], pending: PendingConfirmation | None,
                extracted: dict[str, Any], act: int) -> SlotUpdate:
    """Resolve a pending confirmation with `act`, then validate and store `extracted`.
    Every turn with slot values comes here, so it is one pass over local lists."""
    if not extracted and pending is None:
        return SlotUpdate(slots)
    work = dict(slots)  # kept only if something is stored: the input is never changed
    stored: list = []
    dropped: list = []
    invalid: list[int] = []
    asked = resolved = None
    if pending is not None and act not in (SILENCE, NULL):  # silent: the re-prompt asks again
        resolved = _RESOLVED.get(act, "expired")
        if act == AFFIRM:
            work[pending.slot] = pending.value
            stored.append((pending.slot, pending.value))
        pending = None
    for name, value in extracted.items():
        index = runtime.slot_index.get(name)
        if index is None:
            dropped.append((name, value, "undeclared_slot"))
            continue
        if value is None or value == [] or (isinstance(value, str) and not value.strip()):
            dropped.append((name, value, "null"))
            continue
        rule = runtime.slot_rules[index]
        ok, value, reason = check_value(rule, value)
        if not ok:
            dropped.append((name, value, reason))
            if index not in invalid:
                invalid.append(index)
            continue
        old = work.get(name)
        if old is not None and rule.on_conflict == "append":
            merged, reason = _merged(rule, old, value)
            if reason:
                dropped.append((name, value, reason))
                if index not in invalid:
                    invalid.append(index)
                continue
            value = merged
        if old is None or rule.on_conflict in ("overwrite", "append"):
            if old != value:
                work[name] = value
                stored.append((name, value))
        elif old == value:
            pass
        elif rule.on_conflict == "keep":
            dropped.append((name, value, "kept"))
        elif pending is None:  # confirm: one question at a time
            pending = asked = PendingConfirmation(name, value, old)
        else:
            dropped.append((name, value, "confirmation_pending"))
    return SlotUpdate(work if stored else slots, pending, tuple(stored), tuple(dropped),
                      tuple(invalid), asked, resolved)


_RESOLVED = {AFFIRM: "confirmed", DENY: "declined"}  # any other understood act: "expired"


def apply_sets(runtime: SlotTables, slots: dict[str, Any],
               sets: Sequence[ir.SlotSet]) -> tuple[dict[str, Any], tuple]:
    """The slots after the `set` assignments of a route or an `on_enter` (SPEC 14.5, 17.20),
    in written order, each reading the slots as the earlier ones left them; and
    ((slot, value, problem), ...) for the trace, problem "" when stored. A literal null (or a
    copy of an unfilled slot) clears; `add` counts an unfilled slot as 0; a result the slot
    refuses (out of its bounds) is dropped with the reason. The input dict is not changed."""
    new = dict(slots)
    done = []
    for assignment in sets:
        index = assignment.slot
        name = runtime.slot_names[index]
        if assignment.kind == ir.SET_COPY:
            value = new.get(runtime.slot_names[assignment.value])
        elif assignment.kind == ir.SET_ADD:
            value = (new.get(name) or 0) + assignment.value
        else:
            value = assignment.value
        if value is None:
            new.pop(name, None)
            done.append((name, None, ""))
            continue
        ok, normal, reason = check_value(runtime.slot_rules[index], value)
        if ok:
            new[name] = normal
        done.append((name, normal if ok else value, "" if ok else reason))
    return new, tuple(done)
