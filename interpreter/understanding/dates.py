"""Dates and times in an utterance, and the engine's day (SPEC 14.1, 17.18).

In: an utterance, the scenario's language and `date_order` (`mdy`, `dmy`, `ymd`), the day the
engine's clock reads (`today()`, set per turn by the engine with `clock_at`), and whether the
slot looks back (its `max` is today or earlier: a yearless date is then the last such date).
Out: `read_date` a `YYYY-MM-DD` string, `read_time` an `HH:MM` string, or None; `check` says
whether a stored value fits a slot's bounds (`min`/`max` as ISO, `HH:MM`, `"today"`,
`"today+Nd"`, `"today-Ny"`; units d, w, m, y), `bound_problem` what is wrong with a bound.

The reader is a small grammar of regular expressions over the forms of SPEC 14.1 (ISO, numeric
in the date order, month names, ordinal and number words, Korean 년/월/일 with Sino-Korean
numerals, relative days and weekdays, "N days ago", "3일 후"). `dateparser` was measured for it
first (see docs/concepts/language.md): it finds no date inside a sentence, misses 모레, 글피 and 다음 주 화요일,
reads "the 45th of March" as 2045-03-01, and costs 173 ms to import, 330 ms on its first call
and 18 MB; on the held-out tables it read 60/75 English and 40/71 Korean dates.
Only a scenario with a date or time slot imports this module; number words are read by
`understanding.numerals` (which an English number slot imports alone).
"""

from __future__ import annotations

import calendar
import contextlib
import datetime as dt
import re
from contextvars import ContextVar
from collections.abc import Callable, Iterator

from .numerals import english_digits, korean_digits, number_words  # noqa: F401 - re-exported

ORDERS = ("mdy", "dmy", "ymd")
DEFAULT_ORDERS = {"en": "mdy", "ko": "ymd"}
BOUND = re.compile(r"today(?:([+-])(\d{1,4})([dwmy]))?")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
HH_MM = re.compile(r"(?:[01]\d|2[0-3]):[0-5]\d")

_TODAY: ContextVar[dt.date | None] = ContextVar("mago_today", default=None)


# --- the engine's day -------------------------------------------------------------------------


def day_of(epoch: float, timezone: str = "") -> dt.date:
    """The calendar day of `epoch` in the IANA `timezone` (the server's when empty)."""
    if timezone:
        from zoneinfo import ZoneInfo  # only scenarios that name a timezone

        return dt.datetime.fromtimestamp(epoch, ZoneInfo(timezone)).date()
    return dt.datetime.fromtimestamp(epoch).date()


@contextlib.contextmanager
def clock_at(day: dt.date) -> Iterator[None]:
    """Within: `today()` is `day` (the engine sets it around each turn, from its clock)."""
    token = _TODAY.set(day)
    try:
        yield
    finally:
        _TODAY.reset(token)


def today() -> dt.date:
    """The day of the turn being handled; the wall clock's outside a turn."""
    return _TODAY.get() or dt.date.today()


def epoch_at(text: str, timezone: str = "") -> float:
    """The moment an ISO date or date-time names (`mgi run --now`, a transcript's `now:`,
    SPEC 17.18); one without an offset is read in `timezone` (the server's when empty).
    ValueError when `text` is not one."""
    moment = dt.datetime.fromisoformat(text.strip())
    if moment.tzinfo is None and timezone:
        from zoneinfo import ZoneInfo

        moment = moment.replace(tzinfo=ZoneInfo(timezone))
    return moment.timestamp()


def fixed_clock(text: str, timezone: str = "") -> Callable[[], float]:
    """A clock that always reads the moment `text` names (see `epoch_at`)."""
    epoch = epoch_at(text, timezone)
    return lambda: epoch


def default_order(language: str) -> str:
    return DEFAULT_ORDERS.get(language.split("-")[0].lower(), "mdy")


# --- bounds ------------------------------------------------------------------------------------


def bound_problem(kind: str, bound: object) -> str | None:
    """What is wrong with a `min`/`max` of a date or time slot, or None."""
    if kind == "time":
        return None if isinstance(bound, str) and HH_MM.fullmatch(bound) else \
            f"{bound!r} is not a time written HH:MM"
    if isinstance(bound, str) and BOUND.fullmatch(bound):
        return None
    if isinstance(bound, str) and ISO_DATE.fullmatch(bound) and _valid_iso(bound):
        return None
    return f"{bound!r} is not an ISO date (YYYY-MM-DD), \"today\", \"today+Nd\" or \"today-Ny\""


def resolve(bound: str, day: dt.date | None = None) -> str:
    """A bound as the value it stands for on `day` (today by default)."""
    match = BOUND.fullmatch(bound)
    if match is None:
        return bound
    day = day or today()
    if not match.group(1):
        return day.isoformat()
    amount = int(match.group(2)) * (-1 if match.group(1) == "-" else 1)
    return shifted(day, amount, match.group(3)).isoformat()


def shifted(day: dt.date, amount: int, unit: str) -> dt.date:
    if unit in "dw":
        return day + dt.timedelta(days=amount * (7 if unit == "w" else 1))
    months = day.month - 1 + amount * (12 if unit == "y" else 1)
    year, month = day.year + months // 12, months % 12 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def check(kind: str, value: object, least: str | None, most: str | None) -> str:
    """"" when `value` is a stored value of a date/time slot within its bounds, else the
    reason ("type", "min", "max")."""
    if not isinstance(value, str):
        return "type"
    if kind == "date" and not (ISO_DATE.fullmatch(value) and _valid_iso(value)):
        return "type"
    if kind == "time" and not HH_MM.fullmatch(value):
        return "type"
    if least is not None and value < resolve(least):
        return "min"
    if most is not None and value > resolve(most):
        return "max"
    return ""


def looks_back(most: str | None) -> bool:
    """Whether a slot's dates are in the past: its `max` is today or earlier (17.18)."""
    return most is not None and resolve(most) <= today().isoformat()


def _valid_iso(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


# --- dates -------------------------------------------------------------------------------------

_MONTHS = {"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
           "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
           "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
           "sept": 9, "oct": 10, "nov": 11, "dec": 12}
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4,
             "saturday": 5, "sunday": 6, "mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3,
             "thur": 3, "thurs": 3, "fri": 4, "sat": 5, "sun": 6}
_KO_WEEKDAYS = {"월": 0, "화": 1, "수": 2, "목": 3, "금": 4, "토": 5, "일": 6}
_EN_DAYS = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1,
            "the day after tomorrow": 2, "the day before yesterday": -2}
_KO_DAYS = {"오늘": 0, "내일모레": 2, "내일": 1, "모레": 2, "글피": 3, "어제": -1, "그저께": -2,
            "그제": -2, "엊그제": -2}
_KO_SPANS = {"하루": 1, "이틀": 2, "사흘": 3, "나흘": 4, "닷새": 5, "엿새": 6, "이레": 7, "열흘": 10,
             "일주일": 7}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_TH = r"(?:st|nd|rd|th)?"
_YEAR = r"(\d{4}|'\d{2})"
_NUMERIC = r"(?<![\d/.:-])(\d{1,4})([/.-])(\d{1,2})\2(\d{1,4})(?![\d/.:-]*\d)"

# (regex, how its match becomes a date): the forms of SPEC 14.1, tried on the text as digits.
_EN_FORMS: list[tuple[re.Pattern, str]] = [
    (re.compile(rf"\b({_MONTH})\.?\s+(?:the\s+)?(\d{{1,2}}){_TH}\b,?(?:\s+{_YEAR})?"), "month_day"),
    (re.compile(rf"\b(?:the\s+)?(\d{{1,2}}){_TH}\s+(?:of\s+)?({_MONTH})\b\.?,?(?:\s+{_YEAR})?"),
     "day_month"),
    (re.compile(r"\b(the day after tomorrow|the day before yesterday|today|tonight|tomorrow|"
                r"yesterday)\b"), "day_word"),
    (re.compile(r"\bin\s+(\d{1,3})\s+(day|week)s?\b"), "in_span"),
    (re.compile(r"\b(\d{1,3})\s+(day|week)s?\s+(ago|from\s+(?:today|now))\b"), "span_from"),
    (re.compile(rf"\b(?:(next|this|last|on|coming)\s+)?({_WEEKDAY})\b"), "weekday"),
]
_KO_FORMS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"(\d{2,4})\s*년\s*(\d{1,2})\s*월\s*(\d{1,2})\s*일"), "ko_ymd"),
    (re.compile(r"(다음|이번|지난|저번)\s*달\s*(\d{1,2})\s*일"), "ko_month_day"),
    (re.compile(r"(?<!\d)(\d{1,2})\s*월\s*(\d{1,2})\s*일"), "ko_md"),
    (re.compile(r"(다음|이번|지난|저번)?\s*주?\s*([월화수목금토일])요일"), "ko_weekday"),
    (re.compile(r"(\d{1,3})\s*(일|주|주일)\s*(후|뒤|전)"), "ko_span"),
    (re.compile("(" + "|".join(_KO_SPANS) + r"|한\s*주)\s*(후|뒤|전)"), "ko_span_word"),
    (re.compile("(" + "|".join(_KO_DAYS) + ")"), "ko_day_word"),
]
_SHARED_FORMS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)"), "iso"),
    (re.compile(_NUMERIC), "numeric"),
    (re.compile(r"(?<![\d/.-])(\d{8}|\d{6})(?![\d/.-])"), "compact"),
    (re.compile(r"(?<![\d/.:-])(\d{1,2})/(\d{1,2})(?![\d/.:-]*\d)"), "numeric_short"),
]


class _Reading:
    """What a date reading needs besides the text: the day, the date order, the direction."""

    def __init__(self, day: dt.date, order: str, back: bool):
        self.day, self.order, self.back = day, order, back


def read_date(text: str, language: str = "en", order: str = "", back: bool = False,
              day: dt.date | None = None) -> str | None:
    """The date `text` says, as YYYY-MM-DD, or None; `back`: a yearless date or a bare weekday
    is the last such day (a date of birth), else the next (17.18). The earliest form found
    wins (the longest at one place); a form that names an impossible date says nothing."""
    korean = language.split("-")[0].lower() == "ko"
    spoken = korean_digits(text) if korean else english_digits(text)
    if not korean and any(char in text for char in "년월일"):
        spoken = korean_digits(spoken)
    reading = _Reading(day or today(), order or default_order(language), back)
    forms = (_KO_FORMS if korean else _EN_FORMS) + _SHARED_FORMS
    found = [(m.start(), -len(m.group(0)), kind, m) for regex, kind in forms
             for m in regex.finditer(spoken) if m.group(0).strip()]
    if not found:
        return None
    _, _, kind, match = min(found, key=lambda item: item[:2])
    try:
        value = _FORM_READERS[kind](match, reading)
    except ValueError:
        return None
    return value.isoformat() if value is not None else None


def _year(text: str | None, reading: _Reading, month: int, day: int) -> int | None:
    """A written year (two digits or four, "'84"), or None for a yearless date."""
    if text is None:
        return None
    digits = text.lstrip("'")
    if len(digits) == 4:
        return int(digits)
    if len(digits) != 2:
        raise ValueError(text)
    now = reading.day
    late = 2000 + int(digits)
    if reading.back:
        return late if dt.date(late, month, 1) <= now else late - 100
    return late if late <= now.year + 10 else late - 100


def _dated(year: int | None, month: int, day: int, reading: _Reading) -> dt.date:
    """The date; a yearless one is the next such date from today (the last, looking back)."""
    if year is not None:
        return dt.date(year, month, day)
    now = reading.day
    dt.date(2000, month, day)  # an impossible day and month raise ValueError here
    for year in (range(now.year, now.year - 9, -1) if reading.back else
                 range(now.year, now.year + 9)):
        with contextlib.suppress(ValueError):
            candidate = dt.date(year, month, day)
            if (candidate <= now) if reading.back else (candidate >= now):
                return candidate
    raise ValueError("no such date")


def _month_day(m: re.Match, r: _Reading) -> dt.date:
    month, day = _MONTHS[m.group(1)], int(m.group(2))
    return _dated(_year(m.group(3), r, month, day), month, day, r)


def _day_month(m: re.Match, r: _Reading) -> dt.date:
    month, day = _MONTHS[m.group(2)], int(m.group(1))
    return _dated(_year(m.group(3), r, month, day), month, day, r)


def _numeric(m: re.Match, r: _Reading) -> dt.date:
    first, third = m.group(1), m.group(4)
    if len(first) == 4 or r.order == "ymd":
        year, month, day = first, int(m.group(3)), int(third)
    elif r.order == "dmy":
        year, month, day = third, int(m.group(3)), int(first)
    else:
        year, month, day = third, int(first), int(m.group(3))
    if len(year) not in (2, 4):
        raise ValueError(year)
    return _dated(_year(year, r, month, day), month, day, r)


def _numeric_short(m: re.Match, r: _Reading) -> dt.date:
    a, b = int(m.group(1)), int(m.group(2))
    month, day = (b, a) if r.order == "dmy" else (a, b)
    return _dated(None, month, day, r)


def _compact(m: re.Match, r: _Reading) -> dt.date | None:
    digits = m.group(1)
    if len(digits) == 8:
        return dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    if r.order != "ymd":
        return None
    month, day = int(digits[2:4]), int(digits[4:])
    return _dated(_year(digits[:2], r, month, day), month, day, r)


def _iso(m: re.Match, r: _Reading) -> dt.date:
    return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


def _weekday_from(now: dt.date, weekday: int, how: str | None, back: bool) -> dt.date:
    """"next X": the first X after today; "last X": the last before; "this X", "on X", a bare
    X: the first X from today on (the last up to today, looking back)."""
    ahead = (weekday - now.weekday()) % 7
    if how == "next" or (how == "coming" and ahead == 0):
        return now + dt.timedelta(days=ahead or 7)
    if how == "last" or (back and how in (None, "on")):
        behind = (now.weekday() - weekday) % 7
        return now - dt.timedelta(days=(behind or 7) if how == "last" else behind)
    return now + dt.timedelta(days=ahead)


def _weekday(m: re.Match, r: _Reading) -> dt.date:
    return _weekday_from(r.day, _WEEKDAYS[m.group(2)], m.group(1), r.back)


def _ko_weekday(m: re.Match, r: _Reading) -> dt.date:
    """다음 주 / 이번 주 / 지난주 X요일: that day of the calendar week (Monday first); a bare
    X요일 the first from today on (the last up to today, looking back)."""
    weekday = _KO_WEEKDAYS[m.group(2)]
    which = m.group(1)
    if which is None:
        return _weekday_from(r.day, weekday, None, r.back)
    monday = r.day - dt.timedelta(days=r.day.weekday())
    weeks = {"다음": 1, "이번": 0, "지난": -1, "저번": -1}[which]
    return monday + dt.timedelta(days=7 * weeks + weekday)


def _span(amount: int, unit: str, direction: int, r: _Reading) -> dt.date:
    return r.day + dt.timedelta(days=direction * amount * (7 if unit.startswith(("w", "주")) else 1))


def _ko_month_day(m: re.Match, r: _Reading) -> dt.date:
    months = {"다음": 1, "이번": 0, "지난": -1, "저번": -1}[m.group(1)]
    first = shifted(r.day.replace(day=1), months, "m")
    return first.replace(day=int(m.group(2)))


def _ko_md(m: re.Match, r: _Reading) -> dt.date:
    return _dated(None, int(m.group(1)), int(m.group(2)), r)


def _ko_ymd(m: re.Match, r: _Reading) -> dt.date:
    month, day = int(m.group(2)), int(m.group(3))
    return _dated(_year(m.group(1), r, month, day), month, day, r)


_FORM_READERS: dict[str, Callable[[re.Match, _Reading], dt.date | None]] = {
    "month_day": _month_day, "day_month": _day_month, "numeric": _numeric,
    "numeric_short": _numeric_short, "compact": _compact, "iso": _iso,
    "day_word": lambda m, r: r.day + dt.timedelta(days=_EN_DAYS[m.group(1)]),
    "in_span": lambda m, r: _span(int(m.group(1)), m.group(2), 1, r),
    "span_from": lambda m, r: _span(int(m.group(1)), m.group(2),
                                    -1 if m.group(3) == "ago" else 1, r),
    "weekday": _weekday, "ko_weekday": _ko_weekday, "ko_ymd": _ko_ymd,
    "ko_month_day": _ko_month_day, "ko_md": _ko_md,
    "ko_span": lambda m, r: _span(int(m.group(1)), m.group(2), -1 if m.group(3) == "전" else 1, r),
    "ko_span_word": lambda m, r: _span(_KO_SPANS.get(m.group(1), 7), "일",
                                       -1 if m.group(2) == "전" else 1, r),
    "ko_day_word": lambda m, r: r.day + dt.timedelta(days=_KO_DAYS[m.group(1)]),
}


# --- times -------------------------------------------------------------------------------------

_MERIDIEM = r"(a\.?m\.?|p\.?m\.?)"
_EN_TIMES: list[tuple[re.Pattern, str]] = [
    (re.compile(rf"(?<![\d:])(\d{{1,2}}):(\d{{2}})(?!\d)\s*{_MERIDIEM}?"), "clock"),
    (re.compile(rf"\b(\d{{1,2}})(?:\s+(\d{{2}}))?\s*{_MERIDIEM}(?![a-z])"), "meridiem"),
    (re.compile(r"\b(noon|midday|midnight)\b"), "named"),
    (re.compile(r"\b(half|quarter)\s+(past|after|to)\s+(\d{1,2})\b"), "past_to"),
    (re.compile(r"\b(\d{1,2})(?:\s+(\d{2}))?\s+in\s+the\s+(morning|afternoon|evening|night)\b"),
     "part_of_day"),
    (re.compile(r"\b(\d{1,2})\s*o'?\s?clock\b"), "bare"),
    (re.compile(r"\bat\s+(\d{1,2})(?:\s+(\d{2}))?\b(?![:/.\d])"), "bare"),
]
_KO_PARTS = {"오전": "am", "아침": "am", "새벽": "am", "오후": "pm", "저녁": "pm", "밤": "pm",
             "낮": "pm"}
_KO_TIMES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?!\d)()"), "clock"),
    (re.compile(r"(오전|오후|아침|저녁|밤|새벽|낮)?\s*(\d{1,2})\s*시(?:\s*(?:(\d{1,2})\s*분|(반)))?"),
     "ko_hour"),
    (re.compile(r"(정오|자정)"), "named"),
]


def read_time(text: str, language: str = "en") -> str | None:
    """The time of day `text` says, as HH:MM, or None. An hour without am/pm (오전/오후) is
    read between 08:00 and 19:59 (17.18): "3시" is 15:00, "9시" 09:00."""
    korean = language.split("-")[0].lower() == "ko"
    spoken = korean_digits(text) if korean else english_digits(text)
    forms = _KO_TIMES if korean else _EN_TIMES
    found = [(m.start(), -len(m.group(0)), kind, m) for regex, kind in forms
             for m in regex.finditer(spoken)]
    if not found:
        return None
    _, _, kind, match = min(found, key=lambda item: item[:2])
    hour_minute = _TIME_READERS[kind](match)
    if hour_minute is None:
        return None
    hour, minute = hour_minute
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"{hour:02d}:{minute:02d}"


def _on_clock(hour: int, minute: int, half: str | None) -> tuple[int, int] | None:
    """An hour said with am/pm ("am"/"pm") or without (None: the 08:00-19:59 window)."""
    if half is None:
        if hour > 23:
            return None
        return (hour + 12 if 1 <= hour <= 7 else hour), minute
    if not 1 <= hour <= 12:
        return None
    if half == "am":
        return (0 if hour == 12 else hour), minute
    return (hour if hour == 12 else hour + 12), minute


def _half(text: str | None) -> str | None:
    return None if not text else ("am" if text.startswith("a") else "pm")


def _clock(m: re.Match) -> tuple[int, int] | None:
    hour, minute = int(m.group(1)), int(m.group(2))
    if m.group(3):
        return _on_clock(hour, minute, _half(m.group(3)))
    return hour, minute


def _past_to(m: re.Match) -> tuple[int, int] | None:
    minutes = 30 if m.group(1) == "half" else 15
    hour_minute = _on_clock(int(m.group(3)), 0, None)
    if hour_minute is None:
        return None
    if m.group(2) == "to":
        return hour_minute[0] - 1, 60 - minutes
    return hour_minute[0], minutes


def _ko_hour(m: re.Match) -> tuple[int, int] | None:
    hour = int(m.group(2))
    minute = 30 if m.group(4) else int(m.group(3) or 0)
    part = _KO_PARTS.get(m.group(1) or "")
    if m.group(1) == "밤" and hour == 12:
        return 0, minute
    if part is not None and hour > 12:
        return (hour, minute) if part == "pm" else None
    return _on_clock(hour, minute, part) if hour <= 12 else (hour, minute)


_TIME_READERS: dict[str, Callable[[re.Match], tuple[int, int] | None]] = {
    "clock": _clock,
    "meridiem": lambda m: _on_clock(int(m.group(1)), int(m.group(2) or 0), _half(m.group(3))),
    "named": lambda m: (12, 0) if m.group(1) in ("noon", "midday", "정오") else (0, 0),
    "past_to": _past_to,
    "part_of_day": lambda m: _on_clock(int(m.group(1)), int(m.group(2) or 0),
                                       "am" if m.group(3) == "morning" else "pm"),
    "bare": lambda m: _on_clock(int(m.group(1)), int(m.group(2) or 0)
                                if (m.lastindex or 0) > 1 else 0, None),
    "ko_hour": _ko_hour,
}
