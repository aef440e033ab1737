"""load_program and Runtime: one-line IRErrors for every unusable file, compiled conditions."""

from __future__ import annotations

import os

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from interpreter import ir
from interpreter.loader import Runtime, compile_condition, condition_fields, load_program

from irkit import ProgramBuilder, senimate_like
from conftest import examples

N = ir.SLOT_FIELD_BASE + 2  # field count with two slots
SLOT_A, SLOT_B = ir.SLOT_FIELD_BASE, ir.SLOT_FIELD_BASE + 1


def op(name):
    return ir.OPERATORS.index(name)


def write_ir(tmp_path, program, name="x.ir"):
    path = tmp_path / name
    path.write_bytes(ir.encode_ir(program, "test", "0" * 64))
    return path


def written(path, data):
    path.write_bytes(data)
    return path


def one_line_ir_error(path):
    with pytest.raises(ir.IRError) as info:
        load_program(path)
    message = str(info.value)
    assert "\n" not in message and message
    return message


def test_load_a_valid_file(tmp_path):
    runtime = load_program(write_ir(tmp_path, senimate_like().build()))
    assert isinstance(runtime, Runtime)
    assert runtime.ir_hash == "0" * 64 and runtime.compiler_version == "test"
    assert runtime.nodes[runtime.node_index["closure"]].is_end


@pytest.mark.parametrize("make,fragment", [
    (lambda p: p / "missing.ir", "No such file"),
    (lambda p: p, "Is a directory"),
    (lambda p: written(p / "junk.ir", b"hello world"), "bad magic"),
    (lambda p: written(p / "short.ir", b"MG"), "too short"),
    (lambda p: 11, "cannot read IR file 11"),
])
def test_unreadable_files_are_one_line_errors(tmp_path, make, fragment):
    assert fragment in one_line_ir_error(make(tmp_path))


def test_truncated_file(tmp_path):
    path = write_ir(tmp_path, senimate_like().build())
    path.write_bytes(path.read_bytes()[:-40])
    assert "truncated or corrupted" in one_line_ir_error(path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_permission_denied(tmp_path):
    path = write_ir(tmp_path, senimate_like().build())
    path.chmod(0)
    assert "Permission denied" in one_line_ir_error(path)


def test_malformed_condition_and_bad_index_are_ir_errors(tmp_path):
    program = senimate_like().build()
    node = program.nodes[0]
    bad_row = ir.Transition(node.transitions[0].target, [99, 1, 2], node.transitions[0].source)
    nodes = [msgspec.structs.replace(node, transitions=[bad_row]), *program.nodes[1:]]
    broken = msgspec.structs.replace(program, nodes=nodes)
    assert "malformed condition" in one_line_ir_error(write_ir(tmp_path, broken, "a.ir"))
    bad_target = ir.Transition(77, None, node.transitions[0].source)
    nodes = [msgspec.structs.replace(node, transitions=[bad_target]), *program.nodes[1:]]
    broken = msgspec.structs.replace(program, nodes=nodes)
    assert "targets index 77" in one_line_ir_error(write_ir(tmp_path, broken, "b.ir"))
    bad_field = [ir.OP_LEAF, 0, 500, 1]
    nodes = [msgspec.structs.replace(node, transitions=[
        ir.Transition(1, bad_field, node.transitions[0].source)]), *program.nodes[1:]]
    broken = msgspec.structs.replace(program, nodes=nodes)
    assert "unknown field index 500" in one_line_ir_error(write_ir(tmp_path, broken, "c.ir"))


VALID_IR = ir.encode_ir(senimate_like().build(), "test", "0" * 64)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(VALID_IR) - 1), st.integers(0, 255)),
                min_size=1, max_size=4), st.integers(6, len(VALID_IR)))
def test_damaged_files_never_raise_anything_but_ir_error(tmp_path_factory, flips, cut):
    data = bytearray(VALID_IR[:cut])
    for index, value in flips:
        if index < len(data):
            data[index] = value
    path = tmp_path_factory.mktemp("ir") / "damaged.ir"
    path.write_bytes(bytes(data))
    try:
        load_program(path)
    except ir.IRError as error:
        assert "\n" not in str(error)


# --- compiled conditions -----------------------------------------------------------------------


def facts(a=None, b=None, **fixed):
    values = [None] * N
    for name, value in fixed.items():
        values[ir.FIELD_INDEX[name.replace("__", ".")]] = value
    values[SLOT_A], values[SLOT_B] = a, b
    return values


@pytest.mark.parametrize("condition,kwargs,expected", [
    ([ir.OP_LEAF, op("equals"), SLOT_A, "x"], {"a": "x"}, True),
    ([ir.OP_LEAF, op("equals"), SLOT_A, None], {}, True),
    ([ir.OP_LEAF, op("not_equals"), SLOT_A, "x"], {}, True),  # null != value
    ([ir.OP_LEAF, op("not_equals"), SLOT_A, None], {"a": "x"}, True),
    ([ir.OP_LEAF, op("greater_than"), SLOT_A, 3], {}, False),  # null never orders
    ([ir.OP_LEAF, op("less_than"), SLOT_A, 3], {}, False),
    ([ir.OP_LEAF, op("less_or_equal"), SLOT_A, 3], {"a": 3}, True),
    ([ir.OP_LEAF, op("greater_or_equal"), SLOT_A, 3.5], {"a": 3}, False),
    ([ir.OP_LEAF, op("in"), SLOT_A, ["x", "y"]], {"a": "y"}, True),
    ([ir.OP_LEAF, op("in"), SLOT_A, ["x", "y"]], {}, False),
    ([ir.OP_LEAF, op("not_in"), SLOT_A, ["x"]], {"a": "z"}, True),
    ([ir.OP_LEAF, op("is_empty"), SLOT_A, None], {"a": ""}, True),
    ([ir.OP_LEAF, op("is_empty"), SLOT_A, None], {"a": 0}, False),
    ([ir.OP_LEAF, op("is_not_empty"), SLOT_A, None], {"a": False}, True),
    ([ir.OP_LEAF, op("contains"), SLOT_A, "무릎"], {"a": "요즘 무릎이 아파"}, True),
    ([ir.OP_LEAF, op("contains"), SLOT_A, "무릎"], {}, False),
    ([ir.OP_AND, [[ir.OP_LEAF, op("equals"), SLOT_A, 1], [ir.OP_LEAF, op("equals"), SLOT_B, 2],
                  [ir.OP_LEAF, op("equals"), SLOT_B, 2]]], {"a": 1, "b": 2}, True),
    ([ir.OP_OR, [[ir.OP_LEAF, op("equals"), SLOT_A, 1], [ir.OP_LEAF, op("equals"), SLOT_B, 2],
                 [ir.OP_LEAF, op("equals"), SLOT_B, 3]]], {"b": 3}, True),
    ([ir.OP_NOT, [ir.OP_LEAF, op("equals"), SLOT_A, 1]], {"a": 1}, False),
    ([ir.OP_LEAF, op("equals"), ir.FIELD_INDEX["nlu.dialogue_act"], 2],
     {"nlu__dialogue_act": 2}, True),
])
def test_compiled_condition(condition, kwargs, expected):
    assert compile_condition(condition, N)(facts(**kwargs)) is expected


def test_absent_condition_is_always():
    assert compile_condition(None, N) is None


@pytest.mark.parametrize("bad", [[], [9], [ir.OP_AND, []], [ir.OP_LEAF, 99, SLOT_A, 1],
                                 [ir.OP_LEAF, op("in"), SLOT_A, "x"], "slots.a == 1"])
def test_malformed_conditions(bad):
    with pytest.raises(ir.IRError):
        compile_condition(bad, N)


def test_condition_fields_in_order_without_duplicates():
    c = [ir.OP_OR, [[ir.OP_LEAF, 0, SLOT_B, 1],
                    [ir.OP_NOT, [ir.OP_AND, [[ir.OP_LEAF, 0, 3, "x"], [ir.OP_LEAF, 0, SLOT_B, 2]]]]]]
    assert condition_fields(c) == (SLOT_B, 3)


def test_runtime_tables():
    rt = senimate_like().runtime()
    closure = rt.node_named("closure")
    assert closure.is_end and closure.turn_limit == 2
    assert [r.reason for r in closure.routes] == ["next_nodes[0]", "next_nodes[1]",
                                                  "next_nodes[2]"]
    greeting = rt.node_named("greeting")
    assert [r.reason for r in greeting.routes] == ["stay:next_nodes[0]", "default_next"]
    assert [g.reason for g in rt.globals] == ["global:user_wants_to_end", "global:silent_close"]
    assert rt.node_named("nope") is None and rt.language == "ko"


def test_null_is_removed_from_closing_acts():
    b = ProgramBuilder(closing_acts=["affirm", "null"])
    b.node("a")
    assert b.runtime().closing_acts == frozenset({ir.ACTS.index("affirm")})
