"""Route groups (SPEC 14.6, 17.22): transitions written once and shared by nodes.

In: `graph.route_groups` (`{"NAME": [transition, ...]}`) and each node's `routes` (group
names). Out: each group's transitions checked once (targets E103/E104, conditions E2xx,
`set` E114/E204, at `/graph/route_groups/NAME/i`), and for every node the copies it appends
after its own `next_nodes` (before `default_next`), labelled `route:NAME[i]`; a copy whose
target is the node itself is a stay there (`stay:route:NAME[i]`), as routing reads it. E114
for a `routes` entry that names no group or names one twice. What graph analysis finds in a
group is reported once (`once_per_group`), however many nodes use it.
"""

from __future__ import annotations

import dataclasses

from .diagnostics import Diagnostic, Diagnostics, Names, did_you_mean, join
from .sets import check_sets

GROUPS = "/graph/route_groups"


def check_groups(scenario, model, env, ids: Names, diags: Diagnostics) -> dict[str, list]:
    """name -> its checked transitions (the usable ones), each checked once."""
    from .resolve import attach_condition, check_next_node  # the resolver calls this module
    groups: dict[str, list] = {}
    for name, rows in scenario.graph.route_groups.items():
        checked = []
        for i, raw in enumerate(rows if isinstance(rows, list) else ()):
            path = join(GROUPS, name, i)
            if raw is None:
                continue
            transition = check_next_node(raw, path, f"route:{name}[{i}]", ids, diags)
            if transition is None:
                continue
            attach_condition(transition, raw.condition, join(path, "condition"), model, env,
                             diags)
            transition.sets = check_sets(raw.set, join(path, "set"), scenario.slots,
                                         model.used_slots, diags)
            checked.append(transition)
        groups[name] = checked
    return groups


def group_routes(node, path: str, groups: dict[str, list], diags: Diagnostics) -> list:
    """The transitions a node's `routes` append, in order (a target that is the node itself
    becomes a stay)."""
    names, seen, out = Names(groups), set(), []
    for j, name in enumerate(node.routes):
        where = join(path, "routes", j)
        if name not in groups:
            diags.report("E114", f"routes names unknown route group '{name}'", where,
                         hint=did_you_mean(name, names) or
                         'declare it under "graph.route_groups"')
            continue
        if name in seen:
            diags.report("E114", f"routes names route group '{name}' twice", where,
                         hint="list each group once: its transitions are added in order")
            continue
        seen.add(name)
        for transition in groups[name]:
            if transition.target == node.id:
                out.append(dataclasses.replace(transition, target=None,
                                               label=transition.label))
            else:
                out.append(dataclasses.replace(transition))
    return out


def once_per_group(items: list[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics with each one about a group's transition kept once (graph analysis
    judges a group at every node that uses it)."""
    seen, kept = set(), []
    for d in items:
        if d.path.startswith(GROUPS + "/"):
            key = (d.code, d.path)
            if key in seen:
                continue
            seen.add(key)
        kept.append(d)
    return kept
