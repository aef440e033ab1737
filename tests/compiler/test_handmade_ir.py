"""Hand-made IR files: a valid checksum over contents `mgc compile` would never write.

Whatever such a file holds, reading it gives one `ir.IRError` line that names the part and says
what is wrong, ending "recompile with `mgc compile`": at load for what is read without a node,
when a node is first read otherwise (a turn, or `verify`, which `mgc inspect`, `mgc graph`
and `mgi fuzz` use), and never another exception, a traceback or "internal error".
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from compiler.driver import check_source
from compiler.render import dot, inspect_data, inspect_text, mermaid
from interpreter import ir
from interpreter.cli.plugins import LazyRulesNLU
from interpreter.engine import Engine, EngineError
from interpreter.fuzz.runner import FuzzOptions, run_fuzz
from interpreter.loader import load_program
from interpreter.understanding.rules import RulesNLU

from conftest import ROOT, examples, run_mgc
from support.irkit import body_tree, forge, position, senimate_like

OP = {name: i for i, name in enumerate(ir.OPERATORS)}
F = ir.FIELD_INDEX
DAILY, MEAL = ir.SLOT_FIELD_BASE, ir.SLOT_FIELD_BASE + 1  # string; enum adequate/skipped
TRANSITIONS, EXECUTOR, END = (position(ir.Node, f) for f in ("transitions", "executor", "end"))
CONDITION = position(ir.Transition, "condition")
GLOBAL_CONDITION = position(ir.GlobalTransition, "condition")
RECOMPILE = "; recompile with `mgc compile`"


def leaf(operator: str, field: int, value=None) -> list:
    return [ir.OP_LEAF, OP[operator], field, value]


def nested(levels: int) -> list:
    """`levels` and/or/not levels above one leaf (alternating not and and)."""
    condition = leaf("equals", F["nlu.text"], "x")
    for level in range(levels):
        condition = [ir.OP_NOT, condition] if level % 2 else [ir.OP_AND, [condition]]
    return condition


def tree() -> dict:
    """The body of the six-node senimate-like program; node 0 is `greeting`, the entry."""
    return body_tree(senimate_like().build())


def with_node_condition(condition) -> bytes:
    body = tree()
    body["nodes"][0][TRANSITIONS][0][CONDITION] = condition
    return forge(body)


def with_global_condition(condition) -> bytes:
    body = tree()
    body["global_transitions"][0][GLOBAL_CONDITION] = condition
    return forge(body)


def written(tmp_path, data: bytes, name: str = "hand.ir"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def one_line(read) -> str:
    """The message of the `IRError` that `read()` raises: one line, ending as they all do."""
    with pytest.raises(ir.IRError) as info:
        read()
    message = str(info.value)
    assert message.startswith("IR ") and message.endswith(RECOMPILE), message
    assert len(message.splitlines()) == 1, message
    return message


# --- conditions: the type rules of the compiler, restated for the field table ---------------

BAD_LEAVES = [
    (leaf("greater_than", F["nlu.text"], 5), "compares nlu.text (string) with greater_than; "
     "ordering operators need a field of kind date or integer or number or time"),
    (leaf("less_or_equal", DAILY, 5), "compares slots.daily_life (string) with less_or_equal"),
    (leaf("greater_than", F["nlu.intent"], 0), "compares nlu.intent (enum) with greater_than"),
    (leaf("contains", F["nlu.confidence"], "x"), "compares nlu.confidence (number) with "
     "contains; contains needs a field of kind email or string"),
    (leaf("contains", MEAL, "adeq"), "compares slots.meal_status (enum) with contains"),
    (leaf("contains", F["nlu.text"], 5), "contains 5; it needs a string"),
    (leaf("equals", F["system.node_turns"], "1"), 'system.node_turns with equals "1"; it needs '
     "a whole number"),
    (leaf("greater_than", F["system.node_turns"], 1.5), "greater_than 1.5; it needs a whole"),
    (leaf("greater_than", F["nlu.confidence"], True), "greater_than true; it needs a number"),
    (leaf("less_than", F["nlu.confidence"], math.nan), "less_than nan; it needs a number"),
    (leaf("equals", F["system.node_turns"], 2 ** 64 - 1), "it needs a whole number"),
    (leaf("equals", F["system.fallback_exhausted"], 1), "it needs true or false"),
    (leaf("equals", F["nlu.intent"], 7), "equals 7; it needs an index into its 1 intents or null"),
    (leaf("equals", F["nlu.dialogue_act"], None), "equals null; it needs an index into its 9 acts"),
    (leaf("equals", F["system.current_node"], 6), "it needs an index into its 6 nodes"),
    (leaf("not_equals", F["system.previous_node"], True), "not_equals true; it needs an index"),
    (leaf("equals", F["skill.status"], 1), 'it needs one of "failed", "none", "ok", "timeout"'),
    (leaf("equals", MEAL, "eaten"), 'equals "eaten"; it needs one of "adequate", "skipped" '
     "or null"),
    (leaf("in", F["system.current_node"], 3), "in 3; it needs a non-empty list, each item an "
     "index"),
    (leaf("in", F["system.current_node"], []), "it needs a non-empty list"),
    (leaf("not_in", F["nlu.intent"], [0, "x"]), "not_in a list of 2; it needs a non-empty list"),
    (leaf("in", F["nlu.intent"], {"0": 0}), "in a map of 1; it needs a non-empty list"),
    (leaf("is_empty", DAILY, "x"), 'is_empty "x"; it needs no value'),
    ([ir.OP_LEAF, 99, DAILY, None], "unknown operator 99"),
    ([ir.OP_LEAF, True, DAILY, None], "unknown operator true"),
    ([ir.OP_LEAF, OP["equals"], 500, None], "unknown field index 500"),
    ([ir.OP_LEAF, OP["equals"], True, None], "unknown field index true"),
    ([ir.OP_LEAF, OP["equals"], DAILY], "malformed condition (opcode 3 with 2 operands)"),
    ([ir.OP_NOT], "malformed condition (opcode 2 with 0 operands)"),
    ([ir.OP_OR, {"a": 1}], "malformed condition (or over a map of 1, not a non-empty list)"),
    ([ir.OP_AND, []], "malformed condition (and over a list of 0"),
    ([7, []], "malformed condition (unknown opcode 7)"),
    ([True, [leaf("is_empty", DAILY)]], "malformed condition (unknown opcode true)"),
    ("slots.daily_life is empty", 'malformed condition ("slots.daily_life is empty" where'),
]


def _ids(cases) -> list[str]:
    return [json.dumps(condition, default=repr)[:40] for condition, _ in cases]


@pytest.mark.parametrize("condition,fragment", BAD_LEAVES, ids=_ids(BAD_LEAVES))
def test_a_bad_condition_in_a_node_is_one_line_when_the_node_is_first_read(tmp_path, condition,
                                                                          fragment):
    path = written(tmp_path, with_node_condition(condition))
    message = one_line(lambda: load_program(path, verify=True))
    assert message.startswith("IR transition in node greeting ") and fragment in message
    assert one_line(lambda: ir.decode_ir(path.read_bytes(), verify=True)) == message  # mgc
    runtime = load_program(path)  # lazy: the node is not read yet
    with pytest.raises(EngineError) as info:
        Engine(runtime).start("s")  # the opening reads the entry node: before any comparison
    assert str(info.value) == message


@pytest.mark.parametrize("condition,fragment", BAD_LEAVES[:4] + BAD_LEAVES[-3:],
                         ids=_ids(BAD_LEAVES[:4] + BAD_LEAVES[-3:]))
def test_a_bad_global_condition_is_one_line_at_load(tmp_path, condition, fragment):
    path = written(tmp_path, with_global_condition(condition))
    message = one_line(lambda: load_program(path))
    assert message.startswith("IR transition in global transition user_wants_to_end ")
    assert fragment in message


def test_well_typed_leaves_of_every_kind_load_and_run(tmp_path):
    conditions = [leaf("greater_or_equal", F["nlu.confidence"], 0), leaf("less_than",
                  F["nlu.confidence"], 0.5), leaf("greater_than", F["system.node_turns"], 2),
                  leaf("contains", F["nlu.text"], "네"), leaf("equals", F["nlu.intent"], None),
                  leaf("in", F["nlu.intent"], [0, None]), leaf("equals", F["nlu.dialogue_act"], 0),
                  leaf("equals", F["skill.status"], "none"), leaf("not_in", MEAL, ["skipped"]),
                  leaf("equals", F["system.turn_limit_reached"], False),
                  leaf("is_not_empty", DAILY), leaf("equals", F["system.node_turns"], -2 ** 63)]
    path = written(tmp_path, with_node_condition([ir.OP_OR, conditions]))
    runtime = load_program(path, verify=True)
    engine = Engine(runtime, RulesNLU(runtime.program))
    engine.start("s")
    assert engine.turn("s", "네 좋아요").response


# --- depth: at most 64 and/or/not levels, as the compiler allows ----------------------------

def test_a_condition_64_levels_deep_loads_and_65_is_refused(tmp_path):
    runtime = load_program(written(tmp_path, with_node_condition(nested(64))), verify=True)
    Engine(runtime).start("s")
    path = written(tmp_path, with_node_condition(nested(65)), "deeper.ir")
    message = one_line(lambda: load_program(path, verify=True))
    assert "has a condition nested more than 64 levels deep" in message
    assert message.startswith("IR transition in node greeting ")
    message = one_line(lambda: load_program(written(
        tmp_path, with_global_condition(nested(65)), "global.ir")))
    assert "global transition user_wants_to_end has a condition nested more" in message


@pytest.mark.parametrize("where", [with_node_condition, with_global_condition])
def test_a_condition_2000_levels_deep_is_one_line_everywhere(tmp_path, where):
    path = written(tmp_path, where(nested(2000)))
    for read in (lambda: load_program(path), lambda: load_program(path, verify=True),
                 lambda: ir.decode_ir(path.read_bytes(), verify=True)):
        message = one_line(read)
        assert "nested too deeply to read (a condition may have at most 64 levels)" in message


# --- executor kinds, end flags, names -------------------------------------------------------

def test_an_executor_kind_of_99_is_one_line_at_load(tmp_path):
    body = tree()
    body["nodes"][2][EXECUTOR] = body["node_executors"][2] = 99
    path = written(tmp_path, forge(body))
    message = one_line(lambda: load_program(path))
    assert message == ("IR node 2 (meal) has executor kind 99, not one of 0..2 (general, task, "
                       "skill)" + RECOMPILE)
    assert one_line(lambda: ir.decode_ir(path.read_bytes())) == message


def test_an_end_flag_of_99_is_one_line_when_the_node_is_first_read(tmp_path):
    body = tree()
    body["nodes"][5][END] = 99
    path = written(tmp_path, forge(body))
    message = one_line(lambda: ir.decode_ir(path.read_bytes(), verify=True))
    assert message == ("IR node closure has end flag 99, not one of 0..2 (none, explicit, "
                       "inferred)" + RECOMPILE)
    runtime = load_program(path)
    assert runtime.nodes[0].routes is not None  # the others are fine
    assert one_line(lambda: runtime.nodes[5].is_end) == message


def test_a_name_with_a_line_break_stays_on_one_line(tmp_path):
    body = tree()
    body["node_ids"][1] = "two\nlines\u2028here"
    message = one_line(lambda: load_program(written(tmp_path, forge(body)), verify=True))
    assert message.startswith(r'IR node 1 ("two\nlines\u2028here") does not match the node ')


def test_a_scenario_name_that_is_not_one_line_is_refused_at_load(tmp_path):
    """`mgi fuzz --transcripts` writes the name into a comment line: it must stay one line."""
    body = tree()
    body["name"] = "senimate\nscenario: other"
    message = one_line(lambda: load_program(written(tmp_path, forge(body))))
    assert message.startswith(r'IR scenario name "senimate\nscenario: other" contains the '
                              "control character U+000A")


def test_a_slot_of_an_unknown_value_type_is_one_line_at_load(tmp_path):
    body = tree()
    body["slots"][0][position(ir.Slot, "value_type")] = "datetime"
    message = one_line(lambda: load_program(written(tmp_path, forge(body))))
    assert message.startswith('IR slot daily_life has value type "datetime", not one of string, ')


# --- intents --------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern,fragment", [
    ("(unclosed", "missing ), unterminated subpattern at position 0"),
    ("a{99999999999}", "the repetition number is too large"),
    ("(" * 3000 + ")" * 3000, "nested too deeply)"),
])
def test_an_invalid_intent_pattern_is_one_line_at_load_naming_the_intent(tmp_path, pattern,
                                                                        fragment):
    body = tree()
    body["intents"][0][position(ir.Intent, "patterns")] = ["그만", pattern]
    path = written(tmp_path, forge(body))
    message = one_line(lambda: load_program(path))
    assert message.startswith("IR intent user_wants_to_end has an invalid pattern (")
    assert fragment in message
    assert one_line(lambda: ir.decode_ir(path.read_bytes())) == message


def test_the_rules_nlu_refuses_an_invalid_pattern_as_the_loader_does():
    program = senimate_like().build()
    bad = ir.Intent("user_wants_to_end", patterns=["(unclosed"])
    with pytest.raises(ir.IRError, match="IR intent user_wants_to_end has an invalid pattern"):
        RulesNLU(msgspec.structs.replace(program, intents=[bad]))


def test_an_intent_pattern_of_unbounded_time_is_refused_before_a_word_is_matched(tmp_path):
    # A regex the loader takes (its matching time is judged when the rules NLU compiles the
    # patterns, which it does before it reads a word): the same one line, and no turn hangs.
    body = tree()
    body["intents"][0][position(ir.Intent, "patterns")] = ["그만", "(a+)+$"]
    runtime = load_program(written(tmp_path, forge(body)))
    line = "IR intent user_wants_to_end has an invalid pattern (intent pattern (a+)+$ can take"
    with pytest.raises(ir.IRError) as refused:
        RulesNLU(runtime.program)
    assert str(refused.value).startswith(line) and "\n" not in str(refused.value)
    engine = Engine(runtime, nlu=LazyRulesNLU(runtime.program))  # as `mgi run` has it
    engine.start("s")
    with pytest.raises(EngineError) as turn:
        engine.turn("s", "a" * 40 + "!")
    assert str(turn.value) == str(refused.value)


def test_intent_indices_of_an_ir_without_intents_are_one_line_at_load(tmp_path):
    body = tree()
    body["intents"] = []  # the conditions still name intent 0
    message = one_line(lambda: load_program(written(tmp_path, forge(body))))
    assert message == ("IR transition in global transition user_wants_to_end compares "
                       "nlu.intent with equals 0; it needs null (the program declares no "
                       "intents)" + RECOMPILE)


NO_INTENTS = {
    "metadata": {"name": "no_intents", "language": "en", "version": "1"},
    "slots": {"name": {"policy": "required", "value_type": "string", "question": "Your name?"}},
    "graph": {"entry": "ask", "bot_first": True, "closing_acts": ["goodbye"], "nodes": [
        {"id": "ask", "description": "ask the name", "collect_slots": ["name"],
         "responses": {"default": "What is your name?"},
         "next_nodes": [{"target": "done", "condition": "slots.name is not empty and "
                                                        "nlu.intent is empty"},
                        {"target": "done", "condition": "nlu.dialogue_act == 'goodbye'"}]},
        {"id": "done", "description": "bye", "responses": {"default": "Bye."}}]},
}


@pytest.fixture(scope="module")
def no_intents(tmp_path_factory):
    result = check_source("no_intents.json", json.dumps(NO_INTENTS))
    assert result.errors == 0, result.diagnostics
    path = tmp_path_factory.mktemp("ir") / "no_intents.ir"
    path.write_bytes(result.ir_bytes())
    return path


def test_a_scenario_without_intents_compiles_loads_runs_and_fuzzes(no_intents):
    runtime = load_program(no_intents, verify=True)
    assert runtime.program.intents == [] and runtime.intent_names == ()
    engine = Engine(runtime, RulesNLU(runtime.program))
    assert engine.start("s").response == "What is your name?"
    turns = [engine.turn("s", text) for text in ("hello", "Bob", "bye")]
    assert [t.next_node for t in turns] == ["ask", "done", None] and turns[-1].complete
    for nlu in ("generated", "rules"):
        report = run_fuzz(runtime, str(no_intents), FuzzOptions(30, 5, 1, nlu))
        assert report.exit_status() in (0, 1)


# --- through the command lines ----------------------------------------------------------------

def _stripped_intents() -> bytes:
    body = tree()
    body["intents"] = []
    return forge(body)


def _bad_pattern() -> bytes:
    body = tree()
    body["intents"][0][position(ir.Intent, "patterns")] = ["(unclosed"]
    return forge(body)


def _node_field(index: int, value) -> bytes:
    body = tree()
    body["nodes"][0][index] = value
    if index == EXECUTOR:
        body["node_executors"][0] = value
    return forge(body)


CLI_CASES = {
    "text_ordering": (lambda: with_node_condition(leaf("greater_than", F["nlu.text"], 5)),
                      "compares nlu.text (string) with greater_than"),
    "bad_pattern": (_bad_pattern, "IR intent user_wants_to_end has an invalid pattern"),
    "executor_99": (lambda: _node_field(EXECUTOR, 99), "has executor kind 99"),
    "end_99": (lambda: _node_field(END, 99), "IR node greeting has end flag 99"),
    "nested_2000": (lambda: with_node_condition(nested(2000)), "nested too deeply to read"),
    "no_intents": (_stripped_intents, "it needs null (the program declares no intents)"),
}
COMMANDS = {
    "mgi run": lambda path: _mgi("run", path, "--script", "-", stdin="네\n"),
    "mgc inspect": lambda path: run_mgc("inspect", path),
    "mgi fuzz": lambda path: _mgi("fuzz", path, "--examples", "20", "--seed", "1"),
}


def _mgi(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter.cli", *map(str, args)], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, encoding="utf-8",
                          errors="replace", timeout=120)


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hand")
    paths = {}
    for name, (make, _) in CLI_CASES.items():
        paths[name] = folder / f"{name}.ir"
        paths[name].write_bytes(make())
    return paths


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", CLI_CASES)
def test_the_command_lines_exit_2_with_one_line(cli_files, command, case):
    done = COMMANDS[command](cli_files[case])
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(command.split()[0] + ": ") and "internal error" not in lines[0]
    assert CLI_CASES[case][1] in lines[0] and lines[0].endswith(RECOMPILE), lines[0]


def test_the_command_lines_run_a_scenario_without_intents(no_intents):
    done = _mgi("run", no_intents, "--script", "-", stdin="hello\nBob\nbye\n")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    done = _mgi("fuzz", no_intents, "--examples", "20", "--seed", "1")
    assert done.returncode in (0, 1) and "internal error" not in done.stderr, done.stderr
    assert run_mgc("inspect", no_intents).returncode == 0


# --- a hostile user: any change to a valid body ---------------------------------------------

BASE = tree()


def _paths(value, prefix=()) -> list[tuple]:
    """Every place in a body tree a value sits (iterative, any depth)."""
    found, pending = [], [(value, prefix)]
    while pending:
        value, prefix = pending.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) \
            if isinstance(value, list) else ()
        for key, item in items:
            found.append(prefix + (key,))
            pending.append((item, prefix + (key,)))
    return sorted(found, key=repr)


PLACES = _paths(BASE)
SCALARS = [0, 1, 2, 3, -1, 99, ir.STAY, 2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1, 1.5, 2.0, math.nan,
           math.inf, True, False, None, "", "x", "(unclosed", "\n", [], {}, [0], [None],
           {"a": 1}, b"\x00"]
HOSTILE = st.one_of(
    st.sampled_from(SCALARS), st.integers(), st.text(max_size=8),
    st.builds(nested, st.sampled_from([63, 64, 65, 300])),
    st.builds(lambda op, field, value: [ir.OP_LEAF, op, field, value], st.integers(-1, 12),
              st.integers(-1, ir.SLOT_FIELD_BASE + 4), st.sampled_from(SCALARS)),
    st.lists(st.sampled_from(SCALARS), max_size=3),
)


def _mutated(changes) -> dict:
    body = copy.deepcopy(BASE)
    for place, value in changes:
        parent = body
        try:
            for key in place[:-1]:
                parent = parent[key]
            parent[place[-1]] = value
        except (KeyError, IndexError, TypeError):  # an earlier change removed the place
            pass
    return body


def _exercise(path) -> None:
    """Everything a user can do with a loaded file, none of which may raise."""
    runtime = load_program(path, verify=True)
    envelope, program = ir.decode_ir(path.read_bytes(), verify=True)
    inspect_text(inspect_data(envelope, program))
    mermaid(program), dot(program)
    examples = [example for intent in program.intents for example in intent.examples]
    texts = ["네", "", "그만할래", "3", "hello", *examples]
    engine = Engine(runtime, RulesNLU(runtime.program))
    engine.start("s")
    for text in texts[:6]:
        if not engine.session("s").complete:
            engine.turn("s", text)
    scripted = Engine(runtime)
    scripted.start("t", bot_first=False)
    for act in ir.ACTS[:6]:
        if not scripted.session("t").complete:
            scripted.turn("t", "", nlu_override={"dialogue_act": act, "slots": {
                name: 1 for name in runtime.slot_names[:1]}})


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PLACES), HOSTILE), min_size=1, max_size=3))
def test_any_change_to_a_valid_body_is_refused_in_one_line_or_runs(tmp_path_factory, changes):
    path = tmp_path_factory.mktemp("mutant") / "mutant.ir"
    path.write_bytes(forge(_mutated(changes)))
    try:
        _exercise(path)
    except ir.IRError as error:
        assert len(str(error).splitlines()) == 1 and str(error).endswith(RECOMPILE), str(error)
