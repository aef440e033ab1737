"""Webhook skills (SPEC 15): a declared skill that POSTs to the business's own service.

In: a scenario's `ir.SkillDecl` of kind `webhook`, the environment (for `${NAME}` forms) and
the mode (`live`, or off for `mgi run`/`test`/`fuzz` unless asked). Out: `Skill` objects for
the registry (`webhook_skills`), or `WebhookConfigError` (one line, at start) for a variable
that is not set or a host `MAGO_WEBHOOK_HOSTS` does not list.
Off, a webhook fails with "webhooks off" (`WebhooksOff`); for `mgi fuzz` it is a
`WebhookStandIn`, which the fuzzer switches per conversation between that failure and an
`ok` answer with a stand-in value of each declared result field's type, so that both the
success and the failure paths are explored without calling the network.
A run POSTs `{"action_id", "session_id", "scenario", "node", "arguments", "slots"}` with
`Idempotency-Key: ACTION_ID` over one pooled `urllib3.PoolManager` per process. The whole call,
retries included, stays within `timeout_seconds`: 5xx, 429 (its `Retry-After` honoured when
it fits), a refused connection and a timeout are retried with exponential back-off while the
budget lasts; any other 4xx fails at once with `skill.data.error` = the status; a redirect is
not followed (it fails); an answer over 1 MiB fails without being held (read in chunks, the
read stopped at the cap). A 2xx answer must be a JSON object: its declared `result` fields
become `skill.data` (undeclared ones dropped, a wrong type fails the run).
An API-posted scenario's webhook connects only to a global address: its pool's connections
resolve the name once per connection, check every answer and connect to
the checked address (no second lookup a rebinding DNS answer could turn to 127.0.0.1).
Secrets: the resolved url and header values live only in the `Webhook` object (its repr hides
them); no error line names them, and the IR keeps the `${NAME}` form.
"""

from __future__ import annotations

import copy
import functools
import ipaddress
import os
import random
import socket
import ssl
import threading
import time
from email.utils import parsedate_to_datetime
from typing import Any
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlsplit

import msgspec

from .. import MagoError
from .. import __version__, ir
from ..fields import skill_problem
from .registry import Skill, SkillContext, SkillResult

ANSWER_LIMIT = 1 << 20  # bytes; a larger answer fails (SPEC 15)
HOSTS_ENV = "MAGO_WEBHOOK_HOSTS"  # comma-separated host names a webhook may call
CA_FILE_ENV = "MAGO_WEBHOOK_CA_FILE"  # a PEM bundle for receivers behind a private CA
OFF_ERROR = "webhooks off"
MARGIN_MS = 500  # run_skill waits this much past the budget, so our own `timeout` wins
BACKOFF_FIRST, BACKOFF_CAP = 0.1, 2.0  # seconds: 0.1, 0.2, 0.4 ... with jitter
ENV_PREFIX, ENV_SUFFIX = "${", "}"
_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
    "any": lambda v: True,
}
# What a `WebhookStandIn` answers for each result type (SPEC 15's result types).
STAND_IN_VALUES: dict[str, Any] = {"string": "x", "number": 1, "integer": 1, "boolean": True,
                                   "object": {}, "list": [], "any": "x"}


class WebhookConfigError(MagoError):
    """A webhook that cannot be set up; the message is one line for the operator."""


class Refused(MagoError):
    """A call that must not be made or whose answer must not be used (one line, final)."""


# --- setting up -----------------------------------------------------------------------------


def webhook_skills(program: ir.Program, live: bool, environ: Mapping[str, str] | None = None,
                   guard: Callable[[str], str | None] | None = None,
                   stand_ins: bool = False) -> list[Skill]:
    """The scenario's webhooks as skills: real ones when `live`, else ones that fail with
    "webhooks off" (`stand_ins`, for `mgi fuzz`: `WebhookStandIn`s, failing until switched
    to answering). With a `guard` (API-posted scenarios: `private_address`), every
    connection goes to an address resolved once and checked by that rule (pinned)."""
    environ = os.environ if environ is None else environ
    bad = skill_problem(program.skills)  # a hand-made IR: the compiler never writes one
    if bad is not None:
        raise WebhookConfigError(f"skill {bad[0]!r} in the IR {bad[1]}; recompile with mgc")
    decls = [d for d in program.skills if d.kind == "webhook"]
    if not live:
        return [WebhookStandIn(d) if stand_ins else WebhooksOff(d.name) for d in decls]
    hosts = allowed_hosts(environ)
    skills: list[Skill] = []
    for decl in decls:
        url = resolved(decl.url, decl.name, "url", environ)
        host = urlsplit(url).hostname or ""
        if urlsplit(url).scheme not in ("http", "https") or not host:
            raise WebhookConfigError(f"webhook {decl.name!r}: its url (from the environment) "
                                     "is not an http(s) address")
        if hosts is not None and host.lower() not in hosts:
            raise WebhookConfigError(f"webhook {decl.name!r}: host {host} is not in "
                                     f"{HOSTS_ENV}; add it there or change the url")
        headers = {k: resolved(v, decl.name, f"header {k}", environ) for k, v in decl.headers}
        skills.append(Webhook(decl, program.name, url, headers, guard))
    return skills


def resolved(value: str, skill: str, what: str, environ: Mapping[str, str]) -> str:
    """`value`, or the variable it names when it is a `${NAME}` form (checked by mgc)."""
    if not (value.startswith(ENV_PREFIX) and value.endswith(ENV_SUFFIX)):
        return value
    name = value[len(ENV_PREFIX):-len(ENV_SUFFIX)]
    found = environ.get(name)
    if not found:
        raise WebhookConfigError(f"webhook {skill!r}: {what} reads ${{{name}}}, which is not "
                                 "set; export it before starting")
    return found


def allowed_hosts(environ: Mapping[str, str]) -> frozenset[str] | None:
    """The hosts of `MAGO_WEBHOOK_HOSTS`, or None when it is not set (every host)."""
    text = environ.get(HOSTS_ENV)
    if text is None:
        return None
    return frozenset(h.strip().lower() for h in text.split(",") if h.strip())


def private_address(host: str) -> str | None:
    """Why `host` must not be called from a scenario posted to the API (it resolves to a
    loopback, link-local, private or otherwise internal address), or None."""
    try:
        checked_address(host)
    except Refused as refused:
        return str(refused)
    return None


def checked_address(host: str, port: int | None = None) -> str:
    """The address a posted scenario's connection to `host` goes to: resolved once and every
    answer checked, so that the connection is made to the address that was checked (a
    second lookup, which a DNS answer could rebind to 127.0.0.1, is never made); `Refused`
    when it does not resolve or any answer is internal."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise Refused(f"host {host} does not resolve") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if not address.is_global or address.is_multicast:
            raise Refused(f"host {host} is an internal address ({address}); not called from "
                          "an API-posted scenario")
    return infos[0][4][0]


def missing_python_skills(program: ir.Program, installed: Iterable[str]) -> list[str]:
    """One warning line per declared python skill that is not installed (SPEC 14.7)."""
    have = set(installed)
    return [f"mgi: warning: skill {d.name!r} is declared as a python skill but no installed "
            f"package provides it (entry point group mago.skills); its runs fail"
            for d in program.skills if d.kind == "python" and d.name not in have]


# --- the pooled client ----------------------------------------------------------------------

_CLIENTS: dict[tuple[str | None, bool], Any] = {}  # (CA file, pinned) -> its pool manager
_CLIENTS_LOCK = threading.Lock()
# Per host: up to 64 kept-alive connections (a 65th call at once opens one more and drops it
# after); up to 64 hosts. urllib3 keeps each host's idle connections in a LIFO queue: taking
# and returning one is O(1), however many are open.
_POOL = {"num_pools": 64, "maxsize": 64, "block": False}


def shared_client(ca_file: str | None = None, pinned: bool = False) -> Any:
    """One `urllib3.PoolManager` per CA file for the process: pooled, kept-alive connections
    (TCP_NODELAY, urllib3's default), no retries or redirects of its own, TLS verified; with
    `pinned` (API-posted scenarios), one whose every connection goes to a checked address."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get((ca_file, pinned))
        if client is None:
            import urllib3  # only a scenario with a webhook pays for it

            # the CA file read once, into the context (urllib3 would read a `ca_certs` file
            # again for every new connection)
            client = urllib3.PoolManager(
                retries=False, cert_reqs="CERT_REQUIRED",
                ssl_context=ssl.create_default_context(cafile=ca_file), **_POOL)
            if pinned:
                client.pool_classes_by_scheme = _pinned_pool_classes()
            _CLIENTS[(ca_file, pinned)] = client
        return client


@functools.cache
def _pinned_pool_classes() -> dict[str, type]:
    """urllib3's HTTP and HTTPS pools with connections that connect only to the address
    `checked_address` resolved and checked, never to a second lookup of the name (urllib3's
    extension point: a pool's `ConnectionCls`); TLS still verifies the name."""
    from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
    from urllib3.connection import HTTPConnection, HTTPSConnection

    def _new_conn(self: Any) -> Any:
        self._dns_host = checked_address(self.host, self.port)  # `Refused`: final
        return self._resolved_conn()

    def pinned(base: type) -> type:
        return type(f"Pinned{base.__name__}", (base,),
                    {"_new_conn": _new_conn, "_resolved_conn": base._new_conn})

    return {"http": type("PinnedHTTPPool", (HTTPConnectionPool,),
                         {"ConnectionCls": pinned(HTTPConnection)}),
            "https": type("PinnedHTTPSPool", (HTTPSConnectionPool,),
                          {"ConnectionCls": pinned(HTTPSConnection)})}


# --- a run ----------------------------------------------------------------------------------


class WebhooksOff(Skill):
    """A webhook under `mgi run`/`test`/`fuzz` without `--webhooks live` (SPEC 17.9)."""

    def __init__(self, name: str):
        self.name = name

    def run(self, args: dict[str, Any], context: SkillContext) -> SkillResult:
        return SkillResult("failed", {"error": OFF_ERROR})


class WebhookStandIn(WebhooksOff):
    """`mgi fuzz`'s webhook when webhooks are off: it never calls the network. While
    `answering` (the fuzzer sets it per conversation, from `Conversation.offline`) a run is
    `ok` with `stand_in_data`; otherwise it fails with "webhooks off", as `WebhooksOff` does."""

    def __init__(self, decl: ir.SkillDecl):
        super().__init__(decl.name)
        self.fields = decl.result
        self.answering = False

    def stand_in_data(self) -> dict[str, Any]:
        """A value of its declared type for each result field (`STAND_IN_VALUES`), fresh."""
        return {f.name: copy.deepcopy(STAND_IN_VALUES[f.value_type]) for f in self.fields}

    def run(self, args: dict[str, Any], context: SkillContext) -> SkillResult:
        if not self.answering:
            return super().run(args, context)
        return SkillResult("ok", self.stand_in_data())


def stand_ins(registry: Any) -> list[WebhookStandIn]:
    """The `WebhookStandIn`s of a skill registry (none for None)."""
    if registry is None:
        return []
    found = (registry.get(name) for name in registry.names())
    return [skill for skill in found if isinstance(skill, WebhookStandIn)]


class Webhook(Skill):
    """One declared webhook, its `${NAME}` forms resolved."""

    def __init__(self, decl: ir.SkillDecl, scenario: str, url: str, headers: dict[str, str],
                 guard: Callable[[str], str | None] | None = None,
                 ca_file: str | None = None):
        self.name, self.decl, self.scenario = decl.name, decl, scenario
        self._url, self._headers, self._guard = url, headers, guard
        self._ca_file = ca_file if ca_file is not None else os.environ.get(CA_FILE_ENV)
        self.budget = decl.timeout_seconds
        self.timeout_ms = int(self.budget * 1000) + MARGIN_MS  # run_skill's own limit

    def __repr__(self) -> str:  # never the url or the headers: they may hold secrets
        return f"Webhook({self.name!r})"

    def run(self, args: dict[str, Any], context: SkillContext) -> SkillResult:
        payload = msgspec.json.encode({
            "action_id": context.action_id, "session_id": context.session_id,
            "scenario": self.scenario, "node": context.node_id, "arguments": args,
            "slots": context.slots})
        headers = {**self._headers, "Content-Type": "application/json",
                   "Idempotency-Key": context.action_id, "User-Agent": f"mago/{__version__}",
                   "Accept-Encoding": "identity"}  # read as sent: the cap counts real bytes
        try:
            answer = self._with_retries(payload, headers, time.monotonic() + self.budget)
        except _Status as answer:
            return SkillResult("failed", {"error": answer.status})
        except Refused as refused:
            return SkillResult("failed", {"error": str(refused)})
        except _OutOfTime as spent:
            return SkillResult("timeout", {"error": str(spent)})
        return typed_result(answer, self.decl.result)

    def _with_retries(self, payload: bytes, headers: dict, deadline: float) -> Any:
        """The decoded 2xx answer; `Refused` (final) or `_OutOfTime` when the budget ends."""
        last = "no answer"
        for attempt in range(self.decl.retries + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            retry_after = None
            try:
                return self._attempt(payload, headers, left)
            except _Retryable as problem:
                last, retry_after = str(problem), problem.retry_after
            if attempt == self.decl.retries:
                break
            pause = _pause(attempt, retry_after)
            if time.monotonic() + pause >= deadline:
                break
            time.sleep(pause)
        if "timed out" in last or deadline - time.monotonic() <= 0:
            raise _OutOfTime(f"webhook {self.name}: {last} (budget {self.budget:g} s)")
        raise Refused(f"webhook {self.name}: {last}")

    def _attempt(self, payload: bytes, headers: dict, left: float) -> Any:
        from urllib3 import Timeout, exceptions

        client = shared_client(self._ca_file, pinned=self._guard is not None)
        try:
            response = client.request("POST", self._url, body=payload, headers=headers,
                                      timeout=Timeout(connect=left, read=left),
                                      redirect=False, preload_content=False,
                                      decode_content=False)
        except exceptions.NewConnectionError:  # before its base class, ConnectTimeoutError
            raise _Retryable("connection refused or unreachable") from None
        except exceptions.TimeoutError:
            raise _Retryable("timed out") from None
        except exceptions.SSLError as error:
            if "CERTIFICATE" in str(error).upper():  # retrying will not make it trusted
                raise Refused(f"webhook {self.name}: TLS certificate not trusted (set "
                              f"{CA_FILE_ENV} for a private CA)") from None
            raise Refused(f"webhook {self.name}: TLS failed") from None
        except exceptions.ProtocolError:
            raise _Retryable("connection dropped") from None
        except exceptions.HTTPError as error:  # a bad address: not worth a retry
            raise Refused(f"webhook {self.name}: {type(error).__name__}") from None
        return _answered(response, time.monotonic() + left, self.name)


class _Retryable(MagoError):
    def __init__(self, message: str, retry_after: str | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class _OutOfTime(MagoError):
    pass


class _Status(Refused):
    """A 4xx answer: `failed` at once, `skill.data.error` = the status (SPEC 15)."""

    def __init__(self, status: int):
        super().__init__(f"status {status}")
        self.status = status


def _pause(attempt: int, retry_after: str | None) -> float:
    """Seconds before the next attempt: the server's `Retry-After`, else back-off."""
    if retry_after:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(retry_after).timestamp() - time.time())
            except (TypeError, ValueError):
                pass
    step = min(BACKOFF_CAP, BACKOFF_FIRST * (2 ** attempt))
    return step * (0.5 + random.random() / 2)


def _answered(response: Any, deadline: float, name: str) -> Any:
    """The decoded JSON of a 2xx answer; else `_Retryable` (5xx, 429), `Refused` (a
    redirect) or `_Status` (another 4xx). The connection goes back to the pool only when
    the answer was read to its end; otherwise it is closed (a refused 10 MB answer is not
    drained)."""
    from urllib3 import exceptions

    status, done = response.status, False
    try:
        if 200 <= status < 300:
            answer = _json_answer(response, deadline, name)
            done = True
            return answer
        if status == 429 or status >= 500:
            raise _Retryable(f"status {status}", response.headers.get("retry-after"))
        if 300 <= status < 400:
            raise Refused(f"webhook {name}: redirect {status} not followed")
        raise _Status(status)
    except exceptions.TimeoutError:
        raise _Retryable("timed out") from None
    except (exceptions.ProtocolError, exceptions.SSLError):
        raise _Retryable("connection dropped") from None
    finally:
        if not done:
            response.close()
        response.release_conn()


def _json_answer(response: Any, deadline: float, name: str) -> Any:
    """The answer's JSON, read in chunks: more than `ANSWER_LIMIT` bytes is refused as soon
    as it is seen (the declared length, or the bytes so far), never held in memory."""
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > ANSWER_LIMIT:
        raise Refused(f"webhook {name}: answer over {ANSWER_LIMIT >> 20} MiB")
    chunks, size = [], 0
    for chunk in response.stream(1 << 16, decode_content=False):
        size += len(chunk)
        if size > ANSWER_LIMIT:
            raise Refused(f"webhook {name}: answer over {ANSWER_LIMIT >> 20} MiB")
        if time.monotonic() > deadline:
            raise _Retryable("timed out")
        chunks.append(chunk)
    try:
        return msgspec.json.decode(b"".join(chunks))
    except msgspec.DecodeError:
        raise Refused(f"webhook {name}: answer is not JSON") from None


def typed_result(answer: Any, fields: list[ir.SkillField]) -> SkillResult:
    """`ok` with the declared result fields of a JSON object answer, else `failed`."""
    if not isinstance(answer, dict):
        return SkillResult("failed", {"error": "answer is not a JSON object"})
    data = {}
    for field in fields:
        if field.name in answer:
            value = answer[field.name]
            if not _TYPE_CHECKS[field.value_type](value):
                return SkillResult("failed", {"error": f"result field {field.name!r} is not "
                                                       f"of type {field.value_type}"})
            data[field.name] = value
    return SkillResult("ok", data)
