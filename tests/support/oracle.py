"""A second, deliberately simple implementation of SPEC 6.1/6.2 and 8, for differential testing.

In: a scenario as a JSON dict (the source, never the IR) that the compiler accepted, a session
profile, then user turns given as text plus a scripted NLU result (`{"intent",
"dialogue_act", "slots", "confidence"}`, or None: not understood) and the pause before each.
Out: per turn a `Step` with the node the turn was handled in, where the session is now (None
once complete), the reason code, completion, the slots after the turn and the nodes it
passed through; `Oracle.lines_problem` judges the conditional lines a reply shows (SPEC
14.4) on `Step.facts`, the speaking node's facts after the move (17.21: the turn's reading
and counters, the node's visit, its slots); a skill argument written as lines is rendered
from the same facts (`argument_lines`). SPEC 14.5-14.6 are here too: `set` on rows, `default_next` objects, group rows and
`on_enter`; route groups appended after a node's own rows. State is a plain dict (`Oracle.start` makes one, `Oracle.turn`
returns a new one and never changes its input), so a breadth-first search can branch on it.

It imports nothing from `interpreter`: the tables (acts, defaults, operators) are written
out again below from SPEC, and conditions are evaluated here, from the JSON object form or,
for the expression form, from the AST that `compiler.expressions.parse_expression` builds
(the grammar is out of scope; its evaluation is not).

Safety (SPEC 10): the crisis detector is an input, like the NLU result: `Oracle(scenario,
detect)` takes a function text -> category or None (the tests pass the real detector of the
compiled scenario; without one nothing is detected). The turn is the oracle's own: the
detector's finding is kept, else the NLU result's `safety` when it is a category; silence has
none; a null act with a category is read as inform (IMPL); a category with a `graph.safety`
rule goes to its target before the fallback policy and Action END (`safety:CATEGORY`), a rule
to the current node holding it like a stay; `nlu.safety` is the category or "none".

Where SPEC is silent and the implementation had to be read (each is marked `IMPL:` below):
- NLU reading: an act name outside the catalogue (and not `negate`) is read as `null`; an
  empty or whitespace text is `silence` whatever the override says, and its slots and intent
  are ignored; the `text` of the result is the raw user text (`nlu.text`).
- slot values (`interpreter/slots.py` documents these): integers accept integral floats and
  decimal strings, numbers accept numeric strings, booleans accept "true"/"false", enums
  accept a member in another case, strings and emails are stripped, a blank string is
  "nothing heard"; a whole number outside 64 bits is invalid (a session must stay
  storable); `overwrite` does not re-store an equal value; a pending confirmation is
  resolved by the next understood turn before the turn's own values are offered (affirm
  stores, deny keeps, any other understood act drops the offer); silence and null leave it
  pending; a second `confirm` conflict while one is pending is dropped.
- `gate:confirmation` (docs/concepts/tasks.md): on the turn a confirmation is raised the node holds, after
  the min_turns and required-slot gates and, like them, not when the turn limit is reached.
- `system.fallback_exhausted` is true on the turn where a silent or not-understood input
  found the budget spent (it is recomputed every turn, not latched), and the retry counter
  resets on any understood turn; on a re-prompt turn the turn limit is not evaluated.
- skills: the skill runs after routing, for the node that speaks (the target on a move, the
  current node otherwise), when it has not run in this visit; with bot-first off the entry's
  skill therefore first runs after turn 1 (`skill.status` is `none` while turn 1 routes).
  The built-in `weather` skill is `ok` for a known location of its offline table (default
  location 서울), `failed` otherwise; an unknown skill is `failed`. `email` is the stand-in
  the tests run (`test_differential.EmailStub`: nothing is sent): `ok` when its `to` and
  `from` arguments fill to two different texts, `failed` otherwise. Text arguments are
  filled by plain lookup (`{slots.X}`, `{profile.X}`; a placeholder without a value is empty
  text). (A run slower than `timeout_ms` is `timeout`; the weather table never is, so callers
  should not give skill nodes a tiny `timeout_ms` when they compare.)
- global transition labels: `global:NAME` when the name is a non-empty string, else
  `global[i]`.
- tier `idle` (docs/concepts/tasks.md): on a turn the fallback policy would re-prompt,
  the global transitions whose condition reads `system.idle_seconds` are tried first (in
  order, not one to the current node), on the turn's facts with the budget not spent; one
  that holds moves (after a long pause the first words, understood or not, end the task).

Progressive tasks (SPEC 8), modelled from the scenario JSON like the rest:
- profile (8.1): `start(profile=...)` checks each value against its declaration with the slot
  rules below (`ValueError` naming the field for an undeclared or invalid one; a null value
  is not given); `profile.NAME` is a condition field, null when not given.
- `system.idle_seconds`: `turn(..., idle=SECONDS)` is the pause before the turn; the fact is
  its whole seconds, 0 when the session had no turn before (IMPL: `int`, never negative).
  `system.slots_updated`: the slot step stored or changed a value (an affirmed confirmation
  counts; defaults do not). `system.slot_declined` (18.3): see `declined`; true for the
  turn, at the node it enters too; false at an opening.
- lists (8.2): one item or a list of items, each checked by the item type (one bad item drops
  the whole value), repeats removed, an empty list is nothing heard; `append` (the default
  for lists) adds the new items, and a result beyond `max_items` is dropped (IMPL: the whole
  value, the stored list stays). A list counts as filled (required gate, `skip:filled`)
  with at least `min_items` items (any non-empty list without it). `contains` tests an item.
- defaults (8.2): on a move away from a node (not a stay, not completion), each of its
  collect slots still empty gets its default: the literal (IMPL: the compiler stores it
  normalized), or the profile's value when the profile has one and the slot accepts it
  (SPEC 2.1: a value that breaks its slot's rules is never stored; one item becomes a
  one-item list).
- `params.clear_slots` (8.5): on entering a node (after the defaults of the node left), its
  slots are cleared, and a confirmation pending on one of them is dropped.
- entry routing (8.3): after a move, a node that does not wait (transient, or a task node
  with min_turns 1, `skip_if_filled` not false and every collect slot filled) runs its skill
  (if it has one and has not run in this visit) and takes its own `next_nodes`, then
  `default_next`, on the turn's facts with a fresh visit (node turn 0, no limit, no
  fallback, min_turns not met, its own gate and skill status); a matching `stay` makes it
  wait; a target is a hop (reason `next_nodes[i]`/`default_next` for a transient node,
  `skip:filled` for a task node), with the defaults and clearing of a move; no route
  completes a transient end node (`terminal`) and holds any other. A node reached a second
  time in one turn waits. A node entered keeps the skill result it was carried unless it
  runs a skill of its own. `Step.passed` lists ((node, reason), ...).
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
import dataclasses
from dataclasses import dataclass
from typing import Any

from compiler.condition_ast import NO_VALUE, And, Leaf, Not, Or
from compiler.diagnostics import Diagnostics
from compiler.expressions import parse_expression

ACTS = ("affirm", "deny", "inform", "question", "greet", "goodbye", "thank", "silence", "null")
CATEGORIES = ("medical_emergency", "self_harm", "abuse")
DEFAULT_CLOSING_ACTS = ("affirm", "goodbye", "thank", "silence")

WEATHER_LOCATIONS = {"서울", "부산", "대구", "광주", "제주", "seoul", "busan", "london"}

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
_INTEGER_TEXT = re.compile(r"[+-]?\d+")

PATTERN_VALUE_LIMIT = 500  # docs/concepts/language.md, "Regular expressions": longer values are never matched


@dataclass(frozen=True)
class Step:
    """One turn as the oracle sees it (the fields the differential test compares)."""

    node: str
    next_node: str | None
    reason: str
    complete: bool
    slots: dict
    passed: tuple = ()  # ((node, reason), ...) nodes the turn went through (SPEC 8.3)
    # SPEC 17.21: the facts the speaking node's lines read (None: only its slots are known)
    facts: dict | None = dataclasses.field(default=None, compare=False)


# --- conditions ---------------------------------------------------------------------------


def _act_name(value: Any) -> Any:
    """Condition literals for `nlu.dialogue_act`: JSON null is the act null, negate is deny."""
    if value is None:
        return "null"
    return "deny" if value == "negate" else value


def _compare(operator: str, actual: Any, value: Any) -> bool:
    if operator == "equals":
        return actual is None if value is None else actual == value
    if operator == "not_equals":
        return actual is not None if value is None else actual != value
    if operator == "in":
        return actual in value
    if operator == "not_in":
        return actual not in value
    if operator == "is_empty":
        return actual is None or actual == "" or actual == []
    if operator == "is_not_empty":
        return actual is not None and actual != "" and actual != []
    if actual is None:  # null never satisfies an ordering or `contains`
        return False
    if operator == "contains":  # a substring of a text, an item of a list
        return value in actual
    return {"greater_than": actual > value, "greater_or_equal": actual >= value,
            "less_than": actual < value, "less_or_equal": actual <= value}[operator]


def _leaf(field: str, operator: str, value: Any, facts: dict) -> bool:
    if field == "nlu.dialogue_act" and value is not NO_VALUE:
        value = [_act_name(v) for v in value] if isinstance(value, list) else _act_name(value)
    return _compare(operator, facts[field], value)


def evaluate(condition: Any, facts: dict) -> bool:
    """A condition in either source form (JSON object or expression string, or its AST)."""
    if condition is None:
        return True
    if isinstance(condition, str):
        return evaluate(_parsed(condition), facts)
    if isinstance(condition, Leaf):
        return _leaf(condition.field, condition.operator, condition.value, facts)
    if isinstance(condition, Not):
        return not evaluate(condition.item, facts)
    if isinstance(condition, And):
        return all(evaluate(item, facts) for item in condition.items)
    if isinstance(condition, Or):
        return any(evaluate(item, facts) for item in condition.items)
    if "and" in condition:
        return all(evaluate(item, facts) for item in condition["and"])
    if "or" in condition:
        return any(evaluate(item, facts) for item in condition["or"])
    if "not" in condition:
        return not evaluate(condition["not"], facts)
    return _leaf(condition["field"], condition["operator"], condition.get("value", NO_VALUE),
                 facts)


_PARSED: dict[str, Any] = {}


def _parsed(text: str):
    if text not in _PARSED:
        tree = parse_expression(text, "", Diagnostics())
        if tree is None:
            raise ValueError(f"oracle: the compiler rejects the expression {text!r}")
        _PARSED[text] = tree
    return _PARSED[text]


def condition_leaves(condition: Any) -> list[tuple[str, str, Any]]:
    """(field, operator, value) of every comparison in a condition of either form."""
    if condition is None:
        return []
    if isinstance(condition, str):
        condition = _parsed(condition)
    if isinstance(condition, Leaf):
        return [(condition.field, condition.operator, condition.value)]
    if isinstance(condition, Not):
        return condition_leaves(condition.item)
    if isinstance(condition, (And, Or)):
        return [leaf for item in condition.items for leaf in condition_leaves(item)]
    for form in ("and", "or"):
        if form in condition:
            return [leaf for item in condition[form] for leaf in condition_leaves(item)]
    if "not" in condition:
        return condition_leaves(condition["not"])
    return [(condition["field"], condition["operator"], condition.get("value", NO_VALUE))]


# --- slot values (mirrors the rules documented in interpreter/slots.py) --------------------


def _as_number(value: Any, integer: bool):
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER_TEXT.fullmatch(text):
            return int(text)
        if integer:
            return None
        try:
            value = float(text)
        except ValueError:
            return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        if integer:
            return int(value) if value.is_integer() else None
        return value
    return None


# SPEC 14.1, 17.18: the day "today" stands for. The engines of the differential tests stand
# still 1_000_000 s after the epoch (`test_differential.paused_clock`), in local time.
TODAY = dt.date.fromtimestamp(1_000_000.0)
_RELATIVE = re.compile(r"today(?:([+-])(\d+)([dwmy]))?")


def _bound_day(bound: str) -> str:
    """A date bound ("today-120y", "2000-01-01") as the ISO day it names on TODAY."""
    match = _RELATIVE.fullmatch(bound)
    if match is None:
        return bound
    if not match.group(1):
        return TODAY.isoformat()
    n = int(match.group(2)) * (1 if match.group(1) == "+" else -1)
    unit = match.group(3)
    if unit in "dw":
        return (TODAY + dt.timedelta(days=n * (7 if unit == "w" else 1))).isoformat()
    month = TODAY.year * 12 + TODAY.month - 1 + n * (12 if unit == "y" else 1)
    year, month = divmod(month, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return dt.date(year, month + 1, min(TODAY.day, last)).isoformat()


def _temporal_value(slot: dict, text: str) -> tuple[bool, Any]:
    """A date is a real YYYY-MM-DD day, a time HH:MM (00:00-23:59), within min/max."""
    if slot["value_type"] == "time":
        ok = re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", text) is not None
        low, high = slot.get("min"), slot.get("max")
    else:
        try:
            ok = re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) is not None and \
                dt.date.fromisoformat(text) is not None
        except ValueError:
            ok = False
        low, high = (None if b is None else _bound_day(b) for b in (slot.get("min"), slot.get("max")))
    if not ok or (low is not None and text < low) or (high is not None and text > high):
        return False, text
    return True, text


def check_slot_value(slot: dict, value: Any) -> tuple[bool, Any]:
    """(valid, value as stored) for one value against one slot definition."""
    kind = slot["value_type"]
    if kind == "list":  # SPEC 8.2: one item or a list of items, each of the item type
        item_slot = {**slot, "value_type": slot["items"]}
        items: list = []
        for item in value if isinstance(value, list) else [value]:
            ok, item = check_slot_value(item_slot, item)
            if not ok:
                return False, value
            if item not in items:
                items.append(item)
        if slot.get("max_items") is not None and len(items) > slot["max_items"]:
            return False, value
        return True, items
    if kind in ("integer", "number"):
        number = _as_number(value, kind == "integer")
        if number is None:
            return False, value
        if type(number) is int and not -(2 ** 63) <= number < 2 ** 63:
            return False, value  # IMPL: a session must stay storable (MessagePack, 64 bits)
        if slot.get("min") is not None and number < slot["min"]:
            return False, value
        if slot.get("max") is not None and number > slot["max"]:
            return False, value
        return True, number
    if kind == "boolean":
        if isinstance(value, bool):
            return True, value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return True, value.strip().lower() == "true"
        return False, value
    if not isinstance(value, str) or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        return False, value  # IMPL: a lone surrogate has no UTF-8 form; a session cannot store it
    if kind in ("date", "time"):
        return _temporal_value(slot, value.strip())
    if kind == "enum":
        members = slot.get("values", [])
        if value in members:
            return True, value
        folded = {m.casefold(): m for m in members}
        member = folded.get(value.strip().casefold())
        return (member is not None), (member if member is not None else value)
    text = value.strip()
    for step in slot.get("normalize", ()):  # SPEC 14.2, in written order
        text = {"trim": str.strip, "lower": str.lower, "upper": str.upper,
                "collapse_spaces": lambda t: " ".join(t.split()),
                "remove_spaces": lambda t: "".join(t.split())}[step](text)
    if kind == "email" and not _EMAIL.fullmatch(text):
        return False, text
    if slot.get("min_length") is not None and len(text) < slot["min_length"]:
        return False, text
    if slot.get("max_length") is not None and len(text) > slot["max_length"]:
        return False, text
    if slot.get("pattern") is not None and (len(text) > PATTERN_VALUE_LIMIT
                                            or not re.fullmatch(slot["pattern"], text)):
        return False, text
    return True, text


# --- the oracle -----------------------------------------------------------------------------


MARKER = re.compile(r"\[L\d+\.\d+\]")  # a generated line's text (`strategies.line_marker`)
# What an opening's lines read besides the node's visit (IMPL: routing's opening facts):
# nothing heard, the first turn of the session.
OPENING_FACTS = {"nlu.intent": None, "nlu.dialogue_act": "null", "nlu.confidence": None,
                 "nlu.text": "", "nlu.safety": "none", "system.session_turns": 1,
                 "system.no_input_count": 0, "system.not_understood_count": 0,
                 "system.slots_updated": False, "system.idle_seconds": 0,
                 "system.slot_declined": False}
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


class Oracle:
    """SPEC 6.1/6.2 and 8 over a scenario dict; `start` and `turn` are pure functions of the
    state."""

    def __init__(self, scenario: dict, detect=None):
        graph = scenario["graph"]
        self.detect = detect or (lambda text: None)
        self.safety = {rule["category"]: rule["target"] for rule in graph.get("safety", [])}
        self.slots: dict[str, dict] = scenario.get("slots", {})
        self.profile_fields: dict[str, dict] = scenario.get("profile", {})
        self.intents = set(scenario.get("intents", {}))
        self.nodes: dict[str, dict] = {node["id"]: node for node in graph["nodes"]}
        self.entry = graph["entry"]
        self.bot_first = graph.get("bot_first", False)
        acts = graph.get("closing_acts", DEFAULT_CLOSING_ACTS)
        self.closing = {_act_name(a) for a in acts} - {"null"}  # null never closes
        self.globals = graph.get("global_transitions", [])
        self.groups: dict[str, list] = graph.get("route_groups", {})  # SPEC 14.6
        self.ends = {node_id for node_id, node in self.nodes.items() if self._is_end(node)}
        self._params: dict[str, dict] = {}

    def _is_end(self, node: dict) -> bool:
        edges = [t for t, _ in self.rows(node) if "target" in t]
        return bool(node.get("terminal")) or (not edges and node.get("default_next") is None)

    def rows(self, node: dict) -> list[tuple[dict, str]]:
        """(rule, reason) of a node's own routes: `next_nodes`, then its route groups' rows
        (SPEC 14.6: `route:NAME[i]`; a row whose target is the node itself is a stay), then
        `default_next` (a node id, or an object with a `set`, 17.20)."""
        out = [(rule, _route_label(rule, i)) for i, rule in enumerate(node.get("next_nodes", []))]
        for name in node.get("routes", []):
            for i, rule in enumerate(self.groups[name]):
                if rule.get("target") == node["id"] or "target" not in rule:
                    out.append(({k: v for k, v in rule.items() if k != "target"},
                                f"stay:route:{name}[{i}]"))
                else:
                    out.append((rule, f"route:{name}[{i}]"))
        written = node.get("default_next")
        if written is not None:
            rule = {"target": written} if isinstance(written, str) else written
            out.append((rule, "default_next"))
        return out

    def apply_set(self, slots: dict, sets: dict | None) -> bool:
        """SPEC 14.5, 17.20: a `set` applied to `slots` in place, in written order; whether
        it wrote anything. null (or a copy of an unfilled slot) clears; add counts an
        unfilled slot as 0; a result the slot refuses is dropped."""
        for name, value in (sets or {}).items():
            if isinstance(value, dict) and "copy" in value:
                value = slots.get(value["copy"])
            elif isinstance(value, dict) and "add" in value:
                value = (slots.get(name) or 0) + value["add"]
            if value is None:
                slots.pop(name, None)
                continue
            ok, normal = check_slot_value(self.slots[name], value)
            if ok:
                slots[name] = normal
        return bool(sets)

    def params(self, node_id: str) -> dict:
        """The routing parameters of a node, defaults filled in (SPEC 2.2, 8.3, 8.5)."""
        if node_id not in self._params:
            node = self.nodes[node_id]
            params = node.get("params", {})
            cleared = params.get("clear_slots", [])
            collect = node.get("collect_slots", [])
            task = bool(collect) and params.get("skill") is None
            self._params[node_id] = {
                "max_turns": params.get("max_turns"), "min_turns": params.get("min_turns", 1),
                "retries": params.get("max_fallback_retries", 2),
                "limit_on": params.get("turn_limit_enabled", True),
                "skill": params.get("skill") is not None,
                "transient": bool(node.get("transient")),
                "skips": task and params.get("min_turns", 1) == 1
                and params.get("skip_if_filled", True),
                "clear": list(self.slots) if cleared == "all" else list(cleared)}
        return self._params[node_id]

    def filled(self, name: str, slots: dict) -> bool:
        """Whether a slot counts as known: any value; a list with `min_items` items."""
        value = slots.get(name)
        if value is None:
            return False
        least = self.slots[name].get("min_items") if self.slots[name]["value_type"] == "list" \
            else None
        return not least or len(value) >= least

    def required(self, node_id: str) -> list[str]:
        return [s for s in self.nodes[node_id].get("collect_slots", [])
                if self.slots[s]["policy"] == "required"]

    def missing(self, node_id: str, slots: dict) -> list[str]:
        return [s for s in self.required(node_id) if not self.filled(s, slots)]

    # --- 6.1 ------------------------------------------------------------------------------

    def check_profile(self, profile: dict | None) -> dict:
        """SPEC 8.1: every given value checked against its declaration (`ValueError`)."""
        checked = {}
        for name, value in (profile or {}).items():
            if name not in self.profile_fields:
                raise ValueError(f"oracle: profile field {name!r} is not declared")
            if value is None:
                continue
            ok, value = check_slot_value(self.profile_fields[name], value)
            if not ok:
                raise ValueError(f"oracle: profile field {name!r} has an invalid value")
            checked[name] = value
        return checked

    def start(self, bot_first: bool | None = None,
              profile: dict | None = None) -> tuple[dict, Step]:
        speaks = self.bot_first if bot_first is None else bot_first
        state = {"node": self.entry, "previous": None, "node_turns": int(speaks),
                 "session_turns": int(speaks), "no_input": 0, "not_understood": 0,
                 "retries": 0, "turn_limit": False, "slots": {}, "pending": None,
                 "skill": "none", "complete": False, "profile": self.check_profile(profile)}
        self.apply_set(state["slots"], self.nodes[self.entry].get("on_enter", {}).get("set"))
        if speaks:
            state["skill"] = self.skill_status(self.entry, state, self.speaker_facts(state, None))
        return state, Step(self.entry, self.entry, "opening", False, dict(state["slots"]),
                           facts=self.speaker_facts(state, None))

    def skill_status(self, node_id: str, state: dict | None = None,
                     facts: dict | None = None) -> str:
        """The skill result of a node's run ("none" for a node without a skill); the
        `location` argument may name slots and profile fields (`{slots.X}`, missing: ""),
        or be written as conditional lines (SPEC 17.21: `argument_lines`, on `facts`)."""
        params = self.nodes[node_id].get("params", {})
        skill = params.get("skill")
        if skill is None:
            return "none"
        args = params.get("skill_args", {})
        if state is not None:
            args = {k: _filled_text(v, state["slots"], state["profile"])
                    if isinstance(v, str) else v for k, v in args.items()}
            args = argument_lines(args, state, facts)
        if skill == "email":
            to, sender = (args.get(k) for k in ("to", "from"))
            texts = isinstance(to, str) and isinstance(sender, str)
            sent = texts and to.strip() and sender.strip() and to.strip() != sender.strip()
            return "ok" if sent else "failed"
        if skill != "weather":
            return "failed"
        location = args.get("location") or "서울"
        if not isinstance(location, str):
            return "failed"
        known = location in WEATHER_LOCATIONS or location.strip().lower() in WEATHER_LOCATIONS
        return "ok" if known else "failed"

    # --- 6.2 ------------------------------------------------------------------------------

    def read_nlu(self, text: str, nlu: dict | None) -> tuple[str, str | None, dict, str | None]:
        """(act, intent, extracted slots, safety category) after the corrections of step 2."""
        if not text or not text.strip():
            return "silence", None, {}, None
        nlu = nlu or {}
        act = nlu.get("dialogue_act")
        act = "null" if act is None else ("deny" if act == "negate" else act)
        if act not in ACTS or act == "silence":
            act = "null"  # IMPL: unknown act names; SPEC: spoken silence is null
        intent = nlu.get("intent")
        if intent not in self.intents:
            intent = None
        if act == "null" and intent is not None:
            act = "inform"
        said = nlu.get("safety")
        safety = self.detect(text) or (said if said in CATEGORIES else None)
        if act == "null" and safety is not None:
            act = "inform"  # IMPL: a crisis was understood, never "I did not understand"
        return act, intent, dict(nlu.get("slots") or {}), safety

    def yes_no(self, node_id: str, act: str, extracted: dict) -> dict:
        """SPEC 18.3-18.4: a bare affirm (deny) with nothing pending stores, for each collect
        slot the NLU gave no value for, its `affirm_value` (`deny_value`, else an optional
        slot's `none_value`: a decline)."""
        extracted = dict(extracted)
        for name in self.nodes[node_id].get("collect_slots", []):
            slot = self.slots.get(name, {})
            value = slot.get("affirm_value" if act == "affirm" else "deny_value")
            if value is None and act == "deny" and slot.get("policy") != "required":
                value = slot.get("none_value")
            if value is not None and extracted.get(name) is None:
                extracted[name] = value
        return extracted

    def declined(self, node_id: str, act: str, pending: Any, extracted: dict) -> bool:
        """SPEC 18.3 `system.slot_declined`: a deny, nothing pending, at a node collecting an
        optional slot and no slot with a `deny_value` (there a "no" is the answer), that
        gave none of the node's collect slots a value."""
        collect = self.nodes[node_id].get("collect_slots", [])
        slots = [self.slots.get(name, {}) for name in collect]
        return (act == "deny" and pending is None
                and any(slot.get("policy") != "required" for slot in slots)
                and all(slot.get("deny_value") is None for slot in slots)
                and all(extracted.get(name) is None for name in collect))

    def fill_slots(self, state: dict, act: str, extracted: dict) -> tuple[dict, Any, bool, bool]:
        """(slots, pending, asked, updated): step 2's slot part."""
        slots, pending, asked, updated = dict(state["slots"]), state["pending"], False, False
        if pending is not None and act not in ("silence", "null"):
            if act == "affirm":
                slots[pending[0]] = pending[1]
                updated = True
            pending = None
        for name, value in extracted.items():
            if name not in self.slots or value is None or value == []:
                continue
            if isinstance(value, str) and not value.strip():
                continue
            slot = self.slots[name]
            ok, value = check_slot_value(slot, value)
            if not ok:
                continue
            old = slots.get(name)
            policy = slot.get("on_conflict", "append" if slot["value_type"] == "list"
                              else "overwrite")
            if old is not None and policy == "append":
                value = list(old) + [item for item in value if item not in old]
                if slot.get("max_items") is not None and len(value) > slot["max_items"]:
                    continue  # IMPL: too many items: all dropped, the stored list stays
            if old is None or policy in ("overwrite", "append"):
                if old != value:
                    slots[name] = value
                    updated = True
            elif old == value or policy == "keep":
                pass
            elif pending is None:  # confirm: ask before replacing (one question at a time)
                pending, asked = (name, value), True
        return slots, pending, asked, updated

    def turn(self, state: dict, text: str, nlu: dict | None,
             idle: float = 0) -> tuple[dict, Step]:
        """One user turn; `idle`: the pause before it, in seconds (SPEC 8.5). At a node with
        `params.expects` (SPEC 13.3, 17.13), a turn that heard none of what the node expects
        and that neither the safety tier nor a global transition took is taken again with
        its act and intent unheard (read as not understood)."""
        new, step = self._turn(state, text, nlu, idle)
        if step.reason.startswith(("safety:", "global")) or not self.unexpected(state, text, nlu):
            return new, step
        return self._turn(state, text, dict(nlu or {}, dialogue_act=None, intent=None), idle)

    def unexpected(self, state: dict, text: str, nlu: dict | None) -> bool:
        """Whether a turn at a node with `expects` heard none of what it expects."""
        node = self.nodes[state["node"]]
        kind = node.get("params", {}).get("expects")
        act, intent, extracted, _ = self.read_nlu(text, nlu)
        if kind is None or act in ("silence", "null") or act in self.closing:
            return False
        routes = [rule.get("condition") for rule, _ in self.rows(node)]  # its groups' too
        if act in ("affirm", "deny"):
            reads_act = any(f == "nlu.dialogue_act" for c in routes for f, _, _ in condition_leaves(c))
            return state["pending"] is None and not reads_act
        intents = set()
        for condition in routes + [g.get("condition") for g in self.globals]:
            for field, operator, value in condition_leaves(condition):
                if field == "nlu.intent":
                    intents |= {value} if operator == "equals" else set(value) \
                        if operator == "in" else self.intents
        if intent is not None and (kind in ("intent", "any") or intent in intents):
            return False
        slots, _, _, _ = self.fill_slots(state, act, extracted)
        stored = {n for n, v in slots.items() if state["slots"].get(n) != v}
        counted = set(self.slots) if kind == "any" else set(node.get("collect_slots", [])) \
            if kind == "slot" else set()
        return not (stored & counted)

    def _turn(self, state: dict, text: str, nlu: dict | None,
              idle: float = 0) -> tuple[dict, Step]:
        if state["complete"]:
            raise ValueError("oracle: the session is complete")
        here = state["node"]
        params = self.params(here)
        act, intent, extracted, safety = self.read_nlu(text, nlu)
        declined = self.declined(here, act, state["pending"], extracted)
        if state["pending"] is None and act in ("affirm", "deny"):
            extracted = self.yes_no(here, act, extracted)
        slots, pending, asked, updated = self.fill_slots(
            state, act, extracted if act != "silence" else {})
        node_turns = state["node_turns"] + 1
        new = dict(state, session_turns=state["session_turns"] + 1, node_turns=node_turns,
                   slots=slots, pending=pending, set_this_turn=False,
                   no_input=state["no_input"] + 1 if act == "silence" else 0,
                   not_understood=state["not_understood"] + 1 if act == "null" else 0)
        fallback = act in ("silence", "null")
        retries = state["retries"] if fallback else 0
        idle_seconds = max(0, int(idle)) if state["session_turns"] else 0  # IMPL: whole seconds
        limit_hit = (params["limit_on"] and params["max_turns"] is not None
                     and node_turns >= params["max_turns"])
        missing = self.missing(here, slots)

        def facts(turn_limit: bool, exhausted: bool = fallback) -> dict:
            found = self.facts(new, text, nlu, act, intent, exhausted, missing)
            found.update({"nlu.safety": safety or "none", "system.turn_limit_reached": turn_limit,
                          "system.slots_updated": updated, "system.idle_seconds": idle_seconds,
                          "system.slot_declined": declined})
            return found
        if safety in self.safety:  # SPEC 10: first, before the fallback policy and Action END
            new["retries"] = retries
            new["turn_limit"] = state["turn_limit"] or limit_hit
            target = self.safety[safety]
            kind = "stay" if target == here else "move"
            return self._after(new, here, kind, target, "safety:" + safety, facts(False))
        if fallback and retries < params["retries"]:  # step 4: re-prompt, unless a pause decides
            seen = facts(state["turn_limit"], exhausted=False)
            for i, rule in enumerate(self.globals):  # IMPL (docs/concepts/tasks.md): tier `idle`
                if rule["target"] != here and self.reads_idle(rule) \
                        and evaluate(rule["condition"], seen):
                    self.set_of_route(new, here, _label(rule, i))
                    return self._after(new, here, "move", rule["target"], _label(rule, i), seen)
            new["retries"] = retries + 1
            kind = "no_input" if act == "silence" else "not_understood"
            return self._after(new, here, "stay", here, "fallback:" + kind, seen)
        new["retries"] = retries
        if limit_hit and here in self.ends:  # step 5 at an end node: Action END
            return self._after(new, here, "complete", None, "action_end", None)
        new["turn_limit"] = state["turn_limit"] or limit_hit
        turn_facts = facts(new["turn_limit"])
        kind, target, reason = self.route(here, turn_facts, new["turn_limit"], missing, asked)
        self.set_of_route(new, here, reason)
        return self._after(new, here, kind, target, reason, turn_facts)

    def set_of_route(self, new: dict, here: str, reason: str) -> None:
        """The `set` of the route taken (a global, a row, a group row, default_next), applied
        before the move (SPEC 17.20)."""
        rules = [(rule, _label(rule, i)) for i, rule in enumerate(self.globals)]
        rules += self.rows(self.nodes[here])
        sets = next((rule.get("set") for rule, label in rules if label == reason), None)
        if sets:
            slots = dict(new["slots"])
            self.apply_set(slots, sets)
            new.update(slots=slots, set_this_turn=True)

    def facts(self, new: dict, text: str, nlu: dict | None, act: str, intent: str | None,
              fallback: bool, missing: list) -> dict:
        here, spoken = new["node"], bool(text and text.strip())
        facts = {
            "nlu.intent": intent, "nlu.dialogue_act": act,
            "nlu.confidence": (nlu or {}).get("confidence", 1.0) if spoken else 1.0,
            "nlu.text": text, "system.current_node": here,
            "system.previous_node": new["previous"], "system.node_turns": new["node_turns"],
            "system.session_turns": new["session_turns"],
            "system.no_input_count": new["no_input"],
            "system.not_understood_count": new["not_understood"],
            "system.fallback_exhausted": fallback,  # reaching routing means the budget is spent
            "system.conversation_resuming": here in self.ends and act not in self.closing,
            "system.turn_limit_reached": new["turn_limit"],
            "system.min_turns_met": new["node_turns"] >= self.params(here)["min_turns"],
            "system.required_slots_filled": not missing, "skill.status": new["skill"],
            "system.slot_declined": False,
        }
        facts.update(self.value_facts(new))
        return facts

    def lines_problem(self, reply: str | None, state: dict,
                      facts: dict | None = None) -> str | None:
        """SPEC 14.4, 17.21 as the generated scenarios use it (marker lines, `[Lk.j]`, each
        unique in the scenario): for every response written as lines that `reply` shows a
        marker line of, the marker lines shown must be exactly those whose `when` holds on
        `facts`, the speaking node's after the move (`Step.facts`); without them, on the
        slots after the move, judging only the lines whose `when` reads nothing else. What
        is wrong, or None."""
        if facts is None:
            facts = self.value_facts(state)
        for node in self.nodes.values():
            for kind, response in node.get("responses", {}).items():
                if not isinstance(response, dict) or "lines" not in response:
                    continue
                judged = [line for line in response["lines"]  # unique in any reply
                          if isinstance(line["text"], str) and MARKER.fullmatch(line["text"])
                          and all(f in facts for f, _, _ in condition_leaves(line.get("when")))]
                shown = [line["text"] for line in judged if line["text"] in (reply or "")]
                if not shown:
                    continue
                held = [line["text"] for line in judged if evaluate(line.get("when"), facts)]
                if shown != held:
                    return (f"{node['id']}.{kind}: the reply shows lines {shown}, the oracle "
                            f"says {held} (slots {state['slots']})")
        return None

    def speaker_facts(self, new: dict, turn_facts: dict | None, moved: bool = False) -> dict:
        """SPEC 17.21: the facts a line of the node that speaks reads (its reply's, its
        skill's arguments'): on a move, the node entered as entry routing sees it; on a
        stay, the turn's, with the slots as they are now; at an opening (no turn facts), a
        first turn at the node with nothing heard (IMPL: routing's opening facts); a `set`
        this turn counts for `system.slots_updated`."""
        if turn_facts is None:
            facts = self.entry_facts(dict(OPENING_FACTS), new)
            facts["system.node_turns"] = new["node_turns"]
            return facts
        if moved:
            return self.entry_facts(turn_facts, new)
        facts = dict(turn_facts)
        facts.update(self.value_facts(new))
        if new.get("set_this_turn"):
            facts["system.slots_updated"] = True
        return facts

    def value_facts(self, state: dict) -> dict:
        """`slots.NAME` (null when unfilled) and `profile.NAME` (null when not given)."""
        facts = {"slots." + name: state["slots"].get(name) for name in self.slots}
        facts.update({"profile." + name: state["profile"].get(name)
                      for name in self.profile_fields})
        return facts

    def route(self, here: str, facts: dict, turn_limit: bool, missing: list,
              asked: bool) -> tuple[str, str | None, str]:
        """Step 6, tiers 2-8: (kind, target, reason)."""
        for i, rule in enumerate(self.globals):
            if rule["target"] == here:
                continue  # going where you are instructs nothing (seed 002)
            if evaluate(rule.get("condition"), facts):
                return "move", rule["target"], _label(rule, i)
        if not turn_limit:
            if facts["system.node_turns"] < self.params(here)["min_turns"]:
                return "stay", here, "gate:min_turns"
            if missing:
                return "stay", here, "gate:required_slots"
            if asked:
                return "stay", here, "gate:confirmation"
        for rule, reason in self.rows(self.nodes[here]):
            if evaluate(rule.get("condition"), facts):
                return ("move" if "target" in rule else "stay"), rule.get("target", here), reason
        if here in self.ends:
            return "complete", None, "terminal"
        return "stay", here, "no_route"

    @staticmethod
    def reads_idle(rule: dict) -> bool:
        return any(name == "system.idle_seconds" for name, _, _ in condition_leaves(
            rule.get("condition")))

    # --- moving: defaults, clearing, entry routing (SPEC 8.2, 8.3, 8.5) -------------------

    def default_value(self, name: str, profile: dict) -> Any:
        """The value a slot's `default` stores now, or None (a profile default without a
        value in the profile, or one the slot's rules refuse)."""
        slot = self.slots[name]
        default = slot.get("default")
        if isinstance(default, str):
            reference = re.fullmatch(r"\{profile\.([^{}]*)\}", default)
            if reference is not None:
                default = profile.get(reference.group(1))
        if default is None:
            return None
        ok, value = check_slot_value(slot, default)
        return value if ok else None

    def cross(self, new: dict, left: str, entered: str) -> None:
        """Leave `left` (its empty collect slots get their defaults), enter `entered` (its
        `clear_slots` are cleared, a confirmation pending on one dropped), a fresh visit."""
        slots = dict(new["slots"])
        for name in self.nodes[left].get("collect_slots", []):
            if slots.get(name) is None:
                value = self.default_value(name, new["profile"])
                if value is not None:
                    slots[name] = value
        cleared = self.params(entered)["clear"]
        for name in cleared:
            slots.pop(name, None)
        if new["pending"] is not None and new["pending"][0] in cleared:
            new["pending"] = None
        if self.apply_set(slots, self.nodes[entered].get("on_enter", {}).get("set")):
            new["set_this_turn"] = True
        new.update(slots=slots, node=entered, previous=left, node_turns=0, retries=0,
                   turn_limit=False)

    def waits(self, node_id: str, slots: dict) -> bool:
        params = self.params(node_id)
        if params["transient"]:
            return False
        every = all(self.filled(s, slots) for s in self.nodes[node_id]["collect_slots"]) \
            if params["skips"] else False
        return not every

    def entry_route(self, node_id: str, facts: dict) -> tuple[str | None, str] | None:
        """A node that does not wait: (target, reason) for a hop, (None, "terminal") when a
        transient end node completes, None when it waits after all."""
        node, transient = self.nodes[node_id], self.params(node_id)["transient"]
        for rule, reason in self.rows(node):
            if evaluate(rule.get("condition"), facts):
                if "target" not in rule:
                    return None  # a stay: it waits
                self._hop_set = rule.get("set")
                return rule["target"], reason if transient else "skip:filled"
        if transient and node_id in self.ends:
            return None, "terminal"
        return None

    def entry_facts(self, turn_facts: dict, new: dict) -> dict:
        """The turn's facts as the node just entered sees them: a fresh visit."""
        here = new["node"]
        facts = dict(turn_facts)
        facts.update({
            "system.current_node": here, "system.previous_node": new["previous"],
            "system.node_turns": 0, "system.fallback_exhausted": False,
            "system.conversation_resuming": here in self.ends
            and turn_facts["nlu.dialogue_act"] not in self.closing,
            "system.turn_limit_reached": False,
            "system.min_turns_met": self.params(here)["min_turns"] <= 0,
            "system.required_slots_filled": not self.missing(here, new["slots"]),
            "skill.status": new["skill"]})
        if new.get("set_this_turn"):  # 17.20: sets count for system.slots_updated
            facts["system.slots_updated"] = True
        facts.update(self.value_facts(new))
        return facts

    def enter(self, new: dict, turn_facts: dict) -> tuple:
        """Entry routing from the node a move entered; the nodes passed."""
        passed: list[tuple[str, str]] = []
        while True:
            here = new["node"]
            if self.waits(here, new["slots"]) or any(node == here for node, _ in passed):
                return tuple(passed)
            if new["skill"] == "none":
                new["skill"] = self.skill_status(here, new, self.entry_facts(turn_facts, new))
            hop = self.entry_route(here, self.entry_facts(turn_facts, new))
            if hop is None:
                return tuple(passed)
            target, reason = hop
            passed.append((here, reason))
            if target is None:
                new.update(complete=True, complete_reason="terminal")
                return tuple(passed)
            slots = dict(new["slots"])
            self.apply_set(slots, self._hop_set)
            new["slots"] = slots
            self.cross(new, here, target)
            if self.params(target)["skill"]:
                new["skill"] = "none"  # else the skill result is carried

    def _after(self, new: dict, here: str, kind: str, target: str | None, reason: str,
               turn_facts: dict | None) -> tuple[dict, Step]:
        """Step 7 (the move, its defaults, clearing and resets, entry routing), then the skill
        of the node that now speaks."""
        passed: tuple = ()
        if kind == "complete":
            new["complete"] = True
            new["complete_reason"] = reason
        elif kind == "move":
            self.cross(new, here, target)
            new["skill"] = "none"
            passed = self.enter(new, turn_facts)
        spoken = None  # action_end: the turn's facts are not modelled
        if turn_facts is not None:
            spoken = self.speaker_facts(new, turn_facts, kind == "move")
        if not new["complete"] and new["skill"] == "none":
            new["skill"] = self.skill_status(new["node"], new, spoken)
        if spoken is not None:
            spoken["skill.status"] = new["skill"]  # the reply is worded after the skill ran
        return new, Step(here, None if new["complete"] else new["node"], reason,
                         new["complete"], dict(new["slots"]), passed, spoken)


def _route_label(rule: dict, i: int) -> str:
    """A `next_nodes` entry's reason: `next:NAME` when named (SPEC 18.8), else its position;
    `stay:` before it for a stay."""
    label = f"next:{rule['name']}" if rule.get("name") else f"next_nodes[{i}]"
    return label if "target" in rule else "stay:" + label


def _label(rule: dict, i: int) -> str:
    """A global transition's reason: `global:NAME`, or `global[i]` without a name."""
    return f"global:{rule['name']}" if rule.get("name") else f"global[{i}]"


def _filled_text(text: str, slots: dict, profile: dict) -> str:
    """A skill argument's `{slots.X}` / `{profile.X}` by plain lookup (missing: empty)."""
    def value(match: re.Match) -> str:
        found = (slots if match.group(1) == "slots" else profile).get(match.group(2))
        if found is None or found == "" or found == []:
            return ""
        if isinstance(found, bool):
            return "true" if found else "false"
        if isinstance(found, float) and found.is_integer():
            return str(int(found))
        if isinstance(found, list):
            return ", ".join(map(str, found))
        return str(found)
    return re.sub(r"\{(slots|profile)\.([A-Za-z0-9_.\-]+)\}", value, text)


def argument_lines(args: dict, state: dict, facts: dict | None) -> dict:
    """SPEC 17.21: each argument written as lines becomes the lines whose `when` holds on
    `facts`, each filled like a reply sentence (`_reply_text`), joined; left out when none
    holds."""
    out = {}
    for key, value in args.items():
        if not (isinstance(value, dict) and "lines" in value):
            out[key] = value
            continue
        held = [line["text"] for line in value["lines"] if evaluate(line.get("when"), facts)]
        if held:
            parts = [_reply_text(text, state["slots"], state["profile"]) for text in held]
            out[key] = value.get("join", " ").join(part for part in parts if part)
    return out


def _reply_text(text: str, slots: dict, profile: dict) -> str:
    """A text filled as a reply sentence is: a sentence with a placeholder that has no value
    is left out (raw values, as arguments get them)."""
    kept = []
    for sentence in _SENTENCE_END.split(text):
        names = re.findall(r"\{(slots|profile)\.([A-Za-z0-9_.\-]+)\}", sentence)
        if all((slots if root == "slots" else profile).get(name) not in (None, "", [])
               for root, name in names):
            kept.append(_filled_text(sentence, slots, profile))
    return " ".join(kept)
