"""The endpoints of SPEC 11: one method per row of `endpoints.ENDPOINTS` that names it.

In: a `Request` that has passed the guards, its body read within the endpoint's limit (the
router in `app` does both). Out: (status, body bytes, headers); a refusal is an `ApiError`
(the envelope of `http.error_body`), raised here and answered by `app`. The state they read
(the scenarios, the store, the sessions, the designer, the quotas, the metrics) is made by
`ServiceApp.__init__` and `lifecycle.Lifecycle.start`.
"""

from __future__ import annotations

import asyncio
import re
import time
from functools import lru_cache
from typing import Any

import msgspec

from ..views.graph import RENDERERS
from ..loader import Runtime
from ..stores.records import RecordStore, StoreError
from . import api
from .design import Designer, source_text
from .http import JSON_HEADERS, ApiError, Request, encode
from .logs import RequestLog, stamp
from .metrics import CONTENT_TYPE, Metrics
from .playground import Asset
from .quotas import ClientAddress, CreationRate, SessionCap
from .registry import MissingIR, Registry
from .report import report_answer
from .sessions import Sessions
from .webhooks import refuse_posted, with_refusals

READY_EVERY = 1.0  # /readyz asks the store at most this often
TEXT_HEADERS = [(b"content-type", b"text/plain; charset=utf-8")]
IR_HASH = re.compile(r"[0-9a-f]{64}")
INLINE_LABEL = "(inline)"  # the metric label of every scenario posted to /session/json


class Handlers:
    """The endpoint methods of `ServiceApp` (a mixin: the state is the app's)."""

    config: Any  # app.ServeConfig
    log: RequestLog
    metrics: Metrics
    scenarios: dict[str, Any]
    designer: Designer
    clients: ClientAddress
    rate: CreationRate
    cap: SessionCap  # None until `start`: no request is served before
    store: RecordStore  # None until `start`: no request is served before
    registry: Registry  # None until `start`: no request is served before
    sessions: Sessions  # None until `start`: no request is served before
    _ready: tuple[float, bool]
    _openapi: bytes

    def label(self, scenario: str) -> str:
        """SPEC 11.1: metric labels name registered scenarios only (bounded)."""
        return scenario if scenario in self.scenarios else INLINE_LABEL

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
        if compiled.runtime is None or compiled.blob is None:  # a runtime comes from a blob
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

    async def report(self, request: Request) -> tuple:
        """SPEC 16: what happened in a scenario's sessions (`report.report_answer`)."""
        return await report_answer(self, request)

    async def openapi(self, request: Request) -> tuple:
        return 200, self._openapi, JSON_HEADERS

    def _store_name(self) -> str:
        return self.store.name if self.store is not None else self.config.store.split(":")[0]


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
