"""What `/metrics` counts (Prometheus text), in every worker.

In: each turn's scenario, reason, latency and NLU source; sessions created; store errors.
Out: the Prometheus text exposition. With several workers (`MULTIPROC_ENV` set by `mgi
serve` before they start) every worker writes its values to files in that folder and any
worker's `/metrics` answers the sum, so a scrape does not depend on which worker it reaches.
"""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client import CONTENT_TYPE_LATEST, multiprocess

from ..llm.client import read_fallback_source

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST.encode()
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                   10, 30)


class Metrics:
    def __init__(self) -> None:
        self._registry = CollectorRegistry()
        into = {"registry": None if os.environ.get(MULTIPROC_ENV) else self._registry}
        self.turns = Counter("mago_turns", "User turns applied, by scenario and reason code",
                             ["scenario", "reason"], **into)
        self.latency = Histogram("mago_turn_seconds", "Time to run and store one turn",
                                 buckets=LATENCY_BUCKETS, **into)
        self.llm_fallbacks = Counter("mago_llm_fallbacks", "Turns whose LLM NLU fell back",
                                     ["scenario"], **into)
        self.safety = Counter("mago_safety_events", "Turns routed by a safety rule",
                              ["scenario", "category"], **into)
        self.store_errors = Counter("mago_store_errors", "Requests the store did not answer",
                                    **into)
        self.sessions = Counter("mago_sessions_created", "Sessions created, by scenario",
                                ["scenario"], **into)
        self.alerts = Counter("mago_safety_alerts", "Safety events posted to --alert-url, by "
                              "outcome (sent, failed)", ["outcome"], **into)
        self._turn_counters: dict[tuple[str, str], Counter] = {}

    def turn(self, scenario: str, reason: str, seconds: float, nlu_source: str | None) -> None:
        counter = self._turn_counters.get((scenario, reason))
        if counter is None:  # `labels` looks the child up under a lock: once per pair
            counter = self._turn_counters[scenario, reason] = self.turns.labels(scenario, reason)
        counter.inc()
        self.latency.observe(seconds)
        if nlu_source and read_fallback_source(nlu_source) is not None:
            self.llm_fallbacks.labels(scenario).inc()

    def render(self) -> bytes:
        if os.environ.get(MULTIPROC_ENV):
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            return generate_latest(registry)
        return generate_latest(self._registry)
