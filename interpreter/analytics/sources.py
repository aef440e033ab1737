"""Where `mgi report` reads events from, and where `mgi run --events` writes them.

In: a source: a JSON-lines file (`mgi run --events FILE`), `sqlite:PATH` (the `events` table
of a service's store), `redis://...` (its streams, one per day), or a list of `Event`s (the
memory store); a start time. Out: the events in the order they were written, fed to an
`Aggregator`, with the events a Redis stream dropped past its cap counted as lost.
After: nothing is written to a store while reading it (SQLite is opened read-only); a line of
a file that is not an event is `SourceError` naming its line; `EventFile.write` appends one
whole line per call (`O_APPEND`, one `write`), so two runs appending to one file interleave
whole lines and a killed run leaves none half-written.
"""

from __future__ import annotations

import os
from datetime import datetime, UTC
from typing import Any
from collections.abc import Iterator

import msgspec

from .. import MagoError
from .aggregate import Aggregator
from .events import Event, decode_event, encode_event

BATCH = 4096  # lines decoded per call: one msgspec call for many lines is cheaper
DEADLINE_EVERY = 8192  # events between two looks at the clock (`feed`'s deadline)
_LIST = msgspec.json.Decoder(list[Event])


class SourceError(MagoError):
    """The events cannot be read; one line that says what to do."""


class TooSlow(MagoError):
    """The report took longer than its time limit."""


class EventFile:
    """`mgi run --events FILE`: each event one JSON line, appended."""

    def __init__(self, path: str):
        self.path = path
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as error:
            raise SourceError(f"cannot open the events file {path}: "
                              f"{error.strerror or error}") from None

    def write(self, event: Event) -> None:
        try:
            os.write(self._fd, encode_event(event) + b"\n")
        except OSError as error:
            raise SourceError(f"cannot write the events file {self.path}: "
                              f"{error.strerror or error}") from None

    def close(self) -> None:
        os.close(self._fd)


def parse_date(text: str, option: str) -> float:
    """Seconds since the epoch of `2026-12-01` or an ISO 8601 time (UTC when it says no zone)."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise SourceError(f"{option} {text!r} is not a date; write 2026-12-01 or "
                          "2026-12-01T09:30:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def feed(aggregator: Aggregator, source: Any, since: float | None = None,
         deadline: float | None = None) -> Aggregator:
    """Every event of `source` into `aggregator` (`TooSlow` past `deadline`, a monotonic
    time); `source` a path or store URL, or a list of events."""
    import time

    if isinstance(source, list):
        events: Iterator[Event] = iter(source)
    elif source.startswith("sqlite:"):
        events = sqlite_events(source.removeprefix("sqlite:").partition("?")[0], since)
    elif source.startswith(("redis://", "rediss://", "unix://")):
        events = redis_events(source, since, aggregator)
    else:
        events = file_events(source)
    batch: list[Event] = []
    for event in events:
        batch.append(event)
        if len(batch) == DEADLINE_EVERY:
            aggregator.add_all(batch)
            batch.clear()
            if deadline is not None and time.monotonic() > deadline:
                raise TooSlow("the report took longer than its time limit; narrow it with "
                              "since= or scenario=")
    aggregator.add_all(batch)
    return aggregator


def file_events(path: str) -> Iterator[Event]:
    """The events of a JSON-lines file, decoded `BATCH` lines at a time."""
    try:
        stream = open(path, "rb")  # noqa: SIM115 - the `with` below, once the error is told
    except OSError as error:
        raise SourceError(f"cannot read the events file {path}: "
                          f"{error.strerror or error}") from None
    with stream:
        number = 0
        while True:
            lines = [line for line in stream.readlines(BATCH * 256) if line.strip()]
            if not lines:
                return
            try:
                batch = _LIST.decode(b"[" + b",".join(lines) + b"]")
            except (msgspec.DecodeError, msgspec.ValidationError):
                batch = [_one(line, path, number + index + 1)
                         for index, line in enumerate(lines)]
            number += len(lines)
            yield from batch


def _one(line: bytes, path: str, number: int) -> Event:
    try:
        return decode_event(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise SourceError(f"{path}: event {number} is not an event of `mgi run --events` "
                          f"({error}); give a file that mgi wrote") from None


def sqlite_events(path: str, since: float | None) -> Iterator[Event]:
    """The `events` rows of a service's SQLite store, in the order they were written."""
    import sqlite3

    from ..stores.sqlite_store import READ_DELETED, READ_EVENTS

    if not os.path.exists(path):
        raise SourceError(f"no sqlite store {path}; give the file of `mgi serve --store`")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        deleted = dict(conn.execute(READ_DELETED).fetchall())  # not purged yet: skipped
        cursor = conn.execute(READ_EVENTS, (since if since is not None else float("-inf"),))
    except sqlite3.Error as error:
        raise SourceError(f"cannot read events from sqlite store {path}: {error}") from None
    try:
        while True:
            rows = cursor.fetchmany(BATCH)
            if not rows:
                return
            if deleted:
                rows = [row for row in rows if row[0] > deleted.get(row[1], 0)]
            yield from _LIST.decode(b"[" + b",".join(row[2] for row in rows) + b"]")
    finally:
        conn.close()


def redis_events(url: str, since: float | None, aggregator: Aggregator) -> Iterator[Event]:
    """The events of a Redis store's day streams from the day of `since`, oldest first; the
    events each stream dropped past its cap are added to `aggregator.lost`."""
    import redis
    from redis.exceptions import RedisError

    from ..stores.redis_store import EVENTS_KEY, events_day

    try:
        client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
        days = sorted(key.decode() for key in client.scan_iter(match=EVENTS_KEY + "*",
                                                              count=1000)
                      if not key.endswith((b":n", b":d")))
    except (RedisError, OSError, ValueError) as error:
        raise SourceError(f"cannot read events from the redis store: {error}") from None
    first = EVENTS_KEY + events_day(since) if since is not None else ""
    try:
        for key in days:
            if key < first:
                continue
            written, deleted = (int(n or 0) for n in client.mget(key + ":n", key + ":d"))
            aggregator.lost += max(0, written - deleted - client.xlen(key))
            start = "-"
            while True:
                entries = client.xrange(key, start, "+", count=BATCH)
                if not entries:
                    break
                yield from _LIST.decode(b"[" + b",".join(f[b"e"] for _, f in entries) + b"]")
                start = b"(" + entries[-1][0]
    except RedisError as error:
        raise SourceError(f"cannot read events from the redis store: {error}") from None
    finally:
        client.close()
