"""Who may call what (SPEC 15, 17.1, 17.6, 17.9): the service's webhook policy and the
bounded executor that keeps skill and LLM turns off the event loop.

In: the operator's choice (`--allow-api-webhooks`, `MAGO_WEBHOOK_HOSTS`), a scenario posted
to `/session/json` or `/session/validate` (its `skills`), a runtime about to run a turn.
Out: the refusals of a posted scenario (`refusals`: (pointer, message) pairs), raised as
422 `webhook_not_allowed` on `/session/json` (`refuse_posted`) or added as E113 diagnostics
on `/session/validate` (`with_refusals`); for the start files, a one-line error before any
worker starts (`check_started`); `TurnExecutor`, which runs a turn that may wait on the
network (a skill node, an LLM) in a thread pool of its own, bounded, so a slow receiver
holds one thread and its own session, never the loop.
Posted scenarios may not read the server's environment (`${NAME}`), may call only listed
hosts, and never a loopback, link-local or private address: a literal one is refused here,
a name that resolves to one is refused when the call is made (`private_address`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from .. import ir
from ..skills.webhook import (CA_FILE_ENV, HOSTS_ENV, WebhookConfigError, allowed_hosts,
                              private_address)
from .design import key_positions
from .http import ApiError
from .lease import lease_seconds

DEFAULT_SKILL_THREADS = 64  # turns waiting on a receiver or an LLM at once, per worker
PRESTART_SECONDS = 30.0  # starting the pool's threads never waits longer than this
ENV_MARK = "${"


class TurnExecutor:
    """A bounded thread pool for turns that may block; others run on the loop directly."""

    def __init__(self, threads: int = DEFAULT_SKILL_THREADS):
        self.threads = threads
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="turn")
        self._blocking: dict[str, bool] = {}
        self._leases: dict[str, float] = {}

    def blocks(self, runtime: Any) -> bool:
        """Whether a turn of `runtime` may run a skill (any skill node), cached by IR hash."""
        known = self._blocking.get(runtime.ir_hash)
        if known is None:
            known = ir.EXECUTOR_SKILL in ir.node_executors(runtime.program)
            if len(self._blocking) > 4096:
                self._blocking.clear()
            self._blocking[runtime.ir_hash] = known
        return known

    async def lease(self, ir_hash: str, registry: Any) -> float:
        """The seconds of the lease a turn of that IR takes, 0 when it runs no action skill
        (SPEC 17.8); found off the loop once per IR (every node is decoded to know)."""
        known = self._leases.get(ir_hash)
        if known is None:
            runtime = await registry.runtime(ir_hash)
            if not self.blocks(runtime):
                known = 0.0
            else:
                known = await self.run(lease_seconds, runtime.program)
            if len(self._leases) > 4096:
                self._leases.clear()
            self._leases[ir_hash] = known
        return known

    def prestart(self) -> None:
        """Start every thread of the pool now, off the loop. Why: `ThreadPoolExecutor`
        starts a thread inside a `submit` that finds none idle, and `Thread.start` waits
        until the new thread runs; on a busy machine, with the other threads holding the
        interpreter lock, that held the event loop (and `/healthz`) for up to a second."""
        gate = threading.Barrier(self.threads + 1)  # each submit finds no idle thread
        for _ in range(self.threads):
            self._pool.submit(gate.wait, PRESTART_SECONDS)
        gate.wait(PRESTART_SECONDS)

    async def run(self, function: Callable, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, function, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def check_started(scenarios: Iterable[Any], allow_api: bool) -> list[str]:
    """`WebhookConfigError` (one line) for a start file whose webhook reads a variable that
    is not set or calls a host `MAGO_WEBHOOK_HOSTS` does not list, and for
    `--allow-api-webhooks` without `MAGO_WEBHOOK_HOSTS` (SPEC 17.9); else the warning lines
    for declared python skills that are not installed (SPEC 14.7)."""
    from ..skills.registry import SkillRegistry
    from ..skills.webhook import missing_python_skills, webhook_skills

    if allow_api and allowed_hosts(os.environ) is None:
        raise WebhookConfigError(f"--allow-api-webhooks needs {HOSTS_ENV} (the hosts a posted "
                                 "scenario may call, comma-separated)")
    programs = [scenario.runtime.program for scenario in scenarios]
    for program in programs:
        webhook_skills(program, live=True)
    if not any(d.kind == "python" for program in programs for d in program.skills):
        return []  # finding plug-ins scans the installed packages: only when it matters
    installed = SkillRegistry.default().names()
    return [line for program in programs for line in missing_python_skills(program, installed)]


def warm_up(scenarios: Iterable[Any], executor: TurnExecutor | None = None,
            blocking: bool = False) -> None:
    """Before the first turn, off the loop: start the turn executor's threads when a turn
    will use them (an LLM plug-in, a start file with a skill node), and import urllib3 and
    build the pooled client (its TLS context holds the interpreter lock for a while) when a
    start file has a webhook."""
    from ..skills.webhook import shared_client

    scenarios = list(scenarios)
    if executor is not None and (blocking or any(executor.blocks(s.runtime)
                                                 for s in scenarios)):
        executor.prestart()
    if any(d.kind == "webhook" for s in scenarios for d in s.runtime.program.skills):
        shared_client(os.environ.get(CA_FILE_ENV))


def posted_scenario(body: Any) -> Any:
    """The posted scenario as JSON data (None when it is not JSON: the compiler says so)."""
    if body.scenario_json is not None:
        return body.scenario_json
    try:
        return json.loads(body.scenario_text) if body.scenario_text is not None else None
    except (ValueError, RecursionError):
        return None


def refusals(scenario: Any, allow_api: bool) -> list[tuple[str, str]]:
    """(pointer, message) for each webhook a posted scenario may not declare."""
    skills = scenario.get("skills") if isinstance(scenario, dict) else None
    if not isinstance(skills, dict):
        return []
    hosts = allowed_hosts(os.environ)
    found = []
    for name, decl in skills.items():
        if not isinstance(decl, dict) or decl.get("type") != "webhook":
            continue
        where = "/skills/" + str(name).replace("~", "~0").replace("/", "~1")
        if not allow_api:
            found.append((where, f"webhook {name!r}: a scenario posted to the API may not "
                                 "declare webhooks on this server (--allow-api-webhooks)"))
            continue
        problem = _posted_problem(decl, hosts)
        if problem:
            found.append((where, f"webhook {name!r}: {problem}"))
    return found


def _posted_problem(decl: dict, hosts: frozenset[str] | None) -> str | None:
    url = decl.get("url")
    headers = decl.get("headers") if isinstance(decl.get("headers"), dict) else {}
    if not isinstance(url, str):
        return None  # the compiler reports it
    if ENV_MARK in url or any(ENV_MARK in str(v) for v in headers.values()):
        return "a posted scenario may not read the server's environment (${NAME})"
    host = (urlsplit(url).hostname or "").lower()
    if hosts is not None and host not in hosts:
        return f"host {host or '(none)'} is not in {HOSTS_ENV}"
    if host == "localhost" or host.endswith(".localhost"):
        return f"host {host} is this machine"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None  # a name: checked when the call is made (`private_address`)
    if not address.is_global or address.is_multicast:
        return f"host {host} is an internal address"
    return None


def refuse_posted(body: Any, allow_api: bool) -> None:
    """422 `webhook_not_allowed` for a posted scenario with a webhook it may not have."""
    found = refusals(posted_scenario(body), allow_api)
    if found:
        raise ApiError(422, "webhook_not_allowed", found[0][1])


def with_refusals(compiled: Any, text: str, body: Any, allow_api: bool) -> tuple[list, int]:
    """The diagnostics and error count of `/session/validate`, each refusal an E113 there."""
    found = refusals(posted_scenario(body), allow_api)
    if not found:
        return compiled.diagnostics, compiled.errors
    positions = key_positions(text, [pointer for pointer, _ in found])
    extra = []
    for (pointer, message), (line, column) in zip(found, positions):
        extra.append({"code": "E113", "severity": "error", "message": message,
                      "path": pointer, "line": line, "column": column,
                      "hint": "serve it from a file (mgi serve FILE), or ask the operator"})
    merged = sorted([*compiled.diagnostics, *extra],
                    key=lambda d: (d["line"] or 0, d["column"] or 0, d["code"]))
    return merged, compiled.errors + len(extra)


def guard_for(runtime: Any, started: frozenset[str]) -> Callable[[str], str | None] | None:
    """The call-time address check of a posted scenario's webhooks; none for start files."""
    return None if runtime.ir_hash in started else private_address
