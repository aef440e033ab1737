"""A real `mgi serve` in a child process on a free loopback port, and a small HTTP client.

`ServiceServer(paths, store=..., extra=[...], env={...}).start()` runs
`python -m interpreter.cli serve PATHS --host 127.0.0.1 --port P ...`, waits until `/healthz`
answers (or fails with the server's stderr), and `stop()` sends SIGTERM and waits (SIGKILL
after a grace period); `kill()` is SIGKILL to the server and its workers. `call(method, path, body)` returns
`(status, decoded JSON or text, headers)` over one `http.client` connection; `Client` keeps a
connection open for many calls (one per thread). Nothing here mocks HTTP: every test talks to
the real server over TCP.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("senimate", "clinic_booking", "senimate_weather")


def wait_for(predicate, timeout: float = 5.0):
    """`predicate()` polled until it is true or `timeout` seconds have passed; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def compile_irs(folder: Path, names: tuple[str, ...] = SHIPPED) -> Path:
    """`folder` with NAME.ir compiled from scenarios/NAME.json for each of `names`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        done = subprocess.run([sys.executable, "-m", "compiler", "compile",
                               str(ROOT / "scenarios" / f"{name}.json"),
                               "-o", str(folder / f"{name}.ir")],
                              cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    return folder


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample of a `/metrics` text (0 when it is not there yet)."""
    for line in text.splitlines():
        sample, _, value = line.rpartition(" ")
        found = re.fullmatch(r"(\w+)(?:\{(.*)\})?", sample)
        if found and found.group(1) == name and \
                dict(re.findall(r'(\w+)="([^"]*)"', found.group(2) or "")) == labels:
            return float(value)
    return 0.0


class ServiceServer:
    def __init__(self, paths: list[str | os.PathLike], store: str = "memory:",
                 extra: list[str] | None = None, env: dict[str, str] | None = None,
                 port: int | None = None, open_files: int | None = None):
        self.open_files = open_files  # RLIMIT_NOFILE of the server (soft and hard)
        self.paths = [str(p) for p in paths]
        self.store = store
        self.extra = list(extra or [])
        self.env = dict(env or {})
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "interpreter.cli", "serve", *self.paths,
                "--host", "127.0.0.1", "--port", str(self.port), "--store", self.store,
                *self.extra]

    def start(self, timeout: float = 90) -> ServiceServer:
        env = {**os.environ, **self.env}
        self._stderr.seek(0)
        self._stderr.truncate()
        self.process = subprocess.Popen(self.command(), cwd=ROOT, env=env,
                                        stdout=subprocess.DEVNULL, stderr=self._stderr,
                                        start_new_session=True,  # its workers: one group
                                        preexec_fn=self._limit_files if self.open_files
                                        else None)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mgi serve exited {self.process.returncode}: {self.log()}")
            try:
                status, _, _ = self.call("GET", "/healthz", timeout=1)
                if status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"mgi serve did not answer in {timeout} s: {self.log()}")

    def _limit_files(self) -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    def log(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def log_lines(self) -> list[dict]:
        return [json.loads(line) for line in self.log().splitlines() if line.startswith("{")]

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, then wait; the exit status (SIGKILL after `timeout`)."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self) -> None:
        """SIGKILL to the server and every worker it started (its process group)."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()

    def call(self, method: str, path: str, body: Any = None, headers: dict | None = None,
             timeout: float = 30) -> tuple[int, Any, dict]:
        client = Client(self.port, timeout)
        try:
            return client.call(method, path, body, headers)
        finally:
            client.close()

    def __enter__(self) -> ServiceServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        try:
            self.stop()
        finally:
            self.kill()


class Client:
    """One keep-alive connection; `body` is JSON-encoded unless it is bytes."""

    def __init__(self, port: int, timeout: float = 30):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def call(self, method: str, path: str, body: Any = None,
             headers: dict | None = None) -> tuple[int, Any, dict]:
        data = body if isinstance(body, (bytes, type(None))) else \
            json.dumps(body, ensure_ascii=False).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        self.connection.request(method, path, body=data, headers=sent)
        answer = self.connection.getresponse()
        raw = answer.read()
        kind = answer.getheader("content-type", "")
        value: Any = raw.decode("utf-8", "replace")
        if raw and kind.startswith("application/json"):
            value = json.loads(raw)
        return answer.status, value, {k.lower(): v for k, v in answer.getheaders()}

    def close(self) -> None:
        self.connection.close()
