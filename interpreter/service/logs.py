"""The service's log: one JSON object per line on stderr.

In: each request's method, path, status, latency and what its handler noted (session id,
node, reason, NLU source); the server's own messages through `logging`. Out: JSON lines.
After: the user's text is written only at debug level; the API key, the store's password
and a traceback never reach a request line (an internal error logs its traceback as one
JSON string, for the operator, and the client gets only `internal_error`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any

import msgspec

_ENCODER = msgspec.json.Encoder()
LEVELS = ("debug", "info", "warning", "error")


_second: list = [-1, ""]  # the last whole second formatted, and its text


def stamp(seconds: float) -> str:
    """RFC 3339 in UTC, to the millisecond."""
    whole = int(seconds)
    if whole != _second[0]:
        _second[:] = [whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))]
    return f"{_second[1]}.{int((seconds - whole) * 1000):03d}Z"


class RequestLog:
    """Lines written whole to a file descriptor (stderr). Inside the event loop the lines of
    one turn of the loop are gathered and written by one system call at its end (under load
    that is one write for many requests); elsewhere each line is written at once."""

    def __init__(self, level: str = "info", fd: int = 2):
        self.debug = level == "debug"
        self.quiet = LEVELS.index(level) > LEVELS.index("info")
        self.fd = fd
        self._pending: list[bytes] = []

    def request(self, method: str, path: str, status: int, seconds: float,
                note: dict[str, Any]) -> None:
        if self.quiet and status < 500:
            return
        line = {"time": stamp(time.time()), "level": "error" if status >= 500 else "info",
                "method": method, "path": path, "status": status,
                "latency_ms": round(seconds * 1000, 3)}
        for key, value in note.items():
            if value is not None and (key != "text" or self.debug):
                line[key] = value
        self.write(line)

    def event(self, level: str, message: str, **fields: Any) -> None:
        if LEVELS.index(level) < LEVELS.index("info") and not self.debug:
            return
        if self.quiet and LEVELS.index(level) < LEVELS.index("warning"):
            return
        self.write({"time": stamp(time.time()), "level": level, "message": message, **fields})

    def write(self, line: dict[str, Any]) -> None:
        data = _ENCODER.encode(line) + b"\n"
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self._write(data)
        if not self._pending:
            loop.call_soon(self.flush)
        self._pending.append(data)

    def flush(self) -> None:
        data, self._pending = b"".join(self._pending), []
        self._write(data)

    def _write(self, data: bytes) -> None:
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:  # a closed or full stderr must not fail a request
            pass


class JSONFormatter(logging.Formatter):
    """uvicorn's own messages (start, stop, bind errors) as JSON lines too."""

    def format(self, record: logging.LogRecord) -> str:
        line = {"time": stamp(record.created), "level": record.levelname.lower(),
                "message": record.getMessage(), "logger": record.name}
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return _ENCODER.encode(line).decode()


def uvicorn_log_config(level: str) -> dict[str, Any]:
    return {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"json": {"()": JSONFormatter}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json",
                                "stream": "ext://sys.stderr"}},
        "loggers": {name: {"handlers": ["stderr"], "level": level.upper(), "propagate": False}
                    for name in ("uvicorn", "uvicorn.error")},
    }
