"""The playground in a real headless Chromium: Debian's `chromium` driven by Playwright.

`chromium_path()` finds the browser (`MAGO_CHROMIUM`, else `chromium` or `chromium-browser`
on PATH); Playwright never downloads one of its own. `Playground(page, base)` wraps a page
open on `/playground`: `open(query)` waits until the graph is drawn, `say(text)` types a
message and presses Enter, `silence()` uses the silence button, and each waits for the turn's
bubble; `turn_texts()`, `current_node()`, `taken_edges()` and `trace_rows()` read what the
page shows. Every check reads the page's DOM as a user's browser built it: nothing is mocked.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

GRAPH_DRAWN = "mago:graph-drawn"  # the performance mark the page sets once the graph is drawn
# The page's Content-Security-Policy forbids evaluating strings: every predicate handed to
# `wait_for_function` is a function (Playwright calls it), never an expression.


def chromium_path() -> str | None:
    given = os.environ.get("MAGO_CHROMIUM")
    if given:
        return given if os.path.exists(given) else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Playground:
    def __init__(self, page: Any, base: str):
        self.page, self.base = page, base

    def open(self, query: str = "", drawn: bool = True) -> Playground:
        self.page.goto(f"{self.base}/playground{query}")
        if drawn:
            self.page.wait_for_function(
                f"() => performance.getEntriesByName({GRAPH_DRAWN!r}).length > 0",
                timeout=15000)
        return self

    def load_ms(self) -> float:
        """Milliseconds from navigation start to the first drawing of the graph."""
        return self.page.evaluate(
            f"performance.getEntriesByName({GRAPH_DRAWN!r})[0].startTime")

    def turns(self) -> int:
        return self.page.locator("#log > li").count()

    def say(self, text: str) -> None:
        before = self.turns()
        self.page.fill("#message", text)
        self.page.press("#message", "Enter")
        self._wait_turn(before)

    def silence(self) -> None:
        before = self.turns()
        self.page.click("#silence")
        self._wait_turn(before)

    def _wait_turn(self, before: int) -> None:
        self.page.wait_for_function(
            "n => document.querySelectorAll('#log > li').length > n && "
            "document.getElementById('chat').getAttribute('aria-busy') !== 'true'",
            arg=before, timeout=15000)

    def last_turn(self) -> dict:
        """The newest turn as shown: the user's bubble, the bot's and the reason line."""
        item = self.page.locator("#log > li").last
        read = lambda selector: (item.locator(selector).inner_text()  # noqa: E731
                                 if item.locator(selector).count() else None)
        return {"user": read(".bubble.user"), "bot": read(".bubble.bot"),
                "reason": item.locator("button.reason").inner_text()}

    def current_node(self) -> str | None:
        return self.page.evaluate(
            "document.querySelector('svg.graph g.node.current')?.dataset.node ?? null")

    def taken_edges(self) -> list[tuple[str, str]]:
        return [tuple(pair) for pair in self.page.evaluate(
            "[...document.querySelectorAll('svg.graph g.edge.taken')]"
            ".map(g => [g.dataset.source, g.dataset.target])")]

    def trace_rows(self) -> list[dict]:
        """The selected turn's evaluated transitions: rule, condition, values, result."""
        return self.page.evaluate("""[...document.querySelectorAll('table.evaluated tbody tr')]
            .map(tr => ({rule: tr.querySelector('th').firstChild.textContent,
                         condition: tr.cells[1].innerText, values: tr.cells[2].innerText,
                         result: tr.cells[3].innerText.replace(/\\s*\\(taken\\)/, '').trim(),
                         fired: tr.classList.contains('fired')}))""")

    def horizontal_overflow(self) -> int:
        """How many pixels the page scrolls sideways (0: none)."""
        return self.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")
