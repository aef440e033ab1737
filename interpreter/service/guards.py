"""The refusals a request meets before its handler, in SPEC 17.5's order, and the headers
every answer carries (SPEC 11.1, browsers and keys).

In: a `Request` (its headers, method, path) and the server's settings: the API key, the
hosts allowed (`--allowed-hosts`), the CORS origin (`--cors-origin`). Out: nothing, or the
`ApiError` of the first rule broken: 400 (two `Authorization` headers; header size is the
connection's, 431) -> 421 (a `Host` not allowed, compared without the port; `/healthz` and
`/readyz` exempt) -> 401 (the key) -> 415 (a POST whose body is not `application/json`);
and the headers to add to an answer: `X-Content-Type-Options: nosniff` on every one,
`Cache-Control: no-store` on API answers, the CORS headers for the allowed origin.
After: without `--cors-origin` no CORS header is ever sent (a browser page of another site
cannot read an answer), and a cross-site form post (`text/plain`) is 415 before any work.
"""

from __future__ import annotations

import hmac

from .http import ApiError, Request

HOST_EXEMPT = frozenset(("/healthz", "/readyz"))  # probes by address, from anywhere
NOSNIFF = (b"x-content-type-options", b"nosniff")
NO_STORE = (b"cache-control", b"no-store")
ANY_HOST = "*"


def allowed_hosts(spec: str | None, bound: str) -> frozenset[bytes] | None:
    """`--allowed-hosts` (comma-separated; `*` allows any), by default the bound address,
    `localhost` and `127.0.0.1`; None when any host is allowed."""
    names = [n.strip().lower() for n in (spec or "").split(",") if n.strip()] if spec else \
        [bound.lower(), "localhost", "127.0.0.1"]
    if ANY_HOST in names:
        return None
    return frozenset(n.strip("[]").encode() for n in names)


def host_name(value: bytes) -> bytes:
    """A `Host` header without its port (`[::1]:8080` -> `::1`), lowercased."""
    value = value.strip().lower()
    if value.startswith(b"["):
        return value[1:value.find(b"]")] if b"]" in value else value
    return value.rsplit(b":", 1)[0] if value.count(b":") == 1 else value


class Guards:
    def __init__(self, api_key: bytes | None, public: frozenset[str],
                 hosts: frozenset[bytes] | None, cors_origin: str | None):
        self.api_key, self.public, self.hosts = api_key, public, hosts
        self.cors_origin = cors_origin.encode() if cors_origin else None
        self.api_headers = [NOSNIFF, NO_STORE]
        self.asset_headers = [NOSNIFF]

    def before_routing(self, request: Request) -> None:
        """400 -> 421 -> 401, before the path is looked up (no path is told to a stranger)."""
        seen_key = False
        host = None
        for name, value in request.headers:
            if name == b"authorization":
                if seen_key:
                    raise ApiError(400, "invalid_request", "send one Authorization header, "
                                                           "not several")
                seen_key = True
            elif name == b"host":
                host = value
        if self.hosts is not None and request.path not in HOST_EXEMPT and (
                host is None or host_name(host) not in self.hosts):
            raise ApiError(421, "misdirected_request", "this server does not answer for "
                                                       "that Host; the operator lists the "
                                                       "names it serves in --allowed-hosts")
        if self.api_key is not None and request.path not in self.public:
            self.authorize(request)

    def authorize(self, request: Request) -> None:
        scheme, _, given = (request.header(b"authorization") or b"").partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.api_key):
            raise ApiError(401, "unauthorized", "this server wants Authorization: Bearer "
                                                "<MAGO_API_KEY>",
                           headers=[(b"www-authenticate", b"Bearer")])

    @staticmethod
    def json_body(request: Request) -> None:
        """415 unless a POST says its body is JSON (a browser's cross-site form cannot)."""
        kind = request.header(b"content-type") or b""
        if kind.split(b";", 1)[0].strip().lower() != b"application/json":
            raise ApiError(415, "unsupported_media_type", "send the body as JSON, with "
                                                          "Content-Type: application/json")

    def answer_headers(self, request: Request, asset: bool) -> list:
        """What every answer adds; the CORS headers when the request comes from the origin."""
        extra = self.asset_headers if asset else self.api_headers
        if self.cors_origin is not None and request.header(b"origin") == self.cors_origin:
            extra = extra + [(b"access-control-allow-origin", self.cors_origin),
                             (b"vary", b"Origin")]
        return extra

    def preflight(self, request: Request) -> bool:
        """Whether this is a CORS preflight from the allowed origin (answered 204)."""
        return self.cors_origin is not None and request.method == "OPTIONS" and \
            request.header(b"origin") == self.cors_origin


PREFLIGHT_HEADERS = [(b"access-control-allow-methods", b"GET, POST, DELETE"),
                     (b"access-control-allow-headers", b"authorization, content-type"),
                     (b"access-control-max-age", b"600")]
