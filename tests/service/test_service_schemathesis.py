"""Schemathesis (`--checks all`) against a real `mgi serve`, without and with a key: every
answer conforms to the OpenAPI document, every schema-valid request is accepted, no 500.

Bounded: a few examples per operation and a time limit on the whole run; the stateful
phase follows the links from session creation to the message, view and delete operations.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.service_server import ServiceServer

KEY = "k3y-schemathesis"
# Whether a scenario compiles, a profile fits its scenario, or a report's `since` is a real
# date, is not a thing a schema can say: 422 answers such schema-valid requests.
CONFIG = """
[[operations]]
include-path-regex = "^/dm/v1/(session(/json|/validate)?|report)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429", "503"]
"""
ST = Path(sys.executable).with_name("st")


@pytest.mark.parametrize("keyed", [False, True], ids=["no key", "key"])
def test_schemathesis_finds_no_failure(served_irs, tmp_path, keyed):
    if not ST.exists() and shutil.which("st") is None:
        pytest.skip("schemathesis is not installed (the dev extra installs it)")
    env = {"MAGO_API_KEY": KEY} if keyed else {}
    with ServiceServer([served_irs], env=env) as server:
        config = tmp_path / "schemathesis.toml"
        config.write_text(CONFIG)
        command = [str(ST if ST.exists() else "st"), "--config-file", str(config), "run",
                   f"{server.base}/openapi.json",
                   "--checks", "all", "--max-examples", "15", "--workers", "1",
                   "--seed", "1", "--no-color"]
        if keyed:
            command += ["-H", f"Authorization: Bearer {KEY}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=400,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stdout[-6000:]
        assert server.process.poll() is None  # still serving
