"""The designers' playground (SPEC 12): the static page `mgi serve` serves at `/playground`.

In: the files of this package, shipped as package data: `index.html` (the page),
`playground.css`, `playground.js` (the page's state and its API calls), `panes.js` (the
trace and slots of a turn as DOM), `graph.js` (parses the Mermaid text of
`GET /dm/v1/scenarios/{name}/graph` and lays it out as SVG), `transcript.js` (a session as
a `mgi test` transcript) and `analytics.js` (the Analytics view of `GET /dm/v1/report`). Out: `load_assets()`: URL path -> `Asset` (bytes, headers).
After: the page needs nothing else: no CDN, no build step, no third-party code; it talks only
to the public API (relative URLs, so it works behind a path prefix too). Every file is read
once per worker and answered with an ETag; the Content-Security-Policy allows this server's
own scripts, styles and API only, so nothing can be fetched from elsewhere.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

PREFIX = "/playground"
FILES = {  # URL path -> (file in this package, media type)
    PREFIX: ("index.html", "text/html; charset=utf-8"),
    f"{PREFIX}/playground.css": ("playground.css", "text/css; charset=utf-8"),
    f"{PREFIX}/playground.js": ("playground.js", "text/javascript; charset=utf-8"),
    f"{PREFIX}/panes.js": ("panes.js", "text/javascript; charset=utf-8"),
    f"{PREFIX}/graph.js": ("graph.js", "text/javascript; charset=utf-8"),
    f"{PREFIX}/transcript.js": ("transcript.js", "text/javascript; charset=utf-8"),
    f"{PREFIX}/analytics.js": ("analytics.js", "text/javascript; charset=utf-8"),
}
POLICY = (b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
          b"img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


@dataclass(frozen=True)
class Asset:
    body: bytes
    etag: bytes
    headers: list


def load_assets() -> dict[str, Asset]:
    """Every file of the page by its URL path, with its response headers."""
    folder = resources.files(__name__)
    assets = {}
    for path, (name, media) in FILES.items():
        body = folder.joinpath(name).read_bytes()
        etag = b'"' + hashlib.sha256(body).hexdigest()[:32].encode() + b'"'
        headers = [(b"content-type", media.encode()), (b"etag", etag),
                   (b"cache-control", b"no-cache"), (b"x-content-type-options", b"nosniff"),
                   (b"referrer-policy", b"no-referrer"), (b"content-security-policy", POLICY)]
        assets[path] = Asset(body, etag, headers)
    return assets
