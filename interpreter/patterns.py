"""Regular expressions written by scenario authors, with a bounded matching time: one rule for
the compiler (slot `pattern`: E106, intent `patterns`: E012) and the interpreter (the slot
rules, the rules NLU and the IR loader refuse the same patterns).

Python's `re` backtracks: when the parts of a pattern can read the same text in several
ways, a match that fails tries them all. `^(a+)+$` against 'a' * 28 + '!' takes 11 s;
`a*a*a*a*b` takes a power of the text's length. A timeout would make a turn's outcome depend
on the machine's load, so the rule is static, and the text a pattern reads is capped.

1. `problem(pattern, use)` reads the pattern as `re` parsed it (`re._parser`) as an
   automaton with one state per character position (Glushkov's construction; a repeat's way
   back is an edge of its own, so a repeat in a repeat gives two parallel edges, and an
   alternation of two empty branches two ways through) and refuses, in this order:
   - a backreference inside a repeat (no automaton describes it; it can be exponential);
   - exponential ambiguity: a state that can be left and reached again along two different
     paths reading the same text (`(a+)+`, `(a|a)*`, `(a*b*)*`, `(a|ab|b)*`, `(\\w+\\s?)+`);
   - a repeat whose repeated part can match the empty text (`(a?)*`: `re` then has several
     ways to stop the loop);
   - a cost degree above `MAX_COST_DEGREE`. With d the polynomial degree of ambiguity (the
     longest chain of repeats that can take turns on the same text, minus one: 0 for
     `\\d+-\\d+`, 1 for `.*a.*b`), a failing match tries about n**(d + 1) paths on a text of n
     characters, and a search one factor more (it tries every start) unless the pattern
     starts with `^`. A search stops at the first path that reaches the end of the pattern,
     so a repeat after the last needed character does not count (`.*취소.*`). A lookaround
     with a repeat counts like a pattern of its own: added once per start, multiplied when it
     sits in or after a repeat. With MAX_COST_DEGREE 2 (at most quadratic), a slot pattern
     may have two repeats that take turns (`.*@.*`), an intent pattern none (`예약.*취소`
     passes, `.*예약.*취소` does not: its leading `.*` is what the search already does);
   - more than `MAX_WAYS` ways through the parts that are no loop: the largest product, along
     a path, of how many next positions can read the same character (`a?a?a?a?aaaa`).
   Anchors and lookarounds are no positions (the automaton then matches more: the rule errs
   on the side of refusing), atomic groups and possessive repeats count as ordinary ones, a
   bounded repeat is unrolled when small (`\\d{3,4}`) and read as an unbounded one otherwise
   (`.{0,40}` as `.*`), which matches in no fewer ways.
2. The text is capped, so that an accepted (at most quadratic) cost stays small: a slot
   value longer than `MAX_VALUE_CHARS` is not matched (the value is refused, reason
   `pattern`); an intent pattern searches the first `MAX_SEARCH_CHARS` characters of the
   utterance only. The worst cases measured at these caps take a few milliseconds
   (tests/test_patterns.py checks a generous bound on adversarial text).

The analysis is deterministic and bounded too: a pattern with more than `MAX_POSITIONS`
character positions, or whose analysis takes more than `MAX_WORK` steps, is refused as too
complex to check.
"""

from __future__ import annotations

import array
import copy
import functools
import re
from typing import Iterable, NamedTuple

from re import _casefix, _constants as _c, _parser as _sre  # the parser `re` itself uses

MAX_COST_DEGREE = 2  # a failing match tries at most about n**2 paths on n characters
MAX_VALUE_CHARS = 500  # a longer slot value is not matched against the slot's pattern
MAX_SEARCH_CHARS = 500  # an intent pattern searches the utterance's first characters only
MAX_WAYS = 32  # ways through the parts of a pattern that are no loop
MAX_POSITIONS = 1000  # character positions, after unrolling
MAX_WORK = 400_000  # steps of the analysis
UNROLL = 32  # a bounded repeat x{m,n} with n - m <= 2 and n * |x| <= UNROLL is unrolled

_INF = _c.MAXREPEAT
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT)
_ALL = ((0, 0x10FFFF),)


class Use(NamedTuple):
    """How a pattern is run: `fullmatch` against a slot value, or searched in an utterance."""

    flags: int
    search: bool
    what: str  # "pattern" or "intent pattern", for messages


SLOT = Use(0, False, "pattern")
INTENT = Use(re.IGNORECASE, True, "intent pattern")


class Problem(NamedTuple):
    """Why a pattern is refused; `hint` is None for a syntax error (the caller has one)."""

    message: str
    hint: str | None = None
    invalid: bool = False  # not a regular expression at all


class PatternError(ValueError):
    """A pattern `compile_pattern` refuses; the message is one line."""


@functools.lru_cache(maxsize=1024)
def problem(pattern: str, use: Use) -> Problem | None:
    """Why `pattern` cannot be used as `use` says, or None when it is accepted."""
    try:
        re.compile(pattern, use.flags)
        tree = _sre.parse(pattern, use.flags)
    except RecursionError:
        return Problem("nested too deeply", invalid=True)
    except (re.error, OverflowError, ValueError) as error:
        return Problem(str(error).splitlines()[0] if str(error) else type(error).__name__,
                       invalid=True)
    try:
        return _Analysis(pattern, tree, use).problem()
    except (_TooComplex, RecursionError):
        return Problem(f"{use.what} is too complex to check for its matching time",
                       "split it into several simpler patterns")


def compile_pattern(pattern: str, use: Use) -> re.Pattern:
    """`pattern` compiled for `use`, or `PatternError` saying why it is refused."""
    found = problem(pattern, use)
    if found is not None:
        detail = f"invalid regex: {found.message}" if found.invalid else found.message
        raise PatternError(detail + (f"; {found.hint}" if found.hint else ""))
    return re.compile(pattern, use.flags)


def fullmatches(regex: re.Pattern, text: str) -> bool:
    """Whether a slot value matches its pattern; a value over `MAX_VALUE_CHARS` never does."""
    return len(text) <= MAX_VALUE_CHARS and regex.fullmatch(text) is not None


def searched(text: str) -> str:
    """The part of an utterance intent patterns are searched in."""
    return text[:MAX_SEARCH_CHARS]


# --- character classes as sorted, merged tuples of (low, high) code point ranges ------------


def _merge(ranges) -> tuple:
    out: list[list[int]] = []
    for low, high in sorted(ranges):
        if out and low <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], high)
        else:
            out.append([low, high])
    return tuple((low, high) for low, high in out)


def _complement(ranges: tuple) -> tuple:
    out, start = [], 0
    for low, high in ranges:
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= 0x10FFFF:
        out.append((start, 0x10FFFF))
    return tuple(out)


def _meet(a: tuple, b: tuple) -> tuple:
    """The intersection of two classes."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if low <= high:
            out.append((low, high))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


# Where `\\d`, `\\w` and `\\s` can match: every character they match lies in planes 0-3 or in
# the first block of plane 14 (the rest is unassigned or private use; a test checks this).
_CATEGORY_BLOCKS = ((0, 0x3FFFF), (0xE0000, 0xE0FFF))


@functools.cache
def _blocks() -> tuple[tuple[int, str], ...]:
    return tuple((low, array.array("I", range(low, high + 1)).tobytes()
                  .decode("utf-32-le", "surrogatepass")) for low, high in _CATEGORY_BLOCKS)


@functools.cache
def _category(source: str, flags: int) -> tuple:
    """The code points `\\d`, `\\w`, `\\s` (or their negations) match, read from `re` itself."""
    if source.isupper():
        return _complement(_category(source.lower(), flags))
    regex = re.compile(f"{source}+", flags)
    return tuple((low + m.start(), low + m.end() - 1)
                 for low, block in _blocks() for m in regex.finditer(block))


_CATEGORIES = {_c.CATEGORY_DIGIT: r"\d", _c.CATEGORY_NOT_DIGIT: r"\D", _c.CATEGORY_SPACE: r"\s",
               _c.CATEGORY_NOT_SPACE: r"\S", _c.CATEGORY_WORD: r"\w", _c.CATEGORY_NOT_WORD: r"\W"}
_EXTRA_CASES: dict[int, tuple[int, ...]] = _casefix._EXTRA_CASES  # 'ſ' with 's', ...
_SCANNED_RANGE = 0x3000  # a wider range under IGNORECASE looks up its cased characters


def _case_variants(code: int) -> set[int]:
    """`code` and the code points IGNORECASE matches with it (Unicode case mappings)."""
    char = chr(code)
    found = {code}
    for variant in (char.lower(), char.upper(), char.casefold(), char.lower().upper()):
        if len(variant) == 1:
            found.add(ord(variant))
    lower = char.lower()
    if len(lower) == 1:
        found.update(_EXTRA_CASES.get(ord(lower), ()))
    return found


def _literal_ranges(code: int, flags: int) -> tuple:
    if flags & re.IGNORECASE:
        return _merge((c, c) for c in _case_variants(code))
    return ((code, code),)


def _set_ranges(items, flags: int) -> tuple:
    """The class of an `IN` set: literals, ranges and categories, maybe negated."""
    ranges: list[tuple[int, int]] = []
    negate = False
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            ranges += _literal_ranges(av, flags)
        elif op is _c.RANGE:
            ranges += _range_ranges(av[0], av[1], flags)
        elif op is _c.CATEGORY and av in _CATEGORIES:
            ranges += _category(_CATEGORIES[av], flags & re.ASCII)
        else:  # an unknown member: it may match anything
            ranges.append(_ALL[0])
    merged = _merge(ranges)
    return _complement(merged) if negate else merged


def _range_ranges(low: int, high: int, flags: int) -> tuple:
    if not flags & re.IGNORECASE:
        return ((low, high),)
    if high - low <= _SCANNED_RANGE:
        block = "".join(map(chr, range(low, high + 1)))
        if block.lower() == block == block.upper():  # Hangul, digits: no case to fold
            return ((low, high),)
        codes: Iterable[int] = range(low, high + 1)
    else:
        codes = [c for c in _cased() if low <= c <= high]
    return _merge([(low, high)] + [(c, c) for code in codes if _has_case(code)
                                   for c in _case_variants(code)])


def _has_case(code: int) -> bool:
    char = chr(code)
    return char.lower() != char or char.upper() != char or code in _EXTRA_CASES


@functools.cache
def _cased() -> tuple[int, ...]:
    """The code points with a case mapping (all in the category blocks), for wide ranges."""
    return tuple(low + i for low, block in _blocks() for i, char in enumerate(block)
                 if char.lower() != char or char.upper() != char)


def _class_of(op, av, flags: int) -> tuple:
    if op is _c.LITERAL:
        return _literal_ranges(av, flags)
    if op is _c.NOT_LITERAL:
        return _complement(_literal_ranges(av, flags))
    if op is _c.ANY:
        return _ALL if flags & re.DOTALL else _complement(((10, 10),))
    if op is _c.CATEGORY:
        return _set_ranges([(op, av)], flags)
    return _set_ranges(av, flags)


_ATOMS = frozenset((_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN, _c.CATEGORY))


# --- the automaton -------------------------------------------------------------------------


class _TooComplex(Exception):
    pass


class _Frag(NamedTuple):
    """A part of the automaton: its entry and exit positions, and in how many ways it matches
    the empty text (0, 1, or 2 for "several": `(?:|)` gives two ways `re` tries in turn)."""

    first: list
    last: list
    empty_ways: int


_EMPTY = _Frag([], [], 1)


class _Automaton:
    """Glushkov's automaton of a parsed pattern: state 0 starts, states 1.. are positions.
    `follow[s]` lists the states after `s`, with one entry per edge (parallel edges kept)."""

    def __init__(self, items, flags: int, groups: dict | None = None):
        self.classes: list[int] = [-1]  # state -> class index
        self.class_table: list[tuple] = []
        self._class_index: dict[tuple, int] = {}
        self.follow: list[list[int]] = [[]]
        self.loop_of: list = [None]  # state -> the innermost repeat whose loop holds it
        self.repeats: list = []  # (repeat item, flags), innermost first
        self.lookarounds: list = []  # (body items, flags)
        self.lookaround_items: list = []  # (item, whether it can be tried more than once a start)
        self.backref: tuple | None = None  # (group, repeat item) of a backreference in a repeat
        self.groups = groups if groups is not None else {}
        self._open_repeats: list = []
        self.zero_width = False  # an anchor or lookaround: a last position may not end a match
        self.empty_repeat = None  # the first repeat whose repeated part can match nothing
        frag = self.sequence(items, flags)
        self.follow[0] = list(frag.first)
        self.final = frozenset(frag.last)

    @property
    def size(self) -> int:
        return len(self.follow)

    def rerouted(self, follow: list[list[int]]) -> _Automaton:
        """The same positions with other edges."""
        other = copy.copy(self)
        other.follow = follow
        return other

    def _position(self, ranges: tuple) -> _Frag:
        if len(self.follow) > MAX_POSITIONS:
            raise _TooComplex
        index = self._class_index.setdefault(ranges, len(self.class_table))
        if index == len(self.class_table):
            self.class_table.append(ranges)
        state = len(self.follow)
        self.classes.append(index)
        self.follow.append([])
        self.loop_of.append(None)
        return _Frag([state], [state], 0)

    def sequence(self, items, flags: int) -> _Frag:
        frag = _EMPTY
        for op, av in items:
            frag = self._concat(frag, self.item(op, av, flags))
        return frag

    def _concat(self, a: _Frag, b: _Frag) -> _Frag:
        for state in a.last:
            self.follow[state].extend(b.first)
        return _Frag(a.first + b.first * a.empty_ways, b.last + a.last * b.empty_ways,
                     min(2, a.empty_ways * b.empty_ways))

    def item(self, op, av, flags: int) -> _Frag:
        if op in _ATOMS:
            return self._position(_class_of(op, av, flags))
        if op is _c.SUBPATTERN:
            group, add, remove, items = av
            inner = (flags | add) & ~remove
            if group is not None:
                self.groups[group] = (items, inner)
            return self.sequence(items, inner)
        if op is _c.BRANCH:
            return self._union([self.sequence(items, flags) for items in av[1]])
        if op is _c.GROUPREF_EXISTS:
            return self._union([self.sequence(av[1], flags),
                                self.sequence(av[2], flags) if av[2] else _EMPTY])
        if op in _REPEATS:
            return self._repeat((op, av), flags)
        if op is _c.ATOMIC_GROUP:
            return self.sequence(av, flags)
        if op is _c.GROUPREF:
            return self._backreference(av)
        if op in (_c.ASSERT, _c.ASSERT_NOT):
            self.lookarounds.append((av[1], flags))
            repeated = bool(self._open_repeats) or any(self.loop_of)
            self.lookaround_items.append(((op, av), repeated))
        self.zero_width = True
        return _EMPTY  # anchors, lookarounds: no character of their own

    def _union(self, frags: list[_Frag]) -> _Frag:
        return _Frag([s for f in frags for s in f.first], [s for f in frags for s in f.last],
                     min(2, sum(f.empty_ways for f in frags)))

    def _backreference(self, group: int) -> _Frag:
        if self._open_repeats and self.backref is None:
            self.backref = (group, self._open_repeats[0])
        items, flags = self.groups.get(group, ((), 0))
        return self.sequence(items, flags)  # the text the group matched, read again

    def _repeat(self, item, flags: int) -> _Frag:
        low, high, body = item[1]
        if high == 0:
            return _EMPTY
        counted = high > 1
        if counted:
            self._open_repeats.append(item)
        start = self.size
        once = self.sequence(body, flags)
        width = self.size - start
        if counted:
            self._open_repeats.pop()
        if high == 1:
            return _optional(once) if low == 0 else once
        if once.empty_ways and self.empty_repeat is None:
            self.empty_repeat = item
        self.repeats.append((item, flags))
        if high != _INF and high - low <= 2 and high * width <= UNROLL:
            return self._unrolled(once, low, high, body, flags)
        before = low - 1 if 1 < low and low * width <= UNROLL else 0  # x{3,} as x x x+
        copies = [self.sequence(body, flags) for _ in range(before)]
        return self._concat_all(copies + [self._loop(item, once, range(start, start + width))])

    def _loop(self, item, once: _Frag, states: range) -> _Frag:
        """`once` (built as `states`) repeated: x+, or x* when the repeat may be skipped; a
        larger bounded repeat counts as an unbounded one (it matches no fewer ways)."""
        low = item[1][0]
        for state in once.last:  # the way back: an edge of its own
            self.follow[state].extend(once.first)
        for state in states:
            if self.loop_of[state] is None:
                self.loop_of[state] = item
        # `re` may stop a loop whose body matched nothing after one more, empty, round:
        # a body that can match the empty text gives the loop several empty ways.
        return _Frag(once.first, once.last, 2 if once.empty_ways else 1 if low == 0 else 0)

    def _concat_all(self, frags: list[_Frag]) -> _Frag:
        out = _EMPTY
        for frag in frags:
            out = self._concat(out, frag)
        return out

    def _unrolled(self, once: _Frag, low: int, high: int, body, flags: int) -> _Frag:
        """x{low,high} as x...x (x (x ...)?)?: the counter of `re` as states."""
        copies = [once] + [self.sequence(body, flags) for _ in range(high - 1)]
        tail = _EMPTY
        for copy in reversed(copies[low:]):
            tail = _optional(self._concat(copy, tail))
        return self._concat(self._concat_all(copies[:low]), tail)


def _optional(frag: _Frag) -> _Frag:
    """`x?`: skipped, or x (which may itself match the empty text)."""
    return _Frag(frag.first, frag.last, min(2, frag.empty_ways + 1))


# --- the analysis --------------------------------------------------------------------------


class _Analysis:
    """The verdict on one parsed pattern for one use."""

    def __init__(self, pattern: str, tree, use: Use):
        self.tree, self.use = tree, use
        self.shown = pattern if len(pattern) <= 60 else pattern[:60] + "…"
        self.flags = tree.state.flags
        self.work = 0
        self.main = _Automaton(list(tree), self.flags)
        self.lookarounds = [_Automaton(items, flags, self.main.groups)
                            for items, flags in self.main.lookarounds]

    def problem(self) -> Problem | None:
        main, head = self.main, f"{self.use.what} {self.shown}"
        if main.backref is not None:
            group, repeat = main.backref
            return Problem(f"{head}: backreference \\{group} inside the repeat {_show([repeat])} "
                           "can take exponential time", "match the repeated text without a backreference")
        for automaton in (main, *self.lookarounds):
            if _Pairs(self, automaton).exponential:
                return self._exponential_problem(automaton)
        empty = next((a.empty_repeat for a in (main, *self.lookarounds) if a.empty_repeat), None)
        if empty is not None:
            return _empty_repeat_problem(head, empty)
        runs = self._runs()
        degree, chain = max((self.degree(run) for run in runs), key=lambda found: found[0])
        search = 1 if self.use.search and not self._anchored() else 0
        if degree + 1 + search > MAX_COST_DEGREE:
            return self._polynomial_problem(chain, MAX_COST_DEGREE - search)
        slow = self._slow_lookaround(degree + 1, search)
        if slow is not None:
            return Problem(f"{head} can take too long to match: the lookaround {_show([slow])} "
                           "scans the text again wherever it is tried",
                           "move the repeat out of the lookaround, or try it once: put it "
                           "first in a pattern that starts with `^`")
        if max(self.ways(run) for run in (*runs, *self.lookarounds)) > MAX_WAYS:
            return Problem(f"{head} can take too long to match: its optional parts and "
                           f"alternatives can read the same text in more than {MAX_WAYS} ways",
                           "make them match different text (e.g. write `a{0,3}` for `a?a?a?`, "
                           "`ab?` for `(?:a|ab)`)")
        return None

    def ways(self, a: _Automaton) -> int:
        """A bound on the routes a text can take through the parts of the automaton that are
        no loop (loops are the degree's business): the largest product, along a path between
        loops, of how many next states can read the same character."""
        graph = {s: list(set(a.follow[s])) for s in range(a.size)}
        components = _components(graph)
        part = {state: i for i, component in enumerate(components) for state in component}
        meets = _Meets(a.class_table)
        best = [0] * len(components)
        best[part[0]] = 1
        for i in reversed(range(len(components))):  # topological order: predecessors first
            if not best[i]:
                continue
            for state in components[i]:
                leaving = [t for t in a.follow[state] if part[t] != i]
                factor = self._choices(a, meets, leaving, len(leaving) < len(a.follow[state]))
                for t in leaving:
                    best[part[t]] = max(best[part[t]], best[i] * factor)
        return max(best)

    def _choices(self, a: _Automaton, meets, leaving: list[int], stays: bool) -> int:
        """How many of the next states (staying in the loop counts once) can read the same
        character, at most."""
        self.spend(len(leaving) ** 2)
        return max((sum(meets.pair(a.classes[s], a.classes[t]) for t in leaving) + stays
                    for s in leaving), default=1)

    def _runs(self) -> list[_Automaton]:
        """The automata whose paths a failing match tries. A search ends at the first path
        that reaches a last position (without anchors or lookarounds, nothing can undo it):
        it tries the paths up to one, then what can follow that one."""
        main = self.main
        if not self.use.search or main.zero_width:
            return [main]
        before = main.rerouted([[] if s in main.final else f for s, f in enumerate(main.follow)])
        after = main.rerouted([sorted(main.final)] + main.follow[1:])
        return [before, after]

    def _slow_lookaround(self, cost: int, search: int):
        """The lookaround that makes the cost too high, or None. A lookaround with a repeat
        costs like a pattern of its own each time it is tried: once per start when nothing
        repeated comes before it (the costs add up), else once per path reaching it (they
        multiply)."""
        added = multiplied = 0
        for automaton, (item, repeated) in zip(self.lookarounds, self.main.lookaround_items):
            if not any(automaton.loop_of):
                continue
            own = self.degree(automaton)[0] + 1
            if repeated:
                multiplied = max(multiplied, own)
            else:
                added = max(added, own)
            if max(cost, added) + multiplied + search > MAX_COST_DEGREE:
                return item
        return None

    def _anchored(self) -> bool:
        """A search of a pattern that starts with `^` (no MULTILINE) or `\\A` tries one start."""
        first = self.tree[0] if len(self.tree) else None
        if first is None or first[0] is not _c.AT:
            return False
        return first[1] is _c.AT_BEGINNING_STRING or (
            first[1] is _c.AT_BEGINNING and not self.flags & re.MULTILINE)

    def spend(self, steps: int) -> None:
        self.work += steps
        if self.work > MAX_WORK:
            raise _TooComplex

    def _exponential_problem(self, a: _Automaton) -> Problem:
        culprit = next((item for item, flags in a.repeats
                        if _Pairs(self, _Automaton([item], flags, a.groups)).exponential), None)
        shown = _show([culprit]) if culprit is not None else self.shown
        simpler = _single_repeat(culprit) if culprit is not None else None
        head = f"{self.use.what} {self.shown} can take exponential time to match"
        if simpler is not None:
            return Problem(head, f"nested quantifier {shown} can take exponential time; "
                                 f"write {simpler}")
        return Problem(f"{head}: the repeat {shown} can match the same text in several ways",
                       "make every repetition match its text in one way only: e.g. write "
                       "`\\w+(?:\\s\\w+)*` for `(\\w+\\s?)+`, `a+` for `(a|a)+`")

    # polynomial ambiguity: chains of repeats that can take turns on the same text

    def degree(self, a: _Automaton) -> tuple[int, list]:
        """(d, repeats): the degree of polynomial ambiguity (the automaton has no exponential
        one) and the repeats of its longest chain."""
        meets = _Meets(a.class_table)
        graph = {s: list(set(a.follow[s])) for s in range(a.size)}
        reach = _reachability(graph)
        loops = [c for c in _components(graph) if (len(c) > 1 or c[0] in graph[c[0]])
                 and reach[0] >> c[0] & 1]  # the loops a match can come to
        best: list[tuple[int, list]] = []
        for i, loop in enumerate(loops):  # reverse topological order: successors first
            found = (0, [loop[0]])
            for j in range(i):
                if best[j][0] + 1 > found[0] and reach[loop[0]] >> loops[j][0] & 1 \
                        and self._competes(a, meets, loop, loops[j], reach):
                    found = (best[j][0] + 1, [loop[0]] + best[j][1])
            best.append(found)
        degree, states = max(best, default=(0, []), key=lambda found: found[0])
        return degree, [a.loop_of[s] for s in states]

    def _competes(self, a: _Automaton, meets, first: list, second: list, reach) -> bool:
        """Whether a text can loop on a state p of `first`, lead from p to a state q of
        `second` and loop on q (Weber and Seidl's condition for polynomial ambiguity)."""
        between = {s for s in range(a.size)
                   if reach[first[0]] >> s & 1 and reach.get(s, 0) >> second[0] & 1}
        between.update(second)
        regions = (set(first), between, set(second))
        return any(self._triple_path(a, meets, p, q, regions) for p in first for q in second)

    def _triple_path(self, a: _Automaton, meets, p: int, q: int, regions) -> bool:
        """Three runs on one text: p back to p, p to q, q back to q."""
        first, between, second = regions
        goal = (p, q, q)
        seen, pending = {(p, p, q)}, [(p, p, q)]
        while pending:
            x, y, z = pending.pop()
            self.spend(len(a.follow[x]) * len(a.follow[y]) * len(a.follow[z]))
            for x2 in (s for s in a.follow[x] if s in first):
                for y2 in a.follow[y]:
                    if y2 not in between or not meets.pair(a.classes[x2], a.classes[y2]):
                        continue
                    for z2 in a.follow[z]:
                        state = (x2, y2, z2)
                        if z2 not in second or state in seen or not meets.triple(
                                a.classes[x2], a.classes[y2], a.classes[z2]):
                            continue
                        if state == goal:
                            return True
                        seen.add(state)
                        pending.append(state)
        return False

    def _polynomial_problem(self, chain: list, allowed: int) -> Problem:
        repeats = ", ".join(_show([item]) for item in chain if item is not None)
        count = f"{len(chain)} repeats in a row" if len(chain) > 1 else "the repeat"
        note = " and a search tries every start" if self.use.search and not self._anchored() else ""
        advice = (f"use at most {allowed} repeats that can match the same text in a row"
                  if allowed > 1 else "use no two repeats that can match the same text in a row")
        return Problem(f"{self.use.what} {self.shown} can take too long to match: "
                       f"{count} ({repeats}) can match the same text{note}",
                       f"{advice}, or separate them by text they cannot match (e.g. `[^,]*,` "
                       "instead of `.*,`)" + ("; a leading `.*` is not needed in a search"
                                              if note and self._leading_dots() else ""))

    def _leading_dots(self) -> bool:
        first = self.tree[0] if len(self.tree) else None
        return first is not None and first[0] in _REPEATS and \
            [op for op, _ in first[1][2]] == [_c.ANY]


class _Pairs:
    """Two runs of an automaton on one text (the pair automaton, from the start). A merge is
    a step where two different runs come to the same state (or take parallel edges to it).
    `exponential`: a merge inside a loop of pairs: a state can be left and reached again
    along two different paths reading the same text, so the ways double on every round."""

    def __init__(self, analysis: _Analysis, a: _Automaton):
        self._analysis, self._a = analysis, a
        self._meets = _Meets(a.class_table)
        graph: dict[tuple, list] = {(0, 0): []}
        merging: set[tuple] = set()
        pending = [(0, 0)]
        while pending:
            pair = pending.pop()
            for target, parallel in self._steps(*pair):
                graph[pair].append(target)
                if target[0] == target[1] and (pair[0] != pair[1] or parallel):
                    merging.add((pair, target))
                if target not in graph:
                    graph[target] = []
                    pending.append(target)
        components = _components(graph)
        part = {pair: i for i, component in enumerate(components) for pair in component}
        self.exponential = any(part[s] == part[t] for s, t in merging)

    def _steps(self, p: int, q: int):
        a = self._a
        follow_p, follow_q = a.follow[p], a.follow[q]
        self._analysis.spend(len(follow_p) * len(follow_q))
        for i, s in enumerate(follow_p):
            for j, t in enumerate(follow_q):
                if p == q and j < i:
                    continue  # (s, t) and (t, s) are the same two runs
                if self._meets.pair(a.classes[s], a.classes[t]):
                    yield (min(s, t), max(s, t)), p == q and i != j and s == t


def _empty_repeat_problem(head: str, item) -> Problem:
    _, (low, high, body) = item
    inner = body
    while len(inner) == 1 and inner[0][0] is _c.SUBPATTERN:
        inner = inner[0][1][3]
    simpler = None
    if high == _INF and len(inner) == 1 and inner[0][0] in _REPEATS and inner[0][1][0] == 0:
        simpler = _show_repeat(_c.MAX_REPEAT, (0, _INF, inner[0][1][2]))
    return Problem(f"{head} can take too long to match: the repeated part of {_show([item])} "
                   "can match the empty text",
                   f"write {simpler}" if simpler else
                   "make the repeated part match at least one character (and the repeat optional)")


class _Meets:
    """Whether classes intersect (by index, remembered)."""

    def __init__(self, table: list[tuple]):
        self.table = table
        self._pairs: dict[tuple, bool] = {}
        self._triples: dict[tuple, bool] = {}

    def pair(self, i: int, j: int) -> bool:
        key = (i, j) if i <= j else (j, i)
        if key not in self._pairs:
            self._pairs[key] = bool(_meet(self.table[i], self.table[j]))
        return self._pairs[key]

    def triple(self, i: int, j: int, k: int) -> bool:
        key = tuple(sorted((i, j, k)))
        if key not in self._triples:
            self._triples[key] = bool(_meet(_meet(self.table[i], self.table[j]), self.table[k]))
        return self._triples[key]


def _components(graph: dict) -> list[list]:
    """Tarjan's strongly connected components of `graph` (node -> successors), in reverse
    topological order (a component comes after every component it reaches); iterative."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    out: list[list] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(component)
    return out


def _reachability(graph: dict[int, list[int]]) -> dict[int, int]:
    """state -> bit set of the states reachable from it in one or more steps."""
    reach: dict[int, int] = {}
    for component in _components(graph):  # successors' components come first
        bits = 0
        for state in component:
            for nxt in graph[state]:
                bits |= (1 << nxt) | reach.get(nxt, 0)
        for state in component:
            reach[state] = bits
    return reach


# --- showing parts of a pattern ------------------------------------------------------------

_AT = {_c.AT_BEGINNING: "^", _c.AT_BEGINNING_STRING: "\\A", _c.AT_END: "$",
       _c.AT_END_STRING: "\\Z", _c.AT_BOUNDARY: "\\b", _c.AT_NON_BOUNDARY: "\\B"}
_SPECIAL = frozenset(".^$*+?{}[]\\|()")


def _show(items) -> str:
    """Parsed items as regex text (what `re` understood, not always as written)."""
    parts = [_show_item(op, av) for op, av in items]
    if len(parts) > 1:  # an alternation among other items needs its group back
        parts = [f"(?:{part})" if op is _c.BRANCH else part for (op, _), part in zip(items, parts)]
    return "".join(parts)


def _char(code: int, in_set: bool = False) -> str:
    char = chr(code)
    if not char.isprintable() or char == " " and in_set:
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return "\\" + char if char in _SPECIAL or in_set and char == "-" else char


def _show_set(items) -> str:
    parts = []
    for op, av in items:
        if op is _c.NEGATE:
            parts.append("^")
        elif op is _c.LITERAL:
            parts.append(_char(av, True))
        elif op is _c.RANGE:
            parts.append(f"{_char(av[0], True)}-{_char(av[1], True)}")
        elif op is _c.CATEGORY:
            parts.append(_CATEGORIES.get(av, "?"))
    if len(parts) == 1 and parts[0].startswith("\\") and len(parts[0]) == 2:
        return parts[0]
    return "[" + "".join(parts) + "]"


def _show_item(op, av) -> str:
    if op is _c.LITERAL:
        return _char(av)
    if op is _c.NOT_LITERAL:
        return f"[^{_char(av, True)}]"
    if op is _c.ANY:
        return "."
    if op is _c.IN:
        return _show_set(av)
    if op is _c.AT:
        return _AT.get(av, "")
    if op is _c.BRANCH:
        return "|".join(_show(items) for items in av[1])
    if op is _c.SUBPATTERN:
        return ("(" if av[0] is not None else "(?:") + _show(av[3]) + ")"
    if op in _REPEATS:
        return _show_repeat(op, av)
    if op is _c.GROUPREF:
        return f"\\{av}"
    if op in (_c.ASSERT, _c.ASSERT_NOT):
        kind = ("=" if op is _c.ASSERT else "!") if av[0] == 1 else ("<=" if op is _c.ASSERT else "<!")
        return f"(?{kind}{_show(av[1])})"
    if op is _c.ATOMIC_GROUP:
        return f"(?>{_show(av)})"
    if op is _c.GROUPREF_EXISTS:
        return f"(?({av[0]}){_show(av[1])}" + (f"|{_show(av[2])}" if av[2] else "") + ")"
    return ""


def _show_repeat(op, av) -> str:
    low, high, body = av
    inner = _show(body)
    if len(body) != 1 or body[0][0] in _REPEATS or body[0][0] is _c.BRANCH:
        inner = f"(?:{inner})"
    quantifier = {(0, _INF): "*", (1, _INF): "+", (0, 1): "?"}.get(
        (low, high), f"{{{low}}}" if low == high else f"{{{low},}}" if high == _INF else f"{{{low},{high}}}")
    suffix = "?" if op is _c.MIN_REPEAT else "+" if op is _c.POSSESSIVE_REPEAT else ""
    return inner + quantifier + suffix


def _single_repeat(item) -> str | None:
    """The one-quantifier form of `(x+)+`-like nesting (x*, x+), or None for other shapes."""
    _, (low, high, body) = item
    while len(body) == 1 and body[0][0] is _c.SUBPATTERN:
        body = body[0][1][3]
    if len(body) != 1 or body[0][0] not in _REPEATS or high != _INF:
        return None
    inner_low, inner_high, inner_body = body[0][1]
    if inner_high != _INF or low > 1 or inner_low > 1:
        return None
    star = low == 0 or inner_low == 0
    return _show_repeat(_c.MAX_REPEAT, (0 if star else 1, _INF, inner_body))
