"""Connection limits before any request reaches the application (SPEC 11.1, 17.2-17.3).

In: the bytes of every connection, as uvicorn's httptools protocol receives them. Out: the
same protocol, bounded: a connection idle (before its first request or between requests)
longer than `keep_alive` seconds, a request whose headers take longer than `headers`
seconds or whose body takes longer than `body` seconds, is closed; headers over
`header_bytes` in all are 431 and never reach the parser (whose joining of fragments is
quadratic); at `max_connections` the oldest connection with no request in progress is
closed to make room, or the new one is answered 503 at once when every one is busy.
After: every answer written here is the JSON envelope of `http.error_body`, with
`connection: close`.

Why a subclass of uvicorn's protocol rather than uvicorn's options: `timeout_keep_alive`
is armed only after a response (a socket that never sends a request stays open), any byte
cancels it, and `limit_concurrency` answers 503 to the new request instead of freeing the
room an idle socket holds. The deadlines are checked by one sweep a second per worker, so a
request pays a float store per phase, not a timer.
"""

from __future__ import annotations

import asyncio
import resource
from typing import Any

import msgspec
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from .http import error_body

SWEEP_SECONDS = 0.5
RESERVED_FILES = 64  # descriptors kept for the store, the logs, the compile worker


class Limits(msgspec.Struct, kw_only=True, frozen=True):
    keep_alive: float = 5.0
    headers: float = 10.0
    body: float = 30.0
    header_bytes: int = 16 * 1024
    max_connections: int = 1000


def connection_cap(wanted: int) -> int:
    """`wanted`, kept below the open-file limit (raised towards the hard limit if needed)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = wanted + RESERVED_FILES
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - RESERVED_FILES))


class _Sweeper:
    """One per worker: closes every connection past its deadline, twice a second."""

    def __init__(self, loop: asyncio.AbstractEventLoop, connections: set):
        self.loop, self.connections = loop, connections
        self.handle = loop.call_later(SWEEP_SECONDS, self.sweep)

    def sweep(self) -> None:
        now = self.loop.time()
        for connection in [c for c in self.connections if isinstance(c, GuardedProtocol)
                           and c.deadline < now]:
            connection.expire()
        self.handle = self.loop.call_later(SWEEP_SECONDS, self.sweep)


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits of `LIMITS` (set by `configure`)."""

    limits = Limits()
    cap = Limits().max_connections
    _sweepers: dict[int, _Sweeper] = {}

    @classmethod
    def configure(cls, limits: Limits) -> None:
        cls.limits = limits
        cls.cap = connection_cap(limits.max_connections)

    def connection_made(self, transport: Any) -> None:
        self.header_room = self.limits.header_bytes
        self.reading_headers = True
        self.deadline = self.loop.time() + self.limits.keep_alive
        if len(self.connections) >= self.cap and not self._make_room():
            super().connection_made(transport)
            self.refuse(503, "busy", "the server has no room for another connection; "
                                     "retry shortly")
            return
        super().connection_made(transport)
        key = id(self.server_state)
        if key not in self._sweepers:
            self._sweepers[key] = _Sweeper(self.loop, self.connections)

    def _make_room(self) -> bool:
        """Close the connection that has been idle longest; False when all are busy."""
        idle = [c for c in self.connections if isinstance(c, GuardedProtocol) and c.idle()]
        if not idle:
            return False
        oldest = min(idle, key=lambda c: c.deadline)
        oldest.transport.close()
        self.connections.discard(oldest)
        return True

    def idle(self) -> bool:
        """No request in progress: none begun, or the last one answered."""
        return self.reading_headers and self.header_room == self.limits.header_bytes and (
            self.cycle is None or self.cycle.response_complete)

    def expire(self) -> None:
        if self.transport.is_closing():
            return
        if self.idle() or not self.reading_headers:
            self.transport.close()  # idle, or a body too slow (the application sees the
            return                  # disconnect): nothing to answer
        self.refuse(408, "timeout", "the request took too long to arrive; send it whole")

    def data_received(self, data: bytes) -> None:
        while data and self.reading_headers:
            if self.header_room <= 0:
                self.refuse(431, "headers_too_large", f"the request's headers are over "
                            f"{self.limits.header_bytes // 1024} KiB; send less")
                return
            part, data = data[:self.header_room], data[self.header_room:]
            self.header_room -= len(part)
            super().data_received(part)
            if self.parser is None or self.transport.is_closing():
                return
        if data:
            super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.deadline = self.loop.time() + self.limits.headers

    def on_headers_complete(self) -> None:
        self.reading_headers = False
        self.deadline = self.loop.time() + self.limits.body
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.reading_headers = True
        self.header_room = self.limits.header_bytes
        self.deadline = float("inf")  # the application has it; idle again once answered

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.reading_headers and self.header_room == self.limits.header_bytes:
            self.deadline = self.loop.time() + self.limits.keep_alive

    def send_400_response(self, msg: str) -> None:
        self.refuse(400, "invalid_request", "the request is not valid HTTP/1.1")

    def refuse(self, status: int, code: str, message: str) -> None:
        """Answer with the JSON envelope and close (the parser is not fed again)."""
        body = error_body(code, message)
        self.transport.write(b"".join((
            STATUS_LINE[status], b"content-type: application/json\r\n",
            b"x-content-type-options: nosniff\r\n",
            b"content-length: ", str(len(body)).encode(), b"\r\n",
            b"connection: close\r\n\r\n", body)))
        self.transport.close()
        self.reading_headers = False
        self.deadline = float("inf")
