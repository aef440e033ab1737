"""A slot's values worth saying while fuzzing, valid or not, and how a user says them.

In: a slot's `SlotRule` (the engine's own, `slots.SlotRule`) and the literals the scenario's
conditions compare it with (`fuzz.inputs.compared_literals`).
Out: `slot_values` - a `SlotValues` of up to eight valid values (as the engine stores them),
up to eight invalid ones, and a strategy of strings drawn from the slot's pattern;
`value_text` - the text a user would say for a value; `transcript_safe` - whether a text is
one transcript line.
After: every valid value is one `slots.check_value` accepts (the engine's rule is the judge:
nothing here re-implements it); date bounds are read on the clock in force (`fuzz.runner`
fixes it at the fuzz epoch).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, NamedTuple

from hypothesis import strategies as st

from ..slots import SlotRule, check_value

_COMMENT = re.compile(r"(^|\s)#")  # the transcript comment rule: see fuzz.properties._strip_comment

DEFAULT_STRINGS = ("홍길동", "abc", "오늘 산책했어요", "무릎", "2025-03-14", "서울", "Kim",
                   "report.pdf")
DEFAULT_EMAILS = ("user@example.com", "kim@test.kr", "a@b.co")


def transcript_safe(text: str) -> bool:
    """Whether `text` survives as a transcript line (`user: TEXT`) unchanged."""
    return text == text.strip() and text.isprintable() and not _COMMENT.search(text)



def _candidates(rule: SlotRule, compared: list) -> list:
    """Values worth trying for a slot, valid or not: bounds, members, compared literals; for a
    list slot (SPEC 8.2) its items' candidates alone, the first two together, and none."""
    if rule.item is not None:
        items = _candidates(rule.item, compared)
        return items + [items[:2], []]
    kind, low, high = rule.kind, rule.min, rule.max
    if kind == "enum":
        members = list(rule.slot.values)
        return members + [m[:-1] if len(m) > 1 else m + "x" for m in members] + \
            [m + "s" for m in members] + [1, None]
    if kind == "boolean":
        return [True, False, "maybe", 2, None]
    if kind in ("integer", "number"):
        step = 1 if kind == "integer" else 0.5
        numbers = [b for b in (low, high) if b is not None]
        if low is not None and high is not None:
            numbers.append((low + high) // 2 if kind == "integer" else (low + high) / 2)
        numbers += [n for n in compared if isinstance(n, (int, float)) and not isinstance(n, bool)]
        numbers += [0, 1, 7]
        near = [n + d for n in numbers for d in (0, -step, step)]
        return near + ["many", 1.5 if kind == "integer" else "1,5", True, [1], None]
    if kind in ("date", "time"):
        return _temporal_candidates(rule, compared)
    if kind == "email":
        texts = [v for v in compared if isinstance(v, str)]
        return texts + list(DEFAULT_EMAILS) + ["not-an-email", "a@b", 42, "x" * 101, None]
    texts = [v for v in compared if isinstance(v, str)]
    longest = (rule.max_length or 20) + 1
    return texts + list(DEFAULT_STRINGS) + ["x" * max(rule.min_length or 1, 1),
                                            "y" * longest, "", 42, None]


def _temporal_candidates(rule: SlotRule, compared: list) -> list:
    """SPEC 14.1: a date slot's bounds on the fuzz clock's day and their neighbours, the
    compared literals, today; a time slot's bounds, noon and the ends of the day; and values
    that are none (an impossible day, a number, a word)."""
    from ..understanding.dates import resolve, today

    texts = [v for v in compared if isinstance(v, str)]
    if rule.kind == "time":
        return texts + [b for b in rule.bounds if b] + ["12:00", "00:00", "23:59", "09:30",
                                                        "25:00", 930, None]
    days = [dt.date.fromisoformat(resolve(b)) for b in rule.bounds if b] + [today()]
    days += [day + dt.timedelta(days=d) for day in list(days) for d in (-1, 1)]
    least, most = rule.bounds
    if least and most:
        low, high = dt.date.fromisoformat(resolve(least)), dt.date.fromisoformat(resolve(most))
        days.append(low + (high - low) / 2)
    return texts + [day.isoformat() for day in days] + ["1962-02-30", "yesterday", 19620304, None]


class SlotValues(NamedTuple):
    """A slot's values to try, checked with the engine's own rule (`slots.check_value`)."""

    valid: tuple
    invalid: tuple
    pattern: Any  # a strategy of valid strings drawn from the slot's pattern, or None


def slot_values(rule: SlotRule, compared: list) -> SlotValues:
    valid: dict = {}
    invalid: dict = {}
    for value in _candidates(rule, compared):
        ok, stored, _ = check_value(rule, value) if value is not None else (False, None, "")
        if ok and stored != []:  # an empty list is nothing heard
            valid.setdefault(_typed(stored), stored)
        else:
            invalid.setdefault(_typed(value), value)
    return SlotValues(tuple(valid.values())[:8], tuple(invalid.values())[:8],
                      _pattern_strings(rule))


def _typed(value: Any) -> tuple[str, str]:
    """A key that tells `1`, `1.0` and `True` apart (they are equal in Python)."""
    return type(value).__name__, repr(value)


def _pattern_strings(rule: SlotRule):
    """Valid strings drawn from the slot's pattern (a list slot: from its items' pattern, as
    one-item lists), or None (no pattern, or one hypothesis cannot draw from)."""
    item = rule.item if rule.item is not None else rule
    if item.pattern is None or item.kind not in ("string", "email"):
        return None
    try:
        strategy = st.from_regex(item.pattern, fullmatch=True,
                                 alphabet=st.characters(codec="utf-8"))
        strategy.validate()
    except Exception:  # noqa: BLE001 - a pattern hypothesis cannot read: use the candidates
        return None
    strategy = strategy.filter(lambda v: check_value(item, v)[:2] == (True, v))
    return strategy.map(lambda v: [v]) if rule.item is not None else strategy


def value_text(value: Any, fallback: str) -> str:
    """What a user would say for `value` (its text when that is a safe line)."""
    if value is None:
        return fallback
    if isinstance(value, list):  # a list slot's items, as a user lists them
        return ", ".join(value_text(item, "") for item in value).strip(", ") or fallback
    text = value if isinstance(value, str) else \
        ("true" if value is True else "false" if value is False else str(value))
    return text if text and transcript_safe(text) else fallback
