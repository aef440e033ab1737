"""What `mgi fuzz` checks: the built-in properties, the designer's, and the designer's file.

In: per generated conversation, each step as it runs (a `TurnResult`, the node it entered, the
sentences the NLG left out for want of a value); a properties file (`load_properties`).
Out: per step, the first property it breaks as a `Violation` (property name, one-line message,
the expectation a counterexample transcript asserts at that step); the designer's properties
(`DesignerProperties`), or a `PropertiesError` naming the file and line.
After: every name in a properties file is a node, intent or slot of the scenario (an unknown
one is an error with a did-you-mean); checking never changes the conversation.

Built-in properties (`BUILT_IN`): the per-step ones live here; `ends_when_asked` and
`no_livelock` need to drive the engine and live in `fuzz`, `end_nodes_reachable` is read from
the coverage after the run. `safety_reached` (SPEC 10) is checked at every step of every
conversation (`check_safety_step`) and, before the conversations, from every node
(`safety_sweep`): each node in a fresh visit and, when it has one, on the turn that reaches
its turn limit (where an end node would otherwise end the session), with every sample crisis
of every category that has a `graph.safety` rule. `chain_bounded` and `action_once` (SPEC 8.3,
8.4) are checked at every step: the nodes a turn passed (`passed`), and the skill runs the
turn made, seen through `RecordingSkills`, a registry that notes each run's action id.
`no_known_ask` (SPEC 9) is checked on every move (`check_known_ask`), `no_verbatim_repeat`
on every reply (`check_repeat`).

The properties file: one property per line; `#` after a space (or at the start) begins a
comment; blank lines are ignored; an optional `LABEL:` names a property in reports (else it is
`FILE:LINE`); names may be written in backticks (needed for intent names with spaces).

    ends_fast: after intent user_wants_to_end, the session completes within 3 turns
    node health_check is never entered before node meal_check has been visited
    slot card_type is filled whenever node confirm is entered
    end intent user_wants_to_end        # also counts as asking to end (besides the detected ones)
    no_verbatim_repeat                  # an opt-in property (`OPT_IN`), checked when named

Opt-in properties (`OPT_IN`: `no_verbatim_repeat`, SPEC 9) are checked only when the file
names one on a line of its own; so is a dormant built-in (`DORMANT`: `no_known_ask`, which
checks SPEC 8.3's entry routing and waits for it to be built in to be on by default).

"after intent X": once the user says X and keeps asking to end (end intents, or the closing
acts at an end node), the session completes within N turns, the turn with X included.
"""

from __future__ import annotations

import difflib
import os
import re
from typing import Any, NamedTuple

from .. import MagoError
from ..files import InputFileError, read_input
from .inputs import UserTurn, transcript_safe
from ..wording.nlg import TemplateNLG, unfilled_placeholders
from ..executors import all_collected
from ..wording.variants import Choice

BUILT_IN: dict[str, str] = {
    "no_crash": "no turn raises",
    "ends_when_asked": "a user who keeps asking to end reaches the end within --max-turns turns",
    "no_livelock": "no node holds the user for more than --max-turns turns whatever they say",
    "end_nodes_reachable": "every end node is entered by some generated conversation",
    "response_not_empty": "every bot response has words",
    "placeholders_filled": "no response shows a placeholder or leaves out a sentence for want "
                           "of a value",
    "safety_reached": "from every node, a crisis of each category with a graph.safety rule "
                      "reaches its target in that turn",
    "chain_bounded": "no turn passes more nodes than the scenario has, nor one node twice",
    "action_once": "no action (SESSION:TURN:NODE) runs twice in one turn",
    "no_known_ask": "no turn moves into a task node whose collect slots are all filled (SPEC "
                    "8.3 entry routing passes it), unless it says params.skip_if_filled: false",
}
# Properties checked only when the properties file names them (SPEC 9).
OPT_IN: dict[str, str] = {
    "no_verbatim_repeat": "the bot never says the same sentence twice in a row",
}
# Built-in properties that wait for the runtime they check: until then they are checked only
# when the properties file names them, like an opt-in (none wait today: `no_known_ask` has
# the entry routing of SPEC 8.3 it needed).
DORMANT: frozenset[str] = frozenset()
_LEFTOVER = re.compile(r"\{(slots|profile|skill\.data)\.[^{}]*\}")


class Expectation(NamedTuple):
    """What a counterexample transcript asserts at the violating step (`mgi test` keys)."""

    key: str  # complete, not-next, says, not-says
    value: Any


class Violation(MagoError):
    """A property that failed in one conversation: what hypothesis shrinks. Each property
    has its own subclass (`violation`), so that hypothesis tells the failures apart."""

    def __init__(self, prop: str, message: str, expect: Expectation | None = None):
        super().__init__(f"{prop}: {message}")
        self.prop, self.message, self.expect = prop, message, expect
        self.turns: tuple[UserTurn, ...] = ()
        self.results: tuple = ()  # the TurnResults of the conversation, the opening first
        self.focus: str | None = None  # the node of a focus-mode counterexample
        self.profile: dict | None = None  # the session profile of the conversation
        self.offline = False  # the conversation ran without a mail transport
        self.answers: dict[int, dict] = {}  # step index -> the stand-in webhooks' answer


_CLASSES: dict[str, type] = {}


def violation(prop: str, message: str, expect: Expectation | None = None) -> Violation:
    """A `Violation` of the class that belongs to `prop`."""
    if prop not in _CLASSES:
        _CLASSES[prop] = type(f"Violation[{prop}]", (Violation,), {})
    return _CLASSES[prop](prop, message, expect)


class Conversation:
    """A generated conversation as the properties see it, step by step."""

    def __init__(self) -> None:
        self.turns: list[UserTurn] = []
        self.results: list = []  # TurnResult per step, the opening first
        self.visited: set[str] = set()  # nodes entered before the current step
        self.ending_from: int | None = None  # index of the first turn that asked to end
        self.complete = False
        self.profile: dict | None = None  # the session profile (SPEC 8.1), when drawn
        self.offline = False  # run without a mail transport, webhooks failing (`fuzz.runner`)
        self.answers: dict[int, dict] = {}  # step index -> the skill result its stand-ins gave

    @property
    def node(self) -> str:
        return self.results[-1].next_node or self.results[-1].node

    def intent_at(self, index: int) -> str | None:
        nlu = self.results[index + 1].nlu
        return nlu.get("intent") if nlu else None


def entered_node(result: Any) -> str | None:
    """The node a step entered: the start node at the opening, the target of a move (where
    its chain stopped, SPEC 8.3: the last node it passed when the chain completed there)."""
    if result.user is None:
        return result.node
    decision = result.decision
    if decision is None or decision.kind != "move":
        return None
    if result.next_node is not None:
        return result.next_node
    return result.passed[-1]["node"] if result.passed else None


def passed_nodes(result: Any) -> list[str]:
    """The nodes a step passed through without waiting (SPEC 8.3), in order."""
    return [p["node"] for p in result.passed] if result.user is not None else []


# --- skill runs, seen from outside the engine ---------------------------------------------------


class _RecordedSkill:
    """A skill that notes (action id, node) in `runs` before each run of the skill it wraps."""

    def __init__(self, skill: Any, runs: list):
        self.name, self.skill, self.runs = skill.name, skill, runs

    def run(self, args: dict, context: Any) -> Any:
        self.runs.append((context.action_id, context.node_id))
        return self.skill.run(args, context)


class RecordingSkills:
    """A skill registry (the engine asks it `get(name)`) that lends out the skills of
    `registry`, each wrapped to note its runs; `take()` gives the runs since the last call."""

    def __init__(self, registry: Any = None):
        from ..skills.registry import SkillRegistry

        self.registry = registry if registry is not None else SkillRegistry.default()
        self.runs: list[tuple[str, str]] = []
        self._taken = 0

    def get(self, name: str) -> Any:
        skill = self.registry.get(name)
        return None if skill is None else _RecordedSkill(skill, self.runs)

    def names(self) -> list[str]:
        return self.registry.names()

    def take(self) -> list[tuple[str, str]]:
        runs, self._taken = self.runs[self._taken:], len(self.runs)
        return runs


# --- built-in, per step ------------------------------------------------------------------------


class AuditedNLG(TemplateNLG):
    """The template NLG, noting each response text it said, or passed over for having no words
    left, whose placeholder had no value (the template NLG leaves that sentence out: the user
    hears half a message). A skill's data is only expected after the skill succeeded; a failed
    skill leaves its sentence out by design. It listens at `TemplateNLG._said`, which is given
    every choice with the response variants it read."""

    def __init__(self) -> None:
        self.left_out: list[tuple[str, str, str, str]] = []  # (node, kind, placeholder, sentence)

    def _said(self, choice: Choice, state: Any) -> None:
        read = [*choice.empty, *([(choice.source, choice.index)] if choice.source else [])]
        for candidates, index in read:
            raw = candidates.raw
            if candidates.key is None or index >= len(raw) or "{" not in raw[index]:
                continue
            node, _, kind = candidates.key.partition(":")  # a node id has no ':'
            here = node == state.current_node
            data = state.skill_data if here else {}
            for placeholder, sentence in unfilled_placeholders(raw[index], state.slots, data):
                if placeholder.startswith("{skill.") and not (here and state.skill_status == "ok"):
                    continue
                self.left_out.append((node, kind, placeholder, sentence))


def asks_what_it_knows(table: Any, slots: dict) -> bool:
    """Whether entering node `table` with `slots` asks only what is already known: a node
    that SPEC 8.3's entry routing passes (`skip:filled`: a task node, `min_turns` 1,
    `params.skip_if_filled` not false, every collect slot known, a list with its
    `min_items`; the engine's own rule, `NodeTable.skips_filled` and `all_collected`)."""
    return table.skips_filled and all_collected(table, slots)


def check_repeat(results: list) -> Violation | None:
    """`no_verbatim_repeat` for the last step of `results` (TurnResults, the opening first)."""
    if len(results) < 2:
        return None
    said, before = results[-1].response, results[-2].response
    if said is None or said != before:
        return None
    return violation("no_verbatim_repeat", f"{_step_name(results[-1])} at {results[-1].node} "
                     f"says again, word for word, what the bot said before: \"{said}\"",
                     _not_says(said))


def check_known_ask(result: Any, runtime: Any) -> Violation | None:
    """`no_known_ask` for one step: a user turn that moved into a node that asks only what is
    already known (`asks_what_it_knows`). A node the turn passed before stopping there is a
    second arrival, where SPEC 8.3's chain stops by design (`passed` of the JSON line)."""
    decision = result.decision
    if result.user is None or result.focus or decision is None or decision.kind != "move":
        return None
    target = result.next_node
    if target is None or target in passed_nodes(result):
        return None
    table = runtime.node_named(target)
    if not asks_what_it_knows(table, result.slots):
        return None
    known = ", ".join(f"{name} = {result.slots[name]!r}" for name in table.collect_names)
    return violation("no_known_ask", f"{_step_name(result)} moved from {result.node} into "
                     f"{target} ({result.reason}), which collects only what is known ({known})",
                     Expectation("not-next", target))


def _not_says(response: str) -> Expectation | None:
    """`not-says` with the longest transcript-safe sentence of `response`."""
    pieces = sorted((p.strip() for p in re.split(r"(?<=[.!?])\s+", response)), key=len,
                    reverse=True)
    fragment = next((p for p in pieces if len(p) >= 2 and transcript_safe(p)), None)
    return Expectation("not-says", fragment) if fragment else None


def check_response(result: Any, runtime: Any, left_out: list,
                   entered: str | None) -> Violation | None:
    """`response_not_empty` and `placeholders_filled` for one step (`entered`: the node it
    entered, `entered_node`)."""
    response = result.response
    where = _step_name(result)
    if response is not None and not response.strip():
        speaker = entered if entered is not None else result.node  # the node that spoke
        default = (runtime.node_named(speaker).responses.get("default") or [""])[0]
        fragment = said_fragment(default, "")
        return violation("response_not_empty", f"{where}: the bot said nothing "
                         f"(node {speaker})", _says(fragment))
    leftover = _LEFTOVER.search(response or "")
    if leftover:
        return violation("placeholders_filled", f"{where}: the response shows "
                         f"{leftover.group(0)}", Expectation("not-says", leftover.group(0)))
    if left_out:
        node, kind, placeholder, sentence = left_out[0]
        fragment = said_fragment(sentence, response or "")
        return violation("placeholders_filled", f"{where}: {placeholder} has no value, so node "
                         f"{node} left out \"{sentence}\" (responses.{kind})", _says(fragment))
    return None


def check_chain(result: Any, runtime: Any) -> Violation | None:
    """`chain_bounded` for one step: the nodes it passed, none twice, at most all of them."""
    chain = passed_nodes(result)
    if len(chain) <= len(runtime.nodes) and len(set(chain)) == len(chain):
        return None
    twice = next((n for i, n in enumerate(chain) if n in chain[:i]), None)
    why = f"passed {twice} twice" if twice else \
        f"passed {len(chain)} nodes, the scenario has {len(runtime.nodes)}"
    return violation("chain_bounded", f"{_step_name(result)} {why}: {' -> '.join(chain)}")


def check_actions(result: Any, runs: list[tuple[str, str]]) -> Violation | None:
    """`action_once` for one step: `runs`, the (action id, node) of the skill runs it made."""
    seen: set[str] = set()
    for action, node in runs:
        if action in seen:
            return violation("action_once", f"{_step_name(result)} ran action {action} "
                             f"(node {node}) twice: {', '.join(a for a, _ in runs)}")
        seen.add(action)
    return None


def check_safety_step(result: Any, runtime: Any, said: str | None = None) -> Violation | None:
    """`safety_reached` for one step: a turn whose category has a rule went to its target
    (`said`: the category the user's words are known to be, whatever was detected)."""
    heard = result.nlu if result.user is not None else None
    category = said or (heard.get("safety") if heard else None)
    rule = runtime.safety_routes.get(category) if category is not None else None
    if rule is None:
        return None
    target = runtime.nodes[rule.target].id
    if result.reason == rule.reason and result.next_node == target:
        return None
    return violation("safety_reached", f"{_step_name(result)}: a crisis ({category}) at node "
                     f"{result.node} went to {result.next_node or 'the end'} ({result.reason}), "
                     f"not to {target}", Expectation("reason", rule.reason))


def safety_sweep(runtime: Any, space: Any, skills: Any = None) -> Violation | None:
    """`safety_reached` from every node, before any conversation: a fresh visit and the turn
    that reaches the node's turn limit, each sample crisis of each category with a rule. A
    failure in a fresh visit carries a focus-mode transcript (`focus: NODE`)."""
    from ..engine import Engine
    from ..state import DialogueState
    from ..stores.sessions import MemorySessionStore
    from ..understanding.nlu import ScriptedNLU

    # a clock that stands still: the swept states were never saved, so no idle time passes
    engine = Engine(runtime, ScriptedNLU(), TemplateNLG(), MemorySessionStore(), skills,
                    clock=lambda: 0.0)
    nlu = None if space.mode == "rules" else {"dialogue_act": "inform"}
    for table in runtime.nodes:
        limit = table.turn_limit
        before = (0,) if limit is None or limit < 2 else (0, limit - 1)
        for rule in runtime.program.safety:
            for text in space.safety_texts(rule.category):
                for turns in before:
                    engine.store.delete("sweep")
                    engine.store.put(DialogueState("sweep", runtime.ir_hash, table.id,
                                                   node_turns=turns, session_turns=turns + 1), 0)
                    result = engine.turn("sweep", text, nlu)
                    found = check_safety_step(result, runtime, rule.category)
                    if found is None:
                        continue
                    at = "on the turn of its turn limit" if turns else "in a fresh visit"
                    found.message = f"from node {table.id} {at}, \"{text}\": " + \
                        found.message.split(": ", 1)[1]
                    if not turns:  # replayable: focus on the node, then the crisis
                        engine.store.delete("focus")
                        opening = engine.start("focus", focus_node=table.id)
                        found.turns = (UserTurn(text, nlu, "safety"),)
                        found.results = (opening, engine.turn("focus", text, nlu))
                        found.focus = table.id
                    return found
    return None


def said_fragment(sentence: str, response: str) -> str | None:
    """The longest plain piece of a response sentence (placeholders removed) that a transcript
    can expect (`says:`) and the actual response does not already contain."""
    pieces = sorted((p.strip(" \t,.;:!?") for p in _LEFTOVER.split(sentence)[::2]),
                    key=len, reverse=True)
    for piece in pieces:
        if len(piece) >= 2 and transcript_safe(piece) and piece not in response:
            return piece
    return None


def _says(fragment: str | None) -> Expectation | None:
    return Expectation("says", fragment) if fragment else None


def _step_name(result: Any) -> str:
    return "the opening" if result.user is None else f"turn {result.turn}"


# --- designer properties -----------------------------------------------------------------------


class DesignerProperty(NamedTuple):
    """One line of a properties file: `kind` is after_intent, never_before or filled_on_entry."""

    name: str
    line: int
    text: str
    kind: str
    subject: str  # the intent, the node never entered too early, or the slot
    other: str | int  # N turns, the node visited first, or the node entered

    def check(self, convo: Conversation, result: Any, entered: str | None) -> Violation | None:
        """This property at the step `result` (already recorded in `convo`)."""
        if self.kind == "after_intent":
            return self._after_intent(convo, result)
        if entered is None:
            return None
        if self.kind == "never_before" and entered == self.subject and \
                self.other not in convo.visited:
            return violation(self.name, f"{_step_name(result)} entered {entered} before "
                             f"{self.other} was visited", Expectation("not-next", entered))
        if self.kind == "filled_on_entry" and entered == self.other and \
                result.slots.get(self.subject) is None:
            return violation(self.name, f"{_step_name(result)} entered {entered} with slot "
                             f"{self.subject} unfilled", Expectation("not-next", entered))
        return None

    def _after_intent(self, convo: Conversation, result: Any) -> Violation | None:
        if convo.ending_from is None or result.complete:
            return None
        asked = [i for i in range(convo.ending_from, len(convo.turns))
                 if convo.intent_at(i) == self.subject]
        if asked and len(convo.turns) - asked[0] >= self.other:
            turns = "1 turn" if self.other == 1 else f"{self.other} turns"
            return violation(self.name, f"the user said {self.subject} at turn "
                             f"{convo.results[asked[0] + 1].turn} and kept asking to end; the "
                             f"session was still open after {turns}",
                             Expectation("complete", True))
        return None


class DesignerProperties(NamedTuple):
    """The designer's properties, the intents the file says ask to end, and the opt-in (or
    dormant built-in) properties it names."""

    properties: tuple[DesignerProperty, ...] = ()
    end_intents: tuple[str, ...] = ()
    requested: tuple[str, ...] = ()

    def checked(self) -> list[str]:
        """Every property a run checks, built-in first, in report order."""
        built_in = [p for p in BUILT_IN if p not in DORMANT or p in self.requested]
        return built_in + [p for p in OPT_IN if p in self.requested] + \
            [p.name for p in self.properties]


class PropertiesError(MagoError):
    """A properties file that cannot be used: `path:line: message`, one line."""


_NAME = r"(`[^`]+`|\"[^\"]+\"|[^\s,`\"]+)"
_FORMS = {
    "after_intent": re.compile(
        rf"after\s+intent\s+{_NAME}\s*,?\s*(?:the\s+session\s+)?completes?\s+within\s+"
        r"(\d+)\s+turns?\.?", re.I),
    "never_before": re.compile(
        rf"(?:node\s+)?{_NAME}\s+is\s+never\s+entered\s+before\s+(?:node\s+)?{_NAME}"
        r"(?:\s+(?:is|has\s+been)\s+visited)?\.?", re.I),
    "filled_on_entry": re.compile(
        rf"slot\s+{_NAME}\s+is\s+(?:always\s+)?filled\s+whenever\s+(?:node\s+)?{_NAME}"
        r"\s+is\s+entered\.?", re.I),
}
_END_INTENTS = re.compile(r"end\s+intents?\s+(.+)", re.I)
_LABEL = re.compile(r"([A-Za-z_][\w-]*)\s*:\s*(.*)")
_COMMENT = re.compile(r"(^|\s)#")
FORMS_HELP = ("`after intent NAME, the session completes within N turns`, `node A is never "
              "entered before node B has been visited`, `slot S is filled whenever node N is "
              "entered`, `end intent NAME`, or the name of an opt-in property ("
              + ", ".join(sorted(OPT_IN.keys() | DORMANT)) + ")")


def load_properties(path: str, runtime: Any) -> DesignerProperties:
    """Read and check a properties file against the scenario; `PropertiesError` if it fails."""
    try:
        data = read_input(path)
    except InputFileError as error:
        raise PropertiesError(f"cannot read properties file {path}: {error.reason}") from None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise PropertiesError(f"{path}:{line}: not UTF-8 text") from None
    return parse_properties(text, runtime, path)


def parse_properties(text: str, runtime: Any, path: str = "<properties>") -> DesignerProperties:
    """Parse properties text; every error names its line and says what to write instead."""
    found: list[DesignerProperty] = []
    ends: list[str] = []
    requested: list[str] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = _strip_comment(raw)
        if not line:
            continue
        fail = _failer(path, number)
        if line in OPT_IN or line in DORMANT:
            requested.append(line)
            continue
        ending = _END_INTENTS.fullmatch(line)
        if ending:
            ends += [_intent(runtime, _unquote(n.strip()), fail)
                     for n in ending.group(1).split(",")]
            continue
        label = _LABEL.fullmatch(line)
        name, body = (label.group(1), label.group(2)) if label else (
            f"{os.path.basename(path)}:{number}", line)
        if name in BUILT_IN or name in OPT_IN or any(p.name == name for p in found):
            raise fail(f"the label `{name}` is already taken; give this property another one")
        found.append(_property(runtime, name, number, body, fail))
    ends += [p.subject for p in found if p.kind == "after_intent"]
    return DesignerProperties(tuple(found), tuple(dict.fromkeys(ends)),
                              tuple(dict.fromkeys(requested)))


def _property(runtime: Any, name: str, number: int, body: str, fail) -> DesignerProperty:
    for kind, form in _FORMS.items():
        match = form.fullmatch(body)
        if match is None:
            continue
        a, b = _unquote(match.group(1)), _unquote(match.group(2))
        if kind == "after_intent":
            if int(b) < 1:
                raise fail("the number of turns must be at least 1")
            return DesignerProperty(name, number, body, kind, _intent(runtime, a, fail), int(b))
        if kind == "never_before":
            first, second = _node(runtime, a, fail), _node(runtime, b, fail)
            if first == second:
                raise fail(f"a node cannot come before itself (`{first}` twice)")
            return DesignerProperty(name, number, body, kind, first, second)
        return DesignerProperty(name, number, body, kind, _slot(runtime, a, fail),
                                _node(runtime, b, fail))
    from ..transcripts.run import clip  # imported here only, on an error: see `_strip_comment`

    raise fail(f"cannot read `{clip(body, 60)}`; a property is one of: {FORMS_HELP}")


def _strip_comment(raw: str) -> str:
    # `transcripts.run._text` again, on purpose (as `_COMMENT`, `load_properties`'s reading and
    # fuzz.inputs' comment rule): hypothesis also draws the literals of every project module
    # loaded, so loading `transcripts` before the exploration would change what a seed explores.
    match = _COMMENT.search(raw)
    return (raw[:match.start()] if match else raw).strip()


def _unquote(name: str) -> str:
    return name[1:-1] if len(name) > 1 and name[0] == name[-1] and name[0] in "`\"" else name


def _failer(path: str, number: int):
    return lambda message: PropertiesError(f"{path}:{number}: {message}")


def _known(what: str, name: str, known: tuple[str, ...], fail) -> str:
    if name in known:
        return name
    close = difflib.get_close_matches(name, known, n=1) or \
        [k for k in known if name and name.casefold() in k.casefold()][:1]
    hint = f"; did you mean `{close[0]}`?" if close else \
        (f" (the scenario has: {', '.join(known)})" if known else f" (the scenario has no {what}s)")
    raise fail(f"unknown {what} `{name}`{hint}")


def _node(runtime: Any, name: str, fail) -> str:
    return _known("node", name, tuple(n.id for n in runtime.nodes), fail)


def _intent(runtime: Any, name: str, fail) -> str:
    return _known("intent", name, runtime.intent_names, fail)


def _slot(runtime: Any, name: str, fail) -> str:
    return _known("slot", name, runtime.slot_names, fail)
