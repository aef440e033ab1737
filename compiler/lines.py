"""Conditional lines (SPEC 14.4, 17.21): a response, or a skill argument's text, made of
lines, each said (or sent) when its `when` holds.

In: a node's responses and skill arguments. Out: for each response written as
`{"lines": [...], "join": ...}`, its lines as (variants, checked condition or None) with the
join (`check_lines`); for each skill argument so written, its lines as ([text], checked
condition or None) with the join (`check_argument_lines`: E010-E012 for a malformed lines
object, E107 for a line with variants, an argument being sent once, and for a `when` that
reads `skill.status`, the arguments being sent before the skill runs). The conditions are lowered
and type-checked like a transition's (E2xx at `.../lines/i/when`), their slots and intents
count as used; a line whose text is an empty list of variants is E111. The texts'
placeholders are checked with every other text (`texts`).
"""

from __future__ import annotations

from interpreter.ir import RESPONSE_KINDS

from .condition_ast import leaves
from .diagnostics import Diagnostics, join
from .schema import LinesDef, convert_struct
from .texts import is_lines


def check_lines(node, path: str, model, env, diags: Diagnostics) -> dict[str, tuple]:
    """kind -> (join, [(variants, condition or None), ...]) for the responses with lines."""
    found = {}
    for kind in RESPONSE_KINDS:
        value = getattr(node.responses, kind)
        if value is None or not hasattr(value, "lines"):
            continue
        where = join(path, "responses", kind)
        found[kind] = (value.join, _checked(value, where, model, env, diags, False))
    return found


def check_argument_lines(node, path: str, model, env, diags: Diagnostics) -> dict[str, tuple]:
    """argument -> (join, [([text], condition or None), ...]) for the skill arguments
    written as lines (SPEC 17.21)."""
    params = node.params
    args = params.skill_args if params is not None and isinstance(params.skill_args, dict) \
        else {}
    found = {}
    for argument, raw in args.items():
        if not is_lines(raw):
            continue
        where = join(path, "params", "skill_args", argument)
        made = convert_struct(raw, LinesDef, where, diags)
        if made is not None and made.lines is not None:
            found[argument] = (made.join, _checked(made, where, model, env, diags, True))
    return found


def _checked(made, path: str, model, env, diags: Diagnostics, one_text: bool) -> list[tuple]:
    """[(texts, checked condition or None), ...] of one lines object at `path`."""
    from .resolve import CheckedTransition, attach_condition  # the resolver calls this module
    lines = []
    for i, line in enumerate(made.lines):
        where = join(path, "lines", i)
        texts = [line.text] if isinstance(line.text, str) else list(line.text or ())
        if one_text and isinstance(line.text, list):
            diags.report("E107", "a line of a skill argument has one text, not variants",
                         join(where, "text"), hint="an argument is sent once: write one text, "
                         "or one line for each case with its own `when`")
        elif line.text is not None and not texts:
            diags.report("E111", "a line's text is an empty list of variants",
                         join(where, "text"), hint="write at least one sentence")
        probe = CheckedTransition(where, "line", None, None)
        attach_condition(probe, line.when, join(where, "when"), model, env, diags)
        if one_text and probe.condition is not None and any(
                leaf.field.startswith("skill.") for leaf in leaves(probe.condition)):
            diags.report("E107", "a line of a skill argument reads skill.status, but the "
                         "arguments are sent before the skill has run", join(where, "when"),
                         hint="route on skill.status after the skill, in the node's routes")
        lines.append((texts, probe.condition))
    return lines
