"""`mgi serve`'s options (SPEC 11), added to `mgi`'s parser without loading the web stack."""

from __future__ import annotations

import argparse
from typing import Any


def add_serve_parser(commands: Any, add_common: Any) -> None:
    """The `serve` subcommand; `add_common(parser)` adds the options every command shares."""
    from ..stores import DEFAULT_STORE, DEFAULT_TTL  # only the room's __init__: no msgspec

    serve = commands.add_parser(
        "serve", allow_abbrev=False, help="serve scenarios over HTTP",
        description="Serve compiled scenarios over HTTP (SPEC 11): sessions in a store that "
                    "survives restarts and is shared by every worker.")
    serve.add_argument("paths", nargs="*", metavar="PATH",  # none: our one line
                       help="IR files, or folders of them, each served under its metadata.name")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default: 127.0.0.1, this machine only)")
    serve.add_argument("--port", type=int, default=8080, help="port (default: 8080)")
    serve.add_argument("--workers", type=int, default=1,
                       help="worker processes sharing the store (default: 1)")
    serve.add_argument("--store", default=DEFAULT_STORE,
                       help=f"sqlite:PATH, redis://HOST:PORT/DB or memory: "
                            f"(default: {DEFAULT_STORE})")
    serve.add_argument("--session-ttl", type=float, default=DEFAULT_TTL, metavar="SECONDS",
                       help=f"remove a session untouched this long (default: {DEFAULT_TTL})")
    serve.add_argument("--nlu", dest="nlu_name", choices=("rules", "llm"), default="rules",
                       help="llm: a chat-completions server, the rules NLU as its fallback")
    serve.add_argument("--nlg", dest="nlg_name", choices=("template", "llm"),
                       default="template", help="llm: a chat-completions server words replies")
    serve.add_argument("--no-dynamic", dest="dynamic", action="store_false",
                       help="refuse scenarios sent in requests (POST /dm/v1/session/json)")
    serve.add_argument("--alert-url", metavar="URL",
                       help="POST every safety event there (retried within the turn's budget)")
    serve.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                       default="info", help="debug also logs the user's text (default: info)")
    serve.add_argument("--allow-api-webhooks", action="store_true",
                       help="let scenarios posted to /session/json call webhooks, only to the "
                            "hosts of MAGO_WEBHOOK_HOSTS and never to internal addresses")
    add_limit_options(serve)
    add_common(serve)
    serve.set_defaults(handler=serve_command)


def add_limit_options(serve: argparse.ArgumentParser) -> None:
    """SPEC 11.1: the limits a server open to strangers keeps (docs/guides/deploying.md, "Limits, keys and
    logs" gives each default)."""
    limits = serve.add_argument_group("limits (SPEC 11.1)")
    for flag, kind, default, text in (
            ("--keep-alive-seconds", float, 5.0, "close a connection idle this long"),
            ("--header-seconds", float, 10.0, "a request's headers must arrive within this"),
            ("--body-seconds", float, 30.0, "a request's body must arrive within this"),
            ("--max-connections", int, 1000, "open connections per worker (the oldest idle "
                                             "one is closed to make room)"),
            ("--compile-seconds", float, 5.0, "CPU seconds a posted scenario's compile may "
                                              "take (over: 422 too_costly)"),
            ("--compile-queue", int, 4, "compiles running or waiting per worker (over: "
                                        "503 busy)"),
            ("--grace-seconds", float, 8.0, "at SIGTERM, how long turns in flight may finish"),
            ("--store-timeout", float, 2.0, "a store call that takes longer is 503"),
            ("--rate", int, 600, "sessions one client address may create a minute (over: "
                                 "429 rate_limited)"),
            ("--max-sessions", int, 1_000_000, "live sessions in the store (over: 503 "
                                               "store_full)"),
            ("--inline-cache", int, 64, "scenarios posted to /session/json kept compiled")):
        dest = flag[2:].replace("-", "_")
        limits.add_argument(flag, type=kind, default=default, dest=dest, metavar="N",
                            help=f"{text} (default: {default:g})")
    limits.add_argument("--allowed-hosts", metavar="NAMES",
                        help="Host header names answered, comma-separated, * for any "
                             "(default: the --host address, localhost and 127.0.0.1)")
    limits.add_argument("--cors-origin", metavar="ORIGIN",
                        help="the one browser origin allowed to read answers, e.g. "
                             "https://app.example.com (default: none)")
    limits.add_argument("--forwarded-allow-ips", default="", metavar="ADDRESSES",
                        help="proxies (addresses or networks, comma-separated) whose "
                             "X-Forwarded-For names the client for --rate (default: none)")


def serve_command(args: argparse.Namespace) -> int:
    from .serve import serve

    return serve(args)
