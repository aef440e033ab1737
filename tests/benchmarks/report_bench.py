"""`mgi report` on a million events: the time it takes and the memory it holds (SPEC 16).

Run `python tests/benchmarks/report_bench.py [--events N] [--sources file,sqlite,redis]`
from the repository root. It makes N events (default 1,000,000) as `mgi serve` and `mgi run
--events` write them: sessions of the clinic scenario's path, started a second apart over
days, each going some way and then completing or stopping (abandoned), with fallbacks and
kept texts among them. They go into each source `mgi report` reads: a JSON-lines file
(`mgi run --events`), a SQLite store's `events` table and a Redis store's day streams (a real
`redis-server` on a free loopback port). Then, for N/4 and for N events of each source, it
runs `mgi report SOURCE --format json` in a fresh process and prints the wall time, the CPU
time (user + system) and the peak resident memory of that process (`os.wait4`), the events per
second, and the load average at that moment (the machine is shared: under load the wall time
grows, the CPU time much less). The target of issue 28: N events in under 5 s, in memory
that does not grow with N.

Memory stays constant in N because the tally holds counters bounded by the scenario (nodes,
edges, reasons, turn counts, histogram bins, at most 100 texts per node) and, per session,
only those heard from in about the last 30 minutes of event time (`analytics.aggregate`);
the events are read a batch (`sources.BATCH`) at a time from every source. The generator
keeps about the same number of sessions open at any time whatever N is, so the peak of the
N/4 run and of the N run should be the same, and only the time grows (linearly).
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
PATH = ["greeting", "collect_patient_info", "collect_visit_info", "collect_contact",
        "ask_note", "confirm_booking", "booking_done"]
HASH = "e" * 64
TARGET_SECONDS = 5.0
SIZES = (4, 1)  # N/4, then N (250,000 and 1,000,000 events by default)


def session_events(number: int, start: float, rng: random.Random) -> list[dict]:
    """One session's events: a start, a turn per step, maybe a fallback or a safety turn."""
    sid = f"s{number:08d}"
    base = {"scenario": "clinic_booking", "ir_hash": HASH, "session_id": sid}
    events = [{**base, "time": start, "kind": "started", "turn": 1, "node": PATH[0],
               "next_node": PATH[0], "reason": "opening"}]
    now, turn = start, 1
    stop = rng.choice([len(PATH), len(PATH), rng.randrange(1, len(PATH))])
    for index in range(stop):
        node = PATH[index]
        if rng.random() < 0.2:  # a re-prompt
            now += 20
            turn += 1
            events.append({**base, "time": now, "turn": turn, "node": node, "next_node": node,
                           "reason": "fallback:not_understood", "tier": "fallback",
                           "act": "null", "confidence": 0.0, "fallback": "not_understood",
                           "text": rng.choice(["뭐라고요", "글쎄요 ##", "음"]), "idle": 20})
        now += 15
        turn += 1
        last = index == len(PATH) - 1
        events.append({**base, "time": now, "turn": turn, "node": node,
                       "next_node": None if last else PATH[index + 1],
                       "reason": "terminal" if last else "default_next",
                       "tier": "terminal" if last else "default_next", "act": "inform",
                       "intent": None, "confidence": round(rng.random(), 2),
                       "complete": last, "filled": ["patient_name"], "idle": 15})
    return events


def event_rows(count: int, seed: int = 7):
    """(session id, time, the event's JSON) of at least `count` events, in time order
    within each session (sessions a second apart, so the streams interleave them)."""
    rng, encode = random.Random(seed), msgspec.json.encode
    written = number = 0
    while written < count:
        for event in session_events(number, 1.7e9 + number, rng):
            yield event["session_id"], event["time"], encode(event)
            written += 1
        number += 1


def write_file(path: Path, count: int) -> None:
    with path.open("wb") as out:
        for _, _, blob in event_rows(count):
            out.write(blob + b"\n")


def write_sqlite(path: Path, count: int) -> None:
    from interpreter.stores.sqlite_sql import INSERT_EVENT, SCHEMA

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    for statement in SCHEMA:
        conn.execute(statement)
    rows = sorted(event_rows(count), key=lambda row: row[1])  # a store writes in time order
    conn.executemany(INSERT_EVENT, rows)
    conn.commit()
    conn.close()


def write_redis(url: str, count: int) -> None:
    import redis

    from interpreter.stores.redis_store import EVENTS_KEY, events_day

    client = redis.Redis.from_url(url)
    client.flushdb()
    pipe, days = client.pipeline(transaction=False), {}
    for number, (_, when, blob) in enumerate(sorted(event_rows(count), key=lambda r: r[1])):
        key = EVENTS_KEY + events_day(when)
        days[key] = days.get(key, 0) + 1
        pipe.xadd(key, {"e": blob})
        if number % 5000 == 4999:
            pipe.execute()
    for key, written in days.items():
        pipe.set(key + ":n", written)
    pipe.execute()
    client.close()


def timed_report(source: str, folder: Path) -> tuple[float, float, float, dict]:
    """(wall seconds, CPU seconds, peak RSS in MiB, the report) of `mgi report SOURCE
    --format json` in a fresh process (its own figures, by `os.wait4`)."""
    out_path, err_path = folder / "report.json", folder / "report.err"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "interpreter.cli", "report", source,
                                  "--format", "json", "--now", "2100-01-01"], cwd=ROOT,
                                 stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.returncode == 0, err_path.read_text()
    return (seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            msgspec.json.decode(out_path.read_bytes()))


def loop_seconds() -> float:
    """A fixed pure-Python loop (ten million additions), to read the figures against how
    fast this machine runs Python right now (a shared machine under load is slower)."""
    started = time.perf_counter()
    total = 0
    for number in range(10_000_000):
        total += number
    return time.perf_counter() - started


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--sources", default="file,sqlite,redis")
    parser.add_argument("--make", nargs=3, help=argparse.SUPPRESS)  # KIND TARGET COUNT
    args = parser.parse_args()
    if args.make:
        kind, target, count = args.make
        WRITERS[kind](target, int(count))
        return
    sources = args.sources.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        redis_server = None
        if "redis" in sources:
            from support.redis_server import RedisServer, redis_binary

            if redis_binary() is None:
                print("redis-server is not installed: the redis rows are left out")
                sources.remove("redis")
            else:  # no fsync per write: the events are loaded once, then only read
                redis_server = RedisServer("--appendonly", "no").start()
        try:
            for divisor in SIZES:
                count = args.events // divisor
                for kind in sources:
                    source = make_source(kind, Path(folder), count, redis_server)
                    wall, cpu, peak, report = timed_report(source, Path(folder))
                    assert report["events"] >= count, report["events"]
                    rows.append((kind, report["events"], wall, cpu, peak, load()))
                    print(f"{kind:>6} {report['events']:>10,} events: {wall:6.2f} s wall, "
                          f"{cpu:6.2f} s CPU, {peak:6.1f} MiB peak RSS, "
                          f"{report['events'] / wall:>9,.0f} events/s (load {rows[-1][5]})",
                          flush=True)
        finally:
            if redis_server is not None:
                redis_server.stop()
    summary(rows, sources)


def make_source(kind: str, folder: Path, count: int, redis_server) -> str:
    """The events written, by a child process: this one stays small, so that the peak RSS
    of the report's process (forked from this one) is its own."""
    if kind == "file":
        target = str(folder / f"events-{count}.jsonl")
    elif kind == "sqlite":
        target = str(folder / f"store-{count}.db")
    else:
        target = redis_server.url
    subprocess.run([sys.executable, __file__, "--make", kind, target, str(count)], check=True)
    return f"sqlite:{target}" if kind == "sqlite" else target


WRITERS = {"file": lambda target, n: write_file(Path(target), n),
           "sqlite": lambda target, n: write_sqlite(Path(target), n), "redis": write_redis}


def summary(rows: list[tuple], sources: list[str]) -> None:
    print(f"\ncalibration: 10M additions in a Python loop take {loop_seconds():.2f} s here "
          f"(load {load()})")
    print(f"{'source':>6} {'events':>10} {'wall s':>7} {'CPU s':>6} {'peak MiB':>9} "
          f"{'events/s':>10}  load average")
    for kind, events, wall, cpu, peak, at in rows:
        print(f"{kind:>6} {events:>10,} {wall:>7.2f} {cpu:>6.2f} {peak:>9.1f} "
              f"{events / wall:>10,.0f}  {at}")
    for kind in sources:
        small, big = [row for row in rows if row[0] == kind]
        verdict = "ok" if big[2] < TARGET_SECONDS else "MISSED"
        print(f"{kind}: x{big[1] / small[1]:.0f} events: time x{big[2] / small[2]:.2f}, "
              f"peak memory x{big[4] / small[4]:.2f}; target {big[1]:,} events in under "
              f"{TARGET_SECONDS:g} s: {big[2]:.2f} s wall {verdict} ({big[3]:.2f} s CPU)")


if __name__ == "__main__":
    main()
