"""Skill arguments written as conditional lines (SPEC 14.4, 17.21): checked like reply lines
by the compiler, compiled into the IR (`Node.skill_lines`, format 8), rendered at the turn
from the facts of the skill's node, and sent to the skill as one text."""

from __future__ import annotations

import email
import email.policy
import json

import msgspec

from compiler.driver import check_source
from interpreter import ir
from interpreter.engine import Engine
from interpreter.ir import decode_ir, encode_ir
from interpreter.loader import Runtime
from interpreter.skills.registry import Skill, SkillRegistry, SkillResult

BODY = {"lines": [{"text": "Refill for {slots.name}."},
                  {"text": "Deliver to {slots.address}.", "when": 'slots.method == "delivery"'},
                  {"text": "Pick up at the counter.", "when": 'slots.method == "pickup"'},
                  {"text": "Call {profile.phone} first."}],
        "join": "\n"}


def scenario(body=BODY, skill="record", args=None) -> dict:
    args = args if args is not None else {"body": body, "method": "{slots.method}"}
    return {
        "metadata": {"name": "refill", "language": "en"},
        "profile": {"phone": {"value_type": "string"}},
        "skills": {"record": {"type": "python", "arguments": {
            "body": {"type": "string", "required": True}, "method": {"type": "string"},
            "count": {"type": "integer"}}}} if skill == "record" else {},
        "slots": {"name": {"policy": "required", "value_type": "string"},
                  "method": {"policy": "required", "value_type": "enum",
                             "values": ["pickup", "delivery"],
                             "labels": {"pickup": "Pick-up"}},
                  "address": {"policy": "optional", "value_type": "string"}},
        "graph": {"entry": "ask", "nodes": [
            {"id": "ask", "description": "Ask.", "collect_slots": ["name", "method", "address"],
             "default_next": "send"},
            {"id": "send", "description": "Send.", "responses": {"default": "Sent."},
             "params": {"skill": skill, "skill_args": args}, "default_next": "done"},
            {"id": "done", "description": "Done.", "responses": {"default": "Bye."},
             "terminal": True}]},
    }


class Record(Skill):
    name = "record"

    def __init__(self):
        self.calls: list[dict] = []

    def run(self, args, context):
        self.calls.append(args)
        return SkillResult("ok")


def diagnostics(doc: dict) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in check_source("s.json", json.dumps(doc)).diagnostics]


def program(doc: dict) -> ir.Program:
    result = check_source("s.json", json.dumps(doc))
    assert not [d for d in result.diagnostics if d.severity == "error"], result.diagnostics
    return decode_ir(result.ir_bytes(), verify=True)[1]


def sent(doc: dict, profile=None, **slots) -> dict:
    skill = Record()
    engine = Engine(Runtime(program(doc), "s"), skills=SkillRegistry([skill]))
    engine.start("s", profile=profile or {})
    engine.turn("s", "x", {"dialogue_act": "inform", "slots": slots})
    assert len(skill.calls) == 1
    return skill.calls[0]


def test_the_lines_whose_when_holds_are_sent_joined():
    args = sent(scenario(), {"phone": "555-0100"}, name="Ann", method="delivery",
                address="1 Main St")
    assert args["body"] == "Refill for Ann.\nDeliver to 1 Main St.\nCall 555-0100 first."
    assert args["method"] == "delivery"  # the raw value: labels are for speech (17.24)
    pickup = sent(scenario(), name="Bo", method="pickup")
    # no phone in the profile: that sentence is left out, as in a reply
    assert pickup["body"] == "Refill for Bo.\nPick up at the counter."


def test_a_when_may_read_the_turn_and_the_system_fields():
    body = {"lines": [{"text": "Hello."},
                      {"text": "Told at once.", "when": 'system.previous_node == "ask"'},
                      {"text": "Informed.", "when": 'nlu.dialogue_act == "inform"'},
                      {"text": "Never.", "when": 'nlu.dialogue_act == "deny"'}]}
    assert sent(scenario(body), name="A", method="pickup")["body"] == \
        "Hello. Told at once. Informed."


def test_the_ir_holds_compiled_lines_and_round_trips():
    made = program(scenario())
    send = made.nodes[1]
    assert "body" not in send.skill_args and send.skill_args["method"] == "{slots.method}"
    lines = send.skill_lines["body"]
    assert lines.join == "\n" and [line.texts for line in lines.lines][0] == ["Refill for {slots.name}."]
    assert lines.lines[0].when is None and lines.lines[1].when[0] == ir.OP_LEAF
    again = decode_ir(encode_ir(made, "t", "0" * 64), verify=True)[1]
    assert again.nodes[1] == send


def test_a_hand_made_ir_with_bad_argument_lines_is_refused():
    made = program(scenario())
    send = made.nodes[1]
    bad_line = ir.Line(["a", "b"], None)
    for broken in ({"body": ir.Lines([bad_line])}, {"body": ir.Lines([])},
                   {"body": ir.Lines([ir.Line(["a"], [ir.OP_LEAF, 0, 9999, "x"])])}):
        node = msgspec.structs.replace(send, skill_lines=broken)
        data = encode_ir(msgspec.structs.replace(made, nodes=[made.nodes[0], node,
                                                                  made.nodes[2]]), "t", "0" * 64)
        try:
            decode_ir(data, verify=True)
        except ir.IRError as error:
            assert 'skill argument "body" lines' in str(error)
        else:
            raise AssertionError(f"accepted {broken}")


def test_each_line_is_checked_where_it_is_written():
    at = "/graph/nodes/1/params/skill_args/body/lines"
    typo = {"lines": [{"text": "To {slot.address}."}]}
    assert diagnostics(scenario(typo)) == [("E112", f"{at}/0/text")]
    bad_when = {"lines": [{"text": "Hi.", "when": 'slots.methd == "delivery"'}]}
    assert diagnostics(scenario(bad_when)) == [("E201", f"{at}/0/when")]
    wrong_type = {"lines": [{"text": "Hi.", "when": "slots.method > 3"}]}
    assert [code for code, _ in diagnostics(scenario(wrong_type))][0].startswith("E2")
    variants = {"lines": [{"text": ["a", "b"]}]}
    assert diagnostics(scenario(variants)) == [("E107", f"{at}/0/text")]
    unknown = {"lines": [{"txt": "a"}]}
    assert ("E010", f"{at}/0/txt") in diagnostics(scenario(unknown))
    status = {"lines": [{"text": "a", "when": 'skill.status == "ok"'}]}
    assert diagnostics(scenario(status)) == [("E107", f"{at}/0/when")]
    join = {"lines": [{"text": "a"}], "join": ","}
    assert [code for code, _ in diagnostics(scenario(join))] == ["E012"]


def test_lines_for_an_argument_that_is_no_text_is_E113():
    args = {"body": "b", "count": {"lines": [{"text": "3"}]}}
    assert diagnostics(scenario(args=args)) == [
        ("E113", "/graph/nodes/1/params/skill_args/count")]


def test_the_email_skill_sends_the_rendered_body(tmp_path, monkeypatch):
    monkeypatch.setenv("MAGO_OUTBOX", str(tmp_path))
    monkeypatch.delenv("MAGO_SMTP_URL", raising=False)
    args = {"to": "ann@example.com", "from": "bot@example.com", "subject": "Refill",
            "body": BODY}
    engine = Engine(Runtime(program(scenario(skill="email", args=args)), "s"))
    engine.start("s", profile={"phone": "555-0100"})
    engine.turn("s", "x", {"dialogue_act": "inform",
                           "slots": {"name": "Ann", "method": "pickup"}})
    [eml] = list(tmp_path.glob("*.eml"))
    message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
    assert message.get_content().replace("\r\n", "\n").strip() == \
        "Refill for Ann.\nPick up at the counter.\nCall 555-0100 first."


def test_a_webhook_is_posted_the_rendered_argument():
    from interpreter.cli.plugins import skill_registry
    from support.webhook_receiver import Receiver

    with Receiver() as receiver:
        doc = scenario(skill="refill_hook", args={"body": BODY, "method": "{slots.method}"})
        doc["skills"] = {"refill_hook": {
            "type": "webhook", "url": receiver.base + "/ok", "timeout_seconds": 5,
            "arguments": {"body": {"type": "string"}, "method": {"type": "string"}}}}
        runtime = Runtime(program(doc), "s")
        engine = Engine(runtime, skills=skill_registry(runtime, lambda line: None, "live"))
        engine.start("s", profile={})
        engine.turn("s", "x", {"dialogue_act": "inform", "slots": {
            "name": "Cy", "method": "delivery", "address": "2 Elm St"}})
        [request] = receiver.requests
    assert request["body"]["arguments"] == {
        "method": "delivery", "body": "Refill for Cy.\nDeliver to 2 Elm St."}


def test_mgc_inspect_and_mgc_schema_show_the_shape(tmp_path):
    import subprocess
    import sys

    source = tmp_path / "s.json"
    source.write_text(json.dumps(scenario()), encoding="utf-8")
    run = [sys.executable, "-m", "compiler"]
    subprocess.run([*run, "compile", str(source), "-o", str(tmp_path / "s.ir")], check=True,
                   capture_output=True, timeout=120)
    shown = subprocess.run([*run, "inspect", str(tmp_path / "s.ir")], check=True,
                           capture_output=True, text=True, timeout=120).stdout
    assert "sends body line 2 (conditional): Deliver to {slots.address}." in shown
    assert "sends body line 1: Refill for {slots.name}." in shown
    data = json.loads(subprocess.run([*run, "inspect", "--format", "json",
                                      str(tmp_path / "s.ir")], check=True, capture_output=True,
                                     text=True, timeout=120).stdout)
    send = next(node for node in data["nodes"] if node["id"] == "send")
    assert send["skill_lines"]["body"]["join"] == "\n"
    assert [line["conditional"] for line in send["skill_lines"]["body"]["lines"]] == \
        [False, True, True, False]
    schema = json.loads(subprocess.run([*run, "schema"], check=True, capture_output=True,
                                       text=True, timeout=120).stdout)
    args = schema["$defs"]["Params"]["properties"]["skill_args"]
    assert {"$ref": "#/$defs/LinesDef"} in args["additionalProperties"]["anyOf"]


def test_an_argument_none_of_whose_lines_holds_is_left_out():
    address = {"lines": [{"text": "{slots.address}", "when": 'slots.method == "delivery"'}]}
    args = {"body": "b", "method": "{slots.method}", "address": address}
    doc = scenario(args=args)
    doc["skills"]["record"]["arguments"]["address"] = {"type": "string"}
    assert sent(doc, name="A", method="pickup") == {"body": "b", "method": "pickup"}
    assert sent(doc, name="A", method="delivery", address="3 Oak Rd")["address"] == "3 Oak Rd"
    # a line that holds but whose placeholder has no value sends empty text
    assert sent(doc, name="A", method="delivery")["address"] == ""


class FailingFirst(Record):
    """The pharmacy's submission: refused the first time (so the retry branch is taken)."""

    name = "submit_refill"

    def run(self, args, context):
        self.calls.append(args)
        return SkillResult("failed" if len(self.calls) == 1 and self.fail else "ok",
                           {"reference": "RF-1"})


def pharmacy_calls(says: list[str], fail: bool = False) -> list[dict]:
    """The submit_refill arguments of the pharmacy scenario talked through with the rules
    NLU (the user lines of its transcripts), its webhook stood in for by a recorder."""
    from conftest import ROOT
    from interpreter.understanding.rules import RulesNLU

    result = check_source("p.json", (ROOT / "scenarios" / "pharmacy_refill.json").read_text())
    assert not result.errors
    runtime = Runtime(decode_ir(result.ir_bytes())[1], "pharmacy_refill")
    skill = FailingFirst()
    skill.fail = fail
    engine = Engine(runtime, RulesNLU(runtime.program), skills=SkillRegistry([skill]))
    engine.start("s")
    for text in says:
        engine.turn("s", text)
    return skill.calls


PHARMACY = ["It's March 4th, 1962", "rx 765 4321", "the northgate one"]


def test_the_pharmacy_leaves_the_address_out_of_a_pickup_and_notes_each_branch():
    [pickup] = pharmacy_calls([*PHARMACY, "I will pick it up", "yes"])
    assert "address" not in pickup
    assert pickup["note"] == ("Refill RX7654321 for the patient born 1962-03-04.\n"
                              "Hold for pickup (branch: northgate).")
    [delivery] = pharmacy_calls([*PHARMACY, "deliver it please", "12 Elm Street", "yes"])
    assert delivery["address"] == "12 Elm Street"
    assert delivery["note"].splitlines()[1] == "Deliver to 12 Elm Street."
    first, again = pharmacy_calls([*PHARMACY, "I will pick it up", "yes", "try again"],
                                  fail=True)
    assert "Sent again" not in first["note"]
    assert again["note"].splitlines()[-1] == "Sent again (retry 1): an earlier try failed."
