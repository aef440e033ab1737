"""A real `redis-server` on loopback for the store tests: started, killed and restarted on cue.

    server = RedisServer().start()        # or the `redis_server` fixture
    server = RedisServer("--requirepass", "pw").start()  # more redis-server options
    store = open_store(server.url)        # redis://127.0.0.1:PORT/0
    server.kill(); server.restart()       # SIGKILL, then the same port and folder again
    server.stop()

The server runs in a temporary folder of its own on a free loopback port, with no snapshots
and an append-only file synced on every write (`--appendonly yes --appendfsync always`), so
whatever it acknowledged before a `kill()` is back after `restart()`. `start()` returns once
the server answers PING (at most `START_SECONDS`), else raises with the server's own output.
Without the `redis-server` command the Redis tests skip (`redis_or_skip()`, `needs_redis`);
the `redis_server` fixture of conftest runs one per test module.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

START_SECONDS = 10.0
STOP_SECONDS = 5.0
MISSING = "redis-server is not installed (.ci/run installs it with apt)"


def redis_binary() -> str | None:
    return shutil.which("redis-server")


def redis_or_skip() -> str:
    """The `redis-server` command, or skip the calling test."""
    binary = redis_binary()
    if binary is None:
        pytest.skip(MISSING)
    return binary


needs_redis = pytest.mark.skipif(redis_binary() is None, reason=MISSING)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers_ping(port: int, timeout: float = 0.5) -> bool:
    """Whether a server on `port` answers an inline PING (+PONG, or -NOAUTH when it wants a
    password first)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


class RedisServer:
    """One `redis-server` process; `start()` runs it, `stop()` ends it and its folder."""

    def __init__(self, *options: str, binary: str | None = None):
        self.binary = binary or redis_or_skip()
        self.options = options  # more redis-server options, e.g. "--requirepass", "pw"
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="mago-redis-"))
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        return [self.binary, "--save", "", "--appendonly", "yes", "--appendfsync", "always",
                "--dir", str(self.dir), "--port", str(self.port), "--bind", "127.0.0.1",
                "--protected-mode", "yes", "--daemonize", "no", *self.options]

    def start(self) -> RedisServer:
        log = open(self.dir / "server.log", "wb")  # noqa: SIM115 - closed once the child has it
        self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while not answers_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self._end(signal.SIGKILL)
                output = self.output()
                shutil.rmtree(self.dir, ignore_errors=True)
                raise RuntimeError(f"redis-server did not answer PING on port {self.port} "
                                   f"within {START_SECONDS:g} s:\n{output}")
            time.sleep(0.02)
        return self

    def output(self) -> str:
        """What the server printed (its log), for failure messages."""
        try:
            return (self.dir / "server.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _end(self, first: signal.Signals) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(first)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def kill(self) -> None:
        """SIGKILL: the server stops at once, without saving anything more."""
        self._end(signal.SIGKILL)

    def restart(self) -> RedisServer:
        """Start again on the same port and folder (the append-only file reloads the data)."""
        self._end(signal.SIGTERM)
        return self.start()

    def stop(self) -> None:
        """SIGTERM (SIGKILL after `STOP_SECONDS`), then remove the folder."""
        self._end(signal.SIGTERM)
        shutil.rmtree(self.dir, ignore_errors=True)

