"""The OpenAPI 3.1 document of the service, derived from the types of `api`.

In: the endpoint table of `endpoints` (method, path, request type, query parameters, answers
by status with their error codes, the success media type), which the router reads too. Out:
the document `GET /openapi.json` serves. The schemas are msgspec's JSON Schema of the very Structs that validate the requests,
so the document cannot drift from them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from . import api
from .endpoints import ENDPOINTS, Endpoint

TAG = "mago"
_PATH_PARAMETERS = {
    "session_id": {"type": "string", "pattern": api.SESSION_ID_PATTERN},
    "name": {"type": "string", "description": "a registered scenario's metadata.name"},
}

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
    paths: dict[str, dict[str, Any]] = {}
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


def _operation(endpoint: Endpoint, refs: dict[Any, dict[str, Any]], keyed: bool) -> dict[str, Any]:
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
