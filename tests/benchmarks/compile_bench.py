"""Compile benchmark: time, peak memory and IR size for generated scenarios.

Run with `make bench` (or `python tests/benchmarks/compile_bench.py [SIZES...]`). Each size
is compiled in a fresh child process so that its peak resident memory is its own; the child
times the whole pipeline (read, decode, resolve, analyse, emit, write) as `mgc compile` runs it.
Prints a table and writes the figures to build/bench_compile.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))

from generate import generate  # noqa: E402

DEFAULT_SIZES = (1000, 10000, 50000)
CHILD = r"""
import json, resource, sys, time
from compiler.driver import check_file, write_ir
path, out = sys.argv[1], sys.argv[2]
start = time.perf_counter()
result = check_file(path)
if result.errors:
    print(json.dumps({"error": result.diagnostics[0].message})); sys.exit(1)
write_ir(result.ir_bytes(), out)
elapsed = time.perf_counter() - start
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": elapsed, "peak_mb": peak_kb / 1024}))
"""
BASELINE = "import resource, compiler.driver; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"


def run_size(n: int, folder: Path, baseline_mb: float) -> dict:
    source = folder / f"generated_{n}.json"
    source.write_text(json.dumps(generate(n), ensure_ascii=False, separators=(",", ":")), "utf-8")
    out = folder / f"generated_{n}.ir"
    best = None
    for _ in range(3 if n <= 10000 else 1):
        proc = subprocess.run([sys.executable, "-c", CHILD, str(source), str(out)],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"compile of {n} nodes failed: {proc.stdout}{proc.stderr}")
        figures = json.loads(proc.stdout)
        if best is None or figures["seconds"] < best["seconds"]:
            best = figures
    json_bytes, ir_bytes = source.stat().st_size, out.stat().st_size
    return {"nodes": n, "seconds": round(best["seconds"], 3), "peak_mb": round(best["peak_mb"], 1),
            "peak_above_baseline_mb": round(best["peak_mb"] - baseline_mb, 1),
            "json_bytes": json_bytes, "ir_bytes": ir_bytes, "ir_to_json": round(ir_bytes / json_bytes, 3),
            "us_per_node": round(best["seconds"] / n * 1e6, 1)}


def main(sizes: list[int]) -> None:
    proc = subprocess.run([sys.executable, "-c", BASELINE], capture_output=True, text=True, cwd=ROOT)
    baseline_mb = int(proc.stdout) / 1024
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run_size(n, Path(tmp), baseline_mb) for n in sizes]
    print(f"{'nodes':>7} {'compile s':>10} {'us/node':>8} {'peak MB':>8} {'+MB':>7} "
          f"{'JSON bytes':>11} {'IR bytes':>10} {'IR/JSON':>8}")
    for r in rows:
        print(f"{r['nodes']:>7} {r['seconds']:>10.3f} {r['us_per_node']:>8.1f} {r['peak_mb']:>8.1f} "
              f"{r['peak_above_baseline_mb']:>7.1f} {r['json_bytes']:>11} {r['ir_bytes']:>10} "
              f"{r['ir_to_json']:>8.3f}")
    print(f"(baseline process with the compiler imported: {baseline_mb:.1f} MB; JSON is minified)")
    out = ROOT / "build" / "bench_compile.json"
    out.write_text(json.dumps({"baseline_mb": round(baseline_mb, 1), "rows": rows}, indent=2))
    print(f"figures written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or list(DEFAULT_SIZES))
