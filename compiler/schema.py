"""Scenario schema (v2) as msgspec Structs, and the decoder that reports every problem.

In: the scenario file's text. Out: a `Scenario` (possibly with damaged parts replaced by
neutral values) plus diagnostics E001, E002, E010-E013, each with a JSON pointer.

Valid input takes the fast path: one typed `msgspec.json.decode`. When that fails, the
document is decoded untyped and converted element by element (`convert_struct`), so that
every unknown, missing or mistyped field is reported, not only the first. A field that
fails keeps a neutral value so that later passes see the element (a node with a bad `name`
still exists: references to it do not cascade into unknown-target errors).

Text that is no valid Unicode: a JSON escape of a lone surrogate (`"\\udfff"`) decodes to a
string no encoder accepts (the IR, the JSON report). A text with such an escape skips the
fast path; `without_lone_surrogates` scans every string and key of the decoded value once,
reports each that holds one (E012, at the escape), replaces it by U+FFFD and rejects its
pointer, so later passes never see a surrogate nor report the place again. Last,
`metadata.name` must be one line of text (`interpreter.names`, E012).
"""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from interpreter.ir import (DEFAULT_CLOSING_ACTS, INT_MAX, INT_MIN, INT_RANGE_HINT,
                            SAFETY_CATEGORIES, fits_int64)
from interpreter.names import NAME_RULE, name_problem

from .diagnostics import Diagnostic, Diagnostics, closest, join
from .skilldecls import SkillDef

NODE_ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
NodeId = Annotated[str, Meta(pattern=NODE_ID_PATTERN)]
# The IR stores integers in 64 bits; a larger one is an E012 here, not a crash at emission.
Int = Annotated[int, Meta(ge=INT_MIN, le=INT_MAX)]
Absent = msgspec.UnsetType
ABSENT = msgspec.UNSET


class _Schema(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    pass


class Metadata(_Schema, kw_only=True):
    name: str
    language: str = "ko"
    version: str = ""
    description: str = ""
    # SPEC 14.1, 17.18: how numeric dates are read (default mdy for en, ymd for ko), and the
    # IANA timezone of "today" (default the server's)
    date_order: Literal["mdy", "dmy", "ymd"] | None = None
    timezone: str = ""


class Prompts(_Schema, kw_only=True):
    bot: str = ""
    nlu: str = ""


class IntentDef(_Schema, kw_only=True):
    description: str = ""
    examples: list[str] = []
    patterns: list[str] = []
    threshold: Annotated[float, Meta(ge=0.0, le=1.0)] | None = None  # SPEC 13.2


ItemType = Literal["string", "enum", "email", "integer", "number"]  # a list slot's items


class SlotDef(_Schema, kw_only=True):
    policy: Literal["required", "optional"]
    value_type: Literal["string", "integer", "number", "boolean", "enum", "email", "list",
                        "date", "time"]
    values: list[str] | Absent = ABSENT
    synonyms: dict[str, list[str]] = {}
    description: str = ""
    question: str | None = None
    # numbers; for a date slot an ISO date, "today", "today+Nd" or "today-Ny"; for a time
    # slot HH:MM (SPEC 14.1)
    min: Int | float | str | None = None
    max: Int | float | str | None = None
    min_length: Int | None = None
    max_length: Int | None = None
    pattern: str | None = None
    # None: "append" for a list slot, "overwrite" for the others (SPEC 8.2)
    on_conflict: Literal["overwrite", "keep", "confirm", "append"] | None = None
    default: Any = None  # a literal of the slot's type, or "{profile.NAME}" (SPEC 8.2)
    items: ItemType | None = None  # the item type of a list slot
    min_items: Int | None = None
    max_items: Int | None = None
    # SPEC 14.2: text steps applied to a heard value before its pattern (string slots)
    normalize: list[Literal["trim", "lower", "upper", "collapse_spaces", "remove_spaces"]] = []
    labels: dict[str, str] = {}  # SPEC 14.3: enum member -> the words said for it
    # SPEC 18.3-18.5: stored on a decline; stored on a bare yes / no at the collecting node
    # (enum slots); phrases that are never read as a member
    none_value: Any = None
    affirm_value: str | None = None
    deny_value: str | None = None
    not_synonyms: dict[str, list[str]] = {}


class ProfileFieldDef(_Schema, kw_only=True):
    """A field of the session profile (SPEC 8.1): a slot's value type and constraints,
    without policy or question."""

    value_type: Literal["string", "integer", "number", "boolean", "enum", "email", "date", "time"]
    values: list[str] | Absent = ABSENT
    synonyms: dict[str, list[str]] = {}
    description: str = ""
    min: Int | float | str | None = None
    max: Int | float | str | None = None
    min_length: Int | None = None
    max_length: Int | None = None
    pattern: str | None = None


# A response (SPEC 9): one sentence, or a list of variants said in rotation. What the schema
# of editors adds (at least one variant, none empty, none twice) is checked by the resolver
# (E111), so the decoder itself takes any list of strings.
Variants = Annotated[list[Annotated[str, Meta(extra_json_schema={"minLength": 1})]],
                     Meta(extra_json_schema={"minItems": 1, "uniqueItems": True})]


class LineDef(_Schema, kw_only=True):
    """One line of a conditional response (SPEC 14.4): said when `when` holds (always when
    absent); its text may be a list of variants."""

    text: str | Variants
    when: Any = ABSENT


class LinesDef(_Schema, kw_only=True):
    """A response made of conditional lines (SPEC 14.4, 17.21), joined by `join`."""

    lines: Annotated[list[LineDef], Meta(min_length=1)]
    join: Literal[" ", "\n"] = " "


Response = str | Variants | LinesDef | None
# SPEC 14.4, 17.21: an argument's value, or its text as lines (checked by `lines`).
SkillArgs = Annotated[dict[str, Any], Meta(extra_json_schema={"additionalProperties": {
    "anyOf": [{"$ref": "#/$defs/LinesDef"}, {}]}})]


class Responses(_Schema, kw_only=True):
    default: Response = None
    no_input: Response = None
    not_understood: Response = None
    turn_limit: Response = None
    complete: Response = None


class Params(_Schema, kw_only=True):
    max_turns: Int | None = None
    min_turns: Int = 1
    max_fallback_retries: Int = 2
    turn_limit_enabled: bool = True
    skill: str | None = None
    skill_args: SkillArgs = {}
    fallback: str | None = None
    timeout_ms: Int | None = None
    skip_if_filled: bool = True  # SPEC 8.3: a task node whose slots are known is passed
    clear_slots: list[str] | Literal["all"] = []  # SPEC 8.5: cleared when a turn enters
    expects: Literal["intent", "slot", "any"] | None = None  # SPEC 13.3


# SPEC 14.5, 17.20: slot -> a literal of its type, null (clear), {"copy": SLOT} or
# {"add": N}; the forms are checked by the resolver (`sets`: E114, E204).
SlotSets = dict[str, Any]


class TransitionDef(_Schema, kw_only=True):
    target: str | None = None
    action: str | None = None
    condition: Any = ABSENT
    set: SlotSets = {}
    name: str | None = None  # SPEC 18.8: the route's reason is then `next:NAME`


class GlobalTransitionDef(_Schema, kw_only=True):
    name: str | None = None
    target: str
    condition: Any
    set: SlotSets = {}


class DefaultNextDef(_Schema, kw_only=True):
    """`default_next` as an object (SPEC 17.20): its target and what it sets."""

    target: str
    set: SlotSets = {}


class OnEnterDef(_Schema, kw_only=True):
    """`on_enter` (SPEC 14.5): what a node sets when a turn enters it, before its skill."""

    set: SlotSets = {}


class NodeDef(_Schema, kw_only=True):
    id: NodeId
    name: str = ""
    description: str
    responses: Responses = msgspec.field(default_factory=Responses)
    params: Params = msgspec.field(default_factory=Params)
    collect_slots: list[str] = []
    next_nodes: list[TransitionDef] = []
    default_next: str | DefaultNextDef | None = None
    terminal: bool = False
    transient: bool = False  # SPEC 8.3: never waits for the user
    on_enter: OnEnterDef | None = None
    routes: list[str] = []  # SPEC 14.6: route groups appended after next_nodes


# A safety category (SPEC 10). Written as text, so that a misspelling is E110 with a
# did-you-mean rather than a bare type error.
Category = Annotated[str, Meta(description="a safety category: " + ", ".join(SAFETY_CATEGORIES),
                               examples=list(SAFETY_CATEGORIES))]


class SafetyRuleDef(_Schema, kw_only=True):
    """`graph.safety`: a turn whose safety category is `category` goes to `target` first."""

    category: Category
    target: str
    name: str | None = None


class SafetyPatternDef(_Schema, kw_only=True):
    """`safety.patterns`: a crisis expression of this scenario, beside the built-in lexicon."""

    category: Category
    pattern: str
    negatable: bool = True  # SPEC 13.4: a negation outside the match cancels it


class SafetyDef(_Schema, kw_only=True):
    patterns: list[SafetyPatternDef] = []


class Graph(_Schema, kw_only=True):
    entry: str
    bot_first: bool = False
    closing_acts: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_CLOSING_ACTS))
    global_transitions: list[GlobalTransitionDef] = []
    safety: list[SafetyRuleDef] = []
    nodes: Annotated[list[NodeDef], Meta(min_length=1)]
    route_groups: dict[str, list[TransitionDef]] = {}  # SPEC 14.6


class Scenario(_Schema, kw_only=True):
    metadata: Metadata
    prompts: Prompts = msgspec.field(default_factory=Prompts)
    intents: dict[str, IntentDef] = {}
    slots: dict[str, SlotDef] = {}
    profile: dict[str, ProfileFieldDef] = {}
    safety: SafetyDef = msgspec.field(default_factory=SafetyDef)
    skills: dict[str, SkillDef] = {}  # SPEC 14.7 (compiler.skilldecls)
    graph: Graph


# Fields of scenario v1 and what replaces them (E013).
REMOVED_FIELDS: dict[str, str] = {
    "type": "the executor is decided by structure: `params.skill` makes a skill node, "
    "non-empty `collect_slots` a task node",
    "executor": "the executor is decided by structure: `params.skill` makes a skill node, "
    "non-empty `collect_slots` a task node",
    "transitions": "use `next_nodes` (conditional) and `default_next`",
    "start_node": "use `graph.entry`",
    "next": "use `default_next`",
    "end": "use `\"terminal\": true` on the node",
}
REPLACED_BY = {"start_node": "entry", "next": "default_next", "transitions": "next_nodes",
               "end": "terminal"}
STAY_SENTINEL = "__stay__"
_INVALID = object()  # the text is not JSON (distinct from a JSON null)


def decode_scenario(text: str, diags: Diagnostics) -> Scenario | None:
    """The scenario in `text`, or None when the document is unusable (E001/E002)."""
    scenario = _decode(text, diags)
    if scenario is not None and isinstance(scenario.metadata, Metadata):
        check_name(scenario.metadata.name, diags)
        check_language(scenario.metadata.language, diags)
    return scenario


_LANGUAGE_TAG = re.compile(r"(?i)(ko|en)(-[a-z0-9]{1,8})*")  # SPEC 13.1, 17.16: BCP 47 tags


def check_language(language: Any, diags: Diagnostics) -> None:
    """E012 for a `metadata.language` that is not Korean or English (`ko`, `en`, or a BCP 47
    tag whose primary subtag is one of them: `ko-KR`, `en-GB`)."""
    if isinstance(language, str) and not _LANGUAGE_TAG.fullmatch(language):
        diags.report("E012", f"metadata.language {language!r} is not a language the rules NLU "
                     "reads", "/metadata/language",
                     hint="write \"ko\" or \"en\" (or a tag such as \"ko-KR\", \"en-US\")")


def check_name(name: Any, diags: Diagnostics) -> None:
    """E012 for a `metadata.name` that is not one line of printable text."""
    found = name_problem(name) if isinstance(name, str) else None
    if found is not None:
        offset, char = found
        diags.report("E012", f"metadata.name contains {char}, so it is not one line of text",
                     "/metadata/name", hint=NAME_RULE, string_offset=offset)


def _decode(text: str, diags: Diagnostics) -> Scenario | None:
    if not _SURROGATE_ESCAPE.search(text):  # only an escape can make a lone surrogate
        try:
            return msgspec.json.decode(text, type=Scenario)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            pass
    raw = _decode_untyped(text, diags)
    if raw is _INVALID:
        return None
    raw = without_lone_surrogates(raw, text, diags)
    if not isinstance(raw, dict) or not raw:
        kind = "an empty object" if raw == {} else f"{_json_kind(raw)}"
        diags.report("E002", f"the top level is {kind}; a scenario is a JSON object",
                     "", hint="start from `mgc schema` or scenarios/senimate.json")
        return None
    return convert_struct(raw, Scenario, "", diags)


def _decode_untyped(text: str, diags: Diagnostics) -> Any:
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        pass
    from .jsonpos import JSONSyntaxError, decode_with_positions  # only for broken or deep input

    try:
        return decode_with_positions(text)[0]
    except JSONSyntaxError as error:
        diags.report_at("E001", f"not valid JSON: {error.message}", error.line, error.column,
                        hint="fix the JSON syntax at this position")
        return _INVALID


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
SURROGATE_HINT = "remove the escape (a surrogate is only valid as half of a pair)"


def without_lone_surrogates(raw: Any, text: str, diags: Diagnostics) -> Any:
    """`raw` (decoded from `text`, changed in place) with every lone surrogate replaced by
    U+FFFD. Each string or key that held one is reported once (E012) at its first escape,
    under a pointer that shows the surrogate as its escape, and the cleaned pointer is
    rejected (with that of the condition it is part of), so nothing reports it again."""
    holder = [raw]
    found: list[tuple] = []  # (stack entry, offset in the string or None for a key, surrogate)
    stack: list[tuple] = [(holder, 0, None, None)]  # (container, key, written key, parent)
    while stack:
        entry = stack.pop()
        container, key = entry[0], entry[1]
        value = container[key]
        if isinstance(value, str):
            first = _SURROGATE.search(value)
            if first is not None:
                found.append((entry, first.start(), first.group()))
                container[key] = _SURROGATE.sub("\ufffd", value)
        elif isinstance(value, list):
            stack.extend((value, i, i, entry) for i in range(len(value)))
        elif isinstance(value, dict):
            stack.extend(_members(value, entry, found))
    if found:
        _report_surrogates(found, text, diags)
    return holder[0]


def _members(value: dict, parent: tuple, found: list) -> list[tuple]:
    """Stack entries for the members of `value`, its keys cleaned of surrogates first."""
    if not any(_SURROGATE.search(k) for k in value):
        return [(value, k, k, parent) for k in value]
    items = list(value.items())
    value.clear()
    entries = []
    for written, member in items:
        first = _SURROGATE.search(written)
        key = written if first is None else _SURROGATE.sub("\ufffd", written)
        value[key] = member
        entries.append((value, key, written, parent))
        if first is not None:
            found.append((entries[-1], None, first.group()))
    return entries


def _report_surrogates(found: list[tuple], text: str, diags: Diagnostics) -> None:
    from .jsonpos import decode_with_positions  # only for a file with a surrogate

    locator = decode_with_positions(text)[1]
    for entry, offset, char in found:
        written, cleaned = _pointers(entry)
        place = locator.key(written) if offset is None else locator.string_char(written, offset)
        line, column = place or locator.nearest(written)
        what = "name" if offset is None else "text"
        diags.extend([Diagnostic(
            "E012", f"{what} contains a lone surrogate \\u{ord(char):04x}, which is not valid "
            "Unicode text", _visible(written), SURROGATE_HINT, line, column)])
        diags.rejected.add(cleaned)
        segments = cleaned.split("/")
        if "condition" in segments:  # a condition with a surrogate is not judged further
            diags.rejected.add("/".join(segments[:segments.index("condition") + 1]))


def _pointers(entry: tuple) -> tuple[str, str]:
    """(as written, cleaned) JSON pointers of a stack entry of `without_lone_surrogates`."""
    written, cleaned = [], []
    while entry[3] is not None:
        written.append(entry[2])
        cleaned.append(entry[1])
        entry = entry[3]
    return join("", *reversed(written)), join("", *reversed(cleaned))


def _visible(pointer: str) -> str:
    """`pointer` with each surrogate written as its JSON escape, so that it can be printed."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", pointer)


def convert_struct(raw: Any, struct_type: type, path: str, diags: Diagnostics) -> Any:
    """`raw` converted to `struct_type`, reporting every problem; never raises."""
    if not isinstance(raw, dict):
        diags.report("E012", f"expected an object, got {_json_kind(raw)}", path)
        diags.rejected.add(path)
        return None
    fields = {f.encode_name: f for f in msgspec.structs.fields(struct_type)}
    values: dict[str, Any] = {}
    meant = set()  # fields an unknown key stands for: their absence is already reported
    for key in raw:
        if key not in fields and join(path, key) not in diags.rejected:  # a surrogate: reported
            meant.add(_report_unknown_key(key, fields, join(path, key), diags))
    for name, info in fields.items():
        if name in raw:
            values[info.name] = _convert_value(raw[name], info.type, join(path, name), diags)
        elif info.required:
            if name not in meant:
                diags.report("E011", f"missing required field '{name}'", path,
                             hint=f"add \"{name}\" to this object")
            diags.rejected.add(join(path, name))
            values[info.name] = None
    return struct_type(**values)


def _report_unknown_key(key: str, fields: dict, path: str, diags: Diagnostics) -> str | None:
    """Report an unknown key; return the field it most likely stands for."""
    if key in REMOVED_FIELDS:
        diags.report("E013", f"'{key}' was removed in scenario v2", path,
                     hint=REMOVED_FIELDS[key], at_key=True)
        return REPLACED_BY.get(key)
    meant = closest(key, fields)
    diags.report("E010", f"unknown field '{key}'", path, at_key=True,
                 hint=f"did you mean '{meant}'?" if meant else f"known fields: {', '.join(fields)}")
    return meant


def _convert_value(raw: Any, annotation: Any, path: str, diags: Diagnostics) -> Any:
    """Convert one field value; Structs, lists and dicts of Structs go element by element."""
    base = _strip_annotated(annotation)
    if isinstance(raw, str) and diags.rejected and path in diags.rejected:
        return raw if _takes_text(base) else _neutral(base)  # held a surrogate: reported
    if isinstance(base, type) and issubclass(base, msgspec.Struct):
        return convert_struct(raw, base, path, diags)
    origin, args = typing.get_origin(base), typing.get_args(base)
    struct_arg = args[-1] if args else None
    if _is_struct(struct_arg) and origin is list and isinstance(raw, list):
        if not _check_meta(raw, annotation, path, diags):
            return []
        items = [_convert_value(v, struct_arg, join(path, i), diags) for i, v in enumerate(raw)]
        return [item for item in items if item is not None]
    if origin is dict and isinstance(raw, dict) and args and args[-1] is not Any:
        # Entry by entry, so that a bad value is reported at its key (msgspec says `$[...]`).
        items = {k: _convert_value(v, args[-1], join(path, k), diags) for k, v in raw.items()}
        if _is_struct(struct_arg):
            # A definition that is not an object still declares its name (a placeholder with
            # no type), so that references to it are not reported again as undeclared.
            return {k: _placeholder(struct_arg) if v is None else v for k, v in items.items()}
        return items
    if base is Any:
        return raw
    try:
        return msgspec.convert(raw, annotation)
    except msgspec.ValidationError as error:
        message, suffix = _split_msgspec_error(str(error))
        diags.report("E012", message, path + suffix, hint=_type_hint(base, raw))
        diags.rejected.add(path)
        # A rejected string (a node id that is not an identifier) stays as written, so that
        # references to it resolve and are not reported a second time.
        return raw if isinstance(raw, str) and base is str else _neutral(base)
    except RecursionError:
        diags.report("E012", "value nested too deeply", path)
        diags.rejected.add(path)
        return _neutral(base)


def _takes_text(annotation: Any) -> bool:
    return annotation is str or str in typing.get_args(annotation) or annotation is Any


def _placeholder(struct_type: type) -> Any:
    """An instance of `struct_type` whose required fields are None: declared, type unknown."""
    required = {f.name: None for f in msgspec.structs.fields(struct_type) if f.required}
    return struct_type(**required)


def _type_hint(base: Any, raw: Any) -> str | None:
    """What to write instead, for the common E012 mistakes."""
    args = typing.get_args(base)
    if base == Response:
        return "write a sentence in quotes, or a list of sentences said in turn"
    if isinstance(raw, int) and not fits_int64(raw):
        return INT_RANGE_HINT
    if base is str and isinstance(raw, str):  # only node ids have a pattern
        return "a node id starts with a letter or '_' and uses only letters, digits and '_'"
    if base is bool:
        return "write true or false, without quotes"
    if typing.get_origin(base) is Literal:
        return "one of: " + ", ".join(args)
    if base is int or int in args:
        return "write a whole number, without quotes"
    if typing.get_origin(base) is list:
        return "write a JSON array"
    return None


def _check_meta(raw: list, annotation: Any, path: str, diags: Diagnostics) -> bool:
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, Meta) and meta.min_length and len(raw) < meta.min_length:
            diags.report("E012", "the list must not be empty", path,
                         hint="a scenario needs at least one node")
            return False
    return True


_MSGSPEC_PATH = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_PATH_PART = re.compile(r"\[(\d+)\]|\[(\"(?:[^\"\\]|\\.)*\")\]|\.([^.\[]+)")


def _split_msgspec_error(text: str) -> tuple[str, str]:
    """msgspec's "Expected `str`, got `int` - at `$.x[0]`" -> ("expected ...", "/x/0")."""
    match = _MSGSPEC_PATH.match(text)
    message = match.group("message") if match else text
    message = message[:1].lower() + message[1:]
    suffix = ""
    for index, quoted, name in _PATH_PART.findall((match and match.group("path")) or ""):
        part = index or name or msgspec.json.decode(quoted)
        suffix = join(suffix, part)
    return message, suffix


def _strip_annotated(annotation: Any) -> Any:
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else annotation


def _is_struct(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, msgspec.Struct)


def _neutral(annotation: Any) -> Any:
    """A harmless stand-in for a field whose value was rejected."""
    origin = typing.get_origin(annotation)
    if origin is list or annotation is list:
        return []
    if origin is dict or annotation is dict:
        return {}
    if annotation is bool:
        return False
    if isinstance(annotation, types.UnionType) or origin is typing.Union:
        return None
    return None


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def scenario_json_schema() -> dict:
    """JSON Schema of the scenario format, for editors (`mgc schema`)."""
    return msgspec.json.schema(Scenario)
