"""Graph analysis (networkx): end nodes, reachability, traps and the W4xx lints.

In: the resolved `Model`. Out: an `Analysis` (end nodes with provenance, reachable nodes,
the static graph) and diagnostics E301, E302, W401-W406 (W407, W408: `lints`).

Static edges come from `next_nodes[].target` and `default_next` only (self-loops included);
`action: stay` and global transitions make no static edge. End nodes are the explicit
`terminal: true` nodes plus those with static out-degree 0 (inferred). Reachability adds,
from every node, an edge for each global transition whose condition is satisfiable there
(self-targets excluded: the runtime skips them), and from every node an edge to each
`graph.safety` target (SPEC 10: a crisis can be said anywhere). Safety rules come first at
every node and can always fire (their category depends on what the user says) but never
always: they hold the user at their own target and cut nothing off. For the trap check a
safety edge leads in but never out: a safety node reached from anywhere is checked like any
node, and a node whose only way to the end is a crisis is still a trap (nobody should have to
say "I want to die" to finish). Conditions after the safety tier never see a category that
has a rule (`nlu.safety` loses those values), so a test for one is a W404.

The trap check (E301) follows routing more closely (`routing_graph`): at each node the rules
are taken in tier order (globals, `next_nodes`, `default_next`, completion at an end node), and
a rule whose condition always holds there cuts off every rule after it. So a terminal node
whose stay always matches never completes, and a node where a global always fires first never
takes its own transitions. An end node with a turn limit can complete (tier 1) when the user
can be held there that long; a node nothing can hold is judged on the first turn of a visit
(`node_turns` 1). At an end node the rules are also judged together: when no input gets past
all of them, completion (the last tier) never happens. Elsewhere each rule is judged alone,
and counters over several visits are beyond it (tests/compiler/test_liveness.py). A trap
is reported once per closed group of nodes (a terminal strongly connected component of the
trap nodes), at its first node in source order, since every node leading into it is stuck
only because of it. "Always holds" is proven (the negation is unsatisfiable), so a cut is
never a guess: anything not modelled counts as possibly false.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from interpreter.ir import ACTS, END_EXPLICIT, END_INFERRED, SAFETY_VALUES, SKILL_STATUSES

from .condition_ast import And, Condition, Not, leaves
from .diagnostics import Diagnostics, join
from .lints import check_lints
from .resolve import CheckedTransition, Model
from .satisfiability import Domain, entry_domains, field_domains, satisfiable


NODE_DEPENDENT = ("system.current_node", "system.conversation_resuming")


@dataclass
class Analysis:
    graph: nx.DiGraph  # the runtime graph: static edges plus satisfiable global edges
    end_kind: dict[str, int]  # node id -> END_EXPLICIT / END_INFERRED (end nodes only)
    reachable: set[str]


def analyse(model: Model, diags: Diagnostics) -> Analysis:
    full = static_graph(model)
    end_kind = end_nodes(model, full)
    static_degree = dict(full.degree())
    domains = domains_of(model)
    check_conditions(model, end_kind, domains, diags)
    add_global_edges(model, full, end_kind, domains)
    full.add_edges_from((node_id, rule.target) for rule in model.safety
                        for node_id in model.node_ids if node_id != rule.target)
    entry = model.scenario.graph.entry
    reachable = (nx.descendants(full, entry) | {entry}) if entry in full else set()
    if not end_kind:
        diags.report("E302", "the graph has no end node", "/graph/nodes",
                     hint="mark the closing node \"terminal\": true, or give a node no outgoing transition")
    else:
        check_traps(model, end_kind, domains, diags)
    check_transient_cycles(model, diags)
    check_reachability(model, static_degree, full, reachable, diags)
    check_shadowed(model, diags)
    check_unconditional_cycles(model, diags)
    check_unused(model, diags)
    check_lints(model, end_kind, reachable, diags)
    return Analysis(full, end_kind, reachable)


def static_graph(model: Model) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(model.node_ids)
    for checked in model.nodes:
        for t in checked.transitions:
            if t.target is not None:
                graph.add_edge(checked.node.id, t.target)
    return graph


def end_nodes(model: Model, static: nx.DiGraph) -> dict[str, int]:
    kinds = {}
    for checked in model.nodes:
        node_id = checked.node.id
        if checked.node.terminal:
            kinds[node_id] = END_EXPLICIT
        elif static.out_degree(node_id) == 0:
            kinds[node_id] = END_INFERRED
    return kinds


def domains_of(model: Model) -> dict[str, Domain]:
    scenario = model.scenario
    kinds = {"slots." + n: (s.value_type, s.values if isinstance(s.values, list) else ())
             for n, s in scenario.slots.items()}
    bounds = {"slots." + n: (s.min, s.max) for n, s in scenario.slots.items()}
    for name, item in scenario.profile.items():  # SPEC 8.1: read like slots
        kinds["profile." + name] = (item.value_type,
                                    item.values if isinstance(item.values, list) else ())
        bounds["profile." + name] = (item.min, item.max)
    routed = {rule.label.partition(":")[2] for rule in model.safety}
    safety = tuple(v for v in SAFETY_VALUES if v not in routed)
    return field_domains(kinds, scenario.intents, model.node_ids, ACTS, SKILL_STATUSES, bounds,
                         safety)


def node_assumptions(node_id: str, end_kind: dict[str, int], first_turn: bool = False) -> dict:
    """What holds while routing at `node_id` (on the first turn of a visit, if so)."""
    assume: dict = {"system.current_node": node_id}
    if node_id not in end_kind:
        assume["system.conversation_resuming"] = False
    if first_turn:
        assume["system.node_turns"] = 1
    return assume


def check_conditions(model: Model, end_kind: dict, domains: dict, diags: Diagnostics) -> None:
    """W404: a condition that can never be true where it is evaluated. Scenarios repeat their
    conditions, so a verdict that does not depend on the node is computed once per text."""
    verdicts: dict[bytes, bool | None] = {}  # None: depends on the node
    fresh = entry_domains(domains)
    for checked in model.nodes:
        assume = node_assumptions(checked.node.id, end_kind)
        transient = checked.node.transient
        for t in checked.transitions:
            if t.condition is None:
                continue
            if transient:  # judged on a fresh visit (SPEC 8.3)
                possible = satisfiable(t.condition, fresh, assume)
                if not possible:
                    report_never_true(t, diags, f"at node '{checked.node.id}'")
                continue
            if t.key not in verdicts:
                verdicts[t.key] = None if depends_on_node(t.condition) else satisfiable(t.condition, domains)
            possible = verdicts[t.key]
            if possible is None:
                possible = satisfiable(t.condition, domains, assume)
            if not possible:
                report_never_true(t, diags, f"at node '{checked.node.id}'")
    for t in model.global_transitions:
        if t.condition is not None and not nodes_where_possible(
                t.condition, model.node_ids, end_kind, domains):
            report_never_true(t, diags, "at any node")


def depends_on_node(condition: Condition) -> bool:
    return any(leaf.field in NODE_DEPENDENT for leaf in leaves(condition))


def report_never_true(t: CheckedTransition, diags: Diagnostics, where: str) -> None:
    hint = "two constraints on one field exclude each other, or a value is out of range"
    if t.condition is not None and any(leaf.field == "nlu.safety" for leaf in leaves(t.condition)):
        hint = ("a safety category with a graph.safety rule never reaches this condition (the "
                "safety tier takes those turns first); or " + hint)
    diags.report("W404", f"condition can never be true {where}: {t.display}", join(t.pointer, "condition"),
                 hint=hint)


def add_global_edges(model: Model, graph: nx.DiGraph, end_kind: dict, domains: dict) -> None:
    """Turn the static graph into the runtime one: add, from every node, an edge for each
    global transition that can fire there."""
    for t in model.global_transitions:
        condition: Condition | None = t.condition if t.condition_ok else None
        fires_at = nodes_where_possible(condition, model.node_ids, end_kind, domains)
        graph.add_edges_from((node_id, t.target) for node_id in fires_at if node_id != t.target)


def nodes_where_possible(condition: Condition | None, node_ids: list[str], end_kind: dict,
                         domains: dict) -> list[str]:
    """The nodes at which `condition` can hold; computed once when it does not depend on the node."""
    if condition is None or not depends_on_node(condition):
        return node_ids if satisfiable(condition, domains) else []
    return [n for n in node_ids if satisfiable(condition, domains, node_assumptions(n, end_kind))]


class _Verdicts:
    """Whether a rule can match, or always matches, at a node; a verdict that does not depend
    on the node is computed once per condition text."""

    def __init__(self, domains: dict, end_kind: dict, transient: frozenset = frozenset()):
        self.domains, self.end_kind = domains, end_kind
        self.transient, self.fresh = transient, entry_domains(domains)
        self.cache: dict = {}
        self.local: dict[bytes, bool] = {}

    def possible(self, t: CheckedTransition, node_id: str, first_turn: bool = False) -> bool:
        return t.condition is None or self._judge(t, node_id, False, first_turn)

    def always(self, t: CheckedTransition, node_id: str, first_turn: bool = False) -> bool:
        return t.condition is None or not self._judge(t, node_id, True, first_turn)

    def together_always(self, rules: list[CheckedTransition], node_id: str,
                        first_turn: bool = False) -> bool:
        """The rules, none of which always matches alone, leave no input past all of them
        (`nlu.intent == null` and `nlu.intent == "bye"` with one declared intent)."""
        if len(rules) < 2:  # every rule here has a condition: one without always matches
            return False
        assume = node_assumptions(node_id, self.end_kind, first_turn)
        domains = self.fresh if node_id in self.transient else self.domains
        return not satisfiable(And(tuple(Not(t.condition) for t in rules)), domains, assume)

    def _judge(self, t: CheckedTransition, node_id: str, negated: bool, first_turn: bool) -> bool:
        """Whether the rule's condition (or its negation) can hold at the node."""
        local = self.local.get(t.key)
        if local is None:  # the assumptions about the node matter only when it reads them
            local = self.local[t.key] = depends_on_node(t.condition)
        transient = node_id in self.transient  # a fresh visit: its own domains (SPEC 8.3)
        key = (t.key, negated, node_id if local or transient else None, first_turn)
        if key not in self.cache:
            condition = Not(t.condition) if negated else t.condition
            assume = node_assumptions(node_id, self.end_kind, first_turn)
            domains = self.fresh if transient else self.domains
            self.cache[key] = satisfiable(condition, domains, assume)
        return self.cache[key]


@dataclass
class NodeRouting:
    """What routing can do at one node: its targets, whether it can hold the user, and the
    rule that cuts the rest (or, at an end node, the rules that only together leave nothing
    for the last tier). At an end node, the last tier (completion) is reached when nothing
    cuts it off."""

    targets: list[str]
    can_stay: bool
    cut: tuple[str, ...] | None


def routing_graph(model: Model, end_kind: dict, domains: dict) -> tuple[dict, set, dict]:
    """(node -> the targets routing can take from it, end nodes where a session can complete,
    node -> the labels of the rules that always match there and cut off what comes after).
    Plain sets, not networkx: this runs on every node of every compile."""
    graph: dict[str, set[str]] = {}
    completing, cut = set(), {}
    transient = frozenset(n.node.id for n in model.nodes if n.node.transient)
    verdicts = _Verdicts(domains, end_kind, transient)
    entry = model.scenario.graph.entry
    for checked in model.nodes:
        node_id = checked.node.id
        routing = node_routing(checked, model, verdicts, end_kind)
        if not routing.can_stay and node_id != entry and checked.node.params.max_fallback_retries == 0:
            # Nothing holds the user here, so every turn routed here is the visit's first.
            routing = node_routing(checked, model, verdicts, end_kind, first_turn=True)
        graph[node_id] = set(routing.targets)
        if routing.cut is not None:
            cut[node_id] = routing.cut
        if node_id in end_kind and (routing.cut is None or turn_limit_ends(checked, routing.can_stay)):
            completing.add(node_id)
    return graph, completing, cut


def node_routing(checked, model: Model, verdicts: _Verdicts, end_kind: dict,
                 first_turn: bool = False) -> NodeRouting:
    """The rules of one node in tier order: globals (self-targets skipped), the gates,
    `next_nodes`, `default_next`; a rule that always matches ends the walk."""
    node_id = checked.node.id
    if checked.node.transient:
        return transient_routing(checked, verdicts, end_kind)
    globals_here = [t for t in model.global_transitions if t.target != node_id]
    rules = globals_here + checked.transitions
    # Tier 0, safety: never always; a rule to this node holds it (its edges: `check_traps`).
    routing = NodeRouting([], any(r.target == node_id for r in model.safety), None)
    possible = []
    for i, t in enumerate(rules):
        if i == len(globals_here):
            routing.can_stay |= has_gate(checked, model)  # tier 4 comes after the globals
        if not verdicts.possible(t, node_id, first_turn):
            continue
        possible.append(t)
        if t.target is not None:
            routing.targets.append(t.target)
        routing.can_stay |= t.target is None
        if verdicts.always(t, node_id, first_turn):
            if i + 1 < len(rules) or node_id in end_kind:  # it cuts something off
                routing.cut = (rule_label(t),)
            return routing
    routing.can_stay |= not checked.transitions and has_gate(checked, model)
    routing.can_stay |= node_id not in end_kind  # tier 8: no rule matched, the node holds
    # Only the completion of an end node needs the rules judged together (one check per end
    # node): elsewhere the last tier just holds the node, which the rules' stays cover.
    if node_id in end_kind and verdicts.together_always(possible, node_id, first_turn):
        routing.cut = tuple(rule_label(t) for t in possible)
    return routing


def transient_routing(checked, verdicts: _Verdicts, end_kind: dict) -> NodeRouting:
    """A transient node never waits (SPEC 8.3): a turn that enters it takes its own routes
    at once (no globals, gates or holds); an end node completes when none matches."""
    node_id = checked.node.id
    routing = NodeRouting([], False, None)
    for i, t in enumerate(checked.transitions):
        if not verdicts.possible(t, node_id):
            continue
        routing.targets.append(t.target)
        if verdicts.always(t, node_id):
            if i + 1 < len(checked.transitions) or node_id in end_kind:
                routing.cut = (rule_label(t),)
            return routing
    return routing


def check_transient_cycles(model: Model, diags: Diagnostics) -> None:
    """E303: a cycle made only of transient nodes would pass the same nodes again and again
    within one turn (the runtime stops at the second arrival; the scenario is wrong)."""
    transient = {n.node.id for n in model.nodes if n.node.transient}
    graph = nx.DiGraph()
    for checked in model.nodes:
        if checked.node.id in transient:
            graph.add_node(checked.node.id, pointer=checked.pointer)
            graph.add_edges_from((checked.node.id, t.target) for t in checked.transitions
                                 if t.target in transient)
    position = {node_id: i for i, node_id in enumerate(model.node_ids)}
    for group in nx.strongly_connected_components(graph):
        first = min(group, key=position.__getitem__)
        if len(group) == 1 and not graph.has_edge(first, first):
            continue
        members = sorted(group, key=position.__getitem__)
        diags.report("E303", "cycle made only of transient nodes: "
                     f"{', '.join(repr(m) for m in members)}; a turn would never stop",
                     graph.nodes[first]["pointer"],
                     hint="make one of these nodes wait (remove \"transient\"), or route "
                          "one of them out of the cycle")


def rule_label(t: CheckedTransition) -> str:
    """The rule as routing reasons name it: `global:NAME`, `next_nodes[i]`, `stay:...`."""
    return t.label if t.target is not None else f"stay:{t.label}"


def always_phrase(labels: tuple[str, ...]) -> str:
    """`X always matches`, or `X and Y together always match`."""
    if len(labels) == 1:
        return f"{labels[0]} always matches"
    return f"{', '.join(labels[:-1])} and {labels[-1]} together always match"


def has_gate(checked, model: Model) -> bool:
    """The node can hold the user at tier 4 until its turn limit: a required slot to collect,
    or min_turns up to max_turns."""
    slots, params = model.scenario.slots, checked.node.params
    required = any(slots[name].policy == "required" for name in checked.node.collect_slots)
    return required or (params.max_turns is not None and params.min_turns >= params.max_turns > 1)


def turn_limit_ends(checked, can_stay: bool) -> bool:
    """The turn limit can end the session at this end node (tier 1): the node has one, and
    the user can be held there for `max_turns` turns (a move resets the count): at once when
    it is 1, else by a stay or gate, or by silent turns within the fallback budget."""
    params = checked.node.params
    limit = params.max_turns
    if limit is None or not params.turn_limit_enabled:
        return False
    return limit <= 1 or can_stay or params.max_fallback_retries >= limit - 1


def check_traps(model: Model, end_kind: dict, domains: dict, diags: Diagnostics) -> None:
    """E301: nodes routing can reach from which no session can complete."""
    graph, completing, cut = routing_graph(model, end_kind, domains)
    entry = model.scenario.graph.entry
    ways_in = {node_id: targets | {r.target for r in model.safety} for node_id, targets in graph.items()}
    reachable = closure(ways_in, [entry]) if entry in graph else set()
    predecessors: dict[str, list[str]] = {node_id: [] for node_id in graph}
    for node_id, targets in graph.items():
        for target in targets:
            predecessors[target].append(node_id)
    traps = reachable - closure(predecessors, completing)
    if not traps:
        return
    order = {n.node.id: n for n in model.nodes}
    position = {node_id: i for i, node_id in enumerate(model.node_ids)}
    trapped = nx.DiGraph((n, t) for n in traps for t in graph[n] if t in traps)
    trapped.add_nodes_from(traps)
    condensed = nx.condensation(trapped)
    for component in condensed.nodes:
        if condensed.out_degree(component):
            continue
        members = sorted(condensed.nodes[component]["members"], key=position.__getitem__)
        report_trap(members, order, end_kind, cut, diags)


def report_trap(members: list[str], order: dict, end_kind: dict, cut: dict,
                diags: Diagnostics) -> None:
    ends = [m for m in members if m in end_kind]
    first = ends[0] if ends else members[0]
    others = [m for m in members if m != first]
    if ends:
        stuck = f"; the conversation is stuck in {', '.join(repr(m) for m in others)} too" if others else ""
        limit = "its turn limit is never reached" if order[first].node.params.max_turns \
            else "the node has no turn limit"
        message = (f"end node '{first}' can never complete: {always_phrase(cut[first])} there "
                   f"first, and {limit}{stuck}")
        rules = cut[first]
        change = f"make {rules[0]} conditional (it always matches)" if len(rules) == 1 else \
            f"narrow one of {', '.join(rules)} (together they match every input)"
        hint = f"{change}, or set params.max_turns on '{first}'"
    else:
        with_others = f" (with {', '.join(repr(m) for m in others)})" if others else ""
        message = (f"node '{first}'{with_others} cannot reach any end node: "
                   "the conversation can never finish from here")
        hint = "add a transition towards an end node, or mark a node \"terminal\": true"
        blocked = [m for m in members if m in cut]
        if blocked:
            m = blocked[0]
            hint = (f"{always_phrase(cut[m])} at '{m}', so the rules after it never fire; "
                    "make it conditional, or " + hint)
    diags.report("E301", message, order[first].pointer, hint=hint)


def closure(edges: dict, start) -> set:
    """Every node reachable from `start` along `edges` (node -> neighbours), start included."""
    seen = set(start)
    stack = list(seen)
    while stack:
        for neighbour in edges[stack.pop()]:
            if neighbour not in seen:
                seen.add(neighbour)
                stack.append(neighbour)
    return seen


def check_reachability(model: Model, static_degree: dict, full: nx.DiGraph, reachable: set,
                       diags: Diagnostics) -> None:
    entry = model.scenario.graph.entry
    global_targets = {t.target for t in model.global_transitions} | {r.target for r in model.safety}
    for checked in model.nodes:
        node_id = checked.node.id
        if node_id == entry or node_id in reachable:
            continue
        if static_degree[node_id] == 0 and node_id not in global_targets:
            diags.report("W402", f"node '{node_id}' is isolated: no transition leads to or from it",
                         checked.pointer, hint="connect it or delete it")
        else:
            diags.report("W401", f"node '{node_id}' is unreachable from the entry '{entry}'",
                         checked.pointer, hint="add a transition that leads here, or delete it")


def check_shadowed(model: Model, diags: Diagnostics) -> None:
    """W403: entries after an unconditional `next_nodes` entry can never fire."""
    for checked in model.nodes:
        blocker = None
        for t in checked.transitions:
            if blocker is not None:
                diags.report("W403", f"{t.label} can never fire: {blocker.label} has no condition",
                             t.pointer, hint=f"give {blocker.label} a condition, or move it last")
            elif t.condition is None and t.condition_ok and t.label != "default_next":
                blocker = t


def check_unconditional_cycles(model: Model, diags: Diagnostics) -> None:
    """W406: nodes whose first rule always moves on, around a cycle."""
    forced = nx.DiGraph()
    for checked in model.nodes:
        first = checked.transitions[0] if checked.transitions else None
        if first and first.target is not None and first.condition is None and first.condition_ok:
            forced.add_edge(checked.node.id, first.target, pointer=first.pointer)
    position = {node_id: i for i, node_id in enumerate(model.node_ids)}
    for cycle in nx.simple_cycles(forced):
        start = min(cycle, key=position.__getitem__)
        at = cycle.index(start)
        ordered = cycle[at:] + cycle[:at]
        path = " -> ".join(ordered + [start])
        pointer = forced.edges[start, ordered[1] if len(ordered) > 1 else start]["pointer"]
        diags.report("W406", f"cycle of unconditional transitions: {path}", pointer,
                     hint="give one of these transitions a condition, or the conversation loops "
                          "regardless of input")


def check_unused(model: Model, diags: Diagnostics) -> None:
    scenario = model.scenario
    for name in scenario.slots:
        if name not in model.used_slots:
            diags.report("W405", f"slot '{name}' is declared but never used", join("/slots", name),
                         hint="collect it in a node, use it in a condition or a response, or delete it")
    for name in scenario.intents:
        if name not in model.used_intents:
            diags.report("W405", f"intent '{name}' is declared but never used", join("/intents", name),
                         hint="test it in a condition (nlu.intent == ...) or delete it")
