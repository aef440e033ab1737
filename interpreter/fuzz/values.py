"""A slot's values worth saying while fuzzing, valid or not, and how a user says them.

In: a slot's `SlotRule` (the engine's own, `slots.SlotRule`) and the literals the scenario's
conditions compare it with (`fuzz.inputs.compared_literals`).
Out: `slot_values` - a `SlotValues` of up to eight valid values (as the engine stores them,
and a string slot's values as a user says them before its `normalize`: "rx 7654321"), up to
eight invalid ones, how a user says the valid dates and times in words ("March 4, 1962",
"3/4/1962", "yesterday", "3pm", "오후 3시 반"), and a strategy of strings drawn from the
slot's pattern (normalised or not); `value_text` - the text a user would say for a value;
`transcript_safe` - whether a text is one transcript line.
After: every valid value is one `slots.check_value` accepts (the engine's rule is the judge:
nothing here re-implements it); date bounds are read on the clock in force (`fuzz.runner`
fixes it at the fuzz epoch).
"""

from __future__ import annotations

import calendar
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
    said: tuple = ()  # the valid dates and times as a user says them (the rules NLU reads)


def slot_values(rule: SlotRule, compared: list, language: str = "en",
                order: str = "") -> SlotValues:
    """The slot's values to try; `language` and `order` (`metadata.date_order`) say how its
    dates are spoken."""
    valid: dict = {}
    invalid: dict = {}
    for value in _candidates(rule, compared):
        ok, stored, _ = check_value(rule, value) if value is not None else (False, None, "")
        if ok and stored != []:  # an empty list is nothing heard
            valid.setdefault(_typed(stored), stored)
        else:
            invalid.setdefault(_typed(value), value)
    chosen = tuple(valid.values())[:8]
    if rule.item is None and rule.kind == "string" and rule.normalize:
        chosen += tuple(dict.fromkeys(f for v in chosen for f in _undone(rule, v)))[:4]
    said = tuple(dict.fromkeys(text for v in chosen if isinstance(v, str)
                               for text in spoken(rule, v, language, order)))
    return SlotValues(chosen, tuple(invalid.values())[:8], _pattern_strings(rule), said)


# --- as a user says it -------------------------------------------------------------------------


def denormalized(steps: tuple[str, ...], text: str) -> str:
    """A text that a slot's `normalize` steps (SPEC 14.2) turn back into `text`, said the
    way a user would: "RX7654321" with upper and remove_spaces is "rx 7654321"."""
    if "upper" in steps:
        text = text.lower()
    elif "lower" in steps:
        text = text.upper()
    if "remove_spaces" in steps and " " not in text and len(text) > 1:
        cut = re.search(r"(?<=\D)(?=\d)|(?<=\d)(?=\D)", text)
        at = cut.start() if cut else len(text) // 2
        text = text[:at] + " " + text[at:]
    elif "collapse_spaces" in steps and " " in text:
        text = text.replace(" ", "  ", 1)
    return text


def _undone(rule: SlotRule, value: Any) -> tuple[str, ...]:
    """`value` as said before normalising, when the engine's own rule stores it as `value`."""
    if not isinstance(value, str):
        return ()
    form = denormalized(rule.normalize, value)
    return (form,) if form != value and check_value(rule, form)[:2] == (True, value) else ()


def spoken(rule: SlotRule, value: str, language: str, order: str) -> tuple[str, ...]:
    """SPEC 14.1: a stored date (`YYYY-MM-DD`) or time (`HH:MM`) in words and numbers, as
    the rules NLU reads them: the month named, numeric in the scenario's date order, a
    relative day word when it is today, yesterday or tomorrow; "3pm", "오후 3시 반"."""
    kind = (rule.item or rule).kind
    korean = language.split("-")[0].lower() == "ko"
    if kind == "time":
        return _spoken_time(value, korean)
    if kind != "date":
        return ()
    from ..understanding.dates import default_order, today

    day = dt.date.fromisoformat(value)
    parts = {"y": str(day.year), "m": str(day.month), "d": str(day.day)}
    numeric = "/".join(parts[c] for c in order or default_order(language))
    named = f"{day.year}년 {day.month}월 {day.day}일" if korean else \
        f"{calendar.month_name[day.month]} {day.day}, {day.year}"
    words = ({0: "오늘", 1: "내일", -1: "어제"} if korean else
             {0: "today", 1: "tomorrow", -1: "yesterday"}).get((day - today()).days)
    return (named, numeric) + ((words,) if words else ())


def _spoken_time(value: str, korean: bool) -> tuple[str, ...]:
    hour, minute = int(value[:2]), int(value[3:])
    twelve = hour % 12 or 12
    if korean:
        rest = " 반" if minute == 30 else f" {minute}분" if minute else ""
        return (f"{'오전' if hour < 12 else '오후'} {twelve}시{rest}",)
    clock = f"{twelve}:{minute:02d}" if minute else str(twelve)
    return (f"{clock}{'am' if hour < 12 else 'pm'}",)


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
    if item.normalize:  # SPEC 14.2: also as said before normalising ("rx 7654321")
        strategy = strategy | strategy.map(lambda v: denormalized(item.normalize, v)).filter(
            lambda v: check_value(item, v)[0])
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
