"""`set` on transitions and in `on_enter` (SPEC 14.5, 17.20): what each assignment means.

In: the `set` object of a transition, a `default_next` object or an `on_enter`, with the
scenario's slots. Out: the checked assignments `(slot, kind, value)` in written order, kind
one of `interpreter.ir.SET_KINDS`: a literal of the slot's type (`null` clears), `copy`
(`{"copy": "other_slot"}`, a slot of the same type), `add` (`{"add": N}` on an integer or
number slot, N a number of that kind; an unfilled slot counts as 0). E114 for an undeclared
slot or a form other than these (an object with other keys, `add` on a slot that is not a
number, a copy of an undeclared slot); E204 for a value of the wrong type (a literal the slot
refuses, a copy between slots of different types, a fractional `add` on an integer slot).
The checked forms are those the runtime applies; nothing else reaches the IR.
"""

from __future__ import annotations

from typing import Any

from interpreter.ir import SET_ADD, SET_COPY, SET_LITERAL, IRError
from interpreter.slots import SlotRule, check_value

from .diagnostics import Diagnostics, Names, did_you_mean, join
from .slotdefs import build_slot

FORMS = ('a literal of the slot\'s type, null (clear), {"copy": "other_slot"} or {"add": N} '
         "(number slots)")
NUMBERS = ("integer", "number")


def check_sets(raw: Any, path: str, slots: dict, used: set[str],
               diags: Diagnostics) -> list[tuple[str, int, Any]]:
    """The checked assignments of one `set` object (those with a problem are left out)."""
    if not isinstance(raw, dict) or path in diags.rejected:
        return []
    names = Names(slots)
    checked = []
    for name, value in raw.items():
        where = join(path, name)
        if name not in slots:
            diags.report("E114", f"set names undeclared slot '{name}'", where, at_key=True,
                         hint=did_you_mean(name, names) or 'declare it under "slots"')
            continue
        used.add(name)
        found = check_one(name, slots[name], value, where, slots, names, diags)
        if found is not None:
            checked.append((name, *found))
    return checked


def _misdefined(name: str, diags: Diagnostics) -> bool:
    """Whether the slot's own definition has an error (E106: a bad pattern, min over max):
    a literal is not judged against rules that are wrong themselves (SPEC 3: one report)."""
    where = join("/slots", name) + "/"
    return any(d.severity == "error" and d.path.startswith(where) for d in diags.items)


def check_one(name: str, slot, value: Any, where: str, slots: dict, names: Names,
              diags: Diagnostics) -> tuple[int, Any] | None:
    """(kind, value) of one assignment, or None when it was reported."""
    if isinstance(value, dict):
        if len(value) == 1 and "copy" in value:
            return check_copy(name, slot, value["copy"], join(where, "copy"), slots, names, diags)
        if len(value) == 1 and "add" in value:
            return check_add(name, slot, value["add"], join(where, "add"), diags)
        diags.report("E114", f"set of slot '{name}' is an object with keys "
                     f"{', '.join(repr(k) for k in value) or 'none'}", where,
                     hint=f"a set value is {FORMS}")
        return None
    if value is None:
        return SET_LITERAL, None
    if slot.value_type is None or _misdefined(name, diags):  # reported at the slot, once
        return None
    try:
        rule = SlotRule(0, build_slot(name, slot))
    except IRError:  # the slot's pattern does not compile: E106 at the slot says so
        return None
    ok, normal, reason = check_value(rule, value)
    if not ok:
        members = slot.values if slot.value_type == "enum" and isinstance(slot.values, list) \
            else ()
        diags.report("E204", f"set value {_shown(value)} is not a valid value of slot '{name}' "
                     f"({slot.value_type}: {reason})", where,
                     hint=did_you_mean(value, Names(members)) if members and
                     did_you_mean(value, Names(members)) else
                     f"write a value the slot accepts; a set value is {FORMS}")
        return None
    return SET_LITERAL, normal


def check_copy(name: str, slot, other: Any, where: str, slots: dict, names: Names,
               diags: Diagnostics) -> tuple[int, Any] | None:
    if not isinstance(other, str) or other not in slots:
        diags.report("E114", f"set of slot '{name}' copies undeclared slot {_shown(other)}",
                     where, hint=did_you_mean(other, names) or "name a declared slot")
        return None
    source = slots[other]
    if (source.value_type, getattr(source, "items", None)) != \
            (slot.value_type, getattr(slot, "items", None)):
        diags.report("E204", f"slot '{name}' ({slot.value_type}) cannot copy slot '{other}' "
                     f"({source.value_type})", where, hint="copy a slot of the same type")
        return None
    return SET_COPY, other


def check_add(name: str, slot, amount: Any, where: str,
              diags: Diagnostics) -> tuple[int, Any] | None:
    if slot.value_type not in NUMBERS:
        diags.report("E114", f"add on slot '{name}' of type {slot.value_type}", where,
                     hint="add counts on integer and number slots only")
        return None
    whole = isinstance(amount, int) or (isinstance(amount, float) and amount.is_integer())
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or (
            slot.value_type == "integer" and not whole):
        diags.report("E204", f"add {_shown(amount)} on {slot.value_type} slot '{name}'", where,
                     hint="add takes a number (a whole one for an integer slot), e.g. 1 or -1")
        return None
    return SET_ADD, int(amount) if slot.value_type == "integer" else amount


def _shown(value: Any) -> str:
    import json
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
