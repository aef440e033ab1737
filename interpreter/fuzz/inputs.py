"""What a user may say to a compiled scenario: hypothesis strategies derived from the IR.

In: a `Runtime`, the NLU mode and the intents that ask to end (`end_intents` finds the
scenario's own). `generated` (the default of `mgi fuzz`): each turn's NLU result is drawn
directly and travels with the text, as a scripted NLU result (like `mgi run --json` lines);
`rules`: text made of the scenario's own words goes through the rules NLU.
Out: an `InputSpace` with, per node, a strategy of `UserTurn`s (`turn_at`), a strategy of end
requests (`end_request_at`), and the finite probe set the livelock search tries (`probes_at`).
After: every text is one transcript line (`transcript_safe`: printable, no ` #`, no surrounding
spaces); silence is the empty text; every NLU result is a JSON object `understanding.nlu.nlu_result` accepts.
All strategies are built here, once per node; a draw builds none (building one costs more than
drawing from it). Most turns are ready-made and picked by one integer draw (`weighted`):
hypothesis pays per choice, and a conversation makes one choice a turn.

A turn (generated mode) is one of: a dialogue act (every act, and not understood); a declared
intent, alone or with an act; an answer filling the current node's collect slots with valid
values; a value for any declared slot, valid (members, bounds, the literals conditions compare
it with) or invalid (wrong JSON type, out of range, a misspelled member, too long, off pattern,
null); silence; free text; a crisis of each category with a `graph.safety` rule, said as the
detector's sample utterances (`safety_lexicon.SAMPLES`), and a category conditions compare
`nlu.safety` with, added by the NLU (rules mode: the crises, as text). The probe set of
the livelock search holds no crisis with a rule: saying one leaves any node, which would hide
every livelock; a category conditions read is a probe like an intent they name. An end request is an end intent with a closing act or none, or, at
an end node, a closing act alone (the user accepts the closing).
Where a node's required slots hold the user, its answers get four shares of the turns, two
elsewhere, in both modes (a form six answers deep must be walked to its end).
Progressive tasks (SPEC 8): where conditions compare `system.idle_seconds`, some turns come
after a pause (`UserTurn.idle`, seconds: each compared value and its neighbours), and the
probe set holds those pauses too; a list slot's values are its items alone and together (the
engine's rule checks them); a session starts with a profile drawn from the declaration
(`profile`: each field a valid value of its own or left out).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, NamedTuple
from collections.abc import Iterator

from hypothesis import strategies as st

from .. import ir
from ..understanding import lexicon as lex
from ..understanding.safety_lexicon import SAMPLES
from ..loader import Runtime
from .values import slot_values, transcript_safe, value_text

GENERATED, RULES = "generated", "rules"

SPOKEN_ACTS = tuple(a for a in ir.ACTS if a != "null") + ("negate",)
F_INTENT = ir.FIELD_INDEX["nlu.intent"]
F_ACT = ir.FIELD_INDEX["nlu.dialogue_act"]
F_TEXT = ir.FIELD_INDEX["nlu.text"]
F_CONFIDENCE = ir.FIELD_INDEX["nlu.confidence"]
F_SAFETY = ir.FIELD_INDEX["nlu.safety"]
F_IDLE = ir.FIELD_INDEX["system.idle_seconds"]

# What each act sounds like, so a generated transcript reads like a conversation.
ACT_TEXTS = {
    "ko": {"affirm": "네", "deny": "아니요", "inform": "오늘 산책 다녀왔어요",
           "question": "그게 뭐예요?", "greet": "안녕하세요", "goodbye": "안녕히 계세요",
           "thank": "고마워요", "negate": "아니에요", "silence": "...", None: "음"},
    "en": {"affirm": "yes", "deny": "no", "inform": "I went for a walk today",
           "question": "what is that?", "greet": "hello", "goodbye": "bye", "thank": "thanks",
           "negate": "nope", "silence": "...", None: "hmm"},
}
# SPEC 18.1, 18.3: in rules mode a node's answers are also said negated and declined.
NEGATIONS = {"ko": "안 ", "en": "not "}
DECLINES = {"ko": ("없어", "아니 없어", "딱히 없어요"), "en": ("none", "nothing", "no, nothing")}


class UserTurn(NamedTuple):
    """One thing the user says: the text (`""` is silence) and its NLU result, or None when
    the NLU reads the text (rules mode, and silence); `idle`: the pause before it, seconds."""

    text: str
    nlu: dict | None = None
    kind: str = "free"  # act, intent, answer, slot, silence, free, end, probe, pause
    idle: int = 0


SILENCE = UserTurn("", None, "silence")


def weighted(kinds: list) -> Any:
    """A strategy of `UserTurn`s: each kind (a tuple of ready turns, or a strategy) gets an
    equal share of one integer range, so most turns cost a single draw; a strategy is drawn
    from only when its share is picked. The first turn of the first kind is the simplest
    (what hypothesis shrinks towards). None when there is nothing to say."""
    kinds = [k for k in kinds if not isinstance(k, tuple) or k]
    if not kinds:
        return None
    share = max([len(k) for k in kinds if isinstance(k, tuple)] + [1])
    table = []
    for kind in kinds:
        table += [kind[j * len(kind) // share] for j in range(share)] \
            if isinstance(kind, tuple) else [kind] * share
    index = st.integers(0, len(table) - 1)

    @st.composite
    def pick(draw: Any) -> UserTurn:
        item = table[draw(index)]
        return item if isinstance(item, UserTurn) else draw(item)
    return pick()



# --- what the scenario's conditions compare with -------------------------------------------


def condition_leaves(condition: Any, negated: bool = False) -> Iterator[tuple]:
    """(field index, operator name, value, negated) for every leaf of an opcode tree."""
    if not condition:
        return
    op = condition[0]
    if op == ir.OP_LEAF:
        value = condition[3] if len(condition) == 4 else None
        yield condition[2], ir.OPERATORS[condition[1]], value, negated
    elif op == ir.OP_NOT:
        yield from condition_leaves(condition[1], not negated)
    else:
        for part in condition[1]:
            yield from condition_leaves(part, negated)


def all_conditions(runtime: Runtime) -> list:
    """Every condition of the program: node transitions, then globals."""
    program = runtime.program
    return [t.condition for n in program.nodes for t in n.transitions] + \
        [g.condition for g in program.global_transitions]


def compared_literals(runtime: Runtime) -> dict[int, list]:
    """Per field index: the literals conditions compare it with, in program order, without
    repeats (one pass over the program; a field no condition compares is absent)."""
    out: dict[int, list] = {}
    seen: dict[int, set] = {}
    for condition in all_conditions(runtime):
        for field, _, value, _ in condition_leaves(condition):
            if value is None:
                continue
            values, known = out.setdefault(field, []), seen.setdefault(field, set())
            for item in value if isinstance(value, list) else [value]:
                try:
                    if item in known:
                        continue
                    known.add(item)
                except TypeError:  # unhashable: compared by equality, as `in` a list does
                    if item in values:
                        continue
                values.append(item)
    return out


def positive_literals(condition: Any, fields: tuple[int, ...]) -> Iterator[tuple[int, Any]]:
    """(field, value) for every value an `equals`/`in` leaf on one of `fields` asks for,
    outside any negation (a list literal gives each of its items)."""
    for field, op, value, negated in condition_leaves(condition):
        if field in fields and op in ("equals", "in") and not negated:
            for item in value if isinstance(value, list) else [value]:
                yield field, item


def end_intents(runtime: Runtime) -> tuple[str, ...]:
    """Intents that ask to end: those a global transition to an end node tests for."""
    found: list[int] = []
    for route, g in zip(runtime.globals, runtime.program.global_transitions):
        if not runtime.nodes[route.target].is_end:
            continue
        for _, index in positive_literals(g.condition, (F_INTENT,)):
            if isinstance(index, int) and index not in found:
                found.append(index)
    return tuple(runtime.intent_names[i] for i in sorted(found))


# --- pauses ----------------------------------------------------------------------------------


def pauses(compared: dict[int, list]) -> tuple[int, ...]:
    """Pauses worth trying before a turn (SPEC 8.5): each whole number of seconds that
    conditions compare `system.idle_seconds` with, and its neighbours (none is 0)."""
    found = {max(0, int(v)) + d for v in compared.get(F_IDLE, [])
             if isinstance(v, (int, float)) and not isinstance(v, bool) for d in (-1, 0, 1)}
    return tuple(sorted(v for v in found if v > 0))


def _text_turns(texts: Any) -> tuple[UserTurn, ...]:
    """Rules-mode turns: the texts alone (the rules NLU reads them)."""
    return tuple(UserTurn(t, None, "text") for t in texts)


# --- the input space -------------------------------------------------------------------------


class InputSpace:
    """Per node: the strategy of a turn, of an end request, and the probe set."""

    def __init__(self, runtime: Runtime, mode: str = GENERATED, ends: tuple[str, ...] = ()):
        self.runtime = runtime
        self.mode = mode
        self.end_intent_names = ends
        self.words = ACT_TEXTS[runtime.language]
        self.compared = compared_literals(runtime)
        self.values = {rule.name: slot_values(rule, self.compared.get(
            ir.SLOT_FIELD_BASE + rule.index, []), runtime.language, runtime.program.date_order)
            for rule in runtime.slot_rules}
        self.closing = tuple(ir.ACTS[a] for a in sorted(runtime.closing_acts))
        self.free_text = st.text(
            st.characters(categories=("L", "M", "N", "P", "S"), include_characters=" ",
                          exclude_characters="#"), min_size=1, max_size=30,
        ).map(str.strip).filter(lambda t: bool(t) and transcript_safe(t))
        self._turns: dict[int, Any] = {}
        self._ends: dict[int, Any] = {}
        self._probes: dict[tuple[int, tuple[str, ...]], tuple[UserTurn, ...]] = {}
        self._condition_texts = [t for t in self.compared.get(F_TEXT, [])
                                 if isinstance(t, str) and t.strip() and transcript_safe(t)]
        self.pauses = pauses(self.compared)
        base = ir.SLOT_FIELD_BASE + len(runtime.slot_rules)  # profile fields follow the slots
        self.profile_values = {rule.name: slot_values(rule, self.compared.get(
            base + rule.index, [])).valid for rule in runtime.profile_rules}

    # -- texts --

    def intent_texts(self, name: str) -> list[str]:
        """The intent's examples that are safe lines, else its name."""
        intent = self.runtime.program.intents[self.runtime.intent_index[name]]
        texts = [e.strip() for e in intent.examples if transcript_safe(e.strip()) and e.strip()]
        return texts or [name if transcript_safe(name) and name else "…"]

    def act_text(self, act: str | None) -> str:
        return self.words.get(act, self.words[None])

    def condition_texts(self) -> list[str]:
        """Texts the conditions compare `nlu.text` with (so those transitions can fire); one
        list for every caller, not to be changed."""
        return self._condition_texts

    # -- public strategies --

    def turn_at(self, node: int):
        """Strategy of one user turn while the session is at node index `node`."""
        if node not in self._turns:
            build = self._generated_turn if self.mode == GENERATED else self._rules_turn
            self._turns[node] = build(node)
        return self._turns[node]

    def end_request_at(self, node: int):
        """Strategy of a turn that asks to end (or accepts the closing at an end node); None
        when the scenario gives the user no way to ask (no end intent, no closing act)."""
        if node not in self._ends:
            self._ends[node] = self._end_request(node)
        return self._ends[node]

    # -- generated NLU results --

    def _act_turn(self, act: str | None) -> UserTurn:
        nlu = {} if act is None else {"dialogue_act": act}
        return UserTurn(self.act_text(act), nlu, "act")

    def _intent_turn(self, name: str, act: str | None, text: str, kind: str = "intent"):
        nlu = {"intent": name} if act is None else {"intent": name, "dialogue_act": act}
        return UserTurn(text, nlu, kind)

    def _slot_turn(self, values: dict, kind: str) -> UserTurn:
        text = " ".join(value_text(v, name) for name, v in values.items()) or "…"
        return UserTurn(text, {"dialogue_act": "inform", "slots": values}, kind)

    def _generated_turn(self, node: int):
        """Kinds of turn: acts, intents with acts, answers to the node (two shares, four where
        required slots hold the user), any slot's values, silence, free text, and values drawn
        from slot patterns."""
        answers = self._answer_pool(node)
        shares = 4 if self.runtime.nodes[node].required else 2  # a gate holds until answered
        return weighted([self._act_pool, self._intent_pool, *[answers] * shares,
                         *[self._exit_pool(node)] * 2,
                         self._slot_pool, (SILENCE,), self._free_turn, *self._patterns,
                         self._safety_pool, self._pause_pool, self._everything_pool])

    # The kinds that are the same at every node: built once, on first use.

    @cached_property
    def _free_turn(self):
        texts = self.condition_texts()
        free = self.free_text | st.sampled_from(texts) if texts else self.free_text
        return st.tuples(free, st.sampled_from((None, "inform"))).map(
            lambda t: UserTurn(t[0], {} if t[1] is None else {"dialogue_act": t[1]}, "free"))

    @cached_property
    def _patterns(self) -> list:
        return [self.values[n].pattern.map(lambda v, n=n: self._slot_turn({n: v}, "slot"))
                for n in self.values if self.values[n].pattern is not None]

    @cached_property
    def _act_pool(self) -> tuple[UserTurn, ...]:
        return tuple(self._act_turn(act) for act in (*SPOKEN_ACTS, None))

    @cached_property
    def _intent_pool(self) -> tuple[UserTurn, ...]:
        """Every intent alone and with every act, its examples taken in turn as the text."""
        pool = []
        for name in self.runtime.intent_names:
            texts = self.intent_texts(name)
            pool += [self._intent_turn(name, act, texts[i % len(texts)])
                     for i, act in enumerate((None, *SPOKEN_ACTS))]
        return tuple(pool)

    def _answer_pool(self, node: int) -> tuple[UserTurn, ...]:
        """The node's collect slots answered together (the i-th valid value of each), and
        each alone with each valid value."""
        names = [n for n in self.runtime.nodes[node].collect_names if self.values[n].valid]
        if not names:
            return ()
        widest = max(len(self.values[n].valid) for n in names)
        pool = [self._slot_turn({n: self.values[n].valid[i % len(self.values[n].valid)]
                                 for n in names}, "answer") for i in range(widest)]
        if len(names) > 1:
            pool += [self._slot_turn({n: v}, "answer") for n in names for v in self.values[n].valid]
        return tuple(pool)

    def _exit_pool(self, node: int) -> tuple[UserTurn, ...]:
        """The node's routes that an intent or an act asks for, its route groups' included
        (SPEC 14.6): one turn each, saying what the route's condition names. Among every
        intent with every act, the one a late node waits for ("talk to a pharmacist" at the
        read-back) is too rare a draw to be said in the few turns a conversation spends there."""
        pool: dict[str, UserTurn] = {}
        for transition in self.runtime.nodes[node].node.transitions:
            asked = list(positive_literals(transition.condition, (F_INTENT, F_ACT)))
            intents = [self.runtime.intent_names[v] for f, v in asked
                       if f == F_INTENT and isinstance(v, int)]
            acts: list[str | None] = [ir.ACTS[v] for f, v in asked
                                      if f == F_ACT and isinstance(v, int)]
            for name in intents:
                for act in acts or [None]:
                    turn = self._intent_turn(name, act, self.intent_texts(name)[0], "exit")
                    pool.setdefault(repr(turn.nlu), turn)
            for act in acts if not intents else []:
                pool.setdefault(repr({"dialogue_act": act}), self._act_turn(act))
        if self.mode == RULES:  # the same words, for the rules NLU to read
            return _text_turns(dict.fromkeys(turn.text for turn in pool.values()))
        return tuple(pool.values())

    def safety_texts(self, category: str) -> list[str]:
        """What a user in that crisis says (`SAMPLES`), the scenario's language first."""
        texts = [t for t in SAMPLES.get(category, ()) if transcript_safe(t)]
        english = self.runtime.language == "en"
        return sorted(texts, key=lambda t: t.isascii() != english)

    @cached_property
    def _safety_pool(self) -> tuple[UserTurn, ...]:
        """A crisis of each category with a rule (the text says it: the detector reads it),
        and each category a condition reads as the NLU's finding (SPEC 10)."""
        nlu = (lambda extra: None) if self.mode == RULES else \
            (lambda extra: {"dialogue_act": "inform", **extra})
        pool = [UserTurn(text, nlu({}), "safety") for rule in self.runtime.program.safety
                for text in self.safety_texts(rule.category)]
        if self.mode != RULES:
            pool += [UserTurn(self.act_text("inform"), {"dialogue_act": "inform", "safety": v},
                              "safety") for v in self._read_categories]
        return tuple(pool)

    @cached_property
    def _everything_pool(self) -> tuple[UserTurn, ...]:
        """The user who says it all at once: every declared slot with its i-th valid value
        (SPEC 8.3: the task nodes ahead are then passed, `skip:filled`); empty with fewer
        than two slots (an answer to the node does as much)."""
        names = [n for n in self.values if self.values[n].valid]
        if len(names) < 2:
            return ()
        widest = max(len(self.values[n].valid) for n in names)
        return tuple(self._slot_turn({n: self.values[n].valid[i % len(self.values[n].valid)]
                                      for n in names}, "answer") for i in range(min(widest, 3)))

    @cached_property
    def _pause_pool(self) -> tuple[UserTurn, ...]:
        """An understood turn after each pause worth trying (SPEC 8.5); empty when no
        condition reads `system.idle_seconds`."""
        nlu = None if self.mode == RULES else {"dialogue_act": "inform"}
        return tuple(UserTurn(self.act_text("inform"), nlu, "pause", seconds)
                     for seconds in self.pauses)

    @cached_property
    def profile(self) -> Any:
        """Strategy of a session profile (SPEC 8.1): each declared field given one of its
        valid values, or left out; one integer draw a field."""
        fields = [(name, values) for name, values in self.profile_values.items()]
        picks = st.tuples(*(st.integers(0, len(values)) for _, values in fields))
        return picks.map(lambda chosen: {name: values[i - 1] for (name, values), i
                                         in zip(fields, chosen) if i})

    @cached_property
    def _read_categories(self) -> tuple[str, ...]:
        """Categories conditions compare `nlu.safety` with (the NLU may add one)."""
        return tuple(v for v in self.compared.get(F_SAFETY, []) if v in ir.SAFETY_CATEGORIES)

    @cached_property
    def _slot_pool(self) -> tuple[UserTurn, ...]:
        """Every declared slot with each of its valid and invalid values."""
        return tuple(self._slot_turn({name: v}, "slot") for name, values in self.values.items()
                     for v in (*values.valid, *values.invalid))

    def _end_request(self, node: int):
        kinds = []
        if self.runtime.nodes[node].is_end or not self.end_intent_names:
            nlu = (lambda act: None) if self.mode == RULES else (lambda act: {"dialogue_act": act})
            kinds.append(tuple(SILENCE if act == "silence" else UserTurn(
                self.act_text(act), nlu(act), "end") for act in self.closing))
        for name in self.end_intent_names:
            texts = self.intent_texts(name)
            if self.mode == RULES:
                kinds.append(tuple(UserTurn(t, None, "end") for t in texts))
                continue
            acts = (None, *(a for a in self.closing if a != "silence"))
            kinds.append(tuple(self._intent_turn(name, act, texts[i % len(texts)], "end")
                               for i, act in enumerate(acts)))
        return weighted(kinds)

    # -- rules NLU: text only --

    def _rules_turn(self, node: int):
        words, fillers, texts, others, free = self._rules_common
        collected = self.runtime.nodes[node].collect_names
        said = [t for n in collected for t in self._slot_texts(n)]
        answers = _text_turns(said)
        negated = _text_turns(NEGATIONS[self.runtime.language] + t for t in said)
        declines = _text_turns(DECLINES[self.runtime.language]) if collected else ()
        exits = self._exit_pool(node)
        shares = 4 if self.runtime.nodes[node].required else 2  # as in generated mode
        return weighted([words, fillers, texts, *[answers] * shares, negated, declines, exits,
                         exits, others, (SILENCE,), free, self._safety_pool, self._pause_pool,
                         *self._pattern_texts])

    @cached_property
    def _pattern_texts(self) -> list:
        """Rules mode: strings drawn from slot patterns, as said ("rx 7654321" too)."""
        return [self.values[n].pattern.map(lambda v: UserTurn(value_text(v, "…"), None, "text"))
                for n in self.values if self.values[n].pattern is not None]

    @cached_property
    def _rules_common(self) -> tuple:
        """The rules-mode kinds that are the same at every node: the lexicon's act words and
        fillers, intent examples and compared texts, every slot's values; free text."""
        words = sorted(w for w in lex.EXACT_ACTS if transcript_safe(w))
        fillers = sorted(w for w in lex.FILLER_WORDS if transcript_safe(w))
        texts = [t for name in self.runtime.intent_names for t in self.intent_texts(name)]
        texts += self.condition_texts()
        others = [t for n in self.values for t in self._slot_texts(n, invalid=True)]
        free = self.free_text.map(lambda t: UserTurn(t, None, "text"))
        return _text_turns(words), _text_turns(fillers), _text_turns(texts), \
            _text_turns(others), free

    def _slot_texts(self, name: str, invalid: bool = False) -> list[str]:
        """How a user would say the slot's values: synonyms, labels and members, numbers,
    emails, dates and times in words, strings before their `normalize`."""
        rule = self.runtime.slot_rules[self.runtime.slot_index[name]]
        values = self.values[name]
        pool = list(values.valid) + (list(values.invalid) if invalid else [])
        pool = [i for v in pool for i in (v if isinstance(v, list) else [v])]  # list items
        texts = [value_text(v, "") for v in pool if not isinstance(v, (dict, list))]
        texts += list(values.said)  # dates and times in words (SPEC 14.1)
        texts += [p for phrases in rule.slot.synonyms.values() for p in phrases]
        texts += list(rule.slot.labels.values())  # read as synonyms (SPEC 14.3)
        return [t for t in dict.fromkeys(texts) if t and transcript_safe(t)]

    # -- the probe set of the livelock search --

    def probes_at(self, node: int, relevant_slots: tuple[str, ...]) -> tuple[UserTurn, ...]:
        """Inputs that can make a difference to routing at `node`: silence, not understood,
        every act, every intent conditions name (alone and with every act), values of the
        slots that matter there, the node's collect slots all at once, compared texts and
        confidences. Always NLU results, in both modes."""
        key = (node, relevant_slots)
        if key in self._probes:
            return self._probes[key]
        first, last = self._common_probes
        probes = list(first)
        for name in relevant_slots:
            probes += [self._slot_turn({name: v}, "probe") for v in self.values[name].valid[:4]]
        table = self.runtime.nodes[node]
        together = {n: self.values[n].valid[0] for n in table.collect_names
                    if self.values[n].valid}
        if together:
            probes.append(self._slot_turn(together, "probe"))
            probes.append(UserTurn(self.act_text("affirm"),
                                   {"dialogue_act": "affirm", "slots": together}, "probe"))
        self._probes[key] = tuple(probes) + last
        return self._probes[key]

    @cached_property
    def _common_probes(self) -> tuple[tuple[UserTurn, ...], tuple[UserTurn, ...]]:
        """The probes that are the same at every node: those before the node's slot values
        (silence, not understood, the acts, the intents conditions name) and those after
        them (compared texts, confidences either side of each compared level)."""
        first = [SILENCE, self._act_turn(None)]
        first += [self._act_turn(a) for a in SPOKEN_ACTS if a not in ("negate", "silence")]
        named = [v for v in self.compared.get(F_INTENT, []) if isinstance(v, int)]
        for index in sorted(named):
            name = self.runtime.intent_names[index]
            text = self.intent_texts(name)[0]
            first += [self._intent_turn(name, a, text, "probe") for a in (None, *SPOKEN_ACTS)
                      if a not in ("negate", "silence")]
        last = [UserTurn(t, {"dialogue_act": "inform"}, "probe") for t in self.condition_texts()]
        last += [UserTurn(self.act_text("inform"), {"dialogue_act": "inform", "safety": v}, "probe")
                 for v in self._read_categories]
        last += [UserTurn(self.act_text("inform"), {"dialogue_act": "inform"}, "probe", seconds)
                 for seconds in self.pauses]  # the user who comes back later
        for level in self.compared.get(F_CONFIDENCE, []):
            for shifted in sorted({min(1.0, max(0.0, level + d)) for d in (-0.05, 0.05)}):
                last.append(UserTurn(self.act_text("inform"),
                                     {"dialogue_act": "inform", "confidence": shifted}, "probe"))
        return tuple(first), tuple(last)
