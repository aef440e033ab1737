"""SPEC 11.1 and 17.2-17.3: a real `mgi serve` holds up against hostile sockets before any
key is checked: idle and slow connections are closed on time, huge headers are 431 without
stalling anyone, a second Authorization header is 400, and at the connection cap the oldest
idle socket makes room so `/healthz` and turns keep being answered.

Every socket here is a real TCP connection to a child `mgi serve`; every loop is bounded in
count and in time, and waits poll for their condition with a deadline.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from support.service_server import Client, ServiceServer

FAST = ["--keep-alive-seconds", "1", "--header-seconds", "2", "--body-seconds", "2"]


@pytest.fixture(scope="module")
def server(served_irs):
    with ServiceServer([served_irs], extra=FAST + ["--max-connections", "60"]) as running:
        yield running


def connect(server: ServiceServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return sock


def closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed `sock` within `seconds`, and what it wrote first."""
    sock.settimeout(0.2)
    got = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True, got
        if not chunk:
            return True, got
        got += chunk
    return False, got


def status_of(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/1.1 ") else 0


def envelope_of(raw: bytes) -> dict:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), raw[:300]
    return json.loads(body)["error"]


def timed_healthz(server: ServiceServer) -> float:
    started = time.monotonic()
    status, body, _ = server.call("GET", "/healthz", timeout=5)
    assert status == 200, body
    return time.monotonic() - started


def test_an_idle_socket_that_never_sends_a_request_is_closed(server):
    sock = connect(server)
    try:
        closed, _ = closed_within(sock, 6)  # keep-alive 1 s, swept twice a second
        assert closed
    finally:
        sock.close()


def test_a_trickle_of_blank_lines_does_not_keep_a_socket_open(server):
    sock = connect(server)
    try:
        deadline = time.monotonic() + 8
        closed = False
        while time.monotonic() < deadline and not closed:
            try:
                sock.sendall(b"\r\n")
            except OSError:
                closed = True
                break
            closed, _ = closed_within(sock, 0.4)
        assert closed
    finally:
        sock.close()


def test_slow_headers_get_408_within_the_header_limit(server):
    sock = connect(server)
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        got = b""
        for _ in range(40):  # one header line every 0.25 s: a slowloris
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                break
            closed, more = closed_within(sock, 0.25)
            got += more
            if closed:
                break
        assert time.monotonic() - started < 6
        assert status_of(got) == 408, got
        assert envelope_of(got)["code"] == "timeout"
    finally:
        sock.close()


def test_a_slow_body_is_cut_off_within_the_body_limit(server):
    sock = connect(server)
    try:
        sock.sendall(b"POST /dm/v1/message HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
        started = time.monotonic()
        closed = False
        for _ in range(40):
            try:
                sock.sendall(b" ")
            except OSError:
                closed = True
                break
            closed, _ = closed_within(sock, 0.25)
            if closed:
                break
        assert closed and time.monotonic() - started < 6
    finally:
        sock.close()


def test_headers_over_16_kib_are_431_and_nobody_waits(server):
    sock = connect(server)
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
        got = b""
        for _ in range(200):  # up to 200 x 64 KiB; the server stops reading long before
            try:
                sock.sendall(b"a" * 65536)
            except OSError:
                break
            assert timed_healthz(server) < 1.0
        closed, more = closed_within(sock, 5)
        got += more
        assert closed
        assert status_of(got) == 431, got[:200]
        assert envelope_of(got)["code"] == "headers_too_large"
    finally:
        sock.close()


def test_headers_just_under_the_limit_are_served(server):
    status, body, _ = server.call("GET", "/healthz", headers={"X-Pad": "a" * 15000})
    assert status == 200, body


def test_a_body_in_the_same_packet_as_its_headers_is_not_counted_as_headers(server):
    client = Client(server.port)
    try:
        status, body, _ = client.call("POST", "/dm/v1/message",
                                      {"session_id": "nobody", "text": "가" * 15000})
        assert status == 404, body  # read whole: the session is unknown, not a 431
    finally:
        client.close()


def test_two_authorization_headers_are_400(served_irs):
    with ServiceServer([served_irs], env={"MAGO_API_KEY": "k3y"}) as keyed:
        sock = connect(keyed)
        try:
            sock.sendall(b"GET /dm/v1/scenarios HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Authorization: Bearer k3y\r\nAuthorization: Bearer other\r\n\r\n")
            closed, got = closed_within(sock, 3)
            assert status_of(got) == 400, got
            assert envelope_of(got)["code"] == "invalid_request"
        finally:
            sock.close()


def test_invalid_http_is_the_json_envelope(server):
    sock = connect(server)
    try:
        sock.sendall(b"GET / HTTP/1.1\r\nBad Header\r\n\r\n")
        closed, got = closed_within(sock, 3)
        assert closed and status_of(got) == 400, got
        assert envelope_of(got)["code"] == "invalid_request"
    finally:
        sock.close()


def test_slowloris_and_idle_flood_together_leave_healthz_and_turns_answering(served_irs):
    """Past the open-file limit with idle sockets and slow headers at once: /healthz from
    another client answers in under 1 s every time, and a conversation keeps going (the
    default --max-connections is kept below the limit the server reads at start)."""
    with ServiceServer([served_irs], open_files=200) as running:  # the cap: 200 - 64
        socks: list[socket.socket] = []
        stop = threading.Event()

        def slowloris() -> None:
            slow = []
            for _ in range(10):
                sock = connect(running)
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                slow.append(sock)
            while not stop.is_set():
                for sock in slow:
                    try:
                        sock.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        pass
                stop.wait(0.5)
            for sock in slow:
                sock.close()

        loris = threading.Thread(target=slowloris)
        loris.start()
        try:
            for _ in range(260):  # more idle sockets than the server may open files
                socks.append(connect(running))
            status, made, _ = running.call("POST", "/dm/v1/session",
                                           {"scenario": "clinic_booking"})
            assert status == 201, made
            worst = 0.0
            for _turn in range(10):
                for _ in range(10):
                    socks.append(connect(running))
                worst = max(worst, timed_healthz(running))
                status, answer, _ = running.call("POST", "/dm/v1/message", {
                    "session_id": made["session_id"], "text": "예약하고 싶어요"}, timeout=5)
                assert status in (200, 409), answer
            assert worst < 1.0
        finally:
            stop.set()
            loris.join(10)
            for sock in socks:
                sock.close()
