"""Declared skills (SPEC 14.7, 15): the top-level `skills` schema, its checks (E113) and the
IR declarations.

In: the decoded `Scenario` (its `skills` and every node's `params`). Out: E113 diagnostics
(`check_skills`) and the `ir.SkillDecl` list the IR carries (`declarations`, the built-ins
left out: they are declared implicitly, `ir.BUILTIN_SKILLS`).
E113 is: an undeclared skill on a node, an undeclared or missing required argument, a
declaration of an unknown kind or value type, and an invalid webhook: a URL that is neither
http(s) nor a whole `${NAME}` form, a `${` in any other form (a typo would be sent as text),
a budget over 30 s, negative retries, `params.timeout_ms` on a webhook node (its budget is
`timeout_seconds`, SPEC 17.9), an argument written as conditional lines (a text) that is
declared of another type than string. What only a scenario posted to the API may not do (`${NAME}` at
all, an internal host: SPEC 15, 17.9) is the service's check (`interpreter/service/webhooks.py`),
made on the posted text before it is compiled.
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urlsplit

import msgspec
from msgspec import Meta

from interpreter import ir

from .diagnostics import Diagnostics, closest, join
from .texts import is_lines

Int = Annotated[int, Meta(ge=ir.INT_MIN, le=ir.INT_MAX)]
ENV_FORM = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")  # the whole value, nothing else
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 token
# The request headers Mago sets itself (SPEC 15): a declaration may not replace them.
RESERVED_HEADERS = frozenset({"idempotency-key", "content-type", "content-length", "host",
                              "user-agent", "transfer-encoding"})
DECLARED_KINDS = ("python", "webhook")
TYPES_HINT = "types: " + ", ".join(ir.SkillField.TYPES)


class _Schema(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    pass


class ArgumentDef(_Schema, kw_only=True):
    type: str = "any"
    required: bool = False


class ResultFieldDef(_Schema, kw_only=True):
    type: str = "any"


class SkillDef(_Schema, kw_only=True):
    """`skills.NAME`: a python entry point or a webhook (url, budget, retries, headers)."""

    type: str
    description: str = ""
    arguments: dict[str, ArgumentDef] = {}
    result: dict[str, ResultFieldDef] = {}
    url: str | None = None
    timeout_seconds: float | None = None
    retries: Int | None = None
    headers: dict[str, str] = {}


# --- checks ---------------------------------------------------------------------------------


def check_skills(scenario: Any, diags: Diagnostics) -> None:
    """E113 for every bad declaration and every node that runs a skill wrongly."""
    declared = dict(getattr(scenario, "skills", None) or {})
    for name, decl in declared.items():
        if isinstance(decl, SkillDef):
            check_declaration(name, decl, join("/skills", name), diags)
    graph = getattr(scenario, "graph", None)
    for i, node in enumerate(getattr(graph, "nodes", None) or []):
        params = getattr(node, "params", None)
        if params is not None and isinstance(params.skill, str):
            check_node_skill(params, declared, join("/graph/nodes", i, "params"), diags)


def check_declaration(name: str, decl: SkillDef, path: str, diags: Diagnostics) -> None:
    if name in ir.BUILTIN_SKILLS:
        diags.report("E113", f"skill '{name}' is built in and may not be declared again",
                     path, hint="remove the declaration or give your skill another name",
                     at_key=True)
    if decl.type not in DECLARED_KINDS:
        diags.report("E113", f"skill '{name}' has unknown type '{decl.type}'", join(path, "type"),
                     hint="a declared skill is of type python or webhook")
    for part, fields in (("arguments", decl.arguments), ("result", decl.result)):
        for field, spec in fields.items():
            if spec is not None and spec.type not in ir.SkillField.TYPES:
                diags.report("E113", f"skill '{name}' {part} '{field}' has unknown type "
                             f"'{spec.type}'", join(path, part, field, "type"), hint=TYPES_HINT)
    if decl.type == "webhook":
        check_webhook(name, decl, path, diags)
    elif decl.type == "python":
        for key in ("url", "timeout_seconds", "retries"):
            if getattr(decl, key) is not None:
                diags.report("E113", f"skill '{name}' is a python skill: '{key}' is only for "
                             "webhooks", join(path, key), hint="remove it, or make it a webhook")


def check_webhook(name: str, decl: SkillDef, path: str, diags: Diagnostics) -> None:
    if decl.url is None:
        diags.report("E113", f"webhook '{name}' has no url", path,
                     hint='give "url": "https://..." or "${ENV_NAME}"')
    else:
        problem = url_problem(decl.url)
        if problem:
            diags.report("E113", f"webhook '{name}' {problem}", join(path, "url"),
                         hint='the url is "https://host/path", "http://host/path" or '
                              'exactly "${ENV_NAME}"')
    seconds = decl.timeout_seconds
    if seconds is not None and not 0 < seconds <= ir.SkillDecl.MAX_SECONDS:
        diags.report("E113", f"webhook '{name}' timeout_seconds must be over 0 and at most "
                     f"{ir.SkillDecl.MAX_SECONDS}, got {seconds:g}", join(path, "timeout_seconds"),
                     hint="the budget covers every retry; a turn must not wait longer")
    if decl.retries is not None and not 0 <= decl.retries <= 10:
        diags.report("E113", f"webhook '{name}' retries must be 0 to 10, got {decl.retries}",
                     join(path, "retries"))
    for header, value in decl.headers.items():
        where = join(path, "headers", header)
        if not HEADER_NAME.fullmatch(header) or header.lower() in RESERVED_HEADERS:
            diags.report("E113", f"webhook '{name}' may not set header '{header}'", where,
                         hint="Mago sets Idempotency-Key, Content-Type and User-Agent itself",
                         at_key=True)
        elif "${" in value and not ENV_FORM.fullmatch(value):
            diags.report("E113", f"webhook '{name}' header '{header}' has a ${{...}} that is "
                         "not a whole ${ENV_NAME} form", where,
                         hint="write the whole value as ${ENV_NAME} (capitals, digits, _)")
        elif "\r" in value or "\n" in value:
            diags.report("E113", f"webhook '{name}' header '{header}' holds a line break", where)


def url_problem(url: str) -> str | None:
    """Why `url` cannot be a webhook's address, or None."""
    if ENV_FORM.fullmatch(url):
        return None
    if "${" in url:
        return "url has a ${...} that is not the whole ${ENV_NAME} form"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return f"url has scheme '{parts.scheme}'" if parts.scheme else "url has no scheme"
    if not parts.hostname:
        return "url has no host"
    if parts.username or parts.password:
        return "url holds a user name or password (use a ${ENV_NAME} header)"
    return None


def check_node_skill(params: Any, declared: dict, path: str, diags: Diagnostics) -> None:
    name = params.skill
    decl = declared.get(name)
    if decl is None and name not in ir.BUILTIN_SKILLS:
        meant = closest(name, [*declared, *ir.BUILTIN_SKILLS])
        diags.report("E113", f"skill '{name}' is not declared", join(path, "skill"),
                     hint=f"did you mean '{meant}'?" if meant else
                     f'declare it: "skills": {{"{name}": {{"type": "python"}}}}')
        return
    if not isinstance(decl, SkillDef) and name not in ir.BUILTIN_SKILLS:
        return  # the declaration itself is broken: reported there
    fields = argument_fields(name, decl)
    args = params.skill_args if isinstance(params.skill_args, dict) else {}
    for arg in args:
        if arg not in fields:
            meant = closest(arg, fields)
            diags.report("E113", f"skill '{name}' has no argument '{arg}'",
                         join(path, "skill_args", arg), at_key=True,
                         hint=f"did you mean '{meant}'?" if meant else
                         "arguments: " + (", ".join(fields) or "none"))
    for arg, value in args.items():
        kind = argument_type(name, decl, arg)
        if is_lines(value) and kind not in (None, "string", "any"):
            diags.report("E113", f"skill '{name}' argument '{arg}' is written as lines, which "
                         f"make a text, but it takes {kind}", join(path, "skill_args", arg),
                         hint="write lines only for a string argument")
    for arg, required in fields.items():
        if required and arg not in args:
            diags.report("E113", f"skill '{name}' needs argument '{arg}'", join(path, "skill_args"
                         if params.skill_args else "skill"), hint=f"add \"{arg}\" to skill_args")
    if isinstance(decl, SkillDef) and decl.type == "webhook" and params.timeout_ms is not None:
        diags.report("E113", f"webhook '{name}' takes its budget from timeout_seconds, not "
                     "params.timeout_ms", join(path, "timeout_ms"),
                     hint=f"remove timeout_ms; set skills.{name}.timeout_seconds")


def argument_fields(name: str, decl: SkillDef | None) -> dict[str, bool]:
    """Argument name -> required, for a declared or built-in skill."""
    if decl is None:
        return {f.name: f.required for f in ir.BUILTIN_SKILLS[name].arguments}
    return {arg: bool(spec.required) for arg, spec in decl.arguments.items() if spec is not None}


def argument_type(name: str, decl: SkillDef | None, arg: str) -> str | None:
    """The declared type of one argument of a declared or built-in skill (None: none)."""
    if decl is None:
        return next((f.value_type for f in ir.BUILTIN_SKILLS[name].arguments
                     if f.name == arg), None)
    spec = decl.arguments.get(arg)
    return spec.type if spec is not None else None


# --- IR -------------------------------------------------------------------------------------


def declarations(scenario: Any) -> list[ir.SkillDecl]:
    """The scenario's declared skills as IR records, in declaration order."""
    found = []
    for name, decl in (getattr(scenario, "skills", None) or {}).items():
        found.append(ir.SkillDecl(
            name, decl.type,
            [ir.SkillField(arg, spec.type, spec.required) for arg, spec in decl.arguments.items()],
            [ir.SkillField(field, spec.type) for field, spec in decl.result.items()],
            url=decl.url or "", headers=sorted(decl.headers.items()),
            **{key: value for key, value in (("timeout_seconds", _seconds(decl.timeout_seconds)),
                                             ("retries", decl.retries)) if value is not None}))
    return found


def _seconds(value: float | None) -> float | None:
    """A budget as the IR keeps it: a float, so that an encoded and a decoded program encode
    alike (`5` would decode as `5.0`)."""
    return None if value is None else float(value)


# --- mgc inspect ----------------------------------------------------------------------------


def inspect_skills(program: ir.Program) -> list[dict]:
    """Every skill the scenario may run, the built-ins included (SPEC 17.24), as data. A
    webhook's url and headers are shown as written (a `${NAME}` stays a name)."""
    found = []
    for decl in [*ir.BUILTIN_SKILLS.values(), *program.skills]:
        item = {"name": decl.name, "type": decl.kind,
                "arguments": {a.name: {"type": a.value_type, "required": a.required}
                              for a in decl.arguments},
                "result": {f.name: f.value_type for f in decl.result}}
        if decl.kind == "webhook":
            item.update(url=decl.url, timeout_seconds=decl.timeout_seconds,
                        retries=decl.retries, headers=[name for name, _ in decl.headers])
        found.append(item)
    return found


def skill_lines(skills: list[dict]) -> list[str]:
    """`mgc inspect`'s lines for the skills: one per skill, arguments (`*` required), result."""
    out = []
    for item in skills:
        args = ", ".join(f"{name}{'*' if spec['required'] else ''}: {spec['type']}"
                         for name, spec in item["arguments"].items())
        result = ", ".join(f"{name}: {kind}" for name, kind in item["result"].items())
        where = f" POST {item['url']} within {item['timeout_seconds']:g} s, " \
                f"{item['retries']} retries" if item["type"] == "webhook" else ""
        out.append(f"  skill {item['name']} ({item['type']}){where}: ({args}) -> {{{result}}}")
    return out
