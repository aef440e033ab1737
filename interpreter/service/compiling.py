"""Compiles of posted scenarios in a child process under a CPU-time limit (SPEC 11.1, 17.6).

In: a scenario's text, from `/session/json` or `/session/validate`. Out: `(diagnostics,
errors, warnings, ir_bytes or None)`, or `TooCostly` when the compile used more than
`seconds` of CPU (the child is killed by the kernel: RLIMIT_CPU), or `Busy` when `queue`
compiles already run or wait in this worker.
After: the event loop only waits on a pipe; the child (`python -m
interpreter.service.compiling`) imports the compiler once and serves compiles one at a time;
a child that dies is replaced by the next compile; a compile whose caller is cancelled (its
client left, SPEC 11.1) kills the child at once and frees its place in the queue when the
thread waiting on it has ended; `close()` kills it and refuses every compile after
(`Stopping`), so SIGTERM never waits on a compile.

Why a child process and not a thread: a thread cannot be stopped, and a compile holding the
GIL for seconds slows every turn; why one long-lived child and not one per compile: starting
Python and importing the compiler costs about a second.
"""

from __future__ import annotations

import asyncio
import math
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
from typing import Any

import msgspec

from .. import MagoError

_FRAME = struct.Struct(">I")
START_SECONDS = 30.0  # wall time for the child to start and import the compiler
WALL_FACTOR = 3.0  # a compile waiting on the machine, not on CPU: killed after this x limit


class TooCostly(MagoError):
    """The compile went over its CPU-time limit (or the child died while compiling)."""


class Busy(MagoError):
    """The compile queue of this worker is full."""


class Stopping(MagoError):
    """The server is stopping: the compile was killed, or not started."""


class Job(msgspec.Struct, array_like=True):
    text: str
    seconds: float


class Outcome(msgspec.Struct, array_like=True):
    diagnostics: list[dict]
    errors: int
    warnings: int
    blob: bytes | None


class Compiler:
    """One child process and the bounded queue in front of it (one per service worker)."""

    def __init__(self, seconds: float, queue: int):
        self.seconds, self.queue = seconds, queue
        self._waiting = 0
        self._one_at_a_time = asyncio.Lock()
        self._child: subprocess.Popen | None = None
        self._guard = threading.Lock()  # the child is replaced and killed from threads
        self._stopping = False

    async def compile(self, text: str) -> Outcome:
        if self._stopping:
            raise Stopping
        if self._waiting >= self.queue:
            raise Busy
        self._waiting += 1
        try:
            async with self._one_at_a_time:
                running = asyncio.ensure_future(asyncio.to_thread(self._run, text))
                running.add_done_callback(_retrieved)
                try:
                    return await asyncio.shield(running)
                except asyncio.CancelledError:  # the client left: stop the work it asked for
                    self._stop_child()
                    await asyncio.wait([running])  # the thread ends with the child
                    raise
        finally:
            self._waiting -= 1

    def _run(self, text: str) -> Outcome:
        """In a thread: send the job, wait for the answer within the wall limit."""
        if self._stopping:
            raise Stopping
        child = self._started()
        data = msgspec.msgpack.encode(Job(text, self.seconds))
        try:
            child.stdin.write(_FRAME.pack(len(data)) + data)
            child.stdin.flush()
            answer = _read_frame(child.stdout, self.seconds * WALL_FACTOR + 1)
        except (OSError, ValueError, EOFError, TimeoutError):
            answer = None
        if answer is None:
            self._kill(child)
            raise Stopping if self._stopping else TooCostly
        return msgspec.msgpack.decode(answer, type=Outcome)

    def _started(self) -> subprocess.Popen:
        with self._guard:
            if self._child is None or self._child.poll() is not None:
                self._child = subprocess.Popen(
                    [sys.executable, "-m", "interpreter.service.compiling"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
                ready = _read_frame(self._child.stdout, START_SECONDS)
                if ready != b"ready":
                    self._child.kill()
                    raise Stopping if self._stopping else TooCostly
            return self._child

    def _kill(self, child: subprocess.Popen) -> None:
        with self._guard:
            if child.poll() is None:
                child.kill()
            child.wait()
            if self._child is child:
                self._child = None

    def _stop_child(self) -> None:
        """Kill the child now, from the event loop: without the guard (a thread may hold it
        while a new child starts), and without waiting (the thread reading it reaps it)."""
        child = self._child
        if child is not None and child.poll() is None:
            try:
                child.kill()
            except OSError:
                pass  # it ended meanwhile

    def close(self) -> None:
        """Kill the compile under way, and refuse the ones after (`Stopping`)."""
        self._stopping = True
        self._stop_child()


def _retrieved(done: asyncio.Future) -> None:
    """A compile's outcome that nobody awaits any more (its client left) is not an error."""
    if not done.cancelled():
        done.exception()


def _read_frame(stream: Any, seconds: float) -> bytes | None:
    """One length-prefixed frame from the child, or None at its end or after `seconds`."""
    head = _read_exactly(stream, _FRAME.size, seconds)
    if head is None:
        return None
    return _read_exactly(stream, _FRAME.unpack(head)[0], seconds)


def _read_exactly(stream: Any, size: int, seconds: float) -> bytes | None:
    fd, parts, left = stream.fileno(), [], size
    deadline = _now() + seconds
    while left:
        wait = deadline - _now()
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            return None
        chunk = os.read(fd, left)
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _now() -> float:
    import time

    return time.monotonic()


# --- the child ----------------------------------------------------------------------------

def serve_compiles() -> None:
    """The child: import the compiler, say ready, then compile job after job."""
    from compiler.driver import check_source

    signal.signal(signal.SIGXCPU, signal.SIG_DFL)  # over the limit: the kernel ends us
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # ... without leaving a core file
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    _write(stdout, b"ready")
    while True:
        head = stdin.read(_FRAME.size)
        if len(head) < _FRAME.size:
            return
        job = msgspec.msgpack.decode(stdin.read(_FRAME.unpack(head)[0]), type=Job)
        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = used.ru_utime + used.ru_stime
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(spent + job.seconds), hard))
        result = check_source("scenario", job.text)
        blob = result.ir_bytes() if not result.errors else None
        _write(stdout, msgspec.msgpack.encode(Outcome(
            [d.as_json() for d in result.diagnostics], result.errors, result.warnings, blob)))


def _write(stream: Any, data: bytes) -> None:
    stream.write(_FRAME.pack(len(data)) + data)
    stream.flush()


if __name__ == "__main__":
    serve_compiles()
