"""Emitter: the checked model and its analysis become an IR `Program`, then bytes.

In: a `Model` and `Analysis` with no errors. Out: `ir.Program` with names interned, each
condition compiled to opcode lists with resolved field indices, the executor kind, gates and
ordered transition table of every node, the global table, end-node flags, the safety rules
and patterns (SPEC 10) and a source map.
Determinism: everything is emitted in source order, so the same scenario gives the same bytes.
"""

from __future__ import annotations

import hashlib

import msgspec

from interpreter import ir
from interpreter.slots import SlotRule, check_value

from . import __version__
from .condition_ast import NO_VALUE, And, Condition, Leaf, Not
from .resolve import CheckedTransition, Model
from .skilldecls import declarations
from .slotdefs import build_slot
from .analysis import Analysis
from .schema import NodeDef, Scenario



class _Interner:
    """Name -> index tables of one program, used when compiling condition values."""

    def __init__(self, model: Model):
        scenario = model.scenario
        self.nodes = {node_id: i for i, node_id in enumerate(model.node_ids)}
        self.slots = {name: i for i, name in enumerate(scenario.slots)}
        self.profile = {name: i for i, name in enumerate(scenario.profile)}
        self.intents = {name: i for i, name in enumerate(scenario.intents)}
        self.acts = {name: i for i, name in enumerate(ir.ACTS)}
        self.domains = {"nodes": self.nodes, "intents": self.intents, "acts": self.acts}

    def field(self, name: str) -> int:
        if name.startswith("slots."):
            return ir.SLOT_FIELD_BASE + self.slots[name[len("slots."):]]
        if name.startswith("profile."):  # after the slots (SPEC 8.1)
            return ir.SLOT_FIELD_BASE + len(self.slots) + self.profile[name[len("profile."):]]
        if name in ir.LATE_FIELD_INDEX:  # after the profile (format 7)
            return ir.late_field_index(name, len(self.slots), len(self.profile))
        return ir.FIELD_INDEX[name]

    def value(self, field_name: str, value):
        index = ir.FIELD_INDEX.get(field_name)
        domain = ir.FIXED_FIELDS[index][2] if index is not None else None
        table = self.domains.get(domain)
        if table is None or value is NO_VALUE:
            return None if value is NO_VALUE else value
        if isinstance(value, list):
            return [self._intern(table, v) for v in value]
        return self._intern(table, value)

    @staticmethod
    def _intern(table: dict, value):
        return None if value is None else table[value]


def compile_condition(condition: Condition | None, names: _Interner):
    """Opcode lists for a checked condition (None stays None: always true)."""
    if condition is None:
        return None
    if isinstance(condition, Leaf):
        operator = ir.OPERATORS.index(condition.operator)
        return [ir.OP_LEAF, operator, names.field(condition.field),
                names.value(condition.field, condition.value)]
    if isinstance(condition, Not):
        return [ir.OP_NOT, compile_condition(condition.item, names)]
    op = ir.OP_AND if isinstance(condition, And) else ir.OP_OR
    return [op, [compile_condition(item, names) for item in condition.items]]


def build_program(model: Model, analysis: Analysis) -> ir.Program:
    scenario = model.scenario
    names = _Interner(model)
    source_map: list[ir.SourceEntry] = []

    def transition_row(t: CheckedTransition) -> tuple[int, object, int]:
        source_map.append(ir.SourceEntry(t.pointer, t.label, t.display))
        target = ir.STAY if t.target is None else names.nodes[t.target]
        return target, compile_condition(t.condition, names), len(source_map) - 1

    nodes = []
    for checked in model.nodes:
        rows = [ir.Transition(*transition_row(t), slot_sets(t.sets, names))
                for t in checked.transitions]
        node = build_node(checked.node, rows, analysis, names, scenario)
        if checked.on_enter:
            node = msgspec.structs.replace(node, on_enter=slot_sets(checked.on_enter, names))
        if checked.lines:
            node = msgspec.structs.replace(node, lines=compiled_lines(checked.lines, names))
        if checked.skill_lines:  # SPEC 17.21: sent in the argument's place
            node = msgspec.structs.replace(node, skill_lines=compiled_lines(
                checked.skill_lines, names), skill_args={
                    arg: value for arg, value in node.skill_args.items()
                    if arg not in checked.skill_lines})
        nodes.append(node)
    globals_ = [ir.GlobalTransition(t.name, *transition_row(t), slot_sets(t.sets, names))
                for t in model.global_transitions]
    safety = []
    for rule in model.safety:  # SPEC 10: its source entry says `safety:CATEGORY`
        target, _, source = transition_row(rule)
        safety.append(ir.SafetyRule(rule.label.partition(":")[2], target, source, rule.name))
    safety_patterns = [ir.SafetyPattern(p.category, p.pattern, p.negatable) for p in scenario.safety.patterns]
    return ir.Program(
        name=scenario.metadata.name, language=scenario.metadata.language,
        version=scenario.metadata.version, description=scenario.metadata.description,
        prompt_bot=scenario.prompts.bot, prompt_nlu=scenario.prompts.nlu,
        entry=names.nodes[scenario.graph.entry], bot_first=scenario.graph.bot_first,
        closing_acts=closing_acts(scenario), nodes=nodes, global_transitions=globals_,
        slots=[normalized(build_slot(name, slot)) for name, slot in scenario.slots.items()],
        profile=[build_slot(name, field) for name, field in scenario.profile.items()],
        intents=[ir.Intent(name, i.description, list(i.examples), list(i.patterns), i.threshold)
                 for name, i in scenario.intents.items()],
        source_map=source_map, safety=safety, safety_patterns=safety_patterns,
        skills=declarations(scenario),
        date_order=scenario.metadata.date_order or "", timezone=scenario.metadata.timezone,
    )


def compiled_lines(checked: dict, names: _Interner) -> dict[str, ir.Lines]:
    """Checked conditional lines (key -> (join, [(texts, condition), ...])) as IR records."""
    return {key: ir.Lines([ir.Line(texts, compile_condition(when, names))
                           for texts, when in lines], joined)
            for key, (joined, lines) in checked.items()}


def slot_sets(sets: list, names: _Interner) -> list[ir.SlotSet]:
    """Checked `set` assignments with slot names interned (a copy names its source slot)."""
    return [ir.SlotSet(names.slots[slot], kind,
                       names.slots[value] if kind == ir.SET_COPY else value)
            for slot, kind, value in sets]


def closing_acts(scenario: Scenario) -> list[int]:
    acts = []
    for act in scenario.graph.closing_acts:
        index = ir.ACTS.index("deny" if act == "negate" else act)
        if index not in acts:
            acts.append(index)
    return acts


def executor_kind(node: NodeDef) -> int:
    if node.params.skill is not None:
        return ir.EXECUTOR_SKILL
    if node.collect_slots:
        return ir.EXECUTOR_TASK
    return ir.EXECUTOR_GENERAL


def build_node(node: NodeDef, rows: list, analysis: Analysis, names: _Interner,
               scenario: Scenario) -> ir.Node:
    params = node.params
    collect = [names.slots[s] for s in node.collect_slots]
    required = [names.slots[s] for s in node.collect_slots if scenario.slots[s].policy == "required"]
    responses = {kind: variants(getattr(node.responses, kind)) for kind in ir.RESPONSE_KINDS
                 if isinstance(getattr(node.responses, kind), (str, list))}
    return ir.Node(
        id=node.id, name=node.name or node.id, description=node.description,
        executor=executor_kind(node), end=analysis.end_kind.get(node.id, ir.END_NONE),
        responses=responses, collect_slots=collect, required_slots=required, transitions=rows,
        max_turns=params.max_turns, min_turns=params.min_turns,
        max_fallback_retries=params.max_fallback_retries,
        turn_limit_enabled=params.turn_limit_enabled, skill=params.skill,
        skill_args=dict(params.skill_args), fallback=params.fallback, timeout_ms=params.timeout_ms,
        transient=node.transient, skip_if_filled=params.skip_if_filled,
        clear_slots=cleared_slots(params.clear_slots, names), expects=params.expects,
    )


def variants(response: str | list[str]) -> list[str]:
    """A response as the IR holds it: its variants, a plain string being a list of one."""
    return [response] if isinstance(response, str) else list(response)


def cleared_slots(cleared, names: _Interner) -> list[int]:
    """`params.clear_slots` as slot indices ("all": every slot)."""
    if cleared == "all":
        return list(range(len(names.slots)))
    return [names.slots[name] for name in cleared]


def normalized(slot: ir.Slot) -> ir.Slot:
    """The slot with its literal default as the runtime stores it (`"3"` -> 3, one item ->
    a list); resolve has checked that it is valid."""
    if slot.default is None:
        return slot
    _, value, _ = check_value(SlotRule(0, slot), slot.default)
    return msgspec.structs.replace(slot, default=value)


def source_hash(scenario: Scenario) -> str:
    """SHA-256 of the canonical source: the decoded scenario re-encoded, so layout does not count."""
    return hashlib.sha256(msgspec.json.encode(scenario)).hexdigest()


def emit(model: Model, analysis: Analysis) -> bytes:
    program = build_program(model, analysis)
    return ir.encode_ir(program, __version__, source_hash(model.scenario))
