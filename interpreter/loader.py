"""Loader: an IR file becomes a `Runtime`, the program plus everything a turn needs precomputed.

In: a path to an IR file (`load_program`) or an `ir.Program` (`Runtime(program)`).
Out: a `Runtime` whose conditions are compiled into closures over resolved field indices and
literal values (no eval, no text), one `NodeTable` per node (routes, gates, end flag) and one
`GlobalRoute` per global transition, so a turn does no name lookups beyond the node id kept
in the state.
After `load_program`: the file's magic, version and checksum, every program-level index
(entry, closing acts, global transitions), the node directory, the slots' value types, the
intents' patterns and the global conditions have been checked (`ir.check_program`);
unreadable files included, any problem is an `ir.IRError` with one line for the user, never
another exception. Node tables are built lazily: at load a table holds its index and id only,
and the first read of any other slot decodes and checks the node (`ir.check_node`: indices,
executor kind, end flag, and every condition's shape, depth and operator and literal types
against the field table), compiles its conditions and fills every slot (an `IRError` then,
from a hand-made file only: the checksum held). `Runtime.check_all()` (or
`load_program(path, verify=True)`) builds and checks everything at once.

Safety (SPEC 10): `Runtime.safety_routes` maps each category of `graph.safety` to its rule
(`SafetyRoute`, reason `safety:CATEGORY`), and `Runtime.safety` is the program's detector
(the built-in lexicon plus the program's `safety.patterns`), built once per program.

A condition closure takes the turn's *facts*: a list laid out like the field table
(`ir.FIXED_FIELDS`, then one entry per slot) and built once per turn by the router.
Enum facts hold interned indices (intent, act, node) exactly like the IR literals, so a
comparison is a plain `==` on small ints.
"""

from __future__ import annotations

import hashlib
import os
from itertools import repeat
from typing import Any
from collections.abc import Callable, Sequence

from . import ir
from .files import InputFileError, read_input
from .slots import SlotRule, compile_profile_rules, compile_slot_rules
from .understanding.safety import Detector, detector_for

Test = Callable[[list], bool]
IRError = ir.IRError

_NULL_ACT = ir.ACTS.index("null")


class Route:
    """One row of a node's table: a `next_nodes` entry or `default_next`, ready to test."""

    __slots__ = ("test", "target", "source", "reason", "tier")

    def __init__(self, test: Test | None, target: int, source: int, reason: str, tier: str):
        self.test = test  # None: always
        self.target = target  # node index or ir.STAY
        self.source = source  # index into program.source_map
        self.reason = reason  # "next_nodes[i]", "stay:next_nodes[i]" or "default_next"
        self.tier = tier  # "next_nodes" or "default_next"


class GlobalRoute:
    """One global transition, ready to test; `reason` is `global:NAME` or `global[i]`."""

    __slots__ = ("test", "target", "source", "reason")

    def __init__(self, test: Test | None, target: int, source: int, reason: str):
        self.test = test
        self.target = target
        self.source = source
        self.reason = reason


class SafetyRoute:
    """One `graph.safety` rule, ready to route: `reason` is `safety:CATEGORY`."""

    __slots__ = ("category", "target", "source", "reason", "name")

    def __init__(self, rule: ir.SafetyRule):
        self.category = rule.category
        self.target = rule.target
        self.source = rule.source
        self.reason = ir.SAFETY_REASON + rule.category
        self.name = rule.name


class NodeTable:
    """A node with its routing data precomputed (indices, flags, closures). Made unbuilt at
    load (`_UnbuiltTable`, with `index` and `id` only) and built on first use."""

    __slots__ = ("index", "id", "_builder", "node", "is_end", "executor", "required",
                 "required_names", "collect", "collect_names", "min_turns",
                 "max_fallback_retries", "turn_limit_enabled", "turn_limit", "routes",
                 "responses", "transient", "skips_filled", "clear", "required_mins",
                 "collect_mins", "sets", "on_enter", "slot_labels", "lines", "answers",
                 "declines", "said", "skill_lines")

    def build(self) -> None:
        """Fill every slot now (`IRError` for a bad node); a built table has nothing to do."""

    def fill(self, node: ir.Node, routes: tuple[Route, ...], slot_names: Sequence[str],
             min_items: Sequence[int], slot_labels: dict | None = None,
             field_count: int = 0, yes_no: dict | None = None,
             declinable: tuple[frozenset, frozenset] = (frozenset(), frozenset())) -> None:
        """Set every slot from the decoded node and its routes (`min_items`: by slot index,
        how many items make a list slot known, 0 for the other slots)."""
        self.node = node
        self.is_end = node.end in (ir.END_EXPLICIT, ir.END_INFERRED)
        self.executor = node.executor
        self.required = tuple(node.required_slots)
        self.required_names = tuple(slot_names[i] for i in node.required_slots)
        self.collect = tuple(node.collect_slots)
        self.collect_names = tuple(slot_names[i] for i in node.collect_slots)
        self.min_turns = node.min_turns
        self.max_fallback_retries = node.max_fallback_retries
        self.turn_limit_enabled = node.turn_limit_enabled
        # node_turns at which the turn limit applies (None: never)
        self.turn_limit = node.max_turns if node.turn_limit_enabled else None
        self.routes = routes
        self.responses = node.responses
        self.said: dict = {}  # kind -> its `Candidates` when it has no placeholders (wording)
        # SPEC 8.3: a transient node never waits; a task node whose collect slots are all
        # known when a turn enters it is passed (`skip:filled`) unless it opts out.
        self.transient = node.transient
        self.skips_filled = (node.executor == ir.EXECUTOR_TASK and node.min_turns == 1
                             and node.skip_if_filled)
        self.clear = tuple(slot_names[i] for i in node.clear_slots)
        self.required_mins = tuple(min_items[i] for i in node.required_slots)
        self.collect_mins = tuple(min_items[i] for i in node.collect_slots)
        # SPEC 14.5: reason -> the `set` of that route (only the routes that set something)
        self.sets = {route.reason: t.sets for route, t in zip(routes, node.transitions)
                     if t.sets}
        self.on_enter = tuple(node.on_enter)
        self.slot_labels = slot_labels or None  # SPEC 14.3: slot -> member -> label
        # SPEC 14.4: kind -> (join, ((test or None, variants), ...)) of conditional lines
        self.lines = {kind: (made.join, tuple((compile_condition(line.when, field_count),
                                               tuple(line.texts)) for line in made.lines))
                      for kind, made in node.lines.items()} or None
        # SPEC 17.21: argument -> (join, ((test or None, text), ...)) rendered for the skill
        self.skill_lines = {arg: (made.join, tuple((compile_condition(line.when, field_count),
                                                    line.texts[0]) for line in made.lines))
                            for arg, made in node.skill_lines.items()} or None
        # SPEC 18.3-18.4: act -> ((slot, value), ...) a bare affirm or deny stores here
        self.answers = _answers(node.collect_slots, yes_no) if yes_no else None
        # SPEC 18.3: whether a bare deny here declines (`decline_slots`)
        optional, answered_by_no = declinable
        self.declines = not optional.isdisjoint(node.collect_slots) and \
            answered_by_no.isdisjoint(node.collect_slots)


class _UnbuiltTable(NodeTable):
    """A `NodeTable` with `index` and `id` only. Reading any other slot (unset: Python then
    calls `__getattr__`) builds the table and turns the object into a plain `NodeTable` (same
    slots, so `__class__` can change): from then on reads are plain slot reads. A `__getattr__`
    on `NodeTable` itself would slow every read (CPython no longer specialises them: ~27 ns
    becomes ~70 ns), and a turn reads a table's slots many times."""

    __slots__ = ()

    def __init__(self, index: int, node_id: str, builder: _TableBuilder):
        self.index = index
        self.id = node_id
        self._builder = builder

    def __getattr__(self, name: str) -> Any:
        if name not in _BUILT_SLOTS:
            raise AttributeError(f"'NodeTable' object has no attribute {name!r}")
        self.build()
        return getattr(self, name)

    def build(self) -> None:
        self._builder.build(self)
        self.__class__ = NodeTable


_BUILT_SLOTS = frozenset(NodeTable.__slots__) - {"index", "id", "_builder"}


_AFFIRM, _DENY = ir.ACTS.index("affirm"), ir.ACTS.index("deny")


def yes_no_values(slots: Sequence[ir.Slot]) -> dict[int, tuple[str, Any, Any]]:
    """SPEC 18.3-18.4: by slot index, (name, value of a bare affirm, value of a bare deny)
    for the slots that declare one: `affirm_value`, `deny_value`, else an optional slot's
    `none_value` (a decline is a deny); None for no value."""
    found = {}
    for i, slot in enumerate(slots):
        on_deny = slot.deny_value if slot.deny_value is not None else (
            slot.none_value if not slot.required else None)
        if slot.affirm_value is not None or on_deny is not None:
            found[i] = (slot.name, slot.affirm_value, on_deny)
    return found


def decline_slots(slots: Sequence[ir.Slot]) -> tuple[frozenset, frozenset]:
    """SPEC 18.3: (the optional slots, the slots with a `deny_value`) by index. A bare deny
    declines at a node that collects one of the first and none of the second (where a "no"
    is itself the answer)."""
    return (frozenset(i for i, s in enumerate(slots) if not s.required),
            frozenset(i for i, s in enumerate(slots) if s.deny_value is not None))


def _answers(collect: Sequence[int], yes_no: dict) -> dict[int, tuple] | None:
    """act index -> ((slot, value), ...) of the node's collect slots (`yes_no_values`)."""
    found: dict[int, tuple] = {}
    for i in collect:
        if i in yes_no:
            name, on_affirm, on_deny = yes_no[i]
            for act, value in ((_AFFIRM, on_affirm), (_DENY, on_deny)):
                if value is not None:
                    found[act] = (*found.get(act, ()), (name, value))
    return found or None


class _TableBuilder:
    """Builds the node tables of one runtime on first use. It holds the program's nodes and
    what routes need, never the runtime or its tables (no reference cycle), and keeps the
    condition of every transition it has seen, by source index (`SourceFields`)."""

    __slots__ = ("nodes", "labels", "field_count", "slot_names", "min_items", "conditions",
                 "slot_labels", "yes_no", "declinable")

    def __init__(self, program: ir.Program, field_count: int, slot_names: Sequence[str]):
        self.nodes = program.nodes
        self.labels = ir.source_labels(program)
        self.field_count = field_count
        self.slot_names = slot_names
        self.min_items = tuple(slot.min_items or 0 for slot in program.slots)
        self.slot_labels = {slot.name: slot.labels for slot in program.slots if slot.labels}
        self.yes_no = yes_no_values(program.slots)
        self.declinable = decline_slots(program.slots)
        self.conditions: dict[int, Any] = {g.source: g.condition
                                           for g in program.global_transitions}

    def build(self, table: NodeTable) -> None:
        try:
            node = self.nodes[table.index]
            routes = tuple(self._route(i, t) for i, t in enumerate(node.transitions))
        except IRError:
            raise
        except Exception as error:  # a hand-made node: never a traceback
            raise _inconsistent(error) from None
        table.fill(node, routes, self.slot_names, self.min_items, self.slot_labels,
                   self.field_count, self.yes_no, self.declinable)
        for t in node.transitions:
            self.conditions[t.source] = t.condition

    def _route(self, i: int, t: ir.Transition) -> Route:
        label = self.labels[t.source] or f"next_nodes[{i}]"
        test = compile_condition(t.condition, self.field_count)
        if label == "default_next":
            return Route(test, t.target, t.source, "default_next", "default_next")
        reason = "stay:" + label if t.target == ir.STAY else label
        return Route(test, t.target, t.source, reason, "next_nodes")


class SourceFields:
    """`Runtime.source_fields`: by source index, the field indices that transition's condition
    reads (traces only). Known at once for the global transitions and for the nodes whose
    table is built (a trace shows only those); another source walks every node once."""

    __slots__ = ("_builder", "_count", "_complete")

    def __init__(self, builder: _TableBuilder, count: int):
        self._builder = builder
        self._count = count
        self._complete = False

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, source: int) -> tuple[int, ...]:
        if not 0 <= source < self._count:
            raise IndexError(f"source index {source} out of range")
        conditions = self._builder.conditions
        if source not in conditions and not self._complete:
            for node in self._builder.nodes:
                for t in node.transitions:
                    conditions.setdefault(t.source, t.condition)
            self._complete = True
        return condition_fields(conditions.get(source))


class Runtime:
    """A loaded program and its precomputed tables; shared read-only by every session.
    A decoded program's program-level indices were checked by `ir.decode_ir`; each node's are
    checked when its table is built (a program built in-process comes from the compiler)."""

    def __init__(self, program: ir.Program, ir_hash: str | None = None,
                 compiler_version: str = ""):
        self.program = program
        self.compiler_version = compiler_version
        self.ir_hash = ir_hash or hashlib.sha256(ir.encode_body(program)).hexdigest()
        self.slot_names: tuple[str, ...] = tuple(s.name for s in program.slots)
        self.slot_index = {name: i for i, name in enumerate(self.slot_names)}
        self.slot_rules: tuple[SlotRule, ...] = compile_slot_rules(program)
        # SPEC 8.1-8.2: the profile fields (read after the slots in the facts) and the slot
        # defaults, (slot name, literal, profile field) for each slot that has one.
        self.profile_names: tuple[str, ...] = tuple(f.name for f in program.profile)
        self.profile_rules: tuple[SlotRule, ...] = compile_profile_rules(program)
        self.defaults: dict[str, tuple[Any, str | None]] = {
            s.name: (s.default, s.default_profile) for s in program.slots
            if s.default is not None or s.default_profile is not None}
        self.field_count = ir.SLOT_FIELD_BASE + len(program.slots) + len(program.profile) \
            + len(ir.LATE_FIELDS)
        self.intent_names: tuple[str, ...] = tuple(i.name for i in program.intents)
        self.intent_index = {name: i for i, name in enumerate(self.intent_names)}
        node_ids = ir.node_ids(program)
        self.node_index = {node_id: i for i, node_id in enumerate(node_ids)}
        # `null` is never a closing act: a user who spoke is still there (seed 002).
        self.closing_acts = frozenset(a for a in program.closing_acts if a != _NULL_ACT)
        self.entry = program.entry
        self.language = "ko" if program.language.lower().startswith("ko") else "en"
        # SPEC 14.1: the engine sets the turn's day only for a program with dates or times
        self.uses_dates = any(s.value_type in ir.TEMPORAL_KINDS or s.items in ir.TEMPORAL_KINDS
                              for s in (*program.slots, *program.profile))
        builder = _TableBuilder(program, self.field_count, self.slot_names)
        self.slot_labels = builder.slot_labels  # SPEC 14.3: slot -> member -> label
        self.nodes: tuple[NodeTable, ...] = tuple(
            map(_UnbuiltTable, range(len(node_ids)), node_ids, repeat(builder)))
        self.globals = tuple(self._global(i, g, builder.labels)
                             for i, g in enumerate(program.global_transitions))
        self.global_sets = {route.reason: g.sets for route, g in
                            zip(self.globals, program.global_transitions) if g.sets}
        self.source_fields = SourceFields(builder, len(builder.labels))
        # SPEC 8.5: the global transitions that read `system.idle_seconds` (a pause decides
        # them, not the words: routing tries them before the fallback policy)
        idle = ir.FIELD_INDEX["system.idle_seconds"]
        self.idle_globals = tuple(route for route in self.globals
                                  if idle in condition_fields(builder.conditions[route.source]))
        # SPEC 10: category -> its rule, and the detector (the lexicon and this program's
        # patterns) that runs beside the NLU on every turn with text.
        self.safety_routes: dict[str, SafetyRoute] = {
            rule.category: SafetyRoute(rule) for rule in program.safety}
        self.safety: Detector = detector_for(program)

    def _global(self, i: int, g: ir.GlobalTransition, labels: Sequence[str]) -> GlobalRoute:
        label = labels[g.source]
        if not label:
            label = f"global:{g.name}" if g.name else f"global[{i}]"
        return GlobalRoute(compile_condition(g.condition, self.field_count), g.target,
                           g.source, label)

    def node_named(self, node_id: str) -> NodeTable | None:
        """The node table for an id, or None."""
        index = self.node_index.get(node_id)
        return None if index is None else self.nodes[index]

    def check_all(self) -> None:
        """Decode and check every node and the source map and build every node table now, so
        that no later read raises `IRError` (for whole-file checks and tests)."""
        with ir.without_cycle_collection():  # many small objects, as at load
            ir.check_all(self.program)
            for table in self.nodes:
                table.build()


def load_program(path: str | os.PathLike, verify: bool = False) -> Runtime:
    """Read, check and prepare an IR file; every failure is an `ir.IRError`. Node tables are
    built on first use; `verify` builds and checks them all now (`Runtime.check_all`)."""
    return load_program_bytes(_read(path), verify)


def load_program_bytes(data: bytes, verify: bool = False) -> Runtime:
    """`load_program` of IR bytes already read (the service keeps IR files in its store)."""
    try:
        with ir.without_cycle_collection():
            envelope, program = ir.decode_ir(data)
            runtime = Runtime(program, envelope.source_sha256, envelope.compiler_version)
            if verify:
                runtime.check_all()
            return runtime
    except IRError:
        raise
    except Exception as error:  # a foreign or hand-made file: never a traceback
        raise _inconsistent(error) from None


def _read(path: str | os.PathLike) -> bytes:
    try:
        return read_input(path)
    except InputFileError as error:
        raise IRError(f"cannot read IR file {path}: {error.reason}") from None


def _inconsistent(error: Exception) -> IRError:
    """The one line for an unexpected exception while reading a foreign or hand-made file."""
    return IRError(f"IR file is inconsistent ({type(error).__name__}: {error}); "
                   "recompile with `mgc compile`")


# --- conditions -------------------------------------------------------------------------


def compile_condition(condition: Any, field_count: int) -> Test | None:
    """A closure `facts -> bool` for an opcode tree; None (always) stays None. The tree of a
    decoded program was checked when its node was (`ir.check_condition`: at most
    `ir.MAX_CONDITION_DEPTH` levels, so this recursion is shallow, and literals of their
    field's type, so no comparison raises); a shape that cannot be compiled is an `IRError`."""
    if condition is None:
        return None
    if not isinstance(condition, (list, tuple)) or not condition:
        raise IRError(f"malformed condition {condition!r} in IR; recompile with `mgc compile`")
    op = condition[0]
    if op == ir.OP_LEAF and len(condition) in (3, 4):
        value = condition[3] if len(condition) == 4 else None
        return _leaf(condition[1], condition[2], value, field_count)
    if op == ir.OP_NOT and len(condition) == 2:
        inner = compile_condition(condition[1], field_count) or _always
        return lambda facts: not inner(facts)
    if op in (ir.OP_AND, ir.OP_OR) and len(condition) == 2 and condition[1]:
        parts = tuple(compile_condition(c, field_count) or _always for c in condition[1])
        return _all_of(parts) if op == ir.OP_AND else _any_of(parts)
    raise IRError(f"malformed condition {condition!r} in IR; recompile with `mgc compile`")


def _always(facts: list) -> bool:
    return True


def _all_of(parts: tuple[Test, ...]) -> Test:
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        a, b = parts
        return lambda facts: a(facts) and b(facts)

    def test(facts: list) -> bool:
        for part in parts:
            if not part(facts):
                return False
        return True
    return test


def _any_of(parts: tuple[Test, ...]) -> Test:
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        a, b = parts
        return lambda facts: a(facts) or b(facts)

    def test(facts: list) -> bool:
        for part in parts:
            if part(facts):
                return True
        return False
    return test


def _leaf(operator: int, i: int, v: Any, field_count: int) -> Test:
    """One comparison; null never satisfies an ordering or `contains`."""
    if not (isinstance(i, int) and 0 <= i < field_count):
        raise IRError(f"condition reads unknown field index {i!r}; recompile with `mgc compile`")
    name = ir.OPERATORS[operator] if isinstance(operator, int) and 0 <= operator < len(
        ir.OPERATORS) else None
    if v == ir.TODAY:  # SPEC 14.1: "today" is the day of the turn, read when compared
        return _against_today(name, i)
    if name == "equals":
        return (lambda f: f[i] is None) if v is None else (lambda f: f[i] == v)
    if name == "not_equals":
        return (lambda f: f[i] is not None) if v is None else (lambda f: f[i] != v)
    if name in ("in", "not_in"):
        members = _members(v)
        if name == "in":
            return lambda f: f[i] in members
        return lambda f: f[i] not in members
    if name == "greater_than":
        return lambda f: (x := f[i]) is not None and x > v
    if name == "greater_or_equal":
        return lambda f: (x := f[i]) is not None and x >= v
    if name == "less_than":
        return lambda f: (x := f[i]) is not None and x < v
    if name == "less_or_equal":
        return lambda f: (x := f[i]) is not None and x <= v
    if name == "is_empty":  # a list slot is never stored empty; `[]` is there for safety
        return lambda f: (x := f[i]) is None or x == "" or x == []
    if name == "is_not_empty":
        return lambda f: (x := f[i]) is not None and x != "" and x != []
    if name == "contains":
        return lambda f: (x := f[i]) is not None and v in x
    raise IRError(f"condition uses unknown operator {operator!r}; recompile with `mgc compile`")


def _against_today(name: str | None, i: int) -> Test:
    """A date field compared with the day of the turn (`dates.today`)."""
    from .understanding.dates import today  # only scenarios whose conditions read "today"

    compare = _TODAY_COMPARISONS.get(name)
    if compare is None:
        raise IRError(f"condition compares with today using {name!r}; recompile with `mgc compile`")
    if name == "not_equals":  # null is not today
        return lambda f: f[i] != today().isoformat()
    return lambda f: (x := f[i]) is not None and compare(x, today().isoformat())


_TODAY_COMPARISONS: dict[str | None, Callable[[Any, str], bool]] = {
    "equals": lambda x, t: x == t, "not_equals": lambda x, t: x is not None and x != t,
    "greater_than": lambda x, t: x > t, "greater_or_equal": lambda x, t: x >= t,
    "less_than": lambda x, t: x < t, "less_or_equal": lambda x, t: x <= t}


def _members(values: Any):
    if not isinstance(values, (list, tuple)):
        raise IRError(f"`in` needs a list, got {values!r}; recompile with `mgc compile`")
    try:
        return frozenset(values)
    except TypeError:  # unhashable literals (never emitted by mgc, but stay correct)
        return tuple(values)


def condition_fields(condition: Any) -> tuple[int, ...]:
    """Field indices an opcode tree reads, in order of first appearance (for traces)."""
    seen: list[int] = []

    def walk(c: Any) -> None:
        if not c:
            return
        if c[0] == ir.OP_LEAF:
            if c[2] not in seen:
                seen.append(c[2])
        elif c[0] == ir.OP_NOT:
            walk(c[1])
        else:
            for item in c[1]:
                walk(item)
    walk(condition)
    return tuple(seen)


# --- display (traces) --------------------------------------------------------------------


def display_value(runtime: Runtime, field: int, value: Any) -> str:
    """A fact or literal as the designer wrote it: names for interned enums, JSON otherwise."""
    if value is None:
        return "null"
    domain = ir.FIXED_FIELDS[field][2] if field < ir.SLOT_FIELD_BASE else None
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(display_value(runtime, field, v) for v in value) + "]"
    if value == ir.TODAY:
        return '"today"'
    if domain == "intents" and isinstance(value, int):
        value = runtime.intent_names[value] if 0 <= value < len(runtime.intent_names) else value
    elif domain == "acts" and isinstance(value, int):
        value = ir.ACTS[value] if 0 <= value < len(ir.ACTS) else value
    elif domain == "nodes" and isinstance(value, int):
        value = runtime.nodes[value].id if 0 <= value < len(runtime.nodes) else value
    return to_json(value)


def to_json(value: Any) -> str:
    """Compact JSON with the scenario's own script kept readable (Korean stays Korean), for
    traces and prompts."""
    import json  # traces and prompts only: not imported at start-up

    return json.dumps(value, ensure_ascii=False, default=str)
