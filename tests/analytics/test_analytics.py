"""Analytics (SPEC 16): the event record, `mgi run --events`, the tally and `mgi report`.

The events come from real runs of `mgi run` on the shipped clinic scenario (the rules NLU,
as a user would type), or are written by hand where the test is about the tally's rules
(abandonment after 30 minutes, a session that comes back, transient hops).
"""

from __future__ import annotations

import json
import re

from hypothesis import given, strategies as st

from interpreter.analytics.aggregate import ABANDON_SECONDS, Aggregator, median
from interpreter.analytics.events import STARTED, Event, mask
from test_mgi_cli import assert_one_line_error, irs, mgi  # noqa: F401 - irs is a fixture

FULL_BOOKING = ["네 예약하고 싶어요", "홍길동이에요", "1958년생이에요",
                "무릎이 아파서 정형외과로 가고 싶어요", "2025-03-14", "hong@example.com",
                "없어요", "네 맞아요", "감사합니다"]
PATH = ["greeting", "collect_patient_info", "collect_visit_info", "collect_contact",
        "ask_note", "confirm_booking", "booking_done"]
NONSENSE = "쿠루룽 qwzx 42번 010-1234-5678 hong@example.com"


def run_with_events(irs, tmp_path, lines, *extra):  # noqa: F811
    events = tmp_path / "events.jsonl"
    done = mgi("run", irs["clinic_booking"], "--events", events, *extra,
               stdin="".join(line + "\n" for line in lines))
    assert done.returncode == 0, done.stderr
    return events, [json.loads(line) for line in events.read_text().splitlines()]


def report(source, *extra) -> dict:
    done = mgi("report", source, "--format", "json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_run_writes_one_event_per_turn_and_its_start(irs, tmp_path):  # noqa: F811
    _, events = run_with_events(irs, tmp_path, FULL_BOOKING)
    assert [e.get("kind", "turn") for e in events] == [STARTED] + ["turn"] * len(FULL_BOOKING)
    assert [e["turn"] for e in events] == list(range(1, len(FULL_BOOKING) + 2))
    assert len({e["session_id"] for e in events}) == 1
    assert events[-1]["complete"] and events[-1]["reason"] == "terminal"
    assert events[2]["filled"] == ["patient_name"] and events[3]["filled"] == ["birth_year"]
    assert all("text" not in e for e in events)  # no user text by default
    assert all(e["scenario"] == "clinic_booking" and len(e["ir_hash"]) == 64 for e in events)


def test_the_report_of_a_run_counts_its_path(irs, tmp_path):  # noqa: F811
    file, _ = run_with_events(irs, tmp_path, FULL_BOOKING)
    run_with_events(irs, tmp_path, FULL_BOOKING[:3])  # a second run, the same file
    (version,) = report(file, "--now", "2099-01-01")["scenarios"]
    assert version["sessions"] == {"started": 2, "completed": 1, "abandoned": 1, "active": 0,
                                   "resumed": 0}
    assert version["completion_rate"] == 0.5 and version["median_turns_to_complete"] == 10
    taken = {(e["from"], e["to"]): e["count"] for e in version["transitions"]}
    assert taken == {(a, b): 2 if b in PATH[:3] else 1 for a, b in zip(PATH, PATH[1:])}
    nodes = {n["node"]: n for n in version["nodes"]}
    assert nodes["collect_visit_info"]["drop_offs"] == 1  # where the short run stopped
    assert nodes["greeting"]["visits"] == 2 and nodes["booking_done"]["exits"] == {"terminal": 1}
    assert nodes["collect_patient_info"]["exits"] == {"default_next": 2}
    # made now, the short run is still active (it spoke less than 30 minutes ago)
    assert report(file)["scenarios"][0]["sessions"]["active"] == 1


def test_kept_text_is_masked_and_absent_without_the_option(irs, tmp_path):  # noqa: F811
    # the words carry an e-mail address the rules NLU would take as the contact slot: the
    # line's own NLU result says nothing was understood
    lines = [json.dumps({"user": "네 예약하고 싶어요"}, ensure_ascii=False),
             json.dumps({"user": NONSENSE, "nlu": {"dialogue_act": None}}, ensure_ascii=False),
             json.dumps({"user": ""})]
    (tmp_path / "plain").mkdir()
    _, plain = run_with_events(irs, tmp_path / "plain", lines, "--json")
    assert all("text" not in e for e in plain)
    file, kept = run_with_events(irs, tmp_path, lines, "--json", "--keep-unmatched")
    texts = [e["text"] for e in kept if "text" in e]
    assert texts == ["쿠루룽 qwzx ##번 <phone> <email>"]
    assert kept[2]["fallback"] == "not_understood" and kept[3]["fallback"] == "no_input"
    (version,) = report(file)["scenarios"]
    assert version["unmatched"] == {"collect_patient_info": [{"text": texts[0], "count": 1}]}
    assert "1234" not in file.read_text() and "hong@" not in file.read_text()


def test_keep_unmatched_needs_an_events_file(irs):  # noqa: F811
    assert_one_line_error(mgi("run", irs["clinic_booking"], "--keep-unmatched", stdin=""),
                          "--events FILE")


def test_report_errors_are_one_line(tmp_path):
    assert_one_line_error(mgi("report", tmp_path / "none.jsonl"), "cannot read the events")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"time": 1}\n')
    assert_one_line_error(mgi("report", bad), "event 1 is not an event")
    assert_one_line_error(mgi("report", bad, "--since", "yesterday"), "--since 'yesterday'")


def test_report_to_a_file_in_each_format(irs, tmp_path):  # noqa: F811
    file, _ = run_with_events(irs, tmp_path, FULL_BOOKING)
    for fmt in ("text", "json", "html"):
        out = tmp_path / f"report.{fmt}"
        done = mgi("report", file, "--format", fmt, "-o", out)
        assert done.returncode == 0 and done.stdout == "", done.stderr
        assert "clinic_booking" in out.read_text()
    assert "1 started, 1 completed" in (tmp_path / "report.text").read_text()
    assert not list(tmp_path.glob(".mgi-report-*"))


# --- the tally's rules, on events written by hand ---------------------------------------------

def event(session, when, node=None, next_node=None, kind="turn", **fields) -> Event:
    return Event(time=when, scenario="s", ir_hash="h" * 64, session_id=session, kind=kind,
                 node=node, next_node=next_node, reason=fields.pop("reason", "default_next"),
                 **fields)


def test_quiet_sessions_are_abandoned_and_those_that_come_back_resumed():
    gap = ABANDON_SECONDS + 60
    events = [event("a", 0, "start", "start", STARTED), event("b", 1, "start", "start", STARTED),
              event("a", 2, "start", "ask", turn=2),
              event("b", 3, "start", "ask", turn=2),
              # c keeps the stream going long after a and b went quiet
              event("c", 5000, "start", "start", STARTED),
              event("a", 2 + gap, "ask", "done", turn=3, idle=gap),  # a comes back
              event("a", 3 + gap, "done", None, turn=4, complete=True, reason="terminal")]
    result = Aggregator(now=3 + gap + 10).add_all(events).report()
    (version,) = result["scenarios"]
    assert version["sessions"] == {"started": 3, "completed": 1, "abandoned": 1, "active": 1,
                                   "resumed": 1}
    nodes = {n["node"]: n for n in version["nodes"]}
    assert nodes["ask"]["drop_offs"] == 1  # b's, a's taken back
    assert nodes["done"]["exits"] == {"terminal": 1}


def test_transient_hops_count_as_visits_and_transitions():
    events = [event("a", 0, "start", "start", STARTED),
              event("a", 1, "start", "end", passed=(("check", "next_nodes[0]"),),
                    reason="default_next")]
    (version,) = Aggregator().add_all(events).report()["scenarios"]
    nodes = {n["node"]: n for n in version["nodes"]}
    assert nodes["check"]["visits"] == 1 and nodes["check"]["exits"] == {"next_nodes[0]": 1}
    assert {(e["from"], e["to"]) for e in version["transitions"]} == {("start", "check"),
                                                                        ("check", "end")}


def test_scenario_and_since_filter_and_versions_are_apart():
    events = [event("a", 10, "n", "n", STARTED),
              Event(time=20, scenario="s", ir_hash="g" * 64, session_id="b", kind=STARTED,
                    node="n"),
              Event(time=30, scenario="other", ir_hash="g" * 64, session_id="c",
                    kind=STARTED, node="n")]
    assert len(Aggregator().add_all(events).report()["scenarios"]) == 3
    only = Aggregator("s", since=15).add_all(events).report()
    assert [v["ir_hash"][0] for v in only["scenarios"]] == ["g"] and only["events"] == 1


def test_median_of_counted_values():
    from collections import Counter

    assert median(Counter()) is None
    assert median(Counter({3: 1})) == 3
    assert median(Counter({2: 1, 4: 1})) == 3
    assert median(Counter({1: 2, 9: 1})) == 1


@given(st.text(alphabet=st.sampled_from("가나 ab.@-+()0123456789x"), max_size=40))
def test_masked_text_holds_no_digit(text):
    assert not re.search(r"\d", mask(text))


def test_mask_names_what_it_hid():
    assert mask("제 메일은 kim.s+1@mail.co.kr 예요") == "제 메일은 <email> 예요"
    assert mask("010-1234-5678로 전화") == "<phone>로 전화"
    assert mask("+82 10 1234 5678") == "<phone>"
    assert mask("3시에 2명") == "#시에 #명"
