"""`make bench`: mgi side by side with its peers, each figure against its target (issue 5).

Run with `make bench` (installs the `bench` extra: langgraph, langgraph-checkpoint-sqlite,
psutil, litestar; and wrk with apt when it is missing) or
`python tests/benchmarks/bench.py [--quick] [--only SECTION,...]` from the repository root.
Sections, all in one run:

1. turns: per-turn cost of `mgi`'s engine (scripted NLU, template NLG, memory store) and of
   its peers on the reference scenario's flow (peers.py): LangGraph (a StateGraph with an
   in-memory checkpointer, one invoke per user turn), a networkx router (the original design:
   the scenario's condition objects on the edges, evaluated each turn), the same router with
   the conditions hand-written as lambdas (a faster variant, for information) and a
   plain-Python router (the lower bound). The two scripts (the full walk; resumes and
   fallbacks) first run through all of them, which must agree turn by turn on node, next node,
   reason, completion and response. Then rounds of sessions, the runners in rotating order
   within each round, every user turn timed alone; medians over all turns of both scripts,
   ratios from those medians (same process, same rounds).
2. compile: generated scenarios of 100, 1,000, 10,000 and 50,000 nodes and the reference
   scenario (compile_bench.py): compile time and peak memory in fresh processes, IR size
   against minified JSON, IR load time (`load_program`, node tables built on first use)
   against compile time, and beside it load plus every node table built (for information).
3. throughput: user turns per second with many sessions open at once in one process,
   interleaved turn by turn (1,000 sessions; 10,000 for the engine too); memory per live
   session with 100,000 sessions (fresh child process per runner: RSS growth divided by the
   count, just started and after five turns; for the engine also the exact size of what its
   memory store holds).
4. startup: `mgi run` to its first output line, `import interpreter.engine` and
   `import interpreter.cli.main` (startup_bench.py).
5. service: `mgi serve` over HTTP (service_bench.py): turn latency p50/p99 at one connection
   and turns per second at 1, 16 and 64 connections under wrk (service_turns.lua), on the
   memory, SQLite and Redis stores, beside the floor (the same uvicorn with a raw ASGI handler
   that decodes the same body and answers the same size without a turn), a Litestar bare
   handler (for information) and LangGraph with SqliteSaver behind a raw ASGI app; then the
   durable turn in process (the service's `Sessions.message` on the SQLite store against
   LangGraph's invoke with SqliteSaver, each one's durability stated) and the stored session
   after 5 turns (its row in the SQLite file).

Prints each section, then one table of every figure against its target (ok / MISSED), then
the guard (guard.py): each figure of tests/benchmarks/budget.json against its budget, the
exit status non-zero when one is broken; writes everything to build/bench.json. `--quick` runs small counts (a smoke run; its figures
are not the ones to quote). Rows marked (info) have no target.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import guard  # noqa: E402
import peers  # noqa: E402
import service_bench  # noqa: E402

OUT = ROOT / "build" / "bench.json"
SECTIONS = ("turns", "compile", "throughput", "startup", "service")

# Counts: the full run, and --quick.
FULL = {"rounds": 10, "sessions": 100, "langgraph_sessions": 8, "compile_sizes": [100, 1000, 10000, 50000],
        "concurrent": 1000, "concurrent_large": 10000, "langgraph_concurrent": 100,
        "memory_sessions": 100_000, "langgraph_memory_sessions": 300, "memory_turns": 5,
        "startup_runs": 20, "rules_sessions": 300, **service_bench.FULL}
QUICK = {"rounds": 3, "sessions": 20, "langgraph_sessions": 2, "compile_sizes": [100, 1000],
         "concurrent": 200, "concurrent_large": 1000, "langgraph_concurrent": 10,
         "memory_sessions": 10_000, "langgraph_memory_sessions": 50, "memory_turns": 5,
         "startup_runs": 9, "rules_sessions": 30, **service_bench.QUICK}


def log(text: str = "") -> None:
    print(text, flush=True)


def runners(runtime) -> dict:
    """The runners of the comparison."""
    return {"mgi": peers.EngineRunner(runtime),
            "langgraph": peers.LangGraphRouter(),
            "networkx": peers.NetworkxRouter(),
            "networkx_lambdas": peers.NetworkxLambdaRouter(),
            "plain": peers.PlainRouter()}


LABELS = {"mgi": "mgi engine (memory store)",
          "langgraph": "LangGraph StateGraph + InMemorySaver",
          "networkx": "networkx DiGraph router",
          "networkx_lambdas": "networkx router, lambda conditions",
          "plain": "plain-Python router"}


# --- 1. per-turn cost ------------------------------------------------------------------------


def timer_overhead_ns() -> float:
    clock = time.perf_counter_ns
    samples = []
    for _ in range(20000):
        start = clock()
        samples.append(clock() - start)
    return statistics.median(samples)


def per_turn(cfg: dict, runtime) -> dict:
    log("== 1. per-turn cost: the same scripted conversations, every runner ==")
    pool = runners(runtime)
    problems = peers.check_same(list(pool.values()))
    if problems:
        log("the runners do not agree on the scripts; nothing is timed:")
        log("\n".join(problems))
        raise SystemExit(1)
    turns = {name: len(script) for name, script in peers.SCRIPTS.items()}
    log(f"checked: all {len(pool)} runners agree on both scripts "
        f"({', '.join(f'{n}: {c} user turns' for n, c in turns.items())}): node, next node, "
        "reason, completion, response")
    samples = {name: {s: [] for s in peers.SCRIPTS} for name in pool}
    counts = {name: cfg["langgraph_sessions"] if name == "langgraph" else cfg["sessions"]
              for name in pool}
    for name, runner in pool.items():  # warm-up (not kept)
        peers.time_sessions(runner, max(1, counts[name] // 4), f"warm-{name}",
                      {s: [] for s in peers.SCRIPTS})
    order = list(pool)
    round_medians: dict[str, list[float]] = {name: [] for name in pool}
    started = time.perf_counter()
    for r in range(cfg["rounds"]):
        for name in order[r % len(order):] + order[:r % len(order)]:
            gc.collect()
            this_round = {s: [] for s in peers.SCRIPTS}
            peers.time_sessions(pool[name], counts[name], f"r{r}", this_round)
            for script_name, values in this_round.items():
                samples[name][script_name].extend(values)
            round_medians[name].append(
                statistics.median(x for values in this_round.values() for x in values))
    elapsed = time.perf_counter() - started
    overhead = timer_overhead_ns()
    result = {"timer_overhead_ns": overhead, "rounds": cfg["rounds"], "seconds": round(elapsed, 1),
              "user_turns_per_session": turns, "runners": {}}
    for name in pool:
        everything = sorted(x for s in samples[name].values() for x in s)
        result["runners"][name] = {
            "label": LABELS[name],
            "sessions_per_script": counts[name] * cfg["rounds"],
            "turns_timed": len(everything),
            "median_us": round(statistics.median(everything) / 1000, 2),
            "p90_us": round(peers.percentile(everything, 0.9) / 1000, 2),
            "mean_us": round(statistics.fmean(everything) / 1000, 2),
            "median_us_by_script": {s: round(statistics.median(v) / 1000, 2)
                                    for s, v in samples[name].items()},
        }
    base = result["runners"]["mgi"]["median_us"]
    for name, figures in result["runners"].items():
        figures["vs_mgi"] = round(figures["median_us"] / base, 3)
        # the same ratio round by round (each round times every runner back to back): its
        # spread shows how much the machine's noise moves it
        per_round = sorted(a / b for a, b in zip(round_medians[name], round_medians["mgi"]))
        figures["vs_mgi_by_round"] = {"min": round(per_round[0], 3),
                                      "median": round(statistics.median(per_round), 3),
                                      "max": round(per_round[-1], 3)}
    log(f"{'runner':40} {'median us':>10} {'p90 us':>9} {'mean us':>9} "
        f"{'full walk':>10} {'resumes':>9} {'turns':>7} {'x mgi':>8}  {'x mgi by round':>18}")
    for f in result["runners"].values():
        by, spread = f["median_us_by_script"], f["vs_mgi_by_round"]
        log(f"{f['label']:40} {f['median_us']:>10.2f} {f['p90_us']:>9.2f} {f['mean_us']:>9.2f} "
            f"{by['full_walk']:>10.2f} {by['resumes_fallbacks']:>9.2f} {f['turns_timed']:>7} "
            f"{f['vs_mgi']:>8.2f}  {spread['min']:>8.2f}-{spread['max']:<8.2f}")
    log(f"(medians of single user turns over {cfg['rounds']} rounds; timer overhead "
        f"{overhead:.0f} ns per sample, not subtracted; {elapsed:.0f} s)")
    rules = rules_turn(cfg, runtime)
    result["rules_nlu"] = rules
    log(f"for reference, the engine with the rules NLU (words in, turn_bench.RULES_SCRIPT): "
        f"median {rules['median_us']:.1f} us per turn over {rules['turns_timed']} turns")
    log()
    return result


def rules_turn(cfg: dict, runtime) -> dict:
    from turn_bench import rules_turns

    rules_turns(runtime, max(1, cfg["rules_sessions"] // 10))  # warm up
    samples, size = rules_turns(runtime, cfg["rules_sessions"])
    ordered = sorted(samples)
    return {"median_us": round(statistics.median(ordered) / 1000, 2),
            "p90_us": round(peers.percentile(ordered, 0.9) / 1000, 2), "turns_timed": len(ordered),
            "session_bytes_after_script": size}


# --- 2. compile scaling ----------------------------------------------------------------------


def compile_scaling(cfg: dict) -> dict:
    import compile_bench

    log("== 2. compile scaling: generated scenarios, fresh process per compile and per load ==")
    figures = compile_bench.measure(cfg["compile_sizes"])
    compile_bench.print_table(figures)
    log("diagnostics (for the profile notes): load with the cycle collector paused / "
        "read + decode only, ms")
    for r in figures["rows"]:
        log(f"  {r['scenario']:>15}: {r['load_gc_paused_seconds'] * 1000:9.2f} / "
            f"{r['decode_only_seconds'] * 1000:9.2f}")
    log()
    return figures


# --- 3. throughput and memory ----------------------------------------------------------------


def make_runner(name: str, runtime=None):
    if name == "mgi":
        return peers.EngineRunner(runtime)
    return {"langgraph": peers.LangGraphRouter, "networkx": peers.NetworkxRouter,
            "networkx_lambdas": peers.NetworkxLambdaRouter, "plain": peers.PlainRouter}[name]()


def interleaved(runner, sessions: int) -> dict:
    """`sessions` open at once (the two scripts alternating), one turn each in turn."""
    scripts = [peers.SCRIPTS["full_walk" if i % 2 == 0 else "resumes_fallbacks"]
               for i in range(sessions)]
    ids = [f"t{i}" for i in range(sessions)]
    for session_id in ids:
        runner.start(session_id)
    gc.collect()
    longest = max(len(s) for s in scripts)
    done = 0
    turn = runner.turn
    started = time.perf_counter()
    for step in range(longest):
        for session_id, script in zip(ids, scripts):
            if step < len(script):
                text, nlu = script[step]
                turn(session_id, text, nlu)
                done += 1
    elapsed = time.perf_counter() - started
    return {"sessions": sessions, "turns": done, "seconds": round(elapsed, 3),
            "turns_per_second": round(done / elapsed)}


def throughput(cfg: dict, runtime) -> dict:
    log("== 3a. throughput: many sessions open in one process, turns interleaved ==")
    plan = [("mgi", cfg["concurrent"], 3), ("mgi", cfg["concurrent_large"], 1),
            ("networkx", cfg["concurrent"], 3), ("networkx_lambdas", cfg["concurrent"], 3),
            ("plain", cfg["concurrent"], 3), ("langgraph", cfg["langgraph_concurrent"], 1)]
    rows = []
    for name, sessions, repeats in plan:
        runs = [interleaved(make_runner(name, runtime), sessions) for _ in range(repeats)]
        best = sorted(runs, key=lambda r: r["turns_per_second"])[len(runs) // 2]  # median
        rows.append({"runner": name, "label": LABELS[name], "repeats": repeats, **best})
        log(f"  {LABELS[name]:40} {sessions:>7} sessions {best['turns']:>8} turns "
            f"{best['turns_per_second']:>10,} turns/s")
    log()
    return {"rows": rows}


MEMORY_CHILD_TURNS = peers.FULL_WALK


def memory_child(name: str, sessions: int, turns: int) -> dict:
    """In a fresh process: RSS growth per session, just started and after `turns` turns."""
    import psutil

    runtime = peers.reference_runtime() if name.startswith("mgi") else None
    runner = make_runner(name, runtime)
    for i in range(20):  # warm every code path and cache before the baseline
        runner.start(f"warm{i}")
        for text, nlu in MEMORY_CHILD_TURNS[:turns]:
            runner.turn(f"warm{i}", text, nlu)
    process = psutil.Process()
    gc.collect()
    base = process.memory_info().rss
    ids = [f"session-{i:06d}" for i in range(sessions)]
    ids_rss = process.memory_info().rss - base  # the ids are the caller's, not the store's
    started = time.perf_counter()
    for session_id in ids:
        runner.start(session_id)
    start_seconds = time.perf_counter() - started
    gc.collect()
    idle = process.memory_info().rss - base - ids_rss
    figures = {"runner": name, "sessions": sessions,
               "idle_rss_bytes_per_session": round(idle / sessions),
               "start_seconds": round(start_seconds, 2)}
    store = getattr(runner, "store", None)
    if name == "mgi":
        figures["idle_store_bytes_per_session"] = round(store_bytes(store) / sessions)
    started = time.perf_counter()
    for text, nlu in MEMORY_CHILD_TURNS[:turns]:
        for session_id in ids:
            runner.turn(session_id, text, nlu)
    figures["turns_seconds"] = round(time.perf_counter() - started, 2)
    gc.collect()
    figures["after_turns"] = turns
    figures["after_rss_bytes_per_session"] = round(
        (process.memory_info().rss - base - ids_rss) / sessions)
    if name == "mgi":
        figures["after_store_bytes_per_session"] = round(store_bytes(store) / sessions)
    return figures


def store_bytes(store) -> int:
    """What a byte store (Redis, a database) would hold for these sessions: the encoded states."""
    from interpreter.state import encode_state

    return sum(len(encode_state(store.get(key)[0])) for key in list(store._records))


def memory(cfg: dict) -> dict:
    log("== 3b. memory per live session (fresh process per runner) ==")
    plan = [("mgi", cfg["memory_sessions"]),
            ("networkx", cfg["memory_sessions"]), ("plain", cfg["memory_sessions"]),
            ("langgraph", cfg["langgraph_memory_sessions"])]
    rows = []
    for name, sessions in plan:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__)), "--memory-child", name, str(sessions),
             str(cfg["memory_turns"])], capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"memory child {name} failed:\n{proc.stdout}{proc.stderr}")
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        row["label"] = LABELS[name]
        rows.append(row)
        extra = ""
        if "idle_store_bytes_per_session" in row:
            extra = (f"  (encoded: {row['idle_store_bytes_per_session']} / "
                     f"{row['after_store_bytes_per_session']} B)")
        log(f"  {LABELS[name]:40} {sessions:>7} sessions: idle {row['idle_rss_bytes_per_session']:>7,} B"
            f", after {row['after_turns']} turns {row['after_rss_bytes_per_session']:>7,} B{extra}")
    log("(RSS growth divided by the number of sessions; bytes per session)")
    log()
    return {"rows": rows}


# --- 4. start-up -----------------------------------------------------------------------------


def startup(cfg: dict) -> dict:
    import startup_bench

    log(f"== 4. start-up: fresh processes, {cfg['startup_runs']} runs, median / p90 ms ==")
    figures = startup_bench.run(cfg["startup_runs"])
    no_cache = " (PYTHONDONTWRITEBYTECODE=1: no bytecode cache)" if figures[
        "no_bytecode_cache"] else ""
    startup_bench.report(f"environment as is{no_cache}", figures["environment_as_is"])
    startup_bench.report("warm bytecode cache (an installed mgi)", figures["bytecode_cached"])
    log()
    return figures


# --- targets ---------------------------------------------------------------------------------


def verdicts(results: dict) -> list[dict]:
    """Each figure against its target (issue 5), plus informational rows."""
    rows: list[dict] = []

    def add(figure: str, value: str, target: str, ok: bool | None) -> None:
        rows.append({"figure": figure, "value": value, "target": target,
                     "verdict": "(info)" if ok is None else "ok" if ok else "MISSED"})

    turns = results.get("turns")
    if turns:
        r = turns["runners"]
        mgi = r["mgi"]["median_us"]
        add("mgi engine, median per user turn", f"{mgi:.1f} us", "", None)
        lg = r["langgraph"]["median_us"] / mgi
        add("LangGraph turn / mgi turn", f"{lg:,.0f}x ({r['langgraph']['median_us']:,.0f} us)",
            ">= 300x", lg >= 300)
        nx = r["networkx"]["median_us"] / mgi
        add("networkx turn / mgi turn", f"{nx:.2f}x ({r['networkx']['median_us']:.1f} us)",
            "> 1x (mgi lower)", nx > 1)
        nxl = r["networkx_lambdas"]["median_us"] / mgi
        add("networkx (lambda conditions) turn / mgi turn",
            f"{nxl:.2f}x ({r['networkx_lambdas']['median_us']:.1f} us)", "", None)
        plain = mgi / r["plain"]["median_us"]
        add("mgi turn / plain-Python turn", f"{plain:.2f}x ({r['plain']['median_us']:.1f} us)",
            "<= 3x", plain <= 3)
    compiled = results.get("compile")
    if compiled:
        for row in compiled["rows"]:
            add(f"IR load vs compile, {row['scenario']} ({row['nodes']:,} nodes)",
                f"{row['load_speedup']:.1f}x ({row['load_seconds'] * 1000:.2f} ms vs "
                f"{row['seconds'] * 1000:.0f} ms)", ">= 20x", row["load_speedup"] >= 20)
        for row in compiled["rows"]:
            add(f"IR load + every node table vs compile, {row['scenario']}",
                f"{row['load_all_speedup']:.1f}x ({row['load_all_seconds'] * 1000:.2f} ms)", "",
                None)
        for row in compiled["rows"]:
            if row["nodes"] == 10000:
                add("10,000-node compile (wall)",
                    f"{row['seconds']:.2f} s (CPU {row['cpu_seconds']:.2f} s)", "<= 2 s",
                    row["seconds"] <= 2)
        for row in compiled["rows"]:
            if row["scenario"].startswith("generated"):
                add(f"compile {row['nodes']:,} nodes: time, peak, IR/JSON",
                    f"{row['seconds']:.2f} s, {row['peak_mb']:.0f} MB "
                    f"(+{row['peak_above_baseline_mb']:.0f}), {row['ir_to_json']:.2f}", "", None)
    through = results.get("throughput")
    if through:
        for row in through["rows"]:
            add(f"turns/s, {row['label']}, {row['sessions']:,} sessions",
                f"{row['turns_per_second']:,}", "", None)
    mem = results.get("memory")
    if mem:
        for row in mem["rows"]:
            if row["runner"] == "mgi":
                kb = row["idle_rss_bytes_per_session"] / 1024
                add(f"memory per idle session, mgi, {row['sessions']:,} sessions (RSS)",
                    f"{kb:.2f} KB (encoded {row['idle_store_bytes_per_session'] / 1024:.2f} KB)",
                    "<= 2 KB", kb <= 2)
                kb = row["after_rss_bytes_per_session"] / 1024
                add(f"memory per session after {row['after_turns']} turns, mgi (RSS)",
                    f"{kb:.2f} KB (encoded {row['after_store_bytes_per_session'] / 1024:.2f} KB)",
                    "", None)
            else:
                add(f"memory per session, {row['label']}, {row['sessions']:,} sessions",
                    f"idle {row['idle_rss_bytes_per_session'] / 1024:.2f} KB, after "
                    f"{row['after_turns']} turns {row['after_rss_bytes_per_session'] / 1024:.2f} KB",
                    "", None)
    service_verdicts(results.get("service"), add)
    start = results.get("startup")
    if start:
        target = start["target_ms"]
        for env, label in (("environment_as_is", "as is"), ("bytecode_cached", "bytecode cached")):
            f = start[env]
            add(f"mgi run to first output ({label})", f"{f['mgi_first_line']['median_ms']:.0f} ms",
                f"<= {target:.0f} ms (startup_bench)", f["mgi_first_line"]["median_ms"] <= target)
            engine = f["import_interpreter_engine"]["median_ms"]
            add(f"import interpreter.engine / .cli ({label})",
                f"{engine:.0f} / {f['import_interpreter_cli']['median_ms']:.0f} ms "
                f"(bare python {f['python_bare']['median_ms']:.0f} ms)",
                f"<= {start['engine_target_ms']:.0f} ms (engine)",
                engine <= start["engine_target_ms"])
    return rows


def service_verdicts(service: dict | None, add) -> None:
    """The service section's rows (issue: `make bench` gains a service section)."""
    if not service:
        return
    http = service["http"]
    rows = http["rows"]

    def rps(name: str, connections: int) -> float:
        return rows[name][str(connections)]["requests_per_second"]

    failed = [f"{name} at {c}" for name, by in rows.items() for c, row in by.items()
              if row["errors"]]
    if http.get("events_cost", {}).get("errors"):
        failed.append("the events on/off runs")
    add("service HTTP runs: non-2xx, socket errors, turns lost",
        "none" if not failed else "FAILED in " + ", ".join(failed), "none", not failed)
    for c in (16, 64):
        share = guard.service_share({"service": service}, "sqlite", c)  # the guard's median
        add(f"HTTP turns/s, mgi serve sqlite / floor, {c} connections",
            f"{share:.0%} (one run: {rps('sqlite', c):,.0f} vs {rps('floor', c):,.0f} req/s)",
            ">= 50% of the floor", share >= 0.5)
    for name in ("memory", "redis", "litestar"):
        if name in rows:
            shares = ", ".join(f"{rps(name, c) / rps('floor', c):.0%} at {c}" for c in (16, 64))
            add(f"HTTP req/s / floor, {http['labels'][name]}", shares, "", None)
    for name in ("memory", "sqlite", "redis"):
        if name in rows:
            one = rows[name]["1"]
            add(f"HTTP turn p50 at 1 connection, {http['labels'][name]}",
                f"{one['p50_ms']:.2f} ms (p99 {one['p99_ms']:.2f} ms)", "< 2 ms",
                one["p50_ms"] < 2)
    for name in ("floor", "litestar"):
        one = rows[name]["1"]
        add(f"HTTP p50 at 1 connection, {http['labels'][name]}",
            f"{one['p50_ms']:.2f} ms (p99 {one['p99_ms']:.2f} ms)", "", None)
    if "sqlite_quiet" in rows:
        c = service_bench.LOG_CONNECTIONS
        quiet, loud = rps("sqlite_quiet", c), rps("sqlite", c)
        add(f"request log's cost: sqlite, {c} connections, --log-level warning vs info",
            f"{quiet:,.0f} vs {loud:,.0f} req/s ({quiet / loud - 1:+.0%})", "", None)
    events = http.get("events_cost")
    if events:  # issue 28: events on must stay within 10% of off (runs on off off on ...)
        ratio = events["on_over_off"]
        add(f"analytics events' cost: sqlite, {events['connections']} connections, on vs "
            "--events-days 0 (medians of alternating runs)",
            f"{events['on_median']:,.0f} vs {events['off_median']:,.0f} req/s "
            f"({ratio - 1:+.1%})", ">= -10%", ratio >= 0.9)
    lg = rows["langgraph"]
    ratios = [f"{lg['1']['p50_ms'] / rows['sqlite']['1']['p50_ms']:.0f}x p50 at 1"] + [
        f"{rps('sqlite', c) / rps('langgraph', c):.0f}x req/s at {c}" for c in (16, 64)]
    add("HTTP: LangGraph+SqliteSaver / mgi serve sqlite", ", ".join(ratios), "", None)
    inproc = service["in_process"]["runners"]
    ours, theirs = inproc["mgi"], inproc["langgraph"]
    ratio = theirs["median_us"] / ours["median_us"]
    add("durable turn in process: LangGraph+SqliteSaver / mgi engine (SQLite store)",
        f"{ratio:,.0f}x ({theirs['median_us']:,.0f} us vs {ours['median_us']:.0f} us)",
        ">= 50x", ratio >= 50)
    served = inproc["mgi_service"]
    add("durable turn in process: LangGraph / the service's turn (Sessions.message)",
        f"{theirs['median_us'] / served['median_us']:,.0f}x ({served['median_us']:.0f} us)",
        "", None)
    full = inproc["mgi_full"]
    add("durable turn in process: LangGraph / mgi with synchronous=full",
        f"{theirs['median_us'] / full['median_us']:,.1f}x ({full['median_us']:.0f} us)", "",
        None)
    stored = service["in_process"]["stored_session"]
    add(f"stored session after {stored['user_turns']} turns (its SQLite row)",
        f"{stored['mgi_bytes']:,} B (LangGraph {stored['langgraph_bytes'] / 1024:,.0f} KB)",
        "< 2 KB", stored["mgi_bytes"] < 2048)
    add("stored session under load (b0's row, mgi serve sqlite)",
        f"{http['long_session_stored_bytes']:,} B after {http['long_session_user_turns']:,} "
        "turns", "", None)


def print_verdicts(rows: list[dict]) -> None:
    width = max(len(r["figure"]) for r in rows)
    value_width = max(len(r["value"]) for r in rows)
    log("== figures against targets ==")
    log(f"{'figure':{width}}  {'value':{value_width}}  {'target':24}  verdict")
    for r in rows:
        log(f"{r['figure']:{width}}  {r['value']:{value_width}}  {r['target']:24}  {r['verdict']}")


def environment() -> dict:
    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    return {"python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "versions": {name: version(name) for name in
                         ("mago", "msgspec", "langgraph", "langgraph-checkpoint",
                          "langgraph-checkpoint-sqlite", "networkx", "psutil", "uvicorn",
                          "uvloop", "httptools", "litestar", "redis")}}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts (a smoke run)")
    parser.add_argument("--only", default="", help=f"comma-separated: {', '.join(SECTIONS)}")
    parser.add_argument("--memory-child", nargs=3, metavar=("RUNNER", "SESSIONS", "TURNS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        name, sessions, turns = args.memory_child
        print(json.dumps(memory_child(name, int(sessions), int(turns))))
        return
    cfg = QUICK if args.quick else FULL
    only = [s for s in args.only.split(",") if s] or list(SECTIONS)
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown section(s) {', '.join(sorted(unknown))}")
    if "service" in only:
        service_bench.check_tools()  # before anything runs, not after the other sections
    env = environment()
    log(f"mgi benchmarks{' (quick)' if args.quick else ''}: Python {env['python']}, "
        f"{env['cpus']} CPUs, " + ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v))
    log()
    load = os.getloadavg()[0]
    results_load = {"before": round(load, 2)}
    if load > 0.5:
        log(f"note: the machine is busy (load average {load:.2f} over the last minute before "
            "this run): other processes share the CPUs, so absolute figures are inflated and "
            "noisier; ratios from the same rounds suffer less\n")
    started = time.perf_counter()
    runtime = peers.reference_runtime()
    results: dict = {"environment": env, "quick": args.quick, "counts": cfg,
                     "load_average": results_load}
    timings = results["section_seconds"] = {}
    steps = [("turns", lambda: per_turn(cfg, runtime)), ("compile", lambda: compile_scaling(cfg)),
             ("throughput", lambda: throughput(cfg, runtime)), ("memory", lambda: memory(cfg)),
             ("startup", lambda: startup(cfg)), ("service", lambda: service_bench.run(cfg))]
    for key, step in steps:
        if key in only or (key == "memory" and "throughput" in only):
            began = time.perf_counter()
            results[key] = step()
            timings[key] = round(time.perf_counter() - began, 1)
    results_load["after"] = round(os.getloadavg()[0], 2)
    results["targets"] = verdicts(results)
    print_verdicts(results["targets"])
    log()
    results["budgets"] = guard.check(results, args.quick)
    broken = guard.report(results["budgets"], args.quick, log)
    log(f"(load average before / after the run: {results_load['before']:.2f} / "
        f"{results_load['after']:.2f} on {env['cpus']} CPUs)")
    results["seconds"] = round(time.perf_counter() - started, 1)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    spent = ", ".join(f"{k} {v:.0f} s" for k, v in timings.items())
    log(f"\nfigures written to {OUT.relative_to(ROOT)} ({results['seconds']:.0f} s: {spent})")
    if broken:
        raise SystemExit(f"bench: {broken} budget(s) of tests/benchmarks/budget.json broken")


if __name__ == "__main__":
    main(sys.argv[1:])
