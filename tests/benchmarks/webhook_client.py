"""The webhook client choice (SPEC 15): urllib3 against httpx and the standard library.

Against loopback receivers (tests/support/webhook_receiver.py), side by side:
- one after another and with 16 threads, N POSTs to `/ok`: `urllib3` pooled (the
  `PoolManager` the webhook skill shares), `httpx` pooled (an `httpx.Client` set up as the
  skill's was before), a kept-alive `http.client` (as the LLM adapter does; one connection
  per thread), `urllib.request` (a new connection per call);
- 64 calls at once to `/slow` (200 ms, a receiver in a process of its own), as 64 sessions
  of `mgi serve` make them: the CPU time of this process per batch, urllib3 against httpx.
  httpx's pool (httpcore 1.0.9) rescans every connection for each idle one on each request
  and each release, so its cost grows with the square of the connections open.
Prints the time per call, the CPU per batch and the ratios; asserts nothing. httpx is a
`bench` extra, not a dependency.

    .venv/bin/python tests/benchmarks/webhook_client.py [N]
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from support.webhook_receiver import Receiver  # noqa: E402

BODY = json.dumps({"action_id": "s:1:n", "arguments": {"order_id": "A-7"}}).encode()
HEADERS = {"Content-Type": "application/json", "Idempotency-Key": "k"}
AT_ONCE, BATCHES = 64, 4
RECEIVER = """
import sys
sys.path.insert(0, sys.argv[1])
from support.webhook_receiver import Receiver
with Receiver() as receiver:
    print(receiver.server.server_address[1], flush=True)
    sys.stdin.read()
"""


def urllib3_call():
    from interpreter.skills import webhook

    client = webhook.shared_client()
    return lambda url: client.request("POST", url, body=BODY, headers=HEADERS,
                                      timeout=5.0).data


def httpx_call():
    import httpx

    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    client = httpx.Client(transport=httpx.HTTPTransport(
        socket_options=nodelay, limits=httpx.Limits(max_connections=256,
                                                    max_keepalive_connections=64)))
    return lambda url: client.post(url, content=BODY, headers=HEADERS, timeout=5).read()


def with_client(make):
    def run(url: str, n: int) -> None:
        call = make()
        for _ in range(n):
            call(url)
    return run


def with_http_client(url: str, n: int) -> None:
    host, port = url.split("//")[1].split("/")[0].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    for _ in range(n):
        connection.request("POST", "/ok", body=BODY, headers=HEADERS)
        connection.getresponse().read()
    connection.close()


def with_urllib(url: str, n: int) -> None:
    for _ in range(n):
        request = urllib.request.Request(url, data=BODY, headers=HEADERS, method="POST")
        with urllib.request.urlopen(request, timeout=5) as answer:
            answer.read()


def timed(function, url: str, n: int, threads: int = 1) -> float:
    """Seconds per call, `n` calls in all over `threads` threads."""
    workers = [threading.Thread(target=function, args=(url, n // threads))
               for _ in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return (time.perf_counter() - started) / n


def batch_cpu(call, url: str) -> list[float]:
    """This process's CPU seconds for each batch of `AT_ONCE` calls at once (after one)."""
    spent = []
    for _ in range(BATCHES + 1):
        workers = [threading.Thread(target=call, args=(url,)) for _ in range(AT_ONCE)]
        started = time.process_time()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        spent.append(time.process_time() - started)
    return spent[1:]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    clients = {"urllib3 pooled": urllib3_call, "httpx pooled": httpx_call}
    with Receiver() as receiver:
        url = receiver.base + "/ok"
        rows = []
        for threads in (1, 16):
            for name, function in (*((k, with_client(v)) for k, v in clients.items()),
                                   ("http.client kept-alive", with_http_client),
                                   ("urllib.request", with_urllib)):
                function(url, 20)  # imports and first connections out of the way
                rows.append((name, threads, timed(function, url, n, threads)))
    slow = subprocess.Popen([sys.executable, "-c", RECEIVER, str(HERE.parent)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    slow_url = f"http://127.0.0.1:{int(slow.stdout.readline())}/slow"
    cpu = {name: batch_cpu(make(), slow_url) for name, make in clients.items()}
    slow.communicate("", timeout=30)
    base = {t: s for name, t, s in rows if name == "http.client kept-alive"}
    print(f"{n} POSTs to a loopback receiver (Python {sys.version.split()[0]})")
    for name, threads, seconds in rows:
        print(f"  {name:<24} {threads:>2} thread(s)  {seconds * 1e6:8.0f} us/call  "
              f"x{seconds / base[threads]:.2f} of http.client")
    print(f"{AT_ONCE} calls at once to a 200 ms receiver, CPU of this process per batch:")
    mid = {name: sorted(spent)[len(spent) // 2] for name, spent in cpu.items()}
    for name, spent in cpu.items():
        print(f"  {name:<24} " + " ".join(f"{s * 1000:6.1f}" for s in spent) +
              f" ms  (median x{mid[name] / mid['urllib3 pooled']:.2f} of urllib3)")


if __name__ == "__main__":
    main()
