"""The IR the compiler emits: interned names, opcode conditions, tables, determinism, header."""

from __future__ import annotations

import json
import struct

import msgspec
import pytest

from compiler.driver import check_source
from interpreter import ir
from conftest import ROOT


TINY = {
    "metadata": {"name": "tiny", "language": "en", "version": "2"},
    "intents": {"bye": {"examples": ["bye"]}, "help": {"examples": ["help"]}},
    "slots": {
        "meal": {"policy": "optional", "value_type": "enum", "values": ["ok", "skipped"]},
        "name": {"policy": "required", "value_type": "string", "question": "Your name?"},
    },
    "graph": {
        "entry": "ask",
        "closing_acts": ["affirm", "negate", "affirm"],
        "global_transitions": [
            {"name": "end", "target": "done", "condition": "nlu.intent in ['bye', 'help']"},
            {"target": "ask", "condition": {"field": "nlu.dialogue_act", "operator": "equals", "value": "greet"}},
        ],
        "nodes": [
            {"id": "ask", "description": "ask", "collect_slots": ["name", "meal"],
             "next_nodes": [
                 {"action": "stay", "condition": "system.node_turns < 2 and not slots.meal is empty"},
                 {"target": "done", "condition": "slots.meal == 'skipped' or system.previous_node == 'done'"},
             ],
             "default_next": "done"},
            {"id": "done", "description": "bye", "params": {"skill": "weather", "timeout_ms": 5}},
        ],
    },
}


def compile_dict(doc: dict) -> tuple[ir.Envelope, ir.Program, bytes]:
    result = check_source("tiny.json", json.dumps(doc))
    assert result.errors == 0, result.diagnostics
    data = result.ir_bytes()
    envelope, program = ir.decode_ir(data)
    return envelope, program, data


def test_names_are_interned_and_conditions_are_opcodes():
    _, program, _ = compile_dict(TINY)
    assert [n.id for n in program.nodes] == ["ask", "done"]
    assert [s.name for s in program.slots] == ["meal", "name"]
    slot_meal = ir.SLOT_FIELD_BASE + 0
    ask = program.nodes[0]
    assert ask.executor == ir.EXECUTOR_TASK and program.nodes[1].executor == ir.EXECUTOR_SKILL
    assert ask.collect_slots == [1, 0] and ask.required_slots == [1]
    stay, to_done, default = ask.transitions
    assert stay.target == ir.STAY
    assert stay.condition == [ir.OP_AND, [
        [ir.OP_LEAF, ir.OPERATORS.index("less_than"), ir.FIELD_INDEX["system.node_turns"], 2],
        [ir.OP_NOT, [ir.OP_LEAF, ir.OPERATORS.index("is_empty"), slot_meal, None]],
    ]]
    assert to_done.target == 1
    assert to_done.condition == [ir.OP_OR, [
        [ir.OP_LEAF, ir.OPERATORS.index("equals"), slot_meal, "skipped"],
        [ir.OP_LEAF, ir.OPERATORS.index("equals"), ir.FIELD_INDEX["system.previous_node"], 1],
    ]]
    assert default.target == 1 and default.condition is None
    end, greet = program.global_transitions
    assert end.name == "end" and end.target == 1
    assert end.condition == [ir.OP_LEAF, ir.OPERATORS.index("in"), ir.FIELD_INDEX["nlu.intent"], [0, 1]]
    assert greet.name is None
    assert greet.condition[3] == ir.ACTS.index("greet")


def test_closing_acts_are_normalised_and_deduplicated():
    _, program, _ = compile_dict(TINY)
    assert program.closing_acts == [ir.ACTS.index("affirm"), ir.ACTS.index("deny")]


def test_end_flags_and_params():
    _, program, _ = compile_dict(TINY)
    ask, done = program.nodes
    assert ask.end == ir.END_NONE and done.end == ir.END_INFERRED
    assert done.skill == "weather" and done.timeout_ms == 5 and done.max_fallback_retries == 2


def test_source_map_has_pointer_label_and_display_of_every_transition():
    _, program, _ = compile_dict(TINY)
    entries = [(e.pointer, e.label, e.display) for e in program.source_map]
    assert entries == [
        ("/graph/nodes/0/next_nodes/0", "next_nodes[0]", "system.node_turns < 2 and not slots.meal is empty"),
        ("/graph/nodes/0/next_nodes/1", "next_nodes[1]",
         'slots.meal == "skipped" or system.previous_node == "done"'),
        ("/graph/nodes/0/default_next", "default_next", ""),
        ("/graph/global_transitions/0", "global:end", 'nlu.intent in ["bye", "help"]'),
        ("/graph/global_transitions/1", "global[1]", 'nlu.dialogue_act == "greet"'),
    ]


def test_same_scenario_same_bytes_and_layout_does_not_change_the_source_hash():
    env1, _, bytes1 = compile_dict(TINY)
    _, _, bytes2 = compile_dict(TINY)
    assert bytes1 == bytes2
    pretty = check_source("tiny.json", json.dumps(TINY, indent=4))
    env3, _ = ir.decode_ir(pretty.ir_bytes())
    assert env3.source_sha256 == env1.source_sha256
    changed = json.loads(json.dumps(TINY))
    changed["graph"]["nodes"][1]["description"] = "goodbye"
    env4, _, _ = compile_dict(changed)
    assert env4.source_sha256 != env1.source_sha256


def test_program_round_trips_through_bytes():
    _, program, data = compile_dict(TINY)
    assert ir.decode_ir(ir.encode_ir(program, "x", "y"))[1] == program
    assert data[:4] == ir.MAGIC


@pytest.mark.parametrize("name", ["senimate", "senimate_weather", "clinic_booking"])
def test_reference_scenarios_compile_smaller_than_their_json(name):
    path = ROOT / "scenarios" / f"{name}.json"
    result = check_source(str(path), path.read_text("utf-8"))
    assert result.errors == 0 and result.warnings == 0
    minified = json.dumps(json.loads(path.read_text("utf-8")), ensure_ascii=False, separators=(",", ":"))
    assert len(result.ir_bytes()) < len(minified.encode("utf-8"))


def test_header_checks():
    _, program, data = compile_dict(TINY)
    with pytest.raises(ir.IRError, match="bad magic"):
        ir.decode_ir(b"XXXX" + data[4:])
    newer = struct.pack(">4sH", ir.MAGIC, ir.FORMAT_VERSION + 1) + data[6:]
    with pytest.raises(ir.IRError, match="newer"):
        ir.decode_ir(newer)
    with pytest.raises(ir.IRError, match="truncated"):
        ir.decode_ir(data[: len(data) // 2])
    with pytest.raises(ir.IRError, match="too short"):
        ir.decode_ir(b"MG")
    envelope = msgspec.msgpack.decode(data[6:], type=ir.Envelope)
    body = bytearray(envelope.body)
    body[len(body) // 2] ^= 0xFF
    tampered = msgspec.msgpack.encode(ir.Envelope(envelope.compiler_version, envelope.source_sha256,
                                                  envelope.body_sha256, bytes(body)))
    with pytest.raises(ir.IRError, match="checksum"):
        ir.decode_ir(data[:6] + tampered)


def test_a_version_1_file_is_refused_in_one_line():
    _, _, data = compile_dict(TINY)
    older = struct.pack(">4sH", ir.MAGIC, 1) + data[6:]
    with pytest.raises(ir.IRError) as info:
        ir.decode_ir(older)
    assert str(info.value) == "IR format version 1 is no longer supported; recompile with `mgc compile`"


def test_decoded_nodes_read_like_a_list_of_nodes():
    _, program, data = compile_dict(TINY)
    original = check_source("tiny.json", json.dumps(TINY)).program()
    nodes = program.nodes
    assert isinstance(nodes, ir.NodeList) and isinstance(original.nodes, list)
    assert len(nodes) == 2 and nodes[-1] == nodes[1] == original.nodes[1]
    assert nodes[0:1] == original.nodes[0:1] and nodes[::-1] == original.nodes[::-1]
    assert list(nodes) == original.nodes and nodes == original.nodes and original.nodes == nodes
    assert nodes != original.nodes[:1] and nodes != [original.nodes[1], original.nodes[0]]
    assert nodes.index(original.nodes[1]) == 1 and original.nodes[0] in nodes
    with pytest.raises(IndexError):
        nodes[2]
    with pytest.raises(TypeError):
        nodes[0] = original.nodes[0]  # read-only
    assert ir.node_ids(program) == ["ask", "done"] == ir.node_ids(original)
    assert ir.node_executors(program) == [ir.EXECUTOR_TASK, ir.EXECUTOR_SKILL]
    renamed = msgspec.structs.replace(program, name="renamed")
    assert renamed.nodes is nodes and ir.decode_ir(ir.encode_ir(renamed, "x", "y"))[1] == renamed


def test_decoded_source_map_reads_like_a_list_of_entries():
    _, program, _ = compile_dict(TINY)
    original = check_source("tiny.json", json.dumps(TINY)).program()
    assert isinstance(program.source_map, ir.SourceMap)
    assert ir.source_labels(program) == [e.label for e in original.source_map]
    assert ir.source_labels(original) == ir.source_labels(program)
    assert program.source_map[-1] == original.source_map[-1]
    assert program.source_map == original.source_map and len(program.source_map) == 5


def test_encoding_does_not_depend_on_what_was_read_before():
    _, _, data = compile_dict(TINY)
    envelope, fresh = ir.decode_ir(data)
    assert ir.encode_ir(fresh, envelope.compiler_version, envelope.source_sha256) == data
    envelope, partly = ir.decode_ir(data)
    partly.nodes[1], partly.source_map[0]  # some decoded, some not
    assert ir.encode_ir(partly, envelope.compiler_version, envelope.source_sha256) == data
    built = check_source("tiny.json", json.dumps(TINY)).program()
    assert ir.encode_ir(built, envelope.compiler_version, envelope.source_sha256) == data


def test_a_bad_node_is_found_when_read_or_when_verifying():
    _, program, _ = compile_dict(TINY)
    ask = program.nodes[0]
    bad = msgspec.structs.replace(ask, required_slots=[5])
    data = ir.encode_ir(msgspec.structs.replace(program, nodes=[bad, program.nodes[1]]), "x", "y")
    _, lazy = ir.decode_ir(data)  # the checksum holds and the program-level indices are fine
    assert lazy.nodes[1].id == "done"
    for _attempt in range(2):  # a failed decode is not kept
        with pytest.raises(ir.IRError, match="node ask names slot index 5"):
            lazy.nodes[0]
    with pytest.raises(ir.IRError, match="node ask names slot index 5"):
        ir.decode_ir(data, verify=True)
