"""`mgi serve`: check everything once, then hand the application to uvicorn.

In: the parsed options. Out: a running server until SIGTERM or Ctrl-C (exit 0); a bad
option, path, store or LLM setting is one `InputError` line (exit 2) before anything listens.
After: the workers get the checked configuration through the environment (`CONFIG_ENV`), so
each of them loads the same scenarios and opens the same store; with several workers the
metrics are kept in a temporary folder that every worker reads (`metrics.MULTIPROC_ENV`) and
that is removed at exit. uvicorn runs with the connection limits of `connections` (its
httptools protocol, subclassed) and stops on SIGTERM after the turns in flight are answered,
for at most `--grace-seconds`; the application then exits within 10 s whatever still runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import sys
import tempfile

import msgspec

from ..cli.plugins import InputError, llm_settings
from ..cli.report import event_config
from ..stores.records import StoreError, StoreURLError, open_store
from .alerts import AlertURLError, check_url
from .app import API_KEY_ENV, CONFIG_ENV, ServeConfig
from .connections import GuardedProtocol, Limits
from .logs import RequestLog, uvicorn_log_config
from .metrics import MULTIPROC_ENV
from .quotas import trusted_proxies
from .registry import RegistryError, load_scenarios
from .webhooks import WebhookConfigError, check_started

APP = "interpreter.service.app:from_environment"

WORKER_HEALTHCHECK_SECONDS = 60


def serve(args: argparse.Namespace) -> int:
    config = checked_config(args)
    check_port(args.host, args.port)
    os.environ[CONFIG_ENV] = msgspec.json.encode(config).decode()
    metrics_dir = None
    if args.workers > 1:
        metrics_dir = tempfile.mkdtemp(prefix="mago-metrics-")
        os.environ[MULTIPROC_ENV] = metrics_dir
    RequestLog(config.log_level).event(
        "info", f"serving {len(config.paths)} path(s) on http://{args.host}:{args.port}",
        store=config.store.split(":")[0],
        workers=args.workers)
    previous = signal.signal(signal.SIGTERM, _exit_cleanly)
    try:
        import uvicorn

        uvicorn.run(APP, factory=True, host=args.host, port=args.port, workers=args.workers,
                    loop="auto", http=GuardedProtocol, lifespan="on", access_log=False,
                    log_config=uvicorn_log_config(config.log_level), server_header=False,
                    proxy_headers=False,  # the client's address is not used
                    timeout_keep_alive=config.limits.keep_alive,
                    timeout_graceful_shutdown=args.grace_seconds,
                    # a worker loads its scenarios' language analysers before it answers,
                    # seconds on a busy machine: uvicorn's 5 s default killed such workers
                    timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if metrics_dir is not None:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def _exit_cleanly(signum: int, frame: object) -> None:
    """SIGTERM outside uvicorn's own handler: exit 0. With one worker uvicorn shuts down
    gracefully, restores this handler and raises the signal again (uvicorn >= 0.29), which
    with the default handler would end the process with status -15 instead of 0."""
    raise SystemExit(0)


def checked_config(args: argparse.Namespace) -> ServeConfig:
    """The configuration, every part checked here (one line each) rather than in a worker."""
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, not {args.workers}")
    if not 0 < args.port < 65536:
        raise InputError(f"--port must be between 1 and 65535, not {args.port}")
    check_limits(args)
    try:
        warnings = check_started(load_scenarios(args.paths).values(), args.allow_api_webhooks)
    except (RegistryError, WebhookConfigError) as error:
        raise InputError(str(error)) from None
    for line in warnings:
        print(line, file=sys.stderr)
    check_store(args.store, args.session_ttl, args.workers, args.store_timeout)
    if args.alert_url is not None:
        try:
            check_url(args.alert_url)
        except AlertURLError as error:
            raise InputError(str(error)) from None
    llm = None
    if llm_settings(args) is not None:  # InputError when incomplete
        llm = {"url": args.llm_url, "model": args.llm_model, "api_key": args.llm_api_key,
               "timeout": args.llm_timeout, "budget": args.llm_budget}
    limits = Limits(keep_alive=args.keep_alive_seconds, headers=args.header_seconds,
                    body=args.body_seconds, max_connections=args.max_connections)
    config = ServeConfig(paths=[os.path.abspath(p) for p in args.paths], store=args.store,
                         ttl=args.session_ttl, nlu=args.nlu_name, nlg=args.nlg_name, llm=llm,
                         dynamic=args.dynamic, alert_url=args.alert_url,
                         log_level=args.log_level, limits=limits,
                         compile_seconds=args.compile_seconds,
                         compile_queue=args.compile_queue, store_timeout=args.store_timeout,
                         rate=args.rate, max_sessions=args.max_sessions,
                         inline_cache=args.inline_cache,
                         forwarded_allow_ips=args.forwarded_allow_ips, host=args.host,
                         allowed_hosts=args.allowed_hosts, cors_origin=args.cors_origin,
                         allow_api_webhooks=args.allow_api_webhooks)
    return event_config(args, config)  # analytics (SPEC 16)


def check_limits(args: argparse.Namespace) -> None:
    """Every limit positive, and a key that is set not blank (SPEC 11.1: one line, exit 2)."""
    for name in ("keep_alive_seconds", "header_seconds", "body_seconds", "max_connections",
                 "compile_seconds", "compile_queue", "grace_seconds", "store_timeout",
                 "rate", "max_sessions", "inline_cache"):
        value = getattr(args, name)
        if not value > 0:
            raise InputError(f"--{name.replace('_', '-')} must be more than 0, not {value}")
    try:
        trusted_proxies(args.forwarded_allow_ips)
    except ValueError as error:
        raise InputError(f"--forwarded-allow-ips: {error}; give addresses or networks "
                         "separated by commas, e.g. 10.0.0.1,192.168.0.0/24") from None
    key = os.environ.get(API_KEY_ENV)
    if key is not None and not key.strip():
        raise InputError(f"{API_KEY_ENV} is set but blank; set it to a secret, or unset it "
                         "to serve without a key (this machine only)")


def check_store(url: str, ttl: float, workers: int, timeout: float = 2.0) -> None:
    """The store opens and answers now, and can be shared by `workers` processes."""
    try:
        store = open_store(url, ttl, timeout)
    except StoreURLError as error:
        raise InputError(str(error)) from None
    except StoreError as error:
        raise InputError(str(error)) from None
    if workers > 1 and not store.multi_process:
        raise InputError(f"--store {url} lives in one process; use --workers 1, or "
                         "sqlite:PATH or redis://HOST:PORT/DB for several workers")

    async def answer() -> None:
        try:
            await store.ping()
        finally:
            await store.close()

    try:
        asyncio.run(answer())
    except StoreError as error:
        raise InputError(str(error)) from None


def check_port(host: str, port: int) -> None:
    """Refuse a port another program holds, in one line (before the workers start)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise InputError(f"--host {host}: {error.strerror}") from None
    family, kind, proto, _, address = infos[0]
    probe = socket.socket(family, kind, proto)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(address)
    except OSError as error:
        raise InputError(f"cannot listen on {host}:{port}: {error.strerror}; stop the "
                         "program using it or choose another --port") from None
    finally:
        probe.close()
