"""`/healthz` while 64 sessions call a slow receiver through `mgi serve` (SPEC 15, 17.1).

One `mgi serve` (memory store, one worker) serving a scenario whose turn calls a loopback
webhook receiver (tests/support/webhook_receiver.py `/slow`: 200 ms, in a process of its own so its
threads do not share this one's interpreter lock); 64 sessions, each with its own kept-alive
connection, send one turn at the same moment: a first batch (the server has run one turn
before it), then ROUNDS more. Meanwhile a probe process GETs `/healthz` every 10 ms. Printed
side by side: for each batch, its wall time (against one receiver call, 200 ms, and 64 in a
row, 12.8 s) and `/healthz` p50/p99/max while it ran (the first batch is when a thread pool
started lazily would start its threads); `/healthz` on the idle server; the load average
(`os.getloadavg`, as `uptime`).
The target is a batch in about one call's time and `/healthz` under 50 ms. Asserts only
that every turn called the receiver (the receiver counts the actions that took effect).

    .venv/bin/python tests/benchmarks/webhook_healthz.py [ROUNDS]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from support.service_server import Client, ServiceServer  # noqa: E402
from test_webhooks import compiled  # noqa: E402
from test_webhooks_service import every_turn_calls  # noqa: E402

SESSIONS = 64
# /healthz probed from a process of its own (the test process's 64 client threads and the
# receiver's would slow a probe thread here, not the server): GETs every 10 ms until stdin
# says stop; prints the latencies as JSON.
PROBE = """
import http.client, json, sys, threading, time
connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
done, seen = threading.Event(), []
threading.Thread(target=lambda: (sys.stdin.readline(), done.set()), daemon=True).start()
print("ready", flush=True)
while not done.is_set() and len(seen) < 5000:
    started = time.perf_counter()
    connection.request("GET", "/healthz")
    connection.getresponse().read()
    seen.append(time.perf_counter() - started)
    done.wait(0.01)
print(json.dumps(seen))
"""
CALL_SECONDS = 0.2
# the receiver in a process of its own: prints its port, serves until stdin closes, then
# prints how many actions took effect
RECEIVER = """
import sys
sys.path.insert(0, sys.argv[1])
from support.webhook_receiver import Receiver
with Receiver() as receiver:
    print(receiver.server.server_address[1], flush=True)
    sys.stdin.read()
print(len(set(receiver.effects)), flush=True)
"""


def percentiles(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return f"median {pick(0.5):5.1f} ms  p99 {pick(0.99):6.1f} ms  max {ordered[-1] * 1000:6.1f} ms" \
           f"  ({len(ordered)} probes)"


def probing(port: int, work) -> list[float]:
    """The `/healthz` latencies seen while `work()` runs."""
    prober = subprocess.Popen([sys.executable, "-c", PROBE, str(port)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert prober.stdout.readline().strip() == "ready"
    work()
    return json.loads(prober.communicate("stop\n", timeout=60)[0])


def batch(clients: list[Client], round_number: int) -> float:
    """One turn on every session at once; the wall time until all have answered."""
    failures: list = []

    def turn(number: int, client: Client) -> None:
        status, answer, _ = client.call("POST", "/dm/v1/message", {
            "session_id": f"c{number}", "text": f"round {round_number}",
            "nlu": {"dialogue_act": "inform"}})
        if status != 200 or answer["turn"]["passed"] != [{"node": "hook",
                                                          "reason": "default_next"}]:
            failures.append((status, answer))

    threads = [threading.Thread(target=turn, args=(n, c)) for n, c in enumerate(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    took = time.perf_counter() - started
    assert not failures, failures[:2]
    return took


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, str(HERE.parent)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(receiver.stdout.readline())
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "orders.ir"
        path.write_bytes(compiled(every_turn_calls(f"http://127.0.0.1:{port}/slow"))[0])
        with ServiceServer([path]) as server:
            clients = [Client(server.port) for _ in range(SESSIONS)]
            for number, client in enumerate(clients):
                status, answer, _ = client.call("POST", "/dm/v1/session", {
                    "scenario": "orders", "session_id": f"c{number}"})
                assert status == 201, answer
            warm = Client(server.port)  # one turn first: the imports of a first call
            warm.call("POST", "/dm/v1/session", {"scenario": "orders", "session_id": "w"})
            warm.call("POST", "/dm/v1/message", {"session_id": "w", "text": "hi",
                                                 "nlu": {"dialogue_act": "inform"}})
            warm.close()
            idle = probing(server.port, lambda: time.sleep(1.0))
            batches = [probed_batch(server.port, clients, n) for n in range(1, rounds + 2)]
            for client in clients:
                client.close()
    effects = int(receiver.communicate("", timeout=30)[0])
    assert effects == SESSIONS * (rounds + 1) + 1, effects  # every turn called the receiver
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{SESSIONS} sessions x a {CALL_SECONDS * 1000:.0f} ms receiver, 1 + {rounds} batches "
          f"(Python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load})")
    print(f"  one call: {CALL_SECONDS:.1f} s; one after another: {SESSIONS * CALL_SECONDS:.1f} s;"
          f" /healthz target: under 50 ms")
    print(f"  idle:     /healthz {percentiles(idle)}")
    for number, (took, seen) in enumerate(batches, 1):
        print(f"  batch {number:<2} {took:6.3f} s  /healthz {percentiles(seen)}")
    print(f"  all batches: /healthz {percentiles([s for _, seen in batches for s in seen])};"
          f" batch time median {sorted(t for t, _ in batches)[len(batches) // 2]:.3f} s")


def probed_batch(port: int, clients: list[Client], number: int) -> tuple[float, list[float]]:
    """One batch (its wall time) and the `/healthz` latencies probed while it ran."""
    took: list[float] = []
    seen = probing(port, lambda: took.append(batch(clients, number)))
    return took[0], seen


if __name__ == "__main__":
    main()
