"""`mgi fuzz` (interpreter/fuzz*.py): scenario fuzzing for designers.

- The reference scenarios hold every built-in property with full node coverage.
- Each deliberately flawed scenario of tests/fuzz_scenarios/ compiles (warnings at most), is
  caught by `mgi fuzz` (a separate process: exit 1, the property by name, a short transcript),
  and `mgi test` fails on the written transcript (exit 1: a failed step, not a broken file).
- The properties file: what it accepts and a one-line error with its line for what it does not.
- Usage errors exit 2 with one line; the same seed gives the same report; `mgi run` start-up
  does not import hypothesis; the `not-next` transcript expectation; the pieces (end intents,
  the livelock search, the placeholder audit, coverage, the progress bar).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.driver import check_file, check_source
from interpreter.fuzz.runner import EscapeSearch, Fuzzer, FuzzOptions, FuzzUsageError, run_fuzz
from interpreter.fuzz.inputs import InputSpace, end_intents, transcript_safe
from interpreter.fuzz.properties import (BUILT_IN, DORMANT, OPT_IN, PropertiesError,
                                        asks_what_it_knows, check_known_ask, check_repeat,
                                        parse_properties, said_fragment)
from interpreter.fuzz.report import (Progress, counterexample_transcript, render_human,
                                     report_data)
from interpreter.loader import load_program
from interpreter.wording.nlg import unfilled_placeholders
from interpreter.transcripts.run import parse_transcript, run_transcript
from conftest import ROOT

FLAWS = ROOT / "tests" / "fuzz_scenarios"
REFERENCE = ("senimate", "senimate_weather", "clinic_booking")
# flawed scenario -> (the property that catches it, the expectation its transcript ends with)
CAUGHT = {
    "stay_never_left": ("no_livelock", "not-next: chat"),
    "closing_never_closes": ("ends_when_asked", "complete: true"),
    "required_slot_unasked": ("card_known", "not-next: confirm"),
    "end_intent_shadowed": ("ends_when_asked", "complete: true"),
    "placeholder_unfilled": ("placeholders_filled", "says: Nice to meet you"),
    "safety_pattern_steals": ("safety_reached", "reason: safety:abuse"),
    "known_ask": ("no_known_ask", "not-next: meal_check"),
    "help_repeated": ("no_verbatim_repeat", "not-says: Please call 911 right now."),
}


@pytest.fixture(scope="module")
def irs(tmp_path_factory) -> dict[str, Path]:
    """Every reference and flawed scenario compiled once: none has an error (the flaws are
    ones the compiler cannot see; warnings are allowed)."""
    out = tmp_path_factory.mktemp("ir")
    paths = {}
    sources = [ROOT / "scenarios" / f"{n}.json" for n in REFERENCE] + sorted(FLAWS.glob("*.json"))
    for source in sources:
        result = check_file(str(source))
        assert not result.errors, [d.message for d in result.diagnostics]
        paths[source.stem] = out / f"{source.stem}.ir"
        paths[source.stem].write_bytes(result.ir_bytes())
    return paths


def fuzz(ir: Path, examples: int = 100, **options):
    runtime = load_program(ir)
    report = run_fuzz(runtime, str(ir), FuzzOptions(examples, options.pop("max_turns", 10),
                                                    options.pop("seed", 1),
                                                    options.pop("nlu", "generated")), **options)
    return report, report_data(report)


def mgi(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "interpreter.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def statuses(data: dict) -> dict[str, str]:
    return {p["name"]: p["status"] for p in data["properties"]}


# --- reference scenarios -------------------------------------------------------------------------


@pytest.mark.parametrize("name, examples", [("senimate", 150), ("senimate_weather", 150),
                                             ("clinic_booking", 300)])
def test_reference_scenario_holds_with_full_node_coverage(irs, name, examples):
    # clinic_booking's booking_done is 7 good answers deep: 300 conversations reach it for
    # every seed tried (1-6), 150 not always
    report, data = fuzz(irs[name], examples=examples)
    assert report.exit_status() == 0, render_human(report)
    assert set(statuses(data).values()) == {"held"}
    nodes = data["coverage"]["nodes"]
    assert nodes["uncovered"] == [] and len(nodes["entered"]) == nodes["total"] >= 6
    assert data["coverage"]["slots"]["uncovered"] == []


def test_rules_nlu_mode_runs_text_through_the_rules_nlu(irs):
    report, data = fuzz(irs["senimate"], examples=60, nlu="rules")
    assert report.exit_status() == 0, render_human(report)
    assert data["nlu"] == "rules" and data["turns"] > data["conversations"]
    assert "conversation_closure" in data["coverage"]["nodes"]["entered"]


# --- flawed scenarios, as a designer runs them ---------------------------------------------------


@pytest.mark.parametrize("name", sorted(CAUGHT))
def test_a_flawed_scenario_is_caught_and_its_transcript_fails_under_mgi_test(irs, tmp_path, name):
    prop, expectation = CAUGHT[name]
    props = FLAWS / f"{name}.props"
    extra = ["--properties", props] if props.exists() else []
    out = tmp_path / "transcripts"
    done = mgi("fuzz", irs[name], "--examples", "100", "--seed", "1", "--max-turns", "6",
               "--transcripts", out, "--format", "json", *extra)
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    found = {p["name"]: p for p in data["properties"] if p["status"] == "violated"}
    assert prop in found, statuses(data)
    transcript = Path(found[prop]["transcript"])
    assert transcript.parent == out and found[prop]["replay_fails"] is True
    assert found[prop]["turns"] <= 6  # shrunk: at most the K turns of asking to end
    text = transcript.read_text("utf-8")
    steps = [line.strip() for line in text.splitlines()
             if line and not line.lstrip().startswith("#")]
    assert steps[-1].split("  #")[0] == expectation
    replay = mgi("test", transcript)
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert "✗" in replay.stdout and "1 failed" in replay.stdout


def test_human_report_names_the_property_and_prints_the_transcript(irs):
    done = mgi("fuzz", irs["placeholder_unfilled"], "--examples", "50", "--seed", "2")
    assert done.returncode == 1 and done.stderr == ""
    assert "✗ placeholders_filled" in done.stdout and "✓ no_crash" in done.stdout
    assert "nlu: scripted" in done.stdout and "says: Nice to meet you" in done.stdout
    assert "rerun with --seed 2" in done.stdout


def test_same_seed_same_report_and_transcripts(irs):
    runs = [fuzz(irs["end_intent_shadowed"], examples=60, seed=5, max_turns=5)[1]
            for _ in range(2)]
    for data in runs:
        data.pop("seconds"), data.pop("examples_per_second")
    assert runs[0] == runs[1]
    assert statuses(runs[0])["ends_when_asked"] == "violated"


def test_the_transcript_reads_like_the_conversation(irs):
    report, data = fuzz(irs["stay_never_left"], examples=50)
    text = report.transcripts["no_livelock"]
    transcript = parse_transcript(text, "t.transcript")
    assert transcript.nlu == "scripted" and transcript.scenario == "stay_never_left"
    assert [s.kind for s in transcript.steps] == ["bot", "user"]
    assert transcript.steps[1].nlu == {"intent": "wants_to_pay"}  # the exit the node asks for
    result = run_transcript(transcript, report.runtime)
    failures = [f.message for s in result.steps for f in s.failures]
    assert failures == ["expected next not chat, got chat (node chat, reason stay:next_nodes[0])"]
    assert data["coverage"]["nodes"]["uncovered"] == ["checkout"]
    assert "chat next_nodes[1]" in data["coverage"]["transitions"]["uncovered"]
    assert statuses(data)["end_nodes_reachable"] == "violated"


# --- designer properties -------------------------------------------------------------------------


def test_designer_properties_on_the_reference_scenario(irs, tmp_path):
    path = tmp_path / "senimate.props"
    path.write_text("ends_fast: after intent user_wants_to_end, the session completes within 2 "
                    "turns\ntoo_fast: after intent `user_wants_to_end` completes within 1 turn\n",
                    "utf-8")
    report, data = fuzz(irs["senimate"], examples=80, properties_path=str(path))
    assert statuses(data)["ends_fast"] == "held"
    assert statuses(data)["too_fast"] == "violated"
    assert report.transcripts["too_fast"].rstrip().endswith("complete: true  # too_fast")


@pytest.fixture(scope="module")
def senimate(irs):
    return load_program(irs["senimate"])


# --- SPEC 9: no_verbatim_repeat (opt-in) and no_known_ask (built in) -----------------------------


def test_opt_in_properties_are_checked_only_when_the_file_names_them(irs, senimate):
    plain = fuzz(irs["help_repeated"], examples=40)[1]
    assert "no_verbatim_repeat" not in statuses(plain)
    assert statuses(plain)["no_known_ask"] == "held"  # built in: entry routing passes known asks
    assert set(statuses(plain).values()) == {"held"}
    asked = parse_properties("no_verbatim_repeat  # SPEC 9\n", senimate, "p")
    assert asked.requested == ("no_verbatim_repeat",)
    assert asked.checked() == [*BUILT_IN, "no_verbatim_repeat"]
    assert not DORMANT and parse_properties("", senimate).checked() == list(BUILT_IN)
    kinds = {p["name"]: p["kind"] for p in fuzz(irs["help_repeated"], examples=20,
             properties_path=str(FLAWS / "help_repeated.props"))[1]["properties"]}
    assert kinds["no_verbatim_repeat"] == "opt-in" and kinds["no_crash"] == "built-in"
    with pytest.raises(PropertiesError, match="already taken"):
        parse_properties("no_verbatim_repeat: after intent user_wants_to_end, completes within "
                         "2 turns", senimate, "p")
    assert set(OPT_IN) & set(BUILT_IN) == set()


def test_the_shipped_scenarios_hold_no_verbatim_repeat(irs, tmp_path):
    path = tmp_path / "repeat.props"
    path.write_text("no_verbatim_repeat\n", "utf-8")
    for name in REFERENCE:
        report, data = fuzz(irs[name], examples=120, properties_path=str(path))
        assert statuses(data)["no_verbatim_repeat"] == "held", render_human(report)


class Table:
    """A stand-in node table: what `asks_what_it_knows` reads (as `loader.NodeTable.fill`
    sets it: `skips_filled` from the kind, `min_turns` and `skip_if_filled`)."""

    def __init__(self, executor=1, collect=("meal",), min_turns=1, skip_if_filled=True,
                 mins=None):
        self.id, self.collect_names = "meal", collect
        self.skips_filled = executor == 1 and min_turns == 1 and skip_if_filled
        self.collect_mins = mins or tuple(0 for _ in collect)


@pytest.mark.parametrize("table, slots, asks", [
    (Table(), {"meal": "eaten"}, True),
    (Table(), {"meal": None}, False),
    (Table(collect=("meal", "mood")), {"meal": "eaten"}, False),
    (Table(skip_if_filled=False), {"meal": "eaten"}, False),  # SPEC 8.3: the designer keeps it
    (Table(skip_if_filled=True), {"meal": "eaten"}, True),
    (Table(min_turns=2), {"meal": "eaten"}, False),  # entry routing passes min_turns 1 only
    (Table(executor=0, collect=()), {}, False),  # a general node asks nothing
    (Table(executor=2), {"meal": "eaten"}, False),  # a skill node runs its skill
    (Table(), {"meal": []}, False),  # an empty list is no answer
    (Table(mins=(2,)), {"meal": ["rice"]}, False),  # a list short of its min_items
    (Table(mins=(2,)), {"meal": ["rice", "soup"]}, True),
])
def test_asks_what_it_knows(table, slots, asks):
    assert asks_what_it_knows(table, slots) is asks


class Step:
    """A stand-in turn result for `check_known_ask` and `check_repeat`."""

    def __init__(self, next_node="meal", passed=None, kind="move", response="Hi.", **slots):
        self.user, self.turn, self.node, self.reason, self.focus = "x", 2, "start", "default_next", False
        self.next_node, self.response, self.slots = next_node, response, slots
        self.decision = type("Decision", (), {"kind": kind})()
        self.passed = passed or []


class Runtime:
    def __init__(self, **tables):
        self.tables = tables

    def node_named(self, node_id):
        return self.tables[node_id]


@pytest.mark.parametrize("step, violated", [
    (Step(meal="eaten"), True),
    (Step(meal=None), False),
    (Step(kind="stay", meal="eaten"), False),
    (Step(next_node="plain", meal="eaten"), False),
    # once SPEC 8.3 passes filled nodes, a second arrival stops the chain there by design
    (Step(meal="eaten", passed=[{"node": "meal", "reason": "skip:filled"}]), False),
    (Step(meal="eaten", passed=[{"node": "other", "reason": "skip:filled"}]), True),
    (Step(next_node="keep", meal="eaten"), False),
])
def test_no_known_ask_checks_moves(step, violated):
    runtime = Runtime(meal=Table(), plain=Table(executor=0, collect=()),
                      keep=Table(skip_if_filled=False))
    found = check_known_ask(step, runtime)
    assert (found is not None) is violated
    if found is not None:
        assert found.prop == "no_known_ask" and found.expect == ("not-next", step.next_node)


def test_no_verbatim_repeat_compares_each_reply_with_the_one_before():
    same = [Step(response="네, 말씀해 주세요."), Step(response="네, 말씀해 주세요.")]
    assert check_repeat(same).expect == ("not-says", "네, 말씀해 주세요.")
    assert check_repeat([Step(response="하나."), Step(response="둘.")]) is None
    assert check_repeat([Step(response=None), Step(response=None)]) is None
    assert check_repeat(same[:1]) is None


def test_properties_file_forms(senimate):
    parsed = parse_properties(
        "# comment\n\n"
        "ends: after intent user_wants_to_end, the session completes within 3 turns\n"
        "node health_check is never entered before node meal_check has been visited  # why\n"
        "slot `meal_status` is filled whenever node health_check is entered.\n"
        "end intent user_wants_to_end\n", senimate, "s.props")
    kinds = [(p.name, p.line, p.kind, p.subject, p.other) for p in parsed.properties]
    assert kinds == [("ends", 3, "after_intent", "user_wants_to_end", 3),
                     ("s.props:4", 4, "never_before", "health_check", "meal_check"),
                     ("s.props:5", 5, "filled_on_entry", "meal_status", "health_check")]
    assert parsed.end_intents == ("user_wants_to_end",)


@pytest.mark.parametrize("text, message", [
    ("after intent user_wants_to_ned, completes within 3 turns",
     "p:1: unknown intent `user_wants_to_ned`; did you mean `user_wants_to_end`?"),
    ("\nnode meal_chek is never entered before node health_check",
     "p:2: unknown node `meal_chek`; did you mean `meal_check`?"),
    ("slot meal is filled whenever node meal_check is entered",
     "p:1: unknown slot `meal`; did you mean `meal_status`?"),
    ("end intent bye", "p:1: unknown intent `bye` (the scenario has: user_wants_to_end)"),
    ("health_check comes after meal_check", "p:1: cannot read `health_check comes after "),
    ("after intent user_wants_to_end, completes within 0 turns", "p:1: the number of turns"),
    ("a: end intent user_wants_to_end", "p:1: cannot read `end intent"),
    ("x: node meal_check is never entered before node meal_check", "cannot come before itself"),
    ("x: node meal_check is never entered before node health_check\n"
     "x: node health_check is never entered before node meal_check", "p:2: the label `x`"),
    ("no_crash: node meal_check is never entered before node health_check", "already taken"),
])
def test_properties_file_errors_name_their_line(senimate, text, message):
    with pytest.raises(PropertiesError) as error:
        parse_properties(text, senimate, "p")
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("args, message", [
    (["missing.ir"], "cannot read IR file missing.ir"),
    (["README.md"], "not a Mago IR file"),
    (["IR", "--examples", "0"], "--examples must be between 1 and"),
    (["IR", "--max-turns", "0"], "--max-turns must be between 1 and"),
    (["IR", "--properties", "missing.props"], "cannot read properties file missing.props"),
    (["IR", "--properties", "BAD"], "bad.props:1: unknown node `nowhere`"),
    (["IR", "--transcripts", "README.md/x"], "cannot create the transcripts directory"),
])
def test_usage_errors_are_one_line_and_exit_2(irs, tmp_path, args, message):
    bad = tmp_path / "bad.props"
    bad.write_text("node nowhere is never entered before node meal_check\n", "utf-8")
    args = [str(irs["senimate"]) if a == "IR" else str(bad) if a == "BAD" else a for a in args]
    done = mgi("fuzz", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("mgi: ") and message in done.stderr
    assert done.stderr.count("\n") == 1


def test_run_fuzz_refuses_bad_options_before_exploring(senimate):
    with pytest.raises(FuzzUsageError, match="--examples"):
        run_fuzz(senimate, "x.ir", FuzzOptions(examples=-1))


def test_mgi_start_up_does_not_import_hypothesis():
    code = ("import sys, interpreter.cli.main as c; c.build_parser(); "
            "print(sorted(m for m in sys.modules "
            "if m.startswith(('hypothesis', 'interpreter.fuzz.runner'))))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


# --- the pieces --------------------------------------------------------------------------------


def test_end_intents_are_those_a_global_to_an_end_node_tests(irs):
    assert end_intents(load_program(irs["senimate"])) == ("user_wants_to_end",)
    assert end_intents(load_program(irs["clinic_booking"])) == ("user_wants_to_cancel",)
    assert end_intents(load_program(irs["end_intent_shadowed"])) == ("wants_to_end",)
    assert end_intents(load_program(irs["stay_never_left"])) == ()


def test_livelock_search(irs):
    from interpreter.engine import Engine

    for name, stuck in (("stay_never_left", True), ("senimate", False), ("clinic_booking", False)):
        runtime = load_program(irs[name])
        engine = Engine(runtime)
        engine.start("s")
        search = EscapeSearch(runtime, InputSpace(runtime), None, depth=6)
        escape = search.escape(engine.session("s"))
        assert (escape.stuck, escape.conclusive) == (stuck, True), name
        assert escape.inputs >= 10


def test_inputs_are_transcript_lines_and_valid_nlu_results(senimate):
    from hypothesis import given, settings, strategies as st

    from interpreter.understanding.nlu import nlu_result

    space = InputSpace(senimate, ends=end_intents(senimate))

    @settings(max_examples=60, database=None, derandomize=True)
    @given(st.data(), st.integers(0, len(senimate.nodes) - 1))
    def check(data, node):
        for strategy in (space.turn_at(node), space.end_request_at(node)):
            turn = data.draw(strategy)
            assert transcript_safe(turn.text)
            assert (turn.nlu is None) == (turn.text == "")
            if turn.nlu is not None:
                nlu_result(turn.nlu, turn.text)
                json.dumps(turn.nlu)
    check()
    kinds = {t.kind for t in space.probes_at(0, ("meal_status",))}
    assert kinds == {"silence", "act", "probe"}


def test_placeholder_audit_pieces():
    text = "Hi {slots.name}. Your order {skill.data.id} is ready."
    assert unfilled_placeholders(text, {"name": "Kim"}, {}) == [
        ("{skill.data.id}", "Your order {skill.data.id} is ready.")]
    assert unfilled_placeholders(text, {"name": ""}, {"id": 7}) == [
        ("{slots.name}", "Hi {slots.name}.")]
    assert said_fragment("Your order {skill.data.id} is ready.", "") == "Your order"
    assert said_fragment("Your order {skill.data.id} is ready.", "Your order") == "is ready"
    assert said_fragment("{slots.x}.", "") is None


def test_not_next_expectation(irs, tmp_path):
    runtime = load_program(irs["senimate"])
    text = ("scenario: senimate\nnlu: scripted\nuser: 네\n  nlu: {\"dialogue_act\": \"affirm\"}\n"
            "  not-next: meal_check\n  not-next: daily_life_check\n  not-next: -\n")
    result = run_transcript(parse_transcript(text, "t"), runtime)
    failures = [f.message for s in result.steps for f in s.failures]
    assert failures == ["expected next not daily_life_check, got daily_life_check "
                        "(node greeting_introduction, reason default_next)"]


def test_progress_bar_only_at_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    shown, hidden = Terminal(), io.StringIO()
    for stream in (shown, hidden):
        progress = Progress(3, stream)
        progress.tick()
        progress.finish()
    assert "1/3 conversations" in shown.getvalue() and hidden.getvalue() == ""


def test_a_crash_is_reported_as_no_crash(irs):
    runtime = load_program(irs["placeholder_unfilled"])
    fuzzer = Fuzzer(runtime, FuzzOptions(examples=30, seed=1))
    real = fuzzer.engine.turn

    def turn(session, text, nlu=None):
        if text == "":
            raise ZeroDivisionError("boom")
        return real(session, text, nlu)
    fuzzer.engine.turn = turn
    report = fuzzer.run()
    found = report.found["no_crash"]
    assert "ZeroDivisionError: boom" in found.message
    assert found.turns[-1].text == "" and len(found.results) == len(found.turns)
    text = counterexample_transcript(report, found, "scenario: placeholder_unfilled")
    assert text.rstrip("\n").split("\n")[-3:-1] == [
        "user:", "  # this turn raised: the turn raised ZeroDivisionError: boom (at test_fuzz.py:"
        f"{turn.__code__.co_firstlineno + 2})"]


# --- progressive tasks (SPEC 8): pauses, profiles, chains, actions ----------------------------


@pytest.fixture(scope="module")
def tasks_flow(tmp_path_factory) -> Path:
    """The differential test's hand-written task scenario (transient chains, `skip:filled`,
    defaults, lists, `clear_slots`, an idle global, the profile, the `email` skill)."""
    from test_differential import HAND_WRITTEN

    result = check_source("tasks_flow.json", json.dumps(HAND_WRITTEN["tasks_flow"]))
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    path = tmp_path_factory.mktemp("tasks") / "tasks_flow.ir"
    path.write_bytes(result.ir_bytes())
    return path


def test_a_task_scenario_holds_with_passed_nodes_pauses_and_profiles(tasks_flow, monkeypatch):
    """Every node entered (transient ones by being passed), the idle rule fired (a pause),
    both ends of the `email` skill reached (its sandbox outbox, and no transport); no mail
    leaves: a real SMTP server in the environment is never asked, and the environment is
    as it was afterwards."""
    monkeypatch.setenv("MAGO_SMTP_URL", "smtp://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("MAGO_OUTBOX", raising=False)
    report, data = fuzz(tasks_flow, examples=300)
    assert report.exit_status() == 0, render_human(report)
    assert statuses(data)["chain_bounded"] == statuses(data)["action_once"] == "held"
    nodes = data["coverage"]["nodes"]
    assert nodes["uncovered"] == [], nodes
    assert {"report", "check", "send", "reset"} <= set(nodes["entered"])  # transient: passed
    assert data["coverage"]["globals"]["fired"].get("global:idle")
    assert {"sent", "failed"} <= set(nodes["entered"])  # the skill's two outcomes
    import os

    assert os.environ["MAGO_SMTP_URL"] == "smtp://127.0.0.1:9"
    assert "MAGO_OUTBOX" not in os.environ


def test_pauses_probes_and_profiles_come_from_the_scenario(tasks_flow):
    from hypothesis import given, settings, strategies as st

    from interpreter.engine import Engine

    runtime = load_program(tasks_flow)
    space = InputSpace(runtime)
    assert space.pauses == (1799, 1800, 1801)  # around `system.idle_seconds >= 1800`
    assert {t.idle for t in space.probes_at(0, ())} >= {0, 1799, 1800, 1801}
    assert set(space.profile_values) == {"email", "city", "name"}
    engine = Engine(runtime)

    @settings(max_examples=40, database=None, derandomize=True)
    @given(st.data())
    def check(data):
        profile = data.draw(space.profile)
        assert engine.checked_profile(profile) == profile  # valid, and as stored
        turn = data.draw(space.turn_at(runtime.node_index["confirm"]))
        assert turn.idle in (0, *space.pauses) and transcript_safe(turn.text)
    check()


def test_a_counterexample_transcript_replays_its_pauses_and_profile(tasks_flow, tmp_path):
    """A designer property that only a pause breaks: the transcript carries the `idle:` of
    the turn (and the profile, when one was drawn), and `mgi test` fails on it."""
    props = tmp_path / "idle.props"
    props.write_text("never_reset: node reset is never entered before node sent has been "
                     "visited\n", "utf-8")
    report, data = fuzz(tasks_flow, examples=200, properties_path=str(props))
    found = report.found["never_reset"]
    assert any(turn.idle >= 1800 for turn in found.turns)
    text = report.transcripts["never_reset"]
    assert "\n  idle: 18" in text and report.replay_fails["never_reset"] is True
    transcript = parse_transcript(text, "t.transcript")
    assert [s.idle for s in transcript.steps if s.kind == "user"] == [
        t.idle for t in found.turns]
    assert transcript.profile == (found.profile or None)


def test_chain_and_action_checks_name_the_step():
    from interpreter.fuzz.properties import check_actions, check_chain

    class Step:
        user, turn = "hi", 3

        def __init__(self, passed):
            self.passed = [{"node": n, "reason": "default_next"} for n in passed]

    class Nodes:
        nodes = ["a", "b", "c"]

    assert check_chain(Step(["a", "b"]), Nodes) is None
    assert "passed a twice: a -> b -> a" in check_chain(Step(["a", "b", "a"]), Nodes).message
    assert "passed 4 nodes, the scenario has 3" in check_chain(
        Step(["a", "b", "c", "d"]), Nodes).message
    assert check_actions(Step([]), [("s:3:a", "a"), ("s:3:b", "b")]) is None
    twice = check_actions(Step([]), [("s:3:a", "a"), ("s:3:b", "b"), ("s:3:a", "a")])
    assert twice.prop == "action_once" and "ran action s:3:a (node a) twice" in twice.message


def test_recording_skills_lend_the_skills_and_note_each_run():
    from interpreter.fuzz.properties import RecordingSkills
    from interpreter.skills.registry import SkillContext, SkillRegistry
    from interpreter.skills.weather import WeatherSkill

    skills = RecordingSkills(SkillRegistry([WeatherSkill()]))
    assert skills.get("nothing") is None and skills.names() == ["weather"]
    result = skills.get("weather").run({}, SkillContext("s", "n", "ko", action_id="s:1:n"))
    assert result.status == "ok"
    assert skills.take() == [("s:1:n", "n")] and skills.take() == []


def test_action_once_holds_on_a_long_chain_back_to_a_skill_node(tmp_path):
    from test_tasks_engine import long_skill_chain

    scenario = long_skill_chain(9)
    for node in scenario["graph"]["nodes"]:
        if node.get("params", {}).get("skill"):
            node["params"]["skill"] = "weather"
    result = check_source("long.json", json.dumps(scenario))
    path = tmp_path / "long.ir"
    path.write_bytes(result.ir_bytes())
    report, data = fuzz(path, examples=20)
    assert statuses(data)["action_once"] == "held", report.found["action_once"].message


# --- webhook scenarios: stand-in answers with webhooks off (SPEC 15) -----------------------------


def compiled(tmp_path: Path, name: str, change=None) -> Path:
    """Scenario `name` compiled into tmp_path, after `change(scenario)` when given."""
    scenario = json.loads((ROOT / "scenarios" / f"{name}.json").read_text("utf-8"))
    if change is not None:
        change(scenario)
    source = tmp_path / f"{name}.json"
    source.write_text(json.dumps(scenario), "utf-8")
    result = check_file(str(source))
    assert not result.errors, [d.message for d in result.diagnostics]
    ir = tmp_path / f"{name}.ir"
    ir.write_bytes(result.ir_bytes())
    return ir


def test_pharmacy_refill_holds_every_property_its_webhook_answering_in_some_conversations(
        tmp_path):
    # the submission is a webhook: off, a stand-in answers ok in some conversations (done)
    # and fails in the others (submit_failed). pharmacist is 6 good turns deep (the help
    # route at the read-back): the default run reaches it because each node's own exits,
    # its route groups' included, are a kind of turn of their own there
    ir = compiled(tmp_path, "pharmacy_refill")
    done = mgi("fuzz", ir, "--examples", "300", "--seed", "7", "--format", "json")
    data = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout
    assert set(statuses(data).values()) == {"held"}
    entered = data["coverage"]["nodes"]["entered"]
    assert data["coverage"]["nodes"]["uncovered"] == [] and entered["done"] > 0
    fired = data["coverage"]["transitions"]["fired"]
    assert fired["submit_refill next:sent"] > 0 and fired["submit_refill default_next"] > 0
    assert fired["confirm route:help[0]"] > 0 and fired["confirm route:help[1]"] > 0


def test_order_lookup_enters_its_success_node_with_the_stand_in_answer(tmp_path):
    def success_node(scenario: dict) -> None:  # the lookup routes on its skill's status
        nodes = scenario["graph"]["nodes"]
        lookup = next(n for n in nodes if n["id"] == "lookup")
        said = lookup["responses"]["default"].replace(" Anything else?", "")
        lookup.update(transient=True, responses={}, default_next="goodbye",
                      next_nodes=[{"target": "found", "condition": 'skill.status == "ok"'}])
        nodes.append({"id": "found", "description": "Say where the order is.", "terminal": True,
                      "responses": {"default": said}})

    ir = compiled(tmp_path, "order_lookup", success_node)
    done = mgi("fuzz", ir, "--examples", "300", "--seed", "7", "--format", "json")
    data = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout
    assert data["coverage"]["nodes"]["entered"]["found"] > 0
    assert statuses(data)["placeholders_filled"] == "held"  # each result field has a value


def test_a_counterexample_through_an_answering_webhook_scripts_it_and_replays(tmp_path):
    ir = compiled(tmp_path, "pharmacy_refill")
    props = tmp_path / "p.props"
    props.write_text("sent: node done is never entered before node pharmacist has been "
                     "visited\n", "utf-8")
    out = tmp_path / "cx"
    done = mgi("fuzz", ir, "--examples", "300", "--seed", "7", "--properties", props,
               "--transcripts", out, "--format", "json")
    data = json.loads(done.stdout)
    assert done.returncode == 1 and statuses(data)["sent"] == "violated"
    assert next(p for p in data["properties"] if p["name"] == "sent")["replay_fails"]
    text = (out / "pharmacy_refill.sent.transcript").read_text("utf-8")
    assert 'skill: {"data": {"reference": "x"}, "status": "ok"}' in text
    assert "now: 2023-11-14T22:13:20+00:00" in text  # the date of birth judged on that day
    replay = mgi("test", out / "pharmacy_refill.sent.transcript", "--format", "json")
    assert replay.returncode == 1, replay.stdout
    steps = json.loads(replay.stdout)["transcripts"][0]["steps"]
    # the same path: through the answered submission into done, failing at the last step only
    assert [s["passed"] for s in steps] == [True] * (len(steps) - 1) + [False]
    assert steps[-1]["turn"]["next_node"] == "done"
    assert steps[-1]["turn"]["passed"] == [{"node": "submit_refill", "reason": "next:sent"}]
