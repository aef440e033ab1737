"""The playground (SPEC 12, issue 17) in a real headless Chromium against a real `mgi serve`.

Debian's `chromium`, driven by Playwright with `executable_path` (`.ci/run` installs it; the
tests are skipped, with the reason, only where it is missing). One server on a loopback
port serves the shipped scenarios; each test opens the page as a designer would: a booking
conversation on clinic_booking (the bubbles, the node highlighted in the SVG, a trace row
with the value it read, the page's load time), a pasted scenario with an error (its
diagnostic with line and hint), "Save as transcript" replayed by `mgi test`, the keyboard
alone, a 375 px wide phone, and a server with an API key. The screenshots go to the test's
temporary folder, or to the folder `MAGO_SCREENSHOTS` names (the README's picture,
tests/screenshots/playground.png, is a copy of playground.png made that way).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.playground_browser import Playground, chromium_path
from support.service_server import ROOT, ServiceServer

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                                                            "(pip install -e '.[dev]')")
CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium browser (Debian: apt-get "
                                                         "install chromium; .ci/run does)")
LOAD_TARGET_MS = 1000  # issue 17: the page loads in under 1 s from a local server
LOAD_LIMIT_MS = 3000  # what fails the test on a loaded 2-core machine (the target is reported)
KEY = "playground-test-key-0123456789"
# clinic_booking from the greeting to completion, with a silent turn in the middle:
# (typed text or None for silence, node after the turn, reason shown, edge taken or None)
BOOKING = [
    ("네 예약하고 싶어요", "collect_patient_info", "default_next",
     ("greeting", "collect_patient_info")),
    ("홍길동이에요", "collect_patient_info", "gate:required_slots", None),
    ("1958년생이에요", "collect_visit_info", "default_next",
     ("collect_patient_info", "collect_visit_info")),
    (None, "collect_visit_info", "fallback:no_input", None),
    ("무릎이 아파서 정형외과로 가고 싶어요", "collect_visit_info", "gate:required_slots", None),
    ("2025-03-14", "collect_contact", "default_next", ("collect_visit_info", "collect_contact")),
    ("hong@example.com", "ask_note", "default_next", ("collect_contact", "ask_note")),
    ("없어요", "confirm_booking", "default_next", ("ask_note", "confirm_booking")),
    ("네 맞아요", "booking_done", "next_nodes[2]", ("confirm_booking", "booking_done")),
    ("감사합니다", "booking_done", "terminal", None),
]
SCREENSHOT_AFTER = 6  # turns: mid-conversation, a move with a full trace


def screenshot_path(name: str, tmp_path) -> str:
    """Where a screenshot goes: `MAGO_SCREENSHOTS` when set, else the test's own folder."""
    folder = os.environ.get("MAGO_SCREENSHOTS")
    return str((Path(folder) if folder else tmp_path) / name)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  accept_downloads=True)
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
    opened.on("response", lambda answer: problems.append(f"{answer.status}: {answer.url}")
              if answer.status >= 500 or "/playground" in answer.url and answer.status >= 400
              else None)
    yield opened
    context.close()
    assert not problems, problems  # no script error, no missing file, no server error


def mgi_test(transcript, ir_dir) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter.cli", "test", str(transcript),
                           "--ir-dir", str(ir_dir)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_a_booking_conversation_bubbles_graph_trace_and_the_load_time(service, page, tmp_path):
    pg = Playground(page, service.base).open("?scenario=clinic_booking")
    load_ms = pg.load_ms()
    print(f"\nbenchmark playground load: {load_ms:.0f} ms from navigation start to the graph "
          f"drawn (target {LOAD_TARGET_MS} ms)")
    assert load_ms < LOAD_LIMIT_MS, f"the page took {load_ms:.0f} ms to draw its graph"
    assert page.evaluate("document.activeElement.id") == "message"  # ready to type
    opening = pg.last_turn()
    assert opening["user"] is None and "진료 예약 도우미" in opening["bot"]
    assert opening["reason"].endswith("greeting (opening)") and pg.current_node() == "greeting"
    for index, (text, node, reason, edge) in enumerate(BOOKING, start=1):
        pg.silence() if text is None else pg.say(text)
        shown = pg.last_turn()
        assert shown["user"].endswith(text if text is not None else "(silence)"), shown
        assert shown["bot"] and f"({reason})" in shown["reason"], (index, shown)
        assert pg.current_node() == node, (index, text)
        assert pg.taken_edges() == ([edge] if edge else []), (index, text)
        assert pg.turns() == index + 1
        if index == 3:  # collect_patient_info -> collect_visit_info: default_next fired
            rows = pg.trace_rows()
            fired = [row for row in rows if row["fired"]]
            assert [row["rule"] for row in fired] == ["default_next"]
            assert any("system.required_slots_filled = true" in row["values"] and
                       row["result"] == "false" for row in rows), rows
            assert page.locator("#slots").inner_text().count("1958") == 1
        if index == SCREENSHOT_AFTER:
            page.screenshot(path=screenshot_path("playground.png", tmp_path), full_page=True)
    assert "홍길동님, 2025-03-14 정형외과 진료 예약이 완료됐어요" in \
        page.locator("#log > li").nth(9).inner_text()
    assert page.locator("#message").is_disabled()  # complete: the session takes no more turns
    assert "complete" in page.locator("#status").inner_text()


def test_a_turn_selected_in_the_conversation_shows_its_trace_and_its_place(service, page):
    pg = Playground(page, service.base).open("?scenario=clinic_booking")
    pg.say("네 예약하고 싶어요")
    pg.say("홍길동이에요")
    page.locator("#log > li").nth(1).locator("button.reason").click()
    assert page.locator("#log > li").nth(1).locator("button.reason").get_attribute(
        "aria-pressed") == "true"
    assert page.locator("#trace h3").inner_text().startswith("Turn 2 · greeting → "
                                                             "collect_patient_info")
    assert pg.current_node() == "collect_patient_info"
    assert pg.taken_edges() == [("greeting", "collect_patient_info")]
    assert {row["rule"] for row in pg.trace_rows()} >= {"global:user_wants_to_cancel",
                                                        "next_nodes[0]", "default_next"}


def test_a_pasted_scenario_with_an_error_shows_its_diagnostic_then_a_good_one_runs(service,
                                                                                   page):
    broken = json.loads((ROOT / "scenarios" / "clinic_booking.json").read_text("utf-8"))
    broken["graph"]["nodes"][0]["default_next"] = "nowhere_node"
    text = json.dumps(broken, ensure_ascii=False, indent=2)
    line = next(i for i, row in enumerate(text.split("\n"), 1) if "nowhere_node" in row)
    pg = Playground(page, service.base).open()
    page.locator("#paste-box > summary").click()
    page.fill("#paste", text)
    page.click("#paste-start")
    page.wait_for_selector("#diagnostics:not([hidden])")
    shown = page.locator("#diagnostics-list").inner_text()
    assert "E103" in shown and "nowhere_node" in shown and f"line {line}" in shown, shown
    assert "hint:" in shown
    page.locator("#diagnostics-list button").first.click()  # goes to the line in the text
    assert page.evaluate("document.activeElement.id") == "paste"
    start = page.evaluate("document.getElementById('paste').selectionStart")
    assert text[:start].count("\n") == line - 1
    broken["graph"]["nodes"][0]["default_next"] = "collect_patient_info"
    broken["metadata"]["name"] = "pasted_clinic"
    page.fill("#paste", json.dumps(broken, ensure_ascii=False, indent=2))
    page.click("#paste-start")
    page.wait_for_selector("#diagnostics", state="hidden")
    page.wait_for_selector("svg.graph g.node.current")
    assert pg.current_node() == "greeting" and pg.turns() == 1
    pg.say("네 예약하고 싶어요")
    assert pg.current_node() == "collect_patient_info"


def test_save_as_transcript_downloads_what_happened_and_mgi_test_passes_on_it(
        service, page, served_irs, tmp_path):
    pg = Playground(page, service.base).open("?scenario=clinic_booking")
    for text, *_ in BOOKING[:5]:
        pg.silence() if text is None else pg.say(text)
    with page.expect_download() as download:
        page.click("#save")
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == "clinic_booking.transcript"
    written = saved.read_text(encoding="utf-8")
    assert "scenario: clinic_booking" in written and "user: 홍길동이에요" in written
    assert "  next: collect_visit_info" in written and "reason: fallback:no_input" in written
    assert '"patient_name": "홍길동"' in written.replace('":"', '": "')
    assert written.count("  says: ") == 6  # the opening and five turns
    done = mgi_test(saved, served_irs)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 passed, 0 failed" in done.stdout


def test_a_transcript_of_a_focused_session_passes_too(service, page, served_irs, tmp_path):
    pg = Playground(page, service.base).open()
    page.locator("#start-form details > summary").click()
    page.select_option("#scenario", "clinic_booking")
    page.select_option("#opening", "user")
    page.fill("#focus", "confirm_booking")
    page.click("#start")
    page.wait_for_selector("svg.graph g.node.current")
    assert pg.turns() == 0 and pg.current_node() == "confirm_booking"
    pg.say("네 맞아요")
    assert pg.current_node() == "confirm_booking"  # focus: the session stays
    assert pg.taken_edges() == [("confirm_booking", "booking_done")]  # where it would go
    with page.expect_download() as download:
        page.click("#save")
    saved = tmp_path / "focus.transcript"
    download.value.save_as(saved)
    written = saved.read_text(encoding="utf-8")
    assert "focus: confirm_booking" in written and "bot_first: false" in written
    done = mgi_test(saved, served_irs)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_keyboard_alone_and_the_labels_a_screen_reader_reads(service, page):
    Playground(page, service.base).open("?scenario=clinic_booking")
    for role, name in (("combobox", "Registered scenario"), ("textbox", "Message"),
                       ("button", "Send"), ("button", "Send silence"),
                       ("button", "Save as transcript"), ("button", "Start a new session"),
                       ("log", "Conversation"), ("img", "The graph of clinic_booking"),
                       ("checkbox", "Show conditions"), ("region", "The graph drawing")):
        assert page.get_by_role(role, name=name, exact=False).count() >= 1, (role, name)
    unlabelled = page.evaluate("""[...document.querySelectorAll('input, select, textarea')]
        .filter(e => !e.labels.length && !e.getAttribute('aria-label')).map(e => e.id)""")
    assert unlabelled == []
    order = []
    for _ in range(6):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.id"))
    assert order == ["send", "silence", "save", "show-labels", "fit", "graph"]
    page.keyboard.press("Shift+Tab")
    for _ in range(5):
        page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.id") == "message"
    page.keyboard.type("네 예약하고 싶어요")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#log > li').length == 2")
    page.keyboard.press("Shift+Tab")  # back into the log: the newest turn's reason button
    assert page.evaluate("document.activeElement.className") == "reason"
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")  # the opening's: its trace is shown
    assert page.locator("#trace h3").inner_text().startswith("Turn 1")
    assert page.locator("svg.graph g.node[aria-current]").get_attribute("data-node") == \
        "greeting"


def test_a_375_px_phone_reads_it_without_sideways_scrolling(service, browser, tmp_path):
    context = browser.new_context(viewport={"width": 375, "height": 812}, device_scale_factor=2,
                                  is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        pg = Playground(page, service.base).open("?scenario=clinic_booking")
        pg.say("네 예약하고 싶어요")
        pg.say("홍길동이에요")
        assert pg.horizontal_overflow() == 0
        for selector in ("#message", "#send", "#silence", "#scenario", "#graph"):
            box = page.locator(selector).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 375, selector
        size = page.evaluate("parseFloat(getComputedStyle(document.querySelector("
                             "'.bubble.bot')).fontSize)")
        assert size >= 14
        page.screenshot(path=screenshot_path("playground-375.png", tmp_path), full_page=True)
    finally:
        context.close()


def test_with_an_api_key_the_page_asks_for_it_and_then_works(served_irs, browser):
    with ServiceServer([served_irs], env={"MAGO_API_KEY": KEY}) as guarded:
        context = browser.new_context()
        page = context.new_page()
        try:
            pg = Playground(page, guarded.base).open("?scenario=clinic_booking", drawn=False)
            page.wait_for_function("() => document.getElementById('key-box').open")
            assert "API key" in page.locator("#status").inner_text()
            assert page.evaluate("document.activeElement.id") == "api-key"
            page.keyboard.type(KEY)
            page.keyboard.press("Enter")
            # the scenarios listed, and `?scenario=` honoured: a session, its graph drawn
            page.wait_for_selector("svg.graph g.node.current")
            assert pg.current_node() == "greeting"
            assert page.evaluate("document.activeElement.id") == "message"
            pg.say("네 예약하고 싶어요")
            assert pg.current_node() == "collect_patient_info"
            assert page.evaluate("sessionStorage.getItem('mago.playground.apiKey')") == KEY
        finally:
            context.close()


def test_a_refused_profile_shows_the_servers_message(service, page):
    pg = Playground(page, service.base).open()
    page.locator("#start-form details > summary").click()
    page.fill("#profile", "[1, 2]")
    page.click("#start")
    assert page.locator("#start-error").inner_text() == "the profile must be a JSON object"
    page.fill("#profile", '{"age": 80}')
    page.click("#start")
    page.wait_for_function("() => document.getElementById('start-error').innerText.includes("
                           "'invalid_profile')")
    assert "age" in page.locator("#start-error").inner_text()
    assert pg.turns() == 0 and page.locator("#message").is_disabled()


def test_the_transcript_stops_before_a_text_a_line_cannot_carry(service, page):
    """transcript.js on made-up turns: a ` #` in a text ends the transcript before it, a `#`
    in a response is left out of `says`, and a turn an LLM read carries its NLU result."""
    from interpreter.transcripts import parse_transcript

    Playground(page, service.base).open()
    made = page.evaluate("""async () => {
        const {transcriptText} = await import("./playground/transcript.js");
        const line = (turn, user, response) => ({turn, user, node: "greeting",
            next_node: "greeting", reason: user === null ? "opening" : "no_route",
            complete: false, response, slots: {}, nlu: {intent: null, dialogue_act: "inform",
            slots: {}, confidence: 0.9}});
        const session = {scenario: "clinic_booking", focus: null, profile: null, turns: [
            {line: line(1, null, "안녕하세요 #1 번 창구"), nluSource: null},
            {line: line(2, "네", "좋아요"), nluSource: "llm"},
            {line: line(3, "번호는 #12", "네"), nluSource: "rules"}]};
        return transcriptText(session, new Date(Date.UTC(2026, 0, 2, 3, 4)));
    }""")
    assert made["saved"] == 2 and "turn 3" in made["stopped"] and "#" in made["stopped"]
    parsed = parse_transcript(made["text"])
    assert [step.kind for step in parsed.steps] == ["bot", "user"]
    (says,) = [e.value for e in parsed.steps[0].expectations if e.key == "says"]
    assert says == "안녕하세요"
    assert parsed.steps[1].nlu == {"intent": None, "dialogue_act": "inform", "slots": {},
                                   "confidence": 0.9}
    assert parsed.bot_first is True and parsed.scenario == "clinic_booking"
