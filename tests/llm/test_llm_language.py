"""The LLM adapters and the designer's language (SPEC 14.3, 14.4, 17.24): the NLU prompt
names each enum member with its label, the NLG prompt gives the display names of the enum
values known, and an opening written as conditional lines is said as is (SPEC 6.1)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from compiler.driver import check_source
from interpreter.ir import decode_ir
from interpreter.llm.nlg import _declares_opening
from interpreter.llm.prompts import _label_parts, nlu_head
from interpreter.loader import Runtime
from conftest import ROOT



def pharmacy() -> Runtime:
    text = (ROOT / "scenarios" / "pharmacy_refill.json").read_text("utf-8")
    result = check_source("pharmacy_refill.json", text)
    assert not result.errors
    return Runtime(decode_ir(result.ir_bytes())[1], "pharmacy_refill")


def test_the_nlu_prompt_lists_each_member_with_the_words_said_for_it():
    runtime = pharmacy()
    node = runtime.program.nodes[runtime.node_index["ask_branch"]]
    head = nlu_head(runtime.program, node)
    assert 'northgate (said "Northgate branch")' in head
    assert 'delivery (said "home delivery")' in head


def test_the_nlg_prompt_says_the_known_values_by_their_labels():
    runtime = pharmacy()
    parts = _label_parts(runtime, SimpleNamespace(slots={"branch": "northgate",
                                                         "method": "pickup", "dob": "1962-03-04"}))
    assert [p.text for p in parts] == [
        'Say these values by their names: northgate as "Northgate branch", pickup as "pickup".']
    assert _label_parts(runtime, SimpleNamespace(slots={"dob": "1962-03-04"})) == []


def test_an_opening_of_conditional_lines_is_declared():
    doc = json.loads((ROOT / "scenarios" / "pharmacy_refill.json").read_text("utf-8"))
    entry = doc["graph"]["nodes"][0]
    entry["responses"]["default"] = {"lines": [{"text": "Welcome."},
                                               {"text": "Again.", "when": "slots.dob is not empty"}]}
    result = check_source("p.json", json.dumps(doc))
    assert not result.errors
    runtime = Runtime(decode_ir(result.ir_bytes())[1], "p")
    assert _declares_opening(runtime.nodes[runtime.node_index["ask_dob"]])
    assert not _declares_opening(runtime.nodes[runtime.node_index["ask_rx"]])
