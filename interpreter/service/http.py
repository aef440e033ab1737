"""HTTP plumbing over ASGI: bodies with limits, JSON answers, the error envelope, routes.

In: the ASGI `scope` and `receive` of one request. Out: the body bytes (413 `too_large`
past the limit, read no further), a route's handler, and the bytes of every answer.
After: every failure a handler raises is an `ApiError` with a status, a code of
`api.ERROR_CODES` and one line; `error_body` is the only place the envelope is written.

No framework sits between uvicorn and the handlers: the API has a dozen routes, and a
framework's per-request machinery costs more than a whole turn (`make bench`, service: the
floor).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qsl

import msgspec

from .. import MagoError
from .api import Diagnostic, ErrorDetail, ErrorEnvelope

JSON_HEADERS = [(b"content-type", b"application/json")]
_ENCODER = msgspec.json.Encoder()


class ApiError(MagoError):
    """An answer other than success: status, code and one line for the client."""

    def __init__(self, status: int, code: str, message: str,
                 diagnostics: list[dict] | None = None, headers: list | None = None):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.diagnostics = diagnostics
        self.headers = headers or []

    def body(self) -> bytes:
        return error_body(self.code, self.message, self.diagnostics)


def error_body(code: str, message: str, diagnostics: list[dict] | None = None) -> bytes:
    found = None
    if diagnostics is not None:
        found = [msgspec.convert(d, Diagnostic) for d in diagnostics]
    return _ENCODER.encode(ErrorEnvelope(error=ErrorDetail(code=code, message=one_line(message),
                                                          diagnostics=found)))


def one_line(text: str, limit: int = 500) -> str:
    """`text` on one line, cut at `limit` characters (a message never carries a dump)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def encode(value: Any) -> bytes:
    return _ENCODER.encode(value)


class Request:
    """What a handler reads of one request; `note` carries what the log line reports."""

    __slots__ = ("method", "path", "query", "headers", "body", "params", "note", "scope")

    def __init__(self, scope: dict):
        self.scope = scope
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        self.query: bytes = scope.get("query_string", b"")
        self.headers: list[tuple[bytes, bytes]] = scope["headers"]
        self.body = b""
        self.params: dict[str, str] = {}
        self.note: dict[str, Any] = {}

    def header(self, name: bytes) -> bytes | None:
        for key, value in self.headers:
            if key == name:
                return value
        return None

    def query_params(self, known: tuple[str, ...]) -> dict[str, str]:
        """The query string's parameters (each once, each in `known`), or 422."""
        try:
            pairs = parse_qsl(self.query.decode("ascii"), keep_blank_values=True,
                              strict_parsing=bool(self.query), max_num_fields=len(known) + 1)
        except (UnicodeDecodeError, ValueError):
            raise ApiError(422, "invalid_request", "the query string cannot be read") from None
        params: dict[str, str] = {}
        for name, value in pairs:
            if name not in known:
                raise ApiError(422, "invalid_request", f"unknown query parameter {name!r}; "
                                                       f"known: {', '.join(known)}")
            if name in params:
                raise ApiError(422, "invalid_request", f"query parameter {name!r} given twice")
            params[name] = value
        return params


async def read_body(request: Request, receive: Callable, limit: int) -> bytes:
    """The whole body, or 413 as soon as it is known to be longer than `limit`."""
    declared = request.header(b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    message = await receive()
    body = message.get("body", b"")
    if not message.get("more_body"):
        if len(body) > limit:
            raise too_large(limit)
        return body
    parts, size = [body], len(body)
    while message.get("more_body"):
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        parts.append(chunk)
    return b"".join(parts)


def too_large(limit: int) -> ApiError:
    return ApiError(413, "too_large", f"the request body is over {limit // 1024} KiB; "
                                      "send less (a turn's text is at most 64 KiB)")


Handler = Callable[[Request], Awaitable[tuple[int, bytes]]]


class Route:
    __slots__ = ("handler", "limit")

    def __init__(self, handler: Handler, limit: int):
        self.handler, self.limit = handler, limit


class _Template:
    """A path with one `{name}` segment and the routes on it by method."""

    __slots__ = ("prefix", "suffix", "name", "methods")

    def __init__(self, prefix: str, name: str, suffix: str):
        self.prefix, self.name, self.suffix = prefix, name, suffix
        self.methods: dict[str, Route] = {}

    def match(self, path: str) -> str | None:
        if not (path.startswith(self.prefix) and path.endswith(self.suffix)):
            return None
        value = path[len(self.prefix):len(path) - len(self.suffix)]
        # a fixed suffix ends the value, so it may hold a `/` (a scenario named "a/b")
        return value if value and (self.suffix or "/" not in value) else None


class Router:
    """Exact paths, and paths with one `{name}` segment (`/dm/v1/session/{id}`)."""

    def __init__(self) -> None:
        self._exact: dict[str, dict[str, Route]] = {}
        self._templates: list[_Template] = []

    def add(self, method: str, path: str, route: Route) -> None:
        if "{" not in path:
            self._exact.setdefault(path, {})[method] = route
            return
        prefix, _, rest = path.partition("{")
        name, _, suffix = rest.partition("}")
        template = next((t for t in self._templates
                         if (t.prefix, t.name, t.suffix) == (prefix, name, suffix)), None)
        if template is None:
            template = _Template(prefix, name, suffix)
            self._templates.append(template)
        template.methods[method] = route

    def find(self, request: Request) -> Route:
        methods = self._exact.get(request.path)
        if methods is None:
            methods = self._match_template(request)
        if methods is None:
            raise ApiError(404, "not_found", f"no endpoint {request.path}; "
                                             "GET /openapi.json lists them")
        route = methods.get(request.method)
        if route is None:
            allowed = ", ".join(sorted(methods))
            raise ApiError(405, "method_not_allowed",
                           f"{request.method} is not allowed on {request.path}; use {allowed}",
                           headers=[(b"allow", allowed.encode())])
        return route

    def _match_template(self, request: Request) -> dict[str, Route] | None:
        for template in self._templates:
            value = template.match(request.path)
            if value is not None:
                request.params[template.name] = value
                return template.methods
        return None
