"""In-process A/B of the engine turn: another checkout's `interpreter/` against this one's.

    python tests/benchmarks/ab_turn.py /work/main [ROUNDS]

Loads both packages side by side in one process (each with its own compiler, so each reads
the reference scenario as its own IR), then alternates rounds: in each round every runner
plays both scripts of `peers.SCRIPTS` (start, then every user turn) a few times, and the
median turn is kept per runner. A shared machine moves both alike within a round, so the
per-round ratio (this / other) is what to read; the medians over the rounds are printed with
the load average. The plain-Python router of `peers` runs in every round too (the bench's
floor). Both runners must give the same outcomes on both scripts (checked first). Asserts
nothing, writes nothing.
"""

from __future__ import annotations

import gc
import itertools
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import peers  # noqa: E402

_PACKAGES = ("interpreter", "compiler")


def engine_from(root: Path):
    """An `EngineRunner` on the reference scenario, built from the checkout at `root` (its
    modules are dropped from `sys.modules` after, so the next checkout loads its own; the
    objects keep theirs)."""
    for name in [m for m in sys.modules if m.split(".")[0] in _PACKAGES]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        from compiler.driver import check_file
        from interpreter import ir
        from interpreter.loader import Runtime

        result = check_file(str(peers.SCENARIO_PATH))
        envelope, program = ir.decode_ir(result.ir_bytes())
        runner = peers.EngineRunner(Runtime(program, envelope.source_sha256,
                                            envelope.compiler_version))
        peers.sequences(runner)  # msgspec reads a Struct's annotations from its module on
        # first use: every path the scripts take is used once while the modules are loaded
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] in _PACKAGES]:
            del sys.modules[name]
    return runner


def median_turn_us(runner, sessions: int, ids) -> float:
    return peers.median_turn_ns(runner, sessions, ids) / 1000


def main(other: Path, rounds: int) -> None:
    runners = {"other": engine_from(other), "this": engine_from(ROOT),
               "plain": peers.PlainRouter()}
    differences = peers.check_same([runners["this"], runners["other"]])
    if differences:
        raise SystemExit("the two engines differ:\n" + "\n".join(differences[:10]))
    ids = itertools.count()
    for runner in runners.values():  # warm-up
        median_turn_us(runner, 20, ids)
    medians: dict[str, list[float]] = {name: [] for name in runners}
    ratios: list[float] = []
    load = os.getloadavg()[0]
    gc.collect()
    for k in range(rounds):
        order = list(runners) if k % 2 == 0 else list(reversed(runners))
        got = {name: median_turn_us(runners[name], 6, ids) for name in order}
        for name, value in got.items():
            medians[name].append(value)
        ratios.append(got["this"] / got["other"])
    print(f"engine turn, {rounds} alternating rounds (load average {load:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after); other = {other}")
    for name, values in medians.items():
        print(f"  {name:6} median {statistics.median(values):6.2f} us  "
              f"(rounds {min(values):.2f}-{max(values):.2f})")
    ratios.sort()
    print(f"  this / other, per round: median {statistics.median(ratios):.3f} "
          f"(quartiles {ratios[len(ratios) // 4]:.3f}-{ratios[3 * len(ratios) // 4]:.3f})")
    plain = statistics.median(medians["plain"])
    print(f"  / plain-Python router: this {statistics.median(medians['this']) / plain:.2f}x, "
          f"other {statistics.median(medians['other']) / plain:.2f}x")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: ab_turn.py OTHER_CHECKOUT [ROUNDS]")
    main(Path(sys.argv[1]).resolve(), int(sys.argv[2]) if len(sys.argv) > 2 else 15)
