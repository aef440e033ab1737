"""Webhook skills (SPEC 15) against a real receiver on a loopback port, over HTTP and HTTPS.

A compiled scenario with one webhook node runs through the engine: a success puts the
declared result in `skill.data` of the next response (the undeclared field dropped); a 4xx
fails at once with the status; a 5xx, then success, is retried with the same
Idempotency-Key; 429 honours Retry-After; a receiver that hangs ends the turn at the budget
with `timeout`; a 10 MB answer is refused with memory bounded; a redirect is not followed;
a wrong result type fails. A crash between the call and the save, then the retried turn:
the receiver sees the same key, and a retry that carries the completed run sends nothing.
`${NAME}` forms are resolved at load and never in the IR; a missing one is one line.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import tracemalloc

import pytest

from compiler.driver import check_source
from conftest import ROOT, self_signed_certificate
from interpreter.cli.plugins import InputError, skill_registry
from interpreter.engine import Engine
from interpreter.loader import load_program_bytes
from interpreter.skills.webhook import (OFF_ERROR, WebhookConfigError, WebhookStandIn,
                                        private_address, typed_result, webhook_skills)
from interpreter.stores.sessions import MemorySessionStore
from support.webhook_receiver import HUGE_BYTES, Receiver


def scenario(url: str, timeout_seconds: float = 5, retries: int = 2, headers=None) -> dict:
    hook = {"type": "webhook", "url": url, "timeout_seconds": timeout_seconds,
            "retries": retries, "arguments": {"order_id": {"type": "string", "required": True}},
            "result": {"status": {"type": "string"}, "eta_days": {"type": "integer"}}}
    if headers:
        hook["headers"] = headers
    return {
        "metadata": {"name": "orders", "language": "en"},
        "skills": {"order_status": hook},
        "graph": {"entry": "welcome", "nodes": [
            {"id": "welcome", "description": "Greet.", "responses": {"default": "Hello."},
             "default_next": "lookup"},
            {"id": "lookup", "description": "Look the order up.",
             "params": {"skill": "order_status", "skill_args": {"order_id": "A-7"},
                        "fallback": "Sorry, the order system did not answer."},
             "responses": {"default": "Your order is {skill.data.status}, "
                                      "{skill.data.eta_days} days to go."},
             "default_next": "done"},
            {"id": "done", "description": "Bye.", "terminal": True,
             "responses": {"default": "Bye."}}]}}


def compiled(data: dict):
    result = check_source("orders.json", json.dumps(data))
    assert not result.errors, [d.message for d in result.diagnostics]
    return result.ir_bytes(), load_program_bytes(result.ir_bytes())


def engine_for(url: str, store=None, **options) -> Engine:
    _, runtime = compiled(scenario(url, **options))
    skills = skill_registry(runtime, lambda line: None, "live")
    return Engine(runtime, store=store if store is not None else MemorySessionStore(), skills=skills)


def lookup_turn(engine: Engine, session: str = "s"):
    engine.start(session)
    return engine.turn(session, "where is my order", {"dialogue_act": "inform"})


@pytest.fixture
def receiver():
    with Receiver() as running:
        yield running


def test_success_puts_the_declared_result_in_the_next_response(receiver):
    engine = engine_for(receiver.base + "/ok")
    result = lookup_turn(engine)
    assert result.response == "Your order is shipped, 2 days to go."
    state = engine.session("s")
    assert state.skill_status == "ok"
    assert state.skill_data == {"status": "shipped", "eta_days": 2}  # internal_note dropped
    [request] = receiver.requests
    assert request["key"] == state.actions[-1].action_id == "s:1:lookup"
    assert request["body"] == {"action_id": "s:1:lookup", "session_id": "s", "scenario": "orders",
                               "node": "lookup", "arguments": {"order_id": "A-7"}, "slots": {}}
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["headers"]["User-Agent"].startswith("mago/")


def test_a_4xx_fails_at_once_with_the_status(receiver):
    engine = engine_for(receiver.base + "/missing")
    result = lookup_turn(engine)
    assert result.response == "Sorry, the order system did not answer."
    state = engine.session("s")
    assert (state.skill_status, state.skill_data) == ("failed", {"error": 404})
    assert len(receiver.requests) == 1  # not retried


@pytest.mark.parametrize("path", ["/flaky", "/busy"])
def test_a_5xx_or_429_then_success_is_retried_with_one_key(receiver, path):
    engine = engine_for(receiver.base + path)
    result = lookup_turn(engine)
    assert engine.session("s").skill_status == "ok", engine.session("s").skill_data
    assert "shipped" in result.response
    assert receiver.keys(path) == ["s:1:lookup", "s:1:lookup"]  # one key seen twice


def test_a_hanging_receiver_ends_the_turn_at_the_budget(receiver):
    engine = engine_for(receiver.base + "/hang", timeout_seconds=1, retries=5)
    started = time.monotonic()
    lookup_turn(engine)
    took = time.monotonic() - started
    state = engine.session("s")
    assert state.skill_status == "timeout" and "budget 1 s" in state.skill_data["error"]
    assert 0.9 <= took < 2.5, took


def test_a_10_mb_answer_is_refused_with_memory_bounded(receiver):
    engine = engine_for(receiver.base + "/huge")
    tracemalloc.start()
    try:
        lookup_turn(engine)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    state = engine.session("s")
    assert state.skill_status == "failed" and "over 1 MiB" in state.skill_data["error"]
    assert peak < HUGE_BYTES / 3, peak  # never the whole answer, nor a copy of it
    assert len(receiver.requests) == 1


def test_a_redirect_is_not_followed(receiver):
    engine = engine_for(receiver.base + "/redirect")
    lookup_turn(engine)
    state = engine.session("s")
    assert state.skill_status == "failed" and "redirect 302" in state.skill_data["error"]
    assert receiver.keys("/ok") == []


def test_a_wrong_result_type_fails(receiver):
    engine = engine_for(receiver.base + "/badtype")
    lookup_turn(engine)
    state = engine.session("s")
    assert state.skill_status == "failed"
    assert state.skill_data == {"error": "result field 'status' is not of type string"}


def test_a_refused_connection_is_failed_within_the_budget():
    engine = engine_for("http://127.0.0.1:9/ok", timeout_seconds=1)
    lookup_turn(engine)
    state = engine.session("s")
    assert state.skill_status == "failed" and "refused" in state.skill_data["error"]


# --- HTTPS ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


def test_https_verifies_the_certificate_and_trusts_a_given_ca_file(certificate, monkeypatch):
    with Receiver(tls=certificate) as receiver:
        monkeypatch.delenv("MAGO_WEBHOOK_CA_FILE", raising=False)
        untrusted = engine_for(receiver.base + "/ok")
        lookup_turn(untrusted)
        assert untrusted.session("s").skill_status == "failed"  # self-signed: refused
        assert "certificate not trusted" in untrusted.session("s").skill_data["error"]
        assert receiver.requests == []
        monkeypatch.setenv("MAGO_WEBHOOK_CA_FILE", certificate[0])
        trusted = engine_for(receiver.base + "/ok")
        result = lookup_turn(trusted)
    assert result.response == "Your order is shipped, 2 days to go."


# --- exactly once (SPEC 8.4) ----------------------------------------------------------------


class StoreCrash(Exception):
    pass


class CrashingStore(MemorySessionStore):
    """A store whose next `put`, once armed, raises: the crash between the call and the save."""

    armed, lost = False, None

    def put(self, state, expected_version: int) -> int:
        if self.armed:
            self.armed, self.lost = False, state
            raise StoreCrash("crashed before the save")
        return super().put(state, expected_version)


def crashed_at_calling(receiver) -> tuple[Engine, CrashingStore]:
    """An engine whose lookup turn called the receiver, then crashed before the save."""
    store = CrashingStore()
    engine = engine_for(receiver.base + "/ok", store=store)
    engine.start("s")
    store.armed = True
    with pytest.raises(StoreCrash):
        engine.turn("s", "where is my order", {"dialogue_act": "inform"})
    return engine, store


def test_a_crash_before_the_save_then_the_retry_sends_the_same_key(receiver):
    engine, _ = crashed_at_calling(receiver)
    again = engine.turn("s", "where is my order", {"dialogue_act": "inform"})
    assert "shipped" in again.response
    assert receiver.keys() == ["s:1:lookup", "s:1:lookup"]  # at least once, one key
    assert receiver.effects == ["s:1:lookup"]  # the receiver acted once


def test_a_retry_that_carries_the_completed_run_sends_nothing(receiver):
    engine, store = crashed_at_calling(receiver)
    done = tuple(a for a in store.lost.actions if a not in engine.session("s").actions)
    again = engine.turn("s", "where is my order", {"dialogue_act": "inform"}, carried=done)
    assert "shipped" in again.response
    assert receiver.keys() == ["s:1:lookup"]  # nothing sent again


# --- secrets and modes ----------------------------------------------------------------------


def test_env_forms_are_resolved_at_load_and_never_in_the_ir(receiver, monkeypatch):
    monkeypatch.setenv("ORDERS_URL", receiver.base + "/ok")
    monkeypatch.setenv("ORDERS_TOKEN", "Bearer s3cret-t0ken")
    data, runtime = compiled(scenario("${ORDERS_URL}", headers={"Authorization": "${ORDERS_TOKEN}"}))
    assert b"s3cret" not in data and str(receiver.server.server_address[1]).encode() not in data
    skills = skill_registry(runtime, lambda line: None, "live")
    assert "s3cret" not in repr(skills.get("order_status"))
    engine = Engine(runtime, skills=skills)
    lookup_turn(engine)
    assert receiver.requests[0]["headers"]["Authorization"] == "Bearer s3cret-t0ken"
    assert "s3cret" not in json.dumps(engine.session("s").skill_data)


def test_a_missing_variable_is_one_line_at_start(monkeypatch):
    monkeypatch.delenv("ORDERS_URL", raising=False)
    _, runtime = compiled(scenario("${ORDERS_URL}"))
    with pytest.raises(WebhookConfigError, match=r"reads \$\{ORDERS_URL\}, which is not set"):
        webhook_skills(runtime.program, live=True)
    with pytest.raises(InputError):
        skill_registry(runtime, lambda line: None, "live")
    assert webhook_skills(runtime.program, live=False)  # off: nothing to resolve


def test_hosts_outside_mago_webhook_hosts_are_refused_at_start(monkeypatch):
    monkeypatch.setenv("MAGO_WEBHOOK_HOSTS", "orders.example.com")
    _, runtime = compiled(scenario("https://evil.example.net/x"))
    with pytest.raises(WebhookConfigError, match="not in MAGO_WEBHOOK_HOSTS"):
        webhook_skills(runtime.program, live=True)
    _, listed = compiled(scenario("https://orders.example.com/x"))
    assert webhook_skills(listed.program, live=True)


def test_mgi_fuzz_stand_ins_fail_until_answering_then_answer_the_declared_types(receiver):
    data = scenario(receiver.base + "/ok")
    data["skills"]["order_status"]["result"].update(
        late={"type": "boolean"}, extra={"type": "object"}, lines={"type": "list"})
    _, runtime = compiled(data)
    skills = skill_registry(runtime, lambda line: None, stand_ins=True)
    stand_in = skills.get("order_status")
    assert isinstance(stand_in, WebhookStandIn)
    engine = Engine(runtime, skills=skills)
    lookup_turn(engine)
    assert engine.session("s").skill_data == {"error": OFF_ERROR}  # off until switched
    stand_in.answering = True
    lookup_turn(engine, "t")
    answered = engine.session("t").skill_data
    assert answered == {"status": "x", "eta_days": 1, "late": True, "extra": {}, "lines": []}
    assert typed_result(answered, stand_in.fields).data == answered  # each of its type
    assert receiver.requests == []  # never the network


def test_webhooks_are_off_without_the_flag(receiver):
    _, runtime = compiled(scenario(receiver.base + "/ok"))
    engine = Engine(runtime, skills=skill_registry(runtime, lambda line: None))
    lookup_turn(engine)
    assert engine.session("s").skill_data == {"error": OFF_ERROR}
    assert receiver.requests == []


def test_mgi_run_calls_a_webhook_only_with_webhooks_live(receiver, tmp_path):
    ir_file = tmp_path / "orders.ir"
    ir_file.write_bytes(compiled(scenario(receiver.base + "/ok"))[0])
    lines = '{"user": "hi", "nlu": {"dialogue_act": "inform"}}\n'

    def run(*flags: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "interpreter.cli", "run", str(ir_file),
                               "--json", "--nlu", "scripted", *flags], input=lines,
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    assert "did not answer" in run()["response"] and receiver.requests == []
    assert "shipped" in run("--webhooks", "live")["response"]
    assert len(receiver.requests) == 1


def python_skill_ir(tmp_path):
    data = scenario("https://unused.example.com/x")
    data["skills"] = {"order_status": {"type": "python",
                                       "arguments": {"order_id": {"type": "string"}}}}
    path = tmp_path / "python_skill.ir"
    path.write_bytes(compiled(data)[0])
    return path


def test_a_declared_python_skill_not_installed_warns_once_at_start_and_fails(tmp_path):
    done = subprocess.run([sys.executable, "-m", "interpreter.cli", "run",
                           str(python_skill_ir(tmp_path)), "--json", "--nlu", "scripted"],
                          input='{"user": "hi", "nlu": {"dialogue_act": "inform"}}\n',
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "order_status" in line]
    assert len(warnings) == 1 and "no installed package provides it" in warnings[0], done.stderr
    assert "did not answer" in json.loads(done.stdout.splitlines()[-1])["response"]


def test_mgi_serve_warns_at_start_for_a_declared_python_skill(tmp_path):
    from support.service_server import ServiceServer

    with ServiceServer([python_skill_ir(tmp_path)]) as server:
        log = server.log()
    assert log.count("skill 'order_status' is declared as a python skill") == 1, log


def test_mgi_test_calls_the_webhook_only_with_webhooks_live(receiver, tmp_path):
    """The shipped order_lookup transcript without a skill: line says the fallback when
    webhooks are off; with --webhooks live it reaches the receiver (which answers /ok)."""
    result = check_source("order_lookup.json",
                          (ROOT / "scenarios" / "order_lookup.json").read_text("utf-8"))
    (tmp_path / "order_lookup.ir").write_bytes(result.ir_bytes())
    transcript = tmp_path / "live.transcript"
    transcript.write_text("scenario: order_lookup\nbot:\n  node: ask_order\n"
                          "user: my order number is AB-12345\n  says: is shipped\n",
                          encoding="utf-8")

    def run(*flags: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "interpreter.cli", "test", str(transcript),
                               "--ir-dir", str(tmp_path), *flags], capture_output=True,
                              text=True, timeout=60, cwd=ROOT,
                              env={**__import__("os").environ,
                                   "ORDER_WEBHOOK_URL": receiver.base + "/ok"})

    off = run()
    assert off.returncode == 1 and receiver.requests == [], off.stdout
    live = run("--webhooks", "live")
    assert live.returncode == 0, live.stdout + live.stderr
    assert receiver.keys() == ["transcript-live:2:lookup"]  # turn 2: the opening is turn 1


# --- an API-posted scenario's connections (no server-side request forgery) ------------------


def resolving(monkeypatch, name: str, answers: list[str]) -> list[str]:
    """`name` resolves to each of `answers` in turn (the last one from then on), as a DNS
    server under an attacker's control would answer; other names resolve as usual. The
    addresses handed out are returned (one per lookup)."""
    real, handed = socket.getaddrinfo, []

    def getaddrinfo(host, port, *args, **kwargs):
        if host != name:
            return real(host, port, *args, **kwargs)
        handed.append(answers[min(len(handed), len(answers) - 1)])
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (handed[-1], port or 0))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return handed


def posted_engine(url: str, **options) -> Engine:
    _, runtime = compiled(scenario(url, **options))
    skills = skill_registry(runtime, lambda line: None, "live", private_address)
    return Engine(runtime, store=MemorySessionStore(), skills=skills)


def test_a_posted_webhook_to_a_name_of_this_machine_is_refused_at_connect_time(receiver,
                                                                               monkeypatch):
    port = receiver.server.server_address[1]
    resolving(monkeypatch, "orders.inside.test", ["127.0.0.1"])
    for host in ("orders.inside.test", "localhost"):
        engine = posted_engine(f"http://{host}:{port}/ok")
        lookup_turn(engine)
        state = engine.session("s")
        assert state.skill_status == "failed", state.skill_data
        assert f"host {host} is an internal address" in state.skill_data["error"]
    assert receiver.requests == []
    own = engine_for(f"http://localhost:{port}/ok")  # a start file's webhook: the operator's
    assert "shipped" in lookup_turn(own).response


def test_a_rebinding_name_is_connected_to_only_at_the_address_that_was_checked(receiver,
                                                                               monkeypatch):
    """The first answer is public, every later one 127.0.0.1: a check and a second lookup
    to connect would reach the receiver; one lookup per connection never does."""
    port = receiver.server.server_address[1]
    handed = resolving(monkeypatch, "orders.rebind.test", ["93.184.216.34", "127.0.0.1"])
    engine = posted_engine(f"http://orders.rebind.test:{port}/ok", timeout_seconds=2,
                           retries=1)
    lookup_turn(engine)
    state = engine.session("s")
    assert state.skill_status in ("failed", "timeout"), state.skill_data
    assert receiver.requests == []  # never the loopback answer
    assert handed[:1] == ["93.184.216.34"]


def test_the_pharmacy_demo_submits_its_refill_through_its_own_receiver(tmp_path):
    """`make demo-pharmacy`: the receiver the demo starts on a loopback port files the
    delivery path's refill once, and the bot says it is in (SPEC 15's must-show)."""
    from support.service_server import compile_irs

    ir_file = compile_irs(tmp_path, ("pharmacy_refill",)) / "pharmacy_refill.ir"
    done = subprocess.run(
        [sys.executable, "scenarios/pharmacy_refill.receiver.py", "--demo", sys.executable,
         "-m", "interpreter.cli", "run", str(ir_file), "--webhooks", "live", "--script",
         "scenarios/pharmacy_refill.demo.txt", "--output-level", "compact"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "(pharmacy: refill RX1234567 for delivery at downtown filed as RF-20417)" \
        in done.stdout
    assert "Your refill request is in. We will deliver it to 12 Elm Street" in done.stdout
    # its `note` argument is written as conditional lines (SPEC 17.21): the delivery line
    assert "(pharmacy: note: Refill RX1234567 for the patient born 1984-07-21. / Deliver to " \
        "12 Elm Street, Springfield.)" in done.stdout
    assert "(the receiver acted on 1 call(s): cli:7:submit_refill)" in done.stdout
