"""The ASGI application: the state, the guards and the routing of the endpoints of SPEC 11.

In: a `ServeConfig` (from `mgi serve`, through the environment to every worker). Out: an
ASGI callable for uvicorn: HTTP requests routed by the table of `endpoints` to the methods
of `handlers`, and the lifespan of `lifecycle` (open the store and publish the registered
IRs at start-up, sweep expired sessions, close the store at shutdown).
After: every answer is JSON with the status of the table, every failure the envelope of
`http.error_body` (a handler's `ApiError`, 503 `store_unavailable` when the store does not
answer, 500 `internal_error` for a bug, its traceback only in the log); one log line per
request; the refusals of `guards` come first (SPEC 17.5: Host, key, media type), and the
quotas of `quotas` before a session is created; with `MAGO_API_KEY` set every endpoint but
`/healthz`, `/readyz` and the playground's static files wants `Authorization: Bearer KEY`
(compared in constant time, never logged). The playground (SPEC 12) is a page like any
client: it holds no data and no key (a browser cannot send a header when it opens a URL), and
asks for the key to call the API.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import time
import traceback
from functools import partial
from typing import Any

import msgspec

from .. import MagoError, __version__
from ..ir import SAFETY_REASON
from ..stores.records import RecordStore, StoreError
from . import api
from .alerts import Alerts
from .connections import GuardedProtocol, Limits
from .design import Designer
from .endpoints import ENDPOINTS, PUBLIC
from .guards import PREFLIGHT_HEADERS, Guards, allowed_hosts
from .handlers import Handlers
from .http import JSON_HEADERS, ApiError, Request, Route, Router, encode, error_body, read_body
from .lifecycle import Lifecycle
from .logs import RequestLog, stamp
from .metrics import Metrics
from .openapi import document
from .playground import load_assets
from .quotas import ClientAddress, CreationRate, SessionCap, trusted_proxies
from .registry import Registry, load_scenarios
from .sessions import Plugins, Sessions
from .webhooks import guard_for

CONFIG_ENV = "MAGO_SERVE_CONFIG"
API_KEY_ENV = "MAGO_API_KEY"
# The answer to a request still running when the grace period ends (uvicorn cancels it, and
# would answer a plain-text 500): the envelope, and the connection closed after it. A turn
# may have been saved just before, so the client is told to resend it with its message_id.
STOPPED_BODY = error_body("busy", "the server stopped before this request finished; resend "
                                  "it (with the same message_id, a turn is not applied twice)")
STOPPED_HEADERS = [(b"content-type", b"application/json"), (b"connection", b"close"),
                   (b"retry-after", b"1")]
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


class ServiceApp(Handlers, Lifecycle):
    """The ASGI application: the state (made here), the guards (Host, key, media type) and the
    routing (here), the endpoints (`handlers`), start-up and shutdown (`lifecycle`)."""

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
        """The router of `endpoints.ENDPOINTS` (the table the OpenAPI document is made of),
        and the playground's files."""
        router = Router()
        for endpoint in ENDPOINTS:
            if endpoint.handler is not None:
                router.add(endpoint.method.upper(), endpoint.path,
                           Route(getattr(self, endpoint.handler), endpoint.body_limit))
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
