"""The chat-completions transport against a real HTTP server on loopback (tests/support/llm_server.py):
keep-alive, retries with backoff and Retry-After inside the budget, timeouts, deadlines on the
whole exchange (servers that drip their answer), dropped and stale connections, HTTPS,
malformed answers, settings (numbers, API key) from flags and the environment."""

from __future__ import annotations

import socket
import time

import pytest

from interpreter.llm.client import (Budget, ChatClient, LLMBadResponse, LLMConfigError,
                                    LLMError, LLMJournal, LLMRejected, LLMSettings, LLMTimeout,
                                    LLMUnavailable, LLMUnreachable, _retry_after_seconds, endpoint,
                                    settings_from)

from support.llm_server import DRIPS, Reply

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "안녕"}]


def client_for(server, sleeps=None, **settings) -> ChatClient:
    options = {"timeout": 1.0, "turn_budget": 3.0, "retries": 2, "backoff": 0.01, **settings}
    sleep = sleeps.append if sleeps is not None else time.sleep
    return ChatClient(LLMSettings(server.url, "test-model", **options), LLMJournal(), sleep=sleep)


def ask(client: ChatClient, seconds: float = 3.0) -> str:
    return client.complete(MESSAGES, Budget(seconds), "nlg")


# --- a good answer ------------------------------------------------------------------------------


def test_request_shape_and_answer(llm):
    llm.nlg("반가워요.")
    client = client_for(llm, api_key="sk-test-123")
    assert ask(client) == "반가워요."
    (request,) = llm.requests
    assert request == {"model": "test-model", "messages": MESSAGES}
    assert llm.headers[0]["Authorization"] == "Bearer sk-test-123"
    assert "sk-test-123" not in repr(client.settings)
    (call,) = client.journal.drain()
    assert (call.purpose, call.statuses, call.answer, call.error) == ("nlg", (200,), "반가워요.", None)
    assert "sk-test-123" not in repr(call)


def test_response_format_is_sent_when_given(llm):
    client = client_for(llm)
    client.complete(MESSAGES, Budget(3), "nlu", {"type": "json_object"})
    assert llm.requests[0]["response_format"] == {"type": "json_object"}


def test_one_kept_alive_connection_serves_many_calls(llm):
    client = client_for(llm)
    before = llm.connections
    for _ in range(5):
        ask(client)
    assert client.connections_opened == 1 and llm.connections - before == 1


# --- retries ------------------------------------------------------------------------------------


def test_server_errors_are_retried_with_growing_backoff(llm):
    llm.nlg(Reply(status=500), Reply(status=503), "됐어요.")
    sleeps: list[float] = []
    client = client_for(llm, sleeps, backoff=0.05)
    assert ask(client) == "됐어요."
    assert sleeps == [0.05, 0.1]
    assert client.journal.drain()[0].statuses == (500, 503, 200)


def test_retries_are_bounded(llm):
    llm.nlg(*[Reply(status=502)] * 5)
    client = client_for(llm, retries=2)
    with pytest.raises(LLMUnavailable, match=r"^server error 502 after 3 attempts$"):
        ask(client)
    assert len(llm.requests) == 3


def test_retry_after_is_honoured_when_it_fits_the_budget(llm):
    llm.nlg(Reply(status=429, headers={"Retry-After": "0.3"}), "네.")
    sleeps: list[float] = []
    assert ask(client_for(llm, sleeps)) == "네."
    assert sleeps == [0.3]


def test_retry_after_beyond_the_budget_gives_up_at_once(llm):
    llm.nlg(Reply(status=429, headers={"Retry-After": "30"}), "never asked")
    sleeps: list[float] = []
    with pytest.raises(LLMUnavailable, match="rate limited 429 after 1 attempt; the server asks "
                                             "to wait 30 s, beyond the turn budget"):
        ask(client_for(llm, sleeps), seconds=2.0)
    assert sleeps == [] and len(llm.requests) == 1


def test_no_retry_when_the_backoff_does_not_fit_the_budget(llm):
    llm.nlg(Reply(status=500), "never asked")
    with pytest.raises(LLMUnavailable, match="no time left in the turn budget"):
        ask(client_for(llm, backoff=5.0), seconds=1.0)
    assert len(llm.requests) == 1


@pytest.mark.parametrize("status,hint", [(400, "request rejected (400: bad model)"),
                                         (401, "check the API key"),
                                         (404, "check --llm-url and --llm-model")])
def test_client_errors_are_not_retried(llm, status, hint):
    llm.nlg(Reply(status=status, body=b'{"error": {"message": "bad model"}}'))
    with pytest.raises(LLMRejected) as raised:
        ask(client_for(llm))
    assert raised.value.status == status and hint in str(raised.value)
    assert len(llm.requests) == 1


def test_retry_after_header_forms():
    now = 1_700_000_000.0
    assert _retry_after_seconds("2", now) == 2.0
    assert _retry_after_seconds("Tue, 14 Nov 2023 22:13:30 GMT", now) == pytest.approx(10.0)
    assert _retry_after_seconds("soon", now) is None
    assert _retry_after_seconds(None, now) is None
    assert _retry_after_seconds("-5", now) == 0.0


# --- time ---------------------------------------------------------------------------------------


def test_a_slow_server_times_out_without_retry(llm):
    llm.nlg(Reply("late", delay=0.6))
    client = client_for(llm, timeout=0.2)
    started = time.monotonic()
    with pytest.raises(LLMTimeout, match=r"^timeout after 0\.2 s$"):
        ask(client)
    assert time.monotonic() - started < 0.5
    assert len(llm.requests) == 1
    assert client.journal.drain()[0].statuses == (0,)


def test_the_turn_budget_cuts_the_request_timeout(llm):
    llm.nlg(Reply("late", delay=0.6))
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        ask(client_for(llm, timeout=5.0), seconds=0.2)
    assert time.monotonic() - started < 0.5


def test_a_spent_budget_sends_nothing(llm):
    budget = Budget(0.0)
    with pytest.raises(LLMTimeout, match="turn budget of 0 s spent"):
        client_for(llm).complete(MESSAGES, budget)
    assert llm.requests == []


def test_turn_budgets_are_shared_within_a_turn_only():
    ticks = iter([0.0, 0.0, 5.0, 5.0])
    client = ChatClient(LLMSettings("http://127.0.0.1:1/v1", "m", turn_budget=10.0),
                        clock=lambda: next(ticks))
    first = client.budgets.for_turn("s", 2)
    assert client.budgets.for_turn("s", 2) is first
    assert client.budgets.for_turn("s", 3) is not first


# --- deadlines: the whole exchange, not each read ---------------------------------------------


MARGIN = 1.0  # seconds a cut-off call may take past its limit on a busy machine


def timed_failure(client: ChatClient, seconds: float) -> tuple[LLMError, float]:
    started = time.monotonic()
    with pytest.raises(LLMError) as raised:
        ask(client, seconds)
    return raised.value, time.monotonic() - started


@pytest.mark.parametrize("drip", DRIPS)
def test_a_dripping_server_is_cut_off_when_the_turn_budget_is_spent(llm, drip):
    # One piece every 0.3 s: no read ever waits long, so a per-read timeout never fires.
    llm.nlg(Reply("천천히 말할게요.", drip=drip))
    client = client_for(llm, timeout=5.0)
    error, elapsed = timed_failure(client, seconds=1.0)
    assert isinstance(error, LLMTimeout) and str(error) == "turn budget of 1 s spent"
    assert 0.95 < elapsed < 1.0 + MARGIN, elapsed
    assert len(llm.requests) == 1 and client.journal.drain()[0].statuses == (0,)


@pytest.mark.parametrize("drip", ["body", "continue"])
def test_a_dripping_server_is_cut_off_at_the_request_timeout(llm, drip):
    llm.nlg(Reply("천천히 말할게요.", drip=drip))
    error, elapsed = timed_failure(client_for(llm, timeout=0.8), seconds=5.0)
    assert isinstance(error, LLMTimeout) and str(error) == "timeout after 0.8 s"
    assert 0.75 < elapsed < 0.8 + MARGIN, elapsed


def test_a_connection_cut_off_mid_answer_is_closed_and_never_reused(llm):
    dripping = Reply("천천히", drip="body")
    llm.nlg(dripping, "다음 답이에요.")
    client = client_for(llm)
    with pytest.raises(LLMTimeout):
        ask(client, seconds=0.8)
    assert ask(client) == "다음 답이에요."  # not the rest of the dripped answer
    assert client.connections_opened == 2
    ends = time.monotonic() + 3.0
    while not any(r is dripping for r in llm.hangups) and time.monotonic() < ends:
        time.sleep(0.05)  # the server sees the close on one of its next writes
    assert any(r is dripping for r in llm.hangups)  # closed, not just left open


def test_connecting_takes_at_most_the_connect_timeout():
    with socket.socket() as full:  # a listener whose queue is full: connecting hangs
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        fillers = []
        try:
            for _ in range(4):
                filler = socket.socket()
                fillers.append(filler)
                filler.settimeout(0.2)
                try:
                    filler.connect(full.getsockname())
                except TimeoutError:
                    break
            else:
                pytest.skip("this system accepts connections past a full listen queue")
            client = ChatClient(LLMSettings(f"http://127.0.0.1:{full.getsockname()[1]}/v1", "m",
                                            timeout=5.0, connect_timeout=0.3))
            error, elapsed = timed_failure(client, seconds=5.0)
        finally:
            for filler in fillers:
                filler.close()
    assert isinstance(error, LLMTimeout) and str(error) == "no connection within 0.3 s"
    assert elapsed < 0.3 + MARGIN


def test_https_answers_and_its_deadline_holds(tls_server, monkeypatch):
    server, certificate = tls_server
    server.reset()
    monkeypatch.setenv("SSL_CERT_FILE", certificate)  # trust the test certificate
    server.nlg("보안 연결이에요.", Reply("천천히", drip="body"))
    client = client_for(server)
    assert client.address.startswith("https://127.0.0.1:")
    assert ask(client) == "보안 연결이에요."
    error, elapsed = timed_failure(client, seconds=1.0)
    assert isinstance(error, LLMTimeout) and str(error) == "turn budget of 1 s spent"
    assert elapsed < 1.0 + MARGIN
    assert client.connections_opened == 1  # the answer kept the TLS connection alive
    assert server.requests[0] == {"model": "test-model", "messages": MESSAGES}


def test_an_untrusted_https_certificate_is_unreachable(tls_server):
    server, _ = tls_server
    with pytest.raises(LLMUnreachable, match="^cannot reach https://127.0.0.1:"):
        ask(client_for(server))


# --- connections --------------------------------------------------------------------------------


def test_a_dropped_connection_is_retried(llm):
    llm.nlg(Reply(drop=True), "다시 왔어요.")
    client = client_for(llm)
    assert ask(client) == "다시 왔어요."
    assert client.journal.drain()[0].statuses == (0, 200)


def test_a_stale_kept_alive_connection_is_reopened_without_using_a_retry(llm):
    llm.nlg(Reply("first", close_after=True), "second")
    client = client_for(llm, retries=0)
    assert ask(client) == "first"
    time.sleep(0.05)  # the server has closed its end by now
    assert ask(client) == "second"
    assert client.connections_opened == 2


def test_a_server_that_is_not_there():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    client = ChatClient(LLMSettings(f"http://127.0.0.1:{port}/v1", "m", retries=2),
                        sleep=sleeps.append)
    with pytest.raises(LLMUnreachable, match=r"^cannot reach http://127\.0\.0\.1:\d+/v1/chat/"
                                             r"completions: Connection refused$"):
        ask(client)
    assert sleeps == []  # down is down: no retry


# --- malformed answers --------------------------------------------------------------------------


@pytest.mark.parametrize("body,message", [
    (b"<html>oops</html>", "malformed response: not a chat completion"),
    (b'{"choices": []}', "malformed response: no choices[0].message.content"),
    (b'{"choices": [{"message": {"content": null}}]}', "no choices[0].message.content"),
    (b'{"object": "chat.completion"}', "not a chat completion"),
    (b"", "not a chat completion"),
])
def test_malformed_bodies_are_errors_with_the_raw_body_in_the_journal(llm, body, message):
    llm.nlg(Reply(body=body))
    client = client_for(llm)
    with pytest.raises(LLMBadResponse, match=message.replace("[", r"\[").replace("]", r"\]")):
        ask(client)
    assert client.journal.drain()[0].answer == body.decode()


# --- settings -----------------------------------------------------------------------------------


def test_settings_from_the_environment_and_flags():
    env = {"MAGO_LLM_URL": "http://h:1/v1", "MAGO_LLM_MODEL": "m1", "MAGO_LLM_API_KEY": "k",
           "MAGO_LLM_TIMEOUT": "2.5"}
    settings = settings_from(environ=env)
    assert (settings.url, settings.model, settings.api_key, settings.timeout) == (
        "http://h:1/v1", "m1", "k", 2.5)
    flagged = settings_from("http://x/v1", "m2", "k2", "0.2", "1", environ=env)
    assert (flagged.url, flagged.model, flagged.api_key, flagged.timeout, flagged.turn_budget) \
        == ("http://x/v1", "m2", "k2", 0.2, 1.0)
    assert flagged.connect_timeout == 0.2  # never longer than the read timeout
    assert "k2" not in repr(flagged)


@pytest.mark.parametrize("args,fragment", [
    ({}, "needs the server's URL and model: set MAGO_LLM_URL and MAGO_LLM_MODEL"),
    ({"url": "http://h/v1"}, "needs the server's model"),
    ({"url": "ftp://h/v1", "model": "m"}, "must look like http://localhost:11434/v1"),
    ({"url": "http://:80/v1", "model": "m"}, "must look like"),
    ({"url": "http://h/v1", "model": "m", "timeout": "abc"},
     "--llm-timeout must be a number of seconds above 0 and at most 86400, got 'abc'"),
    ({"url": "http://h/v1", "model": "m", "budget": "0"},
     "--llm-budget must be a number of seconds above 0 and at most 86400, got '0'"),
    ({"url": "http://h/v1", "model": "m", "timeout": "1e300"},
     "--llm-timeout must be a number of seconds above 0 and at most 86400, got '1e300'"),
    ({"url": "http://h/v1", "model": "m", "budget": "86400.5"}, "at most 86400, got '86400.5'"),
    ({"url": "http://h/v1", "model": "m", "timeout": "nan"}, "at most 86400, got 'nan'"),
    ({"url": "http://h/v1", "model": "m", "timeout": "inf"}, "at most 86400, got 'inf'"),
    ({"url": "http://h/v1", "model": "m", "budget": "-inf"}, "at most 86400, got '-inf'"),
])
def test_bad_settings_are_one_line_errors(args, fragment):
    with pytest.raises(LLMConfigError) as raised:
        settings_from(**args, environ={})
    assert fragment in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("name,value", [("MAGO_LLM_TIMEOUT", "-1"), ("MAGO_LLM_TIMEOUT", "inf"),
                                        ("MAGO_LLM_BUDGET", "1e300"), ("MAGO_LLM_BUDGET", "NaN")])
def test_a_bad_number_in_the_environment_names_the_variable(name, value):
    env = {"MAGO_LLM_URL": "http://h/v1", "MAGO_LLM_MODEL": "m", name: value}
    with pytest.raises(LLMConfigError) as raised:
        settings_from(environ=env)
    assert str(raised.value) == (f"{name} must be a number of seconds above 0 and at most 86400, "
                                 f"got {value!r}")


def test_a_day_is_the_longest_timeout_and_budget():
    settings = settings_from("http://h/v1", "m", timeout="86400", budget="86400", environ={})
    assert (settings.timeout, settings.turn_budget) == (86400.0, 86400.0)


ENV = {"MAGO_LLM_URL": "http://h/v1", "MAGO_LLM_MODEL": "m"}


@pytest.mark.parametrize("flag,env,source,problem", [
    ("abc\r\nX-Evil: 1", None, "--llm-api-key", "a line break"),
    (None, "sk-abc\ndef", "$MAGO_LLM_API_KEY", "a line break"),
    (None, "키123", "$MAGO_LLM_API_KEY", "a non-ASCII character"),
    ("sk-é", None, "--llm-api-key", "a non-ASCII character"),
    ("sk-a\tb", None, "--llm-api-key", "a control character"),
])
def test_an_api_key_that_cannot_be_a_header_is_refused_at_start_up(flag, env, source, problem):
    environ = {**ENV, **({"MAGO_LLM_API_KEY": env} if env else {})}
    with pytest.raises(LLMConfigError) as raised:
        settings_from(api_key=flag, environ=environ)
    message = str(raised.value)
    assert message == (f"the LLM API key ({source}) contains {problem}; check how it was set "
                       "(a key is one line of printable ASCII)")
    assert "abc" not in message and "키" not in message and "sk-" not in message


@pytest.mark.parametrize("raw,key", [("sk-abc\n", "sk-abc"), ("  sk-abc \r\n", "sk-abc"),
                                     (" \n", None), ("", None)])
def test_whitespace_around_an_api_key_is_taken_off(raw, key):
    assert settings_from(environ={**ENV, "MAGO_LLM_API_KEY": raw}).api_key == key


def test_a_client_refuses_a_key_that_cannot_be_a_header_without_quoting_it():
    with pytest.raises(LLMConfigError) as raised:
        ChatClient(LLMSettings("http://127.0.0.1:1/v1", "m", api_key="sk-secret\r\nX-Evil: 1"))
    assert str(raised.value) == "LLMSettings.api_key contains a line break"


@pytest.mark.parametrize("url,expected", [
    ("http://localhost:11434/v1", ("http", "localhost", 11434, "/v1/chat/completions")),
    ("http://localhost:8000/v1/", ("http", "localhost", 8000, "/v1/chat/completions")),
    ("https://api.example.com/v1/chat/completions",
     ("https", "api.example.com", None, "/v1/chat/completions")),
    ("http://gw:8080", ("http", "gw", 8080, "/v1/chat/completions")),
    ("http://gw/openai/v1?api-version=2", ("http", "gw", None,
                                           "/openai/v1/chat/completions?api-version=2")),
])
def test_endpoint_of_a_base_url(url, expected):
    assert endpoint(url) == expected
