"""`mgi run --nlu llm --nlg llm` as a user runs it: a child process against the loopback server.
Flags and environment, one-line errors for missing settings, every server failure ending in a
valid turn with exit 0 and no traceback (a server dripping its answer within the turn's budget),
the trace at the detailed level, the whole prompt and raw answer at the debug level, and an API
key that is never printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support.llm_server import DRIPS, ROOT, Reply

SECRET = "sk-never-print-me-42"
AFFIRM = '{"intent": null, "dialogue_act": "affirm", "slots": {}}'
TO_END = '{"intent": "user_wants_to_end", "dialogue_act": "inform", "slots": {}}'


@pytest.fixture(scope="module")
def senimate_ir(served_irs) -> str:
    """The reference scenario, compiled once per test process (`served_irs`)."""
    return str(served_irs / "senimate.ir")


def mgi(*args: str, stdin: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    """`mgi ARGS...` in a child process; no MAGO_LLM_* from the caller's environment leaks in."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("MAGO_LLM_")}
    done = subprocess.run([sys.executable, "-m", "interpreter.cli", *args], cwd=ROOT,
                          input=stdin.encode(), capture_output=True, timeout=60,
                          env={**base, **(env or {})})
    out = subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(),
                                      done.stderr.decode())
    assert "Traceback" not in out.stdout + out.stderr, out.stderr
    return out


def llm_env(server, **extra) -> dict:
    return {"MAGO_LLM_URL": server.url, "MAGO_LLM_MODEL": "test-model", **extra}


def turns(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def test_both_llm_plug_ins_run_a_conversation(llm, senimate_ir):
    llm.nlu(AFFIRM, TO_END)
    llm.nlg("반가워요! 요즘 어떻게 지내세요?", "네, 오늘 고마웠어요. 편히 쉬세요.")
    done = mgi("run", senimate_ir, "--nlu", "llm", "--nlg", "llm", "--json",
               stdin='{"user": "응"}\n{"user": "됐어 그만"}\n', env=llm_env(llm))
    assert done.returncode == 0 and done.stderr == ""
    opening, first, second = turns(done.stdout)
    assert opening["reason"] == "opening"  # a declared opening sentence: no LLM call
    assert (first["reason"], first["response"]) == ("default_next", "반가워요! 요즘 어떻게 지내세요?")
    assert first["nlu"]["dialogue_act"] == "affirm"
    assert (second["reason"], second["next_node"]) == ("global:user_wants_to_end",
                                                       "conversation_closure")
    assert [r["model"] for r in llm.requests] == ["test-model"] * 4


def test_flags_win_over_the_environment(llm, senimate_ir):
    done = mgi("run", senimate_ir, "--nlu", "llm", "--llm-url", llm.url, "--llm-model", "flagged",
               "--json", stdin='{"user": "응"}\n',
               env={"MAGO_LLM_URL": "http://127.0.0.1:9/v1", "MAGO_LLM_MODEL": "env-model"})
    assert done.returncode == 0
    assert [r["model"] for r in llm.requests] == ["flagged"]


@pytest.mark.parametrize("args,env,fragment", [
    (["--nlu", "llm"], {}, "--nlu llm needs the server's URL and model: set MAGO_LLM_URL and "
                           "MAGO_LLM_MODEL or pass --llm-url and --llm-model"),
    (["--nlg", "llm", "--llm-url", "http://127.0.0.1:9/v1"], {},
     "--nlg llm needs the server's model"),
    (["--nlu", "llm", "--nlg", "llm"], {"MAGO_LLM_MODEL": "m"},
     "--nlu llm and --nlg llm need the server's URL"),
    (["--nlu", "llm", "--llm-url", "localhost:8000", "--llm-model", "m"], {},
     "the LLM URL must look like http://localhost:11434/v1"),
    (["--nlu", "llm", "--llm-timeout", "soon"], {"MAGO_LLM_URL": "http://h/v1",
                                                 "MAGO_LLM_MODEL": "m"},
     "--llm-timeout must be a number of seconds above 0 and at most 86400, got 'soon'"),
    (["--nlu", "llm", "--llm-timeout", "1e300"], {"MAGO_LLM_URL": "http://h/v1",
                                                  "MAGO_LLM_MODEL": "m"},
     "--llm-timeout must be a number of seconds above 0 and at most 86400, got '1e300'"),
    (["--nlg", "llm"], {"MAGO_LLM_URL": "http://h/v1", "MAGO_LLM_MODEL": "m",
                        "MAGO_LLM_BUDGET": "inf"},
     "MAGO_LLM_BUDGET must be a number of seconds above 0 and at most 86400, got 'inf'"),
    (["--nlu", "llm"], {"MAGO_LLM_URL": "http://h/v1", "MAGO_LLM_MODEL": "m",
                        "MAGO_LLM_API_KEY": f"{SECRET}\r\nX-Evil: 1"},
     "the LLM API key ($MAGO_LLM_API_KEY) contains a line break; check how it was set"),
    (["--nlu", "llm", "--llm-api-key", f"키{SECRET}"], {"MAGO_LLM_URL": "http://h/v1",
                                                       "MAGO_LLM_MODEL": "m"},
     "the LLM API key (--llm-api-key) contains a non-ASCII character; check how it was set"),
])
def test_missing_or_bad_settings_are_one_line_and_exit_2(senimate_ir, args, env, fragment):
    done = mgi("run", senimate_ir, *args, stdin="네\n", env=env)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("mgi: ") and fragment in line, line
    assert SECRET not in line


def test_defaults_stay_rules_and_template_whatever_the_environment(llm, senimate_ir):
    done = mgi("run", senimate_ir, "--json", stdin='{"user": "네"}\n', env=llm_env(llm))
    assert done.returncode == 0 and llm.requests == []


@pytest.mark.parametrize("nlu,nlg,kinds", [("llm", "template", {"nlu"}),
                                           ("rules", "llm", {"nlg"})])
def test_mixed_plug_ins_ask_the_llm_only_for_their_part(llm, senimate_ir, nlu, nlg, kinds):
    done = mgi("run", senimate_ir, "--nlu", nlu, "--nlg", nlg, "--json", stdin='{"user": "네"}\n',
               env=llm_env(llm))
    assert done.returncode == 0
    assert {kind for kind in ("nlu", "nlg") if llm.of(kind)} == kinds


def test_every_failure_ends_in_a_valid_turn_with_one_warning(llm, senimate_ir):
    llm.nlu(Reply(delay=0.5), Reply(status=500), Reply(status=500), Reply(drop=True),
            Reply(drop=True), Reply(body=b"<html>"), '{"intent": "nope"}',
            '{"intent": "nope"}', '{"intent": null, "dialogue_act": "inform", "slots": '
                                  '{"meal_status": 3}}', "null")
    llm.nlg(Reply(delay=0.5), Reply(status=503), Reply(status=503), "", Reply(body=b"{"))
    llm.default_nlu = Reply('{"intent": null, "dialogue_act": "thank", "slots": {}}')
    script = "".join(f'{{"user": "{t}"}}\n' for t in ("네 좋아요", "산책했어요", "친구를 만났어요",
                                                       "밥 먹었어요", "그만할래요", "고마워요"))
    done = mgi("run", senimate_ir, "--nlu", "llm", "--nlg", "llm", "--json",
               "--llm-timeout", "0.2", stdin=script, env=llm_env(llm))
    assert done.returncode == 0
    results = turns(done.stdout)
    assert len(results) == 7 and results[-1]["complete"]
    assert all(r["response"] for r in results)
    (warning,) = done.stderr.splitlines()
    assert warning == ("mgi: warning: the LLM NLU failed (timeout after 0.2 s); rules took over "
                       "(--output-level detailed shows every turn's source)")


def call_milliseconds(line: str) -> int:
    """The time of one `llm call · PURPOSE · STATUSES · N ms · ...` line."""
    return int(line.split(" · ")[3].removesuffix(" ms"))


def test_a_dripping_server_never_holds_a_turn_past_its_budget(llm, senimate_ir):
    # A piece every 0.3 s (headers, body, chunks, endless 100 Continue): no single read waits
    # a second, so a per-read timeout would wait for the whole answer or for ever.
    llm.nlu(*[Reply(AFFIRM, drip=kind) for kind in DRIPS])
    llm.nlg(*[Reply("좋아요!", drip=kind) for kind in DRIPS])
    done = mgi("run", senimate_ir, "--nlu", "llm", "--nlg", "llm", "--output-level", "detailed",
               "--llm-timeout", "1", "--llm-budget", "1.5", env=llm_env(llm),
               stdin="산책했어요\n친구를 만났어요\n밥 먹었어요\n네 좋아요\n")
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    calls = [line for line in lines if line.startswith("  llm call · ")]
    assert [call.split(" · ")[1] for call in calls] == ["nlu", "nlg"] * len(DRIPS)
    # The first turn is not timed: the rules NLU's morphological analyser (SPEC 13.1) loads in
    # the background meanwhile and can hold the interpreter for seconds (a known cost, noted
    # in issue 22's closing note); every later turn holds its budget.
    for nlu_call, nlg_call in zip(calls[2::2], calls[3::2]):  # one turn's calls
        assert call_milliseconds(nlu_call) + call_milliseconds(nlg_call) < 1500 + 500, calls
    assert lines.count("  nlu: rules (llm fallback: timeout after 1.0 s)") == len(DRIPS)
    assert lines.count("  nlg: template (llm fallback: turn budget of 1.5 s spent)") == \
        len(DRIPS)
    # The rules NLU that takes over may, on the first turn only, wait for its morphological
    # analyser to finish loading (seconds, SPEC 13.1): that turn's budget is then spent before
    # its NLG call is sent. Every other call is sent once: a timeout is not retried.
    unsent = [i for i, call in enumerate(calls) if " · not sent · " in call]
    assert unsent in ([], [1]), calls
    assert len(llm.requests) == len(calls) - len(unsent)


def test_a_server_that_is_down_still_runs_the_conversation(senimate_ir):
    done = mgi("run", senimate_ir, "--nlu", "llm", "--nlg", "llm", "--output-level", "detailed",
               "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m",
               stdin="네 좋아요\n그만할래요\n고마워요\n")
    assert done.returncode == 0 and done.stderr == ""
    assert "── conversation complete (terminal) ──" in done.stdout
    assert "  nlu: rules (llm fallback: cannot reach http://127.0.0.1:9/v1/chat/completions" \
        in done.stdout
    assert "  nlg: template (llm fallback: cannot reach" in done.stdout


def test_detailed_shows_which_nlu_and_nlg_spoke(llm, senimate_ir):
    llm.nlu(AFFIRM, Reply(delay=0.5))
    llm.nlg("좋아요!")
    done = mgi("run", senimate_ir, "--nlu", "llm", "--nlg", "llm", "--output-level", "detailed",
               "--llm-timeout", "0.2", stdin="응\n산책했어요\n", env=llm_env(llm))
    lines = done.stdout.splitlines()
    assert "  nlu: llm" in lines and "  nlg: llm" in lines
    assert "  nlu: rules (llm fallback: timeout after 0.2 s)" in lines
    assert any(line.startswith("  llm call · nlu · 200 · ") for line in lines)
    assert "request:" not in done.stdout  # the whole prompt is for debug


def test_debug_prints_every_prompt_and_raw_answer_but_never_the_key(llm, senimate_ir):
    llm.nlu('```json\n' + AFFIRM + '\n```')
    llm.nlg("반가워요!")
    done = mgi("run", senimate_ir, "--nlu", "llm", "--nlg", "llm", "--output-level", "debug",
               stdin="응\n", env=llm_env(llm, MAGO_LLM_API_KEY=SECRET))
    assert done.returncode == 0
    assert llm.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in done.stdout + done.stderr
    out = done.stdout
    assert f"    request: POST {llm.url}/chat/completions" in out
    assert '"response_format": {"type": "json_schema"' in out
    for line in llm.requests[0]["messages"][0]["content"].splitlines():  # the NLU prompt, whole
        assert ("      " + line).rstrip() in out.splitlines() or not line.strip()
    for line in llm.requests[1]["messages"][0]["content"].splitlines():  # the NLG prompt, whole
        assert ("      " + line).rstrip() in out.splitlines() or not line.strip()
    assert "      ```json" in out.splitlines()  # the raw answer, as it came
    assert "Mago > 반가워요!" in out.splitlines()
