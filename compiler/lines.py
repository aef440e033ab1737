"""Conditional lines (SPEC 14.4, 17.21): a response made of lines, each said when its
`when` holds.

In: a node's responses. Out: for each response written as `{"lines": [...], "join": ...}`,
its lines as (variants, checked condition or None) with the join; the conditions are lowered
and type-checked like a transition's (E2xx at `.../lines/i/when`), their slots and intents
count as used. The texts' placeholders are checked with every other text (`texts`).
"""

from __future__ import annotations

from interpreter.ir import RESPONSE_KINDS

from .diagnostics import Diagnostics, join


def check_lines(node, path: str, model, env, diags: Diagnostics) -> dict[str, tuple]:
    """kind -> (join, [(variants, condition or None), ...]) for the responses with lines."""
    from .resolve import CheckedTransition, attach_condition  # the resolver calls this module
    found = {}
    for kind in RESPONSE_KINDS:
        value = getattr(node.responses, kind)
        if value is None or not hasattr(value, "lines"):
            continue
        lines = []
        for i, line in enumerate(value.lines):
            where = join(path, "responses", kind, "lines", i)
            probe = CheckedTransition(where, "line", None, None)
            attach_condition(probe, line.when, join(where, "when"), model, env, diags)
            texts = [line.text] if isinstance(line.text, str) else list(line.text or ())
            lines.append((texts, probe.condition))
        found[kind] = (value.join, lines)
    return found
