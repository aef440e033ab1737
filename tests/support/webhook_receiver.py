"""A real webhook receiver for the tests: `http.server` on a loopback port, over HTTP or
HTTPS, that records every request and answers by path.

Paths: `/ok` (a declared result and an undeclared field), `/missing` (404), `/flaky` (503 on
the first request of each Idempotency-Key, then 200), `/busy` (429 with `Retry-After: 0`
first), `/hang` (answers only when the receiver stops), `/huge` (10 MB with no length),
`/redirect` (302 to `/ok`), `/badtype` (a result field of the wrong type), `/slow` (200 ms,
then `/ok`'s answer). Like a careful business receiver, it honours the idempotency key: a
key it has answered with 2xx is answered again from memory and counted once in `effects`.
A test may set `before(request)`: called in the handler's thread once a request is recorded,
before it is answered (to hold a call, or to act on the store while the call is open).
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OK_ANSWER = {"status": "shipped", "eta_days": 2, "internal_note": "not for the bot"}
HUGE_BYTES = 10 * 1024 * 1024


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # 64 calls at once must not overflow the listen backlog (5)

    def handle_error(self, request, client_address) -> None:
        pass  # a client that stops reading (the 10 MB answer) is expected, not news


class Receiver:
    def __init__(self, tls: tuple[str, str] | None = None):
        self.requests: list[dict] = []  # {"path", "key", "body"} in arrival order
        self.effects: list[str] = []  # the keys whose action took effect (once each)
        self.answered: dict[str, bytes] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.before = None  # a test's hook: before(request) runs before the answer
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.scheme = "http"
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> Receiver:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def keys(self, path: str | None = None) -> list[str]:
        with self.lock:
            return [r["key"] for r in self.requests if path is None or r["path"] == path]

    def _handler(self) -> type:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16  # headers and body in one write (else delayed ACKs: 40 ms a call)

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                key = self.headers.get("Idempotency-Key", "")
                with receiver.lock:
                    seen = sum(1 for r in receiver.requests if r["key"] == key)
                    request = {"path": self.path, "key": key, "body": body,
                               "headers": dict(self.headers)}
                    receiver.requests.append(request)
                if receiver.before is not None:
                    receiver.before(request)
                with receiver.lock:
                    done = receiver.answered.get(key)
                if done is not None:  # an action already taken: the same answer, no effect
                    return self._send(200, done)
                self._route(self.path, seen, key)

            def _route(self, path: str, seen: int, key: str) -> None:
                if path == "/missing":
                    return self._send(404, b'{"error": "no such order"}')
                if path == "/flaky" and seen == 0:
                    return self._send(503, b'{"error": "try later"}')
                if path == "/busy" and seen == 0:
                    return self._send(429, b"{}", {"Retry-After": "0"})
                if path == "/hang":
                    receiver.stopping.wait(60)
                    return self._send(200, b"{}")
                if path == "/huge":
                    return self._huge()
                if path == "/redirect":
                    return self._send(302, b"", {"Location": "/ok"})
                if path == "/badtype":
                    return self._send(200, b'{"status": 42}')
                if path == "/slow":
                    time.sleep(0.2)
                answer = json.dumps(OK_ANSWER).encode()
                with receiver.lock:
                    receiver.answered[key] = answer
                    receiver.effects.append(key)
                self._send(200, answer)

            def _huge(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Connection", "close")  # no length: the body ends at close
                self.end_headers()
                chunk = b" " * 65536
                try:
                    for _ in range(HUGE_BYTES // len(chunk)):
                        self.wfile.write(chunk)
                except OSError:  # the client stopped reading: expected
                    pass
                self.close_connection = True

            def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler
