"""Turn benchmark: the engine turn and the pure `route_turn` on a six-node Korean scenario,
then the engine turn on the compiled reference scenario with the rules NLU, and the size of
a serialized session after 20 turns.

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

from support.irkit import nlu, senimate_like  # noqa: E402

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


# The reference scenario, words only: the rules NLU reads every line (a walk with a resume
# from the closing node and a second closing), 20 user turns.
RULES_SCRIPT = [
    "네, 좋아요", "아침에 공원에서 산책했어요", "오후에는 경로당에서 친구들을 만났어요",
    "점심은 국수로 맛있게 먹었어요", "요즘 무릎이 좀 쑤셔요", "계단을 오를 때 특히 시큰거려요",
    "다음 주에 손주가 놀러 온대요", "손주랑 시장에 가고 싶어요", "이제 그만할래요",
    "아니 조금만 더 얘기해요", "요즘 텃밭에 상추를 심었어요", "물도 매일 주고 있어요",
    "저녁은 아직 안 먹었어요", "", "허리는 괜찮아요", "노래 교실도 다녀요",
    "친구가 트로트를 알려줬어요", "재미있어요", "대화 종료", "고마워요",
]


def reference_runtime():
    """The compiled reference scenario (compiled here: the benchmark may use the compiler)."""
    from compiler.driver import check_file
    from interpreter.loader import Runtime
    from interpreter import ir

    result = check_file(str(Path(__file__).resolve().parents[2] / "scenarios" / "senimate.json"))
    envelope, program = ir.decode_ir(result.ir_bytes())
    return Runtime(program, envelope.source_sha256)


def rules_turns(runtime, sessions: int) -> tuple[list[int], int]:
    """Per-turn times with the rules NLU, and the encoded size of the last session."""
    from interpreter.understanding.rules import RulesNLU
    from interpreter.stores.sessions import MemorySessionStore
    from interpreter.state import encode_state

    store = MemorySessionStore()
    engine = Engine(runtime, nlu=RulesNLU(runtime.program), store=store)
    samples = []
    for s in range(sessions):
        session_id = f"r{s}"
        engine.start(session_id)
        for text in RULES_SCRIPT:
            start = time.perf_counter_ns()
            result = engine.turn(session_id, text)
            samples.append(time.perf_counter_ns() - start)
            if result.complete:
                break
    size = len(encode_state(store.get(session_id)[0]))
    return samples, size


def main() -> None:
    sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    runtime = senimate_like().runtime()
    engine_turns(runtime, 200)  # warm up
    report("engine.turn", engine_turns(runtime, sessions))
    report("route_turn", routing_turns(runtime, sessions))
    reference = reference_runtime()
    rules_turns(reference, 50)  # warm up
    samples, size = rules_turns(reference, max(1, sessions // 3))
    report("rules turn", samples)
    from interpreter.state import HISTORY_LIMIT

    print(f"session after {len(RULES_SCRIPT)} turns: {size} bytes (msgpack, history bounded "
          f"to the last {HISTORY_LIMIT} turns; target 2048)")


if __name__ == "__main__":
    main()
