"""The turn lease (SPEC 17.8) against a real SQLite store: of two attempts that read one
version, only one secures the turn (the other never runs it, so never sends its action); an
attempt that meets a live lease waits until the holder saves, then reads the new state; a
lease whose holder is gone expires and the turn is taken again with the same number; a lease
lasts the budgets of the scenario's skill nodes and a margin, and only action scenarios take one."""

from __future__ import annotations

import asyncio
import time

from interpreter.service.lease import LEASE_MARGIN, lease_seconds, release, secure_turn
from interpreter.service.sessions import SessionRecord, decode_record, encode_record
from interpreter.skills.webhook import MARGIN_MS
from interpreter.state import DialogueState
from interpreter.stores.records import open_store

LEASE = 30.0  # seconds


class Clock:
    def __init__(self) -> None:
        self.now = time.time()  # the store expires records by the wall clock

    def __call__(self) -> float:
        return self.now


def record() -> SessionRecord:
    return SessionRecord("orders", DialogueState(session_id="s", ir_hash="h",
                                                 current_node="ask"))


def test_one_of_two_attempts_secures_the_turn_and_a_live_lease_waits_for_its_save(tmp_path):
    async def scenario():
        store, clock = open_store(f"sqlite:{tmp_path / 'db'}"), Clock()
        version = await store.put("s", encode_record(record()), 0, clock())
        first = await secure_turn(store, "s", record(), version, encode_record, clock, LEASE)
        second = await secure_turn(store, "s", record(), version, encode_record, clock, LEASE)
        assert first == version + 1 and second is None  # the loser never runs the turn
        held = decode_record((await store.get("s")).data)
        assert held.lease_until > clock()

        async def holder_saves():
            await asyncio.sleep(0.2)
            await store.put("s", encode_record(record()), first, clock())

        saving = asyncio.create_task(holder_saves())
        waited = await secure_turn(store, "s", held, first, encode_record, clock, LEASE)
        await saving
        assert waited is None  # it waited for the save, then re-reads the new state
        await store.close()

    asyncio.run(scenario())


def test_an_expired_lease_is_taken_over_and_a_released_one_is_free(tmp_path):
    async def scenario():
        store, clock = open_store(f"sqlite:{tmp_path / 'db'}"), Clock()
        version = await store.put("s", encode_record(record()), 0, clock())
        held = await secure_turn(store, "s", record(), version, encode_record, clock, LEASE)
        stale = decode_record((await store.get("s")).data)
        clock.now += 60  # the holder crashed: its lease ran out
        again = await secure_turn(store, "s", stale, held, encode_record, clock, LEASE)
        assert again == held + 1
        await release(store, "s", record(), again, encode_record, clock)
        assert decode_record((await store.get("s")).data).lease_until == 0.0
        await store.close()

    asyncio.run(scenario())


def test_a_lease_lasts_the_skills_budgets_and_a_margin_and_only_where_an_action_runs():
    from test_webhooks import compiled, scenario

    hooked = scenario("https://orders.example.com/x", timeout_seconds=1)
    assert lease_seconds(compiled(hooked)[1].program) == 1 + MARGIN_MS / 1000 + LEASE_MARGIN
    del hooked["skills"]
    hooked["graph"]["nodes"][1]["params"] = {"skill": "weather"}  # reads, never acts
    assert lease_seconds(compiled(hooked)[1].program) == 0.0
