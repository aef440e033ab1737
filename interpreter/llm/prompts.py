"""What the LLM is told: the NLU's answer type and JSON schema, the NLU prompt, the NLG prompt.

In: the program (or runtime), the node, the state's history, the utterance; for the NLG the
routing `Decision`, the reference sentence the template NLG would say and the variants of the
response it came from (SPEC 9: all of them are references). Out: chat messages
(`[{"role", "content"}]`), the msgspec type an NLU answer must decode into and the JSON schema
derived from it. Pure functions: no I/O, nothing remembered between calls.
After, for the NLU: the answer type is the only place the answer's rules live (intent one of
the declared names or null, act one of the nine acts, each slot value of its slot's type or
null, safety one of the three categories or null, no other key); the schema sent to the
server is generated from it. The prompt says when to set `safety` (SPEC 10); the engine keeps
the detector's finding whatever the model says (a model may add a category, never remove
one). Bounds, lengths and
patterns are told in the prompt but not enforced by the type: a user who says "200" for a
0-10 slot was understood, and the engine's validation re-asks (SPEC 2.1).
After, for the NLG: the prompt speaks for the node SPEC 6.2 step 8 names, and a turn's
instructions never pull two ways (seed 002): a turn that resumes or goes on at a closing node
gets neither the closing node's description nor its farewell sentence; a completion gets no
description, no missing slot and no question to ask; a closing turn gets no resume guidance.
Each instruction is a tagged `Part`, so tests can check what a prompt holds by kind.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal, NamedTuple
from collections.abc import Iterator, Sequence

import msgspec

from .. import ir
from ..executors import missing_slots
from .client import one_line
from ..wording.nlg import pending_confirmation
from ..routing import COMPLETE, FALLBACK, MOVE, OPEN, Decision, safety_of
from ..state import HISTORY_LIMIT
from ..loader import to_json

if TYPE_CHECKING:
    from ..loader import NodeTable, Runtime
    from ..state import DialogueState, HistoryEntry

HISTORY_TEXT_LIMIT = 600  # characters of one remembered utterance
LANGUAGES = {"ko": "Korean", "en": "English", "ja": "Japanese", "zh": "Chinese",
             "es": "Spanish", "fr": "French", "de": "German"}  # others: the BCP-47 tag

ACT_MEANINGS = {
    "affirm": "yes, agreement, acceptance of what the bot offered",
    "deny": "no, refusal, disagreement, declining what the bot offered",
    "inform": "tells something or answers with content",
    "question": "asks something",
    "greet": "a greeting",
    "goodbye": "takes leave",
    "thank": "thanks",
    "silence": "only for an empty message (the user said nothing)",
    "null": "the message cannot be understood at all",
}


# What each safety category means, for the NLU prompt and the NLG guidance (SPEC 10).
SAFETY_MEANINGS = {
    "medical_emergency": "a medical emergency now: chest pain, cannot breathe, collapsed or "
                         "fainted, sudden paralysis or slurred speech, heavy bleeding, poisoning",
    "self_harm": "thoughts of suicide or self-harm: wants to die, does not want to live, plans "
                 "or means to end their life",
    "abuse": "abuse by someone: hit, pushed, threatened, locked in, left without food, money "
             "taken",
}


class Answer(NamedTuple):
    """An NLU answer as read (`read_answer`): names as the model gave them, null slots left out."""

    intent: str | None
    dialogue_act: str
    slots: dict[str, Any]
    safety: str | None = None


# --- NLU: the answer type and its schema ---------------------------------------------------------


def reading_type(program: ir.Program) -> type:
    """The msgspec Struct an NLU answer must decode into, built from the program's names."""
    slot_fields = [(f"s{i}", _slot_type(slot) | None, None) for i, slot in enumerate(program.slots)]
    slots = msgspec.defstruct("Slots", slot_fields, forbid_unknown_fields=True,
                              rename={f"s{i}": s.name for i, s in enumerate(program.slots)})
    names = tuple(intent.name for intent in program.intents)
    intent: Any = Literal[names] | None if names else None  # type: ignore[valid-type]
    safety: Any = Literal[ir.SAFETY_CATEGORIES] | None  # type: ignore[valid-type]
    return msgspec.defstruct("NLUReading", [("intent", intent),
                                            ("dialogue_act", Literal[ir.ACTS]),  # type: ignore
                                            ("slots", slots, msgspec.field(default_factory=slots)),
                                            ("safety", safety, None)],
                             forbid_unknown_fields=True)


def _slot_type(slot: ir.Slot) -> Any:
    """A slot's value in the answer schema; a list slot's is a list of its items (SPEC 8.2)."""
    kind = slot.items if slot.value_type == "list" else slot.value_type
    if kind == "enum":
        item = Literal[tuple(slot.values)]  # type: ignore[valid-type]
    else:
        item = {"integer": int, "number": float, "boolean": bool}.get(kind, str)
    return list[item] if slot.value_type == "list" else item


def nlu_schema(reading: type) -> dict:
    """The JSON schema of `reading` in the strict form structured outputs accept: inlined, every
    property required (null where nothing was heard), no unknown keys, a type on every enum
    (all members are strings), no titles or defaults."""
    generated = msgspec.json.schema(reading)
    definitions = generated.get("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return inline(definitions[node["$ref"].rsplit("/", 1)[-1]])
        out = {k: inline(v) for k, v in node.items() if k not in ("title", "default")}
        if "enum" in out and "type" not in out:  # strict mode wants a type on every schema
            out = {"type": "string", **out}
        if out.get("type") == "object":
            out["required"] = list(out.get("properties", {}))
            out["additionalProperties"] = False
        return out
    return inline(generated)


def read_answer(content: str, reading: type) -> Answer:
    """(intent, act, heard slots, safety) from the model's answer; `ValueError` with msgspec's
    message (`Invalid enum value 'x' - at $.intent`) when it breaks the type. A Markdown code
    fence around the object is taken off; null slot values (nothing heard) are left out; an
    answer without `safety` (a server that does not enforce the schema) is read as null."""
    text = _unfenced(content)
    try:
        value = msgspec.json.decode(text, type=reading)
    except msgspec.DecodeError as error:  # ValidationError is a DecodeError
        raise ValueError(str(error) or "not a JSON object") from None
    slots_struct = value.slots
    heard = {}
    for field, name in zip(slots_struct.__struct_fields__, slots_struct.__struct_encode_fields__):
        item = getattr(slots_struct, field)
        if item is not None:
            heard[name] = item
    return Answer(value.intent, value.dialogue_act, heard, value.safety)


def strip_reasoning(text: str) -> str:
    """The answer without a leading `<think>...</think>` block (reasoning models add one)."""
    return _REASONING.sub("", text, count=1)


_REASONING = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)


def _unfenced(content: str) -> str:
    text = strip_reasoning(content).strip()
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        text = text[3:-3]
        first_line, _, rest = text.partition("\n")
        if first_line.strip().isalpha() or not first_line.strip():  # ```json
            text = rest
    return text.strip()


def response_format(mode: str, schema: dict) -> dict | None:
    """The `response_format` of a request: `json_schema`, `json_object`, or None (prompt only)."""
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": "nlu_reading", "strict": True, "schema": schema}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


# --- NLU: the prompt -----------------------------------------------------------------------------


NLU_TASK = ("You read what the user just said in a conversation that follows a dialogue graph. "
            "Say which declared intent it expresses (or null), which dialogue act it is, and "
            "which slot values the user stated. Answer with one JSON object and nothing else.")
ACT_SECTION = "## Dialogue acts (exactly one)\n" + "\n".join(
    f"- {act}: {meaning}" for act, meaning in ACT_MEANINGS.items())
SAFETY_SECTION = ("## Safety (always check, at every node)\nSet \"safety\" when the message says "
                  "the user, or someone with them, is in danger now:\n" + "\n".join(
                      f"- {c}: {m}" for c, m in SAFETY_MEANINGS.items()) +
                  "\nOtherwise null. Figures of speech that only exaggerate are not danger "
                  "(\"배고파 죽겠다\", \"웃겨 죽겠어\", \"I'm dying to see you\"), nor is news about "
                  "others. When you are unsure whether it is an emergency, choose the category: "
                  "a false alarm costs less than a missed one. Safety comes before the node's "
                  "purpose.")


def nlu_messages(program: ir.Program, node: ir.Node, history: list[HistoryEntry], text: str,
                 schema: dict, schema_enforced: bool) -> list[dict]:
    """System instructions (guidance, node, intents, acts, slots, history, format), then the
    utterance as the user message."""
    return nlu_turn_messages(nlu_head(program, node), history, text,
                             nlu_format(program, schema, schema_enforced))


def nlu_head(program: ir.Program, node: ir.Node) -> str:
    """The part of the NLU system prompt that is the same every turn at `node`: the task,
    the designer's guidance, the node, intents, acts and slots."""
    sections = [NLU_TASK, program.prompt_nlu.strip(), _node_section(program, node),
                _intent_section(program), ACT_SECTION, _slot_section(program, node),
                _profile_section(program), SAFETY_SECTION]
    return "\n\n".join(s for s in sections if s)


def nlu_turn_messages(head: str, history: list[HistoryEntry], text: str,
                      answer_format: str) -> list[dict]:
    """`nlu_messages` from its fixed parts (`nlu_head`, `nlu_format`) and the turn's."""
    system = "\n\n".join(s for s in (head, _transcript(history), answer_format) if s)
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


def repair_messages(messages: list[dict], answer: str, error: str) -> list[dict]:
    """The conversation again, with the invalid answer and what was wrong with it."""
    return [*messages, {"role": "assistant", "content": answer},
            {"role": "user", "content": f"That answer is invalid: {error}. Answer again with "
                                        "one JSON object that follows the format exactly."}]


def _node_section(program: ir.Program, node: ir.Node) -> str:
    collects = ", ".join(program.slots[i].name for i in node.collect_slots) or "nothing"
    title = f"{node.id} ({node.name})" if node.name and node.name != node.id else node.id
    return (f"## Where the conversation is\nNode {title}. Its purpose: {node.description}\n"
            f"This node collects: {collects}.")


def _intent_section(program: ir.Program) -> str:
    if not program.intents:
        return "## Intents\nNone are declared: the intent is always null."
    lines = ["## Intents (one of these names, or null when none fits)"]
    for intent in program.intents:
        line = f"- {intent.name}: {intent.description}".rstrip(": ")
        if intent.examples:
            line += "\n  examples: " + "; ".join(f'"{e}"' for e in intent.examples)
        lines.append(line)
    return "\n".join(lines)


def _slot_section(program: ir.Program, node: ir.Node) -> str:
    if not program.slots:
        return "## Slots\nNone are declared: slots is always {}."
    lines = ["## Slots (a value only when the user stated it; null otherwise)"]
    for index, slot in enumerate(program.slots):
        here = " [asked here]" if index in node.collect_slots else ""
        description = f": {slot.description}" if slot.description else ""
        lines.append(f"- {slot.name} ({_slot_kind(slot)}){here}{description}")
    if any(slot.value_type in ir.TEMPORAL_KINDS for slot in program.slots):
        from ..understanding.dates import today  # SPEC 14.1: relative dates read the clock

        day = today()
        lines.append(f"Today is {day.isoformat()} ({day.strftime('%A')}): give a date the "
                     "user says relative to it (\"tomorrow\", \"다음 주 화요일\") as that day.")
    return "\n".join(lines)


def _profile_section(program: ir.Program) -> str:
    """The profile fields (SPEC 8.1): known to the application, so never read as slots."""
    if not program.profile:
        return ""
    names = ", ".join(field.name for field in program.profile)
    return (f"## Profile\nThe application already knows the user's {names}; these are not "
            "slots: never put them in slots unless a slot asks for them.")


def _slot_kind(slot: ir.Slot) -> str:
    """`enum: adequate | skipped`, `integer 0 to 10`, `string, 2-40 characters, pattern P`;
    a list slot: `list of ITEM KIND, at most N items (every item heard)`."""
    if slot.value_type == "list":
        item = msgspec.structs.replace(slot, value_type=slot.items or "string", items=None)
        most = f", at most {slot.max_items} items" if slot.max_items else ""
        return f"list of {_slot_kind(item)}{most} (every item heard, as a JSON array)"
    if slot.value_type == "enum":  # SPEC 14.3: a label is said for its member
        return "enum: " + " | ".join(f'{v} (said "{slot.labels[v]}")' if slot.labels.get(v)
                                     else v for v in slot.values)
    kind = {"number": "number", "integer": "integer", "boolean": "true or false",
            "email": "email address", "date": "date as YYYY-MM-DD",
            "time": "time of day as HH:MM, 24-hour"}.get(slot.value_type, "string")
    limits = []
    if slot.min_bound or slot.max_bound:  # SPEC 14.1: as written ("today-120y")
        limits.append(" and ".join(f"{word} {bound}" for word, bound in
                                   (("not before", slot.min_bound), ("not after", slot.max_bound))
                                   if bound))
    if slot.min is not None or slot.max is not None:
        low = "" if slot.min is None else f"{slot.min:g}"
        high = "" if slot.max is None else f"{slot.max:g}"
        limits.append(f"from {low} to {high}" if low and high else
                      f"at least {low}" if low else f"at most {high}")
    if slot.min_length is not None or slot.max_length is not None:
        limits.append(f"{slot.min_length or 0}-{slot.max_length or ''} characters".rstrip("-"))
    if slot.pattern:
        limits.append(f"matching {slot.pattern}")
    return ", ".join([kind, *limits])


def nlu_format(program: ir.Program, schema: dict, enforced: bool) -> str:
    """The answer format section; the schema itself too when the server does not enforce it."""
    names = [i.name for i in program.intents]
    text = ('## Answer format\n{"intent": ' + (" | ".join(f'"{n}"' for n in names) + " | null"
                                              if names else "null")
            + ', "dialogue_act": ' + " | ".join(f'"{a}"' for a in ir.ACTS)
            + ', "slots": {' + ", ".join(f'"{s.name}": value or null' for s in program.slots)
            + '}, "safety": ' + " | ".join(f'"{c}"' for c in ir.SAFETY_CATEGORIES) + " | null"
            + "}\nUse only the names above. Do not guess values the user did not say.")
    if not enforced:
        text += "\nThe object must match this JSON schema:\n" + json.dumps(
            schema, ensure_ascii=False, separators=(",", ":"))
    return text


def _transcript(history: list[HistoryEntry]) -> str:
    lines = [("User: " if role == "user" else "Bot: ") + said
             for role, said in recent_turns(history)]
    if not lines:
        return ""
    return "## Conversation so far (the user's new message comes after it)\n" + "\n".join(lines)


def recent_turns(history: list[HistoryEntry]) -> Iterator[tuple[str, str]]:
    """(role, words) of the remembered turns, oldest first: "user" or "assistant", each
    utterance on one line and clipped, a silent user turn as "(silence)"."""
    for entry in history[-HISTORY_LIMIT:]:
        if entry.user is not None:
            yield "user", _clip(entry.user) or "(silence)"
        if entry.bot:
            yield "assistant", _clip(entry.bot)


def _clip(text: str) -> str:
    return one_line(text, HISTORY_TEXT_LIMIT)


# --- NLG ------------------------------------------------------------------------------------------

# What this turn is, as far as the wording goes; one instruction each.
SITUATIONS = {
    "opening": "Open the conversation: greet the user and do what this node's purpose says.",
    "move": "The conversation has just moved on to this node: acknowledge what the user said "
            "in a few words, then do what this node's purpose says.",
    "stay": "The conversation stays at this node: respond to what the user said and go on "
            "with this node's purpose.",
    "ask": "Something this node needs is still missing or was not usable: acknowledge the "
           "user briefly, then ask for it in one short question.",
    "reprompt:no_input": "The user has not answered. Re-prompt gently: ask the current "
                         "question again in simpler or softer words, without pressure.",
    "reprompt:not_understood": "You could not understand the user's last message. Say so "
                               "briefly and kindly and ask again in simpler words; do not "
                               "guess what they meant.",
    "closing": "This node closes the conversation: do what its purpose says and take leave; "
               "do not open a new topic or ask a new question.",
    "continue": "The user is still talking although the conversation was closing: respond to "
                "what they said and keep the conversation open. Do not say goodbye.",
    "resume": "The user wants to keep talking (they did not accept the closing): do not say "
              "goodbye or wrap up; pick the conversation up with this node's purpose.",
    "complete": "The conversation ends with this reply: take leave in one or two short "
                "sentences. Do not ask anything.",
    "safety": "The user may be in danger (see Safety below). Put their safety first: give the "
              "help this node's purpose and the reference sentence give, with the number to "
              "call, calmly and in a few short sentences. Do not change the subject, do not "
              "ask about anything else, do not take leave.",
}
CONTINUE_PURPOSE = ("Keep the conversation going with the user; this node's closing words do "
                    "not apply to this turn.")
# The user's dialogue act, where it adds something the situation does not already say.
ACT_GUIDANCE = {
    "deny": "The user declined or disagreed: take that as said; do not argue or insist.",
    "question": "The user asked something: answer it briefly first, within this node's "
                "purpose and your persona's limits.",
    "thank": "The user thanked you: acknowledge it warmly and briefly.",
    "greet": "The user greeted you: return the greeting briefly.",
    "goodbye": "The user said goodbye.",
    "silence": "The user has been silent: be gentle and do not press.",
    "null": "The user's last message could not be understood: do not pretend you understood it.",
}
_NO_SLOTS = frozenset(("closing", "continue", "complete", "safety"))  # they ask for nothing


class Part(NamedTuple):
    """One instruction of an NLG prompt: `kind` says what it is (persona, situation, purpose,
    reference, variants, ask, act, confirm, skill, language, format)."""

    kind: str
    text: str


def speaker(runtime: Runtime, decision: Decision) -> NodeTable:
    """The node the reply speaks for (SPEC 6.2 step 8): the target on a move, else the node
    the turn was handled in."""
    if decision.kind == MOVE and decision.next_node is not None:
        return runtime.nodes[decision.next_node]
    return runtime.nodes[decision.handled_node]


def situation(runtime: Runtime, decision: Decision) -> str:
    """The key of `SITUATIONS` for a decision."""
    kind, table = decision.kind, speaker(runtime, decision)
    if decision.tier == "safety":  # first, whatever the node (an end node's help too)
        return "safety"
    if kind == COMPLETE:
        return "complete"
    if kind == FALLBACK:
        return "reprompt:" + (decision.fallback or "not_understood")
    if table.is_end:  # arriving at a closing node closes; anything else there goes on
        return "closing" if kind in (MOVE, OPEN) else "continue"
    if kind == OPEN:
        return "opening"
    if kind == MOVE:
        return "resume" if decision.resuming else "move"
    invalid = decision.slot_update is not None and decision.slot_update.invalid
    if invalid or (decision.reason == "gate:required_slots" and decision.missing_slots):
        return "ask"
    return "stay"


def nlg_parts(runtime: Runtime, decision: Decision, state: DialogueState,
              reference: str, variants: Sequence[str] = ()) -> list[Part]:
    """The instructions of one NLG prompt, in order."""
    program, table = runtime.program, speaker(runtime, decision)
    where = situation(runtime, decision)
    parts = [Part("persona", program.prompt_bot.strip())] if program.prompt_bot.strip() else []
    title = f"{table.id} ({table.node.name})" if table.node.name not in ("", table.id) \
        else table.id
    parts.append(Part("node", f"You speak for node {title}."))
    if where == "complete":
        pass  # a node's purpose may ask things; the last words ask nothing
    elif where == "safety":  # the safety node's purpose is the help, at an end node too
        parts.append(Part("purpose", "Purpose: " + table.node.description))
    elif table.is_end and where != "closing":  # a closing node's purpose is only for closing
        parts.append(Part("purpose", "Purpose: " + CONTINUE_PURPOSE))
    else:
        parts.append(Part("purpose", "Purpose: " + table.node.description))
    parts.append(Part("decision", _decision_line(runtime, decision)))
    parts.append(Part("situation", SITUATIONS[where]))
    category = safety_of(decision)
    if where == "safety" and category is not None:
        parts.append(Part("safety", f"Safety: the user's message suggests {category}: "
                                    f"{SAFETY_MEANINGS[category]}."))
    act = ir.ACTS[decision.act]
    if decision.kind not in (OPEN, FALLBACK) and act in ACT_GUIDANCE:
        parts.append(Part("act", ACT_GUIDANCE[act]))
    if decision.kind == FALLBACK:
        parts.append(Part("note", f"Re-prompt {decision.state.fallback_retries} of "
                                  f"{table.max_fallback_retries} at this node."))
    if decision.turn_limit_reached and where not in _NO_SLOTS:
        parts.append(Part("note", "This node has had its turns; the reference sentence says "
                                  "how to go on."))
    if where not in _NO_SLOTS:
        parts += _ask_parts(runtime, decision, table, state)
    parts += _skill_parts(table, state, where)
    parts += _label_parts(runtime, state)
    if state.profile:
        parts.append(Part("profile", "What the application knows about the user: "
                                     f"{to_json(state.profile)}"))
    if decision.passed:
        steps = ", ".join(f"{node} ({reason})" for node, reason in decision.passed)
        parts.append(Part("passed", f"On the way here this turn passed: {steps}."))
    if reference:
        parts.append(Part("reference", "Reference sentence (what this reply must convey; "
                                       f"reword it naturally, keep its meaning): {reference}"))
    variants = [variant for variant in variants if variant]  # a variant left without words
    if len(variants) > 1:  # SPEC 9: every wording the scenario gives, as references
        listed = "\n".join(f"- {variant}" for variant in variants)
        parts.append(Part("variants", "The scenario words this in several ways (references "
                                      "of the same meaning; never repeat your previous reply "
                                      f"word for word):\n{listed}"))
    language = LANGUAGES.get(program.language.split("-")[0].lower(), program.language)
    parts.append(Part("format", f"Reply in {language} with the words to say only: no quotes, "
                                "no labels, no notes. Two or three short sentences at most."))
    return parts


def _decision_line(runtime: Runtime, decision: Decision) -> str:
    """What routing decided, in its own terms: `move: a -> b (default_next)`."""
    here = runtime.nodes[decision.handled_node].id
    if decision.kind == MOVE and decision.next_node is not None:
        what = f"move: {here} -> {runtime.nodes[decision.next_node].id}"
    elif decision.kind == COMPLETE:
        what = f"complete at {here}"
    else:
        what = f"{decision.kind} at {here}"
    return f"Decision: {what} ({decision.reason})."


def _ask_parts(runtime: Runtime, decision: Decision, table: NodeTable,
               state: DialogueState) -> list[Part]:
    parts = []
    update = decision.slot_update
    pending = pending_confirmation(decision, state)
    if pending is not None:
        parts.append(Part("confirm", f"First ask the user to confirm changing {pending.slot} "
                                     f"from {to_json(pending.previous)} to "
                                     f"{to_json(pending.value)}."))
    invalid = update.invalid if update is not None else ()
    for index in invalid:
        parts.append(Part("ask", f"The value given for {runtime.slot_names[index]} could not be "
                                 f"used; ask for it again: {_question(runtime, index)}"))
    for index in missing_slots(table, state.slots):
        if index not in invalid:
            parts.append(Part("ask", f"Still needed: {runtime.slot_names[index]} "
                                     f"(ask: {_question(runtime, index)})"))
            break  # one question at a time
    return parts


def _label_parts(runtime: Runtime, state: DialogueState) -> list[Part]:
    """SPEC 14.3, 17.24: the display names of the enum values known now (labels are for
    speech), so the reply says "Northgate branch" where the slot holds northgate."""
    said = [f"{value} as \"{labels[value]}\"" for name, labels in
            (runtime.slot_labels or {}).items()
            if isinstance(value := state.slots.get(name), str) and labels.get(value)]
    return [Part("labels", "Say these values by their names: " + ", ".join(said) + ".")] \
        if said else []


def _question(runtime: Runtime, index: int) -> str:
    slot = runtime.program.slots[index]
    return slot.question or slot.description or slot.name


def _skill_parts(table: NodeTable, state: DialogueState, where: str) -> list[Part]:
    if state.current_node != table.id or state.skill_status == "none" or where == "complete":
        return []
    node = table.node
    if state.skill_status == "ok":
        return [Part("skill", f"Result of {node.skill}: {to_json(state.skill_data)}")]
    said = f"; say this instead of its result: {node.fallback}" if node.fallback else ""
    return [Part("skill", f"{node.skill} gave no result ({state.skill_status}){said}")]


def nlg_messages(runtime: Runtime, decision: Decision, state: DialogueState, reference: str,
                 history: list[HistoryEntry], variants: Sequence[str] = ()) -> list[dict]:
    """System instructions, the recent turns as chat messages, then what the user just said;
    `variants`: the variants of the response the reference came from (SPEC 9)."""
    system = "\n\n".join(part.text for part in nlg_parts(runtime, decision, state, reference,
                                                           variants))
    messages = [{"role": "system", "content": system}]
    messages += ({"role": role, "content": said} for role, said in recent_turns(history))
    messages.append({"role": "user", "content": _said_now(decision)})
    return messages


def _said_now(decision: Decision) -> str:
    if decision.kind == OPEN or decision.facts is None:
        return "(the conversation starts: speak first)"
    text = decision.facts[ir.FIELD_INDEX["nlu.text"]] or ""
    return _clip(text) if text.strip() else "(the user said nothing)"
