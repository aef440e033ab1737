"""The service's per-worker cache of decoded session records (issue 24): a worker skips the
decode only when the store still holds exactly the bytes it wrote; a write by another worker,
a delete and a re-create are read from the store."""

from __future__ import annotations

import asyncio

from interpreter.service.api import CreateSession, Message
from interpreter.service.app import ServeConfig, make_plugins
from interpreter.service.logs import RequestLog
from interpreter.service.registry import Registry, load_scenarios
from interpreter.service.sessions import Sessions
from interpreter.stores.records import open_store

SCENARIO = "senimate"
TURN = {"dialogue_act": "inform"}


def workers(served_irs, count: int, kept: int = 16):
    """`count` Sessions (workers) over one memory record store, on one event loop."""
    config = ServeConfig(paths=[str(served_irs)], store="memory:")
    scenarios = load_scenarios(config.paths)
    store = open_store("memory:", config.ttl)
    registry = Registry(scenarios, store)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(registry.publish())
    made = [Sessions(store, registry, make_plugins(config, RequestLog("warning")),
                     lambda *args: None, decoded_kept=kept) for _ in range(count)]
    return loop, scenarios[SCENARIO].runtime, made


def say(loop, sessions: Sessions, session_id: str, text: str) -> dict:
    import msgspec

    answer = loop.run_until_complete(
        sessions.message(Message(session_id=session_id, text=text, nlu=TURN), {}))
    return msgspec.json.decode(answer)


def create(loop, runtime, sessions: Sessions, session_id: str) -> None:
    loop.run_until_complete(sessions.create(
        runtime, SCENARIO, CreateSession(scenario=SCENARIO, session_id=session_id)))


def test_two_workers_taking_turns_each_see_the_others_writes(served_irs):
    loop, runtime, (one, two) = workers(served_irs, 2)
    create(loop, runtime, one, "s")
    versions, turns = [], []
    for i in range(6):
        answer = say(loop, (one, two)[i % 2], "s", f"이야기 {i}")
        versions.append(answer["version"])
        turns.append(answer["turn"]["turn"])
    assert versions == list(range(versions[0], versions[0] + 6))  # none lost, none twice
    assert turns == list(range(turns[0], turns[0] + 6))
    record, _ = loop.run_until_complete(one.view("s"))
    assert record.state.session_turns == turns[-1]
    loop.close()


def test_a_recreated_session_is_not_served_from_the_cache(served_irs):
    loop, runtime, (one,) = workers(served_irs, 1)
    create(loop, runtime, one, "s")
    say(loop, one, "s", "첫 이야기")
    say(loop, one, "s", "두 번째 이야기")
    loop.run_until_complete(one.delete("s"))
    create(loop, runtime, one, "s")
    answer = say(loop, one, "s", "다시 처음")
    assert answer["turn"]["turn"] == 2  # the opening, then this one: not the old session's
    loop.close()


def test_the_cache_keeps_at_most_its_bound(served_irs):
    loop, runtime, (one,) = workers(served_irs, 1, kept=3)
    for i in range(5):
        create(loop, runtime, one, f"s{i}")
        say(loop, one, f"s{i}", "안녕하세요")
    assert list(one._decoded) == ["s2", "s3", "s4"]  # the most recent writes
    loop.close()
