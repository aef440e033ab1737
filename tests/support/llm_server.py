"""A chat-completions server on loopback for the LLM tests: scripted answers, failures on cue.

    server = LLMServer().start()          # or the `llm_server` fixture
    server.nlu(Reply(content='{"intent": null, "dialogue_act": "affirm", "slots": {}}'))
    server.nlg(Reply(status=500), Reply(content="네, 반가워요."))
    ...  # point a ChatClient (or `mgi run --llm-url`) at server.url
    server.requests  # every request body, parsed, in order

It speaks `POST /v1/chat/completions` over HTTP/1.1 with keep-alive, like vLLM or Ollama. A
request is an NLU request when its system message is the NLU's (see `purpose`), else NLG; each
purpose has its own queue of `Reply`s, and an empty queue answers with `default_nlu` /
`default_nlg`. A `Reply` can be slow, fail with any status and headers, return any body, drop
the connection instead of answering, or answer and then close the kept-alive connection
without saying so (the stale socket a client must survive), or drip its answer (`drip`): the
headers a byte at a time, the body a byte at a time, the body in one-byte chunks (chunked
transfer encoding), or `100 Continue` interim responses without end, one piece every
`drip_every` seconds. A drip ends when the client hangs up (its `Reply` goes in `hangups`),
when the server stops, or after `DRIP_LIMIT` seconds (then the connection is closed), so no
loop outlives a test. `LLMServer(tls=(certfile, keyfile))` speaks HTTPS. `rejects` makes the
server refuse some `response_format` types with 400, like servers without structured output.
`handling_seconds` holds the time each request spent in the handler (request line read to
response ready to write), for the overhead benchmark.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from functools import cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_SCENARIOS = ("senimate", "senimate_weather", "clinic_booking")

NLU_MARK = "You read what the user just said"
DEFAULT_NLU = '{"intent": null, "dialogue_act": "inform", "slots": {}}'
DEFAULT_NLG = "네, 말씀 잘 들었어요."
DRIPS = ("headers", "body", "chunks", "continue")
DRIP_LIMIT = 10.0  # seconds: the longest a drip goes on when nobody hangs up


@dataclass
class Reply:
    """One scripted answer. `content` is wrapped in a chat completion unless `body` is given."""

    content: str | None = None
    status: int = 200
    body: bytes | None = None
    delay: float = 0.0
    headers: dict = field(default_factory=dict)
    drop: bool = False  # close the connection without answering
    close_after: bool = False  # answer, then close the kept-alive connection silently
    drip: str = ""  # one of DRIPS: send the answer slowly, a piece every `drip_every` s
    drip_every: float = 0.3


def nlu_answer(intent=None, act="inform", **slots) -> str:
    """An NLU answer as a model would give it: `{"intent", "dialogue_act", "slots"}`."""
    return json.dumps({"intent": intent, "dialogue_act": act, "slots": slots}, ensure_ascii=False)


def completion(content: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "model": "test",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}]},
                      ensure_ascii=False).encode()


def response_head(status: int, headers: dict, length: int | None) -> bytes:
    """The status line and headers of an answer; chunked when `length` is None."""
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Content-Type: application/json",
             f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def drip_pieces(kind: str, status: int, headers: dict, body: bytes) -> Iterator[bytes]:
    """The answer in the pieces a `drip` of `kind` sends, one per interval; "continue" never
    gets to the answer."""
    if kind not in DRIPS:
        raise ValueError(f"drip must be one of {DRIPS}, got {kind!r}")
    if kind == "continue":
        while True:
            yield b"HTTP/1.1 100 Continue\r\n\r\n"
    head = response_head(status, headers, None if kind == "chunks" else len(body))
    if kind == "headers":
        yield from (head[i:i + 1] for i in range(len(head)))
        yield body
    elif kind == "body":
        yield head
        yield from (body[i:i + 1] for i in range(len(body)))
    else:
        yield head
        yield from (b"1\r\n" + body[i:i + 1] + b"\r\n" for i in range(len(body)))
        yield b"0\r\n\r\n"


def purpose(request: dict) -> str:
    """'nlu' for the NLU's requests (repairs included), else 'nlg'."""
    messages = request.get("messages") or [{}]
    return "nlu" if str(messages[0].get("content", "")).startswith(NLU_MARK) else "nlg"


class LLMServer:
    """The server; `start()` runs it in a daemon thread, `stop()` ends it."""

    def __init__(self, tls: tuple[str, str] | None = None):
        self.queues: dict[str, deque[Reply]] = {"nlu": deque(), "nlg": deque()}
        self.default_nlu = Reply(DEFAULT_NLU)
        self.default_nlg = Reply(DEFAULT_NLG)
        self.rejects: set[str] = set()
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.handling_seconds: list[float] = []
        self.connections = 0
        self.hangups: list[Reply] = []  # replies whose drip the client cut by closing
        self.stopped = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.scheme = "https" if tls else "http"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> LLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()  # ends the drips still going
        self._httpd.shutdown()
        self._httpd.server_close()

    def nlu(self, *replies: Reply | str) -> None:
        self.queues["nlu"].extend(_reply(r) for r in replies)

    def nlg(self, *replies: Reply | str) -> None:
        self.queues["nlg"].extend(_reply(r) for r in replies)

    def reset(self) -> None:
        with self._lock:
            for queue in self.queues.values():
                queue.clear()
            self.rejects.clear()
            self.requests.clear()
            self.hangups.clear()
            self.headers.clear()
            self.handling_seconds.clear()
            self.default_nlu, self.default_nlg = Reply(DEFAULT_NLU), Reply(DEFAULT_NLG)

    def of(self, kind: str) -> list[dict]:
        """The requests of one purpose, in order."""
        return [r for r in self.requests if purpose(r) == kind]

    def _next(self, request: dict) -> Reply:
        with self._lock:
            self.requests.append(request)
            kind = purpose(request)
            fmt = (request.get("response_format") or {}).get("type")
            if fmt in self.rejects:
                return Reply(status=400, body=json.dumps({"error": {
                    "message": f"response_format {fmt} is not supported"}}).encode())
            queue = self.queues[kind]
            if queue:
                return queue.popleft()
            return self.default_nlu if kind == "nlu" else self.default_nlg


def _reply(value: Reply | str) -> Reply:
    return value if isinstance(value, Reply) else Reply(value)


def _handler(server: LLMServer) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with server._lock:
                server.connections += 1

        def parse_request(self) -> bool:
            self._started = time.perf_counter()
            return super().parse_request()

        def log_message(self, *args) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path != "/v1/chat/completions":
                return self._send(404, b'{"error": {"message": "no such path"}}', {})
            try:
                request = json.loads(raw)
            except ValueError:
                return self._send(400, b'{"error": {"message": "bad json"}}', {})
            with server._lock:
                server.headers.append(dict(self.headers))
            reply = server._next(request)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.drop:
                self.close_connection = True
                return
            body = reply.body if reply.body is not None else (
                completion(reply.content) if reply.content is not None else b"")
            if reply.drip:
                return self._drip(reply, body)
            self._send(reply.status, body, reply.headers)
            if reply.close_after:
                self.close_connection = True

        def _send(self, status: int, body: bytes, headers: dict) -> None:
            with server._lock:  # before the write: the client may ask for it once answered
                server.handling_seconds.append(time.perf_counter() - self._started)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self._headers_buffer.extend((b"\r\n", body))  # one write: no Nagle stall
                self.flush_headers()
            except OSError:  # the client gave up (a timeout test): nothing to tell
                self.close_connection = True

        def _drip(self, reply: Reply, body: bytes) -> None:
            """Each piece of the answer, then a pause, until the pieces end, the client hangs
            up, the server stops or DRIP_LIMIT has passed; then the connection is closed."""
            self.close_connection = True
            ends = time.monotonic() + DRIP_LIMIT
            for piece in drip_pieces(reply.drip, reply.status, reply.headers, body):
                if server.stopped.is_set() or time.monotonic() > ends:
                    return
                try:
                    self.wfile.write(piece)
                except OSError:  # the client closed its end (a write after that fails)
                    with server._lock:
                        server.hangups.append(reply)
                    return
                server.stopped.wait(reply.drip_every)

    return Handler


@cache
def reference_runtime(name: str):
    """The `Runtime` of scenarios/NAME.json, compiled in-process once per test run."""
    from compiler.driver import check_file
    from interpreter.loader import Runtime

    result = check_file(str(ROOT / "scenarios" / f"{name}.json"))
    assert not result.errors, name
    return Runtime(result.program())
