"""Compiler properties (issue 4, part 1), over the strategies of `tests/support/strategies.py`.

- A generated valid scenario compiles with no diagnostic at all (no error, no warning), and
  its IR agrees with the scenario (entry, end nodes and their provenance, executors).
- Each single-defect mutation yields its code at its exact JSON pointer, and no error of
  another code (exceptions: E302 may come with warnings of graph analysis; the W403 family
  shadows several rows, all W403).
- Any input (JSON values, JSON-ish texts, raw bytes through a file, fuzzed scenarios,
  mutations) yields sorted, located diagnostics from the catalogue and never an exception.
- Compiling twice, or the same scenario laid out differently, gives the same bytes.
- Expression print/parse round-trips; IR encode/decode round-trips.

Every compiler bug these properties found has a minimal regression test at the end of this
file (`FIXED_BUGS` and the tests after it). A bug found and not yet fixed goes into
`KNOWN_BUGS`, a strict xfail, so that its fix is noticed.

Examples per property in the `ci` profile (derandomized): valid scenarios 40 (up to 60
nodes), facts 30, turn sequences 30, mutations 12 per code (27 codes), JSON values 100,
texts 80, bytes 80, fuzzed scenarios 60, compiling twice 25, print/parse 100 + 100, IR round
trip 30: the file runs in 40-60 s on a 2-core machine. Other profiles (`long`: `make fuzz`)
keep their own count.
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
import weakref

import msgspec
import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings, strategies as st

from compiler.condition_ast import NO_VALUE, Leaf, Not
from compiler.conditions import lower_condition, print_condition
from compiler.diagnostics import CATALOGUE, ERROR, WARNING, Diagnostics
from compiler import driver
from compiler.driver import check_file, check_source
from compiler.expressions import parse_expression
from compiler.jsonpos import source_lines
from compiler.typecheck import ConditionEnv, SlotType, check_condition
from interpreter.ir import END_EXPLICIT, END_INFERRED, END_NONE, EXECUTOR_GENERAL, EXECUTOR_SKILL, \
    EXECUTOR_TASK, decode_ir, encode_ir
from conftest import examples
from test_liveness import completes_from
from support.strategies import (
    MUTATION_CODES, condition_asts, conditions, facts_of, fuzzed_scenarios, json_texts, json_values,
    mutations, raw_bytes, turn_sequences, valid_scenarios,
)

def sized(n: int, **kwargs):
    """`settings` with `n` examples in the ci profile (scaled in `long`)."""
    return settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                    deadline=None, max_examples=examples(n), **kwargs)


# ---------------------------------------------------------------------------------------
# Compiling.

def text_of(doc: dict, layout: int = 0) -> str:
    """A scenario dict as JSON text, in one of a few layouts (layout means nothing)."""
    if layout == 1:
        return json.dumps(doc, ensure_ascii=False, indent=2)
    if layout == 2:
        return json.dumps(doc, indent="\t", separators=(" ,", " : "))
    return json.dumps(doc, ensure_ascii=False)


def compile_document(doc):
    """`CompileResult` for a mutation document: dict (dumped), str (the text) or bytes (a file)."""
    if isinstance(doc, bytes):
        fd, path = tempfile.mkstemp(suffix=".json")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(doc)
            return check_file(path)
        finally:
            os.unlink(path)
    return check_source("scenario.json", doc if isinstance(doc, str) else text_of(doc, 1))


def assert_well_formed(result) -> None:
    """Every diagnostic is from the catalogue, located inside the text, and the list is sorted."""
    lines = source_lines(result.text)
    for d in result.diagnostics:
        assert d.code in CATALOGUE, d
        assert d.severity in (ERROR, WARNING)
        assert d.line is not None and d.column is not None, d
        assert d.column >= 1 and d.line >= 1, d
        if result.text:  # (a file that is not UTF-8 has no text; E001 places the bad byte)
            assert d.line <= len(lines), (d, len(lines))
            assert d.column <= len(lines[d.line - 1]) + 1, (d, lines[d.line - 1][:80])
        assert isinstance(d.message, str) and d.message, d  # one line: see test_known_bug_message_lines
    keys = [(d.line, d.column) for d in result.diagnostics]
    assert keys == sorted(keys)
    assert result.errors == sum(d.severity == ERROR for d in result.diagnostics)


def listing(result) -> str:
    lines = [f"{d.code} {d.line}:{d.column} {d.path or '-'}  {d.message}" for d in result.diagnostics]
    return "\n".join(lines) or "(none)"


def check_any(text: str):
    """`check_source(text)`, well formed and, without errors, with an IR that reads back."""
    result = check_source("scenario.json", text)
    assert_well_formed(result)
    if not result.errors:
        envelope, program = decode_ir(result.ir_bytes())
        assert program == result.program()
    return result


# ---------------------------------------------------------------------------------------
# A generated valid scenario compiles with no diagnostic.


@sized(40)
@given(valid_scenarios())
def test_valid_scenario_compiles_with_no_diagnostic(scenario):
    event(f"nodes: {min(len(scenario['graph']['nodes']) // 10 * 10, 50)}+")
    result = check_source("scenario.json", text_of(scenario))
    if result.diagnostics and {d.code for d in result.diagnostics} == {"E301"}:
        assert_real_trap(scenario, result.diagnostics)
        return
    assert result.diagnostics == [], listing(result)
    envelope, program = decode_ir(result.ir_bytes())
    facts = facts_of(scenario)
    assert [n.id for n in program.nodes] == facts.node_ids
    assert program.nodes[program.entry].id == facts.entry
    provenance = {END_EXPLICIT: "explicit", END_INFERRED: "inferred"}
    assert {n.id: provenance[n.end] for n in program.nodes if n.end != END_NONE} == facts.end_nodes
    for node, source in zip(program.nodes, scenario["graph"]["nodes"]):
        params = source.get("params", {})
        expected = EXECUTOR_SKILL if params.get("skill") is not None else (
            EXECUTOR_TASK if source.get("collect_slots") else EXECUTOR_GENERAL)
        assert node.executor == expected, node.id


def assert_real_trap(scenario: dict, diagnostics: list) -> None:
    """The generator builds every node a way towards an end node, yet a random condition can be
    a tautology (`system.min_turns_met is not empty`) that cuts that way off at runtime: then
    E301 is right, and the oracle's search finds no completion from the node it names."""
    event("E301: a rule that always matches")
    for d in diagnostics:
        node_id = scenario["graph"]["nodes"][int(d.path.rsplit("/", 1)[1])]["id"]
        assert completes_from(scenario, node_id) is not True, f"E301 but {node_id} completes: {d.message}"


@sized(30)
@given(valid_scenarios(max_nodes=8))
def test_valid_scenario_facts_describe_the_declarations(scenario):
    facts = facts_of(scenario)
    assert facts.entry in facts.node_ids
    assert facts.end_nodes, "a valid scenario has an end node"
    assert set(facts.intents) == set(scenario.get("intents", {}))
    for name, slot in facts.slots.items():
        assert slot["value_type"] in ("string", "integer", "number", "boolean", "enum", "email"), name


@sized(30)
@given(valid_scenarios(max_nodes=8).flatmap(lambda s: st.tuples(st.just(s), turn_sequences(s))))
def test_turn_sequences_are_lines_mgi_accepts(drawn):
    """The contract of `turn_sequences` for interpreter properties: every turn is a `--json` line
    that `mgi run --json` (scripted NLU or not) reads without a usage error."""
    from interpreter.cli.main import parse_turn

    _scenario, turns = drawn
    for turn in turns:
        line = json.dumps(turn, ensure_ascii=False)
        scripted = "nlu" in turn or not turn["user"].strip()
        user, nlu, idle = parse_turn(line, True, scripted)
        assert user == turn["user"] and nlu == turn.get("nlu") and idle == turn.get("idle", 0)


# ---------------------------------------------------------------------------------------
# Each mutation yields its code at its pointer.


def test_every_catalogue_code_has_a_mutation_family():
    assert set(MUTATION_CODES) == set(CATALOGUE)


# Codes whose single defect may come with other diagnostics of graph analysis.
WARNINGS_ALLOWED_BESIDE = {"E302"}
# Codes whose defect can also make a real trap (E301): a row that shadows, or a condition made
# impossible on, a node's only way on.
TRAP_MAKERS = {"W403", "W404", "W406"}  # W406: the way into the new cycle may be a tautology


def compiles_clean(scenario: dict) -> bool:
    """A base with no diagnostic: rarely a generated rule is a tautology that makes a trap
    (see `assert_real_trap`), and that E301 is not the mutation's."""
    return not check_source("base.json", json.dumps(scenario)).diagnostics


@pytest.mark.parametrize("code", MUTATION_CODES)
@sized(12)
@given(data=st.data())
def test_mutation_yields_its_code_at_its_pointer(code, data):
    doc, expected_code, expected_path = data.draw(mutations(code, base_ok=compiles_clean), label="mutation")
    assert expected_code == code
    result = compile_document(doc)
    assert_well_formed(result)
    note(listing(result))
    reported = {(d.code, d.path) for d in result.diagnostics}
    assert (code, expected_path) in reported, f"expected {code} at {expected_path!r}, got:\n{listing(result)}"
    traps = [d for d in result.diagnostics if d.code == "E301" and code in TRAP_MAKERS]
    if traps:  # the shadowed rows were the only way on: a real trap, checked on the oracle
        assert_real_trap(doc, traps)
        result.diagnostics = [d for d in result.diagnostics if d not in traps]
    codes = {d.code for d in result.diagnostics}
    if CATALOGUE[code][0] == ERROR:
        assert {d.code for d in result.diagnostics if d.severity == ERROR} == {code}, listing(result)
        if code not in WARNINGS_ALLOWED_BESIDE:
            assert codes == {code}, listing(result)
    else:
        assert codes == {code}, listing(result)
    if code not in ("W403",):  # one defect, one report (W403: every later row is shadowed)
        assert sum(d.code == code for d in result.diagnostics) == 1, listing(result)
    if isinstance(doc, dict):
        assert_caret_on_the_culprit(doc, result, code, expected_path)


def _resolve_pointer(doc, path: str):
    """(parent, key) of a JSON pointer in `doc`."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
    parent = doc
    for part in parts[:-1]:
        parent = parent[int(part)] if isinstance(parent, list) else parent[part]
    return parent, (int(parts[-1]) if isinstance(parent, list) else parts[-1])


def assert_caret_on_the_culprit(doc: dict, result, code: str, path: str) -> None:
    """The line and column of an unknown or removed key point at the key; those of an unknown
    entry or target at the value (SPEC 3: line and column are exact)."""
    if code not in ("E010", "E013", "E102", "E103"):
        return
    parent, key = _resolve_pointer(doc, path)
    if code in ("E010", "E013") and key != "target":
        spelled = json.dumps(key, ensure_ascii=False)
    elif code in ("E102", "E103", "E013"):
        spelled = json.dumps(parent[key], ensure_ascii=False)
    d = next(d for d in result.diagnostics if (d.code, d.path) == (code, path))
    line = result.text.split("\n")[d.line - 1]
    assert line[d.column - 1:].startswith(spelled), f"{code} at {d.line}:{d.column}: {line!r}, expected {spelled}"


# ---------------------------------------------------------------------------------------
# Any input yields diagnostics and never an exception.


@sized(100)
@given(json_values())
def test_any_json_value_yields_diagnostics(value):
    text = json.dumps(value, ensure_ascii=bool(len(str(value)) % 2))
    result = check_any(text)
    assert result.errors >= 1, listing(result)  # an arbitrary value is never a scenario
    if not isinstance(value, dict) or not value:
        assert [d.code for d in result.diagnostics] == ["E002"], listing(result)


@sized(80)
@given(json_texts())
def test_any_text_yields_diagnostics(text):
    result = check_source("scenario.json", text)
    assert_well_formed(result)
    if any(d.code == "E001" for d in result.diagnostics):
        assert [d.code for d in result.diagnostics] == ["E001"], listing(result)


@sized(80)
@given(raw_bytes())
def test_any_bytes_yield_diagnostics_from_a_file(data):
    from_file = compile_document(data)
    assert_well_formed(from_file)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        assert [d.code for d in from_file.diagnostics] == ["E001"], listing(from_file)
        event("not UTF-8")
    assert_well_formed(check_source("scenario.json", data.decode("utf-8", errors="replace")))


@sized(60)
@given(fuzzed_scenarios())
def test_fuzzed_scenario_never_raises(doc):
    result = check_any(json.dumps(doc, ensure_ascii=False))
    event("errors" if result.errors else ("warnings only" if result.warnings else "clean"))


# ---------------------------------------------------------------------------------------
# Compiling twice gives the same bytes.


@sized(25)
@given(valid_scenarios(max_nodes=30), st.sampled_from([1, 2]))
def test_compiling_twice_gives_the_same_bytes(scenario, layout):
    result = check_source("a.json", text_of(scenario))
    assume(not result.errors)  # a rare generated trap (E301), see assert_real_trap
    first = result.ir_bytes()
    again = check_source("a.json", text_of(scenario)).ir_bytes()
    assert first == again
    relaid = check_source("b.json", text_of(scenario, layout)).ir_bytes()
    assert relaid == first, "the IR depends on the layout of the source"


# ---------------------------------------------------------------------------------------
# Expression print/parse round trip.


def strict(condition):
    """A condition as nested tuples in which values keep their types (1 != True != 1.0)."""
    if isinstance(condition, Leaf):
        value = condition.value
        typed = ("none",) if value is NO_VALUE else (
            tuple((type(v).__name__, v) for v in value) if isinstance(value, list) else (type(value).__name__, value))
        return ("leaf", condition.field, condition.operator, typed)
    if isinstance(condition, Not):
        return ("not", strict(condition.item))
    return (type(condition).__name__, tuple(strict(item) for item in condition.items))


def reparse(condition):
    diags = Diagnostics()
    text = print_condition(condition)
    parsed = parse_expression(text, "/condition", diags)
    assert not diags.items, (text, [(d.code, d.message) for d in diags.items])
    return text, parsed


@sized(100)
@given(conditions())
def test_printed_condition_parses_back(drawn):
    raw, ctx, _at = drawn
    diags = Diagnostics()
    lowered = lower_condition(raw, "/condition", diags)
    assert lowered is not None and not diags.items, [(d.code, d.message, d.path) for d in diags.items]
    text, parsed = reparse(lowered)
    assert strict(parsed) == strict(lowered), text
    env = ConditionEnv(tuple(ctx.intents), tuple(ctx.nodes),
                       {n: SlotType(s["value_type"], tuple(s.get("values", ()))) for n, s in ctx.slots.items()})
    checked = check_condition(lowered, env, diags)
    assert checked is not None and not diags.items, [(d.code, d.message) for d in diags.items]
    text, parsed = reparse(checked)
    assert strict(parsed) == strict(checked), text


@sized(100)
@given(condition_asts())
def test_any_printed_ast_parses_back(condition):
    text, parsed = reparse(condition)
    assert strict(parsed) == strict(condition), text


# ---------------------------------------------------------------------------------------
# IR encode/decode round trip.


@sized(30)
@given(valid_scenarios(max_nodes=30))
def test_ir_encode_decode_round_trip(scenario):
    result = check_source("scenario.json", text_of(scenario))
    assume(not result.errors)  # a rare generated trap (E301), see assert_real_trap
    program = result.program()
    data = encode_ir(program, "0.0.0-test", "0" * 64)
    envelope, decoded = decode_ir(data)
    assert decoded == program
    assert [msgspec.msgpack.encode(n) for n in decoded.nodes] == [  # types kept too
        msgspec.msgpack.encode(n) for n in program.nodes]
    assert encode_ir(decoded, "0.0.0-test", "0" * 64) == data
    assert decode_ir(result.ir_bytes())[1] == program


# ---------------------------------------------------------------------------------------
# Compiler bugs found by these properties: minimal regression tests, strict xfails.


def _minimal(**changes) -> dict:
    """A one-node valid scenario, updated with `changes` (dotted paths, None deletes)."""
    doc = {"metadata": {"name": "bug"},
           "slots": {"meal": {"policy": "optional", "value_type": "enum", "values": ["ate", "skipped"]}},
           "intents": {"bye": {"examples": ["bye"]}},
           "graph": {"entry": "a",
                     "global_transitions": [{"name": "quit", "target": "b", "condition": 'nlu.intent == "bye"'}],
                     "nodes": [{"id": "a", "description": "ask", "collect_slots": ["meal"],
                                "next_nodes": [{"target": "b", "condition": 'slots.meal == "ate"'}],
                                "default_next": "b"},
                               {"id": "b", "description": "end"}]}}
    for path, value in changes.items():
        *parents, last = path.split(".")
        target = doc
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if value is None:
            del target[int(last) if isinstance(target, list) else last]
        else:
            target[int(last) if isinstance(target, list) else last] = value
    return doc


def test_minimal_scenario_of_the_bug_tests_is_valid():
    result = check_source("bug.json", json.dumps(_minimal()))
    assert result.diagnostics == [], listing(result)


CRASH = "the compiler raises instead of reporting a diagnostic"
CASCADE = "one mistake gives more than one report (SPEC 3: every problem is reported once)"
KNOWN_BUGS: list = [
    # (id, changes to the minimal scenario, the diagnostics it should give (code, path), reason)
]
# Fixed: the same shape, now plain regression tests.
FIXED_BUGS = [
    ("synonym_not_list", {"slots.meal.synonyms": {"ate": "yes"}}, [("E012", "/slots/meal/synonyms/ate")],
     "wrong pointer: msgspec's `$[...]` for a dict key becomes the pointer '/slots/meal/synonyms/]'"),
    ("synonym_item_not_text", {"slots.meal.synonyms": {"ate": ["yes", 5]}}, [("E012", "/slots/meal/synonyms/ate/1")],
     "wrong pointer: '/slots/meal/synonyms/]/1'"),
    ("target_not_text", {"graph.nodes.0.next_nodes.0.target": 5}, [("E012", "/graph/nodes/0/next_nodes/0/target")],
     CASCADE + ": E012 and E104 'neither target nor action'"),
    ("action_not_text", {"graph.nodes.0.next_nodes.0": {"action": 5}}, [("E012", "/graph/nodes/0/next_nodes/0/action")],
     CASCADE + ": E012 and E104"),
    ("value_type_unknown", {"slots.meal.value_type": "text"}, [("E012", "/slots/meal/value_type")],
     CASCADE + ": E012, then E106 ('values' on a non-enum) and E204 at every comparison with the slot"),
    ("value_type_missing", {"slots.meal.value_type": None}, [("E011", "/slots/meal")],
     CASCADE + ": E011, then E106 and E204"),
    ("enum_values_not_list", {"slots.meal.values": "ate"}, [("E012", "/slots/meal/values")],
     CASCADE + ": E012, then E106 'enum without values' and E204"),
    ("global_condition_missing", {"graph.global_transitions.0.condition": None}, [("E011", "/graph/global_transitions/0")],
     CASCADE + ": E011 and E012 'a condition must be an object or an expression string, got null'"),
    ("slot_definition_null", {"slots.meal": "NULL"}, [("E012", "/slots/meal")],
     CASCADE + ": E012, then E105 at collect_slots and E201 at every condition on the slot"),
    ("intent_definition_null", {"intents.bye": "NULL"}, [("E012", "/intents/bye")],
     CASCADE + ": E012, then E204 at every comparison with the intent"),
    ("node_list_empty", {"graph.nodes": [], "graph.global_transitions.0.condition": 'system.current_node == "a"'},
     [("E012", "/graph/nodes")],
     CASCADE + " (found by make fuzz): E012, then E204 'not a node id' at every comparison with a node"),
    ("no_graph", {"graph": None}, [("E011", "")], CRASH + ": AttributeError in resolve.unique_nodes"),
    ("graph_null", {"graph": "GRAPH_NULL"}, [("E012", "/graph")], CRASH + ": AttributeError in resolve.unique_nodes"),
    ("graph_without_nodes", {"graph.nodes": None}, [("E011", "/graph")], CRASH + ": TypeError in resolve.unique_nodes"),
    ("responses_not_object", {"graph.nodes.0.responses": "hello"}, [("E012", "/graph/nodes/0/responses")],
     CRASH + ": AttributeError in resolve.check_placeholders"),
    ("params_not_object", {"graph.nodes.0.params": [1]}, [("E012", "/graph/nodes/0/params")],
     CRASH + ": AttributeError in resolve.check_params"),
    ("min_turns_not_int", {"graph.nodes.0.params": {"min_turns": "2"}}, [("E012", "/graph/nodes/0/params/min_turns")],
     CRASH + ": TypeError in resolve.check_params (a rejected int field becomes None)"),
    ("retries_null", {"graph.nodes.0.params": {"max_fallback_retries": "NULL"}},
     [("E012", "/graph/nodes/0/params/max_fallback_retries")], CRASH + ": TypeError in resolve.check_params"),
]


def _apply_nulls(doc):
    if isinstance(doc, dict):
        return {k: (None if v in ("NULL", "GRAPH_NULL") else _apply_nulls(v)) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_apply_nulls(v) for v in doc]
    return doc


@pytest.mark.parametrize("changes, expected", [
    pytest.param(changes, expected, id=name, marks=pytest.mark.xfail(strict=True, reason=reason))
    for name, changes, expected, reason in KNOWN_BUGS])
def test_known_bug(changes, expected):
    doc = _apply_nulls(_minimal(**changes))
    result = check_source("bug.json", json.dumps(doc))
    assert [(d.code, d.path) for d in result.diagnostics] == expected, listing(result)


@pytest.mark.parametrize("changes, expected", [
    pytest.param(changes, expected, id=name) for name, changes, expected, _ in FIXED_BUGS])
def test_fixed_bug_gives_one_diagnostic(changes, expected):
    doc = _apply_nulls(_minimal(**changes))
    result = check_source("bug.json", json.dumps(doc))
    assert [(d.code, d.path) for d in result.diagnostics] == expected, listing(result)


CLOCK = {"clock": {"type": "python", "arguments": {"n": {}}}}  # a declared skill (SPEC 14.7)


# Found as `mgc compile` crashes (OverflowError at IR emission): the IR stores 64 bits.
@pytest.mark.parametrize("changes, expected", [
    ({"graph.nodes.0.params": {"max_turns": 2**64}}, [("E012", "/graph/nodes/0/params/max_turns")]),
    ({"skills": CLOCK, "graph.nodes.1.params": {"skill": "clock", "skill_args": {"n": [1, -2**63 - 1]}}},
     [("E107", "/graph/nodes/1/params/skill_args/n/1")]),
    ({"graph.nodes.0.next_nodes.0.condition": "system.node_turns > 100000000000000000000000"},
     [("E204", "/graph/nodes/0/next_nodes/0/condition")]),
    ({"graph.nodes.0.next_nodes.0.condition": {"field": "system.node_turns", "operator": "in", "value": [1, 2**63]}},
     [("E204", "/graph/nodes/0/next_nodes/0/condition/value/1")]),
    ({"slots.count": {"policy": "optional", "value_type": "number", "max": 2**70},
      "graph.nodes.1.collect_slots": ["count"]}, [("E012", "/slots/count/max")]),
], ids=["max_turns", "skill_args", "condition", "condition_list", "slot_bound"])
def test_integer_beyond_64_bits_is_one_diagnostic(changes, expected):
    result = check_source("bug.json", json.dumps(_minimal(**changes)))
    assert [(d.code, d.path) for d in result.diagnostics] == expected, listing(result)
    assert str(2**63 - 1) in result.diagnostics[0].hint + result.diagnostics[0].message


def test_integers_at_the_64_bit_edges_compile():
    changes = {"skills": CLOCK, "graph.nodes.0.params": {"max_turns": 2**63 - 1},
               "graph.nodes.1.params": {"skill": "clock", "skill_args": {"n": -2**63}},
               "graph.nodes.0.next_nodes.0.condition": f"system.node_turns > {2**63 - 1}"}
    result = check_source("bug.json", json.dumps(_minimal(**changes)))
    assert not result.errors, listing(result)
    assert decode_ir(result.ir_bytes())[1].nodes  # emitted and read back


# Found as broken report lines: names are quoted from the scenario into messages.
@pytest.mark.parametrize("changes", [
    {"metadata.a\nb": 1},
    {"graph.nodes.0.next_nodes.0.target": "b\n\x1b[31mred"},
    {"graph.nodes.0.next_nodes.0.condition": 'nlu.intent == "line\\nbreak"'},
], ids=["unknown_key", "target", "intent_value"])
def test_messages_are_one_printable_line(changes):
    result = check_source("bug.json", json.dumps(_minimal(**changes)))
    assert result.diagnostics
    for d in result.diagnostics:
        assert d.message.isprintable() and (d.hint is None or d.hint.isprintable()), repr(d.message)
        assert "\\n" in d.message  # escaped, not dropped: the reader sees which name it was


def test_compile_leaves_host_garbage_collectable():
    class Cyclic:
        pass

    was_enabled = gc.isenabled()
    gc.disable()  # so that the garbage below is still waiting for a collection when the compile runs
    try:
        garbage = Cyclic()
        garbage.itself = garbage
        alive = weakref.ref(garbage)
        del garbage
        driver.check_source("bug.json", json.dumps(_minimal()))
        gc.collect()
        assert alive() is None, "the host's garbage survived a full collection"
    finally:
        if was_enabled:
            gc.enable()
