"""A store read one batch ahead by a thread of its own (`analytics.ahead`, `mgi report`).

The batches come in order and all of them; the worker's error is raised in the caller; a
caller that stops early (a report past its time limit) stops the worker, whose generator is
closed (a store's connection let go), on a real SQLite store too.
"""

from __future__ import annotations

import sqlite3
import threading
import time

import msgspec
import pytest
from hypothesis import given, strategies as st

from interpreter.analytics.ahead import ahead
from interpreter.analytics.aggregate import Aggregator
from interpreter.analytics.sources import SourceError, TooSlow, feed


def workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "report-reader"]


def no_worker_left() -> None:
    deadline = time.monotonic() + 10
    while workers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not workers()


@given(st.lists(st.integers()))
def test_every_item_comes_in_order(items):
    assert list(ahead(lambda: iter(items))) == items
    no_worker_left()


def test_the_workers_error_is_raised_in_the_caller():
    def produce():
        yield 1
        raise SourceError("the store went away")

    got = []
    with pytest.raises(SourceError, match="went away"):
        for item in ahead(produce):
            got.append(item)
    assert got == [1]
    no_worker_left()


def test_a_caller_that_stops_early_stops_the_worker_and_closes_its_generator():
    closed = threading.Event()

    def produce():
        try:
            yield from range(1_000_000)
        finally:
            closed.set()

    items = ahead(produce)
    assert next(items) == 0
    items.close()
    assert closed.is_set()
    no_worker_left()


def test_a_report_past_its_time_limit_on_sqlite_lets_its_reader_go(tmp_path):
    from interpreter.stores.sqlite_sql import INSERT_EVENT, SCHEMA

    path = tmp_path / "store.db"
    conn = sqlite3.connect(path)
    for statement in SCHEMA:
        conn.execute(statement)
    rows = [(f"s{n}", float(n), msgspec.json.encode(
        {"time": float(n), "scenario": "s", "ir_hash": "h", "session_id": f"s{n}",
         "kind": "started", "node": "a", "next_node": "a", "reason": "opening"}))
        for n in range(30_000)]
    conn.executemany(INSERT_EVENT, rows)
    conn.commit()
    conn.close()
    with pytest.raises(TooSlow):
        feed(Aggregator(), f"sqlite:{path}", deadline=time.monotonic() - 1)
    no_worker_left()
    assert feed(Aggregator(), f"sqlite:{path}").report()["events"] == 30_000
