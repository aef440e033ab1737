"""Type checking of conditions: names against the catalogues, values against field types.

In: a `Condition` from `conditions.py` (either syntax), the `ConditionEnv` of the scenario
(declared intents, node ids, slot types) and the `Diagnostics` collector.
Out: the same condition with normalised values, or None when any leaf in it failed.

Each leaf is checked in a fixed order and stops at its first problem, so one mistake gives
one report and never a cascade:

    E201  the field is not in the catalogue (`interpreter.ir.FIXED_FIELDS`, `slots.<declared>`)
    E202  the operator is not one of `OPERATORS` (the only place E202 is reported: lowering
          keeps an unknown operator in the leaf as written)
    E203  the operator does not apply to the field's kind
    E204  the value has the wrong type, or is not a member of the field's closed set

After: every value is of its field's type: enum values are members, `nlu.dialogue_act` reads
`negate` as `deny` and JSON null as the act "null", integer fields hold ints (2.0 -> 2),
and `in`/`not_in` hold non-empty lists. Reports carry the leaf's pointer and, for a leaf from
an expression string, its offset in the string so the caret lands on the leaf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from interpreter import MagoError
from compiler.condition_ast import NO_VALUE, Condition, Leaf, Not, leaves, walk
from compiler.conditions import json_type, print_value
from compiler.diagnostics import Diagnostics, Names, did_you_mean, join, name_list
from interpreter.fields import (LIST_KIND_OPERATORS, LIST_OPERATORS, NO_VALUE_OPERATORS,
                                NUMERIC_KINDS, ORDERING_OPERATORS, TEMPORAL_KINDS, TEXT_KINDS,
                                TODAY, temporal_literal)
from interpreter.ir import (
    ACTS, FIELD_INDEX, FIXED_FIELDS, INT_RANGE_HINT, LATE_FIELD_INDEX, LATE_FIELDS, OPERATORS,
    SAFETY_VALUES, SKILL_STATUSES, fits_int64,
)

# The kind of a slot whose definition the schema pass rejected: any operator and value pass,
# since the one problem is already reported there.
UNKNOWN = "unknown"
# Acts an NLU may say that mean a member of ACTS.
ACT_ALIASES = {"negate": "deny"}
# Symbols and near-names people write for an operator, read as a did-you-mean.
OPERATOR_ALIASES = {
    "==": "equals", "=": "equals", "eq": "equals", "!=": "not_equals", "ne": "not_equals",
    ">": "greater_than", ">=": "greater_or_equal", "<": "less_than", "<=": "less_or_equal",
    "gt": "greater_than", "gte": "greater_or_equal", "lt": "less_than", "lte": "less_or_equal",
    "not in": "not_in", "is empty": "is_empty", "is not empty": "is_not_empty",
}

# ---------------------------------------------------------------------------------------
# Message wording, in one place.

MSG = {
    "unknown_field": "unknown condition field '{field}'",
    "undeclared_slot": "condition field '{field}' names an undeclared slot '{slot}'",
    "unknown_operator": "unknown operator '{operator}'",
    "not_applicable": "operator '{operator}' does not apply to '{field}' ({kind})",
    "wrong_type": "'{operator}' on '{field}' needs {expected}, got {got}",
    "not_integer": "'{field}' holds whole numbers; {value} is not one",
    "not_nullable": "'{field}' is never null",
    "list_required": "'{operator}' needs a list of values, got {got}",
    "empty_list": "'{operator}' needs at least one value",
    "out_of_range": "{value} does not fit in 64 bits, which is how '{field}' values are stored",
    "today_in_list": "'{operator}' on '{field}' lists ISO dates; \"today\" is compared with "
                     "==, !=, <, <=, > or >=",
    "not_member": {
        "intents": "'{value}' is not a declared intent",
        "acts": "'{value}' is not a dialogue act",
        "nodes": "'{value}' is not a node id",
        "skill_status": "'{value}' is not a skill status",
        "safety": "'{value}' is not a safety category (or none)",
        "slot_values": "'{value}' is not a value of slot '{slot}'",
    },
}
HINT = {
    "fields": "condition fields are nlu.intent, nlu.dialogue_act, nlu.confidence, nlu.text, "
    "nlu.safety, system.*, skill.status, slots.<declared slot> and profile.<declared field>",
    "list": "a list slot takes 'contains' (one item), 'is_empty' and 'is_not_empty'",
    "declare_slot": 'declare it under "slots"',
    "operators": "operators are " + ", ".join(OPERATORS),
    "ordering": "ordering operators apply to integer, number, date and time fields",
    "contains": "'contains' tests text; for this field use 'equals' or 'in'",
    "unquote": "write the number without quotes: {text}",
    "quote": 'text values are quoted: "{text}"',
    "use_list": "write a list, as in [{value}]",
    "members": "{what}: {members}",
    "declare_intent": 'declare it under "intents"',
    "bare_field": "a field on its own means '== true'; compare it with a value",
    "range": INT_RANGE_HINT,
    "today": 'write {field} == "today" on its own, joined with "or" to the list',
}
EXPECTED_WORDS = {
    "string": "a string", "email": "a string", "integer": "an integer", "number": "a number",
    "boolean": "true or false", "enum": "a string",
    "date": 'an ISO date (YYYY-MM-DD) or "today"', "time": "a time (HH:MM)",
}
DOMAIN_WORDS = {
    "intents": "declared intents", "acts": "dialogue acts", "nodes": "node ids",
    "skill_status": "skill statuses", "safety": "safety values", "slot_values": "values",
}


@dataclass(frozen=True)
class SlotType:
    """A declared slot as conditions see it: value type, and members when it is an enum."""

    value_type: str  # one of VALUE_TYPES; UNKNOWN when the definition was rejected
    values: tuple[str, ...] = ()
    items: str | None = None  # a list slot's item type (SPEC 8.2)


@dataclass(frozen=True)
class ConditionEnv:
    """What the scenario declares that conditions may name."""

    intents: tuple[str, ...]
    nodes: tuple[str, ...]
    slots: dict[str, SlotType]
    profile: dict[str, SlotType] = field(default_factory=dict)  # SPEC 8.1: `profile.NAME`
    # (kind, slot) -> the names of that kind, for membership and did-you-mean; built on first use
    _names: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def names(self, kind: str, slot: str | None = None) -> Names:
        """The names of one kind, built once per environment (so once per compile): "fields",
        "slots", or a closed set of `FieldType.domain` ("slot_values" of `slot`)."""
        key = (kind, slot)
        if key not in self._names:
            self._names[key] = Names(self._names_of(kind, slot))
        return self._names[key]

    def _names_of(self, kind: str, slot: str | None):
        if kind == "fields":
            return known_fields(self)
        if kind == "slots":
            return self.slots
        if kind == "slot_values":
            return self.slots[slot].values
        return _domain_members(kind, self)


@dataclass(frozen=True)
class FieldType:
    """The type of a condition field: `kind` (a VALUE_TYPES entry), the members of an enum,
    whether it may be null, and which closed set the members come from (`domain`:
    "intents", "acts", "nodes", "skill_status", "safety", "slot_values", or None when not an
    enum).
    `names` holds the members as the environment's `Names` (set lookups, did-you-mean)."""

    kind: str
    members: tuple[str, ...] = ()
    nullable: bool = False
    domain: str | None = None
    names: Names | None = field(default=None, compare=False, repr=False)
    items: str | None = None  # a list field's item type: what `contains` compares with

    def member_names(self) -> Names:
        """`names`, or (for a type made without an environment) a pool of `members`."""
        return self.names if self.names is not None else Names(self.members)


def field_type(name: str, env: ConditionEnv) -> FieldType | None:
    """The type of field `name` in `env`, or None when it is not a field."""
    if name in FIELD_INDEX or name in LATE_FIELD_INDEX:
        _, kind, domain, nullable = FIXED_FIELDS[FIELD_INDEX[name]] if name in FIELD_INDEX \
            else LATE_FIELDS[LATE_FIELD_INDEX[name]]
        if domain == "nodes" and not env.nodes:  # the node list was rejected (E012): unknown
            return FieldType(UNKNOWN, (), True, None)
        names = env.names(domain) if domain else None
        return FieldType(kind, _domain_members(domain, env), nullable, domain, names)
    if name.startswith("slots.") and name[len("slots."):] in env.slots:
        slot_name = name[len("slots."):]
        return _slot_type(env.slots[slot_name], env.names("slot_values", slot_name))
    if name.startswith("profile.") and name[len("profile."):] in env.profile:
        declared = env.profile[name[len("profile."):]]
        return _slot_type(declared, Names(declared.values))
    return None


def _slot_type(slot: SlotType, members: Names) -> FieldType:
    """A slot's or profile field's type: nullable (an unfilled slot reads as null)."""
    if slot.value_type == "enum":
        return FieldType("enum", tuple(slot.values), True, "slot_values", members)
    if slot.value_type == "list":
        domain = "slot_values" if slot.items == "enum" else None
        return FieldType("list", tuple(slot.values), True, domain, members, slot.items)
    return FieldType(slot.value_type, (), True, None)


def _domain_members(domain: str | None, env: ConditionEnv) -> tuple[str, ...]:
    closed_sets = {"intents": env.intents, "acts": ACTS, "nodes": env.nodes,
                   "skill_status": SKILL_STATUSES, "safety": SAFETY_VALUES}
    return tuple(closed_sets.get(domain, ()))


def known_fields(env: ConditionEnv) -> list[str]:
    """Every field name a condition may use in `env`."""
    return ([name for name, *_ in FIXED_FIELDS] + ["slots." + name for name in env.slots]
            + ["profile." + name for name in env.profile] + [name for name, *_ in LATE_FIELDS])


# ---------------------------------------------------------------------------------------
# The walk.


def check_condition(condition: Condition, env: ConditionEnv, diags: Diagnostics) -> Condition | None:
    """`condition` with normalised values, or None after reporting every bad leaf once."""
    checked: dict[int, Leaf | None] = {}
    originals = leaves(condition)
    for leaf in originals:
        if id(leaf) not in checked:  # a leaf shared by two parents is still one problem
            checked[id(leaf)] = _check_leaf(leaf, env, diags)
    if any(leaf is None for leaf in checked.values()):
        return None
    if all(checked[id(leaf)] is leaf for leaf in originals):
        return condition  # nothing was normalised: the common case needs no copy
    return _rebuild(condition, checked)


def _rebuild(condition: Condition, checked: dict[int, Leaf | None]) -> Condition:
    """A copy of `condition` with its leaves replaced, children before parents (iterative)."""
    built: dict[int, Condition] = {}
    for node in reversed(list(walk(condition))):
        if isinstance(node, Leaf):
            built[id(node)] = checked[id(node)]
        elif isinstance(node, Not):
            built[id(node)] = Not(built[id(node.item)], pos=node.pos)
        else:
            items = tuple(built[id(item)] for item in node.items)
            built[id(node)] = type(node)(items, pos=node.pos)
    return built[id(condition)]


# Which key of an object-form leaf each code is about.
PROBLEM_KEY = {"E201": "field", "E202": "operator", "E203": "operator", "E204": "value"}


class _Problem(MagoError):
    """The one problem of a leaf: code, message, hint."""

    def __init__(self, code: str, message: str, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint
        self.item: int | None = None  # index of the offending member of a value list


def _check_leaf(leaf: Leaf, env: ConditionEnv, diags: Diagnostics) -> Leaf | None:
    try:
        ftype = _resolve_field(leaf.field, env)
        _check_operator(leaf, ftype)
        value = _check_value(leaf, ftype)
    except _Problem as problem:
        pointer = leaf.pos.pointer if leaf.pos else ""
        offset = leaf.pos.offset if leaf.pos else None
        part = PROBLEM_KEY[problem.code]
        if leaf.pos and offset is None:  # object form: point at the key that is wrong
            pointer = join(pointer, part) if problem.item is None else join(pointer, part, problem.item)
        elif leaf.pos:  # expression: point at the operator, value or list item in the string
            offset = _part_offset(leaf.pos, part, problem.item) or offset
        diags.report(problem.code, problem.message, pointer, problem.hint, string_offset=offset)
        return None
    if _identical(value, leaf.value):
        return leaf
    return Leaf(leaf.field, leaf.operator, value, pos=leaf.pos)


def _identical(a, b) -> bool:
    """Equal and of the same types throughout (2 and 2.0, "negate" and "deny" differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b))
    return a == b


def _part_offset(pos, part: str, item: int | None) -> int | None:
    if part == "value" and item is not None and pos.item_offsets:
        return pos.item_offsets[item]
    return {"operator": pos.operator_offset, "value": pos.value_offset}.get(part)


def _resolve_field(name: str, env: ConditionEnv) -> FieldType:
    ftype = field_type(name, env)
    if ftype is not None:
        return ftype
    if isinstance(name, str) and name.startswith("slots."):
        slot = name[len("slots."):]
        hint = did_you_mean(slot, env.names("slots")) or HINT["declare_slot"]
        raise _Problem("E201", MSG["undeclared_slot"].format(field=name, slot=slot), hint)
    hint = did_you_mean(name, env.names("fields")) or HINT["fields"]
    raise _Problem("E201", MSG["unknown_field"].format(field=name), hint)


def _check_operator(leaf: Leaf, ftype: FieldType) -> None:
    operator = leaf.operator
    if operator not in OPERATORS:
        alias = OPERATOR_ALIASES.get(operator) if isinstance(operator, str) else None
        hint = f"did you mean '{alias}'?" if alias else did_you_mean(operator, OPERATORS)
        raise _Problem("E202", MSG["unknown_operator"].format(operator=operator), hint or HINT["operators"])
    if ftype.kind == UNKNOWN:
        return
    if ftype.kind == "list":
        if operator in LIST_KIND_OPERATORS:
            return
        hint = HINT["list"]
    elif operator in ORDERING_OPERATORS and ftype.kind not in NUMERIC_KINDS | TEMPORAL_KINDS:
        hint = HINT["ordering"]
    elif operator == "contains" and ftype.kind not in TEXT_KINDS:
        hint = HINT["contains"]
    else:
        return
    message = MSG["not_applicable"].format(operator=operator, field=leaf.field, kind=_kind_words(ftype))
    raise _Problem("E203", message, hint)


def _kind_words(ftype: FieldType) -> str:
    return f"{ftype.kind}, nullable" if ftype.nullable else ftype.kind


# ---------------------------------------------------------------------------------------
# Values.


def _check_value(leaf: Leaf, ftype: FieldType):
    """The normalised value of a leaf whose field and operator are fine, or `_Problem`."""
    operator, value = leaf.operator, leaf.value
    if operator in NO_VALUE_OPERATORS:
        return NO_VALUE  # lowering guarantees there is none
    if operator in ORDERING_OPERATORS and ftype.kind in TEMPORAL_KINDS:
        return _check_member(leaf, ftype, value)
    if operator in ORDERING_OPERATORS:
        return _check_number(leaf, ftype, value)
    if operator == "contains" and ftype.kind == "list":
        item = FieldType(ftype.items or UNKNOWN, ftype.members, False, ftype.domain, ftype.names)
        return _check_member(leaf, item, value)
    if operator == "contains":
        if not isinstance(value, str):
            raise _wrong_type(leaf, "a string", value)
        return value
    if operator in LIST_OPERATORS:
        if not isinstance(value, (list, tuple)):
            hint = HINT["use_list"].format(value=_show(value))
            raise _Problem("E204", MSG["list_required"].format(operator=operator, got=_describe(value)), hint)
        if not value:
            raise _Problem("E204", MSG["empty_list"].format(operator=operator))
        return [_check_item(leaf, ftype, i, item) for i, item in enumerate(value)]
    return _check_member(leaf, ftype, value)  # equals, not_equals


def _check_item(leaf: Leaf, ftype: FieldType, index: int, item):
    """One member of an in/not_in list; a problem names the item, so the caret lands on it."""
    try:
        return _check_member(leaf, ftype, item)
    except _Problem as problem:
        problem.item = index
        raise


def _check_number(leaf: Leaf, ftype: FieldType, value):
    """An ordering operand: a number (bool is not one), whole for an integer field."""
    if not _is_number(value):
        raise _wrong_type(leaf, "a number", value)
    if ftype.kind == "integer":
        return _as_integer(leaf, value)
    return _storable(leaf, value)


def _check_member(leaf: Leaf, ftype: FieldType, value):
    """One value for equals/not_equals/in/not_in: of the field's type, or null if nullable."""
    if ftype.domain == "acts":
        value = _normalise_act(value)
    if value is None:
        if ftype.nullable:
            return None
        raise _Problem("E204", MSG["not_nullable"].format(field=leaf.field))
    kind = ftype.kind
    if kind == UNKNOWN:
        return value
    if kind in TEXT_KINDS and isinstance(value, str):
        return value
    if kind == "integer" and _is_number(value):
        return _as_integer(leaf, value)
    if kind == "number" and _is_number(value):
        return _storable(leaf, value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind in TEMPORAL_KINDS and isinstance(value, str):
        return _temporal(leaf, ftype, value)
    if kind == "enum" and isinstance(value, str):
        if value in ftype.member_names():
            return value
        raise _not_member(leaf, ftype, value)
    raise _wrong_type(leaf, EXPECTED_WORDS.get(kind, kind), value, ftype)


def _temporal(leaf: Leaf, ftype: FieldType, value: str):
    """A date literal (ISO or "today", which becomes `TODAY`) or a time literal (HH:MM)."""
    if ftype.kind == "date" and value == "today":
        if leaf.operator in LIST_OPERATORS:  # SPEC 14.1: today is a comparison's operand
            raise _Problem("E204", MSG["today_in_list"].format(operator=leaf.operator,
                                                               field=leaf.field),
                           HINT["today"].format(field=leaf.field))
        return dict(TODAY)
    if not temporal_literal(ftype.kind, value):
        raise _wrong_type(leaf, EXPECTED_WORDS[ftype.kind], value, ftype)
    return value


def _normalise_act(value):
    if value is None:  # JSON null in a condition stands for the act "null" (not understood)
        return "null"
    return ACT_ALIASES.get(value, value) if isinstance(value, str) else value


def _is_number(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def _as_integer(leaf: Leaf, value: int | float) -> int:
    if isinstance(value, float):
        if not value.is_integer():
            raise _Problem("E204", MSG["not_integer"].format(field=leaf.field, value=_show(value)))
        value = int(value)
    return _storable(leaf, value)


def _storable(leaf: Leaf, value: int | float) -> int | float:
    """`value`, when the IR can store it: an integer beyond 64 bits is an E204."""
    if isinstance(value, int) and not fits_int64(value):
        raise _Problem("E204", MSG["out_of_range"].format(value=value, field=leaf.field), HINT["range"])
    return value


def _not_member(leaf: Leaf, ftype: FieldType, value: str) -> _Problem:
    slot = leaf.field.partition(".")[2]
    message = MSG["not_member"][ftype.domain].format(value=value, slot=slot)
    hint = did_you_mean(value, ftype.member_names())
    if hint is None and not ftype.members and ftype.domain == "intents":
        hint = HINT["declare_intent"]
    elif hint is None and ftype.members:
        hint = _members_hint(ftype)
    return _Problem("E204", message, hint)


def _members_hint(ftype: FieldType) -> str:
    return HINT["members"].format(what=DOMAIN_WORDS[ftype.domain], members=name_list(ftype.members))


def _wrong_type(leaf: Leaf, expected: str, value, ftype: FieldType | None = None) -> _Problem:
    message = MSG["wrong_type"].format(operator=leaf.operator, field=leaf.field, expected=expected, got=_describe(value))
    hint = None
    if ftype is not None and ftype.members:
        hint = _members_hint(ftype)
    elif leaf.operator == "equals" and value is True:
        hint = HINT["bare_field"]
    elif expected in ("a number", "an integer") and isinstance(value, str) and _is_number(_number_or_none(value)):
        hint = HINT["unquote"].format(text=value.strip())
    elif expected == "a string" and _is_number(value):
        hint = HINT["quote"].format(text=_show(value))
    return _Problem("E204", message, hint)


def _number_or_none(text: str):
    try:
        return float(text)
    except ValueError:
        return None


def _describe(value) -> str:
    """A value for a message: its JSON type, and the value itself when it is short."""
    shown = _show(value)
    return f"{json_type(value)} {shown}" if len(shown) <= 40 and value is not None else json_type(value)


def _show(value) -> str:
    try:
        return print_value(value)
    except (TypeError, ValueError):
        return repr(value)
