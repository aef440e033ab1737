"""Resolver: names to definitions, and the per-element checks of SPEC section 3 (E1xx, E2xx).

In: a decoded `Scenario` (parts may be damaged, already reported by the schema pass).
Out: a `Model`: the nodes with unique ids in source order, each with its ordered transition
table (`next_nodes`, then `default_next`) whose targets are resolved and whose conditions are
lowered and type-checked, the global transitions likewise, and which slots and intents are
used (for W405), and the `graph.safety` rules (SPEC 10: E110 for an unknown or repeated
category, E103 for an unknown target; `safety.patterns` categories E110, their regexes E012
like intent patterns), and each node's response variants (SPEC 9: E111 for an empty list,
an empty variant or one repeated), and the placeholders of every text (`texts`: E105, E112). Every problem is
reported once: a node id rejected by the schema (not an identifier) is kept as written, so a reference to it is not reported again as unknown; with
no nodes at all (reported by the schema) targets and the entry are not checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from interpreter import patterns
from interpreter.ir import name_problem
from interpreter.ir import (ACTS, INT_MAX, INT_MIN, RESPONSE_KINDS, SAFETY_CATEGORIES,
                            SAFETY_REASON, fits_int64)

from .condition_ast import Condition, Leaf, leaves
from .conditions import lower_condition, print_condition
from .diagnostics import Diagnostics, Names, did_you_mean, join
from .skilldecls import check_skills
from .slotdefs import check_slots
from .schema import ABSENT, STAY_SENTINEL, NodeDef, Scenario
from .groups import check_groups, group_routes
from .lines import check_argument_lines, check_lines
from .sets import check_sets
from .texts import check_node_texts, check_questions
from .typecheck import UNKNOWN, ConditionEnv, SlotType, check_condition

MAX_ARGS_DEPTH = 32  # skill arguments are configuration, not data


@dataclass
class CheckedTransition:
    """One routing rule with its target resolved and its condition checked."""

    pointer: str
    label: str  # reason label: next_nodes[i], default_next, global:NAME, global[i]
    target: str | None  # None for `action: stay`
    condition: Condition | None  # None: unconditional
    condition_ok: bool = True  # False: the condition had an error (treated as unknown)
    name: str | None = None  # global transitions only
    display: str = ""  # the condition in expression syntax ("" when unconditional)
    key: bytes | None = None  # the condition as written, canonically encoded: equal keys, equal conditions
    sets: list = field(default_factory=list)  # (slot, kind, value): `set` (SPEC 14.5, `sets`)


@dataclass
class CheckedNode:
    index: int  # position in graph.nodes
    pointer: str
    node: NodeDef
    transitions: list[CheckedTransition] = field(default_factory=list)
    on_enter: list = field(default_factory=list)  # (slot, kind, value) of `on_enter.set`
    lines: dict = field(default_factory=dict)  # kind -> conditional lines (`lines`)
    skill_lines: dict = field(default_factory=dict)  # skill argument -> its lines (`lines`)


@dataclass
class Model:
    scenario: Scenario
    nodes: list[CheckedNode]
    global_transitions: list[CheckedTransition]
    used_slots: set[str] = field(default_factory=set)
    used_intents: set[str] = field(default_factory=set)
    printed: dict[bytes, str] = field(default_factory=dict)  # key -> display: scenarios repeat conditions
    # `graph.safety` (SPEC 10): one rule per category, label `safety:CATEGORY`, its condition
    # the leaf `nlu.safety == CATEGORY` (what the safety tier tests, first, at every node).
    safety: list[CheckedTransition] = field(default_factory=list)

    @property
    def node_ids(self) -> list[str]:
        return [n.node.id for n in self.nodes]


def resolve(scenario: Scenario, diags: Diagnostics) -> Model:
    """Check references, definitions and conditions; build the `Model`."""
    check_slots(scenario, diags)
    check_intents(scenario, diags)
    if scenario.graph is None:  # missing or not an object: reported by the schema pass
        return Model(scenario, [], [])
    nodes = unique_nodes(scenario, diags)
    model = Model(scenario, nodes, [])
    env = condition_env(scenario, [n.node.id for n in nodes])
    ids = env.names("nodes")
    check_questions(scenario, env.names("slots"), Names(env.profile), model.used_slots, diags)
    check_graph_header(scenario, ids, diags)
    fed = skill_fed_nodes(scenario)
    groups = check_groups(scenario, model, env, ids, diags)
    for checked in nodes:
        check_node(checked, model, env, ids, diags, checked.node.id in fed, groups)
    for i, raw in enumerate(scenario.graph.global_transitions):
        path = join("/graph/global_transitions", i)
        label = f"global:{raw.name}" if raw.name else f"global[{i}]"
        target = resolve_target(raw.target, join(path, "target"), ids, diags)
        transition = CheckedTransition(path, label, target, None, name=raw.name)
        transition.sets = check_sets(raw.set, join(path, "set"), scenario.slots,
                                     model.used_slots, diags)
        attach_condition(transition, raw.condition, join(path, "condition"), model, env, diags)
        if target is not None:
            model.global_transitions.append(transition)
    model.safety = check_safety(scenario, ids, diags)
    check_skills(scenario, diags)
    return model


SAFETY_HINT = "safety categories: " + ", ".join(SAFETY_CATEGORIES)


def check_safety(scenario: Scenario, ids: Names, diags: Diagnostics) -> list[CheckedTransition]:
    """`graph.safety` (E110 for an unknown or repeated category, E103 for an unknown target)
    and the categories of `safety.patterns` (E110); the patterns themselves are checked with
    the intent patterns (E012)."""
    rules, seen = [], {}
    categories = Names(SAFETY_CATEGORIES)
    for i, raw in enumerate(scenario.graph.safety):
        path = join("/graph/safety", i)
        if raw is None:
            continue
        category = raw.category
        known = known_category(category, join(path, "category"), categories, diags)
        if known and category in seen:
            diags.report("E110", f"safety category '{category}' is declared twice",
                         join(path, "category"),
                         hint=f"first declared at {seen[category]}; keep one rule per category")
            known = False
        if known:
            seen[category] = path
        target = resolve_target(raw.target, join(path, "target"), ids, diags)
        if known and target is not None:
            rule = CheckedTransition(path, SAFETY_REASON + category, target,
                                     Leaf("nlu.safety", "equals", category), name=raw.name,
                                     display=f'nlu.safety == "{category}"')
            rules.append(rule)
    safety = scenario.safety
    for i, item in enumerate(safety.patterns if safety is not None else ()):
        if item is not None:
            known_category(item.category, join("/safety/patterns", i, "category"), categories,
                           diags)
    return rules


def known_category(category, path: str, categories: Names, diags: Diagnostics) -> bool:
    """Whether `category` is a safety category; E110 with a did-you-mean when it is not."""
    if not isinstance(category, str) or path in diags.rejected:
        return False  # not text: reported by the schema pass
    if category in categories:
        return True
    diags.report("E110", f"unknown safety category '{category}'", path,
                 hint=did_you_mean(category, categories) or SAFETY_HINT)
    return False


def unique_nodes(scenario: Scenario, diags: Diagnostics) -> list[CheckedNode]:
    seen: dict[str, str] = {}
    nodes = []
    for i, node in enumerate(scenario.graph.nodes or ()):
        path = join("/graph/nodes", i)
        if node is None or not isinstance(node.id, str):
            continue
        if node.id in seen:
            diags.report("E101", f"duplicate node id '{node.id}'", join(path, "id"),
                         hint=f"first defined at {seen[node.id]}; rename one of them")
            continue
        seen[node.id] = path
        nodes.append(CheckedNode(i, path, node))
    return nodes


def condition_env(scenario: Scenario, node_ids: list[str]) -> ConditionEnv:
    slots = {name: slot_type(slot) for name, slot in scenario.slots.items()}
    profile = {name: slot_type(item) for name, item in scenario.profile.items()}
    return ConditionEnv(tuple(scenario.intents), tuple(node_ids), slots, profile)


def slot_type(slot) -> SlotType:
    """A slot (or profile field) as conditions see it; UNKNOWN when the schema rejected it."""
    if slot.value_type is None or slot.values is None:  # rejected by the schema pass
        return SlotType(UNKNOWN)
    values = tuple(slot.values) if isinstance(slot.values, list) else ()
    return SlotType(slot.value_type, values, getattr(slot, "items", None))


def check_graph_header(scenario: Scenario, ids: Names, diags: Diagnostics) -> None:
    entry = scenario.graph.entry
    if isinstance(entry, str) and ids and entry not in ids:
        diags.report("E102", f"graph.entry '{entry}' does not name a node", "/graph/entry",
                     hint=did_you_mean(entry, ids) or "set it to the id of the first node")
    for i, act in enumerate(scenario.graph.closing_acts):
        normal = "deny" if act == "negate" else act
        if normal not in ACTS:
            diags.report("E012", f"'{act}' is not a dialogue act", join("/graph/closing_acts", i),
                         hint=did_you_mean(act, ACTS) or f"acts: {', '.join(ACTS)}")


def skill_fed_nodes(scenario: Scenario) -> set[str]:
    """Nodes where a skill result is readable though they run no skill: where a transient
    node with a skill leads, through transient nodes without one (SPEC 8.3: the result of the
    last transient node that ran a skill stays readable where the chain stops)."""
    by_id = {n.id: n for n in scenario.graph.nodes or () if n is not None}
    fed: set[str] = set()
    todo = [n for n in by_id.values() if n.transient and n.params is not None and n.params.skill]
    while todo:
        node = todo.pop()
        for target in node_targets(node):
            entered = by_id.get(target)
            if entered is None or target in fed:
                continue
            fed.add(target)
            if entered.transient and entered.params is not None and not entered.params.skill:
                todo.append(entered)
    return fed


def node_targets(node: NodeDef) -> list[str]:
    """The node ids a node's own transitions name (written, not yet resolved)."""
    targets = [t.target for t in node.next_nodes if t is not None and isinstance(t.target, str)]
    if isinstance(node.default_next, str):
        targets.append(node.default_next)
    elif node.default_next is not None and isinstance(node.default_next.target, str):
        targets.append(node.default_next.target)
    return targets


def check_node(checked: CheckedNode, model: Model, env: ConditionEnv, ids: Names,
               diags: Diagnostics, skill_fed: bool = False, groups: dict | None = None) -> None:
    node, path = checked.node, checked.pointer
    slots = env.names("slots")
    for j, name in enumerate(node.collect_slots):
        if name in slots:
            model.used_slots.add(name)
        else:  # the path is built only for a report
            report_undeclared_slot(name, join(path, "collect_slots", j), slots, diags)
    if node.params is not None:  # None: not an object, reported by the schema pass
        check_params(node, path, diags)
        check_cleared(node, path, model, slots, diags)
        checked.skill_lines = check_argument_lines(node, path, model, env, diags)
    if node.responses is not None:
        check_variants(node, path, diags)
        checked.lines = check_lines(node, path, model, env, diags)
    if node.responses is not None and node.params is not None:
        check_node_texts(node, path, slots, Names(env.profile), model.used_slots, diags,
                         skill_fed)
    if node.transient:
        check_transient(node, path, diags)
    named = route_names(node, path, diags)
    for j, raw in enumerate(node.next_nodes):
        transition = check_next_node(raw, join(path, "next_nodes", j), named[j], ids, diags)
        if transition is None:
            continue
        attach_condition(transition, raw.condition, join(transition.pointer, "condition"),
                         model, env, diags)
        transition.sets = check_sets(raw.set, join(transition.pointer, "set"),
                                     model.scenario.slots, model.used_slots, diags)
        checked.transitions.append(transition)
    if node.routes:
        added = group_routes(node, path, groups or {}, diags)
        if node.transient and any(t.target is None for t in added):
            diags.report("E109", "a transient node never waits, so a route group row that "
                         "stays there (its target is the node itself) cannot be followed",
                         join(path, "routes"), hint="use the group at nodes that wait")
        checked.transitions += added
    if node.on_enter is not None:
        checked.on_enter = check_sets(node.on_enter.set, join(path, "on_enter", "set"),
                                      model.scenario.slots, model.used_slots, diags)
    if node.default_next is not None:
        check_default_next(checked, model, ids, diags)


def check_default_next(checked: CheckedNode, model: Model, ids: Names,
                       diags: Diagnostics) -> None:
    """`default_next`: a node id, or an object with its target and a `set` (SPEC 17.20)."""
    written, path = checked.node.default_next, join(checked.pointer, "default_next")
    raw_target = written if isinstance(written, str) else written.target
    target_path = path if isinstance(written, str) else join(path, "target")
    target = resolve_target(raw_target, target_path, ids, diags)
    sets = [] if isinstance(written, str) else check_sets(
        written.set, join(path, "set"), model.scenario.slots, model.used_slots, diags)
    if target is not None:
        checked.transitions.append(CheckedTransition(path, "default_next", target, None,
                                                     sets=sets))


def route_names(node, path: str, diags: Diagnostics) -> list[str]:
    """SPEC 18.8: the reason label of each `next_nodes` entry: `next:NAME` for a named one,
    `next_nodes[i]` otherwise; an empty name, or one used twice in the node, is E114 (the
    entry then keeps its position)."""
    labels, seen = [], set()
    for j, raw in enumerate(node.next_nodes):
        name = raw.name
        if name is not None and (not name.strip() or name in seen or name_problem(name)):
            problem = "is used twice in this node" if name in seen else "is not a route name"
            diags.report("E114", f"route name {name!r} {problem}",
                         join(path, "next_nodes", j, "name"),
                         hint="give each route of a node its own name, or leave it out")
            name = None
        if name is not None:
            seen.add(name)
        labels.append(f"next:{name}" if name is not None else f"next_nodes[{j}]")
    return labels


def check_next_node(raw, path: str, label: str, ids: Names, diags: Diagnostics):
    """The transition of a `next_nodes` entry, or None when it is unusable (E103/E104)."""
    if raw.target == STAY_SENTINEL:
        diags.report("E013", "target '__stay__' was removed in scenario v2", join(path, "target"),
                     hint='use {"action": "stay"} instead of a target')
        return None
    if diags.rejected and (join(path, "target") in diags.rejected
                           or join(path, "action") in diags.rejected):
        return None  # reported by the schema pass
    if (raw.target is None) == (raw.action is None):
        both = "both" if raw.target is not None else "neither"
        diags.report("E104", f"transition has {both} of 'target' and 'action'", path,
                     hint='give either "target": NODE or "action": "stay"')
        return None
    if raw.action is not None:
        if raw.action != "stay":
            diags.report("E104", f"unknown action '{raw.action}'", join(path, "action"),
                         hint="the only action is \"stay\"")
            return None
        return CheckedTransition(path, label, None, None)
    target = resolve_target(raw.target, join(path, "target"), ids, diags)
    return None if target is None else CheckedTransition(path, label, target, None)


def resolve_target(name, path: str, ids: Names, diags: Diagnostics) -> str | None:
    if not isinstance(name, str) or not ids:  # no nodes at all: reported once, as E012
        return None
    if name in ids:
        return name
    diags.report("E103", f"unknown target node '{name}'", path,
                 hint=did_you_mean(name, ids) or f"nodes: {ids.listing()}")
    return None


def attach_condition(transition: CheckedTransition, raw, path: str, model: Model,
                     env: ConditionEnv, diags: Diagnostics) -> None:
    """Lower and check `raw`; record usage; mark the transition when the condition failed."""
    if raw is ABSENT or path in diags.rejected:  # none, or missing (reported by the schema pass)
        return
    reports_before = len(diags.items)
    lowered = lower_condition(raw, path, diags)
    if lowered is not None:
        record_usage(lowered, model)
        checked = check_condition(lowered, env, diags)
        if checked is not None:
            transition.condition = checked
    transition.condition_ok = (not diags.has_errors(since=reports_before)
                               and transition.condition is not None)
    if transition.condition_ok:
        transition.key = msgspec.json.encode(raw)
        display = model.printed.get(transition.key)
        if display is None:
            display = model.printed[transition.key] = print_condition(transition.condition)
        transition.display = display


def record_usage(condition: Condition, model: Model) -> None:
    for leaf in leaves(condition):
        if leaf.field.startswith("slots."):
            model.used_slots.add(leaf.field[len("slots."):])
        elif leaf.field == "nlu.intent":
            values = leaf.value if isinstance(leaf.value, list) else [leaf.value]
            model.used_intents.update(v for v in values if isinstance(v, str))


def check_variants(node: NodeDef, path: str, diags: Diagnostics) -> None:
    """E111 for a list of response variants that is empty, or holds an empty variant or the
    same variant twice (SPEC 9: each is said in turn, so each must be a sentence of its own)."""
    for kind in RESPONSE_KINDS:
        variants = getattr(node.responses, kind)
        if not isinstance(variants, list):
            continue
        kind_path = join(path, "responses", kind)
        if not variants:
            diags.report("E111", f"responses.{kind} is an empty list of variants", kind_path,
                         hint="write at least one sentence, or leave the key out")
        seen: dict[str, int] = {}
        for i, text in enumerate(variants):
            said = text.strip()
            if not said:
                diags.report("E111", f"variant {i} of responses.{kind} is empty",
                             join(kind_path, i), hint="write the sentence, or remove the variant")
            elif said in seen:
                diags.report("E111", f"variant {i} of responses.{kind} repeats variant "
                             f"{seen[said]}", join(kind_path, i),
                             hint="variants are said in turn: word this one differently, or "
                                  "remove it")
            else:
                seen[said] = i


def check_cleared(node: NodeDef, path: str, model: Model, slots: Names,
                  diags: Diagnostics) -> None:
    """`params.clear_slots` (SPEC 8.5) names declared slots, or is "all"."""
    cleared = node.params.clear_slots
    for j, name in enumerate(cleared if isinstance(cleared, list) else ()):
        if name in slots:
            model.used_slots.add(name)
        else:
            report_undeclared_slot(name, join(path, "params", "clear_slots", j), slots, diags)


def check_transient(node: NodeDef, path: str, diags: Diagnostics) -> None:
    """E109: a transient node never waits (SPEC 8.3), so it never stays and, unless it is an
    end node, its last route is unconditional (it always leaves)."""
    for j, raw in enumerate(node.next_nodes):
        if raw is not None and raw.action == "stay":
            diags.report("E109", "a transient node never waits, so it cannot stay",
                         join(path, "next_nodes", j, "action"),
                         hint="route to a node that waits, or remove \"transient\"")
            return
    if node.terminal or node.default_next is not None or not node.next_nodes:
        return  # an end node, or an unconditional last route
    last = node.next_nodes[-1]
    if last is not None and last.condition is not ABSENT:
        diags.report("E109", "a transient node must always leave, but every route it has "
                     "is conditional", join(path, "next_nodes"),
                     hint="add a \"default_next\" (or an unconditional last route)")


def report_undeclared_slot(name, path: str, slots: Names, diags: Diagnostics,
                           string_offset: int | None = None) -> None:
    diags.report("E105", f"undeclared slot '{name}'", path, string_offset=string_offset,
                 hint=did_you_mean(name, slots) or "declare it under \"slots\"")


def check_params(node: NodeDef, path: str, diags: Diagnostics) -> None:
    params, ppath = node.params, join(path, "params")
    problems = []
    if params.max_turns is not None and params.max_turns < 1:
        problems.append(("max_turns", f"max_turns must be at least 1, got {params.max_turns}"))
    if params.min_turns is None:  # rejected by the schema pass
        pass
    elif params.min_turns < 1:
        problems.append(("min_turns", f"min_turns must be at least 1, got {params.min_turns}"))
    elif params.max_turns is not None and params.max_turns >= 1 and params.min_turns > params.max_turns:
        problems.append(("min_turns", f"min_turns ({params.min_turns}) is greater than "
                                      f"max_turns ({params.max_turns})"))
    if params.max_fallback_retries is not None and params.max_fallback_retries < 0:
        problems.append(("max_fallback_retries", "max_fallback_retries must not be negative"))
    if params.timeout_ms is not None and params.timeout_ms < 1:
        problems.append(("timeout_ms", f"timeout_ms must be at least 1, got {params.timeout_ms}"))
    if params.skill_args:
        problems += skill_args_problems(params.skill_args)
    for key in ("skill_args", "fallback", "timeout_ms"):
        if params.skill is None and getattr(params, key) not in (None, {}):
            problems.append((key, f"params.{key} has no effect without params.skill"))
    for key, message in problems:
        diags.report("E107", message, f"{ppath}/{key}", hint="fix the value in params")


def skill_args_problems(args: dict) -> list[tuple[str, str]]:
    """(pointer below params, message) for skill arguments nested too deeply or holding an
    integer the IR cannot store (64 bits); one walk, without recursion, first problem only."""
    stack = [(args, "skill_args", 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_ARGS_DEPTH:
                return [("skill_args", f"skill_args nested deeper than {MAX_ARGS_DEPTH} levels")]
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((child, join(where, key), depth + 1) for key, child in reversed(list(pairs)))
        elif isinstance(item, int) and not fits_int64(item):
            return [(where, f"integer {item} does not fit in 64 bits ({INT_MIN} to {INT_MAX})")]
    return []


def check_intents(scenario: Scenario, diags: Diagnostics) -> None:
    for i, item in enumerate(scenario.safety.patterns if scenario.safety is not None else ()):
        found = patterns.problem(item.pattern, patterns.INTENT) \
            if item is not None and isinstance(item.pattern, str) else None
        if found is not None:  # searched like an intent pattern: the same rule, E012
            diags.report("E012", found.text.replace("intent pattern", "safety pattern"),
                         join("/safety/patterns", i, "pattern"),
                         hint="fix the regular expression (Python `re` syntax)" if found.invalid
                         else found.hint)
    for name, intent in scenario.intents.items():
        for i, pattern in enumerate(intent.patterns):
            found = patterns.problem(pattern, patterns.INTENT)  # the loader's rule too
            if found is None:
                continue
            diags.report("E012", found.text,
                         join("/intents", name, "patterns", i),
                         hint="fix the regular expression (Python `re` syntax)" if found.invalid
                         else found.hint)
