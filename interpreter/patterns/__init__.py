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
   (tests/engine/test_patterns.py checks a generous bound on adversarial text).

The analysis is deterministic and bounded too: a pattern with more than `MAX_POSITIONS`
character positions, or whose analysis takes more than `MAX_WORK` steps, is refused as too
complex to check.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from re import _constants as _c, _parser as _sre  # the parser `re` itself uses

from .. import MagoError
from .automaton import (MAX_POSITIONS, UNROLL, _INF, _REPEATS, _Automaton,  # noqa: F401
                        _meet, _show, _show_repeat, _single_repeat, _TooComplex)

# A room of the core (docs/internals/layout.md): this module is the rule, `automaton` the
# automata it reads patterns as; the core imports both.
ROOM = "core"
BOUNDARY = ("automaton",)

MAX_COST_DEGREE = 2  # a failing match tries at most about n**2 paths on n characters
MAX_VALUE_CHARS = 500  # a longer slot value is not matched against the slot's pattern
MAX_SEARCH_CHARS = 500  # an intent pattern searches the utterance's first characters only
MAX_WAYS = 32  # ways through the parts of a pattern that are no loop
MAX_WORK = 400_000  # steps of the analysis
# ... and at most this many per character of the pattern: a step costs microseconds, so a
# flat budget let every short pattern of a scenario cost a second; the patterns shipped and
# tested need under 30 a character.
WORK_PER_CHAR = 50



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

    @property
    def text(self) -> str:
        """The message as reported: a syntax error says that it is one."""
        return f"invalid regex: {self.message}" if self.invalid else self.message

    @property
    def line(self) -> str:
        """The message with its hint, as `PatternError` says it."""
        return self.text + (f"; {self.hint}" if self.hint else "")


class PatternError(ValueError, MagoError):
    """A pattern `compile_pattern` refuses; the message is one line."""


@functools.lru_cache(maxsize=1024)
def problem(pattern: str, use: Use) -> Problem | None:
    """Why `pattern` cannot be used as `use` says, or None when it is accepted."""
    tree = _parsed(pattern, use)
    if isinstance(tree, Problem):
        return tree
    try:
        return _Analysis(pattern, tree, use).problem()
    except (_TooComplex, RecursionError):
        return Problem(f"{use.what} is too complex to check for its matching time",
                       "split it into several simpler patterns")


def syntax_problem(pattern: str, use: Use) -> Problem | None:
    """Why `pattern` is no regular expression at all, or None: the cheap part of `problem`
    (a parse, no analysis), for a check made before the pattern's first use, which
    `compile_pattern` makes in full."""
    found = _parsed(pattern, use)
    return found if isinstance(found, Problem) else None


def _parsed(pattern: str, use: Use):
    """The pattern as `re` parses it, or the `Problem` of a pattern `re` refuses."""
    try:
        # Only `re`'s own errors are wanted here (look-behind widths), none of which depends
        # on case: folding every code point of a class (`[가-힣]` is 11,172 of them) made
        # the check of a pattern cost a millisecond per byte.
        re.compile(pattern, use.flags & ~re.IGNORECASE)
        return _sre.parse(pattern, use.flags)
    except RecursionError:
        return Problem("nested too deeply", invalid=True)
    except (re.error, OverflowError, ValueError) as error:
        return Problem(str(error).splitlines()[0] if str(error) else type(error).__name__,
                       invalid=True)


def compile_pattern(pattern: str, use: Use) -> re.Pattern:
    """`pattern` compiled for `use`, or `PatternError` saying why it is refused."""
    found = problem(pattern, use)
    if found is not None:
        raise PatternError(found.line)
    return re.compile(pattern, use.flags)


def fullmatches(regex: re.Pattern, text: str) -> bool:
    """Whether a slot value matches its pattern; a value over `MAX_VALUE_CHARS` never does."""
    return len(text) <= MAX_VALUE_CHARS and regex.fullmatch(text) is not None


def searched(text: str) -> str:
    """The part of an utterance intent patterns are searched in."""
    return text[:MAX_SEARCH_CHARS]


# --- the analysis --------------------------------------------------------------------------


class _Analysis:
    """The verdict on one parsed pattern for one use."""

    def __init__(self, pattern: str, tree, use: Use):
        self.tree, self.use = tree, use
        self.shown = pattern if len(pattern) <= 60 else pattern[:60] + "…"
        self.flags = tree.state.flags
        self.work = 0
        self.budget = min(MAX_WORK, WORK_PER_CHAR * len(pattern) + 4 * WORK_PER_CHAR)
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
        if self.work > self.budget:
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
        back: dict[int, list[int]] = {s: [] for s in graph}
        for s, targets in graph.items():
            for t in targets:
                back[t].append(s)
        reached_from = _reachability(back)  # state -> bit set of the states that reach it
        loops = [c for c in _components(graph) if (len(c) > 1 or c[0] in graph[c[0]])
                 and reach[0] >> c[0] & 1]  # the loops a match can come to
        best: list[tuple[int, list]] = []
        for i, loop in enumerate(loops):  # reverse topological order: successors first
            found = (0, [loop[0]])
            for j in range(i):
                if best[j][0] + 1 > found[0] and reach[loop[0]] >> loops[j][0] & 1 \
                        and self._competes(a, meets, loop, loops[j], reach, reached_from):
                    found = (best[j][0] + 1, [loop[0]] + best[j][1])
            best.append(found)
        degree, states = max(best, default=(0, []), key=lambda found: found[0])
        return degree, [a.loop_of[s] for s in states]

    def _competes(self, a: _Automaton, meets, first: list, second: list, reach,
                  reached_from) -> bool:
        """Whether a text can loop on a state p of `first`, lead from p to a state q of
        `second` and loop on q (Weber and Seidl's condition for polynomial ambiguity)."""
        # The states between, as a bit set: one AND, where a scan of every state for every
        # pair of loops made this cubic in the pattern's length, and uncounted by `spend`.
        self.spend(len(first) + len(second))
        between = reach[first[0]] & reached_from.get(second[0], 0)
        for s in second:
            between |= 1 << s
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
                    if not between >> y2 & 1 or not meets.pair(a.classes[x2], a.classes[y2]):
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
