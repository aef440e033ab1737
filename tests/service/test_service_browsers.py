"""SPEC 11.1 browsers and keys, 17.5 order of refusals, against a real `mgi serve`.

A cross-site `text/plain` POST is 415 before any work; a `Host` the operator does not allow is
421 (DNS rebinding), except on `/healthz` and `/readyz`; no CORS header unless
`--cors-origin`; every answer carries `nosniff`, API answers `no-store`; a blank
`MAGO_API_KEY` is refused at start; and the refusals come in the order of 17.5.
"""

from __future__ import annotations

import http.client
import json
import subprocess

import pytest

from support.service_server import ROOT, ServiceServer, metric

KEY = "k3y-browsers"


def raw(service: ServiceServer, method: str, path: str, body: bytes | None = None,
        headers: dict | None = None) -> tuple[int, dict, dict]:
    """One request with exactly these headers (http.client adds Host unless given)."""
    connection = http.client.HTTPConnection("127.0.0.1", service.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host="Host" in (headers or {}),
                              skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        answer = connection.getresponse()
        data = answer.read()
        kind = answer.getheader("content-type", "")
        value = json.loads(data) if data and kind.startswith("application/json") else {}
        return answer.status, value, {k.lower(): v for k, v in answer.getheaders()}
    finally:
        connection.close()


CREATE = json.dumps({"scenario": "clinic_booking"}).encode()


def created(service: ServiceServer) -> float:
    """How many clinic_booking sessions the (shared) server has created so far."""
    _, metrics, _ = service.call("GET", "/metrics")
    return metric(metrics, "mago_sessions_created_total", scenario="clinic_booking")


def test_a_cross_site_text_plain_post_is_415_and_creates_nothing(service):
    before = created(service)
    status, body, _ = raw(service, "POST", "/dm/v1/session", CREATE,
                          {"Content-Type": "text/plain", "Origin": "https://evil.example"})
    assert status == 415 and body["error"]["code"] == "unsupported_media_type", body
    assert created(service) == before


def test_json_with_a_charset_is_json(service):
    status, body, _ = raw(service, "POST", "/dm/v1/session", CREATE,
                          {"Content-Type": "application/json; charset=utf-8"})
    assert status == 201, body


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.2"])
def test_a_foreign_host_is_421_but_probes_answer(service, host):
    status, body, _ = raw(service, "GET", "/dm/v1/scenarios", headers={"Host": host})
    assert status == 421 and body["error"]["code"] == "misdirected_request", body
    for probe in ("/healthz", "/readyz"):
        assert raw(service, "GET", probe, headers={"Host": host})[0] == 200


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:1234", "127.0.0.1"])
def test_the_default_hosts_are_answered(service, host):
    assert raw(service, "GET", "/dm/v1/scenarios", headers={"Host": host})[0] == 200


def test_allowed_hosts_replace_the_default(served_irs):
    with ServiceServer([served_irs], extra=["--allowed-hosts", "bot.example"]) as running:
        assert raw(running, "GET", "/dm/v1/scenarios", headers={"Host": "bot.example"})[0] \
            == 200
        assert raw(running, "GET", "/dm/v1/scenarios", headers={"Host": "127.0.0.1"})[0] \
            == 421


def test_nosniff_on_every_answer_and_no_store_on_api_answers(service):
    for path in ("/dm/v1/scenarios", "/healthz", "/nowhere", "/openapi.json", "/metrics"):
        _, _, headers = raw(service, "GET", path)
        assert headers["x-content-type-options"] == "nosniff", path
        assert headers["cache-control"] == "no-store", path
    _, _, headers = raw(service, "GET", "/playground")
    assert headers["x-content-type-options"] == "nosniff"
    assert headers.get("cache-control") != "no-store"


def test_no_cors_header_without_cors_origin(service):
    _, _, headers = raw(service, "GET", "/dm/v1/scenarios",
                        headers={"Origin": "https://app.example"})
    assert not any(name.startswith("access-control-") for name in headers), headers
    assert raw(service, "OPTIONS", "/dm/v1/session",
               headers={"Origin": "https://app.example"})[0] == 405


def test_cors_origin_allows_that_origin_only(served_irs):
    with ServiceServer([served_irs], extra=["--cors-origin", "https://app.example"]) as running:
        _, _, headers = raw(running, "GET", "/dm/v1/scenarios",
                            headers={"Origin": "https://app.example"})
        assert headers["access-control-allow-origin"] == "https://app.example"
        status, _, headers = raw(running, "OPTIONS", "/dm/v1/session", headers={
            "Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
        assert status == 204 and "content-type" in headers["access-control-allow-headers"]
        _, _, headers = raw(running, "GET", "/dm/v1/scenarios",
                            headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in headers


@pytest.mark.parametrize("key", ["", "   "])
def test_a_blank_api_key_is_refused_at_start(served_irs, key):
    service = ServiceServer([served_irs], env={"MAGO_API_KEY": key})
    import os

    finished = subprocess.run(service.command(), capture_output=True, text=True, timeout=60,
                              cwd=ROOT, env={**os.environ, "MAGO_API_KEY": key})
    assert finished.returncode == 2, finished
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1 and "MAGO_API_KEY" in lines[0], finished.stderr


def test_refusals_come_in_the_order_of_17_5(served_irs):
    big = b'{"scenario": "' + b"x" * 70000 + b'"}'
    with ServiceServer([served_irs], env={"MAGO_API_KEY": KEY}) as keyed:
        worst = {"Host": "evil.example", "Content-Type": "text/plain",
                 "Authorization": "Bearer wrong"}
        steps = [({**worst, "X-Pad": "p" * 17000}, big, 431),
                 ({**worst, "authorization": "Bearer again"}, big, 400),
                 (worst, big, 421),
                 ({**worst, "Host": "127.0.0.1"}, big, 401),
                 ({**worst, "Host": "127.0.0.1", "Authorization": f"Bearer {KEY}"}, big, 415),
                 ({"Host": "127.0.0.1", "Authorization": f"Bearer {KEY}",
                   "Content-Type": "application/json"}, big, 413),
                 ({"Host": "127.0.0.1", "Authorization": f"Bearer {KEY}",
                   "Content-Type": "application/json"}, b'{"scenario": 1}', 422)]
        for headers, body, expected in steps:
            try:
                status = raw(keyed, "POST", "/dm/v1/session", body, headers)[0]
            except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
                status = -1  # the server closed while the body was still being sent
            assert status == expected, (expected, status)
