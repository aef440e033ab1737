"""The bench guard (tests/benchmarks/guard.py) reads the service ratios it is given: the median
of a run's alternating guard rounds when there are some, else the one run's ratio. Pure: no
server runs here (the figures are made up)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import guard  # noqa: E402


def _results(floor: float, sqlite: float, rounds: dict | None = None) -> dict:
    rows = {name: {str(c): {"requests_per_second": rps} for c in (16, 64)}
            for name, rps in (("floor", floor), ("sqlite", sqlite))}
    http: dict = {"rows": rows}
    if rounds is not None:
        http["guard"] = {"rounds": 3, "ratios": rounds,
                         "median": {name: {c: sorted(v)[len(v) // 2] for c, v in by_c.items()}
                                    for name, by_c in rounds.items()}}
    return {"service": {"http": http}}


def _verdict(results: dict, figure: str) -> dict:
    return next(row for row in guard.check(results, quick=True) if row["figure"] == figure)


def test_one_run_is_read_when_there_are_no_rounds():
    results = _results(1000.0, 100.0)  # 10%: under the quick budget of 12%
    assert guard.service_share(results, "sqlite", 16) == 0.1
    assert _verdict(results, "sqlite_16_over_floor")["verdict"] == "BROKEN"


def test_the_median_of_the_rounds_wins_over_one_unlucky_run():
    # the first run met a floor that ran unusually fast (10%); the two rounds after it did not
    rounds = {"sqlite": {"16": [0.10, 0.25, 0.22], "64": [0.26, 0.11, 0.24]}}
    results = _results(1000.0, 100.0, rounds)
    assert guard.service_share(results, "sqlite", 16) == 0.22
    assert guard.service_share(results, "sqlite", 64) == 0.24
    assert _verdict(results, "sqlite_16_over_floor")["verdict"] == "ok"
    assert _verdict(results, "sqlite_64_over_floor")["verdict"] == "ok"


def test_a_store_the_rounds_lack_is_read_from_its_run():
    rounds = {"sqlite": {"16": [0.2, 0.2, 0.2], "64": [0.2, 0.2, 0.2]}}
    results = _results(1000.0, 100.0, rounds)
    results["service"]["http"]["rows"]["memory"] = {c: {"requests_per_second": 500.0}
                                                    for c in ("16", "64")}
    assert guard.service_share(results, "memory", 16) == 0.5
    assert guard.service_share(results, "redis", 16) is None
    assert _verdict(results, "redis_16_over_floor")["verdict"] == "not measured"
