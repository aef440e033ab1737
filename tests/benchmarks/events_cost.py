"""What analytics events cost a turn over HTTP: `mgi serve` on SQLite, events on vs off.

Run `python tests/benchmarks/events_cost.py [--rounds N] [--seconds S]` from the repository
root. Two servers as `service_bench.py` starts them (one uvicorn worker, SQLite in WAL mode,
the default log level), one with events (the default) and one with `--events-days 0`; the
same sessions on each (b0..b15, walked to the node where the load's turn stays); then rounds
of `wrk` at 16 connections, the two servers in alternating order in each round, so a machine
whose load changes meanwhile weighs on both alike (`service_bench.events_pair`: on off off
on ...). Prints every run, the median requests per second of each, their ratio, the events
written, and the load average; issue 28's target is "on within 10% of off". `make bench`'s
service section runs the same pair; this script measures only them, longer.
Then the same in process, without HTTP or wrk (steadier on a busy machine): the service's
whole turn (`Sessions.message` on a SQLite record store, `service_bench.ServiceTurns`) with
the recorder and without, one turn at a time (so no group commit shares the transaction:
the dearest case), rounds in alternating order, every turn timed, medians.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import service_bench as bench  # noqa: E402  (puts the repository and tests/ on the path)
from support.service_server import ServiceServer, compile_irs  # noqa: E402

CONNECTIONS = 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        ir_dir = compile_irs(tmp / "ir", (bench.SCENARIO,))
        servers = {"on": ServiceServer([ir_dir], store=f"sqlite:{tmp / 'on.db'}").start(),
                   "off": ServiceServer([ir_dir], store=f"sqlite:{tmp / 'off.db'}",
                                        extra=["--events-days", "0"]).start()}
        try:
            for server in servers.values():
                bench.open_sessions("sqlite", server.port, CONNECTIONS)
                bench.measure("sqlite", server, CONNECTIONS, 2)  # warm-up
            pair = bench.events_pair({"sqlite": servers["on"],
                                      "sqlite_no_events": servers["off"]},
                                     CONNECTIONS, args.seconds, args.rounds)
            events = sqlite3.connect(tmp / "on.db").execute(
                "SELECT count(*) FROM events").fetchone()[0]
        finally:
            for server in servers.values():
                server.stop()
    pair.pop("off_row")
    bench.print_events_pair(pair)
    print(f"{events:,} events written by the server with events on")


def in_process(rounds: int, sessions: int = 20) -> None:
    import asyncio

    from interpreter.analytics.recorder import Recorder

    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        ir_dir = compile_irs(tmp / "ir", (bench.SCENARIO,))
        loop = asyncio.new_event_loop()
        runners = {name: bench.ServiceTurns(name, loop, ir_dir, f"sqlite:{tmp / name}.db")
                   for name in ("on", "off")}
        runners["on"].sessions.recorder = Recorder()
        samples: dict[str, list[int]] = {"on": [], "off": []}
        try:
            for number in range(rounds):
                for name in (("on", "off") if number % 2 == 0 else ("off", "on")):
                    runners[name].time_sessions(sessions, f"r{number}", samples[name])
        finally:
            for runner in runners.values():
                runner.close()
            loop.close()
    on, off = (statistics.median(samples[n]) / 1000 for n in ("on", "off"))
    print(f"in process, Sessions.message on SQLite, {len(samples['on']):,} turns each: events "
          f"on {on:.0f} us, off {off:.0f} us per turn (median): on / off = {on / off:.3f} "
          f"({on / off - 1:+.1%})")


if __name__ == "__main__":
    main()
    in_process(6)
