"""Texts the bot says or sends: the placeholders of responses, skill fallbacks, skill
arguments and slot questions (SPEC 2.2, 8.1, 14.8, 17.23).

In: a node's (or a slot's) texts and the names they may read. Out: diagnostics. E105 for a
placeholder that names an undeclared slot or profile field, or `{skill.data.KEY}` where no
skill result is readable; E112 for anything else written in braces: an unknown root
(`{slot.x}`, a typo for `slots`), a field of a slot (`{slots.x.y}`), an empty or malformed
placeholder, or a lone brace. `{{` and `}}` write a literal brace, so after this pass every
brace the runtime meets opens a placeholder or is half of an escape.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from interpreter.ir import RESPONSE_KINDS

from .diagnostics import Diagnostics, Names, closest, did_you_mean, join

# The scan of a text: an escaped brace, a braced span, or a lone brace (left to right, so
# `{{slots.x}}` is the literal text `{slots.x}`, as the runtime reads it).
BRACES = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
ROOTS = ("slots", "profile", "skill.data")
ROOT_NAMES = Names(ROOTS)
FORMS = "placeholders are {slots.NAME}, {profile.NAME} and {skill.data.KEY}"
ESCAPE = "write {{ and }} for a literal brace"
MAX_ARGS_DEPTH = 32  # skill arguments are configuration, not data


def placeholders(text: str) -> Iterator[tuple[int, str | None, str | None, str]]:
    """(offset, root, name, written) for every braced span of `text`; root None for a span
    that is no placeholder (unknown root, malformed, a lone brace); escapes are skipped."""
    for match in BRACES.finditer(text):
        written = match.group(0)
        if written in ("{{", "}}"):
            continue
        inner = match.group(1)
        if inner is None:  # a lone brace
            yield match.start(), None, None, written
            continue
        root, name = split_placeholder(inner)
        yield match.start(), root, name, written


def split_placeholder(inner: str) -> tuple[str | None, str]:
    """(root, name) of the text between braces; root None when it is not one of `ROOTS`,
    with `name` then the root as written."""
    if inner.startswith("skill.data."):
        return "skill.data", inner[len("skill.data."):]
    head, dot, rest = inner.partition(".")
    if dot and head in ("slots", "profile"):
        return head, rest
    return None, head if dot else inner


def unknown_placeholder(text: str, offset: int, written: str, name: str | None,
                        path: str, diags: Diagnostics) -> None:
    """E112 for a braced span that is no placeholder, with the placeholder meant, if any."""
    if name is None:
        diags.report("E112", f"a lone '{written}' in the text", path, string_offset=offset,
                     hint=f"{ESCAPE}; {FORMS}")
        return
    inner = written[1:-1]
    head, dot, rest = inner.partition(".")
    meant = closest(head, ROOT_NAMES) if head else None
    if meant is None and head == "skill":  # `{skill.status}`, `{skill.KEY}`
        meant, rest = "skill.data", rest.removeprefix("data.")
    if meant is not None and dot:
        hint = f"did you mean '{{{meant}.{rest}}}'? {FORMS}"
    else:
        hint = f"{FORMS}; {ESCAPE}"
    what = f"unknown placeholder root '{head}'" if dot and head else "not a placeholder"
    diags.report("E112", f"{what} in '{written}'", path, string_offset=offset, hint=hint)


def check_text(text, path: str, slots: Names, profile: Names, skill_data: str | None,
               used: set[str], diags: Diagnostics) -> None:
    """Every placeholder of one text; `skill_data`: None where a skill result is readable,
    else the hint saying why it is not."""
    if not isinstance(text, str) or ("{" not in text and "}" not in text):
        return
    for offset, root, name, written in placeholders(text):
        if root is None:
            unknown_placeholder(text, offset, written, name, path, diags)
        elif not name:
            diags.report("E112", f"not a placeholder: '{written}' names nothing", path,
                         string_offset=offset, hint=FORMS)
        elif root == "slots":
            check_slot_name(name, written, offset, path, slots, used, diags)
        elif root == "profile" and name not in profile:
            diags.report("E105", f"undeclared profile field '{name}'", path,
                         string_offset=offset,
                         hint=did_you_mean(name, profile) or 'declare it under "profile"')
        elif root == "skill.data" and skill_data is not None:
            diags.report("E105", f"placeholder '{written}' {skill_data[0]}", path,
                         hint=skill_data[1], string_offset=offset)


def check_slot_name(name: str, written: str, offset: int, path: str, slots: Names,
                    used: set[str], diags: Diagnostics) -> None:
    """`{slots.NAME}`: a declared slot (E105), not a field of one (E112: a slot's value is
    said whole)."""
    if name in slots:
        used.add(name)
        return
    head = name.partition(".")[0]
    if head in slots:
        used.add(head)
        diags.report("E112", f"unknown field '{name[len(head) + 1:]}' of slot '{head}' in "
                     f"'{written}'", path, string_offset=offset,
                     hint=f"a slot's value is said whole: write {{slots.{head}}}")
        return
    diags.report("E105", f"undeclared slot '{name}'", path, string_offset=offset,
                 hint=did_you_mean(name, slots) or "declare it under \"slots\"")


NO_SKILL = ("on a node without a skill", "only a node with params.skill (or one a transient "
            "skill node leads to) has skill.data")
OWN_ARGS = NO_SKILL  # a skill's arguments are sent before its result exists
IN_QUESTION = ("in a slot question", "a slot's question is asked at any node: skill.data is "
               "readable only in a node's responses")


def check_node_texts(node, path: str, slots: Names, profile: Names, used: set[str],
                     diags: Diagnostics, skill_fed: bool = False) -> None:
    """Every placeholder of a node's responses, fallback and skill argument texts;
    `{skill.data.KEY}` only where a skill result is readable (a skill node, or where a
    transient skill node leads: `skill_fed`) and not in the arguments of the skill."""
    readable = None if node.params.skill is not None or skill_fed else NO_SKILL
    texts = response_texts(node)
    texts.append((("params", "fallback"), node.params.fallback))
    for where, text in texts:
        check_text(text, join(path, *where), slots, profile, readable, used, diags)
    for where, text in argument_texts(node.params.skill_args):
        check_text(text, join(path, *where), slots, profile, OWN_ARGS, used, diags)


def check_questions(scenario, slots: Names, profile: Names, used: set[str],
                    diags: Diagnostics) -> None:
    """The placeholders of every slot question (filled like a response when it is asked)."""
    for name, slot in scenario.slots.items():
        question = getattr(slot, "question", None)
        check_text(question, join("/slots", name, "question"), slots, profile, IN_QUESTION,
                   used, diags)


def response_texts(node) -> list[tuple[tuple, str]]:
    """(path below the node, text) of every response variant, a plain string as one."""
    texts = []
    for kind in RESPONSE_KINDS:
        value = getattr(node.responses, kind)
        if isinstance(value, str):
            texts.append((("responses", kind), value))
        elif isinstance(value, list):
            texts += [(("responses", kind, i), text) for i, text in enumerate(value)]
        elif value is not None and hasattr(value, "lines"):  # conditional lines (SPEC 14.4)
            for i, line in enumerate(value.lines):
                where = ("responses", kind, "lines", i, "text")
                if isinstance(line.text, str):
                    texts.append((where, line.text))
                elif isinstance(line.text, list):
                    texts += [((*where, j), text) for j, text in enumerate(line.text)]
    return texts


def is_lines(value) -> bool:
    """Whether a skill argument is written as conditional lines (SPEC 14.4, 17.21): an
    object with `lines`. Only an argument's own value is read so; deeper, it is data."""
    return isinstance(value, dict) and "lines" in value


def argument_texts(args: dict) -> list[tuple[tuple[str, ...], str]]:
    """((params, skill_args, key...), text) for every text in the skill arguments (of an
    argument written as lines, its lines' texts: a `when` is a condition, not a text)."""
    found: list = []
    stack: list = [(("params", "skill_args", key), value) for key, value in args.items()
                   if not is_lines(value)]
    for key, value in args.items():
        made = value.get("lines") if is_lines(value) else None
        for i, line in enumerate(made if isinstance(made, list) else ()):
            if isinstance(line, dict) and "text" in line:
                stack.append((("params", "skill_args", key, "lines", str(i), "text"),
                              line["text"]))
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            found.append((where, item))
        elif isinstance(item, (dict, list)) and len(where) <= MAX_ARGS_DEPTH:
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend(((*where, str(key)), child) for key, child in pairs)
    return found
