"""The LLM transport: one chat-completions request at a time over a kept-alive connection.

In: `LLMSettings` (base URL, model, API key, timeouts, retries, per-turn budget), then chat
messages with an optional `response_format` and the turn's `Budget`.
Out: the model's answer text (`choices[0].message.content`), or an `LLMError` whose message
is one short line saying what went wrong ("timeout after 2.0 s", "turn budget of 4 s spent",
"server error 503 after 3 attempts"); the NLU and NLG put that line in their fallback trace.
After: a call never takes longer than the turn's budget allows, and one request never longer
than its timeout cut to what is left of the budget. That limit is a deadline on the whole
exchange (connecting, sending, the status line and headers, the body), not on each read: a
server that drips its answer a byte at a time, in chunks or after endless `100 Continue`
lines is cut off like a silent one, and the connection it held is closed, never reused
half-read. Connecting (every address of the host, and the TLS handshake) takes at most
`connect_timeout` of that; looking the host's name up is left to the system's resolver.
Only 408, 429 and 5xx answers and connections dropped mid-answer are retried, at most
`retries` times, with exponential backoff or the server's `Retry-After` when that fits in the
budget; a refused connection and a timeout are not (a server that is down or stuck stays so
longer than a turn). A connection the server closed while idle is reopened and the request
resent at once (a kept-alive socket going stale is normal). The API key is checked before
the first request (one line of printable ASCII; `settings_from` takes surrounding whitespace
off) and goes only into the `Authorization` header: it is never in a repr, an error or the
journal.

The protocol is the one OpenAI, vLLM, Ollama, llama.cpp's server and most gateways speak:
`POST {base}/chat/completions` with `{"model", "messages", "response_format"?}`. Standard
library only (http.client over sockets this module connects, and reads through a deadline);
the connection is guarded by a lock, so one client may serve several threads, one request at
a time.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import socket
import ssl
import threading
import time
from collections import OrderedDict, deque
from typing import Any
from collections.abc import Callable
from urllib.parse import urlsplit

import msgspec

from .. import MagoError
from .sockets import DeadlineSocket, connected_socket, seconds_until

ENV_URL, ENV_MODEL, ENV_API_KEY = "MAGO_LLM_URL", "MAGO_LLM_MODEL", "MAGO_LLM_API_KEY"
ENV_TIMEOUT, ENV_BUDGET = "MAGO_LLM_TIMEOUT", "MAGO_LLM_BUDGET"
RETRYABLE_STATUSES = frozenset((408, 429, 500, 502, 503, 504))
# A kept-alive socket the server has closed fails in one of these ways on reuse.
STALE_CONNECTION = (http.client.RemoteDisconnected, http.client.BadStatusLine,
                    http.client.CannotSendRequest, http.client.ResponseNotReady,
                    ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_SECONDS = 86400  # the longest timeout or budget accepted: a day
JOURNAL_LIMIT = 64  # entries kept when nobody drains the journal
FALLBACK_MARK = " (llm fallback: "  # in `fallback_source`: `rules (llm fallback: REASON)`


class LLMError(MagoError):
    """An LLM call that produced no usable answer; the message is one short line."""


class LLMTimeout(LLMError):
    """The server did not answer within the request timeout or the turn's budget."""


class LLMRejected(LLMError):
    """A 4xx answer other than 408/429: resending the same request will not help."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class LLMUnavailable(LLMError):
    """Server errors, rate limits or connection failures that outlasted the retries."""


class LLMUnreachable(LLMUnavailable):
    """No connection at all (refused, unknown host): a server that is down stays down for
    longer than a turn, so this is not retried."""


class LLMBadResponse(LLMError):
    """A 200 answer that is not a chat completion (not JSON, no message content)."""

    def __init__(self, message: str, raw: str | None = None):
        super().__init__(message)
        self.raw = raw  # the body as received, for the journal


class LLMConfigError(ValueError, MagoError):
    """Settings that cannot work (no URL, a bad timeout); one line saying what to set."""


class LLMSettings:
    """Where the model is and how long to wait for it. The API key never shows in `repr`."""

    __slots__ = ("url", "model", "api_key", "timeout", "connect_timeout", "turn_budget",
                 "retries", "backoff")

    def __init__(self, url: str, model: str, api_key: str | None = None, timeout: float = 10.0,
                 connect_timeout: float = 3.0, turn_budget: float = 15.0, retries: int = 2,
                 backoff: float = 0.25):
        self.url, self.model, self.api_key = url, model, api_key or None
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.turn_budget, self.retries, self.backoff = turn_budget, retries, backoff

    def __repr__(self) -> str:
        key = "set" if self.api_key else "none"
        return (f"LLMSettings(url={self.url!r}, model={self.model!r}, api_key={key}, "
                f"timeout={self.timeout}, connect_timeout={self.connect_timeout}, "
                f"turn_budget={self.turn_budget}, retries={self.retries})")


def settings_from(url: str | None = None, model: str | None = None, api_key: str | None = None,
                  timeout: float | None = None, budget: float | None = None,
                  environ: dict | None = None, needed_by: str = "the LLM") -> LLMSettings:
    """Settings from explicit values, else the `MAGO_LLM_*` environment; `LLMConfigError` if
    the URL or model is missing, a number is not a number of seconds in (0, MAX_SECONDS], or
    the API key cannot go into a header (`api_key_problem`). The key is used without its
    surrounding whitespace (a key file's trailing newline). Connecting may take up to 3 s,
    never longer than the request timeout."""
    env = os.environ if environ is None else environ
    url = url or env.get(ENV_URL)
    model = model or env.get(ENV_MODEL)
    if not url or not model:
        missing = " and ".join(n for n, v in (("URL", url), ("model", model)) if not v)
        verb = "need" if " and " in needed_by else "needs"
        raise LLMConfigError(
            f"{needed_by} {verb} the server's {missing}: set {ENV_URL} and {ENV_MODEL} "
            "or pass --llm-url and --llm-model (e.g. http://localhost:11434/v1 and llama3.1)")
    endpoint(url)  # fails now, with a clear line, rather than on the first turn
    read = _seconds(timeout, env.get(ENV_TIMEOUT), 10.0, "--llm-timeout", ENV_TIMEOUT)
    turn = _seconds(budget, env.get(ENV_BUDGET), max(15.0, read), "--llm-budget", ENV_BUDGET)
    key = _api_key(api_key, env.get(ENV_API_KEY))
    return LLMSettings(url, model, key, read, min(3.0, read), turn)


def _seconds(given: float | None, env_text: str | None, default: float, flag: str,
             env_name: str) -> float:
    value: Any = given if given is not None else env_text
    if value is None or value == "":
        return default
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not 0 < seconds <= MAX_SECONDS:  # also refuses nan and inf
        source = flag if given is not None else env_name
        raise LLMConfigError(f"{source} must be a number of seconds above 0 and at most "
                             f"{MAX_SECONDS}, got {value!r}")
    return seconds


def _api_key(given: str | None, env_text: str | None) -> str | None:
    """The API key from the flag, else the environment, without surrounding whitespace; None
    when there is none; `LLMConfigError` (naming where it came from, never the key) when it
    cannot go into a header."""
    source = "--llm-api-key" if given else f"${ENV_API_KEY}"
    key = (given or env_text or "").strip()
    problem = api_key_problem(key)
    if problem:
        raise LLMConfigError(f"the LLM API key ({source}) contains {problem}; check how it "
                             "was set (a key is one line of printable ASCII)")
    return key or None


def api_key_problem(key: str) -> str | None:
    """What keeps `key` out of an `Authorization` header ("a line break", "a non-ASCII
    character", "a control character"), or None when it fits."""
    if "\r" in key or "\n" in key:
        return "a line break"
    if not key.isascii():
        return "a non-ASCII character"
    if not key.isprintable():
        return "a control character"
    return None


def endpoint(url: str) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path) of the chat-completions endpoint for a base URL.

    `http://host:8000/v1` -> path `/v1/chat/completions`; a URL already ending in
    `/chat/completions` is used as is; a bare host gets `/v1/chat/completions`.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMConfigError(f"the LLM URL must look like http://localhost:11434/v1, got {url!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = (path or "/v1") + "/chat/completions"
    if parts.query:
        path += "?" + parts.query
    return parts.scheme, parts.hostname, port, path


# --- time --------------------------------------------------------------------------------------


class Budget:
    """The time one turn may spend on LLM calls, NLU and NLG together."""

    __slots__ = ("seconds", "deadline", "clock")

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        self.seconds, self.clock = seconds, clock
        self.deadline = clock() + seconds

    def remaining(self) -> float:
        return self.deadline - self.clock()

    def spent_error(self) -> LLMTimeout:
        return LLMTimeout(f"turn budget of {self.seconds:g} s spent")


class TurnBudgets:
    """One `Budget` per (session, turn): the NLU starts it, the NLG of the same turn shares it.
    Only the latest turn of each session is kept, and at most `limit` sessions."""

    def __init__(self, seconds: float, limit: int = 4096,
                 clock: Callable[[], float] = time.monotonic):
        self.seconds, self.limit, self.clock = seconds, limit, clock
        self._turns: OrderedDict[str, tuple[int, Budget]] = OrderedDict()
        self._lock = threading.Lock()

    def for_turn(self, session_id: str, turn: int) -> Budget:
        with self._lock:
            held = self._turns.get(session_id)
            if held is not None and held[0] == turn:
                self._turns.move_to_end(session_id)
                return held[1]
            budget = Budget(self.seconds, self.clock)
            self._turns[session_id] = (turn, budget)
            self._turns.move_to_end(session_id)
            while len(self._turns) > self.limit:
                self._turns.popitem(last=False)
            return budget


# --- the journal (what --output-level debug prints) --------------------------------------------


class LLMCall(msgspec.Struct, frozen=True):
    """One `complete` call: the request as sent (no headers), every HTTP status, the answer."""

    purpose: str  # "nlu", "nlu repair", "nlg"
    url: str
    request: dict
    statuses: tuple = ()  # status per attempt; 0 = no HTTP answer (connection failed)
    answer: str | None = None  # the message content, or the raw body when it was malformed
    error: str | None = None
    seconds: float = 0.0


class LLMOutcome(msgspec.Struct, frozen=True):
    """Which plug-in produced a turn's NLU result or wording, and why ("nlg", "template (llm
    fallback: timeout after 2.0 s)")."""

    purpose: str
    source: str


class LLMJournal:
    """Calls and outcomes of the current turn, for the console; bounded, drained per turn."""

    def __init__(self, limit: int = JOURNAL_LIMIT):
        self._entries: deque = deque(maxlen=limit)  # the oldest go first
        self._lock = threading.Lock()

    def record(self, entry: LLMCall | LLMOutcome) -> None:
        with self._lock:
            self._entries.append(entry)

    def drain(self) -> list:
        with self._lock:
            entries = list(self._entries)
            self._entries.clear()
        return entries


# --- the client ----------------------------------------------------------------------------------


class _Message(msgspec.Struct):
    content: str | None = None


class _Choice(msgspec.Struct):
    message: _Message


class _Completion(msgspec.Struct):
    choices: list[_Choice]


_COMPLETION = msgspec.json.Decoder(_Completion)


class ChatClient:
    """`complete(messages, budget)` against one server, with retries inside the budget."""

    def __init__(self, settings: LLMSettings, journal: LLMJournal | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.journal = journal
        self.budgets = TurnBudgets(settings.turn_budget, clock=clock)
        self._scheme, self._host, self._port, self._path = endpoint(settings.url)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if settings.api_key:
            problem = api_key_problem(settings.api_key)
            if problem:  # else every request fails, with an error quoting the key
                raise LLMConfigError(f"LLMSettings.api_key contains {problem}")
            self._headers["Authorization"] = "Bearer " + settings.api_key
        self._sleep, self._clock = sleep, clock
        self._connection: http.client.HTTPConnection | None = None
        self._tls: ssl.SSLContext | None = None  # made on the first https connection
        self._lock = threading.Lock()
        self.connections_opened = 0

    @property
    def address(self) -> str:
        port = f":{self._port}" if self._port else ""
        return f"{self._scheme}://{self._host}{port}{self._path}"

    def complete(self, messages: list[dict], budget: Budget, purpose: str = "llm",
                 response_format: dict | None = None) -> str:
        """The model's answer to `messages`; `LLMError` when there is none in time."""
        request: dict[str, Any] = {"model": self.settings.model, "messages": messages}
        if response_format is not None:
            request["response_format"] = response_format
        body = msgspec.json.encode(request)
        started, statuses = self._clock(), []
        answer = error = None
        try:
            answer = self._with_retries(body, budget, statuses)
            return answer
        except LLMError as failure:
            error = str(failure)
            answer = getattr(failure, "raw", None)
            raise
        finally:
            if self.journal is not None:
                self.journal.record(LLMCall(purpose, self.address, request, tuple(statuses),
                                            answer, error, self._clock() - started))

    def close(self) -> None:
        with self._lock:
            self._drop()

    # --- attempts ------------------------------------------------------------------------------

    def _with_retries(self, body: bytes, budget: Budget, statuses: list) -> str:
        attempt = 0
        while True:
            seconds, late = self._attempt_limit(budget)
            try:
                status, headers, data = self._post(body, time.monotonic() + seconds, late)
            except (LLMTimeout, LLMUnreachable):
                statuses.append(0)
                raise
            except LLMUnavailable as failure:  # a dropped or refused connection
                statuses.append(0)
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                self._pause(attempt, None, budget, f"{failure}{tries}")
                attempt += 1
                continue
            statuses.append(status)
            if status == 200:
                return _content(data)
            if status not in RETRYABLE_STATUSES:
                raise _rejected(status, data)
            self._pause(attempt, headers.get("Retry-After"), budget,
                        _status_line(status, attempt + 1))
            attempt += 1

    def _attempt_limit(self, budget: Budget) -> tuple[float, LLMTimeout]:
        """(seconds the next attempt may take, the error when they run out): the request
        timeout, or what is left of the turn's budget when that is less."""
        left = budget.remaining()
        if left <= 0:
            raise budget.spent_error()
        if left < self.settings.timeout:
            return left, budget.spent_error()
        return self.settings.timeout, LLMTimeout(f"timeout after {self.settings.timeout:.1f} s")

    def _pause(self, attempt: int, retry_after: str | None, budget: Budget, why: str) -> None:
        """Wait before the next attempt, or raise `LLMUnavailable(why)` when none is left."""
        if attempt >= self.settings.retries:
            raise LLMUnavailable(why)
        delay = self.settings.backoff * (2 ** attempt)
        asked = _retry_after_seconds(retry_after, time.time())
        if asked is not None:
            if asked >= budget.remaining():
                raise LLMUnavailable(f"{why}; the server asks to wait {asked:g} s, "
                                     "beyond the turn budget")
            delay = max(delay, asked)
        if delay >= budget.remaining():
            raise LLMUnavailable(f"{why}; no time left in the turn budget to retry")
        self._sleep(delay)

    def _post(self, body: bytes, deadline: float, late: LLMTimeout) -> tuple[int, Any, bytes]:
        """One request, over by `deadline` (`time.monotonic()`) or `late` is raised; a stale
        kept-alive connection is reopened and the request resent once, by the same deadline."""
        with self._lock:
            for fresh in (False, True):
                reused = self._connection is not None and self._connection.sock is not None
                try:
                    return self._exchange(body, deadline)
                except TimeoutError:
                    self._drop()  # maybe half-read: never reused
                    raise late from None
                except STALE_CONNECTION:
                    self._drop()
                    if reused and not fresh:
                        continue
                    raise LLMUnavailable("connection closed by the server") from None
                except OSError as error:
                    self._drop()
                    reason = error.strerror or type(error).__name__
                    raise LLMUnreachable(f"cannot reach {self.address}: {reason}") from None
                except http.client.HTTPException as error:
                    self._drop()
                    raise LLMUnavailable(f"broken HTTP answer ({type(error).__name__})") from None
            raise AssertionError("unreachable")

    def _exchange(self, body: bytes, deadline: float) -> tuple[int, Any, bytes]:
        connection = self._connect(deadline)
        connection.sock.deadline = deadline
        connection.request("POST", self._path, body, self._headers)
        with connection.getresponse() as response:  # closed (its reader too) if a read fails
            data = response.read(MAX_BODY_BYTES + 1)
        if response.will_close or len(data) > MAX_BODY_BYTES:
            self._drop()
        return response.status, response.headers, data[:MAX_BODY_BYTES]

    def _connect(self, deadline: float) -> http.client.HTTPConnection:
        """The kept-alive connection, or a new one over a socket connected here (never by
        http.client, whose timeouts are per read) and read through a `DeadlineSocket`."""
        connection = self._connection
        if connection is None or connection.sock is None:
            self._drop()
            if self._scheme == "https":
                connection = http.client.HTTPSConnection(self._host, self._port,
                                                         context=self._tls_context())
            else:
                connection = http.client.HTTPConnection(self._host, self._port)
            connection.auto_open = 0  # a lost socket is an error, not a connect without deadline
            connection.sock = DeadlineSocket(self._open_socket(connection.port, deadline))
            self._connection = connection
            self.connections_opened += 1
        return connection

    def _open_socket(self, port: int, deadline: float) -> socket.socket:
        """A socket connected to the server (TLS handshake done for https) within
        `connect_timeout` and before `deadline`."""
        until = min(deadline, time.monotonic() + self.settings.connect_timeout)
        try:
            sock = connected_socket(self._host, port, until)
            return self._tls_wrapped(sock, until) if self._scheme == "https" else sock
        except TimeoutError:
            if until < deadline:
                raise LLMTimeout("no connection within "
                                 f"{self.settings.connect_timeout:.1f} s") from None
            raise

    def _tls_wrapped(self, sock: socket.socket, until: float) -> ssl.SSLSocket:
        """`sock` after a TLS handshake done before `until` (closed if it fails)."""
        try:
            sock.settimeout(seconds_until(until))  # bounds the whole handshake
            return self._tls_context().wrap_socket(sock, server_hostname=self._host)
        except BaseException:
            sock.close()
            raise

    def _tls_context(self) -> ssl.SSLContext:
        """The system's trusted certificates (or `SSL_CERT_FILE`), HTTP/1.1 by ALPN, as
        http.client's default context."""
        if self._tls is None:
            self._tls = ssl.create_default_context()
            self._tls.set_alpn_protocols(["http/1.1"])
        return self._tls

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _content(data: bytes) -> str:
    try:
        completion = _COMPLETION.decode(data)
        if completion.choices and completion.choices[0].message.content is not None:
            return completion.choices[0].message.content
        problem = "no choices[0].message.content"
    except msgspec.DecodeError as error:
        problem = f"not a chat completion ({error})"
    raise LLMBadResponse(f"malformed response: {problem}", data.decode("utf-8", "replace"))


def _rejected(status: int, data: bytes) -> LLMRejected:
    hint = {401: "check the API key", 403: "check the API key",
            404: "check --llm-url and --llm-model"}.get(status)
    detail = _error_message(data)
    text = f"request rejected ({status}{': ' + detail if detail else ''})"
    return LLMRejected(text + (f"; {hint}" if hint else ""), status)


def _error_message(data: bytes) -> str:
    """The `error.message` of an OpenAI-style error body, shortened to one line."""
    try:
        value = json.loads(data)
        message = value.get("error", {}).get("message") if isinstance(value, dict) else None
    except (ValueError, AttributeError):
        message = None
    return one_line(message, 160) if isinstance(message, str) else ""


def one_line(text: str, limit: int) -> str:
    """`text` on one line (every run of whitespace made one space), cut after `limit`
    characters with "..." added when it is longer."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "..."


def _status_line(status: int, attempts: int) -> str:
    kind = "rate limited" if status == 429 else "server error"
    return f"{kind} {status} after {attempts} attempt{'s' if attempts > 1 else ''}"


def _retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now) if when is not None else None


# --- fallback sources (what the NLU and NLG say when the LLM did not speak) ---------------------


def failure_reason(error: BaseException) -> str:
    """Why an LLM plug-in fell back: an `LLMError`'s own line, else `internal error: T: ...`."""
    if isinstance(error, LLMError):
        return str(error)
    return f"internal error: {type(error).__name__}: {error}"


def fallback_source(used: str, reason: str) -> str:
    """The source of a result the LLM did not produce: `rules (llm fallback: timeout ...)`."""
    return f"{used}{FALLBACK_MARK}{reason})"


def read_fallback_source(source: str | None) -> tuple[str, str] | None:
    """(used, reason) of a `fallback_source` string; None for any other source."""
    if not source or FALLBACK_MARK not in source:
        return None
    used, _, reason = source.partition(FALLBACK_MARK)
    return used, reason.removesuffix(")")
