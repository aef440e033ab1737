"""A tiny builder of `ir.Program`s for interpreter tests (no compiler needed).

    b = ProgramBuilder()
    b.slot("meal_status", "enum", values=["adequate", "skipped"])
    b.intent("user_wants_to_end")
    b.node("meal", collect=["meal_status"]).to("support", eq("slots.meal_status", "skipped")) \
        .default("health")
    b.node("support"); b.node("health")
    b.global_("support", eq("nlu.intent", "user_wants_to_end"), name="end")
    b.safety("self_harm", "support")           # graph.safety; b.safety_pattern("abuse", "...")
    runtime = b.runtime()

Conditions are written with names (`eq`, `ne`, `gt`, `ge`, `lt`, `le`, `isin`, `notin`,
`empty`, `filled`, `contains`, `all_`, `any_`, `not_`) and interned at `build()` exactly as
the compiler does: intents, acts and node ids become indices, slot values stay as written.
A response is a string or a list of variants (`responses={"default": ["A", "B"]}`).
End nodes are inferred like the compiler's graph analysis: `terminal=True` is explicit,
no outgoing target (next_nodes targets or default_next; `stay` makes no edge) is inferred.

Hand-made files (a valid checksum over any contents): `body_tree(program)` is the body as
plain data to change at will, `forge(tree)` the IR bytes of such a tree.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from typing import Any

import msgspec

from compiler.condition_ast import NO_VALUE, And, Leaf, Not
from interpreter import ir
from interpreter.loader import Runtime
from interpreter.understanding.nlu import NLUResult

_SYMBOLS = {"equals": "==", "not_equals": "!=", "greater_than": ">", "greater_or_equal": ">=",
            "less_than": "<", "less_or_equal": "<=", "in": "in", "not_in": "not in",
            "contains": "contains"}


def variants(responses: dict) -> dict[str, list[str]]:
    """Responses as the IR holds them (SPEC 9): a plain string is a list of one variant."""
    return {kind: [text] if isinstance(text, str) else list(text)
            for kind, text in responses.items()}


def leaf(field: str, operator: str, value: Any = None) -> tuple:
    return ("leaf", field, operator, value)


def eq(field, value): return leaf(field, "equals", value)
def ne(field, value): return leaf(field, "not_equals", value)
def gt(field, value): return leaf(field, "greater_than", value)
def ge(field, value): return leaf(field, "greater_or_equal", value)
def lt(field, value): return leaf(field, "less_than", value)
def le(field, value): return leaf(field, "less_or_equal", value)
def isin(field, values): return leaf(field, "in", list(values))
def notin(field, values): return leaf(field, "not_in", list(values))
def empty(field): return leaf(field, "is_empty")
def filled(field): return leaf(field, "is_not_empty")
def contains(field, text): return leaf(field, "contains", text)
def all_(*items): return ("and", list(items))
def any_(*items): return ("or", list(items))
def not_(item): return ("not", item)


class NodeSpec:
    """A node being built; `to`, `stay` and `default` add rows in order."""

    def __init__(self, node_id: str, **fields: Any):
        self.id = node_id
        self.fields = fields
        self.rows: list[tuple[str | None, Any]] = []  # (target or None for stay, condition)
        self.default_next: str | None = None

    def to(self, target: str, condition: Any = None) -> NodeSpec:
        self.rows.append((target, condition))
        return self

    def stay(self, condition: Any = None) -> NodeSpec:
        self.rows.append((None, condition))
        return self

    def default(self, target: str) -> NodeSpec:
        self.default_next = target
        return self


class ProgramBuilder:
    """Collects slots, intents, nodes and globals; `build()` interns them into a Program."""

    def __init__(self, name: str = "test", language: str = "ko", bot_first: bool = True,
                 closing_acts: list[str] | None = None, entry: str | None = None):
        self.name, self.language, self.bot_first = name, language, bot_first
        self.closing_acts = list(ir.DEFAULT_CLOSING_ACTS) if closing_acts is None \
            else closing_acts
        self.entry = entry
        self.slots: list[ir.Slot] = []
        self.intents: list[str] = []
        self.nodes: list[NodeSpec] = []
        self.globals: list[tuple[str | None, str, Any]] = []
        self.safety_rules: list[tuple[str, str, str | None]] = []
        self.safety_patterns: list[ir.SafetyPattern] = []

    def slot(self, name: str, value_type: str = "string", required: bool = False,
             **fields: Any) -> ProgramBuilder:
        self.slots.append(ir.Slot(name=name, value_type=value_type, required=required,
                                  **fields))
        return self

    def intent(self, *names: str) -> ProgramBuilder:
        self.intents.extend(names)
        return self

    def node(self, node_id: str, **fields: Any) -> NodeSpec:
        spec = NodeSpec(node_id, **fields)
        self.nodes.append(spec)
        return spec

    def global_(self, target: str, condition: Any, name: str | None = None) -> ProgramBuilder:
        self.globals.append((name, target, condition))
        return self

    def safety(self, category: str, target: str, name: str | None = None) -> ProgramBuilder:
        """A `graph.safety` rule (SPEC 10)."""
        self.safety_rules.append((category, target, name))
        return self

    def safety_pattern(self, category: str, pattern: str) -> ProgramBuilder:
        """A `safety.patterns` entry."""
        self.safety_patterns.append(ir.SafetyPattern(category, pattern))
        return self

    def runtime(self) -> Runtime:
        return Runtime(self.build())

    # --- interning ---------------------------------------------------------------------

    def build(self) -> ir.Program:
        self._node_ix = {n.id: i for i, n in enumerate(self.nodes)}
        self._slot_ix = {s.name: i for i, s in enumerate(self.slots)}
        self._intent_ix = {name: i for i, name in enumerate(self.intents)}
        self._sources: list[ir.SourceEntry] = []
        nodes = [self._node(k, spec) for k, spec in enumerate(self.nodes)]
        globals_ = []
        for i, (name, target, condition) in enumerate(self.globals):
            label = f"global:{name}" if name else f"global[{i}]"
            source = self._source(f"/graph/global_transitions/{i}", label, condition)
            globals_.append(ir.GlobalTransition(name, self._node_ix[target],
                                                self._condition(condition), source))
        safety = []
        for i, (category, target, name) in enumerate(self.safety_rules):
            self._sources.append(ir.SourceEntry(f"/graph/safety/{i}", f"safety:{category}",
                                                f'nlu.safety == "{category}"'))
            safety.append(ir.SafetyRule(category, self._node_ix[target], len(self._sources) - 1,
                                        name))
        return ir.Program(
            safety=safety, safety_patterns=list(self.safety_patterns),
            name=self.name, language=self.language, version="1.0.0", description="",
            prompt_bot="", prompt_nlu="", entry=self._node_ix[self.entry or self.nodes[0].id],
            bot_first=self.bot_first,
            closing_acts=[ir.ACTS.index(a) for a in self.closing_acts], nodes=nodes,
            global_transitions=globals_, slots=self.slots,
            intents=[ir.Intent(name) for name in self.intents], source_map=self._sources)

    def _node(self, k: int, spec: NodeSpec) -> ir.Node:
        fields = dict(spec.fields)
        collect = [self._slot_ix[s] for s in fields.pop("collect", [])]
        terminal = fields.pop("terminal", False)
        rows = []
        for i, (target, condition) in enumerate(spec.rows):
            source = self._source(f"/graph/nodes/{k}/next_nodes/{i}", f"next_nodes[{i}]",
                                  condition)
            rows.append(ir.Transition(ir.STAY if target is None else self._node_ix[target],
                                      self._condition(condition), source))
        if spec.default_next is not None:
            source = self._source(f"/graph/nodes/{k}/default_next", "default_next", None)
            rows.append(ir.Transition(self._node_ix[spec.default_next], None, source))
        has_edge = any(t is not None for t, _ in spec.rows) or spec.default_next is not None
        end = ir.END_EXPLICIT if terminal else ir.END_NONE if has_edge else ir.END_INFERRED
        executor = ir.EXECUTOR_SKILL if fields.get("skill") else \
            ir.EXECUTOR_TASK if collect else ir.EXECUTOR_GENERAL
        return ir.Node(
            id=spec.id, name=fields.pop("name", spec.id),
            description=fields.pop("description", spec.id), executor=executor, end=end,
            responses=variants(fields.pop("responses", {})), collect_slots=collect,
            required_slots=[i for i in collect if self.slots[i].required], transitions=rows,
            **fields)

    def _source(self, pointer: str, label: str, condition: Any) -> int:
        display = self._display(condition) if condition is not None else ""
        self._sources.append(ir.SourceEntry(pointer, label, display))
        return len(self._sources) - 1

    def _field(self, name: str) -> int:
        if name.startswith("slots."):
            return ir.SLOT_FIELD_BASE + self._slot_ix[name[len("slots."):]]
        return ir.FIELD_INDEX[name]

    def _value(self, field: str, value: Any) -> Any:
        index = ir.FIELD_INDEX.get(field)
        domain = ir.FIXED_FIELDS[index][2] if index is not None else None
        table = {"intents": self._intent_ix, "nodes": self._node_ix,
                 "acts": {a: i for i, a in enumerate(ir.ACTS)}}.get(domain)
        if table is None or value is None:
            return value
        if isinstance(value, list):
            return [table[v] for v in value]
        return table[value]

    def _condition(self, c: Any) -> Any:
        if c is None:
            return None
        if c[0] == "leaf":
            _, field, operator, value = c
            return [ir.OP_LEAF, ir.OPERATORS.index(operator), self._field(field),
                    self._value(field, value)]
        if c[0] == "not":
            return [ir.OP_NOT, self._condition(c[1])]
        return [ir.OP_AND if c[0] == "and" else ir.OP_OR, [self._condition(i) for i in c[1]]]

    def _display(self, c: Any) -> str:
        if c[0] == "leaf":
            _, field, operator, value = c
            if operator == "is_empty":
                return f"{field} is empty"
            if operator == "is_not_empty":
                return f"{field} is not empty"
            return f"{field} {_SYMBOLS[operator]} {json.dumps(value, ensure_ascii=False)}"
        if c[0] == "not":
            return f"not ({self._display(c[1])})"
        joiner = " and " if c[0] == "and" else " or "
        return joiner.join(f"({self._display(i)})" if i[0] in ("and", "or") else
                           self._display(i) for i in c[1])


def nlu(act: str | None = None, intent: str | None = None, text: str = "말했어요",
        confidence: float = 1.0, **slots: Any) -> NLUResult:
    """An NLU result for a spoken turn (non-empty text unless given)."""
    return NLUResult(intent=intent, dialogue_act=act, slots=slots, confidence=confidence,
                     text=text)


SILENT = NLUResult(dialogue_act="silence", text="")


def senimate_like() -> ProgramBuilder:
    """A six-node Korean scenario shaped like the seeds' SeniMate (for engine tests, benches)."""
    b = ProgramBuilder(name="senimate_like")
    b.slot("daily_life", "string", description="일상")
    b.slot("meal_status", "enum", values=["adequate", "skipped"], description="식사 상태",
           question="오늘 식사는 잘 챙겨 드셨어요?")
    b.slot("health_status", "enum", values=["good", "complaint"], description="건강 상태")
    b.intent("user_wants_to_end")
    b.node("greeting", responses={"default": "안녕하세요, 저는 마고예요. 오늘 이야기 나눌 수 있을까요?"}) \
        .stay(eq("system.node_turns", 1)).default("daily")
    b.node("daily", collect=["daily_life"], min_turns=2,
           responses={"default": "요즘 어떻게 지내세요?"}).default("meal")
    b.node("meal", collect=["meal_status"],
           responses={"default": "오늘 식사는 잘 챙겨 드셨어요?"}).default("health")
    b.node("health", collect=["health_status"],
           responses={"default": "요즘 몸은 좀 어떠세요?"}).default("general")
    b.node("general", max_turns=6, responses={"default": "더 하고 싶은 이야기 있으세요?"}) \
        .to("closure", eq("nlu.intent", "user_wants_to_end")).stay()
    closure = b.node("closure", terminal=True, max_turns=2, max_fallback_retries=0,
                     responses={"default": "오늘 이야기 나눠주셔서 감사해요. 다음에 또 뵐게요.",
                                "complete": "네, 편안한 하루 보내세요."})
    resume = eq("system.conversation_resuming", True)
    closure.to("daily", all_(resume, empty("slots.daily_life"))) \
        .to("meal", all_(resume, empty("slots.meal_status"))) \
        .to("general", resume)
    b.global_("closure", eq("nlu.intent", "user_wants_to_end"), name="user_wants_to_end")
    b.global_("closure", all_(eq("nlu.dialogue_act", "silence"), gt("system.no_input_count", 2)),
              name="silent_close")
    return b


def object_form(condition) -> dict:
    """The object form (`field`/`operator`/`value`, `and`/`or`/`not`) of a condition AST: the
    inverse of the compiler's lowering, written independently of it."""
    if isinstance(condition, Leaf):
        raw = {"field": condition.field, "operator": condition.operator}
        if condition.value is not NO_VALUE:
            raw["value"] = condition.value
        return raw
    if isinstance(condition, Not):
        return {"not": object_form(condition.item)}
    return {"and" if isinstance(condition, And) else "or":
            [object_form(item) for item in condition.items]}


# --- hand-made files ------------------------------------------------------------------------
# A hand-made IR file is one whose checksum holds while its contents are anything at all: what
# a tool other than mgc, or a person with a MessagePack editor, could write. A node blob and
# the source texts are MessagePack values inside the body (`msgspec.Raw`), so the body reads
# back as plain data with them in place.

BODY_FIELDS = tuple(f.name for f in msgspec.structs.fields(ir.Body))


def body_tree(program: ir.Program) -> dict[str, Any]:
    """`program`'s body as plain lists, dicts and scalars, by `ir.Body` field name."""
    return dict(zip(BODY_FIELDS, msgspec.msgpack.decode(ir.encode_body(program))))


def forge(tree: dict[str, Any], recursion_limit: int = 10_000) -> bytes:
    """IR bytes holding `tree` (from `body_tree`, changed at will; a missing field is left
    out) under a valid checksum. A tree deeper than the default recursion limit allows is
    encoded under `recursion_limit`."""
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, recursion_limit))
    try:
        body = msgspec.msgpack.encode([tree[name] for name in BODY_FIELDS if name in tree])
    finally:
        sys.setrecursionlimit(old_limit)
    envelope = ir.Envelope("test", "0" * 64, hashlib.sha256(body).hexdigest(), body)
    return struct.pack(">4sH", ir.MAGIC, ir.FORMAT_VERSION) + msgspec.msgpack.encode(envelope)


def position(record: type, field: str) -> int:
    """Where `field` of an IR record (`ir.Node`, `ir.Transition`, ...) sits in its encoded
    array (records are encoded as arrays, fields in declaration order)."""
    return [f.name for f in msgspec.structs.fields(record)].index(field)
