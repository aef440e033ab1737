"""The fast tally of `mgi report` against a naive recount, on random event histories.

`analytics.aggregate` counts shapes of turns, sweeps quiet sessions in batches and takes back
the abandonment of one that comes back; `analytics.sources` decodes batches with the strings
as Literals learnt on the way. The recount here does none of that: it holds every event,
groups them by session and reads each figure off its SPEC 16 definition. Both must agree on
every figure, whatever the batches the events come in, and read through every source `mgi
report` reads (a JSON-lines file, a SQLite store), in the order a store keeps them.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import msgspec
from conftest import examples
from hypothesis import given, settings, strategies as st
from support.strategies import event_histories

from interpreter.analytics.aggregate import ABANDON_SECONDS, BINS, SETTLE_EVERY, Aggregator, median
from interpreter.analytics.events import Event
from interpreter.analytics.sources import EventReader, feed

SHOWN = 10


def recount(events: list[dict], now: float, since: float | None) -> dict:
    """The figures of each (scenario, IR hash), from their definitions."""
    kept = [e for e in events if since is None or e["time"] >= since]
    window = since if since is not None else (kept[0]["time"] if kept else None)
    versions: dict = defaultdict(lambda: {
        "events": 0, "started": 0, "completed": 0, "abandoned": 0, "active": 0, "resumed": 0,
        "done_turns": Counter(), "visits": Counter(), "turns": Counter(), "fallbacks": Counter(),
        "drop_offs": Counter(), "exits": defaultdict(Counter), "edges": Counter(),
        "safety": Counter(), "bins": [0] * BINS, "none": 0, "texts": defaultdict(Counter)})
    sessions = defaultdict(list)
    for event in kept:
        sessions[event["session_id"]].append(event)
        tally = versions[event["scenario"], event["ir_hash"]]
        tally["events"] += 1
        if event.get("kind") == "started":
            tally["started"] += 1
            tally["visits"][event["node"]] += 1
            continue
        turn_figures(tally, event)
        if event["idle"] >= ABANDON_SECONDS and event["time"] - event["idle"] >= window:
            tally["resumed"] += 1  # back after 30 minutes, its previous event reported
    for history in sessions.values():
        last = history[-1]
        tally = versions[last["scenario"], last["ir_hash"]]
        if last.get("complete"):
            continue
        if last["time"] <= now - ABANDON_SECONDS:
            tally["abandoned"] += 1
            tally["drop_offs"][last["next_node"] or last["node"]] += 1
        else:
            tally["active"] += 1
    return dict(versions)


def turn_figures(tally: dict, event: dict) -> None:
    node = event["node"]
    tally["turns"][node] += 1
    if event.get("fallback") is not None:
        tally["fallbacks"][node] += 1
    hops = [node] + [hop for hop, _ in event["passed"]]
    reasons = [event["reason"]] + [why for _, why in event["passed"]]
    if event["next_node"] is not None:
        hops.append(event["next_node"])
    for index, (here, there) in enumerate(zip(hops, hops[1:])):
        if here != there:
            tally["exits"][here][reasons[index]] += 1
            tally["visits"][there] += 1
            tally["edges"][here, there, reasons[index]] += 1
    if event.get("complete"):
        tally["completed"] += 1
        tally["done_turns"][event["turn"]] += 1
        tally["exits"][hops[-1]][reasons[-1]] += 1
    if event.get("safety"):
        tally["safety"][event["safety"]] += 1
    if event["confidence"] is None:
        tally["none"] += 1
    else:
        tally["bins"][min(BINS - 1, int(event["confidence"] * BINS))] += 1
    if event.get("text"):
        tally["texts"][node][event["text"]] += 1


def comparable(version: dict) -> dict:
    """The figures of one version of a report, in the recount's terms."""
    nodes = {n["node"]: n for n in version["nodes"]}
    sessions = version["sessions"]
    return {
        "events": version["events"], "started": sessions["started"],
        "completed": sessions["completed"], "abandoned": sessions["abandoned"],
        "active": sessions["active"], "resumed": sessions["resumed"],
        "median": version["median_turns_to_complete"],
        "visits": {k: n["visits"] for k, n in nodes.items() if n["visits"]},
        "turns": {k: n["turns"] for k, n in nodes.items() if n["turns"]},
        "fallbacks": {k: n["fallbacks"] for k, n in nodes.items() if n["fallbacks"]},
        "drop_offs": {k: n["drop_offs"] for k, n in nodes.items() if n["drop_offs"]},
        "exits": {k: n["exits"] for k, n in nodes.items() if n["exits"]},
        "edges": {(e["from"], e["to"], reason): count for e in version["transitions"]
                  for reason, count in e["reasons"].items()},
        "safety": version["safety"],
        "bins": [b["count"] for b in version["confidence"]["bins"]],
        "none": version["confidence"]["none"],
        "texts": {node: [(t["text"], t["count"]) for t in texts]
                  for node, texts in version["unmatched"].items()}}


def expected(tally: dict) -> dict:
    positive = lambda counts: {k: v for k, v in counts.items() if v}  # noqa: E731
    return {
        "events": tally["events"], "started": tally["started"],
        "completed": tally["completed"], "abandoned": tally["abandoned"],
        "active": tally["active"], "resumed": tally["resumed"],
        "median": median(tally["done_turns"]),
        "visits": positive(tally["visits"]), "turns": positive(tally["turns"]),
        "fallbacks": positive(tally["fallbacks"]), "drop_offs": positive(tally["drop_offs"]),
        "exits": {k: dict(v) for k, v in tally["exits"].items() if v},
        "edges": dict(tally["edges"]), "safety": dict(tally["safety"]),
        "bins": tally["bins"], "none": tally["none"],
        "texts": {node: sorted(counts.items(), key=lambda i: (-i[1], i[0]))[:SHOWN]
                  for node, counts in tally["texts"].items()}}


def assert_agree(report: dict, events: list[dict], now: float, since: float | None) -> None:
    counted = recount(events, now, since)
    found = {(v["scenario"], v["ir_hash"]): comparable(v) for v in report["scenarios"]}
    assert found.keys() == counted.keys()
    for key, tally in counted.items():
        assert found[key] == expected(tally), key
    assert report["events"] == sum(t["events"] for t in counted.values())


def split(items: list, cuts: list[int]) -> list[list]:
    points = sorted({min(c, len(items)) for c in cuts}) + [len(items)]
    parts, start = [], 0
    for point in points:
        parts.append(items[start:point])
        start = point
    return parts


histories = st.tuples(event_histories(), st.sampled_from([0, 100, 1799, 1800, 5000]),
                      st.one_of(st.none(), st.integers(0, 9000)),
                      st.lists(st.integers(0, 80), max_size=4))


@settings(max_examples=examples(150))
@given(histories)
def test_the_tally_agrees_with_a_recount_in_any_batches(drawn):
    """Events decoded by `EventReader` (Literals learnt batch by batch) and tallied in
    batches of any size."""
    events, after, since, cuts = drawn
    now = max(e["time"] for e in events) + after
    reader, aggregator = EventReader(), Aggregator(None, since, now)
    for part in split(events, cuts):
        if part:
            aggregator.add_all(reader.array(msgspec.json.encode(part)))
    assert_agree(aggregator.report(), events, now, since)


@settings(max_examples=examples(25))
@given(histories)
def test_every_source_agrees_with_a_recount(drawn):
    """The same events through a JSON-lines file, a SQLite store's table, and as `Event`s
    (the memory store's): one report each, all equal to the recount."""
    from interpreter.stores.sqlite_sql import INSERT_EVENT, SCHEMA

    events, after, since, _ = drawn
    now = max(e["time"] for e in events) + after
    blobs = [msgspec.json.encode(e) for e in events]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        path.write_bytes(b"".join(blob + b"\n" for blob in blobs))
        conn = sqlite3.connect(Path(folder) / "store.db")
        for statement in SCHEMA:
            conn.execute(statement)
        conn.executemany(INSERT_EVENT, [(e["session_id"], e["time"], blob)
                                        for e, blob in zip(events, blobs)])
        conn.commit()
        conn.close()
        sources = [str(path), f"sqlite:{Path(folder) / 'store.db'}",
                   [msgspec.json.decode(blob, type=Event) for blob in blobs]]
        for source in sources:
            report = feed(Aggregator(None, since, now), source, since).report()
            assert_agree(report, events, now, since)


@settings(max_examples=examples(100))
@given(histories, st.sampled_from([0.0, 1.0, 60.0, 1800.0, float("inf")]))
def test_when_quiet_sessions_are_swept_changes_no_figure(drawn, every):
    """Sessions are settled as abandoned by sweeps every `SETTLE_EVERY` seconds of event
    time, not at each event: sweeping at every event, every minute, every half hour or only
    at the end gives the same report (a session settled, then back, is taken back at the node
    it was counted lost at)."""
    events, after, since, cuts = drawn
    now = max(e["time"] for e in events) + after
    reports = []
    for sweep in (SETTLE_EVERY, every):
        reader, aggregator = EventReader(), Aggregator(None, since, now)
        aggregator.settle_every = sweep
        for part in split(events, cuts):
            if part:
                aggregator.add_all(reader.array(msgspec.json.encode(part)))
        report = aggregator.report()
        report.pop("generated_at")
        reports.append(report)
    assert reports[0] == reports[1]
