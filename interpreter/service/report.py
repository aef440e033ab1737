"""`GET /dm/v1/report?scenario=NAME[&since=DATE][&now=DATE]` (SPEC 16, 17.11).

In: the request and the running app (its store and configuration). Out: 200 with the JSON of
`mgi report --format json` for that scenario (every version of it, each IR hash apart).
After: 403 `report_not_public` when no `MAGO_API_KEY` is configured unless the server was
started with `--public-report` (with a key, the key is checked like every endpoint's); 404
`events_off` under `--events-days 0`; 422 for a bad date; the report is computed in a worker
thread, never on the event loop, and a report that takes longer than `REPORT_SECONDS` stops
and is 422 `too_costly` (narrow it with `since`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .http import JSON_HEADERS, ApiError, encode

REPORT_SECONDS = 20.0


async def report_answer(app: Any, request: Any) -> tuple:
    from ..analytics.aggregate import Aggregator
    from ..analytics.sources import SourceError, TooSlow, feed, parse_date

    if app.api_key is None and not app.config.public_report:
        raise ApiError(403, "report_not_public",
                       "the report describes every conversation: set MAGO_API_KEY, or start "
                       "the server with --public-report")
    if app.config.events_days <= 0:
        raise ApiError(404, "events_off", "this server records no events (--events-days 0)")
    query = request.query_params(("scenario", "since", "now"))
    if not query.get("scenario"):
        raise ApiError(422, "invalid_request", "give the scenario: "
                                               "/dm/v1/report?scenario=NAME[&since=DATE]")
    try:
        since = parse_date(query["since"], "since") if query.get("since") else None
        now = parse_date(query["now"], "now") if query.get("now") else None
    except SourceError as error:
        raise ApiError(422, "invalid_request", str(error)) from None
    source = events_source(app)
    deadline = time.monotonic() + REPORT_SECONDS

    def compute() -> dict:
        events = source
        if isinstance(source, list):  # the memory store's rows, decoded here, off the loop
            from ..analytics.events import decode_event

            events = [decode_event(blob) for _, _, blob in source]
        return feed(Aggregator(query["scenario"], since, now), events, since,
                    deadline).report()

    try:
        report = await asyncio.to_thread(compute)
    except TooSlow as error:
        raise ApiError(422, "too_costly", str(error)) from None
    except SourceError as error:
        raise ApiError(503, "store_unavailable", str(error)) from None
    return 200, encode(report), JSON_HEADERS


def events_source(app: Any) -> Any:
    """What `analytics.sources.feed` reads: the memory store's rows (a copy), or the URL."""
    store = app.store
    if store.name == "memory":
        return list(store.events)
    if store.name == "sqlite":
        return "sqlite:" + store.path
    return app.config.store
