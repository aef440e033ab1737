"""The IR's conditional lines (SPEC 14.4, 17.21): what a node holds of them and their check.

In: a decoded `ir.Node` and the program's field table. Out: what is wrong with its lines, or
None (`lines_problem`, called by `ir.check_node`). A node holds two kinds: `Node.lines`,
response kind -> `Lines` said by the NLG, and `Node.skill_lines` (format 8), skill argument
-> `Lines` rendered into that argument's text when the skill runs. A line of an argument
has exactly one text: an argument is sent once, so there is no rotation to say variants in.
The records themselves (`Line`, `Lines`) are `interpreter/fields.py`'s, shared by both.
"""

from collections.abc import Sequence
from typing import Any

from .fields import FieldType, Lines, _shown, check_condition

JOINS = (" ", "\n")  # SPEC 14.4: how the lines said are joined


def lines_problem(node: Any, kinds: Sequence[str], fields: Sequence[FieldType]
                  ) -> tuple[str, str] | None:
    """(the part, what is wrong) for the first unusable lines of `node`, or None: a response
    kind of `kinds` with at least one line, a known join, each condition well formed and
    typed (`check_condition`); an argument's lines with one text each."""
    for kind, made in node.lines.items():
        problem = None if kind in kinds else "is not usable"
        problem = problem or _made_problem(made, fields, None)
        if problem is not None:
            return f"lines of {_shown(kind)}", problem
    for argument, made in node.skill_lines.items():
        problem = "has no skill" if node.skill is None else None
        problem = problem or _made_problem(made, fields, 1)
        if problem is not None:
            return f"skill argument {_shown(argument)} lines", problem
    return None


def _made_problem(made: Lines, fields: Sequence[FieldType], texts: int | None) -> str | None:
    if not made.lines or made.join not in JOINS:
        return "is not usable"
    for line in made.lines:
        if not line.texts or (texts is not None and len(line.texts) != texts):
            return "has a line with no text" if not line.texts else "has a line with variants"
        problem = check_condition(line.when, fields)
        if problem is not None:
            return problem
    return None
