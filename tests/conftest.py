"""Shared test helpers: the repository root and `mgc` run as a separate process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
