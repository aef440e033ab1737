"""Diagnostics: the catalogue of codes, the `Diagnostic` record and the collector.

Passes report problems here with a code, a JSON pointer and message arguments; they never
format output. The collector keeps every report (no fail-fast), attaches line and column
from the source locator once at the end, and sorts by position. All message wording lives
in `CATALOGUE`, one entry per code.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable

ERROR = "error"
WARNING = "warning"

# code -> (severity, short title used in the README table and `mgc schema`)
CATALOGUE: dict[str, tuple[str, str]] = {
    "E001": (ERROR, "not valid JSON"),
    "E002": (ERROR, "top level is not an object, or is empty"),
    "E010": (ERROR, "unknown field"),
    "E011": (ERROR, "missing required field"),
    "E012": (ERROR, "wrong JSON type or out-of-range value"),
    "E013": (ERROR, "field removed in scenario v2"),
    "E101": (ERROR, "duplicate node id"),
    "E102": (ERROR, "graph.entry does not name a node"),
    "E103": (ERROR, "unknown target node"),
    "E104": (ERROR, "transition needs exactly one of target/action"),
    "E105": (ERROR, "undeclared slot"),
    "E106": (ERROR, "invalid slot definition"),
    "E107": (ERROR, "invalid params value"),
    "E201": (ERROR, "unknown condition field"),
    "E202": (ERROR, "unknown operator"),
    "E203": (ERROR, "operator not applicable to the field's type"),
    "E204": (ERROR, "value of the wrong type or not a member"),
    "E205": (ERROR, "expression syntax error"),
    "E206": (ERROR, "malformed condition object"),
    "E301": (ERROR, "node cannot reach any end node"),
    "E302": (ERROR, "the graph has no end node"),
    "W401": (WARNING, "node unreachable from the entry"),
    "W402": (WARNING, "isolated node"),
    "W403": (WARNING, "transition shadowed by an earlier unconditional one"),
    "W404": (WARNING, "condition can never be true"),
    "W405": (WARNING, "declared slot or intent never used"),
    "W406": (WARNING, "cycle of unconditional transitions"),
}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One reported problem, located by JSON pointer and (once located) line and column."""

    code: str
    message: str
    path: str = ""
    hint: str | None = None
    line: int | None = None
    column: int | None = None
    # Offset inside a string value (expression errors): the column points into the string.
    string_offset: int | None = None
    # The problem is the member's key itself (an unknown field): point at the key, not its value.
    at_key: bool = False

    @property
    def severity(self) -> str:
        return CATALOGUE[self.code][0]

    def as_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "hint": self.hint,
        }


@dataclass
class Diagnostics:
    """Collector: passes `report`; the driver locates, sorts and counts."""

    items: list[Diagnostic] = field(default_factory=list)
    # Pointers whose value the schema pass rejected or found missing: the problem is reported
    # there once, and later passes do not judge what depends on it (SPEC 3: one report each).
    rejected: set[str] = field(default_factory=set)

    def report(
        self,
        code: str,
        message: str,
        path: str = "",
        hint: str | None = None,
        string_offset: int | None = None,
        at_key: bool = False,
    ) -> None:
        if code not in CATALOGUE:
            raise KeyError(f"unknown diagnostic code {code}")
        self.items.append(Diagnostic(code, printable(message), path, printable(hint),
                                     string_offset=string_offset, at_key=at_key))

    def report_at(self, code: str, message: str, line: int, column: int,
                  hint: str | None = None) -> None:
        """A problem with no JSON pointer, only a place in the text (E001)."""
        self.items.append(Diagnostic(code, printable(message), "", printable(hint), line, column))

    def extend(self, items: Iterable[Diagnostic]) -> None:
        self.items.extend(items)

    @property
    def errors(self) -> int:
        return sum(1 for d in self.items if d.severity == ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.items if d.severity == WARNING)

    def has_errors(self) -> bool:
        return any(d.severity == ERROR for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        def key(d: Diagnostic):
            return (d.line or 0, d.column or 0, d.code, d.path)

        return sorted(self.items, key=key)


def printable(text: str | None) -> str | None:
    """`text` on one printable line: names quoted from the scenario may hold a newline or a
    terminal escape; those characters are written as Python escapes (`\\n`, `\\x1b`)."""
    if text is None or text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate a misspelled name most likely meant, or None when nothing is close."""
    if not isinstance(name, str):
        return None
    pool = sorted(set(candidates))
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if close:
        return close[0]
    lowered = {c.lower(): c for c in pool}
    return lowered.get(name.lower())


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """The hint for a misspelled name, or None when nothing is close."""
    match = closest(name, candidates)
    return f"did you mean '{match}'?" if match else None


def _escape(part: object) -> str:
    text = str(part)
    if "~" in text or "/" in text:
        text = text.replace("~", "~0").replace("/", "~1")
    return text


def pointer(*parts: object) -> str:
    """JSON pointer (RFC 6901) from path parts."""
    return "".join(["/" + _escape(part) for part in parts])


def join(base: str, *parts: object) -> str:
    return base + "".join(["/" + _escape(part) for part in parts])
