"""Safety (SPEC 10, issue 16 item 2): the detector, the safety tier, `nlu.safety`, the merge
rule, the compiler's checks and views, and the reference scenarios from every node.

The labelled set `tests/data/safety_labelled.jsonl` (one `{"text", "category", "kind"}` per
line, `kind` crisis / idiom / near_miss / everyday, at least half idioms and near misses)
is the detector's yardstick: recall at least 0.97 per category, false alarms at most 2% of
the idioms and near misses. The figures and the cost of a call are printed (`pytest -s`).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from compiler.driver import check_source
from compiler.render import dot, inspect_data, inspect_text, mermaid
from compiler.schema import scenario_json_schema
from conftest import examples
from interpreter import ir
from interpreter.engine import Engine
from interpreter.loader import Runtime, load_program_bytes
from interpreter.state import DialogueState
from interpreter.understanding import safety, safety_lexicon
from interpreter.understanding.nlu import NLUResult, ScriptedNLU
from interpreter.understanding.rules import RulesNLU
from interpreter.understanding.safety import CATEGORIES, Detector

from support.irkit import body_tree, forge
from support.llm_server import reference_runtime

ROOT = Path(__file__).resolve().parents[2]
LABELLED = [json.loads(line) for line in
            (ROOT / "tests" / "data" / "safety_labelled.jsonl").read_text("utf-8").splitlines()
            if line.strip()]
DETECTOR = Detector()
SENIMATE = reference_runtime("senimate")
SAFETY_NODE = {"medical_emergency": "safety_medical_emergency",
               "self_harm": "safety_self_harm", "abuse": "safety_abuse"}


# --- the labelled set ---------------------------------------------------------------------------


def test_the_labelled_set_is_well_formed_and_half_idioms_and_near_misses():
    assert len(LABELLED) >= 150
    for row in LABELLED:
        assert set(row) == {"text", "category", "kind"}, row
        assert row["kind"] in ("crisis", "idiom", "near_miss", "everyday"), row
        assert (row["category"] in CATEGORIES) == (row["kind"] == "crisis"), row
    texts = [row["text"] for row in LABELLED]
    assert len(texts) == len(set(texts)), "a text is labelled twice"
    kinds = Counter(row["kind"] for row in LABELLED)
    assert kinds["idiom"] + kinds["near_miss"] >= len(LABELLED) / 2, kinds
    assert all(Counter(r["category"] for r in LABELLED)[c] >= 30 for c in CATEGORIES)


def test_recall_per_category_and_false_alarms_on_the_labelled_set():
    found = {c: 0 for c in CATEGORIES}
    total = Counter(row["category"] for row in LABELLED if row["kind"] == "crisis")
    misses, alarms = [], []
    for row in LABELLED:
        got = DETECTOR.detect(row["text"])
        if row["kind"] == "crisis":
            if got == row["category"]:
                found[row["category"]] += 1
            else:
                misses.append((row["text"], row["category"], got))
        elif got is not None:
            alarms.append((row["text"], row["kind"], got))
    recall = {c: found[c] / total[c] for c in CATEGORIES}
    tricky = [r for r in LABELLED if r["kind"] in ("idiom", "near_miss")]
    rate = sum(1 for _, kind, _ in alarms if kind != "everyday") / len(tricky)
    print(f"\nsafety detector on {len(LABELLED)} labelled utterances: recall "
          + ", ".join(f"{c} {recall[c]:.3f} ({found[c]}/{total[c]})" for c in CATEGORIES)
          + f"; false alarms {rate:.3%} of {len(tricky)} idioms and near misses; "
          + f"misses {misses}; alarms {alarms}")
    assert all(value >= 0.97 for value in recall.values()), misses
    assert rate <= 0.02, alarms
    assert not [a for a in alarms if a[1] == "everyday"], alarms


def test_a_detect_call_is_fast():
    """Measured on the labelled set (printed); bounded generously so a busy machine passes."""
    texts = [row["text"] for row in LABELLED]
    DETECTOR.detect("warm up")  # the lexicon compiles on first use
    figures = {}
    for kind in ("crisis", "idiom", "near_miss", "everyday"):
        chosen = [row["text"] for row in LABELLED if row["kind"] == kind]
        started = time.perf_counter()
        for _ in range(20):
            for text in chosen:
                DETECTOR.detect(text)
        figures[kind] = (time.perf_counter() - started) / (20 * len(chosen)) * 1e6
    started = time.perf_counter()
    for _ in range(20):
        for text in texts:
            DETECTOR.detect(text)
    mean = (time.perf_counter() - started) / (20 * len(texts)) * 1e6
    labelled = ", ".join(f"{k} {v:.1f} us" for k, v in figures.items())
    print(f"\ndetect: {mean:.1f} us a call on the labelled set ({labelled})")
    assert mean < 1000


@pytest.mark.parametrize("text", ["가나다" * 700, "가슴이" + "너무" * 990, "아들이" + "자꾸" * 990,
                                  "나를" + "자꾸" * 995, "한테" + "맨날" * 995, "숨이" + "턱" * 1990,
                                  "죽고" * 1000, "he " + "always " * 280, "가" * 64_000])
def test_adversarial_text_stays_within_a_few_milliseconds(text):
    DETECTOR.detect("warm up")
    started = time.perf_counter()
    DETECTOR.detect(text)
    assert time.perf_counter() - started < 0.05


# --- what counts --------------------------------------------------------------------------------


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_sample_utterance_is_detected_as_its_category(category):
    for text in safety_lexicon.SAMPLES[category]:
        assert DETECTOR.detect(text) == category, text


AGGLUTINATION = [
    ("죽고싶어", "self_harm"), ("죽고 싶어요", "self_harm"), ("살기 싫어", "self_harm"),
    ("숨을 못 쉬겠어요", "medical_emergency"), ("숨이 안 쉬어져요", "medical_emergency"),
    ("가슴이 아파요", "medical_emergency"), ("쓰러졌어요", "medical_emergency"),
    ("때려요", None), ("아들이 때려요", "abuse"), ("맞았어요", None), ("아들한테 맞았어요", "abuse"),
    ("맞는 옷", None), ("죽을 먹었어요", None), ("배고파 죽겠다", None), ("웃겨 죽겠어", None),
    ("죽이 맛있어요", None), ("I want to die", "self_harm"), ("chest pain", "medical_emergency"),
    ("can't breathe", "medical_emergency"), ("he hits me", "abuse"),
]


@pytest.mark.parametrize("text, category", AGGLUTINATION)
def test_spacing_endings_particles_and_english(text, category):
    """Bare "때려요" and "맞았어요" name no one and nobody: the detector needs a person or "me"
    (who hits, who was hit), as "맞았어요" is also an injection, the rain or a right answer."""
    assert DETECTOR.detect(text) == category


NEGATION = [
    ("죽고 싶지 않아요", None), ("죽고 싶은 건 아니에요", None), ("자살 생각은 없어요", None),
    ("가슴이 아프지 않아요", None), ("가슴이 안 아파요", None), ("가슴 통증은 없어요", None),
    ("아들이 저를 때린 적은 없어요", None), ("며느리가 때리지는 않아요", None),
    ("I don't have chest pain", None), ("I do not want to die", None), ("no chest pain", None),
    # a hedge: the user raises dying, then qualifies it; still a risk signal (documented rule)
    ("죽고 싶지는 않은데 너무 힘들어요", "self_harm"), ("죽고 싶지 않지만 사는 게 너무 괴로워요", "self_harm"),
    ("I don't want to die but I'm so tired of everything", "self_harm"),
    ("죽고 싶지 않은데요", None),  # "..., you know": nothing follows the "but"
    # the expression itself says "not": that is the crisis
    ("살고 싶지 않아요", "self_harm"), ("숨을 못 쉬겠어요", "medical_emergency"),
    ("I don't want to live anymore", "self_harm"),
]


@pytest.mark.parametrize("text, category", NEGATION)
def test_negation_cancels_a_crisis_but_a_hedge_does_not(text, category):
    assert DETECTOR.detect(text) == category


def test_the_most_urgent_category_wins_and_findings_list_them_all():
    text = "죽고 싶어서 약을 너무 많이 먹었어요 아들이 때려요"
    found = DETECTOR.findings(text)
    assert {f.category for f in found} == set(CATEGORIES)
    assert DETECTOR.detect(text) == "medical_emergency"  # 119 also takes an overdose
    assert all(f.source == "lexicon" and f.name and f.matched for f in found)


def test_no_crisis_entry_looks_around_and_the_categories_come_in_order():
    """Masking only removes matches (so an unmatched text is not masked) and a search stops at
    its first finding (the most urgent category): both rest on these two facts."""
    assert not [n for n, _, _, p, _ in safety_lexicon.ENTRIES if "(?=" in p or "(?!" in p
                or "(?<" in p]
    order = [CATEGORIES.index(c) for _, c, _, _, _ in safety_lexicon.ENTRIES]
    assert order == sorted(order)


def test_every_lexicon_pattern_has_literals_every_match_contains():
    """The detector's cheap first test: a text without one of these literals is not read
    further. Every entry must have some (else `lexicon()` raises)."""
    for name, _, _, pattern, _ in safety_lexicon.ENTRIES:
        assert safety.required_literals(pattern), name


_FRAGMENTS = sorted({piece for _, _, _, pattern, _ in safety_lexicon.ENTRIES
                     for piece in safety.required_literals(pattern)})
_CRISIS_TEXTS = [row["text"] for row in LABELLED if row["kind"] == "crisis"]


@settings(max_examples=examples(300))
@given(st.lists(st.sampled_from(_FRAGMENTS) | st.sampled_from(_CRISIS_TEXTS)
                | st.text(max_size=8), max_size=6).map("".join))
def test_the_literal_prefilter_never_hides_a_match(text):
    table = safety.lexicon()
    spaced, compact = safety._forms(text)
    for i, e in enumerate(table.entries):
        form, anchors = (compact, table.anchors_ko) if e.script == "ko" else (
            spaced, table.anchors_en)
        if e.regex.search(form):
            assert safety.candidates(anchors, form) >> i & 1, e.name


@settings(max_examples=examples(300))
@given(st.text() | st.sampled_from(_CRISIS_TEXTS).flatmap(
    lambda t: st.tuples(st.text(max_size=20), st.just(t), st.text(max_size=20)).map("".join)))
def test_the_detector_never_raises_and_is_deterministic(text):
    first = DETECTOR.detect(text)
    assert first is None or first in CATEGORIES
    assert DETECTOR.detect(text) == first and Detector().detect(text) == first
    assert [f.category for f in DETECTOR.findings(text)] == \
        [f.category for f in DETECTOR.findings(text)]


@pytest.mark.parametrize("text", ["", "   ", "\ud800", "\x00\x1b[31m", "😀" * 100, "a" * 70_000])
def test_odd_text_has_no_category(text):
    assert DETECTOR.detect(text) is None


def test_merge_keeps_the_finding_and_adds_only_a_category():
    assert safety.merge("abuse", "self_harm") == "abuse"
    assert safety.merge(None, "self_harm") == "self_harm"
    assert safety.merge(None, "nonsense") is None and safety.merge(None, ["x"]) is None


# --- a scenario's safety.patterns ---------------------------------------------------------------


def scenario(**extra) -> dict:
    doc = {
        "metadata": {"name": "s", "language": "ko"},
        "graph": {"entry": "talk", "bot_first": True,
                  "safety": [{"category": "medical_emergency", "target": "help"},
                             {"category": "abuse", "target": "talk", "name": "hold"}],
                  "nodes": [
                      {"id": "talk", "description": "talk", "responses": {"default": "말씀하세요."},
                       "params": {"max_fallback_retries": 1},
                       "next_nodes": [{"target": "listen",
                                       "condition": 'nlu.safety == "self_harm"'},
                                      {"action": "stay", "condition": "system.node_turns < 5"}],
                       "default_next": "bye"},
                      {"id": "help", "description": "119", "responses": {"default": "119에 전화하세요."},
                       "default_next": "talk"},
                      {"id": "listen", "description": "109", "responses": {"default": "109에 전화하세요."},
                       "default_next": "talk"},
                      {"id": "bye", "description": "bye", "terminal": True,
                       "params": {"max_turns": 2}, "responses": {"default": "안녕히 계세요."}}]}}
    doc.update(extra)
    return doc


def compiled(doc: dict):
    result = check_source("s.json", json.dumps(doc, ensure_ascii=False))
    assert not result.diagnostics, [(d.code, d.path, d.message) for d in result.diagnostics]
    return result


def runtime_of(doc: dict) -> Runtime:
    return load_program_bytes(compiled(doc).ir_bytes(), verify=True)


def test_scenario_patterns_extend_the_lexicon_and_travel_in_the_ir():
    doc = scenario(safety={"patterns": [{"category": "abuse", "pattern": "도둑이야"},
                                        {"category": "self_harm", "pattern": r"\bgive up on life\b"}]})
    runtime = runtime_of(doc)
    assert [(p.category, p.pattern) for p in runtime.program.safety_patterns] == [
        ("abuse", "도둑이야"), ("self_harm", r"\bgive up on life\b")]
    assert runtime.safety.detect("도둑이야 도와줘") == "abuse"
    assert runtime.safety.detect("I GIVE UP ON LIFE") == "self_harm"  # case-insensitive
    assert DETECTOR.detect("도둑이야") is None  # another program's patterns are not shared
    [finding] = runtime.safety.findings("도둑이야")
    assert (finding.source, finding.name) == ("scenario", "safety.patterns[0]")


def test_a_scenario_pattern_follows_the_bounded_regex_rule():
    doc = scenario(safety={"patterns": [{"category": "abuse", "pattern": "(a+)+$"},
                                        {"category": "abuse", "pattern": "(unclosed"}]})
    result = check_source("s.json", json.dumps(doc))
    assert [(d.code, d.path) for d in result.diagnostics] == [
        ("E012", "/safety/patterns/0/pattern"), ("E012", "/safety/patterns/1/pattern")]
    assert "safety pattern" in result.diagnostics[0].message


@pytest.mark.parametrize("change, problem", [
    (lambda t: t["safety_patterns"].append(["abuse", "(a+)+$"]), "IR safety pattern 0 has an invalid pattern"),
    (lambda t: t["safety_patterns"].append(["anger", "x"]), "IR safety pattern 0 has unknown category"),
    (lambda t: t["safety"].append(list(t["safety"][0])), "IR safety rule 2 repeats category"),
    (lambda t: t["safety"][0].__setitem__(0, "anger"), "IR safety rule 0 has unknown category"),
    (lambda t: t["safety"][0].__setitem__(1, 99), "IR safety rule medical_emergency targets index 99"),
])
def test_a_hand_made_ir_with_bad_safety_data_is_refused_in_one_line(change, problem):
    tree = body_tree(compiled(scenario()).program())
    change(tree)
    with pytest.raises(ir.IRError) as raised:
        load_program_bytes(forge(tree))
    assert str(raised.value).startswith(problem) and "\n" not in str(raised.value)


# --- the compiler --------------------------------------------------------------------------------


def test_nlu_safety_is_a_typed_condition_field():
    for condition, code in [('nlu.safety == "abus"', "E204"), ("nlu.safety == null", "E204"),
                            ('nlu.safety contains "a"', "E203"), ("nlu.safety > 1", "E203")]:
        doc = scenario()
        doc["graph"]["nodes"][0]["next_nodes"][0]["condition"] = condition
        codes = [d.code for d in check_source("s.json", json.dumps(doc)).diagnostics]
        assert codes == [code], (condition, codes)
    doc = scenario()
    doc["graph"]["nodes"][0]["next_nodes"][0]["condition"] = 'nlu.safety in ["self_harm"]'
    compiled(doc)


def test_a_node_reached_only_through_a_safety_rule_is_reachable_and_checked_for_traps():
    doc = scenario()
    doc["graph"]["nodes"][0]["next_nodes"] = []  # listen: reached by no condition any more
    doc["graph"]["safety"].append({"category": "self_harm", "target": "listen"})
    compiled(doc)  # no W401: the safety rule leads in
    doc["graph"]["nodes"][2]["next_nodes"] = [{"action": "stay"}]
    del doc["graph"]["nodes"][2]["default_next"]
    doc["graph"]["nodes"][2]["terminal"] = False
    codes = [d.code for d in check_source("s.json", json.dumps(doc)).diagnostics]
    # listen never leaves but by another crisis: a trap (nobody should have to say one to
    # finish); its only route being a stay, it is also an inferred end node (W407)
    assert codes == ["E301", "W407"], codes


def test_inspect_graph_and_schema_show_safety():
    result = compiled(scenario(safety={"patterns": [{"category": "abuse", "pattern": "도둑이야"}]}))
    program = result.program()
    envelope = ir.decode_ir(result.ir_bytes())[0]
    data = inspect_data(envelope, program)
    assert data["counts"]["safety_rules"] == 2 and data["counts"]["safety_patterns"] == 1
    assert [(r["label"], r["target"], r["name"]) for r in data["safety"]] == [
        ("safety:medical_emergency", "help", None), ("safety:abuse", "talk", "hold")]
    text = inspect_text(data)
    assert "safety:medical_emergency -> help" in text and "safety pattern (abuse): 도둑이야" in text
    assert '__any_node__ -.->|"safety:abuse hold (first)"| talk' in mermaid(program)
    assert '"__any_node__" -> "help" [label="safety:medical_emergency (first)"' in dot(program)
    schema = json.dumps(scenario_json_schema())
    assert "SafetyRuleDef" in schema and "SafetyPatternDef" in schema and "self_harm" in schema


# --- the safety tier ----------------------------------------------------------------------------


def engine_at(runtime: Runtime, node: str, node_turns: int = 0, nlu=None) -> Engine:
    engine = Engine(runtime, nlu or ScriptedNLU())
    engine.store.put(DialogueState("s", runtime.ir_hash, node, node_turns=node_turns,
                                   session_turns=node_turns + 1), 0)
    return engine


SENIMATE_CASES = [(table.id, category, turns)
                  for table in SENIMATE.nodes for category in CATEGORIES
                  for turns in sorted({0} | ({table.turn_limit - 1} if table.turn_limit else set()))]


@pytest.mark.parametrize("node, category, node_turns", SENIMATE_CASES)
def test_every_category_routes_to_its_target_from_every_senimate_node(node, category, node_turns):
    """From every node of SeniMate, in a fresh visit and on the turn that reaches the node's
    turn limit (the closing node's included: safety beats Action END), each sample of each
    category reaches its safety node in that turn, through the rules NLU."""
    target = SAFETY_NODE[category]
    for text in safety_lexicon.SAMPLES[category]:
        engine = engine_at(SENIMATE, node, node_turns, RulesNLU(SENIMATE.program))
        result = engine.turn("s", text)
        assert (result.reason, result.next_node, result.complete) == (
            f"safety:{category}", target, False), (node, text)
        assert result.decision.tier == "safety" and result.nlu["safety"] == category
        assert result.response == SENIMATE.node_named(target).responses["default"][0]
        state = engine.session("s")
        if target != node:
            assert (state.previous_node, state.node_turns) == (node, 0)  # a move resets


def test_safety_beats_action_end_at_the_closing_node_at_its_turn_limit():
    closing = SENIMATE.node_named("conversation_closure")
    engine = engine_at(SENIMATE, "conversation_closure", closing.node.max_turns - 1)
    plain = engine.turn("s", "네 고마워요", {"dialogue_act": "thank"})
    assert plain.reason == "action_end" and plain.complete  # what the limit does otherwise
    engine = engine_at(SENIMATE, "conversation_closure", closing.node.max_turns - 1)
    result = engine.turn("s", "가슴이 너무 아파서 숨을 못 쉬겠어요", {"dialogue_act": "thank"})
    assert (result.reason, result.next_node, result.complete) == (
        "safety:medical_emergency", "safety_medical_emergency", False)


def test_safety_beats_the_fallback_policy_on_a_turn_not_understood():
    engine = engine_at(SENIMATE, "meal_check")
    result = engine.turn("s", "죽고 싶어요", {"dialogue_act": None})
    assert (result.reason, result.next_node) == ("safety:self_harm", "safety_self_harm")
    assert result.nlu["dialogue_act"] == "inform"  # read as inform: never "not understood"
    assert "null act with a safety finding read as inform" in result.decision.notes
    state = engine.session("s")
    assert (state.not_understood_count, state.fallback_retries) == (0, 0)


def test_a_category_without_a_rule_is_understood_and_read_by_conditions():
    runtime = runtime_of(scenario())
    engine = engine_at(runtime, "talk")
    result = engine.turn("s", "죽고 싶어요", {"dialogue_act": None})  # self_harm has no rule
    assert result.reason == "next_nodes[0]" and result.next_node == "listen"
    assert result.nlu["dialogue_act"] == "inform" and result.nlu["safety"] == "self_harm"


def test_a_rule_that_targets_the_current_node_holds_it_and_is_reported():
    runtime = runtime_of(scenario())
    engine = Engine(runtime)
    engine.start("s")
    first = engine.turn("s", "아들이 때려요", {"dialogue_act": "inform"})
    again = engine.turn("s", "며느리한테 맞았어요", {"dialogue_act": "inform"})
    for result in (first, again):
        assert (result.node, result.next_node, result.reason) == ("talk", "talk", "safety:abuse")
        assert result.decision.kind == "stay" and result.response == "말씀하세요."
    assert engine.session("s").node_turns == 3  # the opening, then two holds


def test_a_hold_at_an_end_node_keeps_helping_past_its_turn_limit():
    doc = scenario()
    doc["graph"]["safety"][1]["target"] = "bye"  # abuse holds the closing node
    runtime = runtime_of(doc)
    engine = engine_at(runtime, "bye", 1)  # this turn reaches max_turns 2
    result = engine.turn("s", "아들이 때려요", {"dialogue_act": "thank"})
    assert (result.reason, result.complete, result.next_node) == ("safety:abuse", False, "bye")
    assert result.response == "안녕히 계세요."  # the node's own words, not "네, 말씀해 주세요."
    done = engine.turn("s", "고마워요", {"dialogue_act": "thank"})
    assert done.reason == "action_end" and done.complete


def test_silence_has_no_category_whatever_the_nlu_says():
    engine = engine_at(SENIMATE, "meal_check")
    result = engine.turn("s", "  ", {"dialogue_act": "inform", "safety": "self_harm"})
    assert result.reason == "fallback:no_input" and "safety" not in result.nlu


# --- the merge rule -------------------------------------------------------------------------------


def test_the_detector_runs_beside_an_override_and_its_finding_is_kept():
    engine = engine_at(SENIMATE, "meal_check")
    result = engine.turn("s", "숨을 못 쉬겠어요", {"dialogue_act": "affirm", "safety": "abuse"})
    assert result.nlu["safety"] == "medical_emergency" and result.safety_source == "detector"
    assert result.reason == "safety:medical_emergency"
    line = result.json_line()
    assert line["nlu"]["safety"] == "medical_emergency"


def test_an_nlu_category_is_added_when_the_detector_found_none():
    engine = engine_at(SENIMATE, "meal_check")
    result = engine.turn("s", "음...", {"dialogue_act": "inform", "safety": "abuse"})
    assert (result.nlu["safety"], result.safety_source, result.reason) == (
        "abuse", "nlu", "safety:abuse")


def test_a_turn_without_a_category_has_no_safety_key():
    engine = engine_at(SENIMATE, "meal_check")
    result = engine.turn("s", "밥 잘 먹었어요", {"dialogue_act": "inform"})
    assert "safety" not in result.json_line()["nlu"] and result.safety_source is None


def test_a_malformed_category_in_an_override_is_refused():
    engine = engine_at(SENIMATE, "meal_check")
    with pytest.raises(Exception, match="safety"):
        engine.turn("s", "음", {"dialogue_act": "inform", "safety": "anger"})


class _Denier:
    """An NLU plug-in that says there is no danger, whatever it hears (a wrong LLM)."""

    name = "denier"

    def __init__(self, said):
        self.said = said

    def parse(self, text, context):
        return NLUResult(dialogue_act="inform", text=text, safety=self.said)


@settings(max_examples=examples(100), deadline=None)
@given(text=st.sampled_from(_CRISIS_TEXTS), said=st.sampled_from((*CATEGORIES, None, "anger")),
       node=st.sampled_from([t.id for t in SENIMATE.nodes]))
def test_no_nlu_can_remove_a_finding_of_the_detector(text, said, node):
    found = DETECTOR.detect(text)
    for nlu in (_Denier(said), RulesNLU(SENIMATE.program)):
        result = engine_at(SENIMATE, node, nlu=nlu).turn("s", text)
        assert result.nlu["safety"] == found and result.reason == f"safety:{found}", (nlu, text)


def test_the_llm_nlu_may_add_a_category_and_never_remove_one(llm):
    from interpreter.llm.client import ChatClient, LLMJournal, LLMSettings
    from interpreter.llm.nlu import LLMNLU

    client = ChatClient(LLMSettings(llm.url, "m", timeout=1.0, turn_budget=2.0), LLMJournal())
    nlu = LLMNLU(client, SENIMATE.program, RulesNLU(SENIMATE.program))

    def answer(safety_value):
        return json.dumps({"intent": None, "dialogue_act": "inform", "slots": {},
                           "safety": safety_value})
    llm.nlu(answer(None), answer("abuse"))
    removed = engine_at(SENIMATE, "meal_check", nlu=nlu).turn("s", "죽고 싶어요")
    added = engine_at(SENIMATE, "meal_check", nlu=nlu).turn("s", "요즘 집에 가기가 겁나요")
    assert removed.nlu_source == "llm" and removed.reason == "safety:self_harm"
    assert (added.nlu_source, added.safety_source, added.reason) == ("llm", "nlu", "safety:abuse")
    [request, _] = llm.of("nlu")
    system = request["messages"][0]["content"]
    assert "## Safety (always check" in system and "배고파 죽겠다" in system
    schema = request["response_format"]["json_schema"]["schema"]
    assert sorted(schema["properties"]["safety"]["anyOf"][0]["enum"]) == sorted(CATEGORIES)
    assert "safety" in schema["required"]


# --- the scenarios ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["senimate", "senimate_weather", "clinic_booking"])
def test_shipped_scenarios_compile_strict_with_their_safety_rules(name):
    text = (ROOT / "scenarios" / f"{name}.json").read_text("utf-8")
    result = check_source(f"{name}.json", text)
    assert not result.diagnostics, [(d.code, d.message) for d in result.diagnostics]
    rules = {r.category: r.target for r in result.program().safety}
    assert "medical_emergency" in rules
    program = result.program()
    for category, target in rules.items():
        number = {"medical_emergency": "119", "self_harm": "109", "abuse": "112"}[category]
        for help_text in program.nodes[target].responses["default"]:  # every variant helps
            assert number in help_text, (name, category, help_text)


def test_senimate_helps_with_119_109_and_112():
    rules = {r.category: SENIMATE.nodes[r.target].id for r in SENIMATE.program.safety}
    assert rules == SAFETY_NODE
    assert all("1577-1389" in text
               for text in SENIMATE.node_named("safety_abuse").responses["default"])
