"""LLM adapter overhead: what the LLM NLU and NLG add to a call beyond the server's own time.

Run with `python tests/benchmarks/llm_overhead.py [CALLS]` from the repository root (default
2000 calls of each). The scripted chat-completions server of the tests (tests/support/llm_server.py)
runs in a child process, so it does not share the interpreter lock with the adapter; it times
each request from its parsed request line to its written response. The adapter is timed around
`LLMNLU.parse` (prompt building, request over the kept-alive connection, JSON decoding,
validation against the IR's answer type) and `LLMNLG.render` (the template's reference
sentence, prompt building, request, reply cleaning) on the compiled SeniMate scenario, at the
meal-check node with a six-turn history. Overhead per call = adapter time - server time of the
same request; the verdict uses the median (on a shared machine the mean and p90 carry the
scheduler's noise, as the floor's do). Target: under 1 ms. Also prints the parts measured
alone and, as the floor, a bare http.client POST of a fixed body with no parsing. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import socket
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from support.llm_server import LLMServer, Reply, reference_runtime  # noqa: E402

from interpreter import ir  # noqa: E402
from interpreter.llm.client import ChatClient, LLMSettings, endpoint  # noqa: E402
from interpreter.llm.prompts import (nlg_messages, nlu_messages, nlu_schema,  # noqa: E402
                                     read_answer, reading_type)
from interpreter.wording.nlg import RenderContext, TemplateNLG  # noqa: E402
from interpreter.llm.nlg import LLMNLG, reply_text  # noqa: E402
from interpreter.understanding.nlu import NLUContext  # noqa: E402
from interpreter.llm.nlu import LLMNLU  # noqa: E402
from interpreter.understanding.rules import RulesNLU  # noqa: E402
from interpreter.routing import MOVE, Decision  # noqa: E402
from interpreter.state import DialogueState, HistoryEntry, append_history  # noqa: E402

NLU_ANSWER = json.dumps({"intent": None, "dialogue_act": "inform",
                         "slots": {"meal_status": "adequate", "daily_life": None}})
NLG_ANSWER = "잘 챙겨 드셨다니 다행이에요. 요즘 몸은 좀 어떠세요?"
TARGET_MS = 1.0


def serve(pipe) -> None:
    """Child process: run the server until told to stop, then send back its handling times."""
    server = LLMServer()
    server.default_nlu, server.default_nlg = Reply(NLU_ANSWER), Reply(NLG_ANSWER)
    server.start()
    pipe.send(server.url)
    while True:
        message = pipe.recv()
        if message == "times":
            with server._lock:  # swap, so no request handled meanwhile is lost
                times, server.handling_seconds = server.handling_seconds, []
            pipe.send(times)
        elif message == "stop":
            server.stop()
            return


def setting():
    runtime = reference_runtime("senimate")
    history: list[bytes] = []
    for i in range(6):
        history = append_history(history, HistoryEntry(f"어제는 공원에서 산책했어요 {i}",
                                                        "그러셨군요. 좋으셨겠어요.", "x", "y"))
    state = DialogueState("bench", runtime.ir_hash, "meal_check", previous_node="daily_life_check",
                          session_turns=8, history=history)
    table = runtime.node_named("meal_check")
    context = NLUContext(runtime.program, table.node, state, runtime)
    facts = [None] * runtime.field_count
    facts[ir.FIELD_INDEX["nlu.text"]] = "밥은 먹었어요"
    decision = Decision(runtime.node_index["daily_life_check"], table.index, MOVE,
                        "default_next", "default_next", state, act=ir.ACTS.index("inform"),
                        facts=facts)
    return runtime, context, decision, RenderContext(runtime, state)


def timed(calls: int, action) -> list[float]:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def against_server(pipe, calls: int, action) -> tuple[list[float], list[float]]:
    """(adapter seconds, server seconds) per call, after a warm-up."""
    for _ in range(50):
        action()
    pipe.send("times")
    pipe.recv()  # drop the warm-up's
    totals = timed(calls, action)
    pipe.send("times")
    servers = pipe.recv()
    assert len(servers) == calls, (len(servers), calls)
    return totals, servers


def figures(name: str, totals: list[float], servers: list[float]) -> float:
    """Print the figures of one series; return its median overhead in microseconds (on a
    shared machine the mean and p90 carry the scheduler's noise: the floor shows the same)."""
    overhead = sorted((t - s) * 1e6 for t, s in zip(totals, servers))
    p90 = overhead[int(len(overhead) * 0.9)]
    mean = statistics.fmean(overhead)
    print(f"{name:<30} adapter {statistics.median(totals) * 1e6:6.0f} us  server "
          f"{statistics.median(servers) * 1e6:6.0f} us  overhead: mean {mean:5.0f} us, "
          f"median {statistics.median(overhead):5.0f} us, p90 {p90:5.0f} us")
    return statistics.median(overhead)


def parts(calls: int, runtime, context, decision, render) -> None:
    """The adapter's own steps alone, without the network."""
    reading = reading_type(runtime.program)
    schema = nlu_schema(reading)
    entries = context.state.entries()
    template = TemplateNLG()
    steps = {
        "nlu prompt building": lambda: nlu_messages(runtime.program, context.node,
                                                    context.state.entries(), "밥은 먹었어요",
                                                    schema, True),
        "nlu answer validation": lambda: read_answer(NLU_ANSWER, reading),
        "nlg reference (template)": lambda: template.render(decision, render),
        "nlg prompt building": lambda: nlg_messages(runtime, decision, render.state, NLG_ANSWER,
                                                    entries),
        "nlg reply cleaning": lambda: reply_text(NLG_ANSWER),
    }
    for name, step in steps.items():
        times = sorted(timed(calls, step))
        print(f"  {name:<32} median {statistics.median(times) * 1e6:7.1f} us")


def bare_post(url: str, body: bytes):
    """The floor: one fixed POST over a kept-alive http.client connection, body not parsed."""
    _, host, port, path = endpoint(url)
    connection = http.client.HTTPConnection(host, port)
    connection.connect()
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as the adapter does
    headers = {"Content-Type": "application/json"}

    def post():
        connection.request("POST", path, body, headers)
        connection.getresponse().read()
    return post


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    runtime, context, decision, render = setting()
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.Process(target=serve, args=(child,), daemon=True)
    process.start()
    url = parent.recv()
    try:
        client = ChatClient(LLMSettings(url, "bench", timeout=5, turn_budget=3600))
        nlu, nlg = LLMNLU(client, runtime.program, RulesNLU(runtime.program)), LLMNLG(client)
        print(f"LLM adapter overhead, {calls} calls each, server in a child process "
              f"(Python {sys.version.split()[0]})")
        nlu_median = figures("LLMNLU.parse", *against_server(
            parent, calls, lambda: nlu.parse("밥은 먹었어요", context)))
        nlg_median = figures("LLMNLG.render", *against_server(
            parent, calls, lambda: nlg.render(decision, render)))
        request = {"model": "bench", "messages": nlu_messages(
            runtime.program, context.node, context.state.entries(), "밥은 먹었어요",
            nlu.schema, True)}
        floor = figures("floor: bare http.client POST", *against_server(
            parent, calls, bare_post(url, json.dumps(request).encode())))
        print("parts alone:")
        parts(calls, runtime, context, decision, render)
        worst = max(nlu_median, nlg_median) / 1000
        verdict = "ok" if worst < TARGET_MS else "MISSED"
        print(f"adapter overhead per call (median, worse of NLU and NLG): {worst:.3f} ms "
              f"(target < {TARGET_MS:g} ms): {verdict}; beyond the bare POST: "
              f"{worst - floor / 1000:.3f} ms")
    finally:
        parent.send("stop")
        process.join(5)


if __name__ == "__main__":
    main()
