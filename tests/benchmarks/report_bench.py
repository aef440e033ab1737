"""`mgi report` on a million events: the time it takes and the memory it holds (SPEC 16).

Run `python tests/benchmarks/report_bench.py [--events N]` from the repository root. It
writes N events (default 1,000,000) as `mgi run --events` would, into a temporary file:
sessions of the clinic scenario's path, started a second apart over weeks, each going some
way and then completing, stopping (abandoned) or coming back after an hour (resumed), with
fallbacks, safety turns and kept texts among them. Then it runs `mgi report FILE --format
json` in a fresh process, for N/4 and for N events, and prints for each the wall time and the
peak resident memory of that process (`ru_maxrss` of the child), side by side, with the ratio.

Memory stays constant in N because the tally holds counters bounded by the scenario (nodes,
edges, reasons, turn counts, histogram bins, at most 100 texts per node) and, per session,
only those heard from in the last 30 minutes of event time (`analytics.aggregate`): the
generator keeps about the same number of sessions open at any time whatever N is, so the peak
of the N/4 run and of the N run should be the same, and only the time grows (linearly).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATH = ["greeting", "collect_patient_info", "collect_visit_info", "collect_contact",
        "ask_note", "confirm_booking", "booking_done"]
HASH = "e" * 64
TARGET_SECONDS = 5.0


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


def write_events(path: Path, count: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    written = number = 0
    with path.open("w") as out:
        while written < count:
            for event in session_events(number, 1.7e9 + number, rng):
                out.write(json.dumps(event, ensure_ascii=False) + "\n")
                written += 1
            number += 1
    return written


def timed_report(path: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of `mgi report FILE --format json` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "interpreter.cli", "report", str(path),
                           "--format", "json"], cwd=ROOT, capture_output=True)
    seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stderr.decode()
    json.loads(done.stdout)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024


def loop_seconds() -> float:
    """A fixed pure-Python loop (ten million additions), to read the figures against how
    fast this machine runs Python right now (a shared machine under load is slower)."""
    started = time.perf_counter()
    total = 0
    for number in range(10_000_000):
        total += number
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    count = parser.parse_args().events
    with tempfile.TemporaryDirectory() as folder:
        rows = []
        for n in (count // 4, count):
            path = Path(folder) / f"events-{n}.jsonl"
            write_events(path, n)
            size = path.stat().st_size / 2 ** 20
            seconds, peak = timed_report(path)
            rows.append((n, size, seconds, peak))
            path.unlink()
    print(f"calibration: 10M additions in a Python loop take {loop_seconds():.2f} s here")
    print(f"{'events':>10} {'file MiB':>9} {'seconds':>8} {'peak RSS MiB':>13}")
    for n, size, seconds, peak in rows:
        print(f"{n:>10,} {size:>9.0f} {seconds:>8.2f} {peak:>13.1f}")
    (small, _, t1, m1), (big, _, t2, m2) = rows
    print(f"time x{t2 / t1:.2f} for x{big / small:.0f} events; peak memory x{m2 / m1:.2f}")
    verdict = "ok" if t2 < TARGET_SECONDS else "MISSED"
    print(f"target: {big:,} events in under {TARGET_SECONDS:g} s: {t2:.2f} s {verdict} "
          f"(load average {' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())})")


if __name__ == "__main__":
    main()
