"""Hypothesis strategies for Mago: scenarios, single-defect mutations, raw input and turns.

One module (STYLE: "hypothesis strategies in one module"); other test files import from here,
so the public names and signatures below are stable.

Scenarios
    `valid_scenarios(min_nodes=1, max_nodes=60)`: scenario dicts that compile with no error
    and no warning, by construction (see "How a valid scenario is built" below). They cover
    slots of every `value_type` with their bounds, patterns, synonyms, policies and
    `on_conflict`; conditions over every catalogue field with every operator that applies to
    it, in the object form, the expression form and both mixed (an object-form `and`/`or`
    may hold expression strings), nested `and`/`or`/`not`; named and unnamed global
    transitions; explicit (`terminal: true`, with resume transitions) and inferred end nodes;
    stays; self-targets; every `params` key; responses with `{slots.NAME}` and
    `{skill.data.KEY}` placeholders; `bot_first`; `closing_acts` (with `negate`);
    `graph.safety` rules (any node a target, the entry and end nodes too) and
    `safety.patterns`; `nlu.safety` conditions (only on categories without a rule, which
    are the only ones a condition can see).
    `valid_scenarios(..., tasks=True)` (`task_scenarios()`): the same with the constructs of
    SPEC 8 too: list slots (`items` with their constraints, `min_items`/`max_items`,
    `on_conflict` append/overwrite/keep/confirm), slot defaults (a valid literal, or
    `"{profile.NAME}"` of a field of the slot's type, with the slot's constraints or without
    them so that the profile may hold a value the slot refuses), a `profile` declaration,
    `profile.NAME` and list `contains`/`is_empty` conditions, transient nodes (never the
    entry; no stay, an unconditional last route unless an end node, transient targets only
    forward: no E109, no E303; their conditions drawn on a fresh visit), `skip_if_filled:
    false`, `clear_slots` (names or "all"), weather skills whose location reads a slot or the
    profile, or is written as conditional lines (SPEC 17.21, each `when` from `line_when`:
    a slot, or the turn's and the node's facts of `LINE_FIELDS`). Conditions on `system.idle_seconds` and `system.slots_updated` come in both.
    `valid_scenario_and_facts(...)`: the same, as `(scenario, ScenarioFacts)`.
    `facts_of(scenario)`: the `ScenarioFacts` of any valid scenario dict (also the shipped
    ones): node ids in source order, entry, end nodes with provenance, intents, slots with
    their definitions, closing acts, skill nodes, collected slots per node, global targets.
    Interpreter properties use them to make turns.
    `slot_definition(value_type=None)`, `intent_definition()`: one valid declaration.
    `conditions()`: `(condition JSON value, ConditionContext, node id)`: a condition that
    type-checks in the context and can hold at that node (object, expression or mixed).
    `condition_tree(ctx, at)` and `render_condition(tree)`: the same in two steps (the tree is
    `("leaf", field, operator, value)`, `("and"|"or", [trees])` or `("not", tree)`);
    `render_expression(tree)` writes a tree in expression syntax without the compiler.
    `condition_asts()`: condition ASTs (`compiler.condition_ast`) with arbitrary well-formed
    field names and literal values, not necessarily well typed: for print/parse round trips.

Mutations
    `mutations(code=None, max_nodes=12)`: `(document, code, pointer)`: a valid scenario with
    exactly one defect that must be reported as `code` at JSON pointer `pointer` (exactly as
    `Diagnostic.path`). One family of mutations per catalogue code (`MUTATION_CODES`); pass
    `code` to draw from one family. `document` is a dict (serialise it with `json.dumps`), a
    str (the JSON text itself: E001 and E002 families), or bytes (file contents: E001, not
    UTF-8; compile with `check_file`). Families and their pointers are listed in
    `_FAMILIES`; each family's docstring says what it changes. Known exceptions to "the
    defect gives exactly one code": E302 (making every end node a non-end node can also make
    warnings, which graph analysis reports beside it) and the W403 family (every row after
    the inserted unconditional stay is shadowed: several W403, all of the expected code).

Arbitrary input
    `json_values(max_leaves=40)`: any JSON value (deep, unicode keys and strings, big
    integers).
    `fuzzed_scenarios()`: a valid scenario with one random subtree replaced by an arbitrary
    JSON value, or one key dropped: the inputs that reach the later passes.
    `json_texts()`: JSON-ish texts: dumps of `json_values`, deep nesting (up to 5000 levels),
    truncations of valid scenarios, E001/E002 mutation texts, random text.
    `raw_bytes()`: arbitrary bytes, valid scenarios truncated, with bytes flipped or inserted,
    with a BOM, in UTF-16.

Turns
    `turn_sequences(info, max_turns=12)`: lists of `mgi --json` turns
    `{"user": text, "nlu": {...}}` (`nlu` optional; its keys `intent`, `dialogue_act`,
    `slots`, `confidence`, `safety` each optional) covering every act (and `negate`, an unknown act,
    null), declared and undeclared intents, valid and invalid slot values (wrong JSON types,
    out of range, too short or long, misspelled enum members, undeclared slot names), empty
    and whitespace input, unicode, control characters and long text (a few KB), crisis
    expressions the safety detector finds. `info` is a
    `ScenarioFacts` or a scenario dict. Its parts: `user_texts`, `nlu_objects(facts)`,
    `slot_value(definition)`. With `tasks=True`, a third of the turns answer several slots
    with valid values (`valid_values`), and turns carry pauses (`"idle": SECONDS`: around
    the literals `system.idle_seconds` is compared with, 1799-1801, 3600), as they also do
    without `tasks` when a condition reads `system.idle_seconds`.
    `profiles(info)`: a session profile the declaration accepts (fields valid, null or left
    out). `valid_values(definition)`: a few values a slot or profile field accepts.

How a valid scenario is built (so that it has no error and no warning)
    - Nodes get a random spanning tree rooted at the entry (parent index < child index), so
      every node is reachable (no W401/W402). Tree leaves are the end nodes: inferred (no
      target transition at all; stays allowed) or explicit (`terminal: true`, possibly with
      resume transitions back up). Every node reaches a leaf along the tree: no E301/E302.
    - Each tree edge is a conditional `next_nodes` entry, the `default_next`, or the one
      unconditional `next_nodes` entry, which is always last and only when there is no
      `default_next` (no W403). Extra edges (back edges, self-targets, cross edges) and stays
      are conditional. Unconditional targets only go forward (to a higher tree index), so the
      graph of "first rule always moves" is acyclic (no W406).
    - Conditions are satisfiable by construction: each field of a condition gets one witness
      value (the node's own id for `system.current_node`; false for
      `system.conversation_resuming` away from end nodes); a leaf under an even number of
      `not`s is drawn so the witness makes it true, under an odd number so it makes it false.
      The witness assignment then satisfies the whole condition (no W404).
    - Every declared slot and intent is used (collected, in a condition or a placeholder;
      compared in an `nlu.intent` leaf): no W405.
    - The node list is shuffled, so the entry is not always first.
    - No leaf is trivially true or false: no `is_empty`/`is_not_empty` on a field that is
      never null, no ordering past a counter's floor or the confidence's bounds, no `in` of
      every member, no field fixed at the node in its own rules (`system.current_node`,
      `conversation_resuming` away from an end node, a fresh visit's fields at a transient
      node): such a tautology could cut off a node's only way on (E301).

Speed: a strategy object built inside a draw is validated on its first use, which costs more
than the draw, so the generator draws through cached strategies (`_ints`, `_floats`) and
plain helpers taking `draw`; a 60-node scenario takes about 0.1 s.

`pointer(*parts)` builds a JSON pointer as `Diagnostic.path` spells it.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec
from hypothesis import strategies as st

from compiler.condition_ast import NO_VALUE, And, Leaf, Not, Or
from compiler.condition_messages import CONDITION_KEYS, KEYWORDS, MAX_DEPTH, OPERATOR_SYNTAX
from compiler import schema as _schema
from interpreter.ir import ACTS, FIXED_FIELDS, LATE_FIELDS, OPERATORS, SAFETY_CATEGORIES, SAFETY_VALUES, SKILL_STATUSES

__all__ = [
    "ScenarioFacts", "ConditionContext", "MUTATION_CODES",
    "valid_scenarios", "valid_scenario_and_facts", "facts_of", "slot_definition", "intent_definition",
    "conditions", "condition_tree", "render_condition", "render_expression", "condition_asts",
    "mutations", "json_values", "fuzzed_scenarios", "json_texts", "raw_bytes",
    "turn_sequences", "user_texts", "nlu_objects", "slot_value", "pointer",
    "task_scenarios", "profiles", "valid_values",
]

# ---------------------------------------------------------------------------------------
# Small helpers. Strategies made inside a draw are validated on first use, which costs more
# than the draw itself, so the generator draws through cached strategies and plain helper
# functions that take `draw`; only the public entry points are `st.composite`.


def pointer(*parts: object) -> str:
    """RFC 6901 JSON pointer from path parts (`~` -> `~0`, `/` -> `~1`)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@functools.cache
def _ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


@functools.cache
def _floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def _int(draw, lo: int, hi: int) -> int:
    return draw(_ints(lo, hi))


def _choose(draw, seq):
    """One item of a non-empty sequence (shrinks towards the first)."""
    seq = seq if isinstance(seq, (list, tuple)) else list(seq)
    return seq[_int(draw, 0, len(seq) - 1)]


def _one_in(draw, n: int) -> bool:
    return _int(draw, 1, n) == 1


def _subset(draw, seq, max_size: int) -> list:
    """Up to `max_size` distinct items of `seq`, in drawn order."""
    pool, out = list(seq), []
    for _ in range(_int(draw, 0, min(max_size, len(pool)))):
        out.append(pool.pop(_int(draw, 0, len(pool) - 1)))
    return out


def _shuffle(draw, items) -> list:
    items = list(items)
    for i in range(len(items) - 1, 0, -1):
        j = _int(draw, 0, i)
        items[i], items[j] = items[j], items[i]
    return items


ORDERING = ("greater_than", "greater_or_equal", "less_than", "less_or_equal")
NO_VALUE_OPS = ("is_empty", "is_not_empty")
OPS_BY_KIND = {
    "enum": ("equals", "not_equals", "in", "not_in", "is_empty", "is_not_empty"),
    "boolean": ("equals", "not_equals", "in", "not_in", "is_empty", "is_not_empty"),
    "integer": ("equals", "not_equals", "in", "not_in", *ORDERING, "is_empty", "is_not_empty"),
    "number": ("equals", "not_equals", "in", "not_in", *ORDERING, "is_empty", "is_not_empty"),
    "string": ("equals", "not_equals", "in", "not_in", "contains", "is_empty", "is_not_empty"),
    "email": ("equals", "not_equals", "in", "not_in", "contains", "is_empty", "is_not_empty"),
    "list": ("contains", "is_empty", "is_not_empty"),  # SPEC 8.2: `contains` an item
}
VALUE_TYPES = ("string", "integer", "number", "boolean", "enum", "email")
TASK_TYPES = VALUE_TYPES + ("list",)  # with `tasks`: list slots too (SPEC 8.2)
ITEM_TYPES = ("string", "enum", "email", "integer", "number")
COUNTER_FLOORS = {"system.node_turns": 1, "system.session_turns": 1,
                  "system.no_input_count": 0, "system.not_understood_count": 0,
                  "system.idle_seconds": 0}
# What a transient node's routing sees (SPEC 8.3): a fresh visit, the compiler's entry domains.
FRESH_VISIT = {"system.node_turns": 0, "system.fallback_exhausted": False,
               "system.turn_limit_reached": False, "system.min_turns_met": False}
PROFILE_NAMES = ("email", "name", "city", "age", "vip", "lang", "nick", "score")
SAFETY_PATTERNS = ("도와줘요", r"\bhelp me\b", "살려", "맞고 살아", r"긴급\d+", "숨이 ?막")
VALID_PATTERNS = (r"^[0-9]+$", r"[a-z]+", r"\d{3}-\d{4}", r".*", r"^(?:yes|no)$", "한글",
                  r"^[^@\s]+@[^@\s]+$", r"(a|b)*c?")
ACT_WORDS = ACTS + ("negate",)

# Text without braces (so no accidental placeholder) and without surrogates.
_plain_alphabet = st.characters(blacklist_categories=("Cs",), blacklist_characters="{}")
plain_text = st.text(_plain_alphabet, max_size=20)
any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_short_text = st.sampled_from(
    ["", "안녕하세요", "Hello.", "식사는 하셨어요?", "a \"quoted\" line", "tab\tnew\nline"]) | any_text
# A scenario name is one line of text (`interpreter.names`): no control character or line separator.
scenario_names = st.sampled_from(["", "안녕하세요", "Hello.", "a \"quoted\" name", "a / b #1"]) | st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=20)
node_ids = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
_id_stems = st.sampled_from(["n", "node_", "greeting", "meal_check", "_", "N", "closing", "step"])
# Slot names usable after `slots.` in an expression: one FIELD segment, unicode letters.
slot_names = st.from_regex(r"[^\W\d]\w{0,8}", fullmatch=True) | st.sampled_from(
    ["meal", "식사", "age", "email", "ok", "and", "in", "x1", "_", "true", "ǅx"])
intent_names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12) | st.sampled_from(
    ["wants_end", "그만", "a/b", "t~1", "say \"hi\"", "back\\slash", "tab\tin", "it's"])
small_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32) | any_text,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(any_text, c, max_size=3), max_leaves=6)
# Skill argument values: texts there are filled like responses, so a brace is E112.
_argument_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32) | plain_text,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(any_text, c, max_size=3), max_leaves=6)
_enum_values = st.lists(any_text, min_size=1, max_size=4, unique=True)
_phrases = st.lists(any_text, max_size=3)


def _norm_act(value):
    if value is None:
        return "null"
    return "deny" if value == "negate" else value


# ---------------------------------------------------------------------------------------
# Declarations and condition contexts.


@dataclass
class ConditionContext:
    """What a condition may name: intents, node ids, slots (name -> definition dict), and
    which nodes are end nodes (`system.conversation_resuming` may hold only there)."""

    intents: list[str]
    nodes: list[str]
    slots: dict[str, dict]
    ends: set[str] = field(default_factory=set)
    # categories with a graph.safety rule: conditions never see them (the safety tier is first)
    safety: tuple[str, ...] = ()
    profile: dict[str, dict] = field(default_factory=dict)  # SPEC 8.1: `profile.NAME`
    transient: set[str] = field(default_factory=set)  # nodes whose routing sees a fresh visit

    def fields(self) -> list[str]:
        return [f[0] for f in FIXED_FIELDS] + ["slots." + s for s in self.slots] + [
            "profile." + p for p in self.profile] + [f[0] for f in LATE_FIELDS]

    def declared(self, name: str) -> dict:
        """The slot or profile field definition behind `slots.NAME` / `profile.NAME`."""
        if name.startswith("profile."):
            return self.profile[name[len("profile."):]]
        return self.slots[name[len("slots."):]]

    def field_kind(self, name: str) -> tuple[str, bool]:
        """(kind, nullable)."""
        for fname, kind, _domain, nullable in (*FIXED_FIELDS, *LATE_FIELDS):
            if fname == name:
                return kind, nullable
        return self.declared(name)["value_type"], True

    def members(self, name: str) -> list:
        """Members of an enum-like or boolean field (without null)."""
        if name == "nlu.intent":
            return list(self.intents)
        if name == "nlu.dialogue_act":
            return list(ACTS)
        if name in ("system.current_node", "system.previous_node"):
            return list(self.nodes)
        if name == "skill.status":
            return list(SKILL_STATUSES)
        if name == "nlu.safety":
            return [v for v in SAFETY_VALUES if v not in self.safety]
        kind, _ = self.field_kind(name)
        if kind == "boolean":
            return [True, False]
        if kind == "enum":
            return list(self.declared(name)["values"])
        return []


def _slot_definition(draw, kind: str | None = None) -> dict:
    kind = kind or _choose(draw, VALUE_TYPES)
    slot: dict[str, Any] = {"policy": _choose(draw, ("optional", "required")), "value_type": kind}
    if kind == "enum":
        values = draw(_enum_values)
        slot["values"] = values
        if _one_in(draw, 2):
            slot["synonyms"] = {k: draw(_phrases) for k in _subset(draw, values, len(values))}
    elif kind in ("integer", "number"):
        low = None if _one_in(draw, 2) else _int(draw, -100, 100)
        span = None if _one_in(draw, 2) else _int(draw, 0, 200)
        if kind == "number" and _one_in(draw, 2):
            low = None if low is None else low + _choose(draw, (0.5, 0.25, 0.1))
            span = None if span is None else span / 4
        if low is not None:
            slot["min"] = low
        if span is not None:
            slot["max"] = span if low is None else low + span
    elif kind in ("string", "email"):
        if _one_in(draw, 2):
            slot["min_length"] = _int(draw, 0, 5)
        if _one_in(draw, 2):
            slot["max_length"] = slot.get("min_length", 0) + _int(draw, 0, 50)
        if _one_in(draw, 2):
            slot["pattern"] = _choose(draw, VALID_PATTERNS)
    if _one_in(draw, 2):
        slot["description"] = draw(_short_text)
    if _one_in(draw, 2):
        slot["question"] = draw(_short_text).replace("{", "(").replace("}", ")")  # no E112
    if _one_in(draw, 2):
        slot["on_conflict"] = _choose(draw, ("overwrite", "keep", "confirm"))
    if kind == "enum" and _one_in(draw, 3):  # SPEC 18.4: a bare yes or no answers it
        slot[_choose(draw, ("affirm_value", "deny_value"))] = _choose(draw, slot["values"])
    if slot["policy"] == "optional" and kind in ("enum", "boolean") and _one_in(draw, 3):
        slot["none_value"] = _choose(draw, slot["values"]) if kind == "enum" else False  # 18.3
    return slot


def _list_definition(draw) -> dict:
    """A list slot (SPEC 8.2): an item type with that type's constraints, item bounds, and
    `on_conflict` (`append` by default)."""
    items = _choose(draw, ITEM_TYPES)
    slot = _slot_definition(draw, items)
    for key in ("on_conflict", "affirm_value", "deny_value", "none_value"):  # not on a list
        slot.pop(key, None)
    slot.update(value_type="list", items=items)
    if _one_in(draw, 3):
        slot["min_items"] = _int(draw, 0, 2)
    if _one_in(draw, 3):
        slot["max_items"] = max(1, slot.get("min_items", 0)) + _int(draw, 0, 2)
    if _one_in(draw, 2):
        slot["on_conflict"] = _choose(draw, ("append", "overwrite", "keep", "confirm"))
    return slot


_TEXT_CANDIDATES = ("abc", "123", "555-1234", "yes", "한글", "c", "a@b.co", "kim@test.kr",
                    "홍길동", "x", "안녕하세요")


def valid_values(definition: dict) -> list:
    """A few values the slot (or profile field) accepts, as it stores them (deterministic:
    members, bounds, texts its pattern and lengths allow); may be empty."""
    from support.oracle import check_slot_value  # tests/support/oracle.py: the SPEC's rules, no interpreter

    kind = definition["value_type"]
    if kind == "list":
        item = {**definition, "value_type": definition["items"]}
        items = valid_values(item)
        raw: list = [[v] for v in items[:3]] + ([items[:2]] if len(items) > 1 else [])
    elif kind == "enum":
        raw = list(definition["values"])
    elif kind == "boolean":
        raw = [True, False]
    elif kind in ("integer", "number"):
        low, high = definition.get("min"), definition.get("max")
        raw = [b for b in (low, high) if b is not None] + [0, 1, 7, -3]
        if low is not None:
            raw.append(math.ceil(low))
        if low is not None and high is not None:
            raw += [(low + high) / 2, math.floor(high)]
    else:
        lengths = [definition.get("min_length") or 1, definition.get("max_length") or 3]
        raw = list(_TEXT_CANDIDATES) + ["x" * n for n in lengths]
    out = []
    for value in raw:
        ok, stored = check_slot_value(definition, value)
        if ok and stored not in out and not (stored == [] or stored == ""):
            out.append(stored)
    return out


def _task_slot(draw, kind: str) -> dict:
    """A slot of the task scenarios: any kind, lists too, sometimes with a literal default."""
    slot = _list_definition(draw) if kind == "list" else _slot_definition(draw, kind)
    if _one_in(draw, 3):
        values = valid_values(slot)
        if values:
            slot["default"] = _choose(draw, values)
    return slot


def _profile_field(slot: dict, loose: bool = False) -> dict:
    """A profile field (SPEC 8.1) of the slot's value type (its item type for a list) with
    its constraints, or (`loose`) without its bounds, lengths and pattern: then the profile
    may hold a value the slot refuses, which is then no default."""
    keys = ("values", "synonyms", "description") if loose else (
        "values", "synonyms", "min", "max", "min_length", "max_length", "pattern", "description")
    return {"value_type": slot.get("items") or slot["value_type"],
            **{k: v for k, v in slot.items() if k in keys}}


def _profile(draw, slots: dict) -> dict:
    """The profile declaration of a task scenario: a few fields of their own, and one for
    each slot whose default reads the profile (`"{profile.NAME}"`, set here)."""
    profile: dict[str, dict] = {}
    names = list(PROFILE_NAMES)
    for _ in range(_int(draw, 0, 2)):
        name = names.pop(_int(draw, 0, len(names) - 1))
        field_def = _slot_definition(draw, _choose(draw, VALUE_TYPES))
        profile[name] = _profile_field(field_def)
    for _slot_name, slot in slots.items():
        if "default" in slot or not names or not _one_in(draw, 3):
            continue
        name = names.pop(_int(draw, 0, len(names) - 1))
        profile[name] = _profile_field(slot, loose=_one_in(draw, 3))
        slot["default"] = "{profile." + name + "}"
    return profile


@st.composite
def slot_definition(draw, value_type: str | None = None) -> dict:
    """A valid slot definition of `value_type` (any when None)."""
    if value_type == "list":
        return _list_definition(draw)
    return _slot_definition(draw, value_type)


def _intent_definition(draw) -> dict:
    intent: dict[str, Any] = {}
    if _one_in(draw, 2):
        intent["description"] = draw(_short_text)
    if _one_in(draw, 2):
        intent["examples"] = draw(_phrases)
    if _one_in(draw, 2):
        intent["patterns"] = _subset(draw, VALID_PATTERNS, 2)
    return intent


@st.composite
def intent_definition(draw) -> dict:
    """A valid intent definition."""
    return _intent_definition(draw)


# ---------------------------------------------------------------------------------------
# Witnesses and satisfiable conditions.
#
# A condition tree is ("leaf", field, operator, value) with value NO_VALUE for is_empty /
# is_not_empty, ("and", [..]), ("or", [..]) or ("not", c). It is rendered to JSON later.


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _holds(fname: str, op: str, value, w) -> bool:
    """The runtime meaning of a leaf for witness value `w` (None: null / unfilled)."""
    norm = _norm_act if fname == "nlu.dialogue_act" else (lambda v: v)
    if op == "is_empty":
        return w is None
    if op == "is_not_empty":
        return w is not None
    if op == "equals":
        return _same(norm(value), w)
    if op == "not_equals":
        return not _same(norm(value), w)
    if op == "in":
        return any(_same(norm(v), w) for v in value)
    if op == "not_in":
        return not any(_same(norm(v), w) for v in value)
    if op == "contains":  # a substring of a text, an item of a list
        return isinstance(w, (str, list)) and value in w
    if w is None:
        return False
    return {"greater_than": w > value, "greater_or_equal": w >= value,
            "less_than": w < value, "less_or_equal": w <= value}[op]


def _witness(draw, ctx: ConditionContext, fname: str, at: str):
    """A value `fname` can hold while routing at node `at`."""
    if fname == "system.current_node":
        return at
    if fname == "system.conversation_resuming" and at not in ctx.ends:
        return False
    if at in ctx.transient and fname in FRESH_VISIT:
        return FRESH_VISIT[fname]
    kind, nullable = ctx.field_kind(fname)
    if nullable and _one_in(draw, 4):
        return None
    if fname in COUNTER_FLOORS:
        return COUNTER_FLOORS[fname] + _int(draw, 0, 6)
    if fname == "nlu.confidence":
        return _choose(draw, (0.5, 0, 1, 0.25, 0.999))
    if fname == "nlu.text":
        return draw(_short_text)
    members = ctx.members(fname)
    if kind in ("enum", "boolean"):
        return _choose(draw, members) if members else None
    slot = ctx.declared(fname)
    if kind == "list":  # one or two items of the item type (a list is never stored empty)
        item = {**slot, "value_type": slot["items"]}
        items = []
        for _ in range(_int(draw, 1, 2)):
            value = _item_witness(draw, item)
            if value not in items:
                items.append(value)
        return items
    if kind == "integer":
        low = slot.get("min", -50)
        high = slot.get("max", low + 100)
        return _int(draw, math.ceil(low), math.floor(high))
    if kind == "number":
        low = slot.get("min", -50.0)
        high = slot.get("max", low + 100)
        return _choose(draw, (low, high, (low + high) / 2)) if _one_in(draw, 2) else draw(_floats(low, high))
    return draw(_short_text)  # string, email


def _item_witness(draw, item: dict):
    """One item of a list witness, of the item type (within its bounds, a member)."""
    kind = item["value_type"]
    if kind == "enum":
        return _choose(draw, item["values"])
    if kind in ("integer", "number"):
        low = item.get("min", -50)
        high = item.get("max", low + 100)
        return _int(draw, math.ceil(low), math.floor(high)) if kind == "integer" else \
            _choose(draw, (low, high, (low + high) / 2))
    return _choose(draw, ("a@b.co", "kim@test.kr")) if kind == "email" else draw(_short_text)


def _other_item(ctx: ConditionContext, fname: str, w: list):
    """An item of the list field's item type that is not in witness `w`, or None."""
    item = ctx.declared(fname)
    kind = item["items"]
    if kind == "enum":
        return next((m for m in item["values"] if m not in w), None)
    if kind in ("integer", "number"):
        return max(w, default=0) + 1
    return "".join(w) + "없음"


def _other_values(ctx: ConditionContext, fname: str, w, kind: str, nullable: bool) -> list:
    """Candidate values of the field's type that differ from witness `w`."""
    if kind == "list":
        return []  # a list field is compared with `contains`, `is_empty`, `is_not_empty` only
    if kind in ("enum", "boolean"):
        pool = ctx.members(fname) + ([None] if nullable else [])
    elif fname == "nlu.confidence":  # within its bounds: another value is no tautology
        pool = [0, 0.25, 0.5, 0.75, 1]
    elif kind in ("integer", "number"):
        base = 0 if w is None else w
        pool = [base + 1, base - 1, base + 7, base - 3] + ([None] if nullable else [])
        if kind == "integer":
            pool = [v if v is None else int(v) for v in pool]
    else:
        base = "" if w is None else w
        pool = [base + "x", base + "한", "z"] + ([None] if nullable else [])
    return [v for v in pool if not _holds(fname, "equals", v, w)]


def _leaf(draw, ctx: ConditionContext, fname: str, w, want: bool):
    """A leaf on `fname` that witness `w` makes `want` (true or false). A field that is never
    null gets no `is_empty`/`is_not_empty` (always false or true there: a tautology that can
    cut off a node's only way on, E301)."""
    kind, nullable = ctx.field_kind(fname)
    ops = OPS_BY_KIND[kind]
    op = _choose(draw, ops if nullable else tuple(o for o in ops if o not in NO_VALUE_OPS))
    others = _other_values(ctx, fname, w, kind, nullable)
    value: Any = NO_VALUE
    if op in ("equals", "not_equals"):
        if (op == "equals") == want:
            value = w
            if fname == "nlu.dialogue_act" and _one_in(draw, 2):
                value = {"null": None, "deny": "negate"}.get(w, w)
        elif others:
            value = _choose(draw, others)
        else:
            op = None
    elif op in ("in", "not_in"):
        extra = [_choose(draw, others) for _ in range(_int(draw, 0, 3))] if others else []
        if kind in ("enum", "boolean"):  # never every value of a closed set: no tautology
            distinct: list = []
            for v in extra:
                if not any(_same(v, d) for d in distinct):
                    distinct.append(v)
            extra = distinct[:max(0, len(others) - 1)]
        if (op == "in") == want:
            value = _shuffle(draw, extra + [w])
        elif extra:
            value = extra
        else:
            op = None
    elif op in ORDERING:
        value = _ordering_value(draw, op, w, want, kind)
        if value is None or _trivial(fname, op, value):
            op = None
    elif op == "contains" and kind == "list":
        value = _choose(draw, w) if want and w else (
            _other_item(ctx, fname, w or []) if not want else None)
        if value is None:
            op = None
    elif op == "contains":
        if want and isinstance(w, str):
            i = _int(draw, 0, len(w))
            value = w[i:_int(draw, i, len(w))]
        elif not want:
            value = (w or "") + _choose(draw, ("!", "x", "없음"))
        else:
            op = None
    if (op is None or op in NO_VALUE_OPS) and not nullable:
        op, value = ("equals" if want else "not_equals"), w
    elif op is None or op in NO_VALUE_OPS:
        op, value = ("is_empty" if (w is None) == want else "is_not_empty"), NO_VALUE
    assert _holds(fname, op, value, w) == want, (fname, op, value, w, want)
    if kind == "integer" and type(value) is int and _one_in(draw, 10):
        value = float(value)  # a whole float is an integer (typecheck normalises 2.0 -> 2)
    return ("leaf", fname, op, value)


# The bounds of the numeric catalogue fields: an ordering past one is always true or false.
FIELD_BOUNDS = {**{name: (floor, None) for name, floor in COUNTER_FLOORS.items()},
                "nlu.confidence": (0, 1)}


def _trivial(fname: str, op: str, value) -> bool:
    """Whether `fname op value` is always true or always false (a tautology under one
    polarity), given the field's bounds."""
    low, high = FIELD_BOUNDS.get(fname, (None, None))
    below = low is not None and ((op in ("greater_than", "less_or_equal") and value < low)
                                 or (op in ("greater_or_equal", "less_than") and value <= low))
    above = high is not None and ((op in ("greater_than", "less_or_equal") and value >= high)
                                  or (op in ("greater_or_equal", "less_than") and value > high))
    return below or above


def _ordering_value(draw, op: str, w, want: bool, kind: str):
    if w is None:
        return None if want else _int(draw, -5, 5)
    step = _int(draw, 1, 5) if kind == "integer" else _choose(draw, (1, 0.5, 2.25, 100))
    below, above = w - step, w + step
    choices = {
        ("greater_than", True): [below], ("greater_than", False): [above, w],
        ("greater_or_equal", True): [below, w], ("greater_or_equal", False): [above],
        ("less_than", True): [above], ("less_than", False): [below, w],
        ("less_or_equal", True): [above, w], ("less_or_equal", False): [below],
    }[(op, want)]
    value = _choose(draw, choices)
    return value if _holds("", op, value, w) == want else None


def _condition_tree(draw, ctx: ConditionContext, at: str, max_leaves: int = 5, require: tuple | None = None,
                    row: bool = False):
    """A condition tree satisfiable while routing at node `at` (see the module docstring).
    `require`: a (field, value) that the condition must test with `equals` (to use an intent).
    `row`: a rule of node `at` itself, so fields whose value is fixed there are left out (a
    leaf on one is always true or always false there: a tautology can cut off the node's only
    way on, E301): `system.current_node`, `system.conversation_resuming` away from an end
    node, and at a transient node the fresh visit's fields."""
    witnesses: dict[str, Any] = {}
    fields = ctx.fields()
    if row:
        fixed = {"system.current_node"} | (
            set() if at in ctx.ends else {"system.conversation_resuming"}) | (
            set(FRESH_VISIT) if at in ctx.transient else set())
        fields = [f for f in fields if f not in fixed]
    budget = [_int(draw, 1, max_leaves)]

    def witness(fname):
        if fname not in witnesses:
            witnesses[fname] = _witness(draw, ctx, fname, at)
        return witnesses[fname]

    def gen(polarity: bool, depth: int):
        shape = "leaf" if budget[0] <= 1 or depth >= 3 else _choose(draw, ("leaf", "and", "or", "not", "leaf"))
        if shape == "leaf":
            budget[0] -= 1
            fname = _choose(draw, fields)
            return _leaf(draw, ctx, fname, witness(fname), polarity)
        if shape == "not":
            return ("not", gen(not polarity, depth + 1))
        count = _int(draw, 1 if _one_in(draw, 6) else 2, 3)
        return (shape, [gen(polarity, depth + 1) for _ in range(count)])

    tree = gen(True, 0)
    if require is not None:
        fname, value = require
        leaf = ("leaf", fname, "equals", value)
        if fname in [t[1] for t in _leaves(tree)]:
            tree = leaf  # the drawn leaves used another witness for this field
        else:
            tree = ("and", [leaf, tree] if _one_in(draw, 2) else [tree, leaf])
    return tree


@st.composite
def condition_tree(draw, ctx: ConditionContext, at: str, max_leaves: int = 5):
    """A condition tree (see above) satisfiable while routing at node `at` of `ctx`."""
    return _condition_tree(draw, ctx, at, max_leaves)


def _leaves(tree) -> list:
    if tree[0] == "leaf":
        return [tree]
    if tree[0] == "not":
        return _leaves(tree[1])
    return [leaf for item in tree[1] for leaf in _leaves(item)]


# ---------------------------------------------------------------------------------------
# Rendering conditions: object form, expression form, mixed.


def render_value(value, quote: str = '"', ascii_only: bool = False) -> str:
    """A literal in expression syntax."""
    if isinstance(value, list):
        return "[" + ", ".join(render_value(v, quote, ascii_only) for v in value) + "]"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=ascii_only)
        if quote == "'":
            return "'" + text[1:-1].replace("'", "\\'") + "'"
        return text
    return json.dumps(value)


def render_expression(tree, quote: str = '"', ascii_only: bool = False, bare: bool = True,
                      space: str = " ") -> str:
    """Expression syntax for a condition tree; compound operands are parenthesised."""
    kind = tree[0]
    if kind == "leaf":
        _, fname, op, value = tree
        if op in NO_VALUE_OPS:
            return f"{fname}{space}{OPERATOR_SYNTAX[op]}"
        if op == "equals" and value is True and bare:
            return fname
        return f"{fname}{space}{OPERATOR_SYNTAX[op]}{space}{render_value(value, quote, ascii_only)}"

    def operand(item):
        text = render_expression(item, quote, ascii_only, bare, space)
        return f"({text})" if item[0] != "leaf" else text

    if kind == "not":
        return f"not{space}{operand(tree[1])}"
    items = tree[1]
    if len(items) == 1:
        return render_expression(items[0], quote, ascii_only, bare, space)
    return f"{space}{kind}{space}".join(operand(item) for item in items)


def _render_condition(draw, tree, in_expression: bool = False):
    """The JSON value of a condition tree: each node is an object or, with some probability,
    an expression string (then its whole subtree is one)."""
    if in_expression or _one_in(draw, 3):
        return render_expression(tree, quote=_choose(draw, ('"', "'")), ascii_only=_one_in(draw, 2),
                                 bare=not _one_in(draw, 3), space=_choose(draw, (" ", " ", "  ", "\n\t")))
    kind = tree[0]
    if kind == "leaf":
        _, fname, op, value = tree
        obj = {"field": fname, "operator": op}
        if value is not NO_VALUE:
            obj["value"] = value
        return dict(reversed(list(obj.items()))) if _one_in(draw, 4) else obj
    if kind == "not":
        return {"not": _render_condition(draw, tree[1])}
    return {kind: [_render_condition(draw, item) for item in tree[1]]}


@st.composite
def render_condition(draw, tree):
    """Strategy for the JSON value (object, expression or mixed) of a condition tree."""
    return _render_condition(draw, tree)


# ---------------------------------------------------------------------------------------
# Valid scenarios.


@dataclass
class _Row:
    """A next_nodes entry being built: target index (None = stay) and condition tree."""

    target: int | None
    tree: Any = None  # None: unconditional


def _response_text(draw, slot_list: list[str], skill: bool) -> str:
    text = draw(_short_text).replace("{", "(").replace("}", ")")
    if slot_list and _one_in(draw, 2):
        text += "{slots." + _choose(draw, slot_list) + "}"
    if skill and _one_in(draw, 2):
        text = "{skill.data." + _choose(draw, ("temp", "x_", "도시", "a.b")) + "} " + text
    return text


def _responses(draw, slot_list: list[str], skill: bool) -> dict:
    """Responses of a node: a string, or a list of variants (SPEC 9) that are each a sentence
    and all different (E111 otherwise)."""
    out: dict[str, Any] = {}
    for kind in _subset(draw, ("default", "no_input", "not_understood", "turn_limit", "complete"), 5):
        text = _response_text(draw, slot_list, skill)
        if not _one_in(draw, 3):
            out[kind] = text
            continue
        texts = [text] + [_response_text(draw, slot_list, skill) for _ in range(draw(st.integers(0, 3)))]
        distinct = {t.strip(): t for t in reversed(texts) if t.strip()}  # E111 compares stripped
        out[kind] = list(reversed(distinct.values())) or ["variant"]
    return out


def _said_as_meant(node: dict) -> None:
    """A generated node as a designer means it (no W407, W408): one whose only routes are
    stays is marked terminal, and a not_understood response that could never be said (at a
    transient node, or where the fallback policy never re-prompts) is left out."""
    rows = node.get("next_nodes", [])
    if rows and all("target" not in row for row in rows) and "default_next" not in node:
        node["terminal"] = True
    never = node.get("transient") or node.get("params", {}).get("max_fallback_retries") == 0
    if never and "not_understood" in node.get("responses", {}):
        del node["responses"]["not_understood"]


def response_variants(response: Any) -> list[str]:
    """A response's variants (a plain string is one; conditional lines: their texts)."""
    if isinstance(response, dict):
        return [t for line in response.get("lines", []) for t in response_variants(line["text"])]
    return [response] if isinstance(response, str) else list(response)


def plain_responses(responses: dict) -> dict:
    """`responses` with each response of conditional lines (SPEC 14.4) written plainly, as
    its first line (the node's own text: `_conditional_lines`): what a mutation that edits a
    response's text starts from."""
    for kind, response in responses.items():
        if isinstance(response, dict):
            responses[kind] = response["lines"][0]["text"]
    return responses


def _params(draw, slot_list: list[str]) -> dict:
    params: dict[str, Any] = {}
    if _one_in(draw, 2):
        params["max_turns"] = _int(draw, 1, 10)
    if _one_in(draw, 2):
        params["min_turns"] = _int(draw, 1, params.get("max_turns", 5))
    if _one_in(draw, 2):
        params["max_fallback_retries"] = _int(draw, 0, 4)
    if _one_in(draw, 2):
        params["turn_limit_enabled"] = _one_in(draw, 2)
    if _one_in(draw, 4):  # SPEC 13.3: what the node counts as understood
        params["expects"] = _choose(draw, ("intent", "slot", "any"))
    if _one_in(draw, 4):
        params["skill"] = _choose(draw, ("weather", "clock", "lookup", "없는_스킬", ""))
        if _one_in(draw, 2):
            key = "location" if params["skill"] == "weather" else "arg"  # declared arguments
            params["skill_args"] = draw(_argument_json.map(lambda v: {key: v})) if _one_in(draw, 2) else {}
        if _one_in(draw, 2):
            text = draw(plain_text)
            if slot_list and _one_in(draw, 2):
                text += "{slots." + _choose(draw, slot_list) + "}"
            params["fallback"] = text
        if _one_in(draw, 2):
            params["timeout_ms"] = _int(draw, 1, 60_000)
    return params


def _node_ids(draw, n: int) -> list[str]:
    """n distinct node ids: a few drawn freely, the rest numbered from a stem."""
    free = draw(st.lists(node_ids, max_size=min(n, 3), unique=True))
    stem = draw(_id_stems)
    out, i = list(free), 0
    while len(out) < n:
        candidate = f"{stem}{i}"
        if candidate not in out:
            out.append(candidate)
        i += 1
    return _shuffle(draw, out)


def _build_scenario(draw, min_nodes: int = 1, max_nodes: int = 60, allow_globals: bool = True,
                    tasks: bool = False) -> dict:
    n = _int(draw, min_nodes, max_nodes)
    ids = _node_ids(draw, n)
    shape = _choose(draw, ("chain", "tree", "star", "mixed"))
    parent: list[int | None] = [None]
    for k in range(1, n):
        lo = {"chain": k - 1, "tree": max(0, k - 3), "star": 0, "mixed": 0}[shape]
        parent.append(_int(draw, lo, k - 1))
    children: list[list[int]] = [[] for _ in range(n)]
    for k in range(1, n):
        children[parent[k]].append(k)
    terminal = [_one_in(draw, 2) if not children[k] else _one_in(draw, 6) for k in range(n)]
    ends = {ids[k] for k in range(n) if terminal[k] or not children[k]}

    intents = draw(st.lists(intent_names, max_size=4, unique=True))
    slot_list = draw(st.lists(slot_names, max_size=6, unique=True))
    offset = _int(draw, 0, 5)
    if tasks:  # SPEC 8: list slots, defaults (literal and from the profile), a profile
        slots = {name: _task_slot(draw, TASK_TYPES[(i + offset) % 7])
                 for i, name in enumerate(slot_list)}
        profile = _profile(draw, slots)
    else:
        slots = {name: _slot_definition(draw, VALUE_TYPES[(i + offset) % 6]) for i, name in enumerate(slot_list)}
        profile = {}
    declared = _subset(draw, list(SAFETY_CATEGORIES), 3) if _one_in(draw, 2) else []
    # SPEC 8.3: transient nodes (never the entry); a transient node never stays, always
    # leaves unless it is an end node (E109) and goes only forward to another transient
    # node, so that no cycle is made of transient nodes alone (E303).
    transient = {k for k in range(1, n) if tasks and _one_in(draw, 3)}
    ctx = ConditionContext(intents, ids, slots, ends, tuple(declared), profile,
                           {ids[k] for k in transient})
    richness = _int(draw, 0, 3)  # how many extra edges, stays and conditions per node

    rows: list[list[_Row]] = [[] for _ in range(n)]
    last: list[_Row | None] = [None] * n
    default: list[int | None] = [None] * n
    for k in range(n):
        inferred = not children[k] and not terminal[k]
        forward = [] if inferred else (children[k] or list(range(k + 1, n)))
        pending = list(children[k])
        if forward and (k in transient and not terminal[k] or not _one_in(draw, 3)):
            choice = _choose(draw, pending or forward)
            if _one_in(draw, 2):
                default[k] = choice
            else:
                last[k] = _Row(choice)
            if choice in pending:
                pending.remove(choice)
        elif not (inferred or terminal[k]) and k not in transient and _one_in(draw, 5):
            last[k] = _Row(None)  # an unconditional stay, last (at an end node: it never completes)
        targets: list[int | None] = list(pending)
        if not inferred and richness:
            targets += [_int(draw, 0, n - 1) for _ in range(_int(draw, 0, richness - 1))]  # back, self, cross
        if k in transient:
            targets = [t for t in targets if t not in transient or t > k]
        else:
            targets += [None] * _int(draw, 0, min(richness, 2))  # stays
        for target in _shuffle(draw, targets):
            rows[k].append(_Row(target, _condition_tree(draw, ctx, ids[k], max_leaves=1 + 2 * richness,
                                                        row=True)))

    globals_: list[dict] = []
    waiting = [node_id for node_id in ids if node_id not in ctx.transient]  # where globals apply
    if allow_globals:
        for _ in range(_int(draw, 0, 3)):
            at = _choose(draw, waiting)
            globals_.append({"target": _choose(draw, ids), "tree": _condition_tree(draw, ctx, at)})

    _use_intents(draw, ctx, rows, globals_ if allow_globals else None, n)
    return _assemble(draw, ctx, ids, rows, last, default, terminal, globals_, tasks)


def _used(trees: list) -> tuple[set, set]:
    intents, slots = set(), set()
    for tree in trees:
        for _, fname, _op, value in _leaves(tree):
            if fname == "nlu.intent":
                intents.update(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
            elif fname.startswith("slots."):
                slots.add(fname[len("slots."):])
    return intents, slots


def _trees(rows, globals_) -> list:
    return [r.tree for node_rows in rows for r in node_rows if r.tree is not None] + [g["tree"] for g in globals_]


def _use_intents(draw, ctx: ConditionContext, rows, globals_: list | None, n: int) -> None:
    """Every declared intent is compared somewhere (W405): in a new stay or (unless
    `globals_` is None) a new global rule."""
    used_intents, _ = _used(_trees(rows, globals_ or []))
    waiting = [k for k in range(n) if ctx.nodes[k] not in ctx.transient]  # a stay goes there
    for intent in ctx.intents:
        if intent in used_intents:
            continue
        k = _choose(draw, waiting) if ctx.transient else _int(draw, 0, n - 1)
        tree = _condition_tree(draw, ctx, ctx.nodes[k], max_leaves=2, require=("nlu.intent", intent),
                               row=True)
        if globals_ is not None and _one_in(draw, 2):
            globals_.append({"target": _choose(draw, ctx.nodes), "tree": tree})
        else:
            rows[k].insert(_int(draw, 0, len(rows[k])), _Row(None, tree))


def _task_params(draw, params: dict, ctx: ConditionContext, collect: list[str]) -> None:
    """SPEC 8 params: `skip_if_filled: false` on a task node, `clear_slots` (names or "all",
    now and then), a weather `location` read from a slot or the profile."""
    if collect and params.get("skill") is None:
        if _one_in(draw, 4):
            params["skip_if_filled"] = False
        elif _one_in(draw, 2):
            params.pop("min_turns", None)  # `skip:filled` needs min_turns 1
    if ctx.slots and _one_in(draw, 5):
        params["clear_slots"] = "all" if _one_in(draw, 4) else _subset(draw, list(ctx.slots), 2)
    if params.get("skill") is not None and _one_in(draw, 2):
        texts = [n for n, d in ctx.slots.items() if d["value_type"] in ("string", "enum")]
        sources = ["{slots." + n + "}" for n in texts] + [
            "{profile." + n + "}" for n, d in ctx.profile.items() if d["value_type"] == "string"]
        params["skill"] = "weather"
        params["skill_args"] = {"location": _choose(draw, sources + ["부산", "atlantis", ""])}
        if _one_in(draw, 3):  # SPEC 17.21: the location as conditional lines
            lines = []
            for _ in range(_int(draw, 1, 2)):
                line: dict[str, Any] = {"text": _choose(draw, sources + ["부산", "atlantis",
                                                                         "london"])}
                when = line_when(draw, ctx) if _one_in(draw, 2) else None
                if when is not None:
                    line["when"] = when
                lines.append(line)
            params["skill_args"] = {"location": {"lines": lines}}


def _assemble(draw, ctx: ConditionContext, ids, rows, last, default, terminal, globals_,
              tasks: bool = False) -> dict:
    n = len(ids)
    _, cond_slots = _used(_trees(rows, globals_))
    slot_list = list(ctx.slots)
    collect: list[list[str]] = [[] for _ in range(n)]
    for k in range(n):
        if slot_list and _one_in(draw, 2 if tasks else 4):
            collect[k] = _subset(draw, slot_list, 3)
    placeholder_slots: dict[int, list[str]] = {}
    for name in slot_list:  # every declared slot is used (W405)
        if name in cond_slots or any(name in c for c in collect):
            continue
        k = _int(draw, 0, n - 1)
        if _one_in(draw, 2):
            collect[k].append(name)
        else:
            placeholder_slots.setdefault(k, []).append(name)

    nodes = []
    for k in range(n):
        node: dict[str, Any] = {"id": ids[k], "description": draw(_short_text)}
        if _one_in(draw, 4):
            node["name"] = draw(_short_text)
        params = _params(draw, slot_list)
        if tasks:
            _task_params(draw, params, ctx, collect[k])
        responses = _responses(draw, slot_list, "skill" in params)
        for name in placeholder_slots.get(k, []):
            texts = [text + "{slots." + name + "}"
                     for text in response_variants(responses.get("default", ""))]
            responses["default"] = texts if isinstance(responses.get("default"), list) else texts[0]
        if tasks and ctx.profile and _one_in(draw, 3):
            field = " {profile." + _choose(draw, list(ctx.profile)) + "}"
            texts = [text + field for text in response_variants(responses.get("default", ""))]
            responses["default"] = texts if isinstance(responses.get("default"), list) else texts[0]
        if responses or _one_in(draw, 6):
            node["responses"] = responses
        if params or _one_in(draw, 6):
            node["params"] = params
        if collect[k] or _one_in(draw, 8):
            node["collect_slots"] = collect[k]
        entries = []
        for row in rows[k] + ([last[k]] if last[k] is not None else []):
            entry: dict[str, Any] = {"action": "stay"} if row.target is None else {"target": ids[row.target]}
            if row.tree is not None:
                entry["condition"] = _render_condition(draw, row.tree)
            if _one_in(draw, 4):  # SPEC 18.8: reported as next:NAME
                entry["name"] = f"route_{len(entries)}"
            if _one_in(draw, 5):  # SPEC 14.5: applied when the row fires
                _put_set(draw, entry, ctx)
            entries.append(dict(reversed(list(entry.items()))) if _one_in(draw, 3) else entry)
        if entries or _one_in(draw, 8):
            node["next_nodes"] = entries
        if default[k] is not None:
            node["default_next"] = ids[default[k]]
            if _one_in(draw, 5):  # SPEC 17.20: default_next as an object with a set
                node["default_next"] = {"target": ids[default[k]]}
                _put_set(draw, node["default_next"], ctx)
        if _one_in(draw, 6):  # SPEC 14.5: on entering, before the skill
            node["on_enter"] = {}
            _put_set(draw, node["on_enter"], ctx)
        if _one_in(draw, 4):
            _conditional_lines(draw, node, k, ctx)
        if terminal[k]:
            node["terminal"] = True
        elif _one_in(draw, 8):
            node["terminal"] = False
        if ids[k] in ctx.transient:
            node["transient"] = True
        _said_as_meant(node)
        nodes.append(node)

    groups = _route_groups(draw, ctx, nodes) if _one_in(draw, 3) else {}
    graph: dict[str, Any] = {"entry": ids[0], "nodes": _shuffle(draw, nodes)}
    if groups:
        graph["route_groups"] = groups
    if _one_in(draw, 2):
        graph["bot_first"] = _one_in(draw, 2)
    if _one_in(draw, 2):
        graph["closing_acts"] = [_choose(draw, ACT_WORDS) for _ in range(_int(draw, 0, 4))]
    gts = []
    for i, g in enumerate(globals_):
        gt: dict[str, Any] = {"target": g["target"], "condition": _render_condition(draw, g["tree"])}
        if not _one_in(draw, 4):
            gt["name"] = _choose(draw, ("quit", "help", f"g{i}", "끝내기", "a b/c"))
        gts.append(gt)
    if gts or _one_in(draw, 6):
        graph["global_transitions"] = gts
    rules = []
    for category in ctx.safety:  # SPEC 10: any node may be a target, the entry and end nodes too
        rule: dict[str, Any] = {"category": category, "target": _choose(draw, ids)}
        if _one_in(draw, 3):
            rule["name"] = _choose(draw, ("응급", "help", f"s_{category}", "a b/c"))
        rules.append(dict(reversed(list(rule.items()))) if _one_in(draw, 3) else rule)
    if rules or _one_in(draw, 8):
        graph["safety"] = rules

    scenario: dict[str, Any] = {"metadata": {"name": draw(scenario_names)}}
    for key, strategy in (("language", st.sampled_from(["ko", "en", "ko-KR", "en-US"])), ("version", _short_text),
                          ("description", _short_text)):
        if _one_in(draw, 2):
            scenario["metadata"][key] = draw(strategy)
    if _one_in(draw, 2):
        scenario["prompts"] = {k: draw(_short_text) for k in _subset(draw, ("bot", "nlu"), 2)}
    if ctx.intents or _one_in(draw, 2):
        scenario["intents"] = {name: _intent_definition(draw) for name in ctx.intents}
    if ctx.slots or _one_in(draw, 2):
        scenario["slots"] = ctx.slots
    if ctx.profile or (tasks and _one_in(draw, 4)):
        scenario["profile"] = ctx.profile
    if _one_in(draw, 4):
        scenario["safety"] = {"patterns": [
            {"category": _choose(draw, SAFETY_CATEGORIES), "pattern": _choose(draw, SAFETY_PATTERNS)}
            for _ in range(_int(draw, 0, 2))]}
    declared = _declared_skills(graph)
    if declared:
        scenario["skills"] = declared
    scenario["graph"] = graph
    return dict(reversed(list(scenario.items()))) if _one_in(draw, 2) else scenario  # key order means nothing


# --- the designer's language in generated scenarios (SPEC 14.4-14.6) ------------------------


def _set_value(draw, ctx: ConditionContext, name: str):
    """A `set` value for slot `name` (SPEC 14.5, 17.20): a literal it accepts, null (clear),
    a copy of a slot of the same type, or an `add` on a number slot (the result may fall out
    of the slot's bounds: then it is dropped)."""
    definition = ctx.slots[name]
    kind = definition["value_type"]
    same = [other for other, d in ctx.slots.items() if other != name and d == definition]
    forms = ["literal", "null"] + (["copy"] if same else []) + \
        (["add", "add"] if kind in ("integer", "number") else [])
    form = _choose(draw, forms)
    if form == "copy":
        return {"copy": _choose(draw, same)}
    if form == "add":
        return {"add": _choose(draw, (1, -1, 2) if kind == "integer" else (1, -0.5, 2.5))}
    values = valid_values(definition) if form == "literal" else []
    return _choose(draw, values) if values else None


def _put_set(draw, where: dict, ctx: ConditionContext) -> None:
    """A `set` of one or two slots (not list slots) into `where`, when there is a slot."""
    names = [n for n, d in ctx.slots.items() if d["value_type"] != "list"]
    if names:
        where["set"] = {name: _set_value(draw, ctx, name) for name in _subset(draw, names, 2)
                        or names[:1]}


def line_marker(k: int, j: int) -> str:
    """The text of line j of generated node k's default response: unique in any reply, so
    the differential test can see which lines were said (`oracle.Oracle.lines_said`)."""
    return f"[L{k}.{j}]"


def _conditional_lines(draw, node: dict, k: int, ctx: ConditionContext) -> None:
    """The node's default response as conditional lines (SPEC 14.4): two or three marker
    lines, some with a `when` (`line_when`), which the oracle judges on the speaking node's
    facts after the move (17.21)."""
    written = node.get("responses", {}).get("default")
    lines = [] if written is None else [{"text": written}]  # its placeholders stay used (W405)
    for j in range(_int(draw, 2, 3)):
        line: dict[str, Any] = {"text": line_marker(k, j)}
        if not _one_in(draw, 3):
            when = line_when(draw, ctx)
            if when is not None:
                line["when"] = when
        lines.append(line)
    response: dict[str, Any] = {"lines": lines}
    if _one_in(draw, 2):
        response["join"] = _choose(draw, (" ", "\n"))
    node.setdefault("responses", {})["default"] = response


# SPEC 17.21: the fields besides slots a generated line's `when` reads, each judged by the
# oracle on the speaking node's facts (the turn's NLU reading and counters; the node's visit).
LINE_FIELDS = ("system.current_node", "system.previous_node", "nlu.dialogue_act",
               "nlu.intent", "system.node_turns", "system.session_turns",
               "system.slots_updated", "system.required_slots_filled")


def line_when(draw, ctx: ConditionContext) -> dict | None:
    """A conditional line's `when`: on a slot (filled, empty, or equal to a value), or on
    one of `LINE_FIELDS` (None: nothing to read)."""
    names = [n for n, d in ctx.slots.items() if d["value_type"] != "list"]
    if names and _one_in(draw, 2):
        name = _choose(draw, names)
        values = valid_values(ctx.slots[name])
        operator = _choose(draw, ("is_empty", "is_not_empty") + (("equals",) if values else ()))
        when = {"field": "slots." + name, "operator": operator}
        if operator == "equals":
            when["value"] = _choose(draw, values)
        return when
    name = _choose(draw, LINE_FIELDS)
    if name in ("system.current_node", "system.previous_node"):
        if name == "system.previous_node" and _one_in(draw, 3):
            return {"field": name, "operator": "is_empty"}
        return {"field": name, "operator": "equals", "value": _choose(draw, ctx.nodes)}
    if name == "nlu.dialogue_act":
        return {"field": name, "operator": "equals",
                "value": _choose(draw, ("affirm", "deny", "inform", "null", "silence"))}
    if name == "nlu.intent":
        if not ctx.intents or _one_in(draw, 3):
            return {"field": name, "operator": "is_empty"}
        return {"field": name, "operator": "equals", "value": _choose(draw, ctx.intents)}
    if name in ("system.node_turns", "system.session_turns"):
        return {"field": name, "operator": _choose(draw, ("greater_or_equal", "less_or_equal")),
                "value": _int(draw, 0, 3)}
    return {"field": name, "operator": "equals", "value": _one_in(draw, 2)}


def _group_condition(draw, ctx: ConditionContext) -> dict:
    """A group row's condition: an intent or an act said (it can hold at any node that
    waits, and never always: no row after it is shadowed, W403)."""
    if ctx.intents and _one_in(draw, 2):
        return {"field": "nlu.intent", "operator": "equals", "value": _choose(draw, ctx.intents)}
    return {"field": "nlu.dialogue_act", "operator": "equals",
            "value": _choose(draw, ("affirm", "deny", "question", "thank"))}


def _route_groups(draw, ctx: ConditionContext, nodes: list[dict]) -> dict:
    """One or two route groups (SPEC 14.6) of one to three rows (a target, a condition on
    what was said, now and then a `set`), each used by some of the nodes that wait and
    already move on (a transient node never stays; an end node would stop being one), none
    of whose own rows is unconditional (the group would be shadowed, W403); a group leads
    only to nodes that do not use it (a row to the node itself would be a stay)."""
    def usable(node: dict) -> bool:
        rows = node.get("next_nodes", [])
        return not node.get("transient") and not node.get("terminal") and \
            all("condition" in row for row in rows) and \
            (node.get("default_next") is not None or any("target" in row for row in rows))
    waiting = [node for node in nodes if usable(node)]
    groups: dict[str, list] = {}
    for g in range(_int(draw, 1, 2)):
        users = _subset(draw, waiting, 3)
        targets = [i for i in ctx.nodes if i not in {node["id"] for node in users}]
        if not users or not targets:
            break
        rows = []
        for _ in range(_int(draw, 1, 3)):
            row: dict[str, Any] = {"target": _choose(draw, targets),
                                   "condition": _group_condition(draw, ctx)}
            if _one_in(draw, 4):
                _put_set(draw, row, ctx)
            rows.append(row)
        name = _choose(draw, ("help", "common", "하단", f"g{g}"))
        if name in groups:
            continue
        groups[name] = rows
        for node in users:
            node.setdefault("routes", []).append(name)
    return groups


BUILTIN_SKILLS = ("weather", "email")


def _declared_skills(graph: dict) -> dict:
    """SPEC 14.7: every skill a generated node runs, other than the built-ins, declared as a
    python skill (none is installed: its runs fail, as an unknown skill's did) with the
    arguments the nodes give it."""
    declared: dict[str, dict] = {}
    for node in graph["nodes"]:
        params = node.get("params") or {}
        name = params.get("skill")
        if isinstance(name, str) and name not in BUILTIN_SKILLS:
            arguments = declared.setdefault(name, {"type": "python", "arguments": {}})["arguments"]
            arguments.update({arg: {"type": "any"} for arg in params.get("skill_args") or {}})
    return declared


@dataclass
class ScenarioFacts:
    """What a valid scenario declares, for generating turns and mutations."""

    node_ids: list[str]  # source order
    entry: str
    end_nodes: dict[str, str]  # node id -> "explicit" | "inferred"
    intents: list[str]
    slots: dict[str, dict]  # name -> definition as written
    closing_acts: list[str]
    bot_first: bool
    skill_nodes: list[str]
    collect_slots: dict[str, list[str]] = field(default_factory=dict)  # node id -> slots
    global_targets: list[str] = field(default_factory=list)
    safety: dict[str, str] = field(default_factory=dict)  # category -> target (graph.safety)
    profile: dict[str, dict] = field(default_factory=dict)  # SPEC 8.1: field -> declaration
    transient: list[str] = field(default_factory=list)  # SPEC 8.3: transient node ids
    idle_literals: list[int] = field(default_factory=list)  # what system.idle_seconds is compared with

    def node_pointer(self, node_id: str) -> str:
        return pointer("graph", "nodes", self.node_ids.index(node_id))


def facts_of(scenario: dict) -> ScenarioFacts:
    """The `ScenarioFacts` of a valid scenario dict."""
    graph = scenario["graph"]
    ends = {}
    for node in graph["nodes"]:
        targets = [e for e in node.get("next_nodes", []) if "target" in e] + (
            [node["default_next"]] if "default_next" in node else [])
        if node.get("terminal"):
            ends[node["id"]] = "explicit"
        elif not targets:
            ends[node["id"]] = "inferred"
    return ScenarioFacts(
        node_ids=[node["id"] for node in graph["nodes"]], entry=graph["entry"], end_nodes=ends,
        intents=list(scenario.get("intents", {})), slots=dict(scenario.get("slots", {})),
        closing_acts=list(graph.get("closing_acts", ["affirm", "goodbye", "thank", "silence"])),
        bot_first=bool(graph.get("bot_first", False)),
        skill_nodes=[n["id"] for n in graph["nodes"] if n.get("params", {}).get("skill") is not None],
        collect_slots={n["id"]: list(n.get("collect_slots", [])) for n in graph["nodes"]},
        global_targets=[g["target"] for g in graph.get("global_transitions", [])],
        safety={r["category"]: r["target"] for r in graph.get("safety", [])},
        profile=dict(scenario.get("profile", {})),
        transient=[n["id"] for n in graph["nodes"] if n.get("transient")],
        idle_literals=_idle_literals(scenario),
    )


def _idle_literals(scenario: dict) -> list[int]:
    """The whole numbers `system.idle_seconds` is compared with (in either condition form)."""
    from support.oracle import condition_leaves  # the shared reading of both condition forms

    graph = scenario["graph"]
    rules = [r for n in graph["nodes"] for r in n.get("next_nodes", [])]
    rules += graph.get("global_transitions", [])
    found = set()
    for rule in rules:
        for name, _op, value in condition_leaves(rule.get("condition")):
            for v in value if isinstance(value, list) else [value]:
                if name == "system.idle_seconds" and isinstance(v, (int, float)) \
                        and not isinstance(v, bool) and math.isfinite(v):
                    found.add(max(0, int(v)))
    return sorted(found)


@st.composite
def _scenarios(draw, min_nodes: int, max_nodes: int, allow_globals: bool = True,
               tasks: bool = False) -> dict:
    return _build_scenario(draw, min_nodes, max_nodes, allow_globals, tasks)


def valid_scenarios(min_nodes: int = 1, max_nodes: int = 60,
                    tasks: bool = False) -> st.SearchStrategy[dict]:
    """Scenario dicts that compile with no error and no warning (module docstring); with
    `tasks`, the constructs of SPEC 8 too (module docstring)."""
    return _scenarios(min_nodes, max_nodes, tasks=tasks)


def task_scenarios(min_nodes: int = 1, max_nodes: int = 12) -> st.SearchStrategy[dict]:
    """`valid_scenarios(..., tasks=True)`."""
    return valid_scenarios(min_nodes, max_nodes, tasks=True)


def valid_scenario_and_facts(min_nodes: int = 1, max_nodes: int = 60, tasks: bool = False):
    """`(scenario, ScenarioFacts)` pairs."""
    return valid_scenarios(min_nodes, max_nodes, tasks).map(lambda s: (s, facts_of(s)))


def _context(draw) -> ConditionContext:
    ids = _node_ids(draw, _int(draw, 1, 5))
    intents = draw(st.lists(intent_names, max_size=3, unique=True))
    names = draw(st.lists(slot_names, max_size=6, unique=True))
    slots = {name: _slot_definition(draw, VALUE_TYPES[i % 6]) for i, name in enumerate(names)}
    return ConditionContext(intents, ids, slots, set(_subset(draw, ids, len(ids))))


@st.composite
def conditions(draw, max_leaves: int = 6):
    """`(condition JSON value, ConditionContext, node id)`: a condition that type-checks in the
    context and is satisfiable at that node."""
    ctx = _context(draw)
    at = _choose(draw, ctx.nodes)
    tree = _condition_tree(draw, ctx, at, max_leaves=max_leaves)
    return _render_condition(draw, tree), ctx, at


_FIELD_SEGMENT = st.from_regex(r"[^\W\d]\w{0,6}", fullmatch=True).filter(lambda s: s not in KEYWORDS)
field_names = st.builds(lambda parts: ".".join(parts), st.lists(_FIELD_SEGMENT, min_size=1, max_size=3)) | st.sampled_from(
    [f[0] for f in FIXED_FIELDS] + ["slots.and", "slots.식사", "nlu.in_", "x.true_"])
_scalar = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(st.characters(blacklist_categories=("Cs",))))


@st.composite
def _ast_leaf(draw):
    op = draw(st.sampled_from(OPERATORS))
    value = NO_VALUE if op in NO_VALUE_OPS else draw(_scalar | st.lists(_scalar, max_size=4))
    return Leaf(draw(field_names), op, value)


def _compound_asts(children: st.SearchStrategy) -> st.SearchStrategy:
    items = st.lists(children, min_size=2, max_size=3).map(tuple)
    return st.builds(Not, children) | st.builds(And, items) | st.builds(Or, items)


def condition_asts() -> st.SearchStrategy:
    """Condition ASTs with well-formed field names and literal values (not type-checked)."""
    return st.recursive(_ast_leaf(), _compound_asts, max_leaves=8)


# ---------------------------------------------------------------------------------------
# Mutations: one defect, one code, one pointer.


def _copy(doc: dict) -> dict:
    return json.loads(json.dumps(doc))


def _ctx_of(doc: dict) -> ConditionContext:
    facts = facts_of(doc)
    return ConditionContext(facts.intents, facts.node_ids, facts.slots, set(facts.end_nodes),
                            tuple(facts.safety))


@st.composite
def _misspelling(draw, word: str, avoid) -> str:
    """A near miss of `word` that is not in `avoid`."""
    avoid = set(avoid)
    for _ in range(4):
        edit = draw(st.sampled_from(["drop", "swap", "double", "replace", "suffix", "case"]))
        i = draw(st.integers(0, max(0, len(word) - 1)))
        if edit == "drop" and len(word) > 1:
            candidate = word[:i] + word[i + 1:]
        elif edit == "swap" and len(word) > 1:
            i = min(i, len(word) - 2)
            candidate = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        elif edit == "double" and word:
            candidate = word[:i] + word[i] + word[i:]
        elif edit == "replace" and word:
            candidate = word[:i] + draw(st.sampled_from("qxzk_")) + word[i + 1:]
        elif edit == "case":
            candidate = word.swapcase()
        else:
            candidate = word + draw(st.sampled_from(["x", "_2", "s", "e"]))
        if candidate and candidate not in avoid:
            return candidate
    n = 0
    while f"{word}_zz{n}" in avoid:
        n += 1
    return f"{word}_zz{n}"


def _nodes(doc: dict) -> list[dict]:
    return doc["graph"]["nodes"]


def _entries(doc: dict):
    """(node index, entry index, entry) of every next_nodes entry."""
    return [(i, j, e) for i, node in enumerate(_nodes(doc)) for j, e in enumerate(node.get("next_nodes", []))]


def _keys(struct) -> set[str]:
    return {f.encode_name for f in msgspec.structs.fields(struct)}


def _struct_sites(doc: dict) -> list[tuple[tuple, dict, type]]:
    """(path parts, object, schema Struct) of every object the schema decodes as a Struct."""
    sites = [((), doc, _schema.Scenario), (("metadata",), doc["metadata"], _schema.Metadata),
             (("graph",), doc["graph"], _schema.Graph)]
    if "prompts" in doc:
        sites.append((("prompts",), doc["prompts"], _schema.Prompts))
    sites += [(("intents", k), v, _schema.IntentDef) for k, v in doc.get("intents", {}).items()]
    sites += [(("slots", k), v, _schema.SlotDef) for k, v in doc.get("slots", {}).items()]
    for i, node in enumerate(_nodes(doc)):
        sites.append((("graph", "nodes", i), node, _schema.NodeDef))
        for key, struct in (("responses", _schema.Responses), ("params", _schema.Params)):
            if key in node:
                sites.append((("graph", "nodes", i, key), node[key], struct))
        sites += [(("graph", "nodes", i, "next_nodes", j), e, _schema.TransitionDef)
                  for j, e in enumerate(node.get("next_nodes", []))]
    sites += [(("graph", "global_transitions", j), g, _schema.GlobalTransitionDef)
              for j, g in enumerate(doc["graph"].get("global_transitions", []))]
    return sites


@st.composite
def _missing_id(draw, doc: dict) -> str:
    ids = [n["id"] for n in _nodes(doc)]
    return draw(_misspelling(draw(st.sampled_from(ids)), ids) | st.sampled_from(["nowhere", "종료", "END", ""]).filter(
        lambda s: s not in ids))


@st.composite
def _insert_node(draw, doc: dict, node: dict) -> int:
    """Insert `node` at a random position; its index."""
    nodes = _nodes(doc)
    at = draw(st.integers(0, len(nodes)))
    nodes.insert(at, node)
    return at


def _new_name(draw, taken, base_strategy=slot_names) -> str:
    """A name from `base_strategy` that is not in `taken` (numbered when it is)."""
    name = draw(base_strategy)
    if name not in taken:
        return name
    n = 1
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


# Condition placement: where a (possibly defective) condition D goes. Returns D's pointer
# parts and its object-form depth (and/or/not objects above it).

@st.composite
def _place(draw, doc: dict, expression: bool):
    """Choose a place for a new condition D; returns (setter, D pointer parts, depth)."""
    sites = [(("graph", "nodes", i, "next_nodes", j), e) for i, j, e in _entries(doc)]
    sites += [(("graph", "global_transitions", j), g) for j, g in enumerate(doc["graph"].get("global_transitions", []))]
    how = draw(st.sampled_from(["site", "site", "site", "new_entry", "new_global"])) if sites else \
        draw(st.sampled_from(["new_entry", "new_global"]))
    if how == "new_entry":
        i = draw(st.integers(0, len(_nodes(doc)) - 1))
        entry: dict[str, Any] = {"action": "stay"}
        _nodes(doc)[i].setdefault("next_nodes", []).insert(0, entry)
        return (lambda d: entry.__setitem__("condition", d)), ("graph", "nodes", i, "next_nodes", 0, "condition"), 0
    if how == "new_global":
        gts = doc["graph"].setdefault("global_transitions", [])
        gt: dict[str, Any] = {"target": draw(st.sampled_from([n["id"] for n in _nodes(doc)]))}
        gts.append(gt)
        return (lambda d: gt.__setitem__("condition", d)), ("graph", "global_transitions", len(gts) - 1, "condition"), 0
    parts, obj = draw(st.sampled_from(sites))
    parts = parts + ("condition",)
    original = obj.get("condition")
    options = ["replace"] if original is None else ["replace", "and", "or", "not"] + (
        ["join"] if expression and isinstance(original, str) else [])
    mode = draw(st.sampled_from(options))
    if mode == "replace":
        return (lambda d: obj.__setitem__("condition", d)), parts, 0
    if mode == "and":
        return (lambda d: obj.__setitem__("condition", {"and": [original, d]})), parts + ("and", 1), 1
    if mode == "or":
        return (lambda d: obj.__setitem__("condition", {"or": [d, original]})), parts + ("or", 0), 1
    if mode == "not":
        return (lambda d: obj.__setitem__("condition", {"not": d})), parts + ("not",), 1
    return (lambda d: obj.__setitem__("condition", f"({original}) and ({d})")), parts, 0


@st.composite
def _valid_leaf(draw, ctx: ConditionContext, fname: str | None = None):
    fname = fname or draw(st.sampled_from(ctx.fields()))
    at = draw(st.sampled_from(ctx.nodes))
    return _leaf(draw, ctx, fname, _witness(draw, ctx, fname, at), True)


def _leaf_json(leaf_tree) -> dict:
    _, fname, op, value = leaf_tree
    obj = {"field": fname, "operator": op}
    if value is not NO_VALUE:
        obj["value"] = value
    return obj


def _leaf_text(fname: str, op: str, value) -> str:
    if op in NO_VALUE_OPS:
        return f"{fname} {OPERATOR_SYNTAX[op]}"
    return f"{fname} {OPERATOR_SYNTAX[op]} {render_value(value)}"


_LITERALS = {"integer": 3, "number": 2.5, "string": "x", "email": "a@b.c", "boolean": True}


def _value_for(ctx: ConditionContext, fname: str, op: str):
    """A type-correct value for `fname op value` (None when the operator takes none)."""
    if op in NO_VALUE_OPS:
        return NO_VALUE
    kind, _ = ctx.field_kind(fname)
    members = ctx.members(fname)
    one = members[0] if members else (None if fname == "nlu.intent" else _LITERALS.get(kind, "x"))
    if op in ORDERING:
        return 1
    if op == "contains":
        return "x"
    return [one] if op in ("in", "not_in") else one


@st.composite
def _condition_defect(draw, ctx: ConditionContext, code: str, depth: int, expression: bool):
    """(D, suffix parts) for a condition defect of `code` at object depth `depth`; D is an
    expression string when `expression`, else an object."""
    fields = ctx.fields()
    if code == "E201":
        bad = draw(st.sampled_from(fields).flatmap(lambda f: _misspelling(f, fields)) | st.sampled_from(
            ["slots.undeclared_slot", "nlu.intents", "system.turns", "user.name", "skill.data", "slot.x"]))
        bad = bad if bad not in fields and re.fullmatch(r"[^\W\d]\w*(\.[^\W\d]\w*)*", bad) and bad not in KEYWORDS \
            else "nlu.unknown_field"
        op = draw(st.sampled_from(OPERATORS))
        value = NO_VALUE if op in NO_VALUE_OPS else ([1] if op in ("in", "not_in") else "x")
        if expression:
            return _leaf_text(bad, op, value), ()
        return _leaf_json(("leaf", bad, op, value)), ("field",)
    if code == "E202":
        fname = draw(st.sampled_from(fields))
        op = draw(st.sampled_from(["==", "eq", "equal", "gt", ">=", "not in", "is empty", "contain",
                                   "EQUALS", "greater", "", "같음"]))
        obj = {"field": fname, "operator": op}
        if draw(st.booleans()):
            obj["value"] = _value_for(ctx, fname, "equals")
        return obj, ("operator",)
    if code == "E203":
        choices = []
        for fname in fields:
            kind, _ = ctx.field_kind(fname)
            if kind not in ("integer", "number"):
                choices += [(fname, op) for op in ORDERING]
            if kind not in ("string", "email"):
                choices.append((fname, "contains"))
        fname, op = draw(st.sampled_from(choices))
        value = 1 if op in ORDERING else "x"
        if expression:
            return _leaf_text(fname, op, value), ()
        return {"field": fname, "operator": op, "value": value}, ("operator",)
    if code == "E204":
        return draw(_bad_value(ctx, expression))
    if code == "E205":
        return draw(_syntax_error(ctx)), ()
    return draw(_malformed(ctx, depth, expression))  # E206


@st.composite
def _bad_value(draw, ctx: ConditionContext, expression: bool):
    fields = ctx.fields()
    enum_fields = [f for f in fields if ctx.field_kind(f)[0] == "enum"]
    kind_of = {f: ctx.field_kind(f) for f in fields}
    case = draw(st.sampled_from(["member", "member_in_list", "type", "null", "not_list", "empty_list",
                                 "fraction", "ordering_text", "contains_number"] + ([] if expression else ["not_literal"])))
    item = None
    if case in ("member", "member_in_list"):
        fname = draw(st.sampled_from(enum_fields))
        members = ctx.members(fname)
        taken = set(members) | ({"negate"} if fname == "nlu.dialogue_act" else set())
        bad = draw(_misspelling(draw(st.sampled_from(members)), taken)) if members else "undeclared"
        if bad in taken:
            bad = "undeclared_zz"
        if case == "member":
            op, value = draw(st.sampled_from(["equals", "not_equals"])), bad
        else:
            good = [m for m in members][:2] or ([None] if kind_of[fname][1] else [])
            item = draw(st.integers(0, len(good)))
            value = good[:item] + [bad] + good[item:]
            op = draw(st.sampled_from(["in", "not_in"]))
    elif case == "type":
        fname = draw(st.sampled_from(fields))
        kind = kind_of[fname][0]
        wrong = {"integer": "3", "number": "2.5", "string": 5, "email": False, "boolean": "true", "enum": 7}[kind]
        op, value = "equals", wrong
    elif case == "null":
        fname = draw(st.sampled_from([f for f in fields if not kind_of[f][1] and f != "nlu.dialogue_act"]))
        op, value = draw(st.sampled_from(["equals", "not_equals"])), None
    elif case in ("not_list", "empty_list"):
        fname = draw(st.sampled_from(fields))
        op = draw(st.sampled_from(["in", "not_in"]))
        value = _value_for(ctx, fname, "equals") if case == "not_list" else []
        if value is None:  # `in null`: still not a list
            value = None
    elif case == "fraction":
        fname = draw(st.sampled_from([f for f in fields if kind_of[f][0] == "integer"]))
        op, value = draw(st.sampled_from(["equals", "greater_than", "less_or_equal"])), 1.5
    elif case == "ordering_text":
        fname = draw(st.sampled_from([f for f in fields if kind_of[f][0] in ("integer", "number")]))
        op, value = draw(st.sampled_from(ORDERING)), draw(st.sampled_from(["1", "many", None, True]))
    elif case == "contains_number":
        fname = draw(st.sampled_from([f for f in fields if kind_of[f][0] in ("string", "email")]))
        op, value = "contains", draw(st.sampled_from([1, None, True, ["x"]]))
    else:  # not_literal: object form only
        fname = draw(st.sampled_from(fields))
        return {"field": fname, "operator": "equals", "value": draw(st.sampled_from([{"a": 1}, [[1]], [{}]]))}, \
            ("value",)
    if expression:
        return _leaf_text(fname, op, value), ()
    suffix = ("value",) if item is None else ("value", item)
    return {"field": fname, "operator": op, "value": value}, suffix


@st.composite
def _syntax_error(draw, ctx: ConditionContext) -> str:
    leaf = draw(_valid_leaf(ctx))
    text = render_expression(leaf)
    fname = leaf[1]
    broken = [
        "", "   ", "\n", text + " and", text + " or", "and " + text, "(" + text, text + ")",
        f"{fname} = 1", f"{fname} is", f"{fname} ==", f"{fname} is not", f'{fname} == "abc',
        f'{fname} == "a\\q"', f"{fname} == 01", text + " " + text, "nlu.confidence > 1e999",
        f'{fname} == "\\ud800"', "NOT " + text, f"{fname} in [1, [2]]", "@" + text, text + " &&",
        f"{fname} not {fname}", f"{fname} in [1,", "not", "()", f"{fname} == 'x",
        f"{fname} === 1", f"{fname} ! = 1", "nlu.confidence > 1" + "0" * 400 + ".0e999",
    ]
    return draw(st.sampled_from(broken))


@st.composite
def _malformed(draw, ctx: ConditionContext, depth: int, expression: bool):
    leaf = _leaf_json(draw(_valid_leaf(ctx)))
    fname = leaf["field"]
    case = "too_deep_expression" if expression else draw(st.sampled_from(
        ["empty", "no_operator", "no_value", "value_not_allowed", "mixed", "empty_list", "not_list",
         "unknown_key", "too_deep", "too_deep_and"]))
    if case == "empty":
        return {}, ()
    if case == "no_operator":
        return {"field": fname}, ()
    if case == "no_value":
        return {"field": fname, "operator": draw(st.sampled_from(["equals", "in", "greater_than", "contains"]))}, ()
    if case == "value_not_allowed":
        return {"field": fname, "operator": draw(st.sampled_from(NO_VALUE_OPS)), "value": 1}, ("value",)
    if case == "mixed":
        return draw(st.sampled_from([{**leaf, "and": [leaf]}, {"and": [leaf], "or": [leaf]},
                                     {"not": leaf, "operator": "equals"}, {"not": leaf, "field": fname}])), ()
    if case == "empty_list":
        form = draw(st.sampled_from(["and", "or"]))
        return {form: []}, (form,)
    if case == "not_list":
        form = draw(st.sampled_from(["and", "or"]))
        return {form: draw(st.sampled_from(["x", leaf, 3, None]))}, (form,)
    if case == "unknown_key":
        key = draw(st.sampled_from(["fild", "operater", "vale", "AND", "nott", "a/b", "x~y", ""]) | any_text)
        if key in CONDITION_KEYS:
            key = key + "_"
        return {**leaf, key: draw(small_json)}, (key,)
    if case in ("too_deep", "too_deep_and"):
        extra = draw(st.integers(0, 4))
        count = MAX_DEPTH + 1 - depth + extra
        inner: Any = leaf
        step = ("not",) if case == "too_deep" else ("and", 0)
        for _ in range(count):
            inner = {"not": inner} if case == "too_deep" else {"and": [inner]}
        return inner, step * (MAX_DEPTH - depth)
    text = render_expression(("leaf", fname, leaf["operator"], leaf.get("value", NO_VALUE)))
    n = MAX_DEPTH + 1 + draw(st.integers(0, 5))
    return draw(st.sampled_from(["not " * n + text, "(" * n + text + ")" * n])), ()


# Families. Each takes (draw, doc) and returns (document, pointer parts or "" pointer string).

def _fam_E001(draw, doc):
    """Broken JSON: truncated, a structural character removed or doubled, a trailing comma,
    garbage after the document, or (as bytes) an invalid UTF-8 sequence."""
    text = json.dumps(doc, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1, 2])))
    structural = _structural_positions(text)
    case = draw(st.sampled_from(["truncate", "drop_comma", "colon", "trailing_comma", "garbage", "bytes",
                                 "empty", "unclosed", "doubled_brace"]))
    if case == "truncate":
        return text[:draw(st.integers(0, len(text) - 1))], ""
    if case == "drop_comma" and structural[","]:
        i = draw(st.sampled_from(structural[","]))
        return text[:i] + text[i + 1:], ""
    if case == "colon":
        i = draw(st.sampled_from(structural[":"]))
        return text[:i] + draw(st.sampled_from(["=", " ", "::"])) + text[i + 1:], ""
    if case == "trailing_comma" and structural["close"]:
        i = draw(st.sampled_from(structural["close"]))
        return text[:i] + "," + text[i:], ""
    if case == "garbage":
        return text + draw(st.sampled_from([" x", "}", "{}", ",", "\x00", " //c"])), ""
    if case == "bytes":
        data = text.encode("utf-8")
        i = draw(st.integers(0, len(data)))
        bad = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80", b"\xf8\x88\x80\x80\x80", b"\xe2\x82"]))
        return data[:i] + bad + data[i:], ""
    if case == "empty":
        return draw(st.sampled_from(["", " ", "\n\n", "\ufeff"])), ""
    if case == "doubled_brace":
        return "{" + text, ""
    return text[:-1], ""  # unclosed (and the drop_comma / trailing_comma fallbacks)


def _structural_positions(text: str) -> dict[str, list[int]]:
    """Offsets of `,` `:` and closing brackets outside strings."""
    out: dict[str, list[int]] = {",": [], ":": [], "close": []}
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in ",:":
            out[ch].append(i)
        elif ch in "}]":
            out["close"].append(i)
    return out


def _fam_E002(draw, doc):
    """A top level that is not an object (array, string, number, true/false/null), or `{}`."""
    value = draw(st.sampled_from([[], [doc], "scenario", 0, 1.5, True, False, None, {}])
                 | json_values().filter(lambda v: not isinstance(v, dict)))
    return json.dumps(value, indent=draw(st.sampled_from([None, 2]))) + draw(st.sampled_from(["", "\n", "  "])), ""


def _fam_E010(draw, doc):
    """An unknown key (a misspelt known key, or any text) in an object the schema decodes."""
    parts, obj, struct = draw(st.sampled_from(_struct_sites(doc)))
    known = _keys(struct)
    taken = known | set(_schema.REMOVED_FIELDS) | set(obj)
    typo = st.sampled_from(sorted(known)).flatmap(lambda k: _misspelling(k, taken))
    key = draw(typo | any_text.filter(lambda k: k not in taken))
    if key in taken:
        key = "zz_unknown_field"
    obj[key] = draw(small_json)
    return doc, parts + (key,)


def _fam_E011(draw, doc):
    """A required field removed: metadata.name, graph.entry, a node's description, a slot's
    policy, a global transition's target, or the whole metadata."""
    sites = [(("metadata",), doc["metadata"], "name"), (("graph",), doc["graph"], "entry"), ((), doc, "metadata")]
    sites += [(("graph", "nodes", i), n, "description") for i, n in enumerate(_nodes(doc))]
    sites += [(("slots", k), v, "policy") for k, v in doc.get("slots", {}).items()]
    sites += [(("graph", "global_transitions", j), g, "target")
              for j, g in enumerate(doc["graph"].get("global_transitions", []))]
    parts, obj, key = draw(st.sampled_from(sites))
    del obj[key]
    return doc, parts


def _fam_E012(draw, doc):
    """A wrong JSON type or out-of-range value (see the cases)."""
    graph, nodes = doc["graph"], _nodes(doc)
    i = draw(st.integers(0, len(nodes) - 1))
    node = nodes[i]
    cases = ["bot_first", "closing_act", "closing_acts", "condition", "max_turns", "node_id", "terminal",
             "description", "name", "empty_nodes", "collect_slots", "response", "skill_args",
             "default_next", "field"]
    if doc.get("intents"):
        cases += ["examples", "example_item", "pattern"]
    if doc.get("slots"):
        cases += ["policy", "on_conflict", "slot_min"]
    if graph.get("global_transitions"):
        cases.append("global_name")
    case = draw(st.sampled_from(cases))
    if case == "bot_first":
        graph["bot_first"] = draw(st.sampled_from(["true", 1, None, [], "yes"]))
        return doc, ("graph", "bot_first")
    if case == "closing_act":
        acts = graph.setdefault("closing_acts", [])
        k = draw(st.integers(0, len(acts)))
        acts.insert(k, draw(st.sampled_from(["goodby", "bye", "Affirm", "", "deny ", "negative"])))
        return doc, ("graph", "closing_acts", k)
    if case == "closing_acts":
        graph["closing_acts"] = draw(st.sampled_from(["affirm", 1, {"affirm": True}]))
        return doc, ("graph", "closing_acts")
    if case == "condition":
        setter, parts, _ = draw(_place(doc, False))
        setter(draw(st.sampled_from([1, 2.5, True, False, None, [], ["slots.x == 1"]])))
        return doc, parts
    if case == "field":
        setter, parts, _ = draw(_place(doc, False))
        setter({"field": draw(st.sampled_from([1, None, ["nlu.intent"], True])), "operator": "is_empty"})
        return doc, parts + ("field",)
    if case == "max_turns":
        key = draw(st.sampled_from(["max_turns", "min_turns", "max_fallback_retries", "timeout_ms", "turn_limit_enabled"]))
        wrong = ["3", 2.5, [1], {}] + ([1] if key == "turn_limit_enabled" else [True])
        node.setdefault("params", {})[key] = draw(st.sampled_from(wrong))
        return doc, ("graph", "nodes", i, "params", key)
    if case == "node_id":
        at = draw(_insert_node(doc, {"id": draw(st.sampled_from(["1abc", "a-b", "노드", "", "a b", "é"])),
                                     "description": "an id that is not an identifier"}))
        return doc, ("graph", "nodes", at, "id")
    if case == "terminal":
        node["terminal"] = draw(st.sampled_from(["yes", 1, None, "true"]))
        return doc, ("graph", "nodes", i, "terminal")
    if case == "description":
        node["description"] = draw(st.sampled_from([42, None, [], {"text": "x"}]))
        return doc, ("graph", "nodes", i, "description")
    if case == "name":
        doc["metadata"]["name"] = draw(st.sampled_from([7, None, ["x"], False]))
        return doc, ("metadata", "name")
    if case == "empty_nodes":
        graph["nodes"] = []
        return doc, ("graph", "nodes")
    if case == "collect_slots":
        node["collect_slots"] = draw(st.sampled_from(["slot", 1, {"a": 1}]))
        return doc, ("graph", "nodes", i, "collect_slots")
    if case == "response":
        kind = draw(st.sampled_from(["default", "no_input", "complete"]))
        node.setdefault("responses", {})[kind] = draw(st.sampled_from([5, 1.5, True, {}]))
        return doc, ("graph", "nodes", i, "responses", kind)
    if case == "skill_args":
        params = node.setdefault("params", {})
        params["skill_args"] = draw(st.sampled_from([[1], "x", 3]))
        return doc, ("graph", "nodes", i, "params", "skill_args")
    if case == "default_next":
        node["default_next"] = draw(st.sampled_from([5, [], {"id": "x"}, True]))
        return doc, ("graph", "nodes", i, "default_next")
    if case in ("examples", "example_item", "pattern"):
        name = draw(st.sampled_from(sorted(doc["intents"])))
        intent = doc["intents"][name]
        if case == "examples":
            intent["examples"] = draw(st.sampled_from(["bye", 3, {"a": "b"}]))
            return doc, ("intents", name, "examples")
        key = "examples" if case == "example_item" else "patterns"
        items = intent.setdefault(key, [])
        k = draw(st.integers(0, len(items)))
        items.insert(k, draw(st.sampled_from([3, None, True])) if key == "examples" else
                     draw(st.sampled_from(["(", "[a-", "*x", "(?P<a", "a{2,1}"])))
        return doc, ("intents", name, key, k)
    if case == "global_name":
        j = draw(st.integers(0, len(graph["global_transitions"]) - 1))
        graph["global_transitions"][j]["name"] = draw(st.sampled_from([5, True, ["q"]]))
        return doc, ("graph", "global_transitions", j, "name")
    name = draw(st.sampled_from(sorted(doc["slots"])))
    key = {"policy": "policy", "on_conflict": "on_conflict", "slot_min": "min"}[case]
    doc["slots"][name][key] = draw(st.sampled_from({"policy": ["must", "Required", 1],
                                                     "on_conflict": ["replace", "ask", 3],
                                                     # a string is a date or time bound
                                                     "min": [True, [1], {}]}[key]))
    return doc, ("slots", name, key)


def _fam_E013(draw, doc):
    """A field removed in v2: a node's type/executor/transitions/next/end, graph.start_node,
    a slot's or intent's `type`, or a `"__stay__"` target."""
    nodes = _nodes(doc)
    i = draw(st.integers(0, len(nodes) - 1))
    case = draw(st.sampled_from(["node", "node", "start_node", "stay_target", "slot_type"]))
    if case == "node":
        key = draw(st.sampled_from(["type", "executor", "transitions", "next", "end"]))
        if key in nodes[i]:
            key = "type"
        nodes[i][key] = {"type": "task", "executor": "general", "transitions": [], "next": nodes[0]["id"],
                         "end": True}[key]
        return doc, ("graph", "nodes", i, key)
    if case == "start_node":
        doc["graph"]["start_node"] = draw(st.sampled_from([doc["graph"]["entry"], "start"]))
        return doc, ("graph", "start_node")
    if case == "slot_type" and doc.get("slots"):
        name = draw(st.sampled_from(sorted(doc["slots"])))
        doc["slots"][name]["type"] = "enum"
        return doc, ("slots", name, "type")
    targets = [(a, b, e) for a, b, e in _entries(doc) if "target" in e]
    if targets and draw(st.booleans()):
        a, b, e = draw(st.sampled_from(targets))
        e["target"] = "__stay__"
        return doc, ("graph", "nodes", a, "next_nodes", b, "target")
    nodes[i].setdefault("next_nodes", []).insert(0, {"target": "__stay__"})
    return doc, ("graph", "nodes", i, "next_nodes", 0, "target")


def _fam_E101(draw, doc):
    """A second node with an existing id, inserted anywhere; reported at the later one."""
    nodes = _nodes(doc)
    k = draw(st.integers(0, len(nodes) - 1))
    original = nodes[k]
    at = draw(_insert_node(doc, {"id": original["id"], "description": "a copy"}))
    later = max(at, nodes.index(original))
    return doc, ("graph", "nodes", later, "id")


def _fam_E102(draw, doc):
    """`graph.entry` names no node."""
    doc["graph"]["entry"] = draw(_missing_id(doc))
    return doc, ("graph", "entry")


def _fam_E103(draw, doc):
    """A target, default_next or global target that names no node."""
    missing = draw(_missing_id(doc))
    sites = [(("graph", "nodes", i, "next_nodes", j, "target"), e, "target") for i, j, e in _entries(doc) if "target" in e]
    sites += [(("graph", "nodes", i, "default_next"), n, "default_next") for i, n in enumerate(_nodes(doc))]
    sites += [(("graph", "global_transitions", j, "target"), g, "target")
              for j, g in enumerate(doc["graph"].get("global_transitions", []))]
    sites += [(("graph", "safety", j, "target"), r, "target")
              for j, r in enumerate(doc["graph"].get("safety", []))]
    parts, obj, key = draw(st.sampled_from(sites))
    obj[key] = missing
    return doc, parts


def _fam_E104(draw, doc):
    """A next_nodes entry with both target and action, neither, or an unknown action."""
    entries = _entries(doc)
    ids = [n["id"] for n in _nodes(doc)]
    case = draw(st.sampled_from(["both", "neither", "action"]))
    if entries and draw(st.booleans()):
        i, j, e = draw(st.sampled_from(entries))
    else:
        i = draw(st.integers(0, len(ids) - 1))
        e = {"action": "stay"} if draw(st.booleans()) else {"target": draw(st.sampled_from(ids))}
        j = 0
        _nodes(doc)[i].setdefault("next_nodes", []).insert(0, e)
    parts = ("graph", "nodes", i, "next_nodes", j)
    if case == "both":
        if "target" in e:
            e["action"] = "stay"
        else:
            e["target"] = draw(st.sampled_from(ids))
        return doc, parts
    if case == "neither":
        e.pop("target", None)
        e.pop("action", None)
        return doc, parts
    e.pop("target", None)
    e["action"] = draw(st.sampled_from(["stya", "move", "end", "Stay", "", "goto"]))
    return doc, parts + ("action",)


def _fam_E105(draw, doc):
    """An undeclared slot in collect_slots, in a `{slots.NAME}` placeholder (a response or a
    skill's fallback), or `{skill.data.KEY}` on a node without a skill."""
    slots = doc.get("slots", {})
    nodes = _nodes(doc)
    i = draw(st.integers(0, len(nodes) - 1))
    node = nodes[i]
    name = draw(st.sampled_from(sorted(slots)).flatmap(lambda s: _misspelling(s, slots)) if slots else slot_names)
    name = name if name not in slots and "{" not in name and "}" not in name else "undeclared_zz"
    case = draw(st.sampled_from(["collect", "placeholder", "skill_data", "fallback"]))
    if case == "collect":
        collect = node.setdefault("collect_slots", [])
        collect.append(name)
        return doc, ("graph", "nodes", i, "collect_slots", len(collect) - 1)
    if case == "fallback":
        params = node.setdefault("params", {})
        params.setdefault("skill", "weather")
        params["fallback"] = params.get("fallback", "") + "{slots." + name + "}"
        return doc, ("graph", "nodes", i, "params", "fallback")
    if case == "skill_data" and node.get("params", {}).get("skill") is None:
        text = "{skill.data." + draw(st.sampled_from(["temp", "x_y", "한"])) + "}"
    else:
        text = "{slots." + name + "}"
    kind = draw(st.sampled_from(["default", "no_input", "not_understood", "turn_limit", "complete"]))
    responses = plain_responses(node.setdefault("responses", {}))
    if isinstance(responses.get(kind), list):  # one variant of a list (SPEC 9)
        j = draw(st.integers(0, len(responses[kind]) - 1))
        responses[kind][j] += text + draw(plain_text)
        return doc, ("graph", "nodes", i, "responses", kind, j)
    responses[kind] = (responses.get(kind) or "") + text + draw(plain_text)
    return doc, ("graph", "nodes", i, "responses", kind)


def _fam_E106(draw, doc):
    """An invalid slot definition (see the cases), in a new slot or an existing one."""
    slots = doc.setdefault("slots", {})
    case = draw(st.sampled_from(["no_values", "empty_values", "duplicate", "values_non_enum", "synonyms_non_enum",
                                 "synonym_non_member", "min_max", "min_non_numeric", "length_non_text",
                                 "negative_length", "length_order", "pattern"]))
    name = _new_name(draw, slots)
    existing = [k for k, v in slots.items()]

    def pick(kinds):
        fitting = [k for k in existing if slots[k]["value_type"] in kinds]
        if fitting and draw(st.booleans()):
            return draw(st.sampled_from(fitting))
        slots[name] = draw(slot_definition(draw(st.sampled_from(kinds))))
        return name

    if case == "no_values":
        slots[name] = {"policy": "optional", "value_type": "enum"}
        return doc, ("slots", name)
    if case == "empty_values":
        slots[name] = {"policy": "optional", "value_type": "enum", "values": []}
        return doc, ("slots", name, "values")
    if case == "duplicate":
        s = pick(["enum"])
        values = slots[s]["values"]
        values.insert(draw(st.integers(0, len(values))), draw(st.sampled_from(values)))
        return doc, ("slots", s, "values")
    if case == "values_non_enum":
        s = pick(["string", "integer", "number", "boolean", "email"])
        slots[s]["values"] = draw(st.lists(any_text, max_size=3))
        return doc, ("slots", s, "values")
    if case == "synonyms_non_enum":
        s = pick(["string", "integer", "number", "boolean", "email"])
        slots[s]["synonyms"] = {"a": ["b"]}
        return doc, ("slots", s, "synonyms")
    if case == "synonym_non_member":
        s = pick(["enum"])
        values = slots[s]["values"]
        key = draw(_misspelling(draw(st.sampled_from(values)), values))
        slots[s].setdefault("synonyms", {})[key] = ["x"]
        return doc, ("slots", s, "synonyms", key)
    if case == "min_max":
        s = pick(["integer", "number"])
        slot = slots[s]
        gap = draw(st.sampled_from([1, 0.5, 100]))
        if "max" in slot:
            slot["min"] = slot["max"] + gap
        elif "min" in slot:
            slot["max"] = slot["min"] - gap
        else:
            slot["min"], slot["max"] = gap, 0
        return doc, ("slots", s, "min")
    if case == "min_non_numeric":
        s = pick(["string", "email", "boolean", "enum"])
        key = draw(st.sampled_from(["min", "max"]))
        slots[s][key] = 1
        return doc, ("slots", s, key)
    if case == "length_non_text":
        s = pick(["integer", "number", "boolean", "enum"])
        key = draw(st.sampled_from(["min_length", "max_length", "pattern"]))
        slots[s][key] = "x" if key == "pattern" else 2
        return doc, ("slots", s, key)
    if case == "negative_length":
        s = pick(["string", "email"])
        slots[s]["min_length"] = -draw(st.integers(1, 5))
        return doc, ("slots", s, "min_length")
    if case == "length_order":
        s = pick(["string", "email"])
        slot = slots[s]
        if "max_length" in slot:
            slot["min_length"] = slot["max_length"] + draw(st.integers(1, 3))
        else:
            slot["min_length"], slot["max_length"] = slot.get("min_length", 0) + 2, slot.get("min_length", 0) + 1
        return doc, ("slots", s, "min_length")
    s = pick(["string", "email"])
    slots[s]["pattern"] = draw(st.sampled_from(["(", "[a-", "*x", "(?P<a", "a{2,1}", "\\"]))
    return doc, ("slots", s, "pattern")


def _fam_E107(draw, doc):
    """An invalid params value: max_turns < 1, min_turns < 1 or > max_turns, negative
    retries, timeout_ms < 1, skill arguments nested too deep, or a skill parameter without a skill."""
    nodes = _nodes(doc)
    i = draw(st.integers(0, len(nodes) - 1))
    params = nodes[i].setdefault("params", {})
    case = draw(st.sampled_from(["max_turns", "min_turns_zero", "min_above_max", "retries", "timeout",
                                 "without_skill", "deep_args"]))
    if case == "max_turns":
        params["max_turns"] = draw(st.integers(-5, 0))
        return doc, ("graph", "nodes", i, "params", "max_turns")
    if case == "min_turns_zero":
        params["min_turns"] = draw(st.integers(-5, 0))
        return doc, ("graph", "nodes", i, "params", "min_turns")
    if case == "min_above_max":
        params.setdefault("max_turns", draw(st.integers(1, 5)))
        params["min_turns"] = params["max_turns"] + draw(st.integers(1, 5))
        return doc, ("graph", "nodes", i, "params", "min_turns")
    if case == "retries":
        params["max_fallback_retries"] = draw(st.integers(-9, -1))
        return doc, ("graph", "nodes", i, "params", "max_fallback_retries")
    if case == "timeout":
        params.setdefault("skill", "weather")
        params["timeout_ms"] = draw(st.integers(-100, 0))
        return doc, ("graph", "nodes", i, "params", "timeout_ms")
    if case == "deep_args":
        params["skill"] = "weather"  # a built-in: its declared argument takes the depth
        deep: Any = 1
        for _ in range(33 + draw(st.integers(0, 5))):
            deep = {"k": deep} if draw(st.booleans()) else [deep]
        params["skill_args"] = {"location": deep}
        return doc, ("graph", "nodes", i, "params", "skill_args")
    params.pop("skill", None)
    for key in ("skill_args", "fallback", "timeout_ms"):
        params.pop(key, None)
    key = draw(st.sampled_from(["skill_args", "fallback", "timeout_ms"]))
    params[key] = {"skill_args": {"city": "Seoul"}, "fallback": "sorry", "timeout_ms": 500}[key]
    # A {skill.data.KEY} placeholder needs the skill we just removed: drop such responses.
    responses = plain_responses(nodes[i].get("responses", {}))
    for kind, response in responses.items():
        unplaced = [re.sub(r"\{skill\.data\.[^{}]*\}", "(skill data)", text)
                    for text in response_variants(response)]
        responses[kind] = unplaced if isinstance(response, list) else unplaced[0]
    return doc, ("graph", "nodes", i, "params", key)


def _condition_family(code):
    def family(draw, doc):
        ctx = _ctx_of(doc)
        expression = {"E202": False, "E205": True}.get(code, draw(st.booleans()))
        setter, parts, depth = draw(_place(doc, expression))
        value, suffix = draw(_condition_defect(ctx, code, depth, expression))
        setter(value)
        return doc, parts + tuple(suffix)
    family.__doc__ = f"A condition with one {code} defect, replacing a condition, beside it under " \
                     "and/or, under not, joined to an expression, or in a new stay entry or global rule."
    return family


@st.composite
def _satisfiable_at(draw, doc: dict, node_id: str):
    """A condition that can hold at `node_id` of `doc`."""
    return _render_condition(draw, _condition_tree(draw, _ctx_of(doc), node_id, max_leaves=2))


def _enter_from(draw, doc: dict, target: str, from_entry: bool = False) -> int:
    """Give an existing node (the entry, if `from_entry`) a conditional transition (first) to
    the new node `target`; an inferred end node chosen for it is marked terminal, so that it
    stays an end node, and leaves only on a greeting."""
    nodes = _nodes(doc)
    ends = facts_of(doc).end_nodes
    if from_entry:
        i = next(k for k, n in enumerate(nodes) if n["id"] == doc["graph"]["entry"])
    else:
        i = draw(st.integers(0, len(nodes) - 1))
    node = nodes[i]
    # at an end node a condition that always holds there would keep it from completing
    # (E301): it leaves on a greeting only
    condition = 'nlu.dialogue_act == "greet"' if node["id"] in ends else \
        draw(_satisfiable_at(doc, node["id"]))
    if ends.get(node["id"]) == "inferred":
        node["terminal"] = True
    node.setdefault("next_nodes", []).insert(0, {"target": target, "condition": condition})
    return i


def _enter_on_greet(draw, doc: dict, target: str) -> None:
    """Give an existing node a first transition to the new node `target` on a greeting (a
    condition that is never always true, so it cuts no way off: no E301); an inferred end
    node chosen for it is marked terminal, so that it stays an end node."""
    node = draw(st.sampled_from(_nodes(doc)))
    if facts_of(doc).end_nodes.get(node["id"]) == "inferred":
        node["terminal"] = True
    node.setdefault("next_nodes", []).insert(
        0, {"target": target, "condition": 'nlu.dialogue_act == "greet"'})


def _fam_E108(draw, doc):
    """An invalid task definition of SPEC 8 (see the cases), in a new slot or profile field: a
    list slot without `items`, `items` on another slot, a default the slot refuses, a default
    that reads an undeclared profile field, a profile field with E106's problem."""
    slots = doc.setdefault("slots", {})
    case = draw(st.sampled_from(["list_no_items", "items_non_list", "default_type",
                                 "default_profile", "profile_field"]))
    if case == "profile_field":
        profile = doc.setdefault("profile", {})
        name = _new_name(draw, profile)
        profile[name] = {"value_type": "enum"}
        return doc, ("profile", name)
    name = _new_name(draw, slots)
    if case == "list_no_items":
        slots[name] = {"policy": "optional", "value_type": "list"}
        return doc, ("slots", name)
    if case == "items_non_list":
        slots[name] = {"policy": "optional", "value_type": "string", "items": "string"}
        return doc, ("slots", name, "items")
    if case == "default_type":
        slots[name] = {"policy": "optional", "value_type": "integer", "default": "many"}
    else:
        field = _new_name(draw, doc.get("profile", {}))
        slots[name] = {"policy": "optional", "value_type": "email",
                       "default": "{profile." + field + "}"}
    return doc, ("slots", name, "default")


def _fam_E109(draw, doc):
    """A new transient node, entered from an existing one, that may not leave (SPEC 8.3): a
    stay among its routes (at the stay's `action`), or, not being an end node, only
    conditional routes and no `default_next` (at its `next_nodes`)."""
    ids = [n["id"] for n in _nodes(doc)]
    name = _new_name(draw, ids, node_ids)
    end = draw(st.sampled_from(sorted(facts_of(doc).end_nodes)))
    _enter_on_greet(draw, doc, name)
    out = {"target": end, "condition": 'nlu.dialogue_act == "affirm"'}
    if draw(st.booleans()):
        stay = {"action": "stay", "condition": 'nlu.dialogue_act == "question"'}
        rows = draw(st.permutations([out, stay]))
        node = {"id": name, "description": "may stay", "transient": True, "next_nodes": rows,
                "default_next": end}
        where: tuple = ("next_nodes", rows.index(stay), "action")
    else:
        node = {"id": name, "description": "may not leave", "transient": True,
                "next_nodes": [out]}
        where = ("next_nodes",)
    return doc, ("graph", "nodes", draw(_insert_node(doc, node))) + where


def _fam_E303(draw, doc):
    """A cycle of new transient nodes (one to itself, or two to each other), entered from an
    existing node; each first has a conditional way to an end node, so the cycle is no trap
    and no unconditional cycle (W406): reported at the first of them in the node list."""
    ids = [n["id"] for n in _nodes(doc)]
    a = _new_name(draw, ids, node_ids)
    b = _new_name(draw, ids + [a], node_ids)
    end = draw(st.sampled_from(sorted(facts_of(doc).end_nodes)))
    _enter_on_greet(draw, doc, a)
    leave = [{"target": end, "condition": 'nlu.dialogue_act == "goodbye"'}]
    if draw(st.booleans()):
        new = [{"id": a, "description": "loop", "transient": True, "next_nodes": leave,
                "default_next": a}]
    else:
        new = [{"id": a, "description": "loop a", "transient": True, "next_nodes": leave,
                "default_next": b},
               {"id": b, "description": "loop b", "transient": True,
                "next_nodes": _copy({"v": leave})["v"], "default_next": a}]
    for node in new:
        draw(_insert_node(doc, node))
    positions = {n["id"]: i for i, n in enumerate(_nodes(doc))}
    return doc, ("graph", "nodes", min(positions[n["id"]] for n in new))


def _fam_E110(draw, doc):
    """A `graph.safety` rule with an unknown category (a near miss of one), or a second rule
    for a declared category; or a `safety.patterns` entry with an unknown category."""
    rules = doc["graph"].setdefault("safety", [])
    ids = [n["id"] for n in _nodes(doc)]
    kind = draw(st.sampled_from(["unknown", "duplicate", "pattern"] if rules else ["unknown", "pattern"]))
    if kind == "duplicate":
        category = _choose(draw, [r["category"] for r in rules])
        rules.append({"category": category, "target": _choose(draw, ids)})
        return doc, ("graph", "safety", len(rules) - 1, "category")
    wrong = draw(_misspelling(_choose(draw, SAFETY_CATEGORIES), SAFETY_CATEGORIES))
    if kind == "pattern":
        found = doc.setdefault("safety", {}).setdefault("patterns", [])
        found.append({"category": wrong, "pattern": "도와줘요"})
        return doc, ("safety", "patterns", len(found) - 1, "category")
    rules.append({"category": wrong, "target": _choose(draw, ids)})
    return doc, ("graph", "safety", len(rules) - 1, "category")


def _fam_E111(draw, doc):
    """Response variants that cannot be said in turn: an empty list, an empty (or blank)
    variant, or a variant repeated in its list."""
    nodes = _nodes(doc)
    i = draw(st.integers(0, len(nodes) - 1))
    kind = draw(st.sampled_from(["default", "no_input", "not_understood", "turn_limit", "complete"]))
    responses = nodes[i].setdefault("responses", {})
    case = draw(st.sampled_from(["empty_list", "empty_variant", "repeated"]))
    if case == "empty_list":
        responses[kind] = []
        return doc, ("graph", "nodes", i, "responses", kind)
    texts = [t for t in draw(st.lists(st.sampled_from(["다시 말씀해 주세요.", "Say it again?", "괜찮아요"]),
                                      max_size=2, unique=True))]
    j = draw(st.integers(0, len(texts)))
    bad = draw(st.sampled_from(["", " ", "\t"])) if case == "empty_variant" else None
    if bad is None:
        texts.insert(j, "한 번 더 여쭤볼게요.")
        j = len(texts)
        texts.append("한 번 더 여쭤볼게요.")
    else:
        texts.insert(j, bad)
    responses[kind] = texts
    return doc, ("graph", "nodes", i, "responses", kind, j)


def _fam_E113(draw, doc):
    """Skills (SPEC 14.7, 15): a node runs an undeclared skill, or gives a built-in an
    undeclared argument; or a declaration with a bad URL scheme, a budget over 30 s or an
    unknown result type."""
    nodes = _nodes(doc)
    i = draw(st.integers(0, len(nodes) - 1))
    params = nodes[i].setdefault("params", {})
    case = draw(st.sampled_from(["undeclared", "argument", "url", "budget", "result"]))
    if case == "undeclared":
        params["skill"] = "order_lookup"
        return doc, ("graph", "nodes", i, "params", "skill")
    if case == "argument":
        params["skill"] = "weather"
        params["skill_args"] = {"city": draw(st.sampled_from(["Seoul", "Busan", 3]))}
        return doc, ("graph", "nodes", i, "params", "skill_args", "city")
    hook: dict[str, Any] = {"type": "webhook", "url": "https://orders.example.com/status"}
    if case == "url":
        hook["url"] = draw(st.sampled_from(["ftp://orders.example.com/x", "file:///etc/passwd",
                                            "orders.example.com/x", "https://x/${TOKEN"]))
        where = ("skills", "hook_x", "url")
    elif case == "budget":
        hook["timeout_seconds"] = draw(st.integers(31, 600))
        where = ("skills", "hook_x", "timeout_seconds")
    else:
        hook["result"] = {"n": {"type": draw(st.sampled_from(["float", "text", "str"]))}}
        where = ("skills", "hook_x", "result", "n", "type")
    doc.setdefault("skills", {})["hook_x"] = hook
    return doc, where


def _fam_E301(draw, doc):
    """A trap: one node with a conditional self-target, or two nodes looping through
    conditional edges, entered from the entry (the base has no global transitions; another
    node might be one routing never reaches, since its way in needs a later turn)."""
    nodes = _nodes(doc)
    ids = [n["id"] for n in nodes]
    a = _new_name(draw, ids, node_ids)
    b = _new_name(draw, ids + [a], node_ids)
    _enter_from(draw, doc, a, from_entry=True)
    if draw(st.booleans()):
        trap = [{"id": a, "description": "trap",
                 "next_nodes": [{"target": a, "condition": "system.node_turns > 1"}]}]
    else:
        asks = {"field": "nlu.dialogue_act", "operator": "equals", "value": "question"}
        trap = [{"id": a, "description": "trap a",
                 "next_nodes": [{"target": b, "condition": "system.node_turns >= 2"}]},
                {"id": b, "description": "trap b", "next_nodes": [{"target": a, "condition": asks}]}]
    for node in trap:
        draw(_insert_node(doc, node))
    first = min(i for i, n in enumerate(_nodes(doc)) if n["id"] in (a, b))
    return doc, ("graph", "nodes", first)


def _fam_E302(draw, doc):
    """No end node: `terminal` removed everywhere and every node without a target gets a
    conditional transition to the entry."""
    entry = doc["graph"]["entry"]
    for node in _nodes(doc):
        node.pop("terminal", None)
        if not any("target" in e for e in node.get("next_nodes", [])) and "default_next" not in node:
            node.setdefault("next_nodes", []).insert(0, {"target": entry, "condition": "system.node_turns > 2"})
    return doc, ("graph", "nodes")


def _fam_W401(draw, doc):
    """A new node nothing leads to, with a default_next into the graph."""
    ids = [n["id"] for n in _nodes(doc)]
    new = {"id": _new_name(draw, ids, node_ids), "description": "unreachable",
           "default_next": draw(st.sampled_from(ids))}
    if draw(st.booleans()):
        new["terminal"] = True
    return doc, ("graph", "nodes", draw(_insert_node(doc, new)))


def _fam_W402(draw, doc):
    """A new node with no transition at all, that nothing leads to."""
    ids = [n["id"] for n in _nodes(doc)]
    new = {"id": _new_name(draw, ids, node_ids), "description": "isolated"}
    if draw(st.booleans()):
        new["next_nodes"] = [{"action": "stay", "condition": "system.node_turns < 3"}]
    return doc, ("graph", "nodes", draw(_insert_node(doc, new)))


def _fam_W403(draw, doc):
    """An unconditional row inserted before a later row (or before a new conditional stay):
    every later row is shadowed; the first of them is the expected pointer. So that the
    defect makes no trap (E301) as well, the row goes to an end node with no rules (it
    completes), else to one of the node's ways on it shadows; else it stays, and an end node
    gets a turn limit of 1 so that it still completes."""
    nodes = _nodes(doc)
    i = draw(st.integers(0, len(nodes) - 1))
    node = nodes[i]
    finals = [n["id"] for n in nodes if n is not node and not n.get("next_nodes") and "default_next" not in n]
    entries = node.setdefault("next_nodes", [])
    first_unconditional = next((j for j, e in enumerate(entries) if "condition" not in e), len(entries))
    j = draw(st.integers(0, first_unconditional))
    by_id = {n["id"]: n for n in nodes}
    ways_on = [t for t in [e["target"] for e in entries[j:] if "target" in e] + [node.get("default_next")]
               if t is not None and t != node["id"] and not _moves_on_unconditionally(by_id[t])]  # no W406
    if finals or ways_on:
        entries.insert(j, {"target": draw(st.sampled_from(finals or ways_on))})
    else:
        entries.insert(j, {"action": "stay"})
        if not any("target" in e for e in entries) or node.get("terminal"):  # an end node
            node["terminal"] = True  # said so (W407 otherwise)
            params = node.setdefault("params", {})
            params.pop("min_turns", None)
            params.update(max_turns=1, turn_limit_enabled=True)
    if j + 1 < len(entries):
        return doc, ("graph", "nodes", i, "next_nodes", j + 1)
    if "default_next" in node:
        return doc, ("graph", "nodes", i, "default_next")
    entries.append({"action": "stay", "condition": "system.node_turns > 1"})
    return doc, ("graph", "nodes", i, "next_nodes", j + 1)


def _moves_on_unconditionally(node: dict) -> bool:
    """The node's first rule is an unconditional move (a W406 cycle could go through it)."""
    rows = node.get("next_nodes", [])
    if rows:
        return "target" in rows[0] and "condition" not in rows[0]
    return "default_next" in node


_CONTRADICTIONS = [
    "system.node_turns < 1", {"field": "system.session_turns", "operator": "less_or_equal", "value": 0},
    "system.no_input_count < 0", 'nlu.dialogue_act == "affirm" and nlu.dialogue_act == "deny"',
    {"and": [{"field": "skill.status", "operator": "in", "value": ["ok"]},
             {"field": "skill.status", "operator": "not_equals", "value": "ok"}]},
    "system.fallback_exhausted and not system.fallback_exhausted",
    "nlu.confidence > 2 and nlu.confidence < 1", "not (system.not_understood_count >= 0)",
]


def _fam_W404(draw, doc):
    """A condition made impossible: an existing one joined (and) with a contradiction, or a
    new global rule with one (resume conditions and `current_node` of another node at nodes)."""
    nodes = _nodes(doc)
    ends = facts_of(doc).end_nodes
    sites = [(("graph", "nodes", i, "next_nodes", j), e, nodes[i]["id"]) for i, j, e in _entries(doc)]
    sites += [(("graph", "global_transitions", j), g, None)
              for j, g in enumerate(doc["graph"].get("global_transitions", []))]
    if not sites or draw(st.integers(0, 4)) == 0:
        gts = doc["graph"].setdefault("global_transitions", [])
        gts.append({"target": draw(st.sampled_from([n["id"] for n in nodes])),
                    "condition": draw(st.sampled_from(_CONTRADICTIONS))})
        return doc, ("graph", "global_transitions", len(gts) - 1, "condition")
    parts, obj, at = draw(st.sampled_from(sites))
    pool = list(_CONTRADICTIONS)
    if at is not None and at not in ends:
        pool.append("system.conversation_resuming")
    if at is not None and len(nodes) > 1:
        pool.append({"field": "system.current_node", "operator": "equals",
                     "value": draw(st.sampled_from([n["id"] for n in nodes if n["id"] != at]))})
    bad = draw(st.sampled_from(pool))
    original = obj.get("condition")
    if original is None:
        obj["condition"] = bad
    elif isinstance(original, str) and isinstance(bad, str) and draw(st.booleans()):
        obj["condition"] = f"({original}) and ({bad})"
    else:
        obj["condition"] = {"and": draw(st.permutations([original, bad]))}
    return doc, parts + ("condition",)


def _fam_W405(draw, doc):
    """A declared slot or intent that nothing uses."""
    if draw(st.booleans()):
        slots = doc.setdefault("slots", {})
        name = _new_name(draw, slots)
        slots[name] = draw(slot_definition())
        return doc, ("slots", name)
    intents = doc.setdefault("intents", {})
    name = _new_name(draw, intents, intent_names)
    intents[name] = draw(intent_definition())
    return doc, ("intents", name)


def _fam_W406(draw, doc):
    """A cycle of unconditional transitions through new nodes, entered from an existing node
    through a conditional transition; one is an end node with a turn limit of 1, so it ends
    the conversation (tier 1) and the cycle is no trap (`terminal` alone would not do:
    `default_next` comes before completion)."""
    nodes = _nodes(doc)
    ids = [n["id"] for n in nodes]
    a = _new_name(draw, ids, node_ids)
    b = _new_name(draw, ids + [a], node_ids)
    _enter_from(draw, doc, a)
    if draw(st.booleans()):
        new = [{"id": a, "description": "loop", "terminal": True, "params": {"max_turns": 1}, "default_next": a}]
    else:
        new = [{"id": a, "description": "loop a", "default_next": b},
               {"id": b, "description": "loop b", "terminal": True, "params": {"max_turns": 1},
                "default_next": a}]
    for node in new:
        draw(_insert_node(doc, node))
    positions = {n["id"]: i for i, n in enumerate(_nodes(doc))}
    start = min((a, b) if len(new) == 2 else (a,), key=positions.__getitem__)
    return doc, ("graph", "nodes", positions[start], "default_next")


_BAD_PLACEHOLDERS = ["{slot.%s}", "{slots.%s.value}", "{%s}", "{skill.status}", "{}", "{ %s",
                     "%s }", "{Slots.%s}", "{profil.%s}"]


def _fam_E112(draw, doc):
    """A text in braces that is no placeholder (an unknown root, a field of a slot, a bare
    name, an empty one, a lone brace), added to a node's default response (to its first
    variant), to a slot's question, or to a line of a new weather node's location written
    as lines (SPEC 17.21); what the text said before is kept, so no slot falls out of use."""
    slots = doc.get("slots", {})
    name = draw(st.sampled_from(sorted(slots))) if slots else draw(slot_names)
    bad = " " + (draw(st.sampled_from(_BAD_PLACEHOLDERS)).replace("%s", name)) + "."
    if not bad.count("slots.") or name in slots:  # `{slots.x.value}` needs a declared slot
        pass
    else:
        bad = f" {{slot.{name}}}."
    if slots and draw(st.booleans()):
        slot = slots[name]
        slot["question"] = (slot.get("question") or "Tell me.") + bad
        return doc, ("slots", name, "question")
    nodes = _nodes(doc)
    free = [i for i, n in enumerate(nodes) if "skill" not in n.get("params", {})]
    if free and draw(st.booleans()):  # SPEC 17.21: in a skill argument's line
        i = draw(st.sampled_from(free))
        location = {"lines": [{"text": "부산"}, {"text": "Near" + bad,
                                                "when": 'nlu.dialogue_act == "inform"'}]}
        nodes[i].setdefault("params", {}).update(skill="weather",
                                                 skill_args={"location": location})
        return doc, ("graph", "nodes", i, "params", "skill_args", "location", "lines", 1,
                     "text")
    i = draw(st.integers(0, len(nodes) - 1))
    responses = plain_responses(nodes[i].setdefault("responses", {}))
    default = responses.get("default")
    if isinstance(default, list) and default:
        default[0] = default[0] + bad
        return doc, ("graph", "nodes", i, "responses", "default", 0)
    responses["default"] = (default or "Noted.") + bad
    return doc, ("graph", "nodes", i, "responses", "default")


def _fam_W407(draw, doc):
    """A new node whose only route is a (conditional) stay, entered from an existing node:
    it is inferred as an end node (the conditional stay lets it complete: no trap)."""
    ids = [n["id"] for n in _nodes(doc)]
    a = _new_name(draw, ids, node_ids)
    _enter_from(draw, doc, a)
    stay = {"action": "stay", "condition": draw(st.sampled_from(
        ['nlu.dialogue_act == "question"', "system.node_turns < 3"]))}
    node = {"id": a, "description": "hub", "next_nodes": [stay]}
    return doc, ("graph", "nodes", draw(_insert_node(doc, node)))


def _fam_W408(draw, doc):
    """A new node, entered from an existing one, whose not_understood response is never said:
    it is transient, or it never re-prompts (`max_fallback_retries: 0`) and always moves on
    to an end node."""
    ids = [n["id"] for n in _nodes(doc)]
    end = draw(st.sampled_from(sorted(facts_of(doc).end_nodes)))
    a = _new_name(draw, ids, node_ids)
    _enter_from(draw, doc, a)
    node = {"id": a, "description": "passing", "default_next": end,
            "responses": {"not_understood": draw(st.sampled_from(["Sorry?", ["Sorry?", "Pardon?"]]))}}
    confirms = any(slot.get("on_conflict") == "confirm" for slot in doc.get("slots", {}).values())
    if confirms or draw(st.booleans()):  # a confirmation may hold a waiting node (lints.py)
        node["transient"] = True
    else:
        node["params"] = {"max_fallback_retries": 0}
    return doc, ("graph", "nodes", draw(_insert_node(doc, node)), "responses", "not_understood")


def _fam_E114(draw, doc):
    """An invalid `set` on a transition (a next_nodes row, or a new `on_enter`): an undeclared
    slot (a near miss of a declared one, or a new name), an object form other than copy/add,
    or `add` on a slot that is not a number."""
    nodes = _nodes(doc)
    slots = doc.get("slots", {})
    rows = _entries(doc)
    if rows and draw(st.booleans()):
        i, j, row = draw(st.sampled_from(rows))
        where: tuple = ("graph", "nodes", i, "next_nodes", j, "set")
        sets = row.setdefault("set", {})
    else:
        i = draw(st.integers(0, len(nodes) - 1))
        where = ("graph", "nodes", i, "on_enter", "set")
        sets = nodes[i].setdefault("on_enter", {}).setdefault("set", {})
    not_numbers = sorted(n for n, d in slots.items()
                         if d.get("value_type") not in ("integer", "number"))
    case = draw(st.sampled_from(["undeclared", "form", "group", "bound"] +
                                (["add"] if not_numbers else [])))
    if case == "bound":  # SPEC 14.1: a new date or time slot with a bound that is not one
        del sets
        nodes[i].pop("on_enter", None) if where[-2] == "on_enter" else None
        return _bad_temporal_bound(draw, doc)
    if case == "group":  # `routes` naming a group that is not declared (a near miss)
        del sets
        nodes[i].pop("on_enter", None) if where[-2] == "on_enter" else None
        groups = doc["graph"].setdefault("route_groups", {})
        groups.setdefault("shared", [])
        wrong = draw(_misspelling("shared", groups))
        nodes[i]["routes"] = [wrong]
        return doc, ("graph", "nodes", i, "routes", 0)
    if case == "add":
        name = draw(st.sampled_from(not_numbers))
        sets[name] = {"add": 1}
        return doc, where + (name, "add")
    if case == "form" and slots:
        name = draw(st.sampled_from(sorted(slots)))
        sets[name] = draw(st.sampled_from([{}, {"increment": 1}, {"copy": name, "add": 1}]))
        return doc, where + (name,)
    name = draw(_misspelling(draw(st.sampled_from(sorted(slots))), slots)) if slots else \
        _new_name(draw, slots)
    sets[name] = None
    return doc, where + (name,)


def _bad_temporal_bound(draw, doc):
    """A new date slot whose min or max is not an ISO date or today±N ("yesterday",
    "1990-02-30", "today+3"), a min after its max, or a time slot's bound not HH:MM."""
    slots = doc.setdefault("slots", {})
    name = _new_name(draw, slots)
    kind = draw(st.sampled_from(["date", "time"]))
    key = draw(st.sampled_from(["min", "max"]))
    if kind == "time":
        slots[name] = {"policy": "optional", "value_type": "time",
                       key: draw(st.sampled_from(["9am", "24:00", "9:5", "noon", "", "12:60"]))}
        return doc, ("slots", name, key)
    if draw(st.booleans()):
        slots[name] = {"policy": "optional", "value_type": "date", "min": "today",
                       "max": draw(st.sampled_from(["2000-01-01", "today-1d", "today-2y"]))}
        return doc, ("slots", name, "min")
    slots[name] = {"policy": "optional", "value_type": "date", key: draw(st.sampled_from(
        ["yesterday", "1990-02-30", "today+3", "01/02/2000", "TODAY", "today-5x"]))}
    return doc, ("slots", name, key)


_FAMILIES = {
    "E001": _fam_E001, "E002": _fam_E002, "E010": _fam_E010, "E011": _fam_E011, "E012": _fam_E012,
    "E013": _fam_E013, "E101": _fam_E101, "E102": _fam_E102, "E103": _fam_E103, "E104": _fam_E104,
    "E105": _fam_E105, "E106": _fam_E106, "E107": _fam_E107, "E108": _fam_E108, "E109": _fam_E109,
    "E110": _fam_E110, "E111": _fam_E111, "E112": _fam_E112, "E113": _fam_E113,
    "E114": _fam_E114,
    **{code: _condition_family(code) for code in ("E201", "E202", "E203", "E204", "E205", "E206")},
    "E301": _fam_E301, "E302": _fam_E302, "E303": _fam_E303, "W401": _fam_W401, "W402": _fam_W402, "W403": _fam_W403,
    "W404": _fam_W404, "W405": _fam_W405, "W406": _fam_W406, "W407": _fam_W407,
    "W408": _fam_W408,
}
MUTATION_CODES: tuple[str, ...] = tuple(sorted(_FAMILIES))


@st.composite
def _mutation(draw, code: str, max_nodes: int, base_ok=None):
    bases = _scenarios(1, max_nodes, allow_globals=code != "E301")
    base = draw(bases if base_ok is None else bases.filter(base_ok))
    doc, where = _FAMILIES[code](draw, _copy(base))
    return doc, code, where if isinstance(where, str) else pointer(*where)


def mutations(code: str | None = None, max_nodes: int = 12, base_ok=None):
    """`(document, code, pointer)` for one family (`code`) or any (module docstring);
    `base_ok(scenario)`, when given, filters the valid scenario the defect goes into."""
    if code is not None:
        if code not in _FAMILIES:
            raise ValueError(f"no mutation family for {code}")
        return _mutation(code, max_nodes, base_ok)
    return st.sampled_from(MUTATION_CODES).flatmap(lambda c: _mutation(c, max_nodes, base_ok))


# ---------------------------------------------------------------------------------------
# Arbitrary input.

_any_scalar = (st.none() | st.booleans() | st.integers() | st.integers(-2**70, 2**70)
               | st.floats(allow_nan=False, allow_infinity=False)
               | st.text(st.characters(blacklist_categories=("Cs",))))


def json_values(max_leaves: int = 40) -> st.SearchStrategy:
    """Any JSON value: deep lists and objects, unicode keys and strings, big integers."""
    return st.recursive(_any_scalar, lambda c: st.lists(c, max_size=5)
                        | st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",)), max_size=8), c, max_size=5),
                        max_leaves=max_leaves)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


@st.composite
def fuzzed_scenarios(draw, max_nodes: int = 8) -> dict | Any:
    """A valid scenario with one subtree replaced by an arbitrary JSON value (or a key
    dropped, or a list item duplicated): input that reaches resolve and analysis."""
    doc = _copy(draw(_scenarios(1, max_nodes)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc)]
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        last = path[-1]
        action = draw(st.sampled_from(["replace", "replace", "drop", "duplicate"]))
        if action == "replace":
            parent[last] = draw(json_values(max_leaves=6) | st.sampled_from(
                [None, [], {}, "", 0, -1, 2**64, 1e308, "__stay__", "nlu.intent ==", {"not": {}}]))
        elif action == "drop":
            del parent[last]
        elif isinstance(parent, list):
            parent.insert(last, _copy({"v": parent[last]})["v"])
    return doc


def json_texts() -> st.SearchStrategy[str]:
    """JSON-ish texts: dumps of arbitrary values, very deep nesting, damaged scenario texts,
    arbitrary text."""
    deep = st.integers(100, 5000).flatmap(lambda n: st.sampled_from(
        ["[" * n + "]" * n, "[" * n, '{"a":' * n + "1" + "}" * n, '{"graph":' * n + "null" + "}" * n]))
    damaged = valid_scenarios(1, 6).flatmap(
        lambda doc: st.builds(lambda cut: json.dumps(doc)[:cut], st.integers(0, 4000)))
    return (json_values().map(lambda v: json.dumps(v, ensure_ascii=False)) | deep | damaged
            | st.text() | st.sampled_from(["E001", "E002"]).flatmap(mutations).map(lambda m: m[0]).filter(
                lambda doc: isinstance(doc, str))
            | st.sampled_from(["NaN", "[1e400]", '{"a": 1, "a": 2}', '{"metadata": {"name": "x"}, "graph": null}',
                               "-", "\ufeff{}", "1" * 5000, '"\\ud800"', "[" + "1" * 5000 + "]"]))


def raw_bytes() -> st.SearchStrategy[bytes]:
    """Arbitrary bytes, and valid scenario files truncated, with bytes replaced or inserted,
    with a BOM, or in UTF-16."""

    @st.composite
    def edited(draw):
        data = json.dumps(draw(valid_scenarios(1, 6)), ensure_ascii=False).encode("utf-8")
        case = draw(st.sampled_from(["truncate", "flip", "insert", "bom", "utf16", "as_is"]))
        if case == "truncate":
            return data[:draw(st.integers(0, len(data)))]
        if case == "flip":
            i = draw(st.integers(0, len(data) - 1))
            return data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]
        if case == "insert":
            i = draw(st.integers(0, len(data)))
            return data[:i] + draw(st.binary(min_size=1, max_size=4)) + data[i:]
        if case == "bom":
            return b"\xef\xbb\xbf" + data
        if case == "utf16":
            return json.dumps(json.loads(data), ensure_ascii=False).encode(draw(st.sampled_from(["utf-16", "utf-16-le"])))
        return data

    return st.binary(max_size=300) | edited()


# ---------------------------------------------------------------------------------------
# Turns.

_LONG = st.integers(1000, 4000).flatmap(
    lambda n: st.sampled_from(["가" * n, "a " * (n // 2), "\u200b" * n, ("네 " * n)[:n]]))
_canned_texts = st.sampled_from([
    "", " ", "\t", "\n", "네", "아니요", "네 좋아요", "그만할래요", "고마워요", "yes", "no", "bye", "thanks",
    "hello?", "1", "3.5", "a@b.c", "true", "\x00", "\x1b[31m", "\u202e", "😀", "e\u0301", "/quit",
    "{slots.x}", "{\"user\": 1}",
    # crisis expressions (SPEC 10: the detector reads every text) and a near miss
    "죽고 싶어요", "가슴이 너무 아파서 숨을 못 쉬겠어요", "아들이 때려요", "I can't breathe", "배고파 죽겠다"])
# Weighted by repetition: canned and short random text mostly, control characters, long text.
user_texts = st.one_of(
    _canned_texts, _canned_texts, _canned_texts, st.text(max_size=40), st.text(max_size=40),
    st.text(st.characters(whitelist_categories=("Cc", "Cf", "Zs", "Zl", "Zp")), max_size=10), _LONG,
)


def _slot_value(draw, definition: dict | None):
    """A value for a slot: valid for `definition`, or invalid (wrong JSON type, out of range,
    misspelt member, too short or long), or null."""
    if definition is None:
        return draw(small_json)
    kind = definition.get("value_type")
    if kind == "list" and not _one_in(draw, 3):  # SPEC 8.2: one item or a list of them
        item = {**definition, "value_type": definition["items"]}
        if _one_in(draw, 3):
            return _slot_value(draw, item)
        return [_slot_value(draw, item) for _ in range(_int(draw, 0, 3))]
    if _one_in(draw, 2):
        return _choose(draw, (None, "", "12", 12, 1.5, True, [1], {"a": 1}, "x" * 300, -10**9, "a@b.c",
                              "a\udc00"))  # a lone surrogate: no UTF-8 form, dropped
    if kind == "enum":
        values = definition.get("values") or ["x"]
        member = _choose(draw, values)
        return draw(_misspelling(member, values)) if _one_in(draw, 4) else member
    if kind in ("integer", "number"):
        low, high = definition.get("min", -100), definition.get("max", 100)
        if low > high:
            return 0
        if kind == "integer":
            return _int(draw, math.ceil(low) - 2, math.floor(high) + 2)
        return draw(_floats(low - 1, high + 1))
    if kind == "boolean":
        return _one_in(draw, 2)
    if kind == "email":
        return _choose(draw, ("a@b.c", "user@example.com", "not-an-email", "@", "가@나.다", ""))
    low, high = definition.get("min_length", 0), definition.get("max_length", 20)
    return _choose(draw, ("", "가" * max(0, low - 1), "a" * low, "b" * (high + 1), "1234", "한국어"))


@st.composite
def slot_value(draw, definition: dict | None):
    """Strategy for `_slot_value`: a valid or invalid value for a slot definition."""
    return _slot_value(draw, definition)


def _nlu_object(draw, facts: ScenarioFacts) -> dict:
    nlu: dict[str, Any] = {}
    if not _one_in(draw, 4):
        pool = list(facts.intents) + [None, "undeclared_intent", "그만"]
        nlu["intent"] = draw(any_text) if _one_in(draw, 8) else _choose(draw, pool)
    if not _one_in(draw, 4):
        nlu["dialogue_act"] = _choose(draw, ACT_WORDS + (None, "dance", "", "AFFIRM"))
    if _one_in(draw, 2):
        values = {k: _slot_value(draw, facts.slots[k]) for k in _subset(draw, list(facts.slots), 3)}
        if _one_in(draw, 4):
            values[_new_name(draw, facts.slots)] = draw(small_json)
        nlu["slots"] = values
    if _one_in(draw, 5):
        nlu["confidence"] = _choose(draw, (0.0, 0.3, 1.0, 0.99))
    if _one_in(draw, 6):  # what an LLM NLU may add (the detector's finding is kept)
        nlu["safety"] = _choose(draw, (*SAFETY_CATEGORIES, None))
    return nlu


@st.composite
def nlu_objects(draw, facts: ScenarioFacts):
    """An `nlu` override: any subset of intent, dialogue_act, slots, confidence."""
    return _nlu_object(draw, facts)


def _idle(draw, facts: ScenarioFacts) -> int:
    """A pause before a turn (SPEC 8.5), in whole seconds: around what conditions compare
    `system.idle_seconds` with, the half hour of seed 004, or a few seconds."""
    near = [v + d for v in facts.idle_literals for d in (-1, 0, 1) if v + d >= 0]
    return _choose(draw, near + [0, 1, 5, 1799, 1800, 1801, 3600])


def _answer(draw, facts: ScenarioFacts) -> dict:
    """A user who answers several slots at once with values they accept (so that task nodes
    find their slots known, `skip:filled`)."""
    values = {}
    for name in list(facts.slots) if _one_in(draw, 2) else _subset(draw, list(facts.slots), 3):
        valid = valid_values(facts.slots[name])
        if valid:
            values[name] = _choose(draw, valid)
    return {"user": "네", "nlu": {"dialogue_act": _choose(draw, ("inform", "affirm")),
                                 "slots": values}}


def turn_sequences(info, max_turns: int = 12, tasks: bool = False) -> st.SearchStrategy[list[dict]]:
    """Lists of `mgi --json` turns for the scenario described by `info` (module docstring);
    with `tasks`, a third of the turns answer several slots with valid values, and some
    carry a pause (`"idle": SECONDS`, also without `tasks` when conditions read
    `system.idle_seconds`)."""
    facts = info if isinstance(info, ScenarioFacts) else facts_of(info)
    idle = tasks or bool(facts.idle_literals)

    @st.composite
    def turns(draw):
        out = []
        for _ in range(_int(draw, 0, max_turns)):
            if tasks and facts.slots and _one_in(draw, 3):
                turn = _answer(draw, facts)
            else:
                turn = {"user": draw(user_texts)}
                if not _one_in(draw, 3):
                    turn["nlu"] = _nlu_object(draw, facts)
            if idle and _one_in(draw, 3):
                turn["idle"] = _idle(draw, facts)
            out.append(turn)
        return out

    return turns()


@st.composite
def profiles(draw, info) -> dict:
    """A session profile (SPEC 8.1) the scenario's declaration accepts: some fields given a
    valid value (`valid_values`), some null, some left out."""
    facts = info if isinstance(info, ScenarioFacts) else facts_of(info)
    out: dict[str, Any] = {}
    for name, definition in facts.profile.items():
        values = valid_values(definition)
        if _one_in(draw, 6):
            out[name] = None
        elif values and not _one_in(draw, 4):
            out[name] = _choose(draw, values)
    return out


# --- analytics events (SPEC 16) ------------------------------------------------------------

EVENT_NODES = ("a", "b", "c", "d")
EVENT_GAPS = (1, 15, 60, 1799, 1800, 1801, 4000)  # around the 30 minutes of abandonment


@st.composite
def event_histories(draw, max_sessions: int = 12, max_turns: int = 8) -> list[dict]:
    """The events of a few sessions as a store holds them (SPEC 16, 17.10), in time order:
    each a start, then turns at the node the previous one left it at (gaps around 30
    minutes, so that sessions are abandoned, come back, or stay active), with transient
    hops, fallbacks, safety turns, confidences (none, at and across bin edges) and kept
    texts; some complete (no event after that). Two scenario names and two IR hashes, so
    versions are apart. Dicts of `Event`'s fields."""
    made = []
    for number in range(_int(draw, 1, max_sessions)):
        base = {"scenario": _choose(draw, ["s", "t"]), "ir_hash": _choose(draw, ["h1", "h2"]),
                "session_id": f"x{number}"}
        now, node = float(_int(draw, 0, 6000)), _choose(draw, list(EVENT_NODES))
        made.append({**base, "time": now, "kind": "started", "turn": 1, "node": node,
                     "next_node": node, "reason": "opening"})
        for turn in range(2, 2 + _int(draw, 0, max_turns)):
            gap = _choose(draw, list(EVENT_GAPS))
            now += gap
            complete = _one_in(draw, 6)
            passed = [(hop, "next_nodes[0]") for hop in
                      draw(st.lists(st.sampled_from(EVENT_NODES), max_size=2))]
            after = None if complete else _choose(draw, list(EVENT_NODES))
            fallback = _choose(draw, [None, None, "not_understood", "no_input"])
            event = {**base, "time": now, "turn": turn, "node": node, "next_node": after,
                     "reason": _choose(draw, ["default_next", "route:r[0]", "safety:x"]),
                     "confidence": _choose(draw, [None, 0.0, 0.05, 0.1, 0.55, 0.99, 1.0]),
                     "fallback": fallback, "complete": complete, "idle": float(gap),
                     "passed": passed}
            if _one_in(draw, 5):
                event["safety"] = _choose(draw, ["emergency", "self_harm"])
            if fallback and _one_in(draw, 2):
                event["text"] = _choose(draw, ["음", "뭐라고요", "## 번"])
            made.append(event)
            if complete:
                break
            node = after
    return sorted(made, key=lambda event: (event["time"], event["session_id"], event["turn"]))


# --- answers read by the rules NLU (SPEC 18): negated, declined, excluded, plain ---------------

# Said to the reminder bot (med_reminder, Korean) and the refill bot (pharmacy_refill,
# English) at any of their nodes: values negated however spaced, bare declines, excluded
# phrases, yes and no, and plain values, so that the engine's own rules NLU reads them in
# context and the oracle follows what it read (tests/engine/test_differential.py).
VALUE_ANSWERS = {
    "ko": ("아직 안 먹었어", "아직 안먹었어", "안 먹었어요", "먹지 않았어", "아직 못 먹었어요",
           "깜빡하고 못 먹었어", "먹었어", "네 먹었어요", "밥은 먹었어", "먹었나 모르겠네", "응",
           "아니", "없어", "아니 없어", "딱히 없어요", "아니요", "점심 먹고 먹을게",
           "속이 좀 쓰려요", "안 아파요", "고마워요", "안녕히 계세요", "오늘 못 챙겨 먹었어",
           "아직 복용 안 했어요", "먹었는지 잘 모르겠네", "아프진 않아"),
    "en": ("riverside", "riverside?", "not downtown, riverside", "I don't want riverside",
           "I don't want delivery", "delivery?", "I'll pick it up", "no", "none", "nothing",
           "yes", "it's 10 Pine Road", "my date of birth is actually 1984-07-12", "07/21/1984",
           "RX1234567", "I need a refill of RX1234567 for the riverside branch",
           "I haven't decided on delivery", "thanks, bye"),
}


def value_answers(language: str, max_turns: int = 10) -> st.SearchStrategy[list[dict]]:
    """Lists of turns (`{"user": TEXT}`) drawn from `VALUE_ANSWERS[language]`."""
    return st.lists(st.sampled_from(VALUE_ANSWERS[language]).map(lambda t: {"user": t}),
                    max_size=max_turns)


# Korean words for the negation scope read from morphemes (tests/understanding/test_polarity.py): negators
# spaced and glued, -지 forms, 없다, doubt words, look-alikes ("안경", "못생겼어"), plain words.
_KOREAN_PIECES = ("안", "못", "않아", "않았어", "못했어", "없어", "말고", "모르겠네", "먹었어",
                  "먹지", "아프진", "안먹었어", "챙겨", "복용", "식사를", "했어", "허리는",
                  "관절이", "아픈", "데는", "먹었나", "먹었는지", "잘", "안경", "안녕하세요",
                  "못생겼어", "아직", "약", "밥은", "좋아요", "먹지마", "아프지않아", "ㅋㅋ", "a",
                  "1")


def korean_utterances(max_words: int = 8) -> st.SearchStrategy[str]:
    """Normalised Korean utterances of `_KOREAN_PIECES` and random Hangul words."""
    hangul = st.text(st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3), min_size=1,
                     max_size=4)
    words = st.sampled_from(_KOREAN_PIECES) | hangul
    return st.lists(words, min_size=1, max_size=max_words).map(" ".join)
