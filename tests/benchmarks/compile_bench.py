"""Compile benchmark: compile time, peak memory, IR size and IR load time for generated
scenarios (and the reference scenario).

Run with `make bench` (through bench.py) or `python tests/benchmarks/compile_bench.py [SIZES...]`.
Each compile runs in a fresh child process so that its peak resident memory is its own; the
child times the whole pipeline (read, decode, resolve, analyse, emit, write) as `mgc compile`
runs it (wall time, the figure; its CPU time is kept beside it, which a busy machine
inflates less). Each load runs in another fresh child that times `load_program` (read, verify the
checksum, decode the program header and node directory, check the program-level indices, make
the runtime with its node tables still unbuilt: what `mgi run` does before the first turn)
several times, then, for honesty, `load_program(path, verify=True)` (the same plus decoding and
checking every node and building every node table: what a run that visits every node pays in
all) as `load_all_seconds`. Figures are medians (3 compiles up to 10,000 nodes, 1 above; 50, 5
or 1 loads by size); `load_speedup` is compile time over load time, `load_all_speedup` compile
time over load-all time. Prints a table and writes build/bench_compile.json.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))

from generate import generate  # noqa: E402

DEFAULT_SIZES = (100, 1000, 10000, 50000)
REFERENCE = ROOT / "scenarios" / "senimate.json"
PEAK = r"""
import resource
def peak_mb():  # VmHWM: ru_maxrss would include the parent's peak when it spawned us via vfork
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""
CHILD = PEAK + r"""
import gc, json, sys, time
gc.disable()  # as `mgc` does: a short-lived process
from compiler.driver import check_file, write_ir
path, out = sys.argv[1], sys.argv[2]
start, cpu = time.perf_counter(), time.process_time()
result = check_file(path)
if result.errors:
    print(json.dumps({"error": result.diagnostics[0].message})); sys.exit(1)
write_ir(result.ir_bytes(), out)
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "peak_mb": peak_mb()}))
"""
LOAD_CHILD = PEAK + r"""
import gc, json, sys, time
from interpreter.ir import decode_ir
from interpreter.loader import load_program
path, runs = sys.argv[1], int(sys.argv[2])
times, everything = [], []
for _ in range(runs):
    start = time.perf_counter()
    runtime = load_program(path)
    times.append(time.perf_counter() - start)
    del runtime
peak = peak_mb()
for _ in range(runs):
    start = time.perf_counter()
    runtime = load_program(path, verify=True)
    everything.append(time.perf_counter() - start)
    del runtime
# Diagnostics for the profile notes, after the figure above: the same load with the cycle
# collector paused (as the compiler runs), and reading + decoding alone (`decode_ir`: nodes
# still encoded, no runtime).
paused, decoded = [], []
for _ in range(runs):
    gc.collect(); gc.disable()
    start = time.perf_counter()
    runtime = load_program(path)
    paused.append(time.perf_counter() - start)
    del runtime
    start = time.perf_counter()
    with open(path, "rb") as handle:
        program = decode_ir(handle.read())
    decoded.append(time.perf_counter() - start)
    del program
    gc.enable()
print(json.dumps({"times": times, "everything": everything, "peak_mb": peak,
                  "gc_paused": paused, "decode_only": decoded}))
"""
BASELINE = PEAK + "import compiler.driver\nprint(peak_mb())\n"


def _child(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed ({' '.join(args)}): {proc.stdout}{proc.stderr}")
    return json.loads(proc.stdout)


def measure_file(source: Path, out: Path, nodes: int, baseline_mb: float,
                 compiles: int | None = None) -> dict:
    """Compile `source` to `out` in fresh children, then load `out` in another; the row."""
    compiles = compiles or (3 if nodes <= 10000 else 1)
    runs = [_child(CHILD, str(source), str(out)) for _ in range(compiles)]
    seconds = statistics.median(r["seconds"] for r in runs)
    cpu_seconds = statistics.median(r["cpu_seconds"] for r in runs)
    peak_mb = max(r["peak_mb"] for r in runs)
    loads = 50 if nodes <= 1000 else 5 if nodes <= 10000 else 1
    loaded = _child(LOAD_CHILD, str(out), str(loads))
    load_seconds = statistics.median(loaded["times"])
    load_all_seconds = statistics.median(loaded["everything"])
    json_bytes, ir_bytes = len(_minified(source)), out.stat().st_size
    return {"nodes": nodes, "seconds": round(seconds, 4), "cpu_seconds": round(cpu_seconds, 4),
            "compiles": compiles,
            "peak_mb": round(peak_mb, 1),
            "peak_above_baseline_mb": round(peak_mb - baseline_mb, 1),
            "json_bytes": json_bytes, "ir_bytes": ir_bytes,
            "ir_to_json": round(ir_bytes / json_bytes, 3),
            "us_per_node": round(seconds / nodes * 1e6, 1),
            "load_seconds": round(load_seconds, 5), "loads": loads,
            "load_peak_mb": round(loaded["peak_mb"], 1),
            "load_speedup": round(seconds / load_seconds, 1),
            "load_all_seconds": round(load_all_seconds, 5),
            "load_all_speedup": round(seconds / load_all_seconds, 1),
            "load_gc_paused_seconds": round(statistics.median(loaded["gc_paused"]), 5),
            "decode_only_seconds": round(statistics.median(loaded["decode_only"]), 5)}


def _minified(source: Path) -> bytes:
    value = json.loads(source.read_text("utf-8"))
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def run_size(n: int, folder: Path, baseline_mb: float) -> dict:
    source = folder / f"generated_{n}.json"
    source.write_text(json.dumps(generate(n), ensure_ascii=False, separators=(",", ":")), "utf-8")
    return measure_file(source, folder / f"generated_{n}.ir", n, baseline_mb)


def baseline() -> float:
    """Peak RSS (MB) of a process that has only imported the compiler."""
    proc = subprocess.run([sys.executable, "-c", BASELINE], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    return float(proc.stdout)


def measure(sizes: list[int], reference: bool = True) -> dict:
    """Every row: the reference scenario (as written, 6 nodes) and the generated sizes."""
    baseline_mb = baseline()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if reference:
            nodes = len(json.loads(REFERENCE.read_text("utf-8"))["graph"]["nodes"])
            row = measure_file(REFERENCE, Path(tmp) / "senimate.ir", nodes, baseline_mb,
                               compiles=5)
            rows.append({"scenario": "senimate.json", **row})
        for n in sizes:
            rows.append({"scenario": f"generated {n}", **run_size(n, Path(tmp), baseline_mb)})
    return {"baseline_mb": round(baseline_mb, 1), "rows": rows}


def print_table(figures: dict) -> None:
    print(f"{'scenario':>15} {'nodes':>6} {'compile s':>10} {'us/node':>8} {'peak MB':>8} "
          f"{'+MB':>6} {'JSON bytes':>11} {'IR bytes':>10} {'IR/JSON':>8} {'load ms':>9} "
          f"{'compile/load':>12} {'load all ms':>11} {'compile/all':>11}")
    for r in figures["rows"]:
        print(f"{r['scenario']:>15} {r['nodes']:>6} {r['seconds']:>10.3f} {r['us_per_node']:>8.1f} "
              f"{r['peak_mb']:>8.1f} {r['peak_above_baseline_mb']:>6.1f} {r['json_bytes']:>11} "
              f"{r['ir_bytes']:>10} {r['ir_to_json']:>8.3f} {r['load_seconds'] * 1000:>9.2f} "
              f"{r['load_speedup']:>11.1f}x {r['load_all_seconds'] * 1000:>11.2f} "
              f"{r['load_all_speedup']:>10.1f}x")
    print(f"(baseline process with the compiler imported: {figures['baseline_mb']:.1f} MB; "
          "JSON is minified; compile and load are medians of fresh processes; load builds node "
          "tables on first use, load all builds and checks every one)")


def main(sizes: list[int]) -> None:
    figures = measure(sizes)
    print_table(figures)
    out = ROOT / "build" / "bench_compile.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(figures, indent=2))
    print(f"figures written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or list(DEFAULT_SIZES))
