"""The fields conditions read and the type rules they follow: one table for the compiler's
type check, the IR checks and the runtime.

In: nothing (constants), or a program's slots and counts (`field_types`), or an opcode tree
(`check_condition`). Out: the field catalogue (`FIXED_FIELDS`, then one field per slot from
`SLOT_FIELD_BASE`, one per profile field, then `LATE_FIELDS`), the operators and which kind
each applies to (`operator_applies`), and what is wrong with a condition, in words, or None;
the small IR records beside them (a node's conditional `Line`s and what is wrong with them,
`lines_problem`).
After: nothing is decoded or compiled here; `interpreter.ir` re-exports every public name, so
`ir.FIELD_INDEX` and the like read as before.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, ClassVar, NamedTuple
from collections.abc import Sequence

import msgspec

# MessagePack integers (the IR and stored sessions): what a scenario or a slot value may hold.
INT_MIN, INT_MAX = -(2 ** 63), 2 ** 63 - 1
INT_RANGE_HINT = f"use a whole number between {INT_MIN} and {INT_MAX}"


def fits_int64(value: int) -> bool:
    """Whether the integer `value` fits in INT_MIN..INT_MAX (a bool always does)."""
    return INT_MIN <= value <= INT_MAX


# Dialogue acts, a closed set; `negate` is read as `deny` before it gets here.
ACTS: tuple[str, ...] = (
    "affirm", "deny", "inform", "question", "greet", "goodbye", "thank", "silence", "null",
)
SKILL_STATUSES: tuple[str, ...] = ("none", "ok", "failed", "timeout")
# Safety categories (SPEC 10; `understanding.safety.CATEGORIES` is this tuple) and the values
# of `nlu.safety`: a category, or "none".
SAFETY_CATEGORIES: tuple[str, ...] = ("medical_emergency", "self_harm", "abuse")
SAFETY_VALUES: tuple[str, ...] = (*SAFETY_CATEGORIES, "none")
SAFETY_REASON = "safety:"  # + the category: the reason code of the safety tier (SPEC 10)

OPERATORS: tuple[str, ...] = (
    "equals", "not_equals", "in", "not_in",
    "greater_than", "greater_or_equal", "less_than", "less_or_equal",
    "is_empty", "is_not_empty", "contains",
)
OP_AND, OP_OR, OP_NOT, OP_LEAF = 0, 1, 2, 3
# And/or/not levels allowed above a leaf: the compiler's limit (E206), so every condition a
# loaded program holds can be walked recursively.
MAX_CONDITION_DEPTH = 64

# Which operator applies to which kind of value, and what its literal is: the type rules of
# conditions, one table for the IR checks here and the compiler's type check.
VALUE_TYPES: tuple[str, ...] = ("string", "integer", "number", "boolean", "enum", "email", "list",
                                 "date", "time")
# What the items of a `list` slot may be (SPEC 8.2), each with that type's constraints.
ITEM_TYPES: tuple[str, ...] = ("string", "enum", "email", "integer", "number")
LIST_KIND_OPERATORS = frozenset({"contains", "is_empty", "is_not_empty"})  # on a list field
ORDERING_OPERATORS = frozenset({"greater_than", "greater_or_equal", "less_than", "less_or_equal"})
LIST_OPERATORS = frozenset({"in", "not_in"})  # a non-empty list of members
NO_VALUE_OPERATORS = frozenset({"is_empty", "is_not_empty"})  # no literal (null)
NUMERIC_KINDS = frozenset({"integer", "number"})  # what ordering operators apply to
TEXT_KINDS = frozenset({"string", "email"})  # what `contains` applies to
# SPEC 14.1: dates (YYYY-MM-DD) and times (HH:MM), stored as text that orders as they do; a
# date literal may also be TODAY, the day of the turn.
TEMPORAL_KINDS = frozenset({"date", "time"})
# SPEC 14.2: the text normalisations a string slot may declare, applied in written order.
NORMALIZERS = ("trim", "lower", "upper", "collapse_spaces", "remove_spaces")
TODAY: dict[str, int] = {"today": 0}  # the IR literal of "today" (a mapping: never a date)
_ISO_DATE = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])")
_HH_MM = re.compile(r"(?:[01]\d|2[0-3]):[0-5]\d")

# Field table. Kind is the value type; domain names the closed set of an enum field
# ("intents", "acts", "nodes", "skill_status", "safety"); nullable fields may be null.
FIXED_FIELDS: tuple[tuple[str, str, str | None, bool], ...] = (
    # (name, kind, domain, nullable)
    ("nlu.intent", "enum", "intents", True),
    ("nlu.dialogue_act", "enum", "acts", False),
    ("nlu.confidence", "number", None, False),
    ("nlu.text", "string", None, False),
    ("nlu.safety", "enum", "safety", False),
    ("system.current_node", "enum", "nodes", False),
    ("system.previous_node", "enum", "nodes", True),
    ("system.node_turns", "integer", None, False),
    ("system.session_turns", "integer", None, False),
    ("system.no_input_count", "integer", None, False),
    ("system.not_understood_count", "integer", None, False),
    ("system.fallback_exhausted", "boolean", None, False),
    ("system.conversation_resuming", "boolean", None, False),
    ("system.turn_limit_reached", "boolean", None, False),
    ("system.min_turns_met", "boolean", None, False),
    ("system.required_slots_filled", "boolean", None, False),
    ("skill.status", "enum", "skill_status", False),
    ("system.slots_updated", "boolean", None, False),
    ("system.idle_seconds", "integer", None, False),
)
FIELD_INDEX: dict[str, int] = {f[0]: i for i, f in enumerate(FIXED_FIELDS)}
SLOT_FIELD_BASE = len(FIXED_FIELDS)
# System fields added since format 6, after the slots and profile fields: a fixed field put
# before the slots would renumber every slot field of the files formats 4-6 wrote. Their
# indices: `late_field_index`; same tuple layout as FIXED_FIELDS.
LATE_FIELDS: tuple[tuple[str, str, str | None, bool], ...] = (
    ("system.slot_declined", "boolean", None, False),  # SPEC 18.3: a bare decline this turn
)
LATE_FIELD_INDEX: dict[str, int] = {f[0]: i for i, f in enumerate(LATE_FIELDS)}


def late_field_index(name: str, slot_count: int, profile_count: int) -> int:
    """The field index of a `LATE_FIELDS` entry in a program of so many slots and profile
    fields: after all of them."""
    return SLOT_FIELD_BASE + slot_count + profile_count + LATE_FIELD_INDEX[name]


def field_name(program: Any, index: int) -> str:
    """Display name of a field index of `program` (an `ir.Program`)."""
    if index < SLOT_FIELD_BASE:
        return FIXED_FIELDS[index][0]
    index -= SLOT_FIELD_BASE
    if index < len(program.slots):
        return "slots." + program.slots[index].name
    index -= len(program.slots)
    if index < len(program.profile):
        return "profile." + program.profile[index].name
    return LATE_FIELDS[index - len(program.profile)][0]

# Enum domains whose literals (and facts) are indices: an intent, act or node index. The other
# enums (skill.status, nlu.safety, enum slots) keep their members as strings.
INTERNED_DOMAINS = frozenset({"intents", "acts", "nodes"})


def operator_applies(operator: str, kind: str) -> bool:
    """Whether `operator` (an `OPERATORS` name) applies to a field of value kind `kind`: a
    list takes `contains` (an item), `is_empty` and `is_not_empty` only."""
    if kind == "list":
        return operator in LIST_KIND_OPERATORS
    if operator in ORDERING_OPERATORS:
        return kind in NUMERIC_KINDS or kind in TEMPORAL_KINDS
    if operator == "contains":
        return kind in TEXT_KINDS
    return True


# --- conditions -----------------------------------------------------------------------------


class FieldType(NamedTuple):
    """What a condition may do with one field of a program's field table (`field_types`):
    the operators that apply to `kind`, and literals of that kind, or null when `nullable`.
    `members` is how many indices an interned enum has (`INTERNED_DOMAINS`) or the strings of
    a string enum (`skill.status`, `nlu.safety`, an enum slot); None for the other kinds."""

    name: str
    kind: str  # a VALUE_TYPES entry
    nullable: bool
    domain: str | None  # a FIXED_FIELDS domain, "slot_values" or None
    members: int | frozenset[str] | None


def field_types(slots: Sequence[Any], intent_count: int, node_count: int,
                profile: Sequence[Any] = ()) -> tuple[FieldType, ...]:
    """The field table of a program, by field index: `FIXED_FIELDS`, then one per slot (an
    unfilled slot reads as null), then one per profile field (`profile.NAME`, SPEC 8.1:
    nullable, a value the session was not given reads as null)."""
    return (*_fixed_field_types(intent_count, node_count), *map(_slot_field, slots),
            *(_slot_field(field, "profile.") for field in profile), *_LATE_FIELD_TYPES)


@functools.lru_cache(maxsize=64)
def _fixed_field_types(intent_count: int, node_count: int) -> tuple[FieldType, ...]:
    members = {"intents": intent_count, "acts": len(ACTS), "nodes": node_count,
               "skill_status": frozenset(SKILL_STATUSES), "safety": frozenset(SAFETY_VALUES)}
    return tuple(FieldType(name, kind, nullable, domain, members.get(domain))
                 for name, kind, domain, nullable in FIXED_FIELDS)


_LATE_FIELD_TYPES = tuple(FieldType(name, kind, nullable, domain, None)
                          for name, kind, domain, nullable in LATE_FIELDS)


def _slot_field(slot: Any, prefix: str = "slots.") -> FieldType:  # an ir.Slot
    """A slot's (or profile field's) field type. A list's `domain` is its item type, and
    `members` its items' values when they are enum members."""
    members = frozenset(slot.values) if slot.values else None
    if slot.value_type == "enum":
        return FieldType(prefix + slot.name, "enum", True, "slot_values", members or frozenset())
    if slot.value_type == "list":
        return FieldType(prefix + slot.name, "list", True, slot.items, members)
    return FieldType(prefix + slot.name, slot.value_type, True, None, None)


def item_type(ftype: FieldType) -> FieldType:
    """The field type of one item of a list field (what `contains` compares with)."""
    if ftype.domain == "enum":
        return FieldType(ftype.name, "enum", False, "slot_values", ftype.members or frozenset())
    return FieldType(ftype.name, ftype.domain or "string", False, None, None)


def check_condition(condition: Any, fields: Sequence[FieldType]) -> str | None:
    """What is wrong with an opcode tree (None when nothing is; None itself is "always"):
    its shape (`_shape_problem`), its depth (at most `MAX_CONDITION_DEPTH` and/or/not levels)
    and every leaf against `fields` (`_leaf_problem`). Walked level by level, never recursing."""
    level, depth = [condition] if condition is not None else [], 0
    while level:
        below = []
        for c in level:
            op = c[0] if type(c) is list and c else None
            if op == OP_LEAF and type(op) is int and len(c) == 4:
                problem = _leaf_problem(c, fields)
                if problem is not None:
                    return problem
            elif op == OP_NOT and type(op) is int and len(c) == 2 and depth < MAX_CONDITION_DEPTH:
                below.append(c[1])
            elif op in (OP_AND, OP_OR) and type(op) is int and len(c) == 2 and \
                    type(c[1]) is list and c[1] and depth < MAX_CONDITION_DEPTH:
                below += c[1]
            else:
                shape = _shape_problem(c)
                if shape is not None:
                    return f"has a malformed condition ({shape})"
                return f"has a condition nested more than {MAX_CONDITION_DEPTH} levels deep"
        level, depth = below, depth + 1
    return None


def _shape_problem(c: Any) -> str | None:
    """What makes `c` no opcode list: [OP_LEAF, operator, field, value], [OP_NOT, c] or
    [OP_AND or OP_OR, non-empty list]."""
    if type(c) is not list or not c:
        return f"{_shown(c)} where an opcode list belongs"
    op = c[0]
    if type(op) is not int or op not in (OP_AND, OP_OR, OP_NOT, OP_LEAF):
        return f"unknown opcode {_shown(op)}"
    if len(c) != (4 if op == OP_LEAF else 2):
        return f"opcode {op} with {len(c) - 1} operands"
    if op in (OP_AND, OP_OR) and (type(c[1]) is not list or not c[1]):
        return f"{'and' if op == OP_AND else 'or'} over {_shown(c[1])}, not a non-empty list"
    return None


def _leaf_problem(leaf: list, fields: Sequence[FieldType]) -> str | None:
    """What is wrong with one `[OP_LEAF, operator, field, value]` (None when nothing is): the
    field and operator exist, the operator applies to the field's kind (`operator_applies`)
    and the literal is of the field's type (`_literal_expected`)."""
    _, operator, field, value = leaf
    if type(field) is not int or not 0 <= field < len(fields):
        return f"has a condition that reads unknown field index {_shown(field)}"
    if type(operator) is not int or not 0 <= operator < len(OPERATORS):
        return f"has a condition that uses unknown operator {_shown(operator)}"
    name, ftype = OPERATORS[operator], fields[field]
    if not operator_applies(name, ftype.kind):
        rule = "ordering operators need" if name in ORDERING_OPERATORS else f"{name} needs"
        kinds = NUMERIC_KINDS | TEMPORAL_KINDS if name in ORDERING_OPERATORS else TEXT_KINDS
        return (f"compares {_name(ftype.name)} ({ftype.kind}) with {name}; {rule} a field of "
                f"kind {' or '.join(sorted(kinds))}")
    expected = _literal_expected(name, ftype, value)
    if expected is not None:
        return f"compares {_name(ftype.name)} with {name} {_shown(value)}; it needs {expected}"
    return None


def _literal_expected(operator: str, ftype: FieldType, value: Any) -> str | None:
    """None when `value` is a literal `operator` can compare a field of type `ftype` with,
    else what it should be, in words."""
    if operator == "equals" or operator == "not_equals":
        return None if _is_member(ftype, value) else _member_words(ftype)
    if operator in NO_VALUE_OPERATORS:
        return None if value is None else "no value"
    if operator in ORDERING_OPERATORS and ftype.kind in TEMPORAL_KINDS:
        return None if value is not None and _is_member(ftype, value) else _KIND_WORDS[ftype.kind]
    if operator in ORDERING_OPERATORS:
        whole = ftype.kind != "integer" or type(value) is int
        return None if whole and _is_number(value) else _KIND_WORDS[ftype.kind]
    if operator == "contains" and ftype.kind == "list":
        item = item_type(ftype)
        return None if _is_member(item, value) else "an item: " + _member_words(item)
    if operator == "contains":
        return None if type(value) is str else "a string"
    if type(value) is list and value and all(_is_member(ftype, v) for v in value):
        return None  # in, not_in: the last operators of OPERATORS
    return "a non-empty list, each item " + _member_words(ftype)


def _is_member(ftype: FieldType, value: Any) -> bool:
    """Whether `value` is one value of the field (`equals`, an item of `in`)."""
    if value is None:
        return ftype.nullable
    kind = ftype.kind
    if kind in TEXT_KINDS:
        return type(value) is str
    if kind == "integer":
        return type(value) is int and fits_int64(value)
    if kind == "number":
        return _is_number(value)
    if kind == "boolean":
        return type(value) is bool
    if kind in TEMPORAL_KINDS:
        return value == TODAY and kind == "date" or temporal_literal(kind, value)
    if kind == "list":
        return value is None
    if ftype.domain in INTERNED_DOMAINS:
        return type(value) is int and 0 <= value < ftype.members
    return type(value) is str and value in ftype.members


def temporal_literal(kind: str, value: Any) -> bool:
    """Whether `value` is a date (a real YYYY-MM-DD day) or a time (HH:MM) as stored."""
    if type(value) is not str:
        return False
    if kind == "time":
        return _HH_MM.fullmatch(value) is not None
    if _ISO_DATE.fullmatch(value) is None:
        return False
    import calendar  # with locale, a few ms of start-up: only scenarios with dates get here

    year, month, day = map(int, value.split("-"))
    return day <= calendar.monthrange(year, month)[1]


def _is_number(value: Any) -> bool:
    """An int that fits in 64 bits or a finite float (a bool is not a number)."""
    if type(value) is int:
        return fits_int64(value)
    return type(value) is float and math.isfinite(value)


_KIND_WORDS = {"string": "a string", "email": "a string", "integer": "a whole number",
               "number": "a number", "boolean": "true or false", "list": "a list",
               "date": 'an ISO date (YYYY-MM-DD) or "today"', "time": "a time (HH:MM)"}


def _member_words(ftype: FieldType) -> str:
    """One value of the field, in words (for `equals` and the items of `in`)."""
    if ftype.kind == "enum" and not ftype.members:  # only null can be compared with
        why = "the program declares no intents" if ftype.domain == "intents" else \
            f"{_name(ftype.name)} has no values"
        return f"null ({why})"
    if ftype.domain in INTERNED_DOMAINS:
        words = f"an index into its {ftype.members} {ftype.domain}"
    elif ftype.kind == "enum":
        shown = sorted(ftype.members)
        words = "one of " + ", ".join(map(_shown, shown[:6])) + (", ..." if len(shown) > 6 else "")
    else:
        words = _KIND_WORDS[ftype.kind]
    return words + (" or null" if ftype.nullable else "")


def _shown(value: Any, limit: int = 40) -> str:
    """A literal for a message, on one short line whatever it holds: strings as JSON (ASCII
    escapes unless printable: no line breaks), containers described, never printed (they may
    be nested thousands deep)."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return f"a map of {len(value)}"
    import json  # only messages about a bad literal need it: not imported at start-up

    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=not value.isprintable())
    elif value is None or isinstance(value, bool):
        text = json.dumps(value)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _name(text: str) -> str:
    """A node, slot, intent or transition name for a message: as it is when plain, else as a
    literal (`_shown`)."""
    return text if _NAME.fullmatch(text) else _shown(text)


_NAME = re.compile(r"[A-Za-z0-9_.]+")


# --- declared skills (SPEC 14.7, 15) --------------------------------------------------------
SKILL_KINDS = ("python", "webhook", "builtin")
# The types of skill arguments and result fields (JSON's, plus `any`).
SKILL_VALUE_TYPES = ("string", "number", "integer", "boolean", "object", "list", "any")
WEBHOOK_MAX_SECONDS = 30  # the whole budget of one call, retries included
WEBHOOK_DEFAULT_SECONDS = 5
WEBHOOK_DEFAULT_RETRIES = 2


class _SmallRecord(msgspec.Struct, array_like=True, frozen=True, forbid_unknown_fields=True):
    pass  # the IR's record form (ir._Record), for the small records ir.py re-exports


class SkillField(_SmallRecord):
    """A declared argument (with `required`) or result field of a skill."""

    TYPES: ClassVar[tuple[str, ...]] = SKILL_VALUE_TYPES

    name: str
    value_type: str  # one of SKILL_VALUE_TYPES
    required: bool = False


class SkillDecl(_SmallRecord):
    """A skill the scenario may run: a python entry point, a webhook, or a built-in. A
    webhook's `url` and header values are kept as written: a `${NAME}` form is resolved when
    the scenario is loaded to run, so no secret is ever in the IR."""

    MAX_SECONDS: ClassVar[int] = WEBHOOK_MAX_SECONDS

    name: str
    kind: str  # one of SKILL_KINDS
    arguments: list[SkillField] = []
    result: list[SkillField] = []
    url: str = ""
    timeout_seconds: float = float(WEBHOOK_DEFAULT_SECONDS)  # a float in the IR, as decoded
    retries: int = WEBHOOK_DEFAULT_RETRIES
    headers: list[tuple[str, str]] = []


def _builtin(name: str, arguments: list[SkillField], result: list[str]) -> SkillDecl:
    fields = [SkillField(field, "integer" if field == "temperature" else "string")
              for field in result]
    return SkillDecl(name, "builtin", arguments, [*fields, SkillField("error", "string")])


# The built-ins, declared implicitly in every scenario (SPEC 14.7, 17.24).
BUILTIN_SKILLS: dict[str, SkillDecl] = {
    "weather": _builtin("weather", [SkillField("location", "string")],
                        ["location", "summary", "temperature"]),
    "email": _builtin("email", [SkillField("to", "string", True),
                                SkillField("subject", "string", True),
                                SkillField("body", "string", True),
                                SkillField("from", "string", True),
                                SkillField("signature", "string"),
                                SkillField("timeout_ms", "integer")], ["message_id"]),
}


def skill_problem(decls: Sequence[SkillDecl]) -> tuple[str, str] | None:
    """(name, what is wrong) for the first bad skill declared in an IR file (a known kind,
    typed fields, a webhook budget within bounds), or None."""
    for decl in decls:
        if decl.kind not in SKILL_KINDS:
            return decl.name, f"has unknown kind {_shown(decl.kind)}"
        for item in (*decl.arguments, *decl.result):
            if item.value_type not in SKILL_VALUE_TYPES:
                return decl.name, f"has field {_shown(item.name)} of unknown type"
        if decl.kind == "webhook" and not (0 < decl.timeout_seconds <= WEBHOOK_MAX_SECONDS
                                           and 0 <= decl.retries <= 100):
            return decl.name, "has a timeout or retries out of bounds"
    return None


# --- small records of the IR (re-exported by `ir`, which keeps the program's shape) -------


class SlotSet(_SmallRecord):
    """One assignment of a `set`: `value` is the literal (None clears), the index of the slot
    copied, or the number added (an unfilled slot counts as 0)."""

    slot: int  # slot index
    kind: int  # SET_LITERAL, SET_COPY or SET_ADD
    value: Any = None


class Line(_SmallRecord):
    """A line of a conditional response (SPEC 14.4): its variants, said when `when` holds."""

    texts: list[str]
    when: Any = None  # opcode list, or None for always


class Lines(_SmallRecord):
    """A response made of conditional lines, joined by `join` (SPEC 14.4, 17.21)."""

    lines: list[Line]
    join: str = " "


class SafetyRule(_SmallRecord):
    """A `graph.safety` rule: a turn whose safety category is `category` goes to `target`
    (holds there when it is the current node), before any other routing (SPEC 10)."""

    category: str  # one of SAFETY_CATEGORIES
    target: int  # node index
    source: int  # index into Program.source_map (label `safety:CATEGORY`)
    name: str | None = None


class SafetyPattern(_SmallRecord):
    """A scenario's own crisis expression (`safety.patterns`), added to the built-in lexicon."""

    category: str
    pattern: str  # a regex with a bounded matching time (`patterns.INTENT`)
    negatable: bool = True  # SPEC 13.4: a negation outside the match cancels it


class SourceEntry(_SmallRecord):
    """Where a transition came from: JSON pointer, reason label and display text."""

    pointer: str
    label: str  # "next_nodes[2]", "default_next", "global:NAME" or "global[i]"
    display: str  # the condition in expression syntax ("" when unconditional)


class Intent(_SmallRecord):
    """A declared intent: its examples and patterns for the rules NLU, its threshold."""

    name: str
    description: str = ""
    examples: list[str] = []
    patterns: list[str] = []
    threshold: float | None = None  # SPEC 13.2: None is the NLU's calibrated default


# --- conditional lines (SPEC 14.4, 17.21) ---------------------------------------------------
# A node holds two kinds: `Node.lines`, response kind -> `Lines` said by the NLG, and
# `Node.skill_lines` (format 8), skill argument -> `Lines` rendered into that argument's text
# when the skill runs. A line of an argument has exactly one text: an argument is sent once,
# so there is no rotation to say variants in.

JOINS = (" ", "\n")  # SPEC 14.4: how the lines said are joined


def lines_problem(node: Any, kinds: Sequence[str], fields: Sequence[FieldType]
                  ) -> tuple[str, str] | None:
    """(the part, what is wrong) for the first unusable lines of `node`, or None: a response
    kind of `kinds` with at least one line, a known join, each condition well formed and
    typed (`check_condition`); an argument's lines with one text each."""
    for kind, made in node.lines.items():
        problem = None if kind in kinds else "is not usable"
        problem = problem or _made_problem(made, fields, None)
        if problem is not None:
            return f"lines of {_shown(kind)}", problem
    for argument, made in node.skill_lines.items():
        problem = "has no skill" if node.skill is None else None
        problem = problem or _made_problem(made, fields, 1)
        if problem is not None:
            return f"skill argument {_shown(argument)} lines", problem
    return None


def _made_problem(made: Lines, fields: Sequence[FieldType], texts: int | None) -> str | None:
    if not made.lines or made.join not in JOINS:
        return "is not usable"
    for line in made.lines:
        if not line.texts or (texts is not None and len(line.texts) != texts):
            return "has a line with no text" if not line.texts else "has a line with variants"
        problem = check_condition(line.when, fields)
        if problem is not None:
            return problem
    return None
