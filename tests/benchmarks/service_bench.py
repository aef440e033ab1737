"""`make bench`, section 5 (service): `mgi serve` over HTTP beside its floor and LangGraph.

Run by bench.py (`--only service`), or alone: `python tests/benchmarks/service_bench.py
[--quick]` from the repository root (the figures, without the targets table).

HTTP. Every server is one uvicorn worker on 127.0.0.1 with uvloop and httptools, its stderr
in a temporary file; the load is `wrk --latency` with service_turns.lua on the same two
cores: user turns (`POST /dm/v1/message`, a Korean sentence with a scripted NLU result, the
same bytes to every server) spread over as many sessions as connections (b0..b63), created
through each server's API before the load and walked to general_conversation, where these
turns stay for ever (no 409 session_complete; a non-2xx answer or a socket error fails the
row loudly). Per server: one warm-up, then 1, 16 and 64 connections, the servers taking turns
at each connection count (all of them are up at once, idle when not loaded):
- floor: a raw ASGI app (FloorApp below) that decodes the body into the service's own
  `Message` Struct and answers JSON of the size of the service's answer to the same turn,
  without a turn (what uvicorn and HTTP cost by themselves);
- litestar (info): the same bare handler in Litestar (msgspec Struct body,
  `openapi_config=None`): the measured reason the service is raw ASGI;
- memory, sqlite, redis: `mgi serve` with `--store memory:`, `sqlite:PATH` (WAL,
  synchronous=NORMAL) and `redis://` (a redis-server of tests/support/redis_server.py: append-only
  file, `appendfsync always`), at the default log level (info: one JSON line per request
  into the stderr file); sqlite also with `--log-level warning` at 16 connections, to show
  what the request log costs;
- langgraph+sqlitesaver: a raw ASGI app (LangGraphApp) around peers.LangGraphRouter's graph
  compiled with `SqliteSaver` on a file (sqlite3's defaults under SqliteSaver's own WAL
  pragma), one `invoke` per request.
For the `mgi serve` rows the sessions' versions are read before and after each run: the
server must have applied at least the turns wrk counted (and at most one more per
connection, the turns in flight when wrk stopped).

In process. The durable turn without HTTP, each runner on a SQLite file in a temporary
folder with its durability read back from its connection: mgi's engine with its own
`SessionStore` on SQLite (`interpreter.stores.sqlite_store.SQLiteSessionStore`: a get and a
compare-and-set committed before the turn returns), the target row, against LangGraph's
`invoke` with SqliteSaver; beside them, for information, the service's whole turn path
(`interpreter.service.sessions.Sessions.message`: the session lock, the record store's get,
the record decoded, the engine's turn, the record with its message ids encoded, the put)
driven by asyncio, and the engine with `synchronous=full` (also a power cut). The two
scripted conversations of peers.py (checked first to agree turn by turn), rounds in rotating
order, every user turn timed alone, medians. Then the stored session: the service's row of a
session after 5 user turns, read from the SQLite file (LangGraph's checkpoints and writes of
the same 5 turns beside it).
"""

import argparse
import asyncio
import gc
import http.client
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _path in (ROOT, ROOT / "tests", HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import peers  # noqa: E402
from interpreter.service.api import CreateSession, Message  # noqa: E402
from support.service_server import ServiceServer, compile_irs, free_port  # noqa: E402

SCENARIO = "senimate"
CONNECTIONS = (1, 16, 64)
LOG_CONNECTIONS = 16  # where the quiet-log sqlite server is measured too
WRK_THREADS = 2  # one per core; one thread for one connection
LUA = HERE / "service_turns.lua"
MESSAGE_PATH, SESSION_PATH = "/dm/v1/message", "/dm/v1/session"
# The load's turn: general_conversation stays on an `inform` without the end intent.
LOAD_TEXT = "시장에 같이 가려고요"
LOAD_BODY = '{"session_id":"%s","text":"' + LOAD_TEXT + '","nlu":{"dialogue_act":"inform"}}'
PREFIX = peers.FULL_WALK[:6]  # greeting .. health_check: the session is then in general talk
STAYING_NODE = "general_conversation"
STORED_AFTER = 5  # user turns before the stored session is measured
# uvicorn as `mgi serve` runs it (interpreter/service/serve.py: loop and http "auto", which
# are uvloop and httptools when installed, as they are with mago), for every peer server.
UVICORN = {"host": "127.0.0.1", "loop": "uvloop", "http": "httptools", "workers": 1,
           "lifespan": "on", "access_log": False, "server_header": False,
           "log_level": "warning"}

LABELS = {"floor": "floor: raw ASGI, decode + same-size JSON",
          "litestar": "Litestar bare handler (info)",
          "memory": "mgi serve, memory:",
          "sqlite": "mgi serve, sqlite (WAL, NORMAL)",
          "sqlite_quiet": "mgi serve, sqlite, --log-level warning",
          "sqlite_no_events": "mgi serve, sqlite, --events-days 0",
          "redis": "mgi serve, redis (AOF always)",
          "langgraph": "LangGraph + SqliteSaver (raw ASGI)"}
ORDER = ("floor", "litestar", "memory", "sqlite", "sqlite_quiet", "sqlite_no_events", "redis",
         "langgraph")
ONLY_AT_16 = ("sqlite_quiet",)  # measured at LOG_CONNECTIONS only
PAIRED = ("sqlite", "sqlite_no_events")  # events on and off: measured by `events_pair` too


def log(text: str = "") -> None:
    print(text, flush=True)


# --- the peer servers: ASGI apps, run by uvicorn in a child process ---------------------------

_MESSAGE = msgspec.json.Decoder(Message)
_CREATE = msgspec.json.Decoder(CreateSession)
_ENCODER = msgspec.json.Encoder()
_JSON = [(b"content-type", b"application/json")]


async def _read_body(receive) -> bytes:
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(parts)


async def _respond(send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": _JSON + [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _error(code: str, message: str) -> bytes:
    return _ENCODER.encode({"error": {"code": code, "message": message}})


class FloorAnswers:
    """The floor's answer: the service's answer to the load's turn (as `mgi serve` gave it,
    from a file), with this request's session id and a version: the same size, no turn."""

    def __init__(self, sample: bytes):
        answer = msgspec.json.decode(sample)
        self.turn = _ENCODER.encode(answer["turn"])
        self.version = answer["version"]

    def answer(self, session_id: str) -> bytes:
        return _ENCODER.encode({"session_id": session_id, "version": self.version,
                                "replayed": False, "turn": msgspec.Raw(self.turn)})

    def created(self, session_id: str) -> bytes:
        return _ENCODER.encode({"session_id": session_id, "scenario": SCENARIO,
                                "ir_hash": "", "version": 1, "turn": None})


class FloorApp:
    """uvicorn with a handler and no turn: the body decoded into the service's `Message`
    Struct (the same validation), the answer encoded like the service's (`msgspec.Raw` turn)."""

    def __init__(self, sample: bytes):
        self.answers = FloorAnswers(sample)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        if method == "POST" and path == MESSAGE_PATH:
            try:
                message = _MESSAGE.decode(await _read_body(receive))
            except msgspec.MsgspecError as error:
                return await _respond(send, 422, _error("invalid_request", str(error)))
            return await _respond(send, 200, self.answers.answer(message.session_id))
        if method == "POST" and path == SESSION_PATH:
            try:
                created = _CREATE.decode(await _read_body(receive))
            except msgspec.MsgspecError as error:
                return await _respond(send, 422, _error("invalid_request", str(error)))
            return await _respond(send, 201, self.answers.created(created.session_id))
        if method == "GET" and path == "/healthz":
            return await _respond(send, 200, b'{"status":"ok"}')
        await _respond(send, 404, _error("not_found", path))


def litestar_app(sample: bytes):
    """The same bare handler in Litestar: `Message` as the msgspec Struct body, the same
    bytes answered, `openapi_config=None` (no schema work)."""
    from litestar import Litestar, Response, get, post

    answers = FloorAnswers(sample)

    @post(MESSAGE_PATH, status_code=200)
    async def message(data: Message) -> Response:
        return Response(answers.answer(data.session_id), media_type="application/json")

    @post(SESSION_PATH, status_code=201)
    async def session(data: CreateSession) -> Response:
        return Response(answers.created(data.session_id), media_type="application/json")

    @get("/healthz")
    async def healthz() -> Response:
        return Response(b'{"status":"ok"}', media_type="application/json")

    return Litestar([message, session, healthz], openapi_config=None)


def langgraph_sqlite(path: str):
    """peers.LangGraphRouter's graph compiled with `SqliteSaver` on the file `path`, as its
    documentation opens it (`sqlite3.connect(path, check_same_thread=False)`, sqlite3's
    defaults; SqliteSaver's setup turns WAL on). (router, connection)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    connection = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(connection)
    saver.setup()
    router = peers.LangGraphRouter()
    router.checkpointer = saver
    router.graph = router.graph.builder.compile(checkpointer=saver)
    return router, connection


SYNCHRONOUS = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def durability_of(connection: sqlite3.Connection) -> str:
    mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
    level = connection.execute("PRAGMA synchronous").fetchone()[0]
    return f"journal_mode={mode.upper()}, synchronous={SYNCHRONOUS.get(level, level)}"


class LangGraphApp:
    """LangGraph behind the service's two endpoints: a session is a thread (its opening one
    `invoke`), a message one `invoke` (blocking the event loop, as SqliteSaver is
    synchronous: one worker serves one turn at a time, like the service's SQLite store)."""

    def __init__(self, path: str):
        self.router, self.connection = langgraph_sqlite(path)

    def turn(self, message: Message) -> tuple[int, bytes]:
        out = self.router.graph.invoke({"user": message.text, "nlu": message.nlu},
                                       self.router._config(message.session_id))
        turn = {"turn": out["session_turns"], "user": message.text, "node": out["handled"],
                "next_node": out["next"], "reason": out["reason"], "complete": out["complete"],
                "response": out["response"], "slots": out["slots"], "nlu": message.nlu}
        return 200, _ENCODER.encode({"session_id": message.session_id,
                                     "version": out["session_turns"], "replayed": False,
                                     "turn": turn})

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        try:
            if method == "POST" and path == MESSAGE_PATH:
                status, body = self.turn(_MESSAGE.decode(await _read_body(receive)))
                return await _respond(send, status, body)
            if method == "POST" and path == SESSION_PATH:
                created = _CREATE.decode(await _read_body(receive))
                config = self.router._config(created.session_id)
                if self.router.graph.get_state(config).values:
                    return await _respond(send, 409, _error("session_exists", path))
                self.router.start(created.session_id)
                return await _respond(send, 201, _ENCODER.encode(
                    {"session_id": created.session_id, "scenario": SCENARIO, "ir_hash": "",
                     "version": 1, "turn": None}))
        except msgspec.MsgspecError as error:
            return await _respond(send, 422, _error("invalid_request", str(error)))
        except Exception as error:  # noqa: BLE001 - a failed turn (a complete session): 500
            return await _respond(send, 500, _error("internal_error", repr(error)))
        if method == "GET" and path == "/healthz":
            return await _respond(send, 200, b'{"status":"ok"}')
        await _respond(send, 404, _error("not_found", path))


def serve_peer(kind: str, port: int, answer: str | None, db: str | None) -> None:
    """The child process of a peer server (`--serve KIND`)."""
    import uvicorn

    if kind == "floor":
        app = FloorApp(Path(answer).read_bytes())
    elif kind == "litestar":
        app = litestar_app(Path(answer).read_bytes())
    elif kind == "langgraph":
        app = LangGraphApp(db)
    else:
        raise SystemExit(f"unknown peer server {kind!r}")
    uvicorn.run(app, port=port, **UVICORN)


class PeerServer(ServiceServer):
    """A peer server in a child process (this file with `--serve KIND`), started, checked
    and stopped like `mgi serve` (tests/support/service_server.py: a free port, /healthz, SIGTERM)."""

    def __init__(self, kind: str, options: list[str]):
        super().__init__([], port=free_port())
        self.kind, self.options = kind, options

    def command(self) -> list[str]:
        return [sys.executable, str(Path(__file__)), "--serve", self.kind, "--port",
                str(self.port), *self.options]


# --- sessions and the load ----------------------------------------------------------------


class Connection:
    """One keep-alive connection answering raw bytes."""

    def __init__(self, port: int):
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        self.http.request(method, path, body=body, headers=headers)
        answer = self.http.getresponse()
        return answer.status, answer.read()

    def close(self) -> None:
        self.http.close()


def open_sessions(name: str, port: int, count: int) -> bytes:
    """Sessions b0..b(count-1) created through the API and walked to general_conversation,
    then one turn of the load each (checked to stay there); that turn's answer, as sent."""
    connection = Connection(port)
    checked = name not in ("floor", "litestar")
    try:
        for i in range(count):
            session_id = f"b{i}"
            status, body = connection.call("POST", SESSION_PATH, json.dumps(
                {"scenario": SCENARIO, "session_id": session_id}).encode())
            if status != 201:
                raise RuntimeError(f"{name}: creating {session_id} answered {status}: {body!r}")
            for text, nlu in PREFIX:
                status, body = connection.call("POST", MESSAGE_PATH, json.dumps(
                    {"session_id": session_id, "text": text, "nlu": nlu},
                    ensure_ascii=False).encode())
                if status != 200:
                    raise RuntimeError(f"{name}: a turn of {session_id} answered {status}: "
                                       f"{body!r}")
            status, sample = connection.call("POST", MESSAGE_PATH,
                                             (LOAD_BODY % session_id).encode())
            if status != 200:
                raise RuntimeError(f"{name}: the load's turn answered {status}: {sample!r}")
            turn = json.loads(sample)["turn"]
            if checked and (turn["complete"] or turn["next_node"] != STAYING_NODE
                            or not turn["reason"].startswith("stay")):
                raise RuntimeError(f"{name}: the load's turn does not stay in {STAYING_NODE}: "
                                   f"{turn}")
        return sample
    finally:
        connection.close()


def session_versions(port: int, count: int) -> int:
    """The sum of the versions of b0..b(count-1) (`GET /dm/v1/session/{id}`), each checked
    not complete."""
    connection = Connection(port)
    total = 0
    try:
        for i in range(count):
            status, body = connection.call("GET", f"/dm/v1/session/b{i}")
            view = json.loads(body)
            if status != 200 or view["complete"]:
                raise RuntimeError(f"session b{i}: {status} {body[:200]!r}")
            total += view["version"]
    finally:
        connection.close()
    return total


_UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def _ms(number: str, unit: str) -> float:
    return float(number) * _UNIT[unit]


def parse_wrk(text: str) -> dict:
    """The figures of `wrk --latency`'s report."""
    found = {}
    for q, number, unit in re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$", text,
                                      re.M):
        found[f"p{q}_ms"] = round(_ms(number, unit), 3)
    done = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", text)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if done is None or rate is None or "p50_ms" not in found:
        raise RuntimeError(f"cannot read wrk's report:\n{text}")
    found["requests"] = int(done.group(1))
    found["seconds"] = round(_ms(done.group(2), done.group(3)) / 1000, 3)
    found["requests_per_second"] = round(float(rate.group(1)), 1)
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    found["non_2xx"] = int(non_2xx.group(1)) if non_2xx else 0
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                        text)
    found["socket_errors"] = dict(zip(("connect", "read", "write", "timeout"),
                                      map(int, sockets.groups()))) if sockets else {}
    return found


def run_wrk(port: int, connections: int, seconds: int) -> dict:
    threads = min(WRK_THREADS, connections)
    command = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s",
               "--latency", "--timeout", "10s", "-s", str(LUA),
               f"http://127.0.0.1:{port}{MESSAGE_PATH}", "--", str(connections), str(threads),
               LOAD_TEXT]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr}{done.stdout}")
    figures = parse_wrk(done.stdout)
    figures["threads"] = threads
    return figures


def measure(name: str, server, connections: int, seconds: int) -> dict:
    """One wrk run; its errors (non-2xx, socket errors, turns lost) listed, and shouted."""
    mgi = name in ("memory", "sqlite", "sqlite_quiet", "sqlite_no_events", "redis")
    before = session_versions(server.port, connections) if mgi else None
    row = run_wrk(server.port, connections, seconds)
    row["connections"] = connections
    errors = []
    if row["non_2xx"]:
        errors.append(f"{row['non_2xx']} non-2xx answers")
    if any(row["socket_errors"].values()):
        errors.append(f"socket errors {row['socket_errors']}")
    if mgi:
        applied = session_versions(server.port, connections) - before
        row["turns_applied"] = applied
        if not row["requests"] <= applied <= row["requests"] + connections:
            errors.append(f"the server applied {applied} turns, wrk counted {row['requests']}")
    row["errors"] = errors
    if errors:
        log(f"!! {name} at {connections} connection(s) FAILED: {'; '.join(errors)}")
    return row


def stored_row_bytes(path: Path, session_id: str) -> int:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = connection.execute("SELECT length(data) FROM sessions WHERE id = ?",
                                 (session_id,)).fetchone()
    finally:
        connection.close()
    if row is None:
        raise RuntimeError(f"no session {session_id} in {path}")
    return row[0]


def http_section(cfg: dict, tmp: Path, ir_dir: Path) -> dict:
    from support.redis_server import RedisServer, redis_binary

    seconds, warmup, count = cfg["service_seconds"], cfg["service_warmup"], max(CONNECTIONS)
    servers: dict = {}
    redis = None
    skipped = {}
    try:
        servers["memory"] = ServiceServer([ir_dir], store="memory:").start()
        servers["sqlite"] = ServiceServer([ir_dir], store=f"sqlite:{tmp / 'sessions.db'}").start()
        servers["sqlite_quiet"] = ServiceServer(
            [ir_dir], store=f"sqlite:{tmp / 'sessions-quiet.db'}",
            extra=["--log-level", "warning"]).start()
        servers["sqlite_no_events"] = ServiceServer(  # analytics off: what events cost
            [ir_dir], store=f"sqlite:{tmp / 'sessions-no-events.db'}",
            extra=["--events-days", "0"]).start()
        if redis_binary() is not None:
            redis = RedisServer().start()
            servers["redis"] = ServiceServer([ir_dir], store=redis.url).start()
        else:
            skipped["redis"] = "redis-server is not installed (apt-get install redis-server)"
        samples = {name: open_sessions(name, s.port, count) for name, s in servers.items()}
        answer = tmp / "answer.json"
        answer.write_bytes(samples["sqlite"])
        servers["floor"] = PeerServer("floor", ["--answer", str(answer)]).start()
        servers["litestar"] = PeerServer("litestar", ["--answer", str(answer)]).start()
        servers["langgraph"] = PeerServer(
            "langgraph", ["--db", str(tmp / "langgraph.db")]).start(timeout=120)
        for name in ("floor", "litestar", "langgraph"):
            samples[name] = open_sessions(name, servers[name].port, count)
        order = [name for name in ORDER if name in servers]
        log(f"sessions b0..b{count - 1} open on every server; answers of the load's turn: "
            + ", ".join(f"{name} {len(samples[name])} B" for name in order))
        for name in order:  # warm-up, not kept
            measure(name, servers[name], LOG_CONNECTIONS, warmup)
        rows: dict = {name: {} for name in order}
        for connections in CONNECTIONS:
            for name in order:
                if name in ONLY_AT_16 and connections != LOG_CONNECTIONS:
                    continue
                rows[name][str(connections)] = measure(name, servers[name], connections, seconds)
        guard = guard_rounds(servers, rows, seconds, cfg["service_guard_rounds"])
        rows["sqlite_no_events"] = {}
        events = events_pair(servers, LOG_CONNECTIONS, seconds, cfg["service_rounds"])
        rows["sqlite_no_events"][str(LOG_CONNECTIONS)] = events.pop("off_row")
        long_turns = session_versions(servers["sqlite"].port, 1) - 1  # the opening is 1
        long_bytes = stored_row_bytes(tmp / "sessions.db", "b0")
        durability = {"langgraph": lg_durability(tmp / "langgraph.db")}
    finally:
        for server in reversed(list(servers.values())):
            try:
                server.stop()
            finally:
                server.kill()
        if redis is not None:
            redis.stop()
    return {"seconds_per_run": seconds, "warmup_seconds": warmup, "connections": CONNECTIONS,
            "wrk_threads": WRK_THREADS, "log_level": "info (default) unless sqlite_quiet",
            "labels": {name: LABELS[name] for name in order}, "rows": rows,
            "answer_bytes": {name: len(samples[name]) for name in order},
            "skipped": skipped, "long_session_stored_bytes": long_bytes,
            "long_session_user_turns": long_turns,
            "durability": durability, "events_cost": events, "guard": guard}


GUARDED = ("memory", "sqlite", "redis")  # the stores budget.json holds to the floor
GUARDED_AT = (16, 64)


def guard_rounds(servers: dict, rows: dict, seconds: int, rounds: int) -> dict:
    """The guarded ratios (each store's requests per second over the floor's, `GUARDED_AT`
    connections) of `rounds` rounds: the first is the main runs' (`rows`), each further one
    runs the floor and the stores again, in turn, the order reversed every other round, so
    that load that comes and goes weighs on the floor and the stores alike. `median`: the
    figure the guard reads (one short run swung 11-26% between CI runs; the median of three
    adjacent pairs moves less)."""
    names = [name for name in ("floor", *GUARDED) if name in servers]
    ratios: dict = {name: {str(c): [] for c in GUARDED_AT} for name in names[1:]}

    def add(found: dict, c: int) -> None:
        for name in names[1:]:
            ratios[name][str(c)].append(round(found[name] / found["floor"], 4))
    for c in GUARDED_AT:
        add({name: rows[name][str(c)]["requests_per_second"] for name in names}, c)
    for number in range(1, rounds):
        for c in GUARDED_AT:
            order = names if number % 2 == 0 else names[::-1]
            add({name: measure(name, servers[name], c, seconds)["requests_per_second"]
                 for name in order}, c)
    return {"rounds": rounds, "ratios": ratios,
            "median": {name: {c: statistics.median(values) for c, values in by_c.items()}
                       for name, by_c in ratios.items()}}


def print_guard(guard: dict) -> None:
    cells = [f"{name} {c}c {statistics.median(values):.0%} "
             f"({', '.join(f'{v:.0%}' for v in values)})"
             for name, by_c in guard["ratios"].items() for c, values in by_c.items()]
    log(f"the guarded ratios to the floor, median of {guard['rounds']} alternating rounds: "
        + "; ".join(cells))


def events_pair(servers: dict, connections: int, seconds: int, pairs: int) -> dict:
    """What analytics events cost (issue 28: on within 10% of off): `sqlite` (events on, the
    default) and `sqlite_no_events` (`--events-days 0`) at `connections`, in runs of
    `seconds` in the order on off off on on off ..., so that a load on the machine that
    rises or falls during the runs weighs on both alike; the medians and their ratio."""
    on, off = PAIRED
    rates: dict[str, list[float]] = {on: [], off: []}
    rows: dict[str, list[dict]] = {on: [], off: []}
    loads = []
    for number in range(2 * pairs):
        name = (on, off)[(number + number // 2) % 2]  # A B B A A B ...
        row = measure(name, servers[name], connections, seconds)
        rows[name].append(row)
        rates[name].append(row["requests_per_second"])
        loads.append(os.getloadavg()[0])
    medians = {name: statistics.median(values) for name, values in rates.items()}
    middle = sorted(rows[off], key=lambda row: row["requests_per_second"])[len(rows[off]) // 2]
    return {"connections": connections, "seconds_per_run": seconds, "runs": rates,
            "on_median": medians[on], "off_median": medians[off],
            "on_over_off": round(medians[on] / medians[off], 3),
            "load_average": [round(min(loads), 1), round(max(loads), 1)],
            "errors": [e for name in PAIRED for row in rows[name] for e in row["errors"]],
            "off_row": middle}


def print_events_pair(events: dict) -> None:
    ratio = events["on_over_off"]
    log(f"analytics events at {events['connections']} connections, sqlite, "
        f"{len(events['runs']['sqlite'])} runs each of {events['seconds_per_run']} s in the "
        f"order on off off on ...: on {events['on_median']:,.0f} req/s "
        f"({', '.join(f'{r:,.0f}' for r in events['runs']['sqlite'])}), off "
        f"{events['off_median']:,.0f} req/s "
        f"({', '.join(f'{r:,.0f}' for r in events['runs']['sqlite_no_events'])}): on / off "
        f"= {ratio:.3f} ({ratio - 1:+.1%}; target >= -10%: "
        f"{'ok' if ratio >= 0.9 else 'MISSED'}); load average "
        f"{events['load_average'][0]}-{events['load_average'][1]}")


def lg_durability(path: Path) -> str:
    connection = sqlite3.connect(path)
    try:
        return durability_of(connection)
    finally:
        connection.close()


# --- the durable turn in process ------------------------------------------------------------


class ServiceTurns:
    """mgi's durable turn without HTTP: the service's `Sessions` (as `mgi serve` builds it:
    its plug-ins, registry and metrics) on a SQLite record store, on one asyncio loop."""

    def __init__(self, name: str, loop, ir_dir: Path, url: str):
        from interpreter.service.app import ServeConfig, make_plugins
        from interpreter.service.logs import RequestLog
        from interpreter.service.metrics import Metrics
        from interpreter.service.registry import Registry, load_scenarios
        from interpreter.service.sessions import Sessions
        from interpreter.stores.records import open_store

        self.name, self.loop = name, loop
        config = ServeConfig(paths=[str(ir_dir)], store=url)
        scenarios = load_scenarios(config.paths)
        self.runtime = scenarios[SCENARIO].runtime
        self.store = open_store(url, config.ttl)
        registry = Registry(scenarios, self.store)
        loop.run_until_complete(registry.publish())
        metrics = Metrics()

        def on_turn(scenario: str, session_id: str, result, seconds: float) -> None:  # as ServiceApp
            metrics.turn(scenario, result.reason, seconds, result.nlu_source)

        self.sessions = Sessions(self.store, registry,
                                 make_plugins(config, RequestLog("warning")), on_turn)
        fast = getattr(self.store, "_fast", None)  # the store's connection on the event loop
        self.durability = durability_of(fast) if fast is not None else \
            f"journal_mode=WAL, synchronous={self.store.synchronous.upper()} (as configured)"

    def start(self, session_id: str) -> str:
        answer = self.loop.run_until_complete(self.sessions.create(
            self.runtime, SCENARIO, CreateSession(scenario=SCENARIO, session_id=session_id)))
        return answer["turn"]["response"] if answer["turn"] is not None else None

    def turn(self, session_id: str, text: str, nlu: dict | None) -> tuple:
        answer = self.loop.run_until_complete(
            self.sessions.message(Message(session_id=session_id, text=text, nlu=nlu), {}))
        t = msgspec.json.decode(answer)["turn"]
        return t["node"], t["next_node"], t["reason"], t["complete"], t["response"]

    def time_sessions(self, count: int, prefix: str, samples: list) -> None:
        self.loop.run_until_complete(self._timed(count, prefix, samples))

    async def _timed(self, count: int, prefix: str, samples: list) -> None:
        clock, message, create = time.perf_counter_ns, self.sessions.message, self.sessions.create
        for k in range(count):
            for script_name, script in peers.SCRIPTS.items():
                session_id = f"{prefix}-{k}-{script_name}"
                await create(self.runtime, SCENARIO,
                             CreateSession(scenario=SCENARIO, session_id=session_id))
                for text, nlu in script:
                    request = Message(session_id=session_id, text=text, nlu=nlu)
                    start = clock()
                    await message(request, {})
                    samples.append(clock() - start)

    def close(self) -> None:
        self.loop.run_until_complete(self.store.close())


class Timed:
    """`time_sessions` into one flat list, for runners with a plain `start` and `turn`."""

    def time_sessions(self, count: int, prefix: str, samples: list) -> None:
        by_script: dict[str, list[int]] = {name: [] for name in peers.SCRIPTS}
        peers.time_sessions(self, count, prefix, by_script)
        for values in by_script.values():
            samples.extend(values)


class EngineTurns(Timed, peers.EngineRunner):
    """mgi's engine with its own `SessionStore` on SQLite (`SQLiteSessionStore`: a get and a
    compare-and-set per turn, committed before the turn returns): the durable turn the
    issue compares with LangGraph's."""

    name = "mgi"

    def __init__(self, runtime, path: Path, synchronous: str = "normal"):
        from interpreter.stores.sqlite_store import SQLiteSessionStore

        super().__init__(runtime, SQLiteSessionStore(str(path), synchronous=synchronous))
        self.durability = durability_of(self.store._conn)

    def close(self) -> None:
        self.store.close()


class LangGraphTurns(Timed):
    """LangGraph's `invoke` with SqliteSaver on a file, one per user turn."""

    name = "langgraph"

    def __init__(self, path: Path):
        self.router, self.connection = langgraph_sqlite(str(path))
        self.durability = (durability_of(self.connection)
                           + ", invoke durability='async' (LangGraph's default; invoke returns "
                             "once its checkpoint is committed)")

    def start(self, session_id: str) -> str:
        return self.router.start(session_id)

    def turn(self, session_id: str, text: str, nlu: dict | None) -> tuple:
        return self.router.turn(session_id, text, nlu)

    def stored_bytes(self, session_id: str) -> int:
        one = self.connection.execute(
            "SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0) FROM checkpoints "
            "WHERE thread_id = ?", (session_id,)).fetchone()[0]
        two = self.connection.execute(
            "SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?",
            (session_id,)).fetchone()[0]
        return one + two

    def close(self) -> None:
        self.connection.close()


def in_process(cfg: dict, tmp: Path, ir_dir: Path) -> dict:
    loop = asyncio.new_event_loop()
    runners = {}
    try:
        runners["mgi_service"] = ServiceTurns("mgi_service", loop, ir_dir,
                                              f"sqlite:{tmp / 'inproc.db'}")
        runtime = runners["mgi_service"].runtime
        runners["mgi"] = EngineTurns(runtime, tmp / "inproc-engine.db")
        runners["mgi_full"] = EngineTurns(runtime, tmp / "inproc-full.db", "full")
        runners["langgraph"] = LangGraphTurns(tmp / "inproc-langgraph.db")
        problems = peers.check_same([runners["mgi"], runners["mgi_service"],
                                     runners["langgraph"]])
        if problems:
            raise RuntimeError("mgi's turns and LangGraph's differ:\n" + "\n".join(problems))
        counts = {"mgi": cfg["service_sessions"], "mgi_service": cfg["service_sessions"],
                  "mgi_full": cfg["service_sessions"],
                  "langgraph": cfg["service_langgraph_sessions"]}
        for name, runner in runners.items():  # warm-up, not kept
            runner.time_sessions(max(1, counts[name] // 4), f"warm-{name}", [])
        samples = {name: [] for name in runners}
        by_round = {name: [] for name in runners}
        order = list(runners)
        for r in range(cfg["service_rounds"]):
            for name in order[r % len(order):] + order[:r % len(order)]:
                gc.collect()
                this_round: list = []
                runners[name].time_sessions(counts[name], f"r{r}", this_round)
                samples[name].extend(this_round)
                by_round[name].append(statistics.median(this_round))
        figures = {}
        for name, values in samples.items():
            ordered = sorted(values)
            figures[name] = {"durability": runners[name].durability,
                             "turns_timed": len(ordered),
                             "median_us": round(statistics.median(ordered) / 1000, 2),
                             "p90_us": round(peers.percentile(ordered, 0.9) / 1000, 2)}
        base = figures["mgi"]["median_us"]
        for name, f in figures.items():
            f["vs_mgi"] = round(f["median_us"] / base, 2)
            spread = sorted(a / b for a, b in zip(by_round[name], by_round["mgi"]))
            f["vs_mgi_by_round"] = {"min": round(spread[0], 2), "max": round(spread[-1], 2)}
        # the stored session: a new one after STORED_AFTER user turns, its row read back
        for name in ("mgi_service", "langgraph"):
            runners[name].start("stored")
            for text, nlu in peers.FULL_WALK[:STORED_AFTER]:
                runners[name].turn("stored", text, nlu)
        stored = {"user_turns": STORED_AFTER,
                  "mgi_bytes": stored_row_bytes(tmp / "inproc.db", "stored"),
                  "langgraph_bytes": runners["langgraph"].stored_bytes("stored")}
    finally:
        for runner in runners.values():
            runner.close()
        loop.close()
    return {"rounds": cfg["service_rounds"], "runners": figures, "stored_session": stored}


# --- the section -------------------------------------------------------------------------


def check_tools() -> None:
    """wrk and LangGraph's SqliteSaver must be there before anything runs."""
    if shutil.which("wrk") is None:
        raise SystemExit("the service benchmark needs wrk: `make bench` installs it "
                         "(apt-get install -y wrk)")
    try:
        import langgraph.checkpoint.sqlite  # noqa: F401
        import litestar  # noqa: F401
    except ImportError as error:
        raise SystemExit(f"the service benchmark needs the bench extra ({error.name}): "
                         ".venv/bin/pip install -e '.[dev,bench]'") from None


def run(cfg: dict) -> dict:
    check_tools()
    log(f"== 5. service: HTTP turns under wrk ({cfg['service_seconds']} s per run, "
        f"{', '.join(map(str, CONNECTIONS))} connections), then the durable turn in process ==")
    tmp = Path(tempfile.mkdtemp(prefix="mago-service-bench-"))
    wrk = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
    try:
        ir_dir = compile_irs(tmp / "ir", (SCENARIO,))
        result = {"wrk": (wrk.stdout or wrk.stderr).split(" Copyright")[0].strip(),
                  "http": http_section(cfg, tmp, ir_dir)}
        print_http(result["http"])
        print_guard(result["http"]["guard"])
        print_events_pair(result["http"]["events_cost"])
        result["in_process"] = in_process(cfg, tmp, ir_dir)
        print_in_process(result["in_process"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log()
    return result


def print_http(figures: dict) -> None:
    rows = figures["rows"]
    floor = rows["floor"]

    def rps(name: str, c: int):
        row = rows[name].get(str(c))
        return row["requests_per_second"] if row else None

    log(f"{'server':42} {'p50 1c':>8} {'p99 1c':>8} {'req/s 1c':>9} {'req/s 16c':>10} "
        f"{'req/s 64c':>10} {'x floor: 1c':>11} {'16c':>6} {'64c':>6}  errors")
    for name, label in figures["labels"].items():
        one = rows[name].get("1")
        cells = [f"{one['p50_ms']:.2f}ms", f"{one['p99_ms']:.2f}ms"] if one else ["-", "-"]
        cells = [f"{c:>8}" for c in cells]
        for c, width in zip(CONNECTIONS, (9, 10, 10)):
            value = rps(name, c)
            cells.append(f"{value:>{width},.0f}" if value else f"{'-':>{width}}")
        for c, width in zip(CONNECTIONS, (11, 6, 6)):
            value = rps(name, c)
            cells.append(f"{value / floor[str(c)]['requests_per_second']:>{width}.0%}"
                         if value else f"{'-':>{width}}")
        errors = [e for row in rows[name].values() for e in row["errors"]]
        log(f"{label:42} {' '.join(cells)}  {'FAILED: ' + '; '.join(errors) if errors else 0}")
    for name, why in figures["skipped"].items():
        log(f"{LABELS[name]:42} skipped: {why}")
    log(f"(wrk --latency, {figures['seconds_per_run']} s per run after a "
        f"{figures['warmup_seconds']} s warm-up, {WRK_THREADS} threads; one uvicorn worker "
        "each, uvloop + httptools; mgi serve at the default log level (info: one JSON line per "
        "request into a file) but the --log-level warning row; LangGraph's file: "
        f"{figures['durability']['langgraph']}; session b0's stored row after "
        f"{figures['long_session_user_turns']:,} user turns: "
        f"{figures['long_session_stored_bytes']:,} B)")


def print_in_process(figures: dict) -> None:
    labels = {"mgi": "mgi engine, SQLiteSessionStore",
              "mgi_service": "mgi Sessions.message, SQLite (info)",
              "mgi_full": "mgi engine, synchronous=full (info)",
              "langgraph": "LangGraph invoke + SqliteSaver"}
    log(f"durable turn in process, {figures['rounds']} rounds:")
    log(f"  {'runner':38} {'median us':>10} {'p90 us':>9} {'turns':>7} {'x mgi':>8}  "
        f"{'by round':>12}  durability")
    for name, f in figures["runners"].items():
        spread = f["vs_mgi_by_round"]
        log(f"  {labels[name]:38} {f['median_us']:>10.1f} {f['p90_us']:>9.1f} "
            f"{f['turns_timed']:>7} {f['vs_mgi']:>8.1f}  "
            f"{spread['min']:>5.1f}-{spread['max']:<6.1f}  {f['durability']}")
    stored = figures["stored_session"]
    log(f"stored session after {stored['user_turns']} user turns: mgi {stored['mgi_bytes']:,} B "
        f"(its row in the SQLite file), LangGraph {stored['langgraph_bytes']:,} B (checkpoints "
        "and writes of its thread)")


# service_guard_rounds: rounds of the guarded ratios (`guard_rounds`); the full run's 5 s
# runs swing less than the quick run's 1 s ones, so only the quick run adds rounds.
FULL = {"service_seconds": 5, "service_warmup": 2, "service_rounds": 5,
        "service_sessions": 40, "service_langgraph_sessions": 4, "service_guard_rounds": 1}
QUICK = {"service_seconds": 1, "service_warmup": 1, "service_rounds": 2,
         "service_sessions": 10, "service_langgraph_sessions": 1, "service_guard_rounds": 3}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 s runs, few turns")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # a peer server's child process
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--answer", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve_peer(args.serve, args.port, args.answer, args.db)
        return
    print(json.dumps(run(QUICK if args.quick else FULL), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1:])
