"""`mgi report` and `mgi run --events` (SPEC 16): what happened, from local runs or a store.

In: `mgi run ... --events FILE [--keep-unmatched]` appends one event per turn of the run (the
opening's `started` included) to FILE; `mgi report SOURCE [--scenario NAME] [--since DATE]
[--now DATE] [--format text|json|html] [-o FILE]` reads the events of SOURCE (such a file,
`sqlite:PATH` or `redis://HOST:PORT/DB` of `mgi serve --store`). Out: the report on stdout,
or in FILE (written whole, then renamed into place: never a partial file).
After: exit 0; 2 with one line for an unreadable source or a bad option. `--now` is the time
the report is made at (default: now): a session quiet for 30 minutes before it is abandoned.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from .plugins import InputError


def add_event_options(run: Any) -> None:
    run.add_argument("--events", metavar="FILE",
                     help="append one analytics event per turn to FILE (JSON lines; read it "
                          "with `mgi report FILE`)")
    run.add_argument("--keep-unmatched", action="store_true",
                     help="with --events: keep the text of turns nothing understood, digits, "
                          "e-mail addresses and phone numbers masked")


def add_serve_event_options(serve: Any) -> None:
    """`mgi serve`'s analytics options (SPEC 16, 17.10-11)."""
    serve.add_argument("--events-days", type=int, default=30, metavar="DAYS",
                       help="keep each turn's analytics event this many days (default: 30; "
                            "0: record no events)")
    serve.add_argument("--keep-unmatched", action="store_true",
                       help="keep the text of turns nothing understood in the events, digits, "
                            "e-mail addresses and phone numbers masked (personal data: "
                            "DELETE /dm/v1/session/{id} removes it)")
    serve.add_argument("--events-cap", type=int, default=1_000_000, metavar="N",
                       help="redis: events a day's stream keeps; the oldest beyond it are "
                            "dropped and reported lost (default: 1000000)")
    serve.add_argument("--public-report", action="store_true",
                       help="answer GET /dm/v1/report without MAGO_API_KEY set (it is 403 "
                            "otherwise: the report describes every conversation)")


def event_config(args: argparse.Namespace, config: Any) -> Any:
    """`config` with the analytics options, checked (one line each)."""
    import msgspec

    if args.events_days < 0:
        raise InputError(f"--events-days must be 0 (no events) or more, not {args.events_days}")
    if args.events_cap < 1000:
        raise InputError(f"--events-cap must be at least 1000, not {args.events_cap}")
    if args.keep_unmatched and args.events_days == 0:
        raise InputError("--keep-unmatched keeps text in the events; --events-days 0 records "
                         "none")
    return msgspec.structs.replace(config, events_days=args.events_days,
                                   keep_unmatched=args.keep_unmatched,
                                   events_cap=args.events_cap, public_report=args.public_report)


def add_report_parser(commands: Any) -> None:
    report = commands.add_parser(
        "report", allow_abbrev=False, help="report what happened in conversations",
        description="Sessions, completion, drop-offs, fallbacks, transitions, safety events "
                    "and confidence per scenario version, from the events of `mgi run "
                    "--events FILE` or of a `mgi serve` store (SPEC 16).")
    report.add_argument("source", metavar="FILE|STORE",
                        help="an events file, sqlite:PATH or redis://HOST:PORT/DB")
    report.add_argument("--scenario", metavar="NAME", help="only this scenario")
    report.add_argument("--since", metavar="DATE", help="only events from DATE (ISO 8601)")
    report.add_argument("--now", metavar="DATE",
                        help="the time the report is made at (default: now)")
    report.add_argument("--format", dest="fmt", choices=("text", "json", "html"),
                        default="text", help="default: text")
    report.add_argument("-o", "--output", metavar="FILE", help="write there, not to stdout")
    report.set_defaults(handler=report_command, max_input_mb=None)  # reads no whole file


class Recorder:
    """The events of one `mgi run` session, appended to `--events FILE` as they happen."""

    def __init__(self, path: str, runtime: Any, clock: Any, keep_unmatched: bool):
        import secrets

        from ..analytics.sources import EventFile, SourceError

        try:
            self.file = EventFile(path)
        except SourceError as error:
            raise InputError(str(error)) from None
        self.scenario, self.ir_hash = runtime.program.name, runtime.ir_hash
        self.session_id = "cli-" + secrets.token_hex(6)  # one report may hold many runs
        self.clock, self.keep = clock, keep_unmatched
        self.slots: dict[str, Any] = {}
        self.last = 0.0

    def started(self, result: Any) -> None:
        from ..analytics.events import started_event

        if result.focus:
            return
        self.last = self.clock()
        self.slots = result.slots
        self._write(started_event(self.scenario, self.ir_hash, self.session_id, self.last,
                                  result))

    def turn(self, result: Any) -> None:
        from ..analytics.events import turn_event

        now = self.clock()
        event = turn_event(self.scenario, self.ir_hash, self.session_id, now, result,
                           self.slots, now - self.last, self.keep)
        self.last, self.slots = now, result.slots
        if event is not None:
            self._write(event)

    def _write(self, event: Any) -> None:
        from ..analytics.sources import SourceError

        try:
            self.file.write(event)
        except SourceError as error:
            raise InputError(str(error)) from None


def recorder(args: argparse.Namespace, runtime: Any, clock: Any) -> Recorder | None:
    if args.events is None:
        if args.keep_unmatched:
            raise InputError("--keep-unmatched keeps text in the events; give --events FILE")
        return None
    return Recorder(args.events, runtime, clock, args.keep_unmatched)


def report_command(args: argparse.Namespace) -> int:
    from ..analytics.aggregate import Aggregator
    from ..analytics.sources import SourceError, feed, parse_date

    try:
        since = parse_date(args.since, "--since") if args.since else None
        now = parse_date(args.now, "--now") if args.now else None
        aggregator = feed(Aggregator(args.scenario, since, now), args.source, since)
    except SourceError as error:
        raise InputError(str(error)) from None
    text = render(aggregator.report(), args.fmt)
    if args.output:
        write_whole(args.output, text)
    else:
        from . import streams

        streams.write_out(text + "\n")
    return 0


def render(report: dict, fmt: str) -> str:
    from ..analytics import render as forms

    if fmt == "json":
        return forms.render_json(report)
    if fmt == "html":
        from ..analytics.html import render_html

        return render_html(report)
    return forms.render_text(report)


def write_whole(path: str, text: str) -> None:
    """`text` into `path` through a temporary file beside it, renamed into place."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".mgi-report-")
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text + "\n")
        os.replace(temporary, path)
    except OSError as error:
        os.unlink(temporary)
        raise InputError(f"cannot write {path}: {error.strerror or error}") from None


