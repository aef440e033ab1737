"""Safety (SPEC 10): the deterministic detector of crisis expressions beside the NLU.

In: at construction, a program's `safety.patterns` as (category, regex) pairs (`Detector`,
or `detector_for(program)`); then, per user turn, the raw text. Out: `detect(text)`, the
category of the first crisis expression found (`CATEGORIES` order) or None; `findings(text)`,
every expression that counted, with where it came from (the audit trail: an entry name of
`safety_lexicon.ENTRIES`, or `safety.patterns[i]`).
After: the same text always gives the same answer (no model, no clock, no state), nothing
raises on any text, and a call reads at most `MAX_DETECT_CHARS` characters (`patterns.
MAX_SEARCH_CHARS` for the scenario's patterns).

What counts (the tables and their reading rules are in `safety_lexicon`, which is data only):
the text is normalised (NFC, lower case, punctuation out) into a spaced form (English) and a
compact form without spaces (Korean, so spacing and particles glued or apart read alike);
spellings are folded (`FOLDS`); idioms are masked (`IDIOMS`); then every entry of the
lexicon is tried, and a match counts unless a negation cancels it (`NEGATABLE`, `HEDGED`).
A detector built for a language (`detector_for` a program whose rules NLU reads lemmas, SPEC
13.4) also reads the analyser's lemmas (`safety_lemmas`): rules of lemmas said together, in
any order and inflection; they only add, and an idiom in the text vetoes them. A scenario's
`safety.patterns` are author regexes with a bounded matching time (the rule of
`interpreter.patterns`, as for intent patterns): searched, case-insensitive, in the raw text;
they only add; a negation outside the match cancels one (`negated_outside`, SPEC 13.4,
17.15) unless the pattern says `"negatable": false`; no idiom rule applies to them.

`merge(detected, said)`: the detector's finding is kept; what an NLU said (an LLM, a
scripted result) is added only when the detector found nothing. So no NLU can remove a
finding.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from re import _constants as _c, _parser as _sre  # the parser `re` itself uses
from typing import Any, NamedTuple
from collections.abc import Callable, Sequence

from .. import patterns
from ..fields import SAFETY_CATEGORIES

CATEGORIES: tuple[str, ...] = SAFETY_CATEGORIES  # ("medical_emergency", "self_harm", "abuse")
MAX_DETECT_CHARS = 2000  # the lexicon reads the first characters of a message only
# Short replies recur in every conversation ("네", "괜찮아요", "밥 먹었어요"), and `detect` is
# a pure function of the text: each detector keeps the answers of texts up to
# REMEMBERED_CHARS long, the last REMEMBERED_TEXTS of them (as `safety_lemmas` keeps its
# findings), so a recurring reply costs a dictionary look-up, not the 5-10 us of a reading.
REMEMBERED_CHARS = 120
REMEMBERED_TEXTS = 4096

_SPACING = re.compile(r"[\W_]+")
# What `_SPACING.sub(" ", ...).strip()` would change (a non-word character other than a
# single inner space, an underscore): a text without any is its own spaced form. Every
# apostrophe is a non-word character, so such a text has none to take out either.
_UNSPACED = re.compile(r"[^\w ]|_|  |^ | $")
_LATIN = re.compile(r"[a-z]")
_APOSTROPHES = str.maketrans("", "", "'’‘`")
_NEGATORS = frozenset(("no", "not", "never", "dont", "doesnt", "didnt", "isnt", "wasnt",
                       "arent", "werent", "havent", "hasnt", "hadnt", "without", "nobody",
                       "wont", "nothing"))
# A negation right after a Korean match: "-지 않", "-진 않", "-지는 않", "은 없", "건 아니",
# "적은 없"; compiled on first use (`_negation`), not at import.
_NEG_AFTER_PATTERN = (
    r"(?:지|진|지는|지도|지가|지를)(?:않|안|아니|말|못)|(?:은|는|이|가|도|을|를)?(?:없|아니)"
    r"|(?:은|는)?(?:건|게|거|것은|것이|것)(?:아니|없)|(?:은|는|다는|단)?(?:생각|마음|맘)(?:은|는|이|도|까진|까지는)?(?:없|안들|아니|안해|안했|안하)"
    r"|(?:ㄴ|은|는|를|을|도)?(?:한번도|절대|전혀)?(?:한|해본|생각한|생각해본)?(?:적|일)(?:은|이|도)?(?:한번도)?(?:없|아니)")
# ... followed by "but ..." (a hedge, for HEDGED entries): "않은데 너무 힘들어요".
_HEDGE_KO_PATTERN = r"[가-힣]{0,3}?(?:은데|는데|지만|근데|그런데|하지만|그렇지만)(?=[가-힣]{2})"
_HEDGE_EN_PATTERN = r"\b(?:but|though|although|yet|except)\b"


class _Negation(NamedTuple):
    after: re.Pattern  # _NEG_AFTER_PATTERN
    hedge_ko: re.Pattern
    hedge_en: re.Pattern


@functools.cache
def _negation() -> _Negation:
    """The negation and hedge regexes, compiled once per process on first use."""
    return _Negation(re.compile(_NEG_AFTER_PATTERN), re.compile(_HEDGE_KO_PATTERN),
                     re.compile(_HEDGE_EN_PATTERN))


class Finding(NamedTuple):
    """One expression that counted: its category, where it came from (`lexicon`, `lemmas`
    or `scenario`), its name (the lexicon entry, the lemma rule, or `safety.patterns[i]`) and
    what it matched."""

    category: str
    source: str
    name: str
    matched: str


class _Entry(NamedTuple):
    name: str
    category: str
    script: str  # "ko" (compact form) or "en" (spaced form)
    regex: re.Pattern
    hedged: bool  # the lexicon's HEDGED rule: a negation followed by "but ..." still counts


class _Lexicon(NamedTuple):
    entries: tuple[_Entry, ...]
    # Per script, an Aho-Corasick automaton (`pyahocorasick`) of the literals one of which
    # every match of an entry contains, each literal mapped to the bit mask of the entries
    # (by index) it comes from: one pass over the text says which entries can match at all.
    anchors_ko: Any
    anchors_en: Any
    idioms_ko: re.Pattern | None
    idioms_en: re.Pattern | None
    folds: re.Pattern
    fold_to: dict[str, str]


@functools.cache
def lexicon() -> _Lexicon:
    """The lexicon compiled, once per process, on first use (not at import: `mgi` starts
    without paying for it, nor for importing the tables)."""
    from . import safety_lexicon as lex

    entries = tuple(_Entry(name, category, script, re.compile(pattern), rule == lex.HEDGED)
                    for name, category, script, pattern, rule in lex.ENTRIES)
    order = [CATEGORIES.index(e.category) for e in entries]
    if order != sorted(order):  # `detect` stops at the first finding: the most urgent
        raise ValueError("safety_lexicon.ENTRIES must list its categories in CATEGORIES order")

    def joined(items: list[str]) -> re.Pattern | None:
        return re.compile("|".join(f"(?:{p})" for p in items)) if items else None
    folds = re.compile("|".join(re.escape(a) for a, _ in lex.FOLDS))
    return _Lexicon(entries, _anchors(entries, "ko"), _anchors(entries, "en"),
                    joined([p for _, script, p in lex.IDIOMS if script == "ko"]),
                    joined([p for _, script, p in lex.IDIOMS if script == "en"]),
                    folds, dict(lex.FOLDS))


def _anchors(entries: tuple[_Entry, ...], script: str) -> Any:
    """The automaton of `_Lexicon.anchors_*` for the entries of `script` (None: none)."""
    import ahocorasick  # measured: one pass is 5-10x cheaper than the combined regexes

    masks: dict[str, int] = {}
    for i, entry in enumerate(entries):
        if entry.script == script:
            for literal in required_literals(entry.regex.pattern):
                masks[literal] = masks.get(literal, 0) | 1 << i
    if not masks:
        return None
    automaton = ahocorasick.Automaton()
    for literal, mask in masks.items():
        automaton.add_word(literal, mask)
    automaton.make_automaton()
    return automaton


def candidates(anchors: Any, form: str) -> int:
    """The bit mask of the entries (`_Lexicon.entries` by index) whose literals `form`
    holds: the only ones that can match it (0: none can)."""
    mask = 0
    if anchors is not None:
        for _, bits in anchors.iter(form):
            mask |= bits
    return mask


def _matches(entries: tuple[_Entry, ...], mask: int, form: str) -> bool:
    """Whether an entry of `mask` matches `form`."""
    while mask:
        if entries[(mask & -mask).bit_length() - 1].regex.search(form) is not None:
            return True
        mask &= mask - 1  # the lowest bit off
    return False


def required_literals(pattern: str) -> frozenset[str]:
    """Literal strings one of which every match of `pattern` contains (read from the parse
    `re` itself uses): the detector's first, cheap test. `ValueError` when there are none
    (an entry must have some; tested)."""
    found = _required(_sre.parse(pattern).data)
    if not found or "" in found:
        raise ValueError(f"safety pattern {pattern!r} has no literal every match contains")
    return found


_RUNS_CAP = 64  # strings a run of literals may spell at most (beyond it, the run is cut)


def _literal(items: Any) -> str | None:
    """The text of a parsed sequence made of literals only, else None."""
    if all(op is _c.LITERAL for op, _ in items):
        return "".join(chr(av) for _, av in items)
    return None


def _spelled(items: Any) -> list[str] | None:
    """The texts a parsed sequence of literals, or one literal alternation or set, can spell."""
    whole = _literal(items)
    if whole is not None:
        return [whole]
    if len(items) == 1 and items[0][0] is _c.BRANCH:
        found = [_literal(alt.data) for alt in items[0][1][1]]
        return None if None in found else found
    if len(items) == 1 and items[0][0] is _c.IN and all(k is _c.LITERAL for k, _ in items[0][1]):
        return [chr(v) for _, v in items[0][1]]
    return None


def _required(items: Any) -> frozenset[str] | None:
    """For a parsed sequence: the best set of literals one of which every match contains
    (longest shortest member first, then the later part of the sequence: the verb ends a
    Korean phrase), or None when nothing is required."""
    best: tuple | None = None
    runs = {""}

    def consider(found: Any, position: int) -> None:
        nonlocal best
        if found:
            score = (min(map(len, found)), position, -len(found))
            if best is None or score > best[0]:
                best = (score, frozenset(found))

    for position, (op, av) in enumerate(items):
        spelled = None
        if op is _c.LITERAL:
            spelled = [chr(av)]
        elif op is _c.IN and all(kind is _c.LITERAL for kind, _ in av):
            spelled = [chr(v) for _, v in av]
        elif op is _c.BRANCH:
            spelled = [_literal(alt.data) for alt in av[1]]
            spelled = None if None in spelled else spelled
        elif op is _c.MAX_REPEAT and av[0] == 0 and av[1] == 1:  # `(?:을|를)?`: with or without
            spelled = _spelled(av[2].data)
            spelled = None if spelled is None else ["", *spelled]
        if spelled is not None and len(runs) * len(spelled) <= _RUNS_CAP:
            runs = {run + piece for run in runs for piece in spelled}
            continue
        if runs != {""}:
            consider(runs, position)
        runs = {""}
        if op is _c.BRANCH:
            parts = [_required(alt.data) for alt in av[1]]
            if None not in parts:
                consider(frozenset().union(*parts), position)
        elif op is _c.SUBPATTERN:
            consider(_required(av[-1].data), position)
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[0] >= 1:
            consider(_required(av[2].data), position)
    if runs != {""}:
        consider(runs, len(items))
    return None if best is None else best[1]


def normalise(text: str) -> tuple[str, str]:
    """(spaced, compact) forms of the first `MAX_DETECT_CHARS` characters of `text`, folded
    and with the idioms masked: what the lexicon reads."""
    spaced, compact = _forms(text)
    return _mask(spaced, compact)


def _forms(text: str) -> tuple[str, str]:
    """(spaced, compact), folded, not masked."""
    lowered = text[:MAX_DETECT_CHARS].lower()
    if not lowered.isascii() and not unicodedata.is_normalized("NFC", lowered):
        lowered = unicodedata.normalize("NFC", lowered)
    spaced = lowered if _UNSPACED.search(lowered) is None else \
        _SPACING.sub(" ", lowered.translate(_APOSTROPHES)).strip()
    compact = spaced.replace(" ", "")
    if not compact.isascii():
        table = lexicon()
        if table.folds.search(compact) is not None:  # most texts have no spelling to fold
            compact = table.folds.sub(lambda m: table.fold_to[m.group()], compact)
    return spaced, compact


def _mask(spaced: str, compact: str) -> tuple[str, str]:
    table = lexicon()
    if table.idioms_ko is not None and not compact.isascii():
        compact = table.idioms_ko.sub(_masked, compact)
    if table.idioms_en is not None and _LATIN.search(spaced):
        spaced = table.idioms_en.sub(_masked, spaced)
    return spaced, compact


def _masked(match: re.Match) -> str:
    return "#" * len(match.group())


def _counts(entry: _Entry, text: str, match: re.Match) -> bool:
    """Whether a match of `entry` in `text` counts: not cancelled by a negation, unless a
    HEDGED entry's negation goes on with "but ..."."""
    if entry.script == "ko":
        negation = _negation().after.match(text, match.end())
        if negation is None:
            return True
        return entry.hedged and _negation().hedge_ko.match(text, negation.end()) is not None
    before = text[:match.start()].split()[-3:]
    if not _NEGATORS.intersection(before):
        return True
    return entry.hedged and _negation().hedge_en.search(text, match.end()) is not None


class Detector:
    """The built-in lexicon plus one program's `safety.patterns`; built once per program
    (`Runtime.safety`), shared by every session, thread-safe (it holds no state)."""

    def __init__(self, scenario_patterns: Sequence[tuple[str, str] | tuple[str, str, bool]] = (),
                 language: str | None = None):
        """`scenario_patterns`: (category, regex[, negatable]); a negatable pattern (the
        default, SPEC 13.4) does not count when a negation outside its match cancels it.
        `language`: read the lemmas of that language's analyser too (`safety_lemmas`); None:
        the lexicon and the patterns only (no analyser is loaded)."""
        self.language = language
        # safety_lemmas.findings, imported on the first text a detector with a language reads
        # (not when it is built: `mgi run` prints its opening without the tables' import)
        self._lemma_rules: Callable[[str, str], list[tuple[str, str, str]]] | None = None
        compiled = []
        for category, pattern, *rest in scenario_patterns:
            if category not in CATEGORIES:
                raise ValueError(f"unknown safety category {category!r}")
            negatable = bool(rest[0]) if rest else True
            compiled.append((category, patterns.compile_pattern(pattern, patterns.INTENT),
                             negatable))
        self.scenario_patterns: tuple[tuple[str, re.Pattern, bool], ...] = tuple(compiled)
        # per detector (the scenario's patterns count): lru_cache is thread-safe and bounded
        self._remembered = functools.lru_cache(maxsize=REMEMBERED_TEXTS)(self._detect)

    def detect(self, text: str) -> str | None:
        """The category of the first crisis expression in `text` (in `CATEGORIES` order:
        the most urgent help first), or None."""
        if isinstance(text, str) and len(text) <= REMEMBERED_CHARS:
            return self._remembered(text)
        return self._detect(text)

    def _detect(self, text: str) -> str | None:
        found = self._found(text, first=True)
        return found[0].category if found else None

    def findings(self, text: str) -> list[Finding]:
        """Every expression that counted in `text`, lexicon first, in table order."""
        return self._found(text, first=False)

    def _lemma_findings(self, text: str) -> list[Finding]:
        """What the lemma rules find in `text`; nothing when an idiom is in it (`IDIOMS`
        mask the lexicon's forms; the lemmas cannot be masked, so an idiom vetoes them:
        "심장이 터질 것 같이 설레" is no crisis)."""
        if self._lemma_rules is None:
            from . import safety_lemmas  # the analyser's tier: never for a lexicon-only detector

            self._lemma_rules = safety_lemmas.findings
        found = self._lemma_rules(self.language, text)
        if not found:
            return []  # as most texts: no need to look for idioms
        unmasked = _forms(text)
        if _mask(*unmasked) != unmasked:
            return []
        return [Finding(category, "lemmas", name, matched) for category, name, matched in found]

    def _found(self, text: str, first: bool) -> list[Finding]:
        if not isinstance(text, str) or not text or text.isspace():
            return []
        table = lexicon()
        spaced, compact = _forms(text)
        # The entries whose literals the text holds, kept when one of them matches the text
        # unmasked: masking only ever removes matches (no pattern looks around), so a text
        # no entry matches unmasked is done without masking it.
        entries = table.entries
        live = candidates(table.anchors_ko, compact)
        if live and not _matches(entries, live, compact):
            live = 0
        if _LATIN.search(spaced) is not None:
            english = candidates(table.anchors_en, spaced)
            if english and _matches(entries, english, spaced):
                live |= english
        found: list[Finding] = []
        if live:
            spaced, compact = _mask(spaced, compact)
            while live:  # the entries with a literal in the text, in table order
                entry = entries[(live & -live).bit_length() - 1]
                live &= live - 1
                form = compact if entry.script == "ko" else spaced
                if first and found:
                    break  # the entries go from the most urgent category down
                for match in entry.regex.finditer(form):
                    if _counts(entry, form, match):
                        found.append(Finding(entry.category, "lexicon", entry.name,
                                             match.group()))
                        break
        if self.language is not None and not (first and found and
                                              found[0].category == CATEGORIES[0]):
            found += self._lemma_findings(text)
        if self.scenario_patterns:
            searched = patterns.searched(text)
            for i, (category, regex, negatable) in enumerate(self.scenario_patterns):
                if first and found and CATEGORIES.index(category) >= \
                        min(CATEGORIES.index(f.category) for f in found):
                    continue  # cannot change the answer
                match = next((m for m in regex.finditer(searched) if not negatable
                              or not negated_outside(searched, m.start(), m.end())), None)
                if match is not None:
                    found.append(Finding(category, "scenario", f"safety.patterns[{i}]",
                                         match.group()))
        if first and found:
            return [min(found, key=lambda f: CATEGORIES.index(f.category))]
        return found


_KO_NEGATION_BEFORE = frozenset(("안", "못", "않", "없"))


def negated_outside(text: str, start: int, end: int) -> bool:
    """Whether the match `text[start:end]` of a scenario pattern is negated by the words
    around it, outside the match (SPEC 17.15: "숨을 못 쉬겠어" matched whole is no
    negation): an English negator among the three words before it ("I didn't take too many
    pills"), "안"/"못" just before it, or a Korean negation right after it ("-지 않", "은
    없")."""
    before = text[:start].lower().translate(_APOSTROPHES).split()[-3:]
    if _NEGATORS.intersection(before) or (before and before[-1] in _KO_NEGATION_BEFORE):
        return True
    after = _SPACING.sub("", text[end:end + 24])
    return bool(after) and not after.isascii() and _negation().after.match(after) is not None


def detector_for(program: Any) -> Detector:
    """The detector of a program (`ir.Program.safety_patterns`), reading lemmas too when the
    program's rules NLU has its language's analyser loaded anyway (intent examples,
    `morph.preload_for`): no scenario loads an analyser for safety alone."""
    reads_lemmas = any(intent.examples for intent in getattr(program, "intents", ()))
    return Detector([(p.category, p.pattern, getattr(p, "negatable", True))
                     for p in getattr(program, "safety_patterns", ())],
                    getattr(program, "language", "ko") if reads_lemmas else None)


def merge(detected: str | None, said: Any) -> str | None:
    """The turn's category: the detector's when it found one, else the NLU's when it named a
    category (anything else an NLU says is read as nothing)."""
    if detected is not None:
        return detected
    return said if said in CATEGORIES else None
