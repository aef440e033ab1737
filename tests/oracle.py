"""A second, deliberately simple implementation of SPEC 6.1/6.2, for differential testing.

In: a scenario as a JSON dict (the source, never the IR) that the compiler accepted, then
user turns given as text plus a scripted NLU result (`{"intent", "dialogue_act", "slots",
"confidence"}`, or None: not understood). Out: per turn a `Step` with the node the turn was
handled in, where the session is now (None once complete), the reason code, completion and
the slots after the turn, and, when the oracle is given the common messages (`words`), the
reply of the template NLG with its rotation of response variants (`oracle_wording`, SPEC 9). State is a plain dict (`Oracle.start` makes one, `Oracle.turn`
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
- `gate:confirmation` (README): on the turn a confirmation is raised the node holds, after
  the min_turns and required-slot gates and, like them, not when the turn limit is reached.
- `system.fallback_exhausted` is true on the turn where a silent or not-understood input
  found the budget spent (it is recomputed every turn, not latched), and the retry counter
  resets on any understood turn; on a re-prompt turn the turn limit is not evaluated.
- skills: the skill runs after routing, for the node that speaks (the target on a move, the
  current node otherwise), when it has not run in this visit; with bot-first off the entry's
  skill therefore first runs after turn 1 (`skill.status` is `none` while turn 1 routes).
  The built-in `weather` skill is `ok` for a known location of its offline table (default
  location 서울), with the location, summary and temperature as its data, `failed` otherwise
  (with an `error`); an unknown skill is `failed`. (A run slower than
  `timeout_ms` is `timeout`; the weather table never is, so callers should not give skill
  nodes a tiny `timeout_ms` when they compare.)
- global transition labels: `global:NAME` when the name is a non-empty string, else
  `global[i]`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from compiler.condition_ast import NO_VALUE, And, Leaf, Not, Or
from compiler.diagnostics import Diagnostics
from compiler.expressions import parse_expression
from oracle_wording import Said, Wording

ACTS = ("affirm", "deny", "inform", "question", "greet", "goodbye", "thank", "silence", "null")
CATEGORIES = ("medical_emergency", "self_harm", "abuse")
DEFAULT_CLOSING_ACTS = ("affirm", "goodbye", "thank", "silence")

# IMPL: the offline table of the built-in weather skill (its `summary` and `temperature`).
WEATHER = {"서울": ("맑고 포근해요", 21), "부산": ("구름이 조금 있고 선선해요", 19),
           "대구": ("햇볕이 강하고 더워요", 27), "광주": ("흐리고 가끔 비가 와요", 18),
           "제주": ("바람이 불고 흐려요", 17), "seoul": ("clear and mild", 21),
           "busan": ("partly cloudy and cool", 19), "london": ("grey with light rain", 12)}

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
_INTEGER_TEXT = re.compile(r"[+-]?\d+")

PATTERN_VALUE_LIMIT = 500  # README "Regular expressions": longer values are never matched


@dataclass(frozen=True)
class Step:
    """One turn as the oracle sees it (the fields the differential test compares); `response`
    only when the oracle words the turns (`Oracle(..., words=...)`)."""

    node: str
    next_node: str | None
    reason: str
    complete: bool
    slots: dict
    response: str | None = None


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
        return actual is None or actual == ""
    if operator == "is_not_empty":
        return actual is not None and actual != ""
    if actual is None:  # null never satisfies an ordering or `contains`
        return False
    if operator == "contains":
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


def check_slot_value(slot: dict, value: Any) -> tuple[bool, Any]:
    """(valid, value as stored) for one value against one slot definition."""
    kind = slot["value_type"]
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
    if kind == "enum":
        members = slot.get("values", [])
        if value in members:
            return True, value
        folded = {m.casefold(): m for m in members}
        member = folded.get(value.strip().casefold())
        return (member is not None), (member if member is not None else value)
    text = value.strip()
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


class Oracle:
    """SPEC 6.1/6.2 over a scenario dict; `start` and `turn` are pure functions of the state."""

    def __init__(self, scenario: dict, detect=None, words: tuple[dict, dict] | None = None):
        graph = scenario["graph"]
        self.detect = detect or (lambda text: None)
        self.language = scenario["metadata"].get("language", "ko")
        self.safety = {rule["category"]: rule["target"] for rule in graph.get("safety", [])}
        self.slots: dict[str, dict] = scenario.get("slots", {})
        self.intents = set(scenario.get("intents", {}))
        self.nodes: dict[str, dict] = {node["id"]: node for node in graph["nodes"]}
        self.entry = graph["entry"]
        self.bot_first = graph.get("bot_first", False)
        acts = graph.get("closing_acts", DEFAULT_CLOSING_ACTS)
        self.closing = {_act_name(a) for a in acts} - {"null"}  # null never closes
        self.globals = graph.get("global_transitions", [])
        self.ends = {node_id for node_id, node in self.nodes.items() if self._is_end(node)}
        self._params: dict[str, dict] = {}
        self.wording = Wording(self, *words) if words is not None else None

    @staticmethod
    def _is_end(node: dict) -> bool:
        edges = [t for t in node.get("next_nodes", []) if "target" in t]
        return bool(node.get("terminal")) or (not edges and node.get("default_next") is None)

    def params(self, node_id: str) -> dict:
        """The routing parameters of a node, defaults filled in (SPEC 2.2)."""
        if node_id not in self._params:
            params = self.nodes[node_id].get("params", {})
            self._params[node_id] = {
                "max_turns": params.get("max_turns"), "min_turns": params.get("min_turns", 1),
                "retries": params.get("max_fallback_retries", 2),
                "limit_on": params.get("turn_limit_enabled", True)}
        return self._params[node_id]

    def required(self, node_id: str) -> list[str]:
        return [s for s in self.nodes[node_id].get("collect_slots", [])
                if self.slots[s]["policy"] == "required"]

    # --- 6.1 ------------------------------------------------------------------------------

    def start(self, bot_first: bool | None = None) -> tuple[dict, Step]:
        speaks = self.bot_first if bot_first is None else bot_first
        state = {"node": self.entry, "previous": None, "node_turns": int(speaks),
                 "session_turns": int(speaks), "no_input": 0, "not_understood": 0,
                 "retries": 0, "turn_limit": False, "slots": {}, "pending": None,
                 "skill": "none", "skill_data": {}, "complete": False, "rotation": {},
                 "said": None}
        response = None
        if speaks:
            state["skill"], state["skill_data"] = self.skill_result(self.entry)
            if self.wording is not None:
                response = self.wording.reply(state, Said("open", self.entry))
        return state, Step(self.entry, self.entry, "opening", False, {}, response)

    def skill_status(self, node_id: str) -> str:
        return self.skill_result(node_id)[0]

    def skill_result(self, node_id: str) -> tuple[str, dict]:
        """(status, data) of the node's skill (IMPL: the built-in weather skill's data)."""
        params = self.nodes[node_id].get("params", {})
        skill = params.get("skill")
        if skill is None:
            return "none", {}
        if skill != "weather":
            return "failed", {"error": "unknown skill"}
        location = params.get("skill_args", {}).get("location") or "서울"
        if not isinstance(location, str):
            return "failed", {"error": "location must be text"}
        row = WEATHER.get(location) or WEATHER.get(location.strip().lower())
        if row is None:
            return "failed", {"location": location, "error": "unknown location"}
        return "ok", {"location": location, "summary": row[0], "temperature": row[1]}

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

    def fill_slots(self, state: dict, act: str, extracted: dict) -> tuple[dict, Any, bool, list]:
        """(slots, pending, asked, the slots whose value failed validation): step 2's slot
        part."""
        slots, pending, asked, invalid = dict(state["slots"]), state["pending"], False, []
        if pending is not None and act not in ("silence", "null"):
            if act == "affirm":
                slots[pending[0]] = pending[1]
            pending = None
        for name, value in extracted.items():
            if name not in self.slots or value is None:
                continue
            if isinstance(value, str) and not value.strip():
                continue
            ok, value = check_slot_value(self.slots[name], value)
            if not ok:
                invalid += [name] if name not in invalid else []
                continue
            old = slots.get(name)
            policy = self.slots[name].get("on_conflict", "overwrite")
            if old is None or policy == "overwrite":
                if old != value:
                    slots[name] = value
            elif old == value or policy == "keep":
                pass
            elif pending is None:  # confirm: ask before replacing (one question at a time)
                pending, asked = (name, value), True
        return slots, pending, asked, invalid

    def turn(self, state: dict, text: str, nlu: dict | None) -> tuple[dict, Step]:
        if state["complete"]:
            raise ValueError("oracle: the session is complete")
        here = state["node"]
        params = self.params(here)
        act, intent, extracted, safety = self.read_nlu(text, nlu)
        slots, pending, asked, invalid = self.fill_slots(
            state, act, extracted if act != "silence" else {})
        node_turns = state["node_turns"] + 1
        new = dict(state, session_turns=state["session_turns"] + 1, node_turns=node_turns,
                   slots=slots, pending=pending,
                   no_input=state["no_input"] + 1 if act == "silence" else 0,
                   not_understood=state["not_understood"] + 1 if act == "null" else 0)
        fallback = act in ("silence", "null")
        retries = state["retries"] if fallback else 0
        missing = [s for s in self.required(here) if slots.get(s) is None]
        said = Said("", here, fallback=("no_input" if act == "silence" else "not_understood")
                    if fallback else None, missing=tuple(missing), invalid=tuple(invalid),
                    confirm=(*pending, slots.get(pending[0])) if asked else None)
        if safety in self.safety:  # SPEC 10: first, before the fallback policy and Action END
            new["retries"] = retries
            new["turn_limit"] = state["turn_limit"] or (
                params["limit_on"] and params["max_turns"] is not None
                and node_turns >= params["max_turns"])
            target = self.safety[safety]
            kind = "stay" if target == here else "move"
            return self._after(new, kind, target, "safety:" + safety,
                               said._replace(safety=True))
        if fallback and retries < params["retries"]:  # step 4: re-prompt
            new["retries"] = retries + 1
            still = (*pending, slots.get(pending[0])) if pending is not None else None
            return self._after(new, "stay", here, "fallback:" + said.fallback,
                               said._replace(confirm=said.confirm or still))
        new["retries"] = retries
        limit_hit = (params["limit_on"] and params["max_turns"] is not None
                     and node_turns >= params["max_turns"])
        if limit_hit and here in self.ends:  # step 5 at an end node: Action END
            return self._after(new, "complete", None, "action_end", said)
        new["turn_limit"] = state["turn_limit"] or limit_hit
        facts = self.facts(new, text, nlu, act, intent, fallback, missing)
        facts["nlu.safety"] = safety or "none"
        kind, target, reason = self.route(here, facts, new["turn_limit"], missing, asked)
        return self._after(new, kind, target, reason, said)

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
        }
        facts.update({"slots." + name: new["slots"].get(name) for name in self.slots})
        return facts

    def route(self, here: str, facts: dict, turn_limit: bool, missing: list,
              asked: bool) -> tuple[str, str | None, str]:
        """Step 6, tiers 2-8: (kind, target, reason)."""
        for i, rule in enumerate(self.globals):
            if rule["target"] == here:
                continue  # going where you are instructs nothing (seed 002)
            if evaluate(rule.get("condition"), facts):
                name = rule.get("name")
                return "move", rule["target"], f"global:{name}" if name else f"global[{i}]"
        if not turn_limit:
            if facts["system.node_turns"] < self.params(here)["min_turns"]:
                return "stay", here, "gate:min_turns"
            if missing:
                return "stay", here, "gate:required_slots"
            if asked:
                return "stay", here, "gate:confirmation"
        node = self.nodes[here]
        for i, rule in enumerate(node.get("next_nodes", [])):
            if evaluate(rule.get("condition"), facts):
                if "target" in rule:
                    return "move", rule["target"], f"next_nodes[{i}]"
                return "stay", here, f"stay:next_nodes[{i}]"
        if node.get("default_next") is not None:
            return "move", node["default_next"], "default_next"
        if here in self.ends:
            return "complete", None, "terminal"
        return "stay", here, "no_route"

    def _after(self, new: dict, kind: str, target: str | None, reason: str,
               said: Said) -> tuple[dict, Step]:
        """Step 7 (the move and its resets), the skill of the node that now speaks, then the
        reply (when the oracle words turns)."""
        here = said.here
        said = said._replace(kind="fallback" if reason.startswith("fallback:") else kind,
                             target=target, reason=reason, turn_limit=new["turn_limit"])
        if kind == "complete":
            new["complete"] = True
            new["complete_reason"] = reason
        elif kind == "move":
            new.update(node=target, previous=here, node_turns=0, retries=0,
                       turn_limit=False, skill="none", skill_data={})
        if not new["complete"] and new["skill"] == "none":
            new["skill"], new["skill_data"] = self.skill_result(new["node"])
        response = self.wording.reply(new, said) if self.wording is not None else None
        return new, Step(here, None if kind == "complete" else new["node"], reason,
                         kind == "complete", dict(new["slots"]), response)
