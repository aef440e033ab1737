"""The webhook client choice (SPEC 15): httpx against the standard library, side by side.

Against one loopback receiver (tests/webhook_receiver.py, `/ok`), N POSTs each way:
- `httpx` pooled: the `httpx.Client` the webhook skill shares (kept-alive connections);
- `http.client` kept-alive: one `HTTPConnection` reused, as the LLM adapter does;
- `urllib.request`: a new connection per call (the standard library's easy path);
and the same with 16 threads at once (httpx's pool against one `http.client` connection per
thread). Prints the time per call and the ratios; asserts nothing.

    .venv/bin/python tests/benchmarks/webhook_client.py [N]
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from webhook_receiver import Receiver  # noqa: E402

BODY = json.dumps({"action_id": "s:1:n", "arguments": {"order_id": "A-7"}}).encode()
HEADERS = {"Content-Type": "application/json", "Idempotency-Key": "k"}


def with_httpx(url: str, n: int) -> None:
    from interpreter.skills import webhook

    client = webhook.shared_client()
    for _ in range(n):
        client.post(url, content=BODY, headers=HEADERS, timeout=5).read()


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


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with Receiver() as receiver:
        url = receiver.base + "/ok"
        with_httpx(url, 50)  # imports and first connections out of the way
        rows = []
        for threads in (1, 16):
            for name, function in (("httpx pooled", with_httpx),
                                   ("http.client kept-alive", with_http_client),
                                   ("urllib.request", with_urllib)):
                rows.append((name, threads, timed(function, url, n, threads)))
    base = {t: s for name, t, s in rows if name == "http.client kept-alive"}
    print(f"{n} POSTs to a loopback receiver (Python {sys.version.split()[0]})")
    for name, threads, seconds in rows:
        print(f"  {name:<24} {threads:>2} thread(s)  {seconds * 1e6:8.0f} us/call  "
              f"x{seconds / base[threads]:.2f} of http.client")


if __name__ == "__main__":
    main()
