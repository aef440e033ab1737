"""The transcript parser and runner behind `mgi test` (interpreter/transcripts/run.py).

The parser: every header and expectation key, comments, silent turns, NLU overrides, and an
error with the right line number for each way a file can be wrong. The runner: a passing and
a failing transcript on the compiled SeniMate scenario, a turn after completion, focus mode,
scripted NLU, and IR that cannot be loaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from interpreter.transcripts.run import (Expectation, TranscriptError, exit_status, load_transcript,
                                     parse_transcript, render_human, render_json, resolve_ir,
                                     run_files, run_transcript, same_value)


@pytest.fixture(scope="module")
def ir_dir(served_irs) -> Path:
    """The shipped scenarios, compiled once per test process (`served_irs`); read only."""
    return served_irs


def write(tmp_path: Path, text: str, name: str = "t.transcript") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def errors_at(text: str) -> tuple[int, str]:
    with pytest.raises(TranscriptError) as caught:
        parse_transcript(text, "t.transcript")
    return caught.value.line, caught.value.message


# --- parser ---------------------------------------------------------------------------------

FULL = """\
# a comment
scenario: senimate          # the IR is <ir-dir>/senimate.ir
nlu: rules
bot_first: true
focus: health_check

bot:
  node: greeting_introduction
  says: 안녕하세요
user: 응 좋아요             # a user turn
    nlu: {"dialogue_act": "affirm", "slots": {"x": "a # b"}}   # '#' inside JSON is kept
    node: greeting_introduction
    next: daily_life_check
    reason: default_next
    complete: false
    slots: {"meal_status": "skipped", "pain_level": null}
    says: 요즘
    says: 지내세요
    not-says: 다음에 또 뵐게요
user:
  reason: fallback:no_input
user:    # a silent turn with a comment
  next: -
"""


def test_every_key_is_parsed():
    t = parse_transcript(FULL, "x.transcript")
    assert (t.scenario, t.ir, t.nlu, t.bot_first, t.focus) == (
        "senimate", None, "rules", True, "health_check")
    assert [s.kind for s in t.steps] == ["bot", "user", "user", "user"]
    bot, turn, silent, silent2 = t.steps
    assert bot.text is None and bot.line == 7
    assert bot.expectations == (Expectation("node", "greeting_introduction", 8),
                                Expectation("says", "안녕하세요", 9))
    assert turn.text == "응 좋아요" and turn.line == 10
    assert turn.nlu == {"dialogue_act": "affirm", "slots": {"x": "a # b"}}
    keys = [(e.key, e.value) for e in turn.expectations]
    assert keys == [("node", "greeting_introduction"), ("next", "daily_life_check"),
                    ("reason", "default_next"), ("complete", False),
                    ("slots", {"meal_status": "skipped", "pain_level": None}),
                    ("says", "요즘"), ("says", "지내세요"), ("not-says", "다음에 또 뵐게요")]
    assert [e.line for e in turn.expectations] == list(range(12, 20))
    assert silent.text == "" and silent.expectations[0].value == "fallback:no_input"
    assert silent2.text == "" and silent2.expectations == (Expectation("next", None, 23),)


def test_defaults_and_ir_path(tmp_path):
    t = parse_transcript("ir: ../build/x.ir\nuser: 네\n", str(tmp_path / "sub" / "a.transcript"))
    assert (t.scenario, t.nlu, t.bot_first, t.focus) == (None, "rules", None, None)
    assert resolve_ir(t, "ignored") == tmp_path / "sub" / "../build/x.ir"
    t = parse_transcript("scenario: senimate\nuser: 네\n", "a.transcript")
    assert resolve_ir(t, tmp_path) == tmp_path / "senimate.ir"


def test_blank_lines_comments_and_crlf():
    t = parse_transcript("\r\n# c\r\nscenario: s\r\n\r\n   # indented comment\r\nuser: 네\r\n"
                         "  next: a\r\n", "a")
    assert t.steps[0].text == "네" and t.steps[0].expectations == (Expectation("next", "a", 7),)


@pytest.mark.parametrize("text, line, fragment", [
    ("scenario: s\nscenarioo: t\nuser: 네\n", 2, "did you mean `scenario`"),
    ("scenario: s\nuser: 네\n  nxt: a\n", 3, "did you mean `next`"),
    ("scenario: s\nuser: 네\n  bogus: a\n", 3, "unknown expectation `bogus`"),
    ("scenario: s\nuser: 네\nnlu: rules\n", 3, "must come before the first"),
    ("scenario: s\n  node: a\nuser: 네\n", 2, "outside a step"),
    ("scenario: s\nscenario: t\nuser: 네\n", 2, "given twice (first on line 1)"),
    ("scenario: s\nuser: 네\n  next: a\n  next: b\n", 4, "given twice"),
    ("scenario: s\nuser: 네\n  nlu: {}\n  nlu: {}\n", 4, "given twice"),
    ("scenario: s\nuser: 네\n  nlu: {\"dialogue_act\": \n", 3, "not valid JSON"),
    ("scenario: s\nuser: 네\n  nlu: [1]\n", 3, "must be a JSON object"),
    ("scenario: s\nuser: 네\n  nlu: {\"slots\": 3}\n", 3, "malformed nlu object"),
    ("scenario: s\nuser: 네\n  slots: {\"a\": 1} extra\n", 3, "text after its JSON object"),
    ("scenario: s\nuser: 네\n  complete: yes\n", 3, "expected `true` or `false`"),
    ("scenario: s\nbot_first: maybe\nuser: 네\n", 2, "expected `true` or `false`"),
    ("scenario: s\nnlu: llm\nuser: 네\n", 2, "`rules` or `scripted`"),
    ("scenario:\nuser: 네\n", 1, "needs a value"),
    ("scenario: s\nuser: 네\n  node:   # nothing\n", 3, "needs a value"),
    ("scenario: s\nuser: 네\nbot:\n", 3, "can only be the first step"),
    ("scenario: s\nbot: hello\n", 2, "takes no text"),
    ("scenario: s\nbot:\n  nlu: {}\n", 3, "the opening has no NLU"),
    ("scenario: s\nnot a key line\n", 2, "expected `key: value`"),
    ("scenario: s\nuser: 네\n  user: 응\n", 3, "must start at the beginning of the line"),
    ("scenario: s\nir: x.ir\nuser: 네\n", 2, "exactly one of"),
    ("nlu: rules\n\nuser: 네\n", 3, "exactly one of"),
    ("scenario: s\nnlu: scripted\nuser: 네\n  next: a\n", 3, "needs an `nlu:` line"),
    ("scenario: s\n", 0, "no steps"),
])
def test_errors_name_their_line(text, line, fragment):
    got_line, message = errors_at(text)
    assert (got_line, fragment in message) == (line, True), message


def test_line_numbers_count_newlines_only():
    line, _ = errors_at("scenario: s\nuser: 네\u2028요\n  nxt: a\n")
    assert line == 3


def test_scripted_allows_silent_turns_without_nlu():
    t = parse_transcript("scenario: s\nnlu: scripted\nuser:\nuser: 네\n  nlu: {}\n", "a")
    assert [s.nlu for s in t.steps] == [None, {}]


def test_error_text_has_path_and_line(tmp_path):
    path = write(tmp_path, "scenario: s\nuser: 네\n  nxt: a\n")
    with pytest.raises(TranscriptError, match=r"t\.transcript:3: unknown expectation `nxt`"):
        load_transcript(path)


def test_unreadable_and_binary_files(tmp_path):
    with pytest.raises(TranscriptError, match="cannot read"):
        load_transcript(str(tmp_path / "missing.transcript"))
    path = tmp_path / "bin.transcript"
    path.write_bytes(b"scenario: s\nuser: \xff\xfe\n")
    with pytest.raises(TranscriptError) as caught:
        load_transcript(str(path))
    assert caught.value.line == 2 and "UTF-8" in caught.value.message


def test_json_equality_of_slot_values():
    assert same_value(1, 1.0) and same_value(None, None) and same_value("a", "a")
    assert not same_value(True, 1) and not same_value(1, True) and not same_value(None, "")
    assert same_value([1, "a"], [1, "a"]) and not same_value([True], [1])


# --- runner ---------------------------------------------------------------------------------

PASSING = """\
scenario: senimate
bot:
  node: greeting_introduction
  next: greeting_introduction
  reason: opening
  says: SeniMate
user: 네 좋아요
  node: greeting_introduction
  next: daily_life_check
  reason: default_next
  complete: false
  says: 요즘은 어떻게 지내세요?
user:
  reason: fallback:no_input
  next: daily_life_check
user: 아침에 공원에서 산책했어요
  next: meal_check
  slots: {"daily_life": "아침에 공원에서 산책했어요", "meal_status": null}
user: 밥을 못 먹었어요
  nlu: {"dialogue_act": "inform", "slots": {"meal_status": "skipped"}}
  node: meal_check
  next: health_check
  slots: {"meal_status": "skipped"}
user: 이제 그만할래요
  next: conversation_closure
  reason: global:user_wants_to_end
  says: 고마워요
  not-says: 다음에 또 이야기 나눠요
user: 고마워요
  node: conversation_closure
  next: -
  reason: terminal
  complete: true
  says: 다음에 또 이야기 나눠요
"""


def test_a_passing_transcript(tmp_path, ir_dir):
    results = run_files([write(tmp_path, PASSING)], ir_dir)
    assert exit_status(results) == 0, render_human(results)
    (result,) = results
    assert result.passed and len(result.steps) == 7
    assert [s.turn["turn"] for s in result.steps] == [1, 2, 3, 4, 5, 6, 7]
    report = render_human(results)
    assert "✓ step 2 (user: 네 좋아요)" in report and "✓ step 3 (user: (silence))" in report
    assert report.splitlines()[-1] == "7 passed, 0 failed"


def test_a_failing_transcript_reports_each_expectation_and_goes_on(tmp_path, ir_dir):
    text = PASSING.replace("  next: meal_check\n", "  next: health_check\n") \
                  .replace("  says: SeniMate\n", "  says: 없는 말\n  not-says: 안녕하세요\n")
    path = write(tmp_path, text)
    (result,) = run_files([path], ir_dir)
    failed = [s for s in result.steps if not s.passed]
    assert [s.index for s in failed] == [1, 4]
    opening = failed[0].failures
    assert [(f.line, f.key) for f in opening] == [(6, "says"), (7, "not-says")]
    (wrong_next,) = failed[1].failures
    assert wrong_next.line == 18
    assert wrong_next.message == "expected next=health_check, got meal_check (reason default_next)"
    assert len(result.steps) == 7 and result.steps[-1].passed  # the conversation went on
    report = render_human([result])
    assert "✗ step 4 (user: 아침에 공원에서 산책했어요)" in report
    assert f"{path}:18: expected next=health_check, got meal_check" in report
    assert report.splitlines()[-1] == "5 passed, 2 failed"
    assert exit_status([result]) == 1


def test_slot_and_fragment_failures_say_what_was_there(tmp_path, ir_dir):
    text = ("scenario: senimate\nuser: 네 좋아요\n  slots: {\"daily_life\": \"x\"}\n"
            "  says: 식사\n  complete: true\n")
    (result,) = run_files([write(tmp_path, text)], ir_dir)
    messages = [f.message for f in result.steps[0].failures]
    assert messages[0].startswith('expected slots.daily_life="x", got null')
    assert messages[1].startswith("expected the response to say '식사', got '요즘은")
    assert messages[2].startswith("expected complete=true, got false")


def test_a_turn_after_completion_fails_and_stops(tmp_path, ir_dir):
    text = ("scenario: senimate\nuser: 그만할래요\nuser: 고마워요\n  complete: true\n"
            "user: 또 할 말이 있어요\nuser: 네\n")
    (result,) = run_files([write(tmp_path, text)], ir_dir)
    assert [s.passed for s in result.steps] == [True, True, False]
    (failure,) = result.steps[-1].failures
    assert failure.line == 5 and "complete" in failure.message
    assert result.not_run == 1 and exit_status([result]) == 1
    assert "1 later step(s) not run" in render_human([result])


def test_bot_step_without_bot_first(tmp_path, ir_dir):
    text = "scenario: senimate\nbot_first: false\nbot:\n  node: greeting_introduction\nuser: 안녕\n"
    (result,) = run_files([write(tmp_path, text)], ir_dir)
    assert "bot-first is off" in result.steps[0].failures[0].message
    assert result.steps[1].turn["turn"] == 1


def test_focus_mode_stays_on_the_node(tmp_path, ir_dir):
    text = ("scenario: senimate\nfocus: health_check\nbot:\n  node: health_check\n"
            "user: 괜찮아요\n  node: health_check\n  next: general_conversation\n"
            "user: 무릎이 아파요\n  node: health_check\n  next: health_check\n"
            "  reason: next_nodes[0]\n")
    (result,) = run_files([write(tmp_path, text)], ir_dir)
    assert result.passed, render_human([result])


def test_unknown_focus_node_is_an_error_at_its_line(tmp_path, ir_dir):
    text = "scenario: senimate\nfocus: nowhere\nuser: 네\n"
    (result,) = run_files([write(tmp_path, text)], ir_dir)
    assert result.error.line == 2 and "unknown node 'nowhere'" in result.error.message
    assert exit_status([result]) == 2


def test_scripted_nlu_takes_the_override(tmp_path, ir_dir):
    text = ("scenario: senimate\nnlu: scripted\nuser: 아무 말\n  nlu: {\"dialogue_act\": \"affirm\"}\n"
            "  next: daily_life_check\nuser: 그만\n  nlu: {\"intent\": \"user_wants_to_end\"}\n"
            "  next: conversation_closure\n")
    (result,) = run_files([write(tmp_path, text)], ir_dir)
    assert result.passed, render_human([result])
    assert result.steps[1].turn["nlu"]["intent"] == "user_wants_to_end"


def test_ir_path_relative_to_the_transcript(tmp_path, ir_dir):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "x.ir").write_bytes((ir_dir / "senimate.ir").read_bytes())
    sub = tmp_path / "tests" / "deep"
    sub.mkdir(parents=True)
    path = write(sub, "ir: ../../build/x.ir\nuser: 네\n  next: daily_life_check\n")
    (result,) = run_files([path], "nowhere")  # --ir-dir plays no part with `ir:`
    assert result.error is None and result.passed


def test_unloadable_ir_is_reported_and_later_transcripts_still_run(tmp_path, ir_dir):
    bad = tmp_path / "bad.ir"
    bad.write_bytes(b"not an IR file at all")
    first = write(tmp_path, "scenario: missing\nuser: 네\n", "a.transcript")
    second = write(tmp_path, "ir: bad.ir\n\nuser: 네\n", "b.transcript")
    third = write(tmp_path, "scenario: senimate\nuser: 네\n  next: daily_life_check\n",
                  "c.transcript")
    broken = write(tmp_path, "scenario: senimate\nuser: 네\n  nxt: a\n", "d.transcript")
    results = run_files([first, second, third, broken], ir_dir)
    assert results[0].error.line == 1 and "cannot read IR file" in results[0].error.message
    assert "--ir-dir" in results[0].error.message
    assert results[1].error.line == 1 and "not a Mago IR file" in str(results[1].error)
    assert results[2].passed
    assert results[3].error.line == 3
    assert exit_status(results) == 2
    report = render_human(results)
    assert report.splitlines()[-1] == "1 passed, 0 failed, 3 transcript(s) could not run"


def test_json_report(tmp_path, ir_dir):
    import json

    path = write(tmp_path, "scenario: senimate\nuser: 네 좋아요\n  next: meal_check\n")
    data = json.loads(render_json(run_files([path], ir_dir)))
    assert (data["passed"], data["failed"], data["errors"]) == (0, 1, 0)
    step = data["transcripts"][0]["steps"][0]
    assert step["line"] == 2 and step["user"] == "네 좋아요" and not step["passed"]
    assert step["failures"] == [{"line": 3, "key": "next", "message":
                                 "expected next=meal_check, got daily_life_check "
                                 "(reason default_next)"}]
    assert set(step["turn"]) == {"turn", "user", "node", "next_node", "reason", "complete",
                                 "response", "slots", "nlu", "passed"}


def test_run_transcript_directly(ir_dir):
    from interpreter.loader import load_program

    transcript = parse_transcript("scenario: senimate\nuser: 네\n  next: daily_life_check\n")
    result = run_transcript(transcript, load_program(ir_dir / "senimate.ir"))
    assert result.passed
