"""Where `mgi report` reads events from, and where `mgi run --events` writes them.

In: a source: a JSON-lines file (`mgi run --events FILE`), `sqlite:PATH` (the `events` table
of a service's store), `redis://...` (its streams, one per day), or a list of `Event`s (the
memory store); a start time. Out: the events in the order they were written, fed to an
`Aggregator` a batch at a time (each batch one decoding call of `EventReader`, into
`ReportEvent`s), with the events a Redis stream dropped past its cap counted as lost.
After: nothing is written to a store while reading it (SQLite is opened read-only); a line of
a file that is not an event is `SourceError` naming its line; `EventFile.write` appends one
whole line per call (`O_APPEND`, one `write`), so two runs appending to one file interleave
whole lines and a killed run leaves none half-written.
"""

from __future__ import annotations

import mmap
import os
from datetime import datetime, UTC
from typing import Any, BinaryIO
from collections.abc import Callable, Iterator

import msgspec

from .. import MagoError
from .aggregate import Aggregator
from .events import Event, ReportEvent, encode_event

BATCH = 8192  # events decoded per call and tallied per batch
BLOCK = 1 << 21  # bytes of an events file read at a time (a few thousand events)
_LINES = msgspec.json.Decoder(ReportEvent)
_PLAIN = (_LINES, msgspec.json.Decoder(list[ReportEvent]))  # of JSON lines, of an array
# The string fields whose values repeat from event to event (bounded by the scenarios)
REPEATED = ("scenario", "ir_hash", "kind", "node", "next_node", "reason", "fallback", "safety")
VOCABULARY = 2048  # distinct values a field is read as a Literal of; past it, a plain string
RELEARN = 256  # decoders remade at most, per report


class EventReader:
    """Batches of event JSON (a JSON array, or JSON lines) into `ReportEvent`s.

    The strings that repeat (`REPEATED`) are decoded as `Literal`s of the values seen so far,
    so msgspec hands out one shared string object per value instead of a new one per event:
    measured a third off the decoding, and the tally's dict lookups then compare by identity.
    A batch holding a value not seen yet fails that way; it is decoded plainly, its values
    learnt and the decoder remade (at most `RELEARN` times; a field with more than
    `VOCABULARY` values stays a plain string), so the events read are the same either way."""

    def __init__(self) -> None:
        self.seen: dict[str, set[str]] = {name: set() for name in REPEATED}
        # the decoders of the values learnt: of JSON lines, of a JSON array
        self.learnt: tuple[msgspec.json.Decoder, msgspec.json.Decoder] | None = None
        self.remade = 0

    def lines(self, chunk: bytes | memoryview) -> list[ReportEvent]:
        """The events of JSON lines (msgspec's errors when a line is not one)."""
        return self._decode(msgspec.json.Decoder.decode_lines, 0, chunk)

    def array(self, blob: bytes) -> list[ReportEvent]:
        """The events of a JSON array of them."""
        return self._decode(msgspec.json.Decoder.decode, 1, blob)

    def _decode(self, method: Callable, form: int, data: Any) -> list[ReportEvent]:
        """`method` of the learnt decoder of `form` (0 lines, 1 an array) on `data`; when it
        meets a value not learnt yet, of the plain decoder, and the values learnt."""
        if self.learnt is not None:
            try:
                return method(self.learnt[form], data)
            except msgspec.ValidationError:
                pass
        return self._learn(method(_PLAIN[form], data))

    def _learn(self, batch: list[ReportEvent]) -> list[ReportEvent]:
        if self.remade >= RELEARN:
            return batch
        grown = False
        for name, seen in self.seen.items():
            values = {getattr(event, name) for event in batch}
            values.discard(None)
            if not values <= seen:
                seen |= values
                grown = True
        if grown:
            self.remade += 1
            shape = typed_event(self.seen)
            self.learnt = (msgspec.json.Decoder(shape), msgspec.json.Decoder(list[shape]))
        return batch


def typed_event(seen: dict[str, set[str]]) -> type:
    """`ReportEvent` with each field of `seen` a `Literal` of its values."""
    from typing import Literal

    fields = []
    for field in msgspec.structs.fields(ReportEvent):
        kind = field.type
        values = seen.get(field.name)
        if values is not None and len(values) <= VOCABULARY:
            literal = Literal[tuple(sorted(values))] if values else None
            optional = not field.required and field.name != "kind" and literal is not None
            kind = literal | None if optional else literal
        fields.append((field.name, kind) if field.required else
                      (field.name, kind, field.default))
    return msgspec.defstruct("ReportEvent", fields, kw_only=True, gc=False)


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
    """Every event of `source` into `aggregator`, a batch at a time (`TooSlow` past
    `deadline`, a monotonic time); `source` a path or store URL, or a list of events."""
    import time

    if isinstance(source, list):
        batches: Iterator[list] = (source[i:i + BATCH] for i in range(0, len(source), BATCH))
    elif source.startswith("sqlite:"):
        path = source.removeprefix("sqlite:").partition("?")[0]
        batches = store_events(sqlite_batches(path, since))
    elif source.startswith(("redis://", "rediss://", "unix://")):
        batches = store_events(redis_batches(source, since, aggregator))
    else:
        batches = file_events(source)
    for batch in batches:
        aggregator.add_all(batch)
        if deadline is not None and time.monotonic() > deadline:
            raise TooSlow("the report took longer than its time limit; narrow it with "
                          "since= or scenario=")
    return aggregator


def file_events(path: str) -> Iterator[list[ReportEvent]]:
    """The events of a JSON-lines file, a block of whole lines (`BLOCK` bytes, about
    `BATCH` events) at a time, each decoded by one msgspec call (`decode_lines`); a block
    that is not all events is decoded again line by line, to name the one that is not."""
    try:
        stream = open(path, "rb")  # noqa: SIM115 - the `with` below, once the error is told
    except OSError as error:
        raise SourceError(f"cannot read the events file {path}: "
                          f"{error.strerror or error}") from None
    with stream:
        number, reader = 0, EventReader()
        for block in line_blocks(stream):
            try:
                batch = reader.lines(block)
            except (msgspec.DecodeError, msgspec.ValidationError):
                lines = [line for line in bytes(block).splitlines() if line.strip()]
                batch = [_one(line, path, number + index + 1)
                         for index, line in enumerate(lines)]
            number += len(batch)
            yield batch


def line_blocks(stream: BinaryIO) -> Iterator[bytes | memoryview]:
    """A file's bytes as blocks of whole lines of about `BLOCK` bytes. A regular file is
    mapped into memory and the blocks are views of the map (measured: a quarter off the
    CPU time of reading a million events, which read() copied three times), the pages of
    each block let go once it is decoded (they stay in the page cache, not in the report's
    memory); a pipe is read a block at a time, the line cut at a block's end carried over."""
    try:
        whole = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # an empty file, a pipe: read()
        yield from read_blocks(stream)
        return
    with whole, memoryview(whole) as view:
        start, size, released = 0, len(whole), 0
        while start < size:
            end = whole.rfind(b"\n", start, start + BLOCK) + 1
            if end == 0:  # no newline in a block: a line longer than that, or the last
                end = whole.find(b"\n", start + BLOCK) + 1 or size
            with view[start:end] as block:
                yield block
            start = end
            decoded = start - start % mmap.PAGESIZE
            if decoded > released:
                whole.madvise(mmap.MADV_DONTNEED, released, decoded - released)
                released = decoded


def read_blocks(stream: BinaryIO) -> Iterator[bytes]:
    """A stream that cannot be mapped, in blocks of whole lines, read `BLOCK` at a time."""
    rest = b""
    while True:
        block = stream.read(BLOCK)
        if not block:
            if rest.strip():
                yield rest  # a last line without its newline
            return
        block = rest + block
        cut = block.rfind(b"\n") + 1
        block, rest = block[:cut], block[cut:]
        yield block


def _one(line: bytes, path: str, number: int) -> ReportEvent:
    try:
        return _LINES.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise SourceError(f"{path}: event {number} is not an event of `mgi run --events` "
                          f"({error}); give a file that mgi wrote") from None


def store_events(bodies: Iterator[bytes]) -> Iterator[list[ReportEvent]]:
    """The events of the JSON array bodies a store joins (`sqlite_batches`,
    `redis_batches`). Read in this thread: a thread reading a batch ahead was measured to
    let the peak memory grow with the events (45 MiB on 2M events read here, 64 MiB read
    ahead: the allocator's arena of the second thread), and to cost CPU with no free core."""
    reader = EventReader()
    for body in bodies:
        yield reader.array(b"[" + body + b"]")


def sqlite_batches(path: str, since: float | None) -> Iterator[bytes]:
    """The `events` rows, `BATCH` at a time joined into the body of a JSON array by SQLite,
    read in one read transaction (one snapshot, however long the report takes)."""
    import sqlite3

    from ..stores.sqlite_sql import ANY_DELETED, READ_EVENTS, READ_EVENTS_KEPT

    if not os.path.exists(path):
        raise SourceError(f"no sqlite store {path}; give the file of `mgi serve --store`")
    after, start = 0, since if since is not None else float("-inf")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5,
                               isolation_level=None)
    except sqlite3.Error as error:
        raise SourceError(f"cannot read events from sqlite store {path}: {error}") from None
    try:
        conn.execute("BEGIN")
        deleted = conn.execute(ANY_DELETED).fetchone()[0]  # not purged yet: left out
        query = READ_EVENTS_KEPT if deleted else READ_EVENTS
        while True:
            last, joined = conn.execute(query, (after, start, BATCH)).fetchone()
            if last is None:
                return
            after = last
            yield joined
    except sqlite3.Error as error:
        raise SourceError(f"cannot read events from sqlite store {path}: {error}") from None
    finally:
        conn.close()


# A batch of a day stream's entries after ARGV[1], joined by Redis into one JSON array body
# (one reply, not an object per entry); {} at the end, else {the last id, the body}.
READ_STREAM = """
local entries = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])
local n = #entries
if n == 0 then
  return {}
end
local parts = {}
for i = 1, n do
  parts[i] = entries[i][2][2]
end
return {entries[n][1], table.concat(parts, ',')}
"""


def redis_batches(url: str, since: float | None, aggregator: Aggregator) -> Iterator[bytes]:
    """The entries of a Redis store's day streams from the day of `since`, oldest first,
    `BATCH` at a time joined into the body of a JSON array by Redis; the events each stream
    dropped past its cap are added to `aggregator.lost`."""
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
            start: bytes | str = "-"
            while True:
                found = client.eval_ro(READ_STREAM, 1, key, start, BATCH)
                if not found:
                    break
                start = b"(" + found[0]
                yield found[1]
    except RedisError as error:
        raise SourceError(f"cannot read events from the redis store: {error}") from None
    finally:
        client.close()
