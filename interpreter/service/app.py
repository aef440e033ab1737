"""The ASGI application: the endpoints of SPEC 11 over `sessions`, `design` and the store.

In: a `ServeConfig` (from `mgi serve`, through the environment to every worker). Out: an
ASGI callable for uvicorn: HTTP requests, and the lifespan (open the store and publish the
registered IRs at start-up, sweep expired sessions, close the store at shutdown).
After: every answer is JSON with the status of the table, every failure the envelope of
`http.error_body` (a handler's `ApiError`, 503 `store_unavailable` when the store does not
answer, 500 `internal_error` for a bug, its traceback only in the log); one log line per
request; the refusals of `guards` come first (SPEC 17.5: Host, key, media type), and the
quotas of `quotas` before a session is created; with `MAGO_API_KEY` set every endpoint but
`/healthz`, `/readyz` and the playground's static files wants `Authorization: Bearer KEY`
(compared in constant time, never logged). The playground (SPEC 12) is a page like any client: it holds no data and no key (a
browser cannot send a header when it opens a URL), and asks for the key to call the API.
"""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import os
import re
import threading
import time
import traceback
from functools import lru_cache, partial
from typing import Any

import msgspec

from .. import MagoError, __version__
from ..graph import RENDERERS
from ..ir import SAFETY_REASON
from ..loader import Runtime
from ..stores.records import RecordStore, StoreError, open_store
from ..understanding.morph import load_for as load_analysers
from . import api
from .alerts import Alerts
from .connections import GuardedProtocol, Limits
from .design import Designer, source_text
from .guards import PREFLIGHT_HEADERS, Guards, allowed_hosts
from .http import (JSON_HEADERS, ApiError, Request, Route, Router, encode, error_body,
                   read_body)
from .logs import RequestLog, stamp
from .metrics import CONTENT_TYPE, Metrics
from .openapi import document
from .playground import Asset, load_assets
from .quotas import ClientAddress, CreationRate, SessionCap, trusted_proxies
from .registry import MissingIR, Registry, load_scenarios
from .sessions import Plugins, Sessions
from .report import report_answer
from .webhooks import guard_for, refuse_posted, warm_up, with_refusals

CONFIG_ENV = "MAGO_SERVE_CONFIG"
API_KEY_ENV = "MAGO_API_KEY"
READY_EVERY = 1.0  # /readyz asks the store at most this often
PUBLIC = frozenset(("/healthz", "/readyz"))  # answered without the API key (and the page)
TEXT_HEADERS = [(b"content-type", b"text/plain; charset=utf-8")]
IR_HASH = re.compile(r"[0-9a-f]{64}")
ALERT_DRAIN_SECONDS = 1.0  # at shutdown, how long alerts in flight may still be sent
# The answer to a request still running when the grace period ends (uvicorn cancels it, and
# would answer a plain-text 500): the envelope, and the connection closed after it. A turn
# may have been saved just before, so the client is told to resend it with its message_id.
STOPPED_BODY = error_body("busy", "the server stopped before this request finished; resend "
                                  "it (with the same message_id, a turn is not applied twice)")
STOPPED_HEADERS = [(b"content-type", b"application/json"), (b"connection", b"close"),
                   (b"retry-after", b"1")]
INLINE_LABEL = "(inline)"  # the metric label of every scenario posted to /session/json
EXIT_SECONDS = 1.5  # after the grace period (8 s), the rest of the shutdown: SIGTERM ends in 10 s
CLIENT_GONE = 499  # the log's status of a request whose client left before its answer


class ClientGone(MagoError):
    """The client closed its connection while its request was worked on."""


class ServeConfig(msgspec.Struct, kw_only=True):
    paths: list[str]
    store: str
    ttl: float = 86400
    nlu: str = "rules"
    nlg: str = "template"
    llm: dict[str, Any] | None = None  # the raw --llm-* options, read again in each worker
    dynamic: bool = True
    alert_url: str | None = None
    log_level: str = "info"
    events_days: int = 30  # analytics (SPEC 16): 0 records no events
    keep_unmatched: bool = False
    events_cap: int = 1_000_000  # a Redis day stream's length cap
    public_report: bool = False  # GET /dm/v1/report without MAGO_API_KEY
    limits: Limits = Limits()
    compile_seconds: float = 5.0
    compile_queue: int = 4
    store_timeout: float = 2.0
    rate: int = 600
    max_sessions: int = 1_000_000
    inline_cache: int = 64
    forwarded_allow_ips: str = ""
    host: str = "127.0.0.1"  # the bound address: allowed in Host by default
    allowed_hosts: str | None = None
    cors_origin: str | None = None
    allow_api_webhooks: bool = False  # SPEC 15, 17.9 (service.webhooks)


def from_environment() -> ServiceApp:
    """uvicorn's factory in each worker: the config `mgi serve` put in the environment."""
    config = msgspec.json.decode(os.environ[CONFIG_ENV], type=ServeConfig)
    faulthandler.enable()  # a fatal signal (a bus error in a driver) leaves a line on stderr
    GuardedProtocol.configure(config.limits)  # before this worker accepts a connection
    return ServiceApp(config)


def make_plugins(config: ServeConfig, log: RequestLog,
                 started: frozenset[str] = frozenset()) -> Plugins:
    from ..cli.plugins import LazyRulesNLU, skill_registry
    from ..wording.nlg import TemplateNLG

    client = None
    if config.llm is not None:
        from ..llm.client import ChatClient, settings_from

        client = ChatClient(settings_from(**config.llm))

    def make(runtime: Any) -> tuple[Any, Any, Any]:
        """In a thread (`Plugins.ready`): the rules NLU is built here, not on a first turn."""
        from ..understanding.rules import RulesNLU

        nlu = LazyRulesNLU(runtime.program)
        nlu._nlu = RulesNLU(runtime.program)  # its patterns prepared now, off the loop
        if config.nlu == "llm":
            from ..llm.nlu import LLMNLU

            nlu = LLMNLU(client, runtime.program, nlu)
        nlg = TemplateNLG()
        if config.nlg == "llm":
            from ..llm.nlg import LLMNLG

            nlg = LLMNLG(client)
        return nlu, nlg, skill_registry(runtime, lambda line: log.event("warning", line),
                                        "live", guard_for(runtime, started))

    return Plugins(make, blocking=client is not None)


class ServiceApp:
    def __init__(self, config: ServeConfig):
        self.config = config
        self.log = RequestLog(config.log_level)
        self.metrics = Metrics()
        self.scenarios = load_scenarios(config.paths)
        key = os.environ.get(API_KEY_ENV)
        self.api_key = key.strip().encode() if key else None
        self.plugins = make_plugins(config, self.log, frozenset(
            s.runtime.ir_hash for s in self.scenarios.values()))
        self.designer = Designer(config.compile_seconds, config.compile_queue,
                                 config.inline_cache)
        self.clients = ClientAddress(trusted_proxies(config.forwarded_allow_ips))
        self.rate = CreationRate(config.rate)
        self.cap: SessionCap | None = None
        self.alerts = Alerts(config.alert_url, self.alert_result) if config.alert_url else None
        self.store: RecordStore | None = None
        self.registry: Registry | None = None
        self.sessions: Sessions | None = None
        self._sweeper: asyncio.Task | None = None
        self._ready = (float("-inf"), False)  # when /readyz last asked the store, and its answer
        self._openapi = encode(document(__version__, keyed=self.api_key is not None))
        self.assets = load_assets()
        self.public = PUBLIC | frozenset(self.assets)
        self.guards = Guards(self.api_key, self.public,
                             allowed_hosts(config.allowed_hosts, config.host),
                             config.cors_origin)
        self.router = self._routes()

    def _routes(self) -> Router:
        router, small, large = Router(), api.BODY_LIMIT, api.SCENARIO_BODY_LIMIT
        for method, path, handler, limit in (
                ("POST", "/dm/v1/session", self.create_session, small),
                ("POST", "/dm/v1/session/json", self.create_from_scenario, large),
                ("POST", "/dm/v1/message", self.message, small),
                ("POST", "/dm/v1/session/validate", self.validate, large),
                ("GET", "/dm/v1/session/{session_id}", self.get_session, 0),
                ("DELETE", "/dm/v1/session/{session_id}", self.delete_session, 0),
                ("GET", "/dm/v1/scenarios", self.list_scenarios, 0),
                ("GET", "/dm/v1/scenarios/{name}/graph", self.scenario_graph, 0),
                ("GET", "/healthz", self.healthz, 0),  # PUBLIC
                ("GET", "/readyz", self.readyz, 0),
                ("GET", "/metrics", self.metrics_text, 0),
                ("GET", "/openapi.json", self.openapi, 0),
                ("GET", "/dm/v1/report", partial(report_answer, self), 0)):  # SPEC 16
            router.add(method, path, Route(handler, limit))
        for path, asset in self.assets.items():  # in `self.public`
            router.add("GET", path, Route(partial(self.playground_file, asset), 0))
        return router

    # --- ASGI -----------------------------------------------------------------------------

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await self.http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self.lifespan(receive, send)

    async def http(self, scope: dict, receive: Any, send: Any) -> None:
        started = time.perf_counter()
        request = Request(scope)
        headers = JSON_HEADERS
        try:
            if self.guards.preflight(request):
                status, body, headers = 204, b"", PREFLIGHT_HEADERS
            else:
                self.guards.before_routing(request)  # 400, 421, 401: before any path is told
                route = self.router.find(request)
                if route.limit:  # the POST routes
                    self.guards.json_body(request)
                    request.body = await read_body(request, receive, route.limit)
                if route.limit == api.SCENARIO_BODY_LIMIT:  # a compile: not for nobody
                    status, body, headers = await unless_gone(route.handler(request), receive)
                else:
                    status, body, headers = await route.handler(request)
        except ClientGone:
            self.log.request(request.method, request.path, CLIENT_GONE,
                             time.perf_counter() - started, request.note)
            return
        except ApiError as error:
            status, body, headers = error.status, error.body(), JSON_HEADERS + error.headers
        except StoreError as error:
            self.metrics.store_errors.inc()
            self.log.event("error", "the session store did not answer", error=str(error))
            status, body = 503, error_body("store_unavailable", "the session store did not "
                                                                "answer; retry shortly")
        except Exception as error:  # noqa: BLE001 - a bug: logged, never shown to the client
            self.log.event("error", "internal error", error=f"{type(error).__name__}: {error}",
                           traceback=traceback.format_exc())
            status, body = 500, error_body("internal_error", "the server failed on this "
                                                             "request; it is logged")
        except asyncio.CancelledError:  # the grace period is over (SPEC 17.4): uvicorn
            status, body, headers = 503, STOPPED_BODY, STOPPED_HEADERS  # would say 500
        headers = headers + self.guards.answer_headers(request, request.path in self.assets)
        await send({"type": "http.response.start", "status": status,
                    "headers": headers + [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
        self.log.request(request.method, request.path, status, time.perf_counter() - started,
                         request.note)

    async def lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except (StoreError, ValueError) as error:
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def start(self) -> None:
        self.store = open_store(self.config.store, self.config.ttl, self.config.store_timeout)
        self.registry = Registry(self.scenarios, self.store, self.config.inline_cache,
                                 self.config.ttl)
        self.cap = SessionCap(self.config.max_sessions, self.store.count)
        await self.registry.publish()
        self.sessions = Sessions(self.store, self.registry, self.plugins, self.on_turn,
                                 recorder=self._recorder())
        await asyncio.to_thread(warm_up, self.scenarios.values(), self.sessions.executor,
                                self.plugins.blocking)
        await asyncio.to_thread(load_analysers, [s.runtime.program for s in self.scenarios.values()])
        # What starting made (modules, IRs, analysers) lives as long as the process: frozen out
        # of the collector's reach, a full collection during a burst of turns scans only what
        # the turns made. Measured during 64 webhook turns at once: 40-165 ms pauses (every
        # thread, /healthz too) before, 2-3 ms after (docs/guides/webhooks.md).
        gc.collect()
        gc.freeze()
        self._sweeper = asyncio.create_task(self.sweep_forever())

    def _recorder(self) -> Any:
        """The analytics recorder (None with --events-days 0); a Redis store is told the
        retention and the cap of its day streams."""
        if self.config.events_days <= 0:
            return None
        from ..analytics.recorder import Recorder

        if hasattr(self.store, "events_cap"):
            self.store.events_days, self.store.events_cap = (self.config.events_days,
                                                             self.config.events_cap)
        return Recorder(self.config.keep_unmatched)

    async def stop(self) -> None:
        """SPEC 17.4: after the grace period, whatever still runs (a compile, an alert, a
        thread on the network) gets `EXIT_SECONDS` before the process exits 0 anyway."""
        exit_anyway = threading.Timer(EXIT_SECONDS, self._exit_now)
        exit_anyway.daemon = True
        exit_anyway.start()
        self.designer.close()  # a compile in flight is killed, never waited for
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self.sessions is not None:
            self.sessions.executor.close()
        if self.alerts is not None:
            await self.alerts.drain(ALERT_DRAIN_SECONDS)
        if self.store is not None:
            await self.store.close()
        self.log.flush()

    def _exit_now(self) -> None:
        self.log.event("warning", "shutdown took too long; exiting without waiting further")
        self.log.flush()
        os._exit(0)

    async def sweep_forever(self) -> None:
        pause = min(60.0, max(1.0, self.config.ttl / 2))
        while True:
            await asyncio.sleep(pause)
            try:
                await self.store.sweep(time.time())
                await self.store.expire_irs(time.time())  # IRs no live session uses
                if self.config.events_days > 0:
                    await self.store.expire_events(time.time() - self.config.events_days * 86400)
            except StoreError as error:
                self.metrics.store_errors.inc()
                self.log.event("warning", "cannot sweep expired sessions", error=str(error))

    def label(self, scenario: str) -> str:
        """SPEC 11.1: metric labels name registered scenarios only (bounded)."""
        return scenario if scenario in self.scenarios else INLINE_LABEL

    def on_turn(self, scenario: str, session_id: str, result: Any, seconds: float) -> None:
        scenario = self.label(scenario)
        self.metrics.turn(scenario, result.reason, seconds, result.nlu_source)
        if result.reason.startswith(SAFETY_REASON):
            self.safety_event(scenario, session_id, result)

    def safety_event(self, scenario: str, session_id: str, result: Any) -> None:
        """SPEC 10: a warning line with the session and the category (never the text), and
        the POST to --alert-url in the background."""
        category = result.reason.removeprefix(SAFETY_REASON)
        self.metrics.safety.labels(self.label(scenario), category).inc()
        event = {"event": "safety", "category": category,
                 "session_id": session_id, "scenario": scenario, "node": result.node,
                 "next_node": result.next_node, "time": stamp(time.time())}
        self.log.event("warning", "safety event", **{k: v for k, v in event.items()
                                                     if k not in ("event", "time")})
        if self.alerts is not None:
            self.alerts.send(event)

    def alert_result(self, outcome: str, event: dict) -> None:
        self.metrics.alerts.labels(outcome).inc()
        if outcome == "failed":
            self.log.event("warning", "safety alert not delivered", url=self.alerts.url,
                           session_id=event["session_id"], category=event["category"],
                           error=event["error"])

    # --- endpoints ------------------------------------------------------------------------

    async def admit(self, request: Request, scope: dict) -> None:
        """SPEC 11.1 quotas of a session creation: per client a minute, then the store."""
        wait = self.rate.retry_after(self.clients.of(scope, request.headers))
        if wait:
            raise ApiError(429, "rate_limited", f"this client created {self.config.rate} "
                                                f"sessions this minute; retry in {wait} s",
                           headers=[(b"retry-after", str(wait).encode())])
        if not await self.cap.room():
            raise ApiError(503, "store_full", f"the store holds {self.config.max_sessions} "
                                              "live sessions (--max-sessions); retry later")

    async def create_session(self, request: Request) -> tuple:
        body = decode(request, api.CreateSession)
        await self.admit(request, request.scope)
        scenario = self.scenarios.get(body.scenario)
        if scenario is None:
            raise self.unknown_scenario(body.scenario)
        return await self._create(request, scenario.runtime, scenario.name, body)

    async def create_from_scenario(self, request: Request) -> tuple:
        if not self.config.dynamic:
            raise ApiError(403, "dynamic_disabled", "this server runs only its registered "
                                                    "scenarios (--no-dynamic)")
        body = decode(request, api.CreateFromScenario)
        await self.admit(request, request.scope)  # before the compile: that is the cost
        await asyncio.to_thread(refuse_posted, body, self.config.allow_api_webhooks)
        compiled = await self.designer.compile(body)
        if compiled.runtime is None:
            raise ApiError(422, "scenario_invalid", f"the scenario has {compiled.errors} "
                                                    "error(s); see diagnostics",
                           compiled.diagnostics)
        await self.registry.add(compiled.runtime, compiled.blob)
        return await self._create(request, compiled.runtime, compiled.runtime.program.name,
                                  body, inline=compiled.blob)

    async def _create(self, request: Request, runtime: Any, name: str, body: Any,
                      inline: bytes | None = None) -> tuple:
        await self.registry.touch(runtime.ir_hash)  # kept in the store while sessions use it
        answer = await self.sessions.create(runtime, name, body, inline)
        self.cap.created()
        self.metrics.sessions.labels(INLINE_LABEL if inline is not None
                                     else self.label(name)).inc()
        request.note.update(session_id=answer["session_id"], scenario=name)
        return 201, encode(answer), JSON_HEADERS

    async def message(self, request: Request) -> tuple:
        body = decode(request, api.Message)
        request.note.update(session_id=body.session_id, message_id=body.message_id,
                            text=body.text)
        return 200, await self.sessions.message(body, request.note), JSON_HEADERS

    async def validate(self, request: Request) -> tuple:
        body = decode(request, api.ValidateScenario)
        compiled = await self.designer.compile(body)
        diagnostics, errors = await asyncio.to_thread(  # SPEC 17.6: a refused webhook is E113
            with_refusals, compiled, source_text(body), body, self.config.allow_api_webhooks)
        return 200, encode({"diagnostics": diagnostics, "errors": errors,
                            "warnings": compiled.warnings}), JSON_HEADERS

    async def get_session(self, request: Request) -> tuple:
        session_id = request.params["session_id"]
        request.note["session_id"] = session_id
        record, stored = await self.sessions.view(session_id)
        state = record.state
        history = [{"user": e.user, "bot": e.bot, "node": e.node, "reason": e.reason}
                   for e in state.entries()]
        return 200, encode({
            "session_id": session_id, "scenario": record.scenario, "ir_hash": state.ir_hash,
            "current_node": state.current_node, "complete": state.complete,
            "complete_reason": state.complete_reason, "slots": state.slots,
            "history": history, "version": stored.version,
            "updated_at": stamp(stored.updated_at), "expires_at": stamp(stored.expires_at)}), \
            JSON_HEADERS

    async def delete_session(self, request: Request) -> tuple:
        session_id = request.params["session_id"]
        request.note["session_id"] = session_id
        await self.sessions.delete(session_id)
        return 204, b"", []

    async def list_scenarios(self, request: Request) -> tuple:
        return 200, encode([{"name": s.name, "ir_hash": s.runtime.ir_hash,
                             "nodes": len(s.runtime.nodes), "end_nodes": s.end_nodes}
                            for s in sorted(self.scenarios.values(), key=lambda s: s.name)]), \
            JSON_HEADERS

    async def scenario_graph(self, request: Request) -> tuple:
        """SPEC 12: the `mgc graph` text of a registered scenario (`ir_hash`: of an IR of
        that name this server runs, e.g. one compiled by `/session/json`)."""
        name = request.params["name"]
        query = request.query_params(("format", "ir_hash"))
        form = query.get("format", "mermaid")
        if form not in RENDERERS:
            raise ApiError(422, "invalid_request", f"format is one of {', '.join(RENDERERS)}, "
                                                   f"not {form!r}")
        runtime = await self._named_runtime(name, query.get("ir_hash"))
        return 200, graph_text(runtime, form), TEXT_HEADERS

    async def _named_runtime(self, name: str, ir_hash: str | None) -> Runtime:
        if ir_hash is None:
            scenario = self.scenarios.get(name)
            if scenario is None:
                raise self.unknown_scenario(name)
            return scenario.runtime
        if not IR_HASH.fullmatch(ir_hash):
            raise ApiError(422, "invalid_request", "ir_hash is 64 lowercase hex digits (the "
                                                   "`ir_hash` of a session)")
        try:
            runtime = await self.registry.runtime(ir_hash)
        except MissingIR:
            runtime = None
        if runtime is None or runtime.program.name != name:
            raise ApiError(404, "unknown_scenario", f"this server has no IR {ir_hash[:12]} "
                                                    f"of scenario {name!r}")
        return runtime

    def unknown_scenario(self, name: str) -> ApiError:
        known = ", ".join(sorted(self.scenarios)) or "none"
        return ApiError(404, "unknown_scenario", f"no scenario {name!r}; this server has: "
                                                 f"{known}")

    async def playground_file(self, asset: Asset, request: Request) -> tuple:
        """A static file of the page; 304 when the browser's copy is current."""
        if request.header(b"if-none-match") == asset.etag:
            return 304, b"", asset.headers
        return 200, asset.body, asset.headers

    async def healthz(self, request: Request) -> tuple:
        return 200, encode({"status": "ok", "store": self._store_name()}), JSON_HEADERS

    async def readyz(self, request: Request) -> tuple:
        """200 when the store takes a write now (SPEC 11.1), tried at most once a second."""
        now = time.monotonic()
        if now - self._ready[0] >= READY_EVERY:
            self._ready = (now, await self._store_writable())
        ready = self._ready[1]
        return 200 if ready else 503, encode({"status": "ok" if ready else "unavailable",
                                              "store": self._store_name()}), JSON_HEADERS

    async def _store_writable(self) -> bool:
        try:
            if self.store is None:
                raise StoreError("the store is not open yet")
            await asyncio.wait_for(self.store.writable(), self.config.store_timeout)
        except (TimeoutError, StoreError) as error:
            self.log.event("warning", "the session store cannot take a write",
                           error=str(error) or "no answer in time")
            return False
        return True

    async def metrics_text(self, request: Request) -> tuple:
        return 200, self.metrics.render(), [(b"content-type", CONTENT_TYPE)]

    async def openapi(self, request: Request) -> tuple:
        return 200, self._openapi, JSON_HEADERS

    def _store_name(self) -> str:
        return self.store.name if self.store is not None else self.config.store.split(":")[0]


async def unless_gone(work: Any, receive: Any) -> Any:
    """`await work`, cancelled as soon as the client disconnects (`ClientGone`): a compile
    nobody waits for any more is killed and its place in the queue freed (SPEC 11.1)."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(disconnected(receive))
    try:
        await asyncio.wait((task, gone), return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not task.done():
            task.cancel()
            await asyncio.wait([task])  # the compile's own clean-up: the child killed
    if task.cancelled():
        raise ClientGone
    return task.result()


async def disconnected(receive: Any) -> None:
    """Return when the server tells the application that the client has gone."""
    while (await receive())["type"] != "http.disconnect":
        pass


@lru_cache(maxsize=64)
def graph_text(runtime: Runtime, form: str) -> bytes:
    """The graph of a program in one of `RENDERERS`, drawn once per IR and format."""
    return RENDERERS[form](runtime.program).encode()


def decode(request: Request, kind: type) -> Any:
    """The body as `kind`, or 422 `invalid_request` with what is wrong in one line."""
    if not request.body.strip():
        raise ApiError(422, "invalid_request", "the request needs a JSON object body")
    try:
        return api.decode(request.body, kind)
    except msgspec.ValidationError as error:
        raise ApiError(422, "invalid_request", f"invalid request: {error}") from None
    except msgspec.DecodeError as error:
        raise ApiError(422, "invalid_request", f"the body is not valid JSON: {error}") from None
    except RecursionError:  # msgspec's own depth limit: not a DecodeError
        raise ApiError(422, "invalid_request", "the body is nested too deeply") from None
