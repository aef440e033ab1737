"""The performance guard of `make bench` (issue 24): each figure of one run against its budget.

In: the results of one `bench.py` run (the dict it writes to build/bench.json) and
tests/benchmarks/budget.json. Out: one row per budget (the figure, its value, its budget,
ok / BROKEN / not measured), printed as a table; `bench.py` exits non-zero when a row is
broken. Every figure is a ratio inside the same run, so that a busy machine moves it much less
than an absolute time: the engine turn against the in-run floors (the plain-Python router, the
networkx router, LangGraph), start-up in multiples of bare `python -c pass` measured beside it,
the service's requests per second against its HTTP floor at the same connection count.

A full run is held to the issue's targets (`at_most` / `at_least` as written); a `--quick`
run (the CI's, `.ci/run`) to a figure's `quick` budget when it has one, else to the target
`quick_factor` times more generous (an `at_most` times the factor, an `at_least` divided by
it), so that the short run's noise cannot fail it while a change that doubles the turn or the
start-up still does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from collections.abc import Callable

BUDGET = Path(__file__).resolve().parent / "budget.json"


def _turns(results: dict, name: str) -> float | None:
    turns = results.get("turns")
    return turns["runners"][name]["median_us"] if turns else None


def _ratio(top: float | None, bottom: float | None) -> float | None:
    return None if top is None or bottom is None or bottom == 0 else top / bottom


def _startup(results: dict, key: str) -> float | None:
    """A start-up figure (bytecode cached, as an installed mgi sees it) over bare python's,
    each the fastest of its fresh processes: other load only ever adds to a start, so the
    fastest is the figure a busy machine moves least (medians moved 2-7x at load 9)."""
    start = results.get("startup")
    if not start:
        return None
    cached = start["bytecode_cached"]
    return cached[key]["min_ms"] / cached["python_bare"]["min_ms"]


def service_share(results: dict, store: str, connections: int) -> float | None:
    """Requests per second of `mgi serve` on `store` over the floor's, at `connections`: the
    median of the run's alternating guard rounds (`service_bench.guard_rounds`) when it has
    them, else the one run's."""
    service = results.get("service")
    guarded = service["http"].get("guard", {}).get("median", {}) if service else {}
    if str(connections) in guarded.get(store, {}):
        return guarded[store][str(connections)]
    rows = service["http"]["rows"] if service else {}
    if store not in rows or "floor" not in rows:
        return None
    return (rows[store][str(connections)]["requests_per_second"]
            / rows["floor"][str(connections)]["requests_per_second"])


# Each figure of budget.json: how it is read from the results, and how it is printed.
FIGURES: dict[str, tuple[Callable[[dict], float | None], str]] = {
    "turn_over_plain": (lambda r: _ratio(_turns(r, "mgi"), _turns(r, "plain")), "{:.2f}x"),
    "turn_over_networkx": (lambda r: _ratio(_turns(r, "mgi"), _turns(r, "networkx")),
                           "{:.2f}x"),
    "langgraph_over_turn": (lambda r: _ratio(_turns(r, "langgraph"), _turns(r, "mgi")),
                            "{:,.0f}x"),
    "mgi_run_over_python": (lambda r: _startup(r, "mgi_first_line"), "{:.2f}x"),
    "import_engine_over_python": (lambda r: _startup(r, "import_interpreter_engine"),
                                  "{:.2f}x"),
    "sqlite_16_over_floor": (lambda r: service_share(r, "sqlite", 16), "{:.0%}"),
    "sqlite_64_over_floor": (lambda r: service_share(r, "sqlite", 64), "{:.0%}"),
    "memory_16_over_floor": (lambda r: service_share(r, "memory", 16), "{:.0%}"),
    "memory_64_over_floor": (lambda r: service_share(r, "memory", 64), "{:.0%}"),
    "redis_16_over_floor": (lambda r: service_share(r, "redis", 16), "{:.0%}"),
    "redis_64_over_floor": (lambda r: service_share(r, "redis", 64), "{:.0%}"),
}


def load_budgets(path: Path = BUDGET) -> dict[str, Any]:
    """budget.json, every figure in it known here (a typo would otherwise never be checked)."""
    budgets = json.loads(path.read_text(encoding="utf-8"))
    unknown = set(budgets["budgets"]) - set(FIGURES)
    if unknown:
        raise SystemExit(f"{path.name}: unknown figure(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(FIGURES)}")
    return budgets


def check(results: dict, quick: bool, budgets: dict[str, Any] | None = None) -> list[dict]:
    """One row per budget: figure, label, value, budget, verdict (ok, BROKEN, not measured)."""
    budgets = budgets if budgets is not None else load_budgets()
    factor = budgets["quick_factor"]
    rows = []
    for figure, spec in budgets["budgets"].items():
        read, form = FIGURES[figure]
        value = read(results)
        if "at_most" in spec:
            limit = spec.get("quick", spec["at_most"] * factor) if quick else spec["at_most"]
            ok, shown = (lambda v, x: v <= x), "<= " + form.format(limit)
        else:
            limit = spec.get("quick", spec["at_least"] / factor) if quick else spec["at_least"]
            ok, shown = (lambda v, x: v >= x), ">= " + form.format(limit)
        verdict = "not measured" if value is None else "ok" if ok(value, limit) else "BROKEN"
        rows.append({"figure": figure, "label": spec["label"], "budget": shown,
                     "value": None if value is None else round(value, 4),
                     "shown": "-" if value is None else form.format(value),
                     "verdict": verdict})
    return rows


def report(rows: list[dict], quick: bool, log: Callable[[str], None] = print) -> int:
    """Print the rows; the number of broken budgets."""
    width = max(len(r["label"]) for r in rows)
    kind = "quick budgets (quick_factor times the targets)" if quick else "the targets"
    log(f"== the guard: each figure against tests/benchmarks/budget.json ({kind}) ==")
    log(f"{'figure':{width}}  {'value':>10}  {'budget':>10}  verdict")
    for r in rows:
        log(f"{r['label']:{width}}  {r['shown']:>10}  {r['budget']:>10}  {r['verdict']}")
    broken = [r for r in rows if r["verdict"] == "BROKEN"]
    if broken:
        log(f"{len(broken)} budget(s) broken: {', '.join(r['figure'] for r in broken)}")
    return len(broken)
