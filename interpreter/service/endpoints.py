"""The endpoint table of the service: the one source of both its router and its OpenAPI document.

In: the types of `api`. Out: `ENDPOINTS`, one `Endpoint` per method and path: what it answers
by status with the error codes (read by `openapi.document`), the `ServiceApp` method that
answers it and the body it may read (read by `app.ServiceApp`'s router), whether it is public
(answered without the API key: `PUBLIC`). An endpoint added here is routed and documented at
once; one missing cannot be served.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import api


class Endpoint(NamedTuple):
    method: str
    path: str
    summary: str
    body: type | None
    answers: dict[int, tuple[type | None, str]]  # status -> (schema, what and which codes)
    public: bool = False
    query: tuple[dict[str, Any], ...] = ()  # OpenAPI parameter objects `in: query`
    media: str = "application/json"  # of the success answers (errors are always JSON)
    handler: str | None = None  # the `ServiceApp` method that answers (None: the page's files)
    body_limit: int = 0  # the bytes a POST body may hold (0: no body is read)


_GRAPH_QUERY = (
    {"name": "format", "in": "query", "required": False,
     "schema": {"enum": ["mermaid", "dot"], "default": "mermaid"},
     "description": "the text of `mgc graph --format`"},
    {"name": "ir_hash", "in": "query", "required": False,
     "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
     "description": "a session's ir_hash: the graph of the IR it runs on (an older "
                    "deployment, or a scenario compiled by /session/json), not the one "
                    "registered now"},
)
_PAGE_QUERY = ({"name": "scenario", "in": "query", "required": False,
                "schema": {"type": "string"},
                "description": "open on this registered scenario with a new session"},)

_REPORT_QUERY = (
    {"name": "scenario", "in": "query", "required": True, "schema": {"type": "string"},
     "description": "a scenario's metadata.name, or (inline) for scenarios sent in requests"},
    {"name": "since", "in": "query", "required": False, "schema": {"type": "string"},
     "description": "only events from this date or time (ISO 8601, UTC unless it says)"},
    {"name": "now", "in": "query", "required": False, "schema": {"type": "string"},
     "description": "the time the report is made at (default: now): a session quiet for 30 "
                    "minutes before it and not complete is abandoned"},
)


def _errors(*pairs: tuple[int, str]) -> dict[int, tuple[type | None, str]]:
    return {status: (api.ErrorEnvelope, f"error codes: {codes}") for status, codes in pairs}


_CREATE_ERRORS = ((404, "unknown_scenario"), (409, "session_exists"),
                  (422, "invalid_request, invalid_profile, unknown_node"), (413, "too_large"))
ENDPOINTS = (
    Endpoint("post", "/dm/v1/session", "Create a session of a registered scenario",
             api.CreateSession, {201: (api.SessionCreated, "the session and its opening turn"),
                                 **_errors(*_CREATE_ERRORS)},
             handler="create_session", body_limit=api.BODY_LIMIT),
    Endpoint("post", "/dm/v1/session/json", "Compile a scenario sent here and create a session",
             api.CreateFromScenario,
             {201: (api.SessionCreated, "the session and its opening turn"),
              **_errors((403, "dynamic_disabled"), (409, "session_exists"), (413, "too_large"),
                        (422, "scenario_invalid (with diagnostics), invalid_request, "
                              "invalid_profile, unknown_node, webhook_not_allowed"))},
             handler="create_from_scenario", body_limit=api.SCENARIO_BODY_LIMIT),
    Endpoint("post", "/dm/v1/message", "One user turn", api.Message,
             {200: (api.MessageAnswer, "the turn (replayed: an answer given before); with "
                                       "`trace: true` its trace (SPEC 12)"),
              **_errors((404, "unknown_session"), (409, "session_complete, message_id_reused"),
                        (413, "too_large"), (422, "invalid_request"))},
             handler="message", body_limit=api.BODY_LIMIT),
    Endpoint("post", "/dm/v1/session/validate", "The diagnostics of a scenario",
             api.ValidateScenario, {200: (api.Validation, "as `mgc check --format json`"),
                                    **_errors((413, "too_large"), (422, "invalid_request"))},
             handler="validate", body_limit=api.SCENARIO_BODY_LIMIT),
    Endpoint("get", "/dm/v1/session/{session_id}", "A session's state", None,
             {200: (api.SessionView, "the stored session"), **_errors((404, "unknown_session"))},
             handler="get_session"),
    Endpoint("delete", "/dm/v1/session/{session_id}", "Forget a session", None,
             {204: (None, "deleted"), **_errors((404, "unknown_session"))},
             handler="delete_session"),
    Endpoint("get", "/dm/v1/scenarios", "The registered scenarios", None,
             {200: (list[api.ScenarioInfo], "by name")}, handler="list_scenarios"),
    Endpoint("get", "/dm/v1/scenarios/{name}/graph", "A scenario's graph (`mgc graph`)", None,
             {200: (str, "Mermaid or DOT text"), **_errors(
                 (404, "unknown_scenario"), (422, "invalid_request (format, ir_hash)"))},
             query=_GRAPH_QUERY, media="text/plain", handler="scenario_graph"),
    Endpoint("get", "/playground", "The designers' playground (a static page; its files "
                                   "need no key, its API calls do)", None,
             {200: (str, "HTML")}, public=True, query=_PAGE_QUERY, media="text/html"),
    Endpoint("get", "/healthz", "Alive", None, {200: (api.Health, "the process answers")},
             public=True, handler="healthz"),
    Endpoint("get", "/readyz", "Ready", None,
             {200: (api.Health, "the store answers"), 503: (api.Health, "it does not")},
             public=True, handler="readyz"),
    Endpoint("get", "/metrics", "Prometheus metrics", None, {200: (None, "text exposition")},
             handler="metrics_text"),
    Endpoint("get", "/dm/v1/report", "What happened: the analytics of a scenario (SPEC 16)",
             None, {200: (dict[str, Any], "as `mgi report --format json`: sessions, completion, "
                                          "per node and per transition, safety, confidence, "
                                          "per scenario version"),
                    **_errors((403, "report_not_public (no MAGO_API_KEY and no "
                                    "--public-report)"),
                              (404, "events_off"), (422, "invalid_request, too_costly"))},
             query=_REPORT_QUERY, handler="report"),
    Endpoint("get", "/openapi.json", "This document", None, {200: (None, "OpenAPI 3.1")},
             handler="openapi"),
)


PUBLIC = frozenset(e.path for e in ENDPOINTS if e.public)  # no key wanted (nor for the page's files)
