"""The reference scenario's flow (scenarios/senimate.json) built the ways a user might build it
instead of `mgi`, for `bench.py`: the same conversation, the same decisions, the same words.

- `LangGraphRouter`: a LangGraph `StateGraph` (one node function per dialogue node, entered
  through a conditional edge on the current node), compiled with an in-memory checkpointer;
  one `invoke` per user turn keyed by thread id: how multi-turn chat is built with LangGraph.
- `NetworkxRouter`: the seed's original design (seed 000: `GraphBuilder` turns the scenario
  JSON into a networkx `DiGraph`; `dst_routing` evaluates conditions and picks the next node):
  the edges carry the scenario's own transition rules, conditions as the condition objects
  (`field` path, `operator`, `value`, `and`/`or`/`not`) evaluated each turn against the turn's
  context; each turn looks up the current node's successors, checks the global rules first,
  then the edges; no match stays. Built from scenarios/senimate.json, nothing hand-coded.
- `NetworkxLambdaRouter`: the same graph with the conditions written by hand as Python
  lambdas (as `RULES` below): not the original design, a faster variant, reported beside it.
- `PlainRouter`: a hand-written router, if/elif per node over a small dict (the lower bound).
- `EngineRunner`: `mgi`'s engine (scripted NLU, template NLG, memory store) behind the same
  `start` / `turn` calls.

Every peer does what the engine does on a turn (SPEC 6.2): the NLU reading rules (empty text
is silence, an unknown act is null, null with a declared intent is inform), slot validation
(declared slots only, enum members, integer bounds; any declared slot may be filled), the
counters, the fallback budget (two re-prompts per node, none at the closing node), the turn
limit, min_turns, global rules first (skipped when they target the current node), the
resume-to-first-empty-slot rules of the closing node, the template wording (SPEC 9: each
response's variants in rotation, kept per session, and never the previous reply when the
turn has another sentence) and a bounded history. A peer keeps its session state live (a dict, changed in place) where the engine
builds a new frozen state each turn and saves it in a versioned store; LangGraph's
checkpointer serializes it.

`SCRIPTS` are the two scripted conversations; `check_same` runs them through every peer and
returns the differences (none expected) in (node, next node, reason, complete, response).
"""

from __future__ import annotations

import functools
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, TypedDict
from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # irkit, the tests' condition helpers
SCENARIO_PATH = ROOT / "scenarios" / "senimate.json"
SCENARIO = json.loads(SCENARIO_PATH.read_text(encoding="utf-8"))

# --- the scripts ---------------------------------------------------------------------------


def _n(act: str | None = None, intent: str | None = None, **slots: Any) -> dict:
    """A scripted NLU result in the `mgi run --json` object form."""
    result: dict[str, Any] = {"dialogue_act": act}
    if intent is not None:
        result["intent"] = intent
    if slots:
        result["slots"] = slots
    return result


END = "user_wants_to_end"

# Greeting to completion: the min_turns gate, the health re-entry, free talk, the end intent.
FULL_WALK: list[tuple[str, dict]] = [
    ("네 좋아요", _n("affirm")),
    ("아침에 공원에서 산책했어요", _n("inform", daily_life="산책")),
    ("오후에는 경로당에 갔어요", _n("inform")),
    ("점심은 맛있게 먹었어요", _n("inform", meal_status="adequate")),
    ("요즘 좀 불편해요", _n("inform", health_status="complaint")),
    ("무릎이 쑤셔요, 한 5 정도", _n("inform", health_issue="무릎", symptom="쑤심", pain_level=5)),
    ("손주가 놀러 온대요", _n("inform")),
    ("시장에 같이 가려고요", _n("inform")),
    ("이제 그만할래요", _n("inform", END)),
    ("네", _n("affirm")),
]

# Re-prompts (silence, not understood), the silent close, resumes to the first node with an
# empty slot (twice, the second after the user over-answers at the closing node), an
# exhausted fallback that routes on, a second end, a resume to free talk and the close.
RESUMES_AND_FALLBACKS: list[tuple[str, dict]] = [
    ("", _n()),                                               # greeting: no_input re-prompt
    ("음...", _n(None)),                                      # greeting: not_understood re-prompt
    ("네 좋아요", _n("affirm")),                              # -> daily_life_check
    ("", _n()),                                               # re-prompt 1
    ("", _n()),                                               # re-prompt 2
    ("", _n()),                                               # budget spent: silent_close
    ("요즘 무릎이 아파서요", _n("inform")),                   # resume -> daily_life_check
    ("그만", _n(None, END)),                                  # null + intent = inform: end
    ("텃밭에 상추를 심었어요", _n("inform", daily_life="텃밭")),  # resume -> meal_check
    ("뭐라고?", _n(None)),                                    # re-prompt 1
    ("응?", _n(None)),                                        # re-prompt 2
    ("어", _n(None)),                                         # budget spent: default_next
    ("몸은 괜찮고 밥도 먹었어요",
     _n("inform", health_status="good", meal_status="adequate", pain_level=42)),  # 42: invalid
    ("", _n()),                                               # general: re-prompt
    ("오늘 날씨가 어때요?", _n("question")),                 # stay
    ("비가 온대요", _n("inform")),
    ("우산을 챙겨야겠어요", _n("inform")),
    ("옛날에는 비가 오면 부침개를 부쳤어요", _n("inform")),
    ("손주가 좋아했지요", _n("inform")),                       # node turn 6: the turn limit
    ("다음에 얘기해요", _n("inform", END)),                   # end -> closure
    ("아 그런데 하나 더요", _n("inform")),                    # resume -> general_conversation
    ("그만할래요", _n("inform", END)),                        # end -> closure
    ("고마워요", _n("thank")),                                # complete
]

SCRIPTS: dict[str, list[tuple[str, dict]]] = {
    "full_walk": FULL_WALK,
    "resumes_fallbacks": RESUMES_AND_FALLBACKS,
}

# --- the flow's data, shared by the peers (the engine reads it from the IR) ----------------

ACTS = frozenset(("affirm", "deny", "inform", "question", "greet", "goodbye", "thank",
                  "silence", "null"))
INTENTS = frozenset(SCENARIO["intents"])
CLOSING_ACTS = frozenset(SCENARIO["graph"]["closing_acts"]) - {"null"}
# Each response as its variants (SPEC 9: a plain string is one).
RESPONSES: dict[str, dict[str, list[str]]] = {
    node["id"]: {kind: [said] if isinstance(said, str) else said
                 for kind, said in node.get("responses", {}).items()}
    for node in SCENARIO["graph"]["nodes"]}
QUESTIONS = {name: slot.get("question") for name, slot in SCENARIO["slots"].items()}
COLLECT = {node["id"]: node.get("collect_slots", []) for node in SCENARIO["graph"]["nodes"]}
ENTRY = SCENARIO["graph"]["entry"]
HISTORY_LIMIT = 6
# The common sentences, each with the second wording said when the first would repeat.
COMMON = {"no_input": ["혹시 듣고 계세요? 편하실 때 말씀해 주세요.",
                       "천천히 하셔도 괜찮아요. 준비되시면 말씀해 주세요."],
          "not_understood": ["죄송해요, 잘 이해하지 못했어요. 다시 말씀해 주시겠어요?",
                             "제가 아직 잘 못 알아들었어요. 조금 다르게 말씀해 주시겠어요?"],
          "goodbye": ["네, 알겠습니다. 좋은 하루 보내세요.", "네, 다음에 또 이야기 나눠요."],
          "continue": ["네, 말씀해 주세요.", "네, 듣고 있어요. 편하게 이야기해 주세요."]}
GREETING, DAILY, MEAL, HEALTH, GENERAL, CLOSURE = (
    "greeting_introduction", "daily_life_check", "meal_check", "health_check",
    "general_conversation", "conversation_closure")


class _SlotRule:
    __slots__ = ("kind", "members", "low", "high")

    def __init__(self, spec: dict):
        self.kind = spec["value_type"]
        self.members = frozenset(spec.get("values", ()))
        self.low, self.high = spec.get("min"), spec.get("max")


SLOT_RULES = {name: _SlotRule(spec) for name, spec in SCENARIO["slots"].items()}


def read_nlu(text: str, nlu: dict | None) -> tuple[str | None, str]:
    """(intent, act) by the reading rules of SPEC 6.2 step 2."""
    if not text or not text.strip():
        return None, "silence"
    nlu = nlu or {}
    act = nlu.get("dialogue_act")
    if act == "negate":
        act = "deny"
    elif act not in ACTS or act == "silence":
        act = "null"
    intent = nlu.get("intent")
    if intent not in INTENTS:
        intent = None
    if act == "null" and intent is not None:
        act = "inform"
    return intent, act


def fill_slots(slots: dict, extracted: dict | None, act: str) -> dict:
    """The slots after this turn's values (copy on write; invalid and undeclared dropped)."""
    if not extracted or act == "silence":
        return slots
    copied = False
    for name, value in extracted.items():
        rule = SLOT_RULES.get(name)
        if rule is None or value is None:
            continue
        kind = rule.kind
        if kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            if (rule.low is not None and value < rule.low) or (
                    rule.high is not None and value > rule.high):
                continue
        elif not isinstance(value, str) or not value.strip():
            continue
        elif kind == "enum":
            if value not in rule.members:
                continue
        else:
            value = value.strip()
        if slots.get(name) != value:
            if not copied:
                slots, copied = dict(slots), True
            slots[name] = value
    return slots


def word(state: dict, slots: dict, kind: str, node: str, target: str | None,
         fallback: str | None, turn_limit: bool) -> tuple[str, dict]:
    """The template wording of the engine for this flow (no placeholders, no required slot,
    no confirmation in it): the reply and the session's rotation after it. The candidates of
    the turn in order; a response's variants start after the one said last; the first that
    is not the previous reply is said (SPEC 9)."""
    if kind == "move":
        chain = [(target, "default"), _reask(target, slots), COMMON["continue"]]
    elif kind == "complete":
        chain = [(node, "complete"), COMMON["goodbye"]]
    else:
        chain = [(node, "turn_limit")] if kind == "stay" and turn_limit else []
        if fallback is not None:
            chain += [(node, fallback), _reask(node, slots)]
            chain += [] if node == CLOSURE else [(node, "default")]
            chain.append(COMMON[fallback])
        elif node == CLOSURE:
            chain.append(COMMON["continue"])
        else:
            chain += [(node, "default"), _reask(node, slots), COMMON["continue"]]
    return first_new(chain, state["rotation"], state["history"][-1][1])


def _reask(node: str, slots: dict) -> list[str]:
    """The question of the node's first empty collect slot."""
    return next(([QUESTIONS[name]] for name in COLLECT[node] if slots.get(name) is None), [])


def first_new(chain: list, rotation: dict, previous: str | None) -> tuple[str, dict]:
    """The first sentence of `chain` (a (node, kind) response, or fixed sentences) that is not
    `previous`, else the first; the rotation with the variant said."""
    first = None
    for item in chain:
        texts = RESPONSES[item[0]].get(item[1], []) if isinstance(item, tuple) else item
        key = f"{item[0]}:{item[1]}" if isinstance(item, tuple) and len(texts) > 1 else None
        start = rotation[key] + 1 if key in rotation else 0
        for index in (i % len(texts) for i in range(start, start + len(texts))):
            said = (texts[index], rotation if key is None else {**rotation, key: index})
            if texts[index] != previous:
                return said
            first = first or said
    return first


def new_state() -> dict:
    """A session just opened (bot first: the opening is session turn 1, node turn 1)."""
    opening, rotation = first_new([(ENTRY, "default")], {}, None)
    return {"node": ENTRY, "previous": None, "node_turns": 1, "session_turns": 1,
            "no_input": 0, "not_understood": 0, "retries": 0, "exhausted": False,
            "turn_limit": False, "slots": {}, "complete": False, "rotation": rotation,
            "history": [(None, opening, ENTRY, "opening")]}


def remember(history: list, entry: tuple) -> list:
    if len(history) >= HISTORY_LIMIT:
        return [*history[len(history) - HISTORY_LIMIT + 1:], entry]
    return [*history, entry]


Outcome = tuple  # (handled node, next node or None, reason, complete, response)


# --- the generic turn of the graph peers ----------------------------------------------------


class NodeParams:
    """A dialogue node's parameters (defaults as the compiler fills them)."""

    __slots__ = ("id", "min_turns", "max_turns", "fallback_budget", "end")

    def __init__(self, node: dict):
        params = node.get("params", {})
        self.id = node["id"]
        self.min_turns = params.get("min_turns", 1)
        self.max_turns = params.get("max_turns")
        self.fallback_budget = params.get("max_fallback_retries", 2)
        self.end = bool(node.get("terminal"))


# The turn context the conditions read: the scenario's field paths (`slots.NAME` is read from
# the "slots" entry). Conditions are callables over it: written by hand (`RULES`, for LangGraph
# and `NetworkxLambdaRouter`) or the scenario's condition objects (`evaluate`).
Condition = Callable[[dict], bool] | None
INTENT, ACT, NODE_TURNS = "nlu.intent", "nlu.dialogue_act", "system.node_turns"
PREVIOUS, RESUMING, NO_INPUT = ("system.previous_node", "system.conversation_resuming",
                                "system.no_input_count")


def _resume(slot: str | None) -> Callable[[dict], bool]:
    if slot is None:
        return lambda c: c[RESUMING] and c[INTENT] != END
    return lambda c: c[RESUMING] and c[INTENT] != END and not c["slots"].get(slot)


# (source node, ordered rules: (target or None for stay, condition or None, reason))
RULES: dict[str, list[tuple[str | None, Condition, str]]] = {
    GREETING: [(None, lambda c: c[NODE_TURNS] == 1, "stay:next_nodes[0]"),
               (DAILY, None, "default_next")],
    DAILY: [(MEAL, None, "default_next")],
    MEAL: [(HEALTH, None, "default_next")],
    HEALTH: [(HEALTH, lambda c: (c["slots"].get("health_status") == "complaint"
                                 and not c["slots"].get("symptom")
                                 and not c["slots"].get("health_issue")
                                 and c[PREVIOUS] != HEALTH), "next_nodes[0]"),
             (GENERAL, None, "default_next")],
    GENERAL: [(CLOSURE, lambda c: c[INTENT] == END, "next_nodes[0]"),
              (None, None, "stay:next_nodes[1]")],
    CLOSURE: [(DAILY, _resume("daily_life"), "next_nodes[0]"),
              (MEAL, _resume("meal_status"), "next_nodes[1]"),
              (HEALTH, _resume("health_status"), "next_nodes[2]"),
              (GENERAL, _resume(None), "next_nodes[3]")],
}
GLOBALS: list[tuple[str, str, Callable[[dict], bool]]] = [
    ("user_wants_to_end", CLOSURE, lambda c: c[INTENT] == END),
    ("silent_close", CLOSURE, lambda c: c[ACT] == "silence" and c[NO_INPUT] > 2),
]


def graph_turn(state: dict, params: NodeParams, text: str, nlu: dict | None,
               rules_of: Callable[[str], list], globals_: list = GLOBALS) -> tuple[dict, Outcome]:
    """One turn of the graph peers: everything but where the rules come from and where the
    state lives. Returns the changed state fields and the outcome."""
    here = params.id
    intent, act = read_nlu(text, nlu)
    slots = fill_slots(state["slots"], (nlu or {}).get("slots"), act)
    fallback = "no_input" if act == "silence" else "not_understood" if act == "null" else None
    retries = state["retries"] if fallback is not None else 0
    reprompt = fallback is not None and retries < params.fallback_budget
    node_turns = state["node_turns"] + 1
    limit_hit = (params.max_turns is not None and node_turns >= params.max_turns
                 and not reprompt)
    turn_limit = state["turn_limit"] or limit_hit
    no_input = state["no_input"] + 1 if act == "silence" else 0
    not_understood = state["not_understood"] + 1 if act == "null" else 0
    exhausted = fallback is not None and not reprompt
    context = {INTENT: intent, ACT: act, NODE_TURNS: node_turns, "slots": slots,
               NO_INPUT: no_input, PREVIOUS: state["previous"],
               RESUMING: params.end and act not in CLOSING_ACTS}
    kind, target, reason = _route(params, context, reprompt, limit_hit, turn_limit, fallback,
                                  rules_of, globals_)
    changes = {"session_turns": state["session_turns"] + 1, "no_input": no_input,
               "not_understood": not_understood, "slots": slots}
    if kind == "move":
        changes.update(node=target, previous=here, node_turns=0, retries=0, exhausted=False,
                       turn_limit=False)
    else:
        changes.update(node_turns=node_turns, retries=retries + 1 if reprompt else retries,
                       exhausted=exhausted, turn_limit=turn_limit,
                       complete=kind == "complete")
    response, changes["rotation"] = word(state, slots, kind, here, target, fallback, turn_limit)
    changes["history"] = remember(state["history"], (text, response, here, reason))
    nxt = None if kind == "complete" else target if kind == "move" else here
    return changes, (here, nxt, reason, kind == "complete", response)


def _route(params, context, reprompt, limit_hit, turn_limit, fallback, rules_of, globals_):
    here = params.id
    if reprompt:
        return "fallback", here, "fallback:" + fallback
    if limit_hit and params.end:
        return "complete", None, "action_end"
    for name, target, test in globals_:
        if target != here and test(context):
            return "move", target, "global:" + name
    if not turn_limit and context[NODE_TURNS] < params.min_turns:
        return "stay", here, "gate:min_turns"
    for target, test, reason in rules_of(here):
        if test is None or test(context):
            return ("stay", here, reason) if target is None else ("move", target, reason)
    if params.end:
        return "complete", None, "terminal"
    return "stay", here, "no_route"


# --- (b) networkx: the original design --------------------------------------------------------


def evaluate(condition: dict, context: dict) -> bool:
    """A scenario condition object against the turn context, as the original `dst_routing`
    did: `and` / `or` / `not` of leaves `{field, operator, value}`; a field path is looked up in
    the context (`slots.NAME` in its slots)."""
    if "and" in condition:
        for item in condition["and"]:
            if not evaluate(item, context):
                return False
        return True
    if "or" in condition:
        for item in condition["or"]:
            if evaluate(item, context):
                return True
        return False
    if "not" in condition:
        return not evaluate(condition["not"], context)
    path = condition["field"]
    value = context[path] if path in context else context["slots"].get(path[6:])
    return OPERATORS[condition["operator"]](value, condition.get("value"))


OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "equals": lambda a, b: a == b,
    "not_equals": lambda a, b: a != b,
    "in": lambda a, b: a in b,
    "not_in": lambda a, b: a not in b,
    "greater_than": lambda a, b: a is not None and a > b,
    "greater_or_equal": lambda a, b: a is not None and a >= b,
    "less_than": lambda a, b: a is not None and a < b,
    "less_or_equal": lambda a, b: a is not None and a <= b,
    "is_empty": lambda a, _: a is None or a == "",
    "is_not_empty": lambda a, _: a is not None and a != "",
    "contains": lambda a, b: a is not None and b in a,
}


def condition_object(raw: Any) -> dict | None:
    """The scenario's condition in the object form of the original design (an expression
    string is parsed by mgc's parser; setting up, not timed)."""
    if raw is None:
        return None
    from compiler.conditions import lower_condition
    from compiler.diagnostics import Diagnostics
    from support.irkit import object_form

    return object_form(lower_condition(raw, "", Diagnostics()))


def _tested(condition: dict | None) -> Condition:
    return None if condition is None else functools.partial(evaluate, condition)


def scenario_rules() -> tuple[dict[str, list], list]:
    """Every node's ordered rules (`next_nodes`, then `default_next`) and the global rules,
    read from the scenario with their conditions as objects."""
    rules: dict[str, list] = {}
    for node in SCENARIO["graph"]["nodes"]:
        ordered = []
        for i, edge in enumerate(node.get("next_nodes", [])):
            test = _tested(condition_object(edge.get("condition")))
            if edge.get("action") == "stay":
                ordered.append((None, test, f"stay:next_nodes[{i}]"))
            else:
                ordered.append((edge["target"], test, f"next_nodes[{i}]"))
        if node.get("default_next"):
            ordered.append((node["default_next"], None, "default_next"))
        rules[node["id"]] = ordered
    globals_ = [(g["name"], g["target"], _tested(condition_object(g["condition"])))
                for g in SCENARIO["graph"].get("global_transitions", [])]
    return rules, globals_


class NetworkxRouter:
    """Successors looked up in a `DiGraph` each turn; rules stored on the edges (a self-loop
    carries a stay or a re-entry); global rules on the graph, checked first; no match stays."""

    name = "networkx"

    def __init__(self, rules: dict[str, list] | None = None, globals_: list | None = None):
        import networkx as nx

        if rules is None:
            rules, globals_ = scenario_rules()
        graph = nx.DiGraph(globals=globals_)
        for node in SCENARIO["graph"]["nodes"]:
            graph.add_node(node["id"], params=NodeParams(node))
        for source, ordered in rules.items():
            for order, (target, test, reason) in enumerate(ordered):
                dest = source if target is None else target
                action = "stay" if target is None else "move"
                if graph.has_edge(source, dest):
                    graph[source][dest]["rules"].append((order, test, action, reason))
                else:
                    graph.add_edge(source, dest, rules=[(order, test, action, reason)])
        self.graph = graph
        self.sessions: dict[str, dict] = {}

    def _rules(self, here: str) -> list:
        found = []
        for succ, data in self.graph.adj[here].items():
            for order, test, action, reason in data["rules"]:
                found.append((order, None if action == "stay" else succ, test, reason))
        found.sort(key=lambda rule: rule[0])
        return [(target, test, reason) for _, target, test, reason in found]

    def start(self, session_id: str) -> str:
        state = new_state()
        self.sessions[session_id] = state
        return state["history"][0][1]

    def turn(self, session_id: str, text: str, nlu: dict | None) -> Outcome:
        state = self.sessions[session_id]
        if state["complete"]:
            raise RuntimeError(f"session {session_id} is complete")
        params = self.graph.nodes[state["node"]]["params"]
        changes, outcome = graph_turn(state, params, text, nlu, self._rules,
                                      self.graph.graph["globals"])
        state.update(changes)
        return outcome


class NetworkxLambdaRouter(NetworkxRouter):
    """`NetworkxRouter` with the conditions written by hand as lambdas (`RULES`, `GLOBALS`)."""

    name = "networkx_lambdas"

    def __init__(self) -> None:
        super().__init__(RULES, GLOBALS)


# --- (c) plain Python: the lower bound ------------------------------------------------------


class PlainRouter:
    """The flow written out by hand: if/elif per node over a dict kept per session."""

    name = "plain"

    def __init__(self) -> None:
        self.sessions: dict[str, dict] = {}

    def start(self, session_id: str) -> str:
        state = new_state()
        self.sessions[session_id] = state
        return state["history"][0][1]

    def turn(self, session_id: str, text: str, nlu: dict | None) -> Outcome:
        s = self.sessions[session_id]
        if s["complete"]:
            raise RuntimeError(f"session {session_id} is complete")
        here = s["node"]
        intent, act = read_nlu(text, nlu)
        slots = s["slots"] = fill_slots(s["slots"], nlu.get("slots") if nlu else None, act)
        silence, null = act == "silence", act == "null"
        fallback = "no_input" if silence else "not_understood" if null else None
        retries = s["retries"] if fallback is not None else 0
        reprompt = fallback is not None and retries < (0 if here == CLOSURE else 2)
        s["node_turns"] = turns = s["node_turns"] + 1
        s["session_turns"] += 1
        s["no_input"] = no_input = s["no_input"] + 1 if silence else 0
        s["not_understood"] = s["not_understood"] + 1 if null else 0
        limit = {DAILY: 4, MEAL: 3, GENERAL: 6, CLOSURE: 2}.get(here)
        limit_hit = limit is not None and turns >= limit and not reprompt
        turn_limit = s["turn_limit"] or limit_hit
        target = None
        if reprompt:
            kind, reason = "fallback", "fallback:" + fallback
        elif limit_hit and here == CLOSURE:
            kind, reason = "complete", "action_end"
        elif intent == END and here != CLOSURE:
            kind, target, reason = "move", CLOSURE, "global:user_wants_to_end"
        elif silence and no_input > 2 and here != CLOSURE:
            kind, target, reason = "move", CLOSURE, "global:silent_close"
        elif here == DAILY and turns < 2 and not turn_limit:
            kind, reason = "stay", "gate:min_turns"
        elif here == GREETING:
            if turns == 1:
                kind, reason = "stay", "stay:next_nodes[0]"
            else:
                kind, target, reason = "move", DAILY, "default_next"
        elif here == DAILY:
            kind, target, reason = "move", MEAL, "default_next"
        elif here == MEAL:
            kind, target, reason = "move", HEALTH, "default_next"
        elif here == HEALTH:
            if (slots.get("health_status") == "complaint" and not slots.get("symptom")
                    and not slots.get("health_issue") and s["previous"] != HEALTH):
                kind, target, reason = "move", HEALTH, "next_nodes[0]"
            else:
                kind, target, reason = "move", GENERAL, "default_next"
        elif here == GENERAL:
            if intent == END:
                kind, target, reason = "move", CLOSURE, "next_nodes[0]"
            else:
                kind, reason = "stay", "stay:next_nodes[1]"
        elif act not in CLOSING_ACTS and intent != END:  # closure, resuming
            kind = "move"
            if not slots.get("daily_life"):
                target, reason = DAILY, "next_nodes[0]"
            elif not slots.get("meal_status"):
                target, reason = MEAL, "next_nodes[1]"
            elif not slots.get("health_status"):
                target, reason = HEALTH, "next_nodes[2]"
            else:
                target, reason = GENERAL, "next_nodes[3]"
        else:
            kind, reason = "complete", "terminal"
        response, s["rotation"] = word(s, slots, kind, here, target, fallback, turn_limit)
        if kind == "move":
            s["node"], s["previous"], s["node_turns"] = target, here, 0
            s["retries"], s["exhausted"], s["turn_limit"] = 0, False, False
            nxt = target
        else:
            s["retries"] = retries + 1 if reprompt else retries
            s["exhausted"] = fallback is not None and not reprompt
            s["turn_limit"] = turn_limit
            nxt = here
            if kind == "complete":
                s["complete"], nxt = True, None
        s["history"] = remember(s["history"], (text, response, here, reason))
        return here, nxt, reason, kind == "complete", response


# --- (a) LangGraph ----------------------------------------------------------------------------


class ChatState(TypedDict, total=False):
    user: str | None  # this turn's input
    nlu: dict | None
    node: str  # the session
    previous: str | None
    node_turns: int
    session_turns: int
    no_input: int
    not_understood: int
    retries: int
    exhausted: bool
    turn_limit: bool
    slots: dict
    complete: bool
    rotation: dict
    history: list
    handled: str  # this turn's outcome
    next: str | None
    reason: str
    response: str


class LangGraphRouter:
    """A `StateGraph`: START routes on the current node to that node's function (or to the
    opening for a new thread); each node function handles the turn and returns the state
    update; compiled with `InMemorySaver`, one `invoke` per user turn, thread id = session."""

    name = "langgraph"

    def __init__(self) -> None:
        from langgraph.graph import END as GRAPH_END, START, StateGraph
        try:
            from langgraph.checkpoint.memory import InMemorySaver as Saver
        except ImportError:  # older releases
            from langgraph.checkpoint.memory import MemorySaver as Saver

        builder = StateGraph(ChatState)
        params = {node["id"]: NodeParams(node) for node in SCENARIO["graph"]["nodes"]
                  if node["id"] in RULES}  # the flow's nodes (the safety nodes are not in it)
        builder.add_node("opening", self._opening)
        for node_id, p in params.items():
            builder.add_node(node_id, self._node_function(p))
            builder.add_edge(node_id, GRAPH_END)
        builder.add_edge("opening", GRAPH_END)
        builder.add_conditional_edges(
            START, lambda s: s.get("node") or "opening", ["opening", *params])
        self.checkpointer = Saver()
        self.graph = builder.compile(checkpointer=self.checkpointer)
        self.configs: dict[str, dict] = {}

    @staticmethod
    def _opening(state: ChatState) -> dict:
        opened = new_state()
        return {**opened, "handled": ENTRY, "next": ENTRY, "reason": "opening",
                "response": opened["history"][0][1]}

    @staticmethod
    def _node_function(params: NodeParams):
        rules = RULES[params.id]

        def handle(state: ChatState) -> dict:
            if state["complete"]:
                raise RuntimeError("session is complete")
            changes, (here, nxt, reason, complete, response) = graph_turn(
                state, params, state["user"], state["nlu"], lambda _: rules)
            changes.update(handled=here, next=nxt, reason=reason, response=response)
            return changes
        handle.__name__ = params.id
        return handle

    def _config(self, session_id: str) -> dict:
        config = self.configs.get(session_id)
        if config is None:
            config = self.configs[session_id] = {"configurable": {"thread_id": session_id}}
        return config

    def start(self, session_id: str) -> str:
        out = self.graph.invoke({"user": None, "nlu": None}, self._config(session_id))
        return out["response"]

    def turn(self, session_id: str, text: str, nlu: dict | None) -> Outcome:
        out = self.graph.invoke({"user": text, "nlu": nlu}, self._config(session_id))
        return out["handled"], out["next"], out["reason"], out["complete"], out["response"]


# --- mgi's engine -----------------------------------------------------------------------------


def reference_runtime():
    """The compiled reference scenario as `mgi` loads it (compiled in memory, decoded)."""
    from compiler.driver import check_file
    from interpreter import ir
    from interpreter.loader import Runtime

    result = check_file(str(SCENARIO_PATH))
    if result.errors:
        raise SystemExit(f"scenarios/senimate.json does not compile: {result.diagnostics[0]}")
    envelope, program = ir.decode_ir(result.ir_bytes())
    return Runtime(program, envelope.source_sha256, envelope.compiler_version)


class EngineRunner:
    """`mgi`'s engine: scripted NLU (the result given with the input, as `mgi run --json`
    does), template NLG, `MemorySessionStore`."""

    name = "mgi"

    def __init__(self, runtime=None, store=None) -> None:
        from interpreter.engine import Engine
        from interpreter.stores.sessions import MemorySessionStore

        self.runtime = runtime if runtime is not None else reference_runtime()
        self.store = store if store is not None else MemorySessionStore()
        self.engine = Engine(self.runtime, store=self.store)

    def start(self, session_id: str) -> str:
        return self.engine.start(session_id).response

    def turn(self, session_id: str, text: str, nlu: dict | None) -> Outcome:
        r = self.engine.turn(session_id, text, nlu)
        return r.node, r.next_node, r.reason, r.complete, r.response


PEER_CLASSES = (LangGraphRouter, NetworkxRouter, NetworkxLambdaRouter, PlainRouter)


_CHECK_IDS = itertools.count()


def run_script(runner, session_id: str, script: list[tuple[str, dict]]) -> list[Outcome]:
    session_id = f"{session_id}-{next(_CHECK_IDS)}"
    runner.start(session_id)
    return [runner.turn(session_id, text, nlu) for text, nlu in script]


def check_same(runners: list) -> list[str]:
    """Run both scripts through every runner; the differences from the first, as lines."""
    problems: list[str] = []
    for script_name, script in SCRIPTS.items():
        runs = {r.name: run_script(r, f"check-{script_name}", script) for r in runners}
        reference_name = runners[0].name
        reference = runs[reference_name]
        if not reference[-1][3]:
            problems.append(f"{script_name}: {reference_name} does not complete the script")
        for name, outcomes in runs.items():
            if outcomes == reference:
                continue
            problems.append(f"{script_name}: {name} differs from {reference_name}:")
            for i, (a, b) in enumerate(zip(reference, outcomes), 1):
                mark = "  " if a == b else "!!"
                problems.append(f" {mark} turn {i:2}: {reference_name} {a[:4]}")
                if a != b:
                    problems.append(f"            {name} {b[:4]}"
                                    + ("" if a[4] == b[4] else f" response {b[4]!r} "
                                       f"instead of {a[4]!r}"))
    return problems


def median_turn_ns(runner, sessions: int, ids) -> float:
    """The median user turn, in ns, over `sessions` plays of both scripts (`ids`: a counter
    that makes each session id new)."""
    clock, samples = time.perf_counter_ns, []
    for _ in range(sessions):
        for script in SCRIPTS.values():
            session_id = f"timed-{next(ids)}"
            runner.start(session_id)
            for text, nlu in script:
                start = clock()
                runner.turn(session_id, text, nlu)
                samples.append(clock() - start)
    return statistics.median(samples)


def sequences(runner) -> dict[str, list[Outcome]]:
    return {name: run_script(runner, f"seq-{name}", script) for name, script in SCRIPTS.items()}


if __name__ == "__main__":  # print the sequences and the check
    sys.path.insert(0, str(ROOT))
    runners = [EngineRunner(), *(cls() for cls in PEER_CLASSES)]
    for name, outcomes in sequences(runners[0]).items():
        print(name)
        for i, (node, nxt, reason, complete, _) in enumerate(outcomes, 1):
            print(f"  {i:2} {node:22} -> {str(nxt):22} {reason}{'  (complete)' if complete else ''}")
    problems = check_same(runners)
    print("\n".join(problems) if problems else f"all {len(runners)} agree on both scripts")


# --- timing (bench.py and service_bench.py) ---------------------------------------------

def percentile(ordered: list, q: float):
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def time_sessions(runner, count: int, prefix: str, samples: dict[str, list[int]]) -> None:
    """`count` sessions of each script; every user turn timed alone."""
    clock = time.perf_counter_ns
    turn = runner.turn
    for k in range(count):
        for script_name, script in SCRIPTS.items():
            session_id = f"{prefix}-{k}-{script_name}"
            runner.start(session_id)
            bucket = samples[script_name]
            for text, nlu in script:
                start = clock()
                turn(session_id, text, nlu)
                bucket.append(clock() - start)
