"""Safety events leave the server: a warning log line, a metric, and a POST to `--alert-url`.

In: each turn routed by a safety rule (reason `safety:CATEGORY`, SPEC 10) with its session,
scenario and nodes. Out: one JSON POST per event to the alert URL, in the background.
After: the turn's answer never waits for the alert; an attempt that fails (refused, 5xx,
timeout) is retried with a growing pause until `ALERT_BUDGET` seconds after the event, then
given up with a warning log line. The event carries the session id and the category, never
the user's text. Sending is plain HTTP/1.1 or HTTPS with `http.client` in a worker thread.
"""

from __future__ import annotations

import asyncio
import http.client
import ssl
import time
from typing import Any
from collections.abc import Callable
from urllib.parse import urlsplit

import msgspec

from .. import MagoError

ALERT_BUDGET = 15.0  # seconds an event keeps being retried
FIRST_PAUSE = 0.2  # then doubled, at most MAX_PAUSE
MAX_PAUSE = 2.0
_ENCODER = msgspec.json.Encoder()


class AlertURLError(ValueError, MagoError):
    """An `--alert-url` that is not an http(s) URL."""


def check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AlertURLError(f"--alert-url {url!r}: give an http:// or https:// URL, e.g. "
                            "http://127.0.0.1:9000/alerts")
    try:
        _ = parts.port  # reading the port checks it
    except ValueError:
        raise AlertURLError(f"--alert-url {url!r} has a bad port") from None


class Alerts:
    """Posts events to one URL; `on_result(outcome)` is told "sent" or "failed"."""

    def __init__(self, url: str, on_result: Callable[[str, dict], None],
                 budget: float = ALERT_BUDGET):
        check_url(url)
        parts = urlsplit(url)
        self.url = url
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._on_result = on_result
        self.budget = budget
        self._tasks: set[asyncio.Task] = set()

    def send(self, event: dict[str, Any]) -> None:
        """Start sending `event` in the background (from the event loop)."""
        task = asyncio.get_running_loop().create_task(self._deliver(event))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, event: dict[str, Any]) -> None:
        body = _ENCODER.encode(event)
        deadline = time.monotonic() + self.budget
        pause, problem = FIRST_PAUSE, ""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                status = await asyncio.to_thread(self._post, body, left)
                if 200 <= status < 300:
                    return self._on_result("sent", event)
                problem = f"HTTP {status}"
            except (OSError, http.client.HTTPException) as error:
                problem = f"{type(error).__name__}: {error}"
            await asyncio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, MAX_PAUSE)
        self._on_result("failed", {**event, "error": problem or "no time left"})

    def _post(self, body: bytes, timeout: float) -> int:
        if self._https:
            connection = http.client.HTTPSConnection(self._host, self._port, timeout=timeout,
                                                     context=ssl.create_default_context())
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        try:
            connection.request("POST", self._path, body=body,
                               headers={"Content-Type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            return answer.status
        finally:
            connection.close()

    async def drain(self, timeout: float) -> None:
        """Wait up to `timeout` for the events in flight (at shutdown)."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)
