"""Where the time goes, for the targets bench.py reports as missed.

    python tests/benchmarks/profile_engine.py turn   # engine turn: steps timed alone + cProfile
    python tests/benchmarks/profile_engine.py load   # IR load of a generated scenario: cProfile
    python tests/benchmarks/profile_engine.py load 10000
    python tests/benchmarks/profile_engine.py shares # the turn without safety, without the NLG
    python tests/benchmarks/profile_engine.py context  # each step's marginal cost in the turn

`turn` replays the two scripts of peers.py and times each step of `Engine.turn` alone on the
real inputs of every turn (the stored state, the NLU object, the state, the decision), then
the whole turn on the same inputs, so the steps can be compared with the total; then it runs
cProfile over many sessions. `load` compiles a generated scenario and profiles `load_program`
on it (node tables built on first use), with the cycle collector as it is and paused, and
times `load_program(path, verify=True)` beside it (every node decoded, checked and built).
Nothing is written.
"""

from __future__ import annotations

import cProfile
import gc
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

import peers  # noqa: E402


def per_call_us(fn, number: int = 2000, repeat: int = 5) -> float:
    best = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(best)


def turn_steps() -> None:
    import msgspec

    from interpreter.wording.nlg import RenderContext, speak
    from interpreter.understanding.nlu import nlu_result
    from interpreter.routing import route_turn
    from interpreter.state import append_history

    runner = peers.EngineRunner()
    engine, store, runtime = runner.engine, runner.store, runner.runtime
    steps: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        steps.setdefault(name, []).append(value)

    for script_name, script in peers.SCRIPTS.items():
        session_id = f"profile-{script_name}"
        engine.start(session_id)
        for text, nlu in script:
            data, version = store._records[session_id]  # data: the stored frozen state
            state, _ = store.get(session_id)
            result, _ = engine._understand(text, state, nlu)
            decision = route_turn(runtime, state, result)
            new = decision.state
            response = speak(engine.nlg, decision, RenderContext(runtime, new)).text
            entry = (text, response, "node", decision.reason)
            history = append_history(new.history, entry)
            saved = msgspec.structs.replace(new, history=history, updated_at=1.0,
                                            version=version + 1)
            add("store.get",
                per_call_us(lambda: store.get(session_id)))
            add("nlu_result: dict -> NLUResult (msgspec.convert)",
                per_call_us(lambda: nlu_result(nlu, text)) if text.strip() else 0.0)
            add("route_turn (facts, tiers, Decision, next state)",
                per_call_us(lambda: route_turn(runtime, state, result)))
            add("safety detector (Runtime.safety.detect)",
                per_call_us(lambda: runtime.safety.detect(text)) if text.strip() else 0.0)
            add("speak: TemplateNLG + variants + RenderContext",
                per_call_us(lambda: speak(engine.nlg, decision, RenderContext(runtime, new))))
            add("append_history (msgpack entry)",
                per_call_us(lambda: append_history(
                    new.history, (text, response, "node", decision.reason))))
            add("replace(state, history, updated_at, version)",
                per_call_us(lambda: msgspec.structs.replace(
                    new, history=history, updated_at=1.0, version=version + 1)))
            add("store.put: version check",
                per_call_us(lambda: (store._records.__setitem__(session_id, (data, version)),
                                     store.put(saved, version))))
            add("TurnResult (_result)",
                per_call_us(lambda: engine._result(text, result, decision, saved, "node",
                                                   response)))

            def whole() -> None:
                store._records[session_id] = (data, version)
                engine.turn(session_id, text, nlu)
            add("(whole Engine.turn on the same input)", per_call_us(whole))
            store._records[session_id] = (data, version)
            engine.turn(session_id, text, nlu)
    parts = {name: statistics.median(v) for name, v in steps.items()}
    whole = parts.pop("(whole Engine.turn on the same input)")
    print("Engine.turn, each step alone on the inputs of every scripted turn "
          "(median over turns, us):")
    for name, value in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {name:55} {value:6.2f}  {value / whole:5.0%}")
    print(f"  {'sum of the steps':55} {sum(parts.values()):6.2f}")
    print(f"  {'whole Engine.turn (store reset each call)':55} {whole:6.2f}")
    print(f"  {'remainder: Engine.turn glue, calls, allocation':55} "
          f"{whole - sum(parts.values()):6.2f}")


def turn_profile(sessions: int = 1500) -> None:
    runner = peers.EngineRunner()

    def run(prefix: str, count: int) -> None:
        for k in range(count):
            for name, script in peers.SCRIPTS.items():
                session_id = f"{prefix}{k}{name}"
                runner.start(session_id)
                for text, nlu in script:
                    runner.turn(session_id, text, nlu)
    run("warm", 50)
    profile = cProfile.Profile()
    profile.enable()
    run("p", sessions)
    profile.disable()
    print(f"\ncProfile over {sessions} sessions of each script (times inflated by the profiler):")
    pstats.Stats(profile).sort_stats("tottime").print_stats(18)


def load_profile(nodes: int) -> None:
    import json

    from generate import generate

    from compiler.driver import check_file, write_ir
    from interpreter.loader import load_program

    with tempfile.TemporaryDirectory() as tmp:
        source, out = Path(tmp) / "g.json", Path(tmp) / "g.ir"
        source.write_text(json.dumps(generate(nodes), ensure_ascii=False), "utf-8")
        write_ir(check_file(str(source)).ir_bytes(), str(out))
        gc.collect()  # (what survived the compile is frozen: no collection walks it, as in mgi)
        for paused in (False, True):
            if paused:
                gc.disable()
            start = time.perf_counter()
            load_program(out)
            print(f"load_program, {nodes} nodes, cycle collector "
                  f"{'paused' if paused else 'as is'}: {(time.perf_counter() - start) * 1000:.1f} ms")
            gc.enable()
        start = time.perf_counter()
        load_program(out, verify=True)
        print(f"load_program(verify=True), every node table built: "
              f"{(time.perf_counter() - start) * 1000:.1f} ms")
        spent = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}
        began = [0.0]

        def watch(phase: str, info: dict) -> None:
            if phase == "start":
                began[0] = time.perf_counter()
            else:
                spent[info["generation"]][0] += 1
                spent[info["generation"]][1] += time.perf_counter() - began[0]
        gc.callbacks.append(watch)
        start = time.perf_counter()
        load_program(out)
        total = time.perf_counter() - start
        gc.callbacks.remove(watch)
        in_gc = sum(t for _, t in spent.values())
        print(f"time in the cycle collector during one load: {in_gc * 1000:.1f} of "
              f"{total * 1000:.1f} ms (" + ", ".join(
                  f"gen{g}: {n} runs {t * 1000:.1f} ms" for g, (n, t) in spent.items()) + ")")
        profile = cProfile.Profile()
        profile.enable()
        load_program(out)
        profile.disable()
        print("cProfile of one load (a function's own time includes the collections its "
              "allocations set off):")
        pstats.Stats(profile).sort_stats("tottime").print_stats(14)


# --- shares: the turn with a part taken out, in multiples of the plain-Python router ---------


def turn_shares(rounds: int = 40) -> None:
    """Where the engine turn goes, as in-run ratios (a busy machine moves them little): the
    engine turn over the plain-Python router's, whole, without the safety detector (it finds
    nothing), and without the safety detector and the NLG (a fixed reply). Each round times
    every variant and the plain router back to back; medians of the per-round ratios."""
    import itertools

    import interpreter.engine as engine_module
    from interpreter.wording.nlg import Reply

    ids = itertools.count()
    plain = peers.PlainRouter()
    whole, quiet, mute = peers.EngineRunner(), peers.EngineRunner(), peers.EngineRunner()
    quiet.runtime.safety = mute.runtime.safety = _NoDetector()  # their own runtimes
    speak = engine_module.speak
    fixed = lambda nlg, decision, context: Reply("네, 말씀해 주세요.", context.state.rotation)  # noqa: E731
    plan = [("whole engine turn", whole, speak), ("without the safety detector", quiet, speak),
            ("without the safety detector and the NLG", mute, fixed)]
    ratios: dict[str, list[float]] = {label: [] for label, _, _ in plan}
    for _label, runner, say in plan:  # warm-up
        engine_module.speak = say
        peers.median_turn_ns(runner, 10, ids)
    gc.disable()
    try:
        for _ in range(rounds):
            floor = peers.median_turn_ns(plain, 4, ids)
            for label, runner, say in plan:
                engine_module.speak = say
                ratios[label].append(peers.median_turn_ns(runner, 4, ids) / floor)
    finally:
        engine_module.speak = speak
        gc.enable()
    print(f"engine turn / plain-Python router turn, median of {rounds} rounds (load average "
          f"{os.getloadavg()[0]:.2f}):")
    for label, values in ratios.items():
        values.sort()
        print(f"  {label:42} {statistics.median(values):5.2f}x  "
              f"(quartiles {values[len(values) // 4]:.2f}-{values[3 * len(values) // 4]:.2f})")


# --- in context: each step's marginal cost inside the whole turn --------------------------


def turn_in_context(rounds: int = 15) -> None:
    """What each step costs inside the turn, where the steps alone (`turn`) add up to far
    less than the whole: every scripted turn is replayed whole (store reset), and again with
    one step replaced by its precomputed result (the detector finding nothing, the NLU and
    safety step, `route_turn`, `speak`, all three); the difference of medians is that step's
    marginal cost, with the caches as a real turn leaves them. Rounds alternate the variants."""
    import interpreter.engine as engine_module
    from interpreter.wording.nlg import RenderContext, speak

    runner = peers.EngineRunner()
    engine, store, runtime = runner.engine, runner.store, runner.runtime
    cases = []
    for name, script in peers.SCRIPTS.items():
        session_id = f"context-{name}"
        engine.start(session_id)
        for text, nlu in script:
            record = store._records[session_id]
            heard = engine._understand(text, record[0], nlu)
            decision = route_turn_of(engine_module, runtime, record[0], heard[0])
            spoken = engine._enter(decision) if decision.kind == "move" else decision
            reply = speak(engine.nlg, spoken, RenderContext(runtime, spoken.state))
            cases.append((session_id, text, nlu, record, heard, decision, reply))
            engine.turn(session_id, text, nlu)
    real = (engine_module.Engine._understand, engine_module.route_turn, engine_module.speak)
    now: list = [None]
    understood = lambda self, text, state, override: now[0][4]  # noqa: E731
    routed = lambda *args: now[0][5]  # noqa: E731
    worded = lambda *args: now[0][6]  # noqa: E731
    plan = {"whole turn": (real, runtime.safety),
            "detector finds nothing": (real, _NoDetector()),
            "NLU + safety precomputed": ((understood, *real[1:]), runtime.safety),
            "route_turn precomputed": ((real[0], routed, real[2]), runtime.safety),
            "speak precomputed": ((*real[:2], worded), runtime.safety),
            "all three precomputed": ((understood, routed, worded), runtime.safety)}
    detector = runtime.safety

    def median_us(steps, safety, repeat: int) -> float:
        (engine_module.Engine._understand, engine_module.route_turn,
         engine_module.speak), runtime.safety = steps, safety
        clock, samples = time.perf_counter_ns, []
        for _ in range(repeat):
            for case in cases:
                now[0] = case
                store._records[case[0]] = case[3]
                start = clock()
                engine.turn(case[0], case[1], case[2])
                samples.append(clock() - start)
        return statistics.median(samples) / 1000

    medians: dict[str, list[float]] = {label: [] for label in plan}
    try:
        for steps, safety in plan.values():
            median_us(steps, safety, 5)  # warm-up
        gc.disable()
        for k in range(rounds):
            for label, (steps, safety) in (plan.items() if k % 2 == 0
                                           else reversed(plan.items())):
                medians[label].append(median_us(steps, safety, 30))
    finally:
        gc.enable()
        (engine_module.Engine._understand, engine_module.route_turn,
         engine_module.speak), runtime.safety = real, detector
    whole = statistics.median(medians.pop("whole turn"))
    print(f"Engine.turn in context, median of {rounds} alternating rounds (load average "
          f"{os.getloadavg()[0]:.2f}): whole turn {whole:.2f} us")
    for label, values in medians.items():
        value = statistics.median(values)
        print(f"  {label:28} {value:6.2f} us   the step's marginal cost {whole - value:6.2f} us "
              f"({(whole - value) / whole:4.0%})")


def route_turn_of(engine_module, runtime, state, heard):
    return engine_module.route_turn(runtime, state, heard, None, 0)


class _NoDetector:
    """A safety detector that finds nothing (the turn without detection)."""

    def detect(self, text: str) -> None:
        return None


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "turn"
    if what == "turn":
        turn_steps()
        turn_profile()
    elif what == "context":
        turn_in_context(int(sys.argv[2]) if len(sys.argv) > 2 else 15)
    elif what == "shares":
        turn_shares(int(sys.argv[2]) if len(sys.argv) > 2 else 40)
    elif what == "load":
        load_profile(int(sys.argv[2]) if len(sys.argv) > 2 else 10000)
    else:
        raise SystemExit("usage: profile_engine.py [turn | context [ROUNDS] | shares [ROUNDS] | load [NODES]]")
