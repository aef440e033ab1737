"""The HTML report (SPEC 16) in a real headless Chromium: Debian's `chromium` through Playwright,
as `tests/playground/test_playground.py` drives it.

The report is made by `mgi report --format html` from the events of real `mgi run` sessions
of the clinic scenario (a full booking, stops at two steps, a silent turn), opened from a file
with the network cut off: it must draw everything from itself (no request but the file), name
every chart for a screen reader, let the keyboard reach the graph's nodes, and colour the node
where sessions were lost redder than one where none were. The screenshot goes to the test's
temporary folder, or to `MAGO_SCREENSHOTS` (the README's tests/screenshots/report.png is a
copy made that way).
"""

from __future__ import annotations

import pytest

from support.playground_browser import chromium_path
from test_analytics import FULL_BOOKING, run_with_events
from test_mgi_cli import irs, mgi  # noqa: F401 - irs is a fixture
from test_playground import browser, screenshot_path  # noqa: F401 - browser is a fixture

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                                                            "(pip install -e '.[dev]')")
CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium browser (Debian: apt-get "
                                                         "install chromium; .ci/run does)")


@pytest.fixture
def report_file(irs, tmp_path):  # noqa: F811
    for lines in (FULL_BOOKING, FULL_BOOKING[:1], FULL_BOOKING[:3], FULL_BOOKING[:3],
                  [FULL_BOOKING[0], "", *FULL_BOOKING[1:]]):
        events, _ = run_with_events(irs, tmp_path, lines)
    page = tmp_path / "report.html"
    done = mgi("report", events, "--format", "html", "--now", "2099-01-01", "-o", page)
    assert done.returncode == 0, done.stderr
    return page


def test_the_html_report_draws_offline_names_its_charts_and_takes_the_keyboard(
        browser, report_file, tmp_path):  # noqa: F811 - browser is the imported fixture
    context = browser.new_context(viewport={"width": 1100, "height": 900}, offline=True)
    page = context.new_page()
    requests, problems = [], []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: problems.append(message.text)
            if message.type == "error" else None)
    try:
        page.goto(report_file.as_uri())
        assert requests == [report_file.as_uri()] and problems == []
        charts = page.locator("svg[role=img]")
        assert charts.count() == 5  # funnel, drop-offs, fallback rate, graph, confidence
        for index in range(charts.count()):
            labelled = charts.nth(index).get_attribute("aria-labelledby")
            assert page.locator(f"[id='{labelled}']").text_content().strip()
        for name in ("Funnel", "Drop-offs per node", "The graph of the transitions taken"):
            assert page.get_by_role("img", name=name, exact=False).count() >= 1, name
        assert page.locator("table:not(:has(caption))").count() == 0
        funnel = page.locator("svg[aria-labelledby=v0f] text").all_text_contents()
        assert funnel[:2] == ["sessions started", "5"] and funnel[-2:] == ["completed", "2"]
        # the keyboard: the navigation link first, then into the graph's nodes
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.getAttribute('href')") == "#v0"
        reached = []
        for _ in range(12):
            page.keyboard.press("Tab")
            reached.append(page.evaluate("document.activeElement.dataset.node ?? null"))
        assert "greeting" in reached and "booking_done" in reached
        label = page.evaluate("document.activeElement.getAttribute('aria-label')")
        assert "visits" in label and "drop-offs" in label
        lost = fill(page, "collect_visit_info")  # where two sessions stopped
        kept = fill(page, "ask_note")  # where none did
        assert lost != kept and kept == "rgb(255, 255, 255)"
        page.screenshot(path=screenshot_path("report.png", tmp_path), full_page=True)
    finally:
        context.close()


def fill(page, node: str) -> str:
    return page.evaluate(
        "n => getComputedStyle(document.querySelector(`svg.flow g.node[data-node='${n}'] rect`))"
        ".fill", node)


# --- the playground's Analytics view ---------------------------------------------------------

def past_store(irs, tmp_path) -> str:  # noqa: F811
    """A SQLite store holding the events of real `mgi run` sessions, as of two hours ago."""
    import asyncio
    import time

    import msgspec

    from interpreter.analytics.events import decode_event, encode_event
    from interpreter.stores.records import open_store

    for lines in (FULL_BOOKING, FULL_BOOKING[:3], FULL_BOOKING[:3], FULL_BOOKING[:6]):
        events_file, _ = run_with_events(irs, tmp_path, lines)
    shift = 7200.0
    events = [decode_event(line) for line in events_file.read_bytes().splitlines()]
    url = f"sqlite:{tmp_path / 'sessions.db'}"

    async def write() -> None:
        store = open_store(url, 86400)
        versions: dict[str, int] = {}
        for event in events:
            moved = msgspec.structs.replace(event, time=event.time - shift)
            done = await store.put(event.session_id, b"x", versions.get(event.session_id, 0),
                                   time.time(), ((moved.time, encode_event(moved)),))
            versions[event.session_id] = done
        await store.close()

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as apart:  # Playwright's loop runs in this thread
        apart.submit(asyncio.run, write()).result()
    return url


def test_the_playground_analytics_view_draws_the_report(irs, browser, served_irs,  # noqa: F811
                                                         tmp_path):
    from support.playground_browser import Playground
    from support.service_server import ServiceServer

    url = past_store(irs, tmp_path)
    with ServiceServer([served_irs], store=url, extra=["--public-report"]) as server:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        try:
            Playground(page, server.base).open("?scenario=clinic_booking")
            page.click("#analytics-load")
            page.wait_for_selector("#analytics svg.by-drop-off g.node")
            assert problems == []
            funnel = page.locator("svg[aria-labelledby=analytics-funnel] text")
            texts = funnel.all_text_contents()
            # the four sessions of the store, and the one the page started
            assert texts[:2] == ["sessions started", "5"] and texts[-2:] == ["completed", "1"]
            for name in ("Funnel", "Drop-offs per node", "Fallback rate per node",
                         "The graph coloured by drop-off"):
                assert page.get_by_role("img", name=name, exact=False).count() == 1, name
            shade = lambda node: page.get_attribute(  # noqa: E731
                f"svg.by-drop-off g.node[data-node='{node}']", "class")
            assert "drop-0" in shade("collect_contact")
            assert "drop-0" not in shade("collect_visit_info")
            assert page.locator("#analytics table:not(:has(caption))").count() == 0
            page.focus("#analytics-load")
            reached = []
            while len(reached) < 16 and "collect_visit_info" not in reached:
                page.keyboard.press("Tab")
                reached.append(page.evaluate("document.activeElement.dataset.node ?? null"))
            assert reached[-1] == "collect_visit_info", reached  # the keyboard gets there
            label = page.evaluate("document.activeElement.getAttribute('aria-label')")
            assert label.startswith("collect_visit_info: 4 visits, 2 drop-offs"), label
            page.locator("#analytics-pane").screenshot(
                path=screenshot_path("playground-analytics.png", tmp_path))
        finally:
            context.close()
