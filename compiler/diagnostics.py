"""Diagnostics: the catalogue of codes, the `Diagnostic` record, the collector, and the
did-you-mean hints (`Names`).

Passes report problems here with a code, a JSON pointer and message arguments; they never
format output. The collector keeps every report (no fail-fast), attaches line and column
from the source locator once at the end, and sorts by position. All message wording lives
in `CATALOGUE`, one entry per code. A did-you-mean looks an unknown name up in the `Names`
of its kind, built once per compile, at a cost bounded per lookup and per kind.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, islice
from collections.abc import Iterable, Sequence
from typing import Any, overload

ERROR = "error"
WARNING = "warning"

# code -> (severity, short title used in the docs' diagnostics table and `mgc schema`)
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
    "E108": (ERROR, "invalid profile declaration, slot default or list slot"),
    "E109": (ERROR, "transient node that may not leave"),
    "E110": (ERROR, "invalid safety category (unknown or duplicate)"),
    "E111": (ERROR, "invalid response variants (empty list, empty or repeated variant)"),
    "E112": (ERROR, "placeholder with an unknown root or field, or a lone brace"),
    "E113": (ERROR, "undeclared skill or argument, or invalid skill declaration"),
    "E114": (ERROR, "invalid set, route group, routes, labels, normalize or bounds"),
    "E201": (ERROR, "unknown condition field"),
    "E202": (ERROR, "unknown operator"),
    "E203": (ERROR, "operator not applicable to the field's type"),
    "E204": (ERROR, "value of the wrong type or not a member"),
    "E205": (ERROR, "expression syntax error"),
    "E206": (ERROR, "malformed condition object"),
    "E301": (ERROR, "node cannot reach any end node"),
    "E302": (ERROR, "the graph has no end node"),
    "E303": (ERROR, "cycle made only of transient nodes"),
    "W401": (WARNING, "node unreachable from the entry"),
    "W402": (WARNING, "isolated node"),
    "W403": (WARNING, "transition shadowed by an earlier unconditional one"),
    "W404": (WARNING, "condition can never be true"),
    "W405": (WARNING, "declared slot or intent never used"),
    "W406": (WARNING, "cycle of unconditional transitions"),
    "W407": (WARNING, "node with only stay routes inferred as an end node"),
    "W408": (WARNING, "not_understood response that can never be said"),
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

    def as_json(self) -> dict[str, Any]:
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

    def has_errors(self, since: int = 0) -> bool:
        """Whether an error is among the reports, or among those after the first `since`."""
        return any(d.severity == ERROR for d in self.items[since:])

    def sorted(self) -> list[Diagnostic]:
        def key(d: Diagnostic) -> tuple[int, int, str, str]:
            return (d.line or 0, d.column or 0, d.code, d.path)

        return sorted(self.items, key=key)


@overload
def printable(text: str) -> str: ...
@overload
def printable(text: None) -> None: ...
def printable(text: str | None) -> str | None:
    """`text` on one printable line: names quoted from the scenario may hold a newline or a
    terminal escape; those characters are written as Python escapes (`\\n`, `\\x1b`)."""
    if text is None or text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


# Did-you-mean. A suggestion is the known name most similar to the unknown one by difflib's
# ratio (at least SIMILARITY: the answer of `difflib.get_close_matches(name, known, 1, 0.6)`),
# else the known name equal to it ignoring case. Comparing every unknown name with every known
# one is quadratic, so the work is bounded per lookup and per kind of name (docs/guides/checking.md, "Diagnostics"):
SIMILARITY = 0.6
MAX_COMPARED = 32  # the names of a compatible length are all compared when at most this
#                    many (then the answer is exactly difflib's over the whole pool) ...
SHORTLIST = 16  # ... else only this many: those sharing the most trigrams with the unknown name,
MAX_SCANNED = 1024  # counted over this many trigram index entries, the rarest trigrams first
MAX_NAME_LENGTH = 100  # a longer name is no identifier's typo: only matched ignoring case
WORK_BUDGET = 2_000_000  # per pool (one kind of name, one compile), in character steps: an index
#                    entry read is 1, a quick bound len(a) + len(b), a ratio len(a) * len(b);
#                    once spent, the names left are only matched ignoring case
LISTED = 12  # names shown when a hint lists the known ones


class Names:
    """The known names of one kind (node ids, slots, condition fields, the members of one
    closed set) that an unknown name may be a misspelling of.

    Built once per kind and compile from any iterable (non-strings are left out), then asked
    for each unknown name: `closest` answers each distinct name once, from the names whose
    length allows the ratio, narrowed by a trigram index when they are many, within the
    pool's work budget. It is also the set of its names (`in`, `len`) and lists them, sorted,
    for a hint (`listing`).
    """

    def __init__(self, names: Iterable[object], budget: int = WORK_BUDGET) -> None:
        self.names = sorted({name for name in names if isinstance(name, str)})
        self._members = frozenset(self.names)
        self._lowered = {name.lower(): name for name in self.names}  # the last of equal ones wins
        self._by_length: dict[int, list[str]] = {}
        for name in self.names:
            self._by_length.setdefault(len(name), []).append(name)
        self._windows: dict[int, tuple[frozenset[int], int]] = {}  # by length of unknown name
        self._trigrams: dict[str, list[str]] | None = None  # built when first needed
        self._answers: dict[str, str | None] = {}
        self.budget = budget

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._members

    def __len__(self) -> int:
        return len(self.names)

    def listing(self) -> str:
        """The names for a hint, in sorted order (`name_list`)."""
        return name_list(self.names)

    def closest(self, name: object) -> str | None:
        """The name `name` most likely stands for, or None when nothing is close."""
        if not isinstance(name, str):
            return None
        if name not in self._answers:
            self._answers[name] = self._most_similar(name) or self._lowered.get(name.lower())
        return self._answers[name]

    def _most_similar(self, name: str) -> str | None:
        if len(name) > MAX_NAME_LENGTH or self.budget <= 0:
            return None
        lengths, count = self._window(len(name))
        if count <= MAX_COMPARED:
            compared = [known for length in lengths for known in self._by_length[length]]
        else:
            compared = self._sharing_trigrams(name, lengths)
        match, work = best_match(name, compared)
        self.budget -= work
        return match

    def _window(self, name_length: int) -> tuple[frozenset[int], int]:
        """The lengths a name of `name_length` can be close to, and how many names have them."""
        if name_length not in self._windows:
            lengths = frozenset(n for n in self._by_length if _length_allows(n, name_length))
            self._windows[name_length] = lengths, sum(len(self._by_length[n]) for n in lengths)
        return self._windows[name_length]

    def _sharing_trigrams(self, name: str, lengths: frozenset[int]) -> list[str]:
        """Up to SHORTLIST names of an allowed length sharing the most trigrams with `name`,
        counted over at most MAX_SCANNED index entries, the rarest trigrams' first."""
        index = self._trigram_index()
        postings = sorted((index[g] for g in trigrams(name) if g in index), key=len)
        scanned, room = [], MAX_SCANNED
        for names in postings:
            scanned.append(names[:room])
            room -= len(scanned[-1])
            if room <= 0:
                break
        self.budget -= MAX_SCANNED - room
        ranked = Counter(chain.from_iterable(scanned)).most_common()  # ties: first scanned first
        return list(islice((known for known, _ in ranked if len(known) in lengths), SHORTLIST))

    def _trigram_index(self) -> dict[str, list[str]]:
        if self._trigrams is None:
            self._trigrams = {}
            for known in self.names:
                for gram in trigrams(known):
                    self._trigrams.setdefault(gram, []).append(known)
        return self._trigrams


def best_match(name: str, candidates: Iterable[str]) -> tuple[str | None, int]:
    """`difflib.get_close_matches(name, candidates, n=1, cutoff=SIMILARITY)`'s answer (the
    greatest (ratio, candidate) with a ratio of at least SIMILARITY) and the work it took.
    A candidate whose quick upper bounds on the ratio cannot reach the best so far is not
    scored, which changes the cost and never the answer."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(name)
    best: tuple[float, str] | None = None
    work = 0
    for known in candidates:
        floor = SIMILARITY if best is None else best[0]
        matcher.set_seq1(known)
        work += len(name) + len(known)
        if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
            continue
        work += len(name) * len(known)
        score = matcher.ratio()
        if score >= floor and (best is None or (score, known) > best):
            best = (score, known)
    return (None if best is None else best[1]), work


def name_list(names: Sequence[str], limit: int = LISTED) -> str:
    """The first `limit` names, and how many there are in all when not every one is shown."""
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def trigrams(name: str) -> set[str]:
    """The three-character pieces of `name`, with its start and end marked."""
    padded = f"\0{name}\0"
    return {padded[i:i + 3] for i in range(len(padded) - 2)}


def _length_allows(length: int, name_length: int) -> bool:
    """Whether names of `length` can be SIMILARITY-close to a name of `name_length`: difflib's
    real_quick_ratio bound, 2 * min / sum (lengths within a factor 7/3 at 0.6)."""
    total = length + name_length
    return (2.0 * min(length, name_length) / total if total else 1.0) >= SIMILARITY


def closest(name: object, candidates: Names | Iterable[str]) -> str | None:
    """The candidate a misspelled name most likely meant, or None when nothing is close.
    `candidates` is a `Names` pool, or a few names (a small pool is made for the one call)."""
    pool = candidates if isinstance(candidates, Names) else Names(candidates)
    return pool.closest(name)


def did_you_mean(name: object, candidates: Names | Iterable[str]) -> str | None:
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
