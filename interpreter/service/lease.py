"""The turn lease (SPEC 17.8): a turn that may run an action skill (e-mail, a webhook, a
declared python skill) first secures its turn number in the store.

In: the store, the session's record as read (with its version), the clock. Out: the version
the turn now holds (the record saved again with `lease_until` set, under the version check),
or None when another attempt holds the turn or won the race (re-read the session and try
again). Why: two workers that read the same version would both run turn N and send the same
action; with the lease, the one that loses the lease write never runs the turn, so the action
id it would send is the one the winner records. A lease that outlives its holder (a crash)
expires after `lease_seconds(program)` (the budgets of its skill nodes and a margin, so a
crashed holder keeps the session only that long); the turn retried then has the same number
and action id.
"""

from __future__ import annotations

import asyncio
from typing import Any
from collections.abc import Callable

import msgspec

from .. import ir
from ..skills.registry import DEFAULT_TIMEOUT_MS
from ..skills.webhook import MARGIN_MS
from ..stores.records import VersionConflict

LEASE_MARGIN = 5.0  # seconds past the skills' budgets: the turn's understanding and save
LEASE_CAP = 2 * ir.SkillDecl.MAX_SECONDS  # however many skill nodes a scenario has
POLL_SECONDS = 0.05
ACTION_SKILLS = frozenset({"email"})  # built-ins that act on the world


def lease_seconds(program: ir.Program) -> float:
    """How long a turn of `program` holds its lease: 0 when no node runs an action skill,
    else the budgets of all its skill nodes (a turn passes each at most once), capped, and
    `LEASE_MARGIN`. Decodes every node: call it off the loop, once per IR."""
    declared = {d.name: d for d in program.skills}
    budget, acts = 0.0, False
    for node in program.nodes:
        if not node.skill:
            continue
        decl = declared.get(node.skill)
        acts = acts or node.skill in ACTION_SKILLS or (
            decl is not None and decl.kind in ("webhook", "python"))
        if decl is not None and decl.kind == "webhook":
            budget += decl.timeout_seconds + MARGIN_MS / 1000
        else:
            budget += (node.timeout_ms or DEFAULT_TIMEOUT_MS) / 1000
    return min(budget, LEASE_CAP) + LEASE_MARGIN if acts else 0.0


async def secure_turn(store: Any, session_id: str, record: Any, version: int,
                      encode: Callable[[Any], bytes], clock: Callable[[], float],
                      seconds: float) -> int | None:
    """The version the turn holds once its lease of `seconds` is written, or None (re-read
    and retry)."""
    if record.lease_until > clock() and \
            not await _released(store, session_id, version, record.lease_until, clock):
        return None  # the holder saved (or released) its turn: read the new state
    leased = msgspec.structs.replace(record, lease_until=clock() + seconds)
    try:
        return await store.put(session_id, encode(leased), version, clock())
    except VersionConflict:
        return None


async def _released(store: Any, session_id: str, version: int, until: float,
                    clock: Callable[[], float]) -> bool:
    """Wait for another attempt's lease: False as soon as the session changes, True when
    the lease expired with the session unchanged (its holder is gone)."""
    while clock() < until:
        await asyncio.sleep(POLL_SECONDS)
        current = await store.get(session_id)
        if current is None or current.version != version:
            return False
    return True


async def release(store: Any, session_id: str, record: Any, version: int,
                  encode: Callable[[Any], bytes], clock: Callable[[], float]) -> None:
    """Give the lease back after a turn that failed before its save (best effort)."""
    try:
        await store.put(session_id, encode(msgspec.structs.replace(record, lease_until=0.0)),
                        version, clock())
    except Exception:  # noqa: BLE001 - the lease expires by itself
        pass
