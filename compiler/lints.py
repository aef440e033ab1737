"""Lints of what a designer meant but the graph does not say (SPEC 14.8): W407 and W408.

In: the resolved `Model`, the end nodes with provenance and the reachable nodes (graph
analysis). Out: warnings.
- W407: a node whose only routes are stays has no static edge out, so it is inferred as an
  end node; at an end node a stay says the common filler ("Sure, go on.") and a turn no stay
  takes completes the session. Nodes nothing reaches are left to W401/W402.
- W408: a `responses.not_understood` that can never be said: at a transient node (it never
  waits), or where the fallback policy never re-prompts (`max_fallback_retries: 0`) and
  routing never holds the node after a not-understood turn (no stay route, no `min_turns`
  gate, no slot that asks before it is overwritten, and an unconditional way on or
  completion). A required-slot gate re-asks the slot's
  question, not the not_understood text, so it does not count as a hold that says it.
"""

from __future__ import annotations

from interpreter.ir import END_INFERRED

from .diagnostics import Diagnostics, join
from .resolve import CheckedNode, Model


def check_lints(model: Model, end_kind: dict[str, int], reachable: set[str],
                diags: Diagnostics) -> None:
    confirms = any(getattr(slot, "on_conflict", None) == "confirm"
                   for slot in model.scenario.slots.values())
    for checked in model.nodes:
        node_id = checked.node.id
        if end_kind.get(node_id) == END_INFERRED and checked.transitions and \
                node_id in reachable:
            diags.report("W407", f"node '{node_id}' has only stay routes, so it is inferred as "
                         "an end node: a stay there says the common filler and a turn no stay "
                         "takes ends the conversation", checked.pointer,
                         hint='add "terminal": true if the conversation may end here, or a '
                              'route out (a target or "default_next")')
        if never_says_not_understood(checked, node_id in end_kind, confirms):
            diags.report("W408", f"responses.not_understood of node '{node_id}' can never be "
                         f"said: {never_said_why(checked)}",
                         join(checked.pointer, "responses", "not_understood"),
                         hint="remove the response, or \"transient\"" if checked.node.transient
                         else "give the node params.max_fallback_retries >= 1 (or a stay), "
                              "or remove the response")


def never_says_not_understood(checked: CheckedNode, is_end: bool, confirms: bool) -> bool:
    """`confirms`: a slot asks before it is overwritten, so any turn, a not-understood one
    too, may hold a node that waits (gate:confirmation) and re-prompt there."""
    node = checked.node
    responses = node.responses
    if responses is None or node.params is None or not responses.not_understood:
        return False
    if node.transient:
        return True
    params = node.params
    if confirms or params.max_fallback_retries != 0 or (params.min_turns or 1) > 1:
        return False
    routes = checked.transitions
    if any(t.target is None for t in routes) or not all(t.condition_ok for t in routes):
        return False
    leaves = any(t.target is not None and t.condition is None for t in routes)
    return leaves or is_end


def never_said_why(checked: CheckedNode) -> str:
    if checked.node.transient:
        return "a transient node never waits for the user"
    return ("max_fallback_retries is 0, so a not-understood turn goes straight to routing, "
            "and routing always leaves the node or completes")
