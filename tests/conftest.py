"""Shared test helpers: hypothesis profiles, the repository root, `mgc` as a separate process.

Profiles: `ci` (the default, used by `make test`) is derandomized, so every CI run checks the
same examples, and reports a failure unshrunk (`shrink` is the same with shrinking); `long` (`make fuzz`) is randomized with `MAGO_FUZZ_SCALE` (default 20) times
as many examples for every property, and keeps its example database under build/, so a
failure found once is replayed first next time. Properties set their count with `examples(n)`:
n in `ci`, n x scale in `long`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

ROOT = Path(__file__).resolve().parent.parent

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
SCALE = int(os.environ.get("MAGO_FUZZ_SCALE", "20")) if PROFILE == "long" else 1
# The ci profile does not shrink: a failure is reported as found, at once, instead of after
# minutes of shrinking on a 2-core machine (rerun it with HYPOTHESIS_PROFILE=shrink to get the
# smallest example).
settings.register_profile("ci", derandomize=True, deadline=None, database=None,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])
settings.register_profile("shrink", derandomize=True, deadline=None, database=None)
settings.register_profile(
    "long", max_examples=100 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    database=DirectoryBasedExampleDatabase(str(ROOT / "build" / "hypothesis")))
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """The example count of a property: `n` in the ci profile, scaled in `long`."""
    return n * SCALE


def run_mgc(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """`mgc ARGS...` in a child process, from the repository root; text output, never raises."""
    return subprocess.run(
        [sys.executable, "-m", "compiler.cli", *map(str, args)],
        cwd=ROOT, capture_output=True, text=True, encoding="utf-8", errors="replace",
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def mgc():
    """The `run_mgc` function, for tests that want it as a fixture."""
    return run_mgc


@pytest.fixture(scope="module")
def server():
    """The scripted loopback LLM server (`tests/support/llm_server.py`), one per test module."""
    from support.llm_server import LLMServer

    running = LLMServer().start()
    yield running
    running.stop()


@pytest.fixture
def llm(server):
    """The server with its scripted replies and request log cleared."""
    server.reset()
    return server


def self_signed_certificate(folder: Path) -> tuple[str, str]:
    """(certificate, key) paths of a self-signed certificate for 127.0.0.1 made by the
    `openssl` command in `folder` (the test is skipped without it)."""
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a test certificate")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True, timeout=30)
    if made.returncode != 0:
        pytest.skip(f"openssl could not make a test certificate: {made.stderr[-200:]!r}")
    return cert, key


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """The loopback LLM server over HTTPS, with a self-signed certificate for 127.0.0.1 made
    by the `openssl` command (skipped without it); a client trusts it by `SSL_CERT_FILE`.
    Yields (server, certificate path)."""

    from support.llm_server import LLMServer

    cert, key = self_signed_certificate(tmp_path_factory.mktemp("tls"))
    running = LLMServer(tls=(cert, key)).start()
    yield running, cert
    running.stop()


@pytest.fixture(scope="module")
def redis_server():
    """A real `redis-server` on loopback (`tests/support/redis_server.py`), one per test module;
    skipped when the command is not installed."""
    from support.redis_server import RedisServer

    running = RedisServer().start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def served_irs(tmp_path_factory):
    """A folder with the shipped scenarios compiled, once per test process, for the service's
    tests to serve and the CLI's tests to run."""
    from support.service_server import compile_irs

    return compile_irs(tmp_path_factory.mktemp("served-irs"))


@pytest.fixture(scope="session")
def service(served_irs):
    """One real `mgi serve` with the default options (`memory:` store, no key) serving
    `served_irs`, shared by every test of a test process that needs no option of its own; a
    test that needs options starts its own `ServiceServer`. Tests on it make their own sessions
    and never assume the server is fresh."""
    from support.service_server import ServiceServer

    with ServiceServer([served_irs]) as running:
        yield running


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `service` and `browser` markers, from what a test's module uses, so that a new test
    is marked without anyone remembering to: `service` where the module starts a real
    `mgi serve` (it holds `ServiceServer`) or the test takes the shared `service`, `browser`
    where it drives Chromium (it holds a name from `support.playground_browser`). `slow` is set
    by hand on the tests that take seconds each (`-m "not slow"` is the quick loop)."""
    from support import playground_browser
    from support.service_server import ServiceServer

    for item in items:
        names = vars(item.module).values() if getattr(item, "module", None) else ()
        if "service" in item.fixturenames or any(value is ServiceServer for value in names):
            item.add_marker(pytest.mark.service)
        if any(getattr(value, "__module__", None) == playground_browser.__name__
               for value in names):
            item.add_marker(pytest.mark.browser)
