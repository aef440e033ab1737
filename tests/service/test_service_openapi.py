"""The OpenAPI document and the smaller findings of the hostile-client probe (SPEC 11.1).

The key is declared only when MAGO_API_KEY is set; the scenario endpoints say "one of
scenario_json or scenario_text" (oneOf); session creation links to the message, view and
delete operations (stateful testing follows them); id patterns refuse a trailing newline; a
newline in a node name stays inside its Mermaid label; a scenario named with `/` is graphed.
"""

from __future__ import annotations

import json
import re

import pytest

from interpreter.service import api
from support.service_server import ROOT, ServiceServer

SENIMATE = json.loads((ROOT / "scenarios" / "senimate.json").read_text(encoding="utf-8"))


def test_the_key_is_declared_only_when_one_is_set(served_irs, service):
    _, open_doc, _ = service.call("GET", "/openapi.json")
    with ServiceServer([served_irs], env={"MAGO_API_KEY": "k"}) as keyed:
        _, keyed_doc, _ = keyed.call("GET", "/openapi.json",
                                     headers={"Authorization": "Bearer k"})
    operation = keyed_doc["paths"]["/dm/v1/message"]["post"]
    assert operation["security"] == [{"bearer": []}] and "401" in operation["responses"]
    assert "security" not in open_doc["paths"]["/dm/v1/message"]["post"]


def test_scenario_bodies_need_exactly_one_source(service):
    _, doc, _ = service.call("GET", "/openapi.json")
    schemas = doc["components"]["schemas"]
    for path in ("/dm/v1/session/json", "/dm/v1/session/validate"):
        ref = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"][
            "schema"]["$ref"]
        one_of = schemas[ref.rsplit("/", 1)[1]]["oneOf"]
        assert [variant["required"] for variant in one_of] == [["scenario_json"],
                                                                ["scenario_text"]]


def test_session_creation_links_to_its_operations(service):
    _, doc, _ = service.call("GET", "/openapi.json")
    operations = {op["operationId"] for item in doc["paths"].values() for op in item.values()
                  if "operationId" in op}
    for path in ("/dm/v1/session", "/dm/v1/session/json"):
        links = doc["paths"][path]["post"]["responses"]["201"]["links"]
        assert {link["operationId"] for link in links.values()} <= operations
        assert links["message"]["requestBody"]["session_id"] == "$response.body#/session_id"


@pytest.mark.parametrize("session_id", ["abc\n", "abc\r\n", "a b"])
def test_an_id_with_a_trailing_newline_is_refused(service, session_id):
    status, body, _ = service.call("POST", "/dm/v1/session",
                                   {"scenario": "clinic_booking", "session_id": session_id})
    assert status == 422 and body["error"]["code"] == "invalid_request", body


def test_the_id_pattern_means_the_same_in_python_and_javascript():
    assert re.search(api.SESSION_ID_PATTERN, "abc") and not re.search(
        api.SESSION_ID_PATTERN, "abc\n")


def posted(service: ServiceServer, scenario: dict) -> dict:
    status, made, _ = service.call("POST", "/dm/v1/session/json", {"scenario_json": scenario},
                                   timeout=60)
    assert status == 201, made
    return made


def test_a_newline_in_a_node_name_stays_inside_its_mermaid_label(service):
    scenario = json.loads(json.dumps(SENIMATE))
    scenario["metadata"]["name"] = "newline_names"
    scenario["graph"]["nodes"][0]["name"] = 'first\n    evil["injected"]\nclick evil'
    made = posted(service, scenario)
    status, text, _ = service.call(
        "GET", f"/dm/v1/scenarios/newline_names/graph?ir_hash={made['ir_hash']}")
    assert status == 200, text
    assert not any(line.strip().startswith(("evil", "click")) for line in text.splitlines())


def test_a_scenario_named_with_a_slash_is_graphed(service):
    scenario = json.loads(json.dumps(SENIMATE))
    scenario["metadata"]["name"] = "team/senimate"
    made = posted(service, scenario)
    status, text, _ = service.call(
        "GET", f"/dm/v1/scenarios/team%2Fsenimate/graph?ir_hash={made['ir_hash']}")
    assert status == 200 and text.startswith(("flowchart", "graph")), text


def test_every_documented_operation_is_routed_and_every_route_documented(service):
    """The router and the document are made of one table (`interpreter.service.endpoints`):
    each operation the document lists is answered by a handler (never the router's
    `not_found` or `method_not_allowed`), and each row the router serves is in the document."""
    from interpreter.service.app import ServiceApp
    from interpreter.service.endpoints import ENDPOINTS

    _, doc, _ = service.call("GET", "/openapi.json")
    documented = {(method, path) for path, item in doc["paths"].items() for method in item}
    assert documented == {(e.method, e.path) for e in ENDPOINTS}
    for endpoint in ENDPOINTS:
        assert endpoint.handler is None or callable(getattr(ServiceApp, endpoint.handler)), \
            endpoint
        path = endpoint.path.replace("{session_id}", "nobody").replace("{name}", "clinic_booking")
        status, body, _ = service.call(endpoint.method.upper(), path,
                                       {} if endpoint.method == "post" else None)
        code = body["error"]["code"] if status >= 400 and isinstance(body, dict) else None
        assert code not in ("not_found", "method_not_allowed"), (endpoint.path, status, body)
