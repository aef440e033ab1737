"""The OpenAPI 3.1 document of the service, derived from the types of `api`.

In: the endpoint table below (method, path, request type, query parameters, answers by
status with their error codes, the success media type). Out: the document `GET /openapi.json`
serves. The schemas are msgspec's JSON Schema of the very Structs that validate the requests,
so the document cannot drift from them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from . import api

TAG = "mago"


class Endpoint(NamedTuple):
    method: str
    path: str
    summary: str
    body: type | None
    answers: dict[int, tuple[type | None, str]]  # status -> (schema, what and which codes)
    public: bool = False
    query: tuple[dict, ...] = ()  # OpenAPI parameter objects `in: query`
    media: str = "application/json"  # of the success answers (errors are always JSON)


_PATH_PARAMETERS = {
    "session_id": {"type": "string", "pattern": api.SESSION_ID_PATTERN},
    "name": {"type": "string", "description": "a registered scenario's metadata.name"},
}
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
                                 **_errors(*_CREATE_ERRORS)}),
    Endpoint("post", "/dm/v1/session/json", "Compile a scenario sent here and create a session",
             api.CreateFromScenario,
             {201: (api.SessionCreated, "the session and its opening turn"),
              **_errors((403, "dynamic_disabled"), (409, "session_exists"), (413, "too_large"),
                        (422, "scenario_invalid (with diagnostics), invalid_request, "
                              "invalid_profile, unknown_node, webhook_not_allowed"))}),
    Endpoint("post", "/dm/v1/message", "One user turn", api.Message,
             {200: (api.MessageAnswer, "the turn (replayed: an answer given before); with "
                                       "`trace: true` its trace (SPEC 12)"),
              **_errors((404, "unknown_session"), (409, "session_complete, message_id_reused"),
                        (413, "too_large"), (422, "invalid_request"))}),
    Endpoint("post", "/dm/v1/session/validate", "The diagnostics of a scenario",
             api.ValidateScenario, {200: (api.Validation, "as `mgc check --format json`"),
                                    **_errors((413, "too_large"), (422, "invalid_request"))}),
    Endpoint("get", "/dm/v1/session/{session_id}", "A session's state", None,
             {200: (api.SessionView, "the stored session"), **_errors((404, "unknown_session"))}),
    Endpoint("delete", "/dm/v1/session/{session_id}", "Forget a session", None,
             {204: (None, "deleted"), **_errors((404, "unknown_session"))}),
    Endpoint("get", "/dm/v1/scenarios", "The registered scenarios", None,
             {200: (list[api.ScenarioInfo], "by name")}),
    Endpoint("get", "/dm/v1/scenarios/{name}/graph", "A scenario's graph (`mgc graph`)", None,
             {200: (str, "Mermaid or DOT text"), **_errors(
                 (404, "unknown_scenario"), (422, "invalid_request (format, ir_hash)"))},
             query=_GRAPH_QUERY, media="text/plain"),
    Endpoint("get", "/playground", "The designers' playground (a static page; its files "
                                   "need no key, its API calls do)", None,
             {200: (str, "HTML")}, public=True, query=_PAGE_QUERY, media="text/html"),
    Endpoint("get", "/healthz", "Alive", None, {200: (api.Health, "the process answers")},
             public=True),
    Endpoint("get", "/readyz", "Ready", None,
             {200: (api.Health, "the store answers"), 503: (api.Health, "it does not")},
             public=True),
    Endpoint("get", "/metrics", "Prometheus metrics", None, {200: (None, "text exposition")}),
    Endpoint("get", "/dm/v1/report", "What happened: the analytics of a scenario (SPEC 16)",
             None, {200: (dict[str, Any], "as `mgi report --format json`: sessions, completion, "
                                          "per node and per transition, safety, confidence, "
                                          "per scenario version"),
                    **_errors((403, "report_not_public (no MAGO_API_KEY and no "
                                    "--public-report)"),
                              (404, "events_off"), (422, "invalid_request, too_costly"))},
             query=_REPORT_QUERY),
    Endpoint("get", "/openapi.json", "This document", None, {200: (None, "OpenAPI 3.1")}),
)


ONE_SOURCE = [{"required": ["scenario_json"], "properties": {"scenario_json": {"type": "object"}}},
              {"required": ["scenario_text"], "properties": {"scenario_text": {"type": "string"}}}]
# SPEC 11.1: the refusals of the limits, on top of each endpoint's own answers
_POST_ERRORS = ((415, "unsupported_media_type"),)
_CREATE_LIMITS = ((429, "rate_limited"), (503, "store_full, store_unavailable, busy"))
_COMPILE_LIMITS = ((422, "too_costly"), (503, "busy"))
_SESSION = "$response.body#/session_id"
# OpenAPI links: what a created session leads to (stateful testing follows them)
_LINKS = {
    "message": {"operationId": "post_message",
                "requestBody": {"session_id": _SESSION, "text": "안녕하세요"},
                "description": "a turn of the session created"},
    "view": {"operationId": "get_session", "parameters": {"session_id": _SESSION}},
    "forget": {"operationId": "delete_session", "parameters": {"session_id": _SESSION}},
}
_OPERATION_IDS = {("post", "/dm/v1/session"): "create_session",
                  ("post", "/dm/v1/session/json"): "create_session_from_scenario",
                  ("post", "/dm/v1/message"): "post_message",
                  ("post", "/dm/v1/session/validate"): "validate_scenario",
                  ("get", "/dm/v1/session/{session_id}"): "get_session",
                  ("delete", "/dm/v1/session/{session_id}"): "delete_session"}


def document(version: str, keyed: bool = True) -> dict[str, Any]:
    """`keyed`: whether MAGO_API_KEY is set (only then do operations need the key)."""
    types = [e.body for e in ENDPOINTS if e.body] + \
        [t for e in ENDPOINTS for t, _ in e.answers.values() if t is not None]
    schemas, components = msgspec.json.schema_components(
        types, ref_template="#/components/schemas/{name}")
    refs = {t: s for t, s in zip(types, schemas)}
    paths: dict[str, dict] = {}
    for endpoint in ENDPOINTS:
        paths.setdefault(endpoint.path, {})[endpoint.method] = _operation(
            _with_limits(endpoint), refs, keyed)
    for body in (api.CreateFromScenario, api.ValidateScenario):  # exactly one source
        components[refs[body]["$ref"].rsplit("/", 1)[1]]["oneOf"] = ONE_SOURCE
    return {
        "openapi": "3.1.0",
        "info": {"title": "Mago dialogue service", "version": version,
                 "description": "Sessions of compiled Mago scenarios over HTTP (SPEC 11). "
                                "Every error is {\"error\": {\"code\", \"message\"}}."},
        "paths": paths,
        "components": {"schemas": components,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


def _with_limits(endpoint: Endpoint) -> Endpoint:
    """The endpoint's answers with those of SPEC 11.1's limits (codes joined per status)."""
    extra: list[tuple[int, str]] = []
    if endpoint.path not in ("/healthz", "/readyz"):
        extra.append((421, "misdirected_request"))
    if endpoint.method == "post":
        extra += _POST_ERRORS
        extra.append((503, "store_unavailable"))
    if endpoint.path in ("/dm/v1/session", "/dm/v1/session/json"):
        extra += _CREATE_LIMITS
    if endpoint.path in ("/dm/v1/session/json", "/dm/v1/session/validate"):
        extra += _COMPILE_LIMITS
    answers = dict(endpoint.answers)
    for status, codes in extra:
        if status in answers and answers[status][0] is api.ErrorEnvelope:
            known = answers[status][1]
            new = [c for c in codes.split(", ") if c not in known]
            if new:
                answers[status] = (api.ErrorEnvelope, f"{known}, {', '.join(new)}")
        elif status not in answers:
            answers[status] = (api.ErrorEnvelope, f"error codes: {codes}")
    return endpoint._replace(answers=answers)


def _operation(endpoint: Endpoint, refs: dict, keyed: bool) -> dict[str, Any]:
    operation: dict[str, Any] = {"summary": endpoint.summary, "tags": [TAG], "responses": {}}
    operation_id = _OPERATION_IDS.get((endpoint.method, endpoint.path))
    if operation_id is not None:
        operation["operationId"] = operation_id
    parameters = [{"name": name, "in": "path", "required": True, "schema": schema}
                  for name, schema in _PATH_PARAMETERS.items()
                  if f"{{{name}}}" in endpoint.path] + list(endpoint.query)
    if parameters:
        operation["parameters"] = parameters
    if endpoint.body is not None:
        operation["requestBody"] = {"required": True, "content": {
            "application/json": {"schema": refs[endpoint.body]}}}
    for status, (kind, description) in endpoint.answers.items():
        answer: dict[str, Any] = {"description": description}
        if kind is not None:
            media = endpoint.media if status < 400 else "application/json"
            answer["content"] = {media: {"schema": refs[kind]}}
        if status == 201:
            answer["links"] = _LINKS
        operation["responses"][str(status)] = answer
    if not endpoint.public and keyed:
        operation["security"] = [{"bearer": []}]
        operation["responses"].setdefault("401", {
            "description": "error code: unauthorized (MAGO_API_KEY is set)",
            "content": {"application/json": {"schema": refs[api.ErrorEnvelope]}}})
    return operation
