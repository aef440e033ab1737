"""Turn benchmark: the engine turn and the pure `route_turn` on a six-node Korean scenario.

Run with `python tests/benchmarks/turn_bench.py [SESSIONS]` from the repository root.
The engine uses the scripted NLU (the result travels with the input), the template NLG and
the in-memory store (each turn decodes and re-encodes the session with msgspec). Each session
is the SeniMate-shaped walk of `irkit.senimate_like`: greeting, daily life (a min_turns gate),
meal, health, free talk, closing, a resume, the closing again, completion: 11 user turns.
Prints the median and 90th percentile in microseconds; asserts nothing.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from irkit import nlu, senimate_like  # noqa: E402

from interpreter.engine import Engine  # noqa: E402
from interpreter.routing import route_turn  # noqa: E402

SCRIPT = [
    ("네 좋아요", nlu("affirm")),
    ("그냥 지내요", nlu("inform", daily_life="산책")),
    ("응", nlu("affirm")),
    ("먹었어요", nlu("inform", meal_status="adequate")),
    ("괜찮아요", nlu("inform", health_status="good")),
    ("날씨 좋네요", nlu("inform")),
    ("그래요", nlu("affirm")),
    ("그만할래요", nlu("inform", intent="user_wants_to_end")),
    ("요즘 무릎이 아파서요", nlu("inform")),
    ("그만", nlu(intent="user_wants_to_end")),
    ("응", nlu("affirm")),
]


def engine_turns(runtime, sessions: int) -> list[int]:
    engine = Engine(runtime)
    samples = []
    for s in range(sessions):
        session_id = f"s{s}"
        engine.start(session_id)
        for text, result in SCRIPT:
            start = time.perf_counter_ns()
            engine.turn(session_id, text, result)
            samples.append(time.perf_counter_ns() - start)
    return samples


def routing_turns(runtime, rounds: int) -> list[int]:
    engine = Engine(runtime)
    engine.start("r")
    cases = []
    for text, result in SCRIPT[:-1]:
        cases.append((engine.session("r"), result))
        engine.turn("r", text, result)
    samples = []
    for _ in range(rounds):
        for state, result in cases:
            start = time.perf_counter_ns()
            route_turn(runtime, state, result)
            samples.append(time.perf_counter_ns() - start)
    return samples


def report(name: str, samples: list[int]) -> None:
    ordered = sorted(samples)
    print(f"{name:12s} median {statistics.median(ordered) / 1000:6.1f} us   "
          f"p90 {ordered[int(len(ordered) * 0.9)] / 1000:6.1f} us   (n={len(ordered)})")


def main() -> None:
    sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    runtime = senimate_like().runtime()
    engine_turns(runtime, 200)  # warm up
    report("engine.turn", engine_turns(runtime, sessions))
    report("route_turn", routing_turns(runtime, sessions))


if __name__ == "__main__":
    main()
