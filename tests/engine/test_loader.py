"""load_program and Runtime: one-line IRErrors for every unusable file, compiled conditions."""

from __future__ import annotations

import os

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from interpreter import ir
from interpreter.loader import NodeTable, Runtime, compile_condition, condition_fields, \
    load_program

from support.irkit import ProgramBuilder, body_tree, forge, senimate_like
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


def one_line_ir_error(path, verify=False):
    with pytest.raises(ir.IRError) as info:
        load_program(path, verify=verify)
    message = str(info.value)
    assert "\n" not in message and message
    return message


def test_load_a_valid_file(tmp_path):
    runtime = load_program(write_ir(tmp_path, senimate_like().build()))
    assert isinstance(runtime, Runtime)
    assert runtime.ir_hash == "0" * 64 and runtime.compiler_version == "test"
    assert runtime.nodes[runtime.node_index["closure"]].is_end


@pytest.mark.parametrize("make,fragment", [
    (lambda p: p / "missing.ir", "no such file"),
    (lambda p: p, "a folder, not a regular file"),
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


def with_first_node_rows(program, rows, **changes):
    """`program` with its first node's transitions replaced (a hand-made file's node)."""
    node = msgspec.structs.replace(program.nodes[0], transitions=rows, **changes)
    return msgspec.structs.replace(program, nodes=[node, *program.nodes[1:]])


def bad_first_nodes():
    program = senimate_like().build()
    row = program.nodes[0].transitions[0]
    return program, [
        (with_first_node_rows(program, [ir.Transition(row.target, [99, 1, 2], row.source)]),
         "malformed condition"),
        (with_first_node_rows(program, [ir.Transition(77, None, row.source)]),
         "targets index 77"),
        (with_first_node_rows(program, [ir.Transition(1, [ir.OP_LEAF, 0, 500, 1], row.source)]),
         "unknown field index 500"),
        (with_first_node_rows(program, [ir.Transition(1, None, 999)]), "no source entry"),
        (with_first_node_rows(program, [ir.Transition(1, [ir.OP_AND, 5], row.source)]),
         "malformed condition (and over 5"),
        (with_first_node_rows(program, [row], collect_slots=[7]), "slot index 7"),
    ]


@pytest.mark.parametrize("case", range(len(bad_first_nodes()[1])))
def test_a_bad_node_is_an_ir_error_on_first_use_and_on_the_eager_check(tmp_path, case):
    _, cases = bad_first_nodes()
    broken, fragment = cases[case]
    path = write_ir(tmp_path, broken)
    assert fragment in one_line_ir_error(path, verify=True)
    runtime = load_program(path)  # lazy: the node is not read yet
    first = runtime.nodes[0]
    assert first.index == 0 and first.id == runtime.program.nodes.ids[0]  # no build needed
    with pytest.raises(AttributeError):
        first.no_such_slot  # not a slot: no build either
    assert runtime.nodes[1].routes is not None  # the other nodes are fine
    for read in (lambda: first.routes, lambda: first.is_end, runtime.check_all):
        with pytest.raises(ir.IRError) as info:
            read()  # every time: a failed build leaves the table unbuilt
        assert fragment in str(info.value) and "\n" not in str(info.value)


def forged_body(program, **changes):
    """IR bytes whose body is `program`'s with `changes`, under a recomputed checksum: the
    only way a node can be inconsistent with its directory (what a hand-made file could do)."""
    return forge({**body_tree(program), **changes})


def test_a_node_unlike_its_directory_entry_or_blob_is_an_ir_error_on_first_use(tmp_path):
    program = senimate_like().build()
    ids, executors = ir.node_ids(program), ir.node_executors(program)
    junk = msgspec.Raw(msgspec.msgpack.encode(["not", "a", "node"]))
    blobs = [msgspec.Raw(msgspec.msgpack.encode(n)) for n in program.nodes]
    for changes, fragment in [
        ({"node_ids": ["renamed", *ids[1:]]}, "does not match the node directory"),
        ({"node_executors": [(executors[0] + 1) % 3, *executors[1:]]}, "node directory"),
        ({"nodes": [junk, *blobs[1:]]}, "does not match this mgi's format"),
    ]:
        path = written(tmp_path / "forged.ir", forged_body(program, **changes))
        assert fragment in one_line_ir_error(path, verify=True)
        runtime = load_program(path)
        assert runtime.nodes[1].routes is not None
        with pytest.raises(ir.IRError, match=fragment):
            runtime.nodes[0].routes


def test_bad_source_texts_are_an_ir_error_when_read(tmp_path):
    program = senimate_like().build()
    short = msgspec.Raw(msgspec.msgpack.encode([["/p", "d"]]))
    path = written(tmp_path / "forged.ir", forged_body(program, source_texts=short))
    assert "source map" in one_line_ir_error(path, verify=True)
    runtime = load_program(path)
    assert runtime.node_named("closure").routes  # labels are enough to route
    with pytest.raises(ir.IRError, match="source map"):
        runtime.program.source_map[0]


@pytest.mark.parametrize("changes,fragment", [
    ({"node_ids": ["only_one"]}, "node directory does not match"),
    ({"node_ids": ["same"] * 6}, "repeats a node id"),
])
def test_a_bad_node_directory_is_an_ir_error_at_load(tmp_path, changes, fragment):
    program = senimate_like().build()
    assert len(program.nodes) == 6
    assert fragment in one_line_ir_error(written(tmp_path / "f.ir", forged_body(program, **changes)))


@pytest.mark.parametrize("change,fragment", [
    ({"entry": 999}, "entry index 999"),
    ({"closing_acts": [42]}, "closing act 42"),
])
def test_program_level_indices_are_checked_at_load(tmp_path, change, fragment):
    broken = msgspec.structs.replace(senimate_like().build(), **change)
    assert fragment in one_line_ir_error(write_ir(tmp_path, broken))


def test_a_global_transition_with_a_bad_target_is_an_error_at_load(tmp_path):
    program = senimate_like().build()
    first = program.global_transitions[0]
    bad = msgspec.structs.replace(first, target=ir.STAY)  # a global never stays
    broken = msgspec.structs.replace(program, global_transitions=[bad])
    assert f"targets index {ir.STAY}" in one_line_ir_error(write_ir(tmp_path, broken))


def test_a_lazily_built_table_equals_the_eager_one(tmp_path):
    program = senimate_like().build()
    path = write_ir(tmp_path, program)
    lazy, eager, in_memory = load_program(path), load_program(path, verify=True), Runtime(program)
    assert all(type(t) is not NodeTable and isinstance(t, NodeTable) for t in lazy.nodes)
    assert all(type(t) is NodeTable for t in eager.nodes)  # plain slot reads on the turn path
    assert not hasattr(NodeTable, "__getattr__")
    order = list(range(len(program.nodes)))[::-1]  # any order of first use
    assert [table_facts(lazy.nodes[i]) for i in order] == [table_facts(eager.nodes[i])
                                                           for i in order]
    assert all(type(t) is NodeTable for t in lazy.nodes)
    with pytest.raises(AttributeError):
        lazy.nodes[0].no_such_slot
    assert [table_facts(t) for t in eager.nodes] == [table_facts(t) for t in in_memory.nodes]
    assert lazy.node_index == in_memory.node_index
    assert [(g.target, g.source, g.reason) for g in lazy.globals] == [
        (g.target, g.source, g.reason) for g in in_memory.globals]


def table_facts(table):
    slots = [name for name in NodeTable.__slots__ if name not in ("routes", "_builder")]
    routes = [(r.target, r.source, r.reason, r.tier, r.test is None) for r in table.routes]
    return [getattr(table, name) for name in slots] + [routes]


def test_source_fields_are_the_same_read_before_or_after_the_tables_are_built(tmp_path):
    program = senimate_like().build()
    expected = [()] * len(program.source_map)
    for row in [*(t for n in program.nodes for t in n.transitions), *program.global_transitions]:
        expected[row.source] = condition_fields(row.condition)
    cold = load_program(write_ir(tmp_path, program))  # no table built: one walk of every node
    assert [cold.source_fields[s] for s in range(len(expected))] == expected
    warm = load_program(write_ir(tmp_path, program, "warm.ir"))
    for table in warm.nodes:
        table.build()
    assert [warm.source_fields[s] for s in range(len(expected))] == expected
    with pytest.raises(IndexError):
        warm.source_fields[len(expected)]


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
        load_program(path, verify=True)
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
