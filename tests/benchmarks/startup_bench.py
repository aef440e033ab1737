"""Start-up benchmark: how long `mgi run` takes to say its first line, against a 120 ms target
(and `import interpreter.engine` against 60 ms, issue 24).

Run with `python tests/benchmarks/startup_bench.py [RUNS]` from the repository root (20 runs by
default; `make bench` reports the same figures through bench.py); it compiles build/senimate.ir
first if it is missing. Each run is a fresh process:
- `python -c pass`: the interpreter's own start, the floor under every figure;
- `python -c "import interpreter.engine"`: what embedding the engine costs to import;
- `python -c "import interpreter.cli.main"`: what importing the command line costs;
- `mgi run build/senimate.ir --script -` with one line on stdin: wall time from the start of the
  process to its first output line (the opening) and to its second (the reply to that line,
  which includes building the rules NLU).
Everything is measured twice: with the environment as it is, and with a warm bytecode cache
(`PYTHONPYCACHEPREFIX` in a temporary folder, `PYTHONDONTWRITEBYTECODE` unset), which is what
an installed `mgi` sees; a sandbox with `PYTHONDONTWRITEBYTECODE=1` recompiles every module of
the project on every start. Prints the medians (and the 90th percentile) in milliseconds and
writes them to build/bench_startup.json; asserts nothing.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IR = ROOT / "build" / "senimate.ir"
TARGET_MS = 120.0
ENGINE_TARGET_MS = 60.0
BIN = Path(sys.executable).parent


def command(name: str) -> list[str]:
    """The console script next to this Python, else the module (same code, no wrapper)."""
    script = BIN / name
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", {"mgi": "interpreter.cli", "mgc": "compiler"}[name]]


def ensure_ir() -> None:
    if not IR.exists():
        subprocess.run([*command("mgc"), "compile", "scenarios/senimate.json", "-o", str(IR)],
                       cwd=ROOT, check=True)


def process_ms(argv: list[str], env: dict) -> float:
    """Wall time of a whole process, in milliseconds."""
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=env)
    return (time.perf_counter() - start) * 1000


def first_lines_ms(argv: list[str], stdin: bytes, env: dict) -> tuple[float, float]:
    """Milliseconds from the start of the process to its first and second output lines."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write(stdin)
    proc.stdin.close()
    proc.stdout.readline()
    first = (time.perf_counter() - start) * 1000
    proc.stdout.readline()
    second = (time.perf_counter() - start) * 1000
    proc.stdout.read()
    if proc.wait() != 0:
        raise SystemExit(f"{' '.join(argv)} failed with exit {proc.returncode}")
    return first, second


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {"median_ms": round(statistics.median(ordered), 1), "p90_ms": round(p90, 1),
            "min_ms": round(ordered[0], 1)}  # the least a busy machine adds (the guard's)


LABELS = (("python_bare", "python -c pass"),
          ("import_interpreter_engine", "python -c 'import interpreter.engine'"),
          ("import_interpreter_cli", "python -c 'import interpreter.cli.main'"),
          ("mgi_first_line", "mgi run: first line (the opening)"),
          ("mgi_first_reply", "mgi run: reply to line 1 (+ rules NLU)"))


def measure(runs: int, env: dict) -> dict:
    """The four figures of the docstring under one environment."""
    mgi = [*command("mgi"), "run", str(IR), "--script", "-"]
    line = "네 좋아요\n".encode()
    for _ in range(2):  # warm the file cache (and the bytecode cache, when there is one)
        first_lines_ms(mgi, line, env)
        process_ms([sys.executable, "-c", "import interpreter.cli.main"], env)
    bare, engine, imports, lines = [], [], [], []
    for _ in range(runs):  # interleaved: a burst of other load falls on every figure alike
        bare.append(process_ms([sys.executable, "-c", "pass"], env))
        engine.append(process_ms([sys.executable, "-c", "import interpreter.engine"], env))
        imports.append(process_ms([sys.executable, "-c", "import interpreter.cli.main"], env))
        lines.append(first_lines_ms(mgi, line, env))
    return {"python_bare": summary(bare), "import_interpreter_engine": summary(engine),
            "import_interpreter_cli": summary(imports),
            "mgi_first_line": summary([a for a, _ in lines]),
            "mgi_first_reply": summary([b for _, b in lines])}


def report(title: str, figures: dict) -> None:
    print(title)
    for key, label in LABELS:
        f = figures[key]
        target = ENGINE_TARGET_MS if key == "import_interpreter_engine" else TARGET_MS
        verdict = "" if key == "python_bare" else (
            "  ok" if f["median_ms"] <= target else "  over target")
        print(f"  {label:42} {f['median_ms']:7.1f} / {f['p90_ms']:7.1f}{verdict}")


def run(runs: int) -> dict:
    """Both environments' figures (what `main` prints; `bench.py` reports them too)."""
    ensure_ir()
    as_is = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = cache
        return {"runs": runs, "target_ms": TARGET_MS, "engine_target_ms": ENGINE_TARGET_MS,
                "no_bytecode_cache": bool(as_is.get("PYTHONDONTWRITEBYTECODE")),
                "environment_as_is": measure(runs, as_is),
                "bytecode_cached": measure(runs, cached)}


def main(runs: int) -> None:
    figures = run(runs)
    as_is = dict(os.environ)
    print(f"start-up over {runs} runs: median / p90 in ms, target {TARGET_MS:.0f} ms")
    no_cache = " (PYTHONDONTWRITEBYTECODE=1: no bytecode cache)" if as_is.get(
        "PYTHONDONTWRITEBYTECODE") else ""
    report(f"environment as is{no_cache}", figures["environment_as_is"])
    report("warm bytecode cache (an installed mgi)", figures["bytecode_cached"])
    out = ROOT / "build" / "bench_startup.json"
    out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
