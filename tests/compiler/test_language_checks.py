"""The designer's typo cases of issue 26 (SPEC 14.8), as a designer met them: a placeholder
root misspelled, a placeholder in a slot question, a hub that only stays, a not_understood
that is never said, an unknown skill ("sms") and argument. Each is caught by `mgc check` at
its place."""

from __future__ import annotations

import json

from compiler.driver import check_source


def scenario(**changes) -> dict:
    doc = {
        "metadata": {"name": "pharmacy", "language": "en"},
        "slots": {"pharmacy_branch": {"policy": "required", "value_type": "string",
                                      "question": "Which branch, {slots.pharmacy_branch}?"}},
        "graph": {"entry": "ask", "nodes": [
            {"id": "ask", "description": "Ask the branch.", "collect_slots": ["pharmacy_branch"],
             "default_next": "done"},
            {"id": "done", "description": "Confirm.",
             "responses": {"default": "Done! Sent to {slots.pharmacy_branch}."}}]},
    }
    for node in doc["graph"]["nodes"]:
        node.update(changes.get(node["id"], {}))
    return doc


def check(doc: dict):
    text = json.dumps(doc, indent=2)
    return text, check_source("pharmacy.json", text).diagnostics


def test_the_slot_typo_is_e112_at_its_line_and_column():
    doc = scenario(done={"responses": {"default": "Done! Sent to {slot.pharmacy_branch}."}})
    text, found = check(doc)
    assert [d.code for d in found] == ["E112"]
    (d,) = found
    line = text.splitlines()[d.line - 1]
    assert line[d.column - 1:].startswith("{slot.pharmacy_branch}")
    assert "{slots.pharmacy_branch}" in d.hint


def test_a_valid_question_placeholder_compiles_and_a_typo_in_one_is_e112():
    assert check(scenario())[1] == []
    doc = scenario()
    doc["slots"]["pharmacy_branch"]["question"] = "Which branch, {slot.pharmacy_branch}?"
    assert [(d.code, d.path) for d in check(doc)[1]] == [
        ("E112", "/slots/pharmacy_branch/question")]


def test_doubled_braces_compile_and_a_lone_brace_does_not():
    ok = scenario(done={"responses": {"default": "Use {{braces}} like this."}})
    assert check(ok)[1] == []
    bad = scenario(done={"responses": {"default": "Use {braces like this."}})
    assert [d.code for d in check(bad)[1]] == ["E112"]


def test_the_unknown_sms_skill_and_an_unknown_argument_are_e113():
    sms = scenario(done={"params": {"skill": "sms", "skill_args": {"to": "x"}}})
    found = check(sms)[1]
    assert [(d.code, d.path) for d in found] == [("E113", "/graph/nodes/1/params/skill")]
    mail = {"to": "a@b.co", "from": "c@d.co", "subject": "s", "body": "b", "bcc": "e@f.co"}
    extra = scenario(done={"params": {"skill": "email", "skill_args": mail}})
    assert [(d.code, d.path) for d in check(extra)[1]] == [
        ("E113", "/graph/nodes/1/params/skill_args/bcc")]


def test_the_stay_only_hub_is_w407():
    doc = scenario(done={"next_nodes": [{"action": "stay",
                                         "condition": 'nlu.dialogue_act == "question"'}]})
    found = check(doc)[1]
    assert [(d.code, d.path) for d in found] == [("W407", "/graph/nodes/1")]
    doc["graph"]["nodes"][1]["terminal"] = True  # what the hint suggests
    assert check(doc)[1] == []


def test_a_not_understood_never_said_is_w408():
    doc = scenario(ask={"params": {"max_fallback_retries": 0}, "collect_slots": [],
                        "responses": {"not_understood": "Sorry?"}})
    doc["graph"]["nodes"][1]["collect_slots"] = ["pharmacy_branch"]
    assert [d.code for d in check(doc)[1]] == ["W408"]
    doc["graph"]["nodes"][0]["params"] = {"max_fallback_retries": 1}
    assert check(doc)[1] == []
