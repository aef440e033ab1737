"""The service's lifespan: what starting opens and stopping closes (SPEC 11.1, 17.4).

In: the ASGI lifespan messages. Out: at start-up the store opened, the registered IRs
published, the sessions, the webhook executor and the language analysers warmed up, the
expired-session sweeper running; at shutdown the compiles killed, the sweeper cancelled, the
alerts in flight drained, the store closed, and the process gone within `EXIT_SECONDS` whatever
still runs.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ..stores.records import RecordStore, StoreError, open_store
from ..understanding.morph import load_for as load_analysers
from .alerts import Alerts
from .design import Designer
from .logs import RequestLog
from .metrics import Metrics
from .quotas import SessionCap
from .registry import Registry
from .sessions import Plugins, Sessions
from .webhooks import warm_up

ALERT_DRAIN_SECONDS = 1.0  # at shutdown, how long alerts in flight may still be sent
EXIT_SECONDS = 1.5  # after the grace period (8 s), the rest of the shutdown: SIGTERM ends in 10 s


class Lifecycle:
    """Start-up and shutdown of `ServiceApp` (a mixin: the state is the app's)."""

    config: Any  # app.ServeConfig
    log: RequestLog
    metrics: Metrics
    scenarios: dict[str, Any]
    plugins: Plugins
    designer: Designer
    alerts: Alerts | None
    cap: SessionCap  # None until `start`: no request is served before
    store: RecordStore  # None until `start`: no request is served before
    registry: Registry  # None until `start`: no request is served before
    sessions: Sessions  # None until `start`: no request is served before
    _sweeper: asyncio.Task[None] | None
    on_turn: Callable[[str, str, Any, float], None]  # what a turn tells the metrics and alerts

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

        store: Any = self.store  # the Redis store alone has the day streams' knobs
        if hasattr(store, "events_cap"):
            store.events_days, store.events_cap = self.config.events_days, self.config.events_cap
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
