"""`mgi` as a user runs it: a separate process, exit codes, stdout, stderr (SPEC 7).

The contract: `mgi run` prints the conversation at an output level, or one JSON line per turn
(the opening included) with exactly the nine SPEC 7 fields; bad input (unreadable, corrupted
or foreign IR, an unknown `--node`, a malformed, binary or over-long line, a turn after
completion) is one line on stderr and exit 2; `mgi test` exits 0, 1 or 2. Never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from interpreter import ir
from conftest import ROOT

SCENARIOS = ("senimate", "senimate_weather", "clinic_booking")
JSON_KEYS = ["turn", "user", "node", "next_node", "reason", "complete", "response", "slots", "nlu", "passed"]
REASON = re.compile(r"^(opening|action_end|global:\w+|global\[\d+\]|request:\w+|gate:min_turns|"
                    r"gate:required_slots|(stay:)?next_nodes\[\d+\]|default_next|terminal|no_route|"
                    r"fallback:(no_input|not_understood))$")
# A SeniMate walk from the greeting to completion with the rules NLU.
WALK = ["네, 좋아요", "아침에 공원에서 산책했어요", "오후에는 경로당에서 친구들을 만났어요",
        "점심은 국수로 맛있게 먹었어요", "요즘 무릎이 좀 쑤셔요", "계단을 오를 때 특히 시큰거려요",
        "다음 주에 손주가 놀러 온대요", "이제 그만할래요", "고마워요"]


@pytest.fixture(scope="module")
def irs(served_irs) -> dict[str, Path]:
    """The three shipped scenarios, compiled once per test process (`served_irs`)."""
    return {name: served_irs / f"{name}.ir" for name in SCENARIOS}


@pytest.fixture(scope="module")
def senimate(irs) -> str:
    return str(irs["senimate"])


def mgi(*args: str, stdin: str | bytes = b"", env: dict | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess:
    """`mgi ARGS...` in a child process with `stdin` piped; asserts it never shows a traceback."""
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    done = subprocess.run([sys.executable, "-m", "interpreter.cli", *map(str, args)], cwd=ROOT,
                          input=data, capture_output=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    out = subprocess.CompletedProcess(done.args, done.returncode,
                                      done.stdout.decode("utf-8", "replace"),
                                      done.stderr.decode("utf-8", "replace"))
    assert "Traceback" not in out.stdout + out.stderr, out.stderr
    return out


def json_turns(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def lines_of(*turns: str) -> str:
    return "".join(t + "\n" for t in turns)


def assert_one_line_error(done: subprocess.CompletedProcess, fragment: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("mgi: "), done.stderr
    assert fragment in errors[0], errors[0]


# --- --json ---------------------------------------------------------------------------------


def test_json_contract_one_line_per_turn(senimate):
    done = mgi("run", senimate, "--json", stdin=lines_of(*(json.dumps({"user": t}) for t in WALK)))
    assert done.returncode == 0, done.stderr
    turns = json_turns(done.stdout)
    assert len(turns) == len(WALK) + 1  # the opening, then one per line
    for number, turn in enumerate(turns, start=1):
        assert list(turn) == JSON_KEYS
        assert turn["turn"] == number
        assert REASON.match(turn["reason"]), turn["reason"]
    opening, *rest = turns
    assert opening["user"] is None and opening["nlu"] is None and opening["reason"] == "opening"
    assert [t["user"] for t in rest] == WALK
    assert [t["next_node"] for t in turns] == [
        "greeting_introduction", "daily_life_check", "daily_life_check", "meal_check",
        "health_check", "health_check", "general_conversation", "general_conversation",
        "conversation_closure", None]
    assert [t["reason"] for t in rest] == [
        "default_next", "gate:min_turns", "default_next", "default_next", "next_nodes[0]",
        "default_next", "stay:next_nodes[1]", "global:user_wants_to_end", "terminal"]
    assert turns[-1]["complete"] and not any(t["complete"] for t in turns[:-1])
    assert turns[4]["slots"]["meal_status"] == "adequate"
    assert set(rest[0]["nlu"]) >= {"intent", "dialogue_act", "slots"}
    assert "안녕하세요" in done.stdout  # ensure_ascii=False: Korean stays readable


def test_json_nlu_override_replaces_the_nlu(senimate):
    override = {"intent": "user_wants_to_end", "dialogue_act": "inform", "slots": {}}
    done = mgi("run", senimate, "--json", stdin=lines_of(
        json.dumps({"user": "아무 말이나", "nlu": override}), json.dumps({"user": ""})))
    first, second = json_turns(done.stdout)[1:]
    assert (first["nlu"]["intent"], first["reason"]) == ("user_wants_to_end",
                                                         "global:user_wants_to_end")
    assert second["user"] == "" and second["complete"]  # silence is a closing act
    assert done.returncode == 0


def test_scripted_nlu_with_json(senimate):
    done = mgi("run", senimate, "--json", "--nlu", "scripted", stdin=lines_of(
        '{"user": "ok", "nlu": {"dialogue_act": "affirm"}}', '{"user": ""}'))
    turns = json_turns(done.stdout)
    assert turns[1]["next_node"] == "daily_life_check"
    assert turns[2]["reason"] == "fallback:no_input"
    missing = mgi("run", senimate, "--json", "--nlu", "scripted", stdin='{"user": "ok"}\n')
    assert_one_line_error(missing, "line 1: --nlu scripted needs an \"nlu\" object")


def test_scripted_nlu_without_json_is_a_usage_error(senimate):
    assert_one_line_error(mgi("run", senimate, "--nlu", "scripted", stdin="네\n"),
                          "use it with --json")


# --- output levels --------------------------------------------------------------------------


def run_level(ir: str, level: str, *turns: str) -> str:
    done = mgi("run", ir, "--output-level", level, stdin=lines_of(*turns))
    assert done.returncode == 0, done.stderr
    return done.stdout


def chat_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("You  > ", "Mago > "))]


def test_chat_shows_only_the_words(senimate):
    out = run_level(senimate, "chat", *WALK)
    assert out.splitlines() == chat_lines(out)
    assert out.splitlines()[0].startswith("Mago > 안녕하세요")
    assert out.splitlines()[1] == "You  > 네, 좋아요"


def test_every_level_keeps_the_same_chat_lines(senimate):
    outputs = {level: run_level(senimate, level, *WALK, "")
               for level in ("chat", "compact", "detailed", "debug")}
    reference = chat_lines(outputs["chat"])
    assert len(reference) == 2 * len(WALK) + 1
    for level, out in outputs.items():
        assert chat_lines(out) == reference, level


def test_compact_shows_turns_moves_and_completion(senimate):
    out = run_level(senimate, "compact", *WALK)
    assert "  turn 1 · greeting_introduction (opening)" in out
    assert "  turn 2 · greeting_introduction → daily_life_check (default_next)" in out
    assert "  turn 3 · daily_life_check stays (gate:min_turns)" in out
    assert "  turn 10 · conversation_closure → complete (terminal)" in out
    assert out.rstrip().splitlines()[-1] == "  ── conversation complete (terminal) ──"
    assert "transition " not in out and "slots:" not in out


def test_the_demo_never_says_the_same_sentence_twice_in_a_row(senimate):
    """`make demo` (scenarios/senimate.demo.txt at the compact level, as the Makefile runs it)
    plays a whole conversation in which no reply is the reply before it (SPEC 9), stays and
    the health re-entry included."""
    done = mgi("run", senimate, "--script", ROOT / "scenarios" / "senimate.demo.txt",
               "--output-level", "compact")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    said = [line for line in chat_lines(out) if line.startswith("Mago > ")]
    assert len(said) == 10 and out.rstrip().endswith("── conversation complete (terminal) ──")
    assert "stays (gate:min_turns)" in out and "health_check → health_check" in out
    assert "stays (stay:next_nodes[1])" in out
    repeats = [(a, b) for a, b in zip(said, said[1:]) if a == b]
    assert not repeats, repeats


def test_detailed_shows_nlu_slots_policy_and_the_trace(senimate):
    out = run_level(senimate, "detailed", "네", "", "밥은 건너뛰었어요")
    assert "  nlu: intent=null act=affirm" in out
    assert "  transition next_nodes[0]: system.node_turns == 1  [system.node_turns = 2] -> false" in out
    assert "  transition default_next: (always) -> true" in out
    assert "  route: default_next -> default_next (move -> daily_life_check)" in out
    assert "  policy: fallback no_input (re-prompt 1 of 2)" in out
    assert "  turn 3 · daily_life_check stays (fallback:no_input)" in out
    assert '  slot stored: meal_status = "skipped"' in out  # users over-answer (SPEC 6.2)
    # SPEC 18.2: the node's free-text slot takes the words no value of that node took (the
    # meal is another node's slot), so the day is told too
    assert '  slots: {"meal_status": "skipped", "daily_life": "밥은 건너뛰었어요"}' in out
    assert "nlg input" not in out


def test_debug_shows_the_nlg_input(senimate):
    out = run_level(senimate, "debug", "네")
    for line in ("  nlg input · decision", "    kind: \"move\"", "    reason: \"default_next\"",
                 "  nlg input · facts (what the conditions read)", "    system.node_turns: 2",
                 "    slots.meal_status: null", "  nlg input · state (render context)",
                 "    current_node: \"daily_life_check\""):
        assert line in out.splitlines(), line
    assert '  nlu result: {"intent": null, "dialogue_act": "affirm"' in out


# --- focus, bot-first -----------------------------------------------------------------------


def test_focus_mode_stays_and_shows_where_routing_would_go(senimate):
    done = mgi("run", senimate, "--node", "health_check", "--json",
               stdin=lines_of('{"user": "괜찮아요"}', '{"user": "요즘 허리가 아파요"}',
                              '{"user": "그만할래요"}', '{"user": "네"}'))
    turns = json_turns(done.stdout)
    assert done.returncode == 0
    assert {t["node"] for t in turns} == {"health_check"}
    assert [(t["next_node"], t["reason"]) for t in turns[1:]] == [
        ("general_conversation", "default_next"), ("health_check", "next_nodes[0]"),
        ("conversation_closure", "global:user_wants_to_end"),
        ("health_check", "next_nodes[0]")]  # the complaint heard on turn 3 is still there
    compact = mgi("run", senimate, "--node", "health_check", "--output-level", "compact",
                  stdin="괜찮아요\n").stdout
    assert "focus · health_check" in compact
    assert ("turn 2 · health_check → general_conversation (default_next) · focus: not followed, "
            "still at health_check") in compact


def test_no_bot_first_starts_with_the_user(senimate):
    done = mgi("run", senimate, "--no-bot-first", "--json", stdin='{"user": "안녕하세요"}\n')
    (turn,) = json_turns(done.stdout)
    assert (turn["turn"], turn["user"], turn["node"]) == (1, "안녕하세요", "greeting_introduction")
    chat = mgi("run", senimate, "--no-bot-first", stdin="안녕하세요\n").stdout
    assert chat.splitlines()[0] == "You  > 안녕하세요"
    assert mgi("run", senimate, "--bot-first", "--json", stdin="").stdout.count("\n") == 1


def test_other_scenarios_run(irs):
    for name in ("senimate_weather", "clinic_booking"):
        done = mgi("run", irs[name], "--json", stdin='{"user": "네"}\n')
        assert done.returncode == 0, done.stderr
        assert all(list(t) == JSON_KEYS for t in json_turns(done.stdout))


# --- errors ---------------------------------------------------------------------------------


def test_unreadable_ir(tmp_path):
    assert_one_line_error(mgi("run", tmp_path / "missing.ir"), "cannot read IR file")
    assert_one_line_error(mgi("run", tmp_path), "cannot read IR file")


def test_corrupted_and_foreign_ir(tmp_path, senimate):
    data = Path(senimate).read_bytes()
    truncated = tmp_path / "truncated.ir"
    truncated.write_bytes(data[: len(data) // 2])
    assert_one_line_error(mgi("run", truncated), "truncated or corrupted")
    flipped = tmp_path / "flipped.ir"
    flipped.write_bytes(data[:-5] + bytes(b ^ 0xFF for b in data[-5:]))
    assert_one_line_error(mgi("run", flipped), str(flipped))
    foreign = tmp_path / "scenario.ir"
    foreign.write_bytes((ROOT / "scenarios" / "senimate.json").read_bytes())
    assert_one_line_error(mgi("run", foreign), "not a Mago IR file")


def test_fuzz_checks_every_node_at_load(tmp_path, senimate):
    """`mgi run` builds a node's table on first use; `mgi fuzz` explores every node, so it
    checks them all before it starts (a hand-made node with a bad index, checksum recomputed)."""
    _, program = ir.decode_ir(Path(senimate).read_bytes())
    last = program.nodes[-1]
    bad = msgspec.structs.replace(last, transitions=[ir.Transition(999, None, 0)])
    forged = tmp_path / "forged_node.ir"
    forged.write_bytes(ir.encode_ir(msgspec.structs.replace(
        program, nodes=[*program.nodes[:-1], bad]), "0.1.0", "0" * 64))
    assert_one_line_error(mgi("fuzz", forged, "--examples", "5", "--seed", "1"),
                          "targets index 999")
    opened = mgi("run", forged, "--json", stdin="")  # the entry node is fine: it opens
    assert opened.returncode == 0 and json_turns(opened.stdout)[0]["node"] == program.nodes[0].id


def test_unknown_node(senimate):
    done = mgi("run", senimate, "--node", "nowhere", stdin="네\n")
    assert_one_line_error(done, "unknown node 'nowhere'")
    assert done.stdout == ""


@pytest.mark.parametrize("line, fragment", [
    ('{"user": "네"', "line 2: not valid JSON"),
    ('["네"]', "line 2: not a JSON object"),
    ('{"text": "네"}', "line 2: unknown key 'text'"),
    ('{"user": 3}', "line 2: \"user\" must be a string"),
    ('{"user": "네", "nlu": {"slots": []}}', "line 2: malformed nlu object"),
    ('{"user": "네", "nlu": "affirm"}', "line 2: nlu must be an object"),
])
def test_malformed_json_line_names_the_line(senimate, line, fragment):
    done = mgi("run", senimate, "--json", stdin=lines_of('{"user": "네"}', line, '{"user": "응"}'))
    assert_one_line_error(done, fragment)
    assert len(json_turns(done.stdout)) == 2  # the opening and line 1 ran, line 3 did not


def test_binary_input(senimate):
    assert_one_line_error(mgi("run", senimate, stdin=b"\x89PNG\r\n\x1a\n\x00\x00"),
                          "line 1: not UTF-8 text")
    assert_one_line_error(mgi("run", senimate, stdin=b"ok\n\x00\x01\x02\n"),
                          "line 2: binary data")
    assert_one_line_error(mgi("run", senimate, "--json", stdin=b"\xff\xfe{}\n"),
                          "line 1: not UTF-8 text")


def test_a_one_megabyte_line(senimate):
    done = mgi("run", senimate, stdin="네\n" + "가" * (1 << 20) + "\n")
    assert_one_line_error(done, "line 2: longer than")


def test_turn_after_completion(senimate):
    done = mgi("run", senimate, "--json", stdin=lines_of(
        '{"user": "그만할래요"}', '{"user": "고마워요"}', "", '{"user": "또 있어요"}'))
    assert_one_line_error(done, "line 4: the session is already complete (terminal)")
    assert json_turns(done.stdout)[-1]["complete"]
    trailing = mgi("run", senimate, stdin=lines_of("그만할래요", "고마워요", "", "  "))
    assert trailing.returncode == 0 and trailing.stderr == ""


def test_quit_ends_a_script(senimate):
    done = mgi("run", senimate, "--json", stdin=lines_of('{"user": "네"}', "/quit", "bad line"))
    assert done.returncode == 0 and len(json_turns(done.stdout)) == 2


def test_script_file_and_missing_script(tmp_path, senimate):
    script = tmp_path / "s.txt"
    script.write_text("\ufeff네\n그만할래요\r\n", encoding="utf-8")
    done = mgi("run", senimate, "--script", script, stdin="ignored\n")
    assert done.returncode == 0
    assert chat_lines(done.stdout)[1:4:2] == ["You  > 네", "You  > 그만할래요"]
    assert_one_line_error(mgi("run", senimate, "--script", tmp_path / "none.txt"),
                          "cannot read script")


def test_usage_errors_exit_2(senimate):
    assert mgi("run").returncode == 2
    assert mgi("run", senimate, "--output-level", "loud").returncode == 2
    assert mgi("frobnicate").returncode == 2
    assert mgi("--help").returncode == 0 and mgi("--version").returncode == 0


# --- mgi test -------------------------------------------------------------------------------


def test_mgi_test_exit_codes(tmp_path, irs):
    ir_dir = str(Path(irs["senimate"]).parent)
    good = tmp_path / "good.transcript"
    good.write_text("scenario: senimate\nbot:\n  says: SeniMate\nuser: 네 좋아요\n"
                    "  next: daily_life_check\n", encoding="utf-8")
    bad = tmp_path / "bad.transcript"
    bad.write_text("scenario: senimate\nuser: 네 좋아요\n  next: meal_check\n", encoding="utf-8")
    broken = tmp_path / "broken.transcript"
    broken.write_text("scenario: senimate\nuser: 네\n  nxt: x\n", encoding="utf-8")
    passed = mgi("test", good, "--ir-dir", ir_dir)
    assert passed.returncode == 0 and passed.stdout.splitlines()[-1] == "2 passed, 0 failed"
    failed = mgi("test", good, bad, "--ir-dir", ir_dir)
    assert failed.returncode == 1
    assert f"{bad}:3: expected next=meal_check, got daily_life_check" in failed.stdout
    assert mgi("test", broken, good, "--ir-dir", ir_dir).returncode == 2
    assert mgi("test", good, "--ir-dir", tmp_path).returncode == 2  # no IR there
    data = json.loads(mgi("test", bad, "--ir-dir", ir_dir, "--format", "json").stdout)
    assert (data["passed"], data["failed"]) == (0, 1)


# --- start-up hygiene -----------------------------------------------------------------------


def test_mgi_never_imports_the_compiler(tmp_path, senimate):
    script = tmp_path / "s.txt"
    script.write_text("네 좋아요\n", encoding="utf-8")
    code = (
        "import sys, io, contextlib\n"
        "import interpreter.cli.main as cli\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    try: cli.main(['run', {senimate!r}, '--script', {str(script)!r}])\n"
        "    except SystemExit as done: assert done.code == 0, done.code\n"
        "assert 'Mago >' in out.getvalue()\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('compiler', 'lark', 'networkx'))\n"
        "print(heavy)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_building_the_parser_loads_no_msgspec_struct():
    """`mgi`'s options, `serve`'s included, are built before the Ctrl-C guard of a command:
    nothing may define a msgspec Struct by then (a Ctrl-C inside msgspec's class creation
    crashed Python with SIGSEGV when `serve`'s defaults were read from the store module)."""
    code = ("import sys\nfrom interpreter.cli.main import build_parser\nbuild_parser()\n"
            "print('msgspec' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_importing_the_cli_loads_no_engine():
    code = ("import sys, interpreter.cli.main\n"
            "print(sorted(m for m in sys.modules if m.startswith('interpreter.')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    # files and streams import only os, stat and sys
    assert done.stdout.strip() == ("['interpreter.cli', 'interpreter.cli.console', "
                                   "'interpreter.cli.main', 'interpreter.cli.plugins', "
                                   "'interpreter.cli.streams', 'interpreter.files', "
                                   "'interpreter.service', 'interpreter.service.command']")


# --- the terminal ---------------------------------------------------------------------------


def spawn_on_terminal(home: Path, ir: str) -> tuple[int, int]:
    """`mgi run IR` on a pseudo-terminal with HOME=home: (pid, terminal fd)."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: never return into pytest
        try:
            os.environ["HOME"] = str(home)
            os.chdir(ROOT)
            os.execv(sys.executable, [sys.executable, "-m", "interpreter.cli", "run", ir])
        finally:
            os._exit(127)
    return pid, fd


def read_until(fd: int, seen: bytes, marker: bytes, timeout: float = 30) -> bytes:
    """What the terminal showed, read until `marker` appears."""
    import select

    while marker not in seen:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, seen.decode("utf-8", "replace")
        seen += os.read(fd, 4096)
    return seen


def finish(pid: int, fd: int) -> int:
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_interactive_session_with_history(tmp_path, senimate):
    """A real terminal: a prompt, replies, `/quit`, and the history written under $HOME."""
    pid, fd = spawn_on_terminal(tmp_path, senimate)
    seen = read_until(fd, b"", b"You  > ")
    os.write(fd, "네 좋아요\n".encode())
    seen = read_until(fd, seen, "요즘은 어떻게 지내세요".encode())
    os.write(fd, b"/quit\n")
    assert finish(pid, fd) == 0
    assert b"Traceback" not in seen
    assert "네 좋아요" in (tmp_path / ".mago_history").read_text(encoding="utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_interactive_end_of_input_and_an_unusable_home(tmp_path, senimate):
    """Ctrl-D ends the session; a home that cannot hold the history is no error."""
    pid, fd = spawn_on_terminal(tmp_path / "does" / "not" / "exist", senimate)
    seen = read_until(fd, b"", b"You  > ")
    os.write(fd, b"\x04")
    assert finish(pid, fd) == 0
    assert b"Traceback" not in seen
