"""Regular expressions as automata, for `patterns`: character classes as sorted code-point
ranges, the Glushkov automaton of a parsed pattern (one state per character position; a
repeat's way back is an edge of its own), and how to show a part of a pattern in a message.

In: a pattern's tree as `re._parser` parsed it, with its flags. Out: `_Automaton` (positions,
their classes, the edges), or `_TooComplex` past `MAX_POSITIONS`. `patterns` judges the
automaton; nothing else uses this module.
"""

from __future__ import annotations

import array
import copy
import functools
import re
from pathlib import Path
from typing import NamedTuple
from collections.abc import Iterable

from re import _casefix, _constants as _c  # the tables `re` itself uses

from .. import MagoError

MAX_POSITIONS = 1000  # character positions, after unrolling
UNROLL = 32  # a bounded repeat x{m,n} with n - m <= 2 and n * |x| <= UNROLL is unrolled
_INF = _c.MAXREPEAT
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT)
_ALL = ((0, 0x10FFFF),)


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
    """The code points `\\d`, `\\w`, `\\s` (or their negations) match: the stored table
    when it was generated for this Python's Unicode version, else read from `re` itself."""
    if source.isupper():
        return _complement(_category(source.lower(), flags))
    key, ranges = _stored_categories()  # reading `re` costs tens of ms per process; the table none
    if key == category_key():
        return ranges[source, flags]
    return scanned_category(source, flags)


CATEGORY_TABLE = Path(__file__).with_name("category_table.json")


@functools.cache
def _stored_categories() -> tuple[str, dict[tuple[str, int], tuple]]:
    """The stored table: its Unicode version and (category, flags) -> (low, high) ranges."""
    import msgspec  # already loaded with the IR; a faster reader than json

    table = msgspec.json.decode(CATEGORY_TABLE.read_bytes())
    return table["key"], {(row["category"], row["flags"]): tuple(map(tuple, row["ranges"]))
                          for row in table["rows"]}


def category_key() -> str:
    """What the category table depends on: the Unicode version of `re`'s character tables."""
    import unicodedata

    return unicodedata.unidata_version


def category_table_text() -> str:
    """The text of `category_table.json` for this Python (regenerate it with `python -c "from
    interpreter.patterns.automaton import category_table_text as t; print(t(), end='')" >
    interpreter/patterns/category_table.json` when a new Python brings a new Unicode version)."""
    import json

    rows = ",\n".join(
        json.dumps({"category": source, "flags": flags,
                    "ranges": [list(pair) for pair in scanned_category(source, flags)]},
                   separators=(",", ":"))
        for source in (r"\d", r"\s", r"\w") for flags in (0, re.ASCII.value))
    return f'{{"key":{json.dumps(category_key())},"rows":[\n{rows}\n]}}\n'


def scanned_category(source: str, flags: int) -> tuple:
    """The code points a lower-case category matches, read from `re` over the blocks."""
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


@functools.lru_cache(maxsize=256)  # a class repeated in a pattern is folded once
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


class _TooComplex(MagoError):
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
        before = low - 1 if low > 1 and low * width <= UNROLL else 0  # x{3,} as x x x+
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
        for piece in reversed(copies[low:]):
            tail = _optional(self._concat(piece, tail))
        return self._concat(self._concat_all(copies[:low]), tail)


def _optional(frag: _Frag) -> _Frag:
    """`x?`: skipped, or x (which may itself match the empty text)."""
    return _Frag(frag.first, frag.last, min(2, frag.empty_ways + 1))


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
