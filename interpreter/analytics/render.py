"""A report as text for a terminal, or as JSON for a program.

In: the figures of `Aggregator.report()`. Out: text lines (one block per scenario version:
the sessions, the nodes as a table, the transitions, safety, confidence, kept utterances), or
the JSON bytes (`--format json`, the answer of `GET /dm/v1/report`).
"""

from __future__ import annotations

from typing import Any

import msgspec


def render_json(report: dict[str, Any]) -> str:
    return msgspec.json.format(msgspec.json.encode(report), indent=2).decode()


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def render_text(report: dict[str, Any]) -> str:
    lines = [f"events: {report['events']} (since {report['since'] or 'the first'}, "
             f"as of {report['now']})"]
    if report["events_lost"]:
        lines.append(f"events lost: {report['events_lost']} (a stream past its cap; raise "
                     "--events-cap or report more often)")
    if not report["scenarios"]:
        lines.append("no events" + (f" for scenario {report['scenario']}"
                                    if report["scenario"] else ""))
    for version in report["scenarios"]:
        lines += [""] + scenario_text(version)
    return "\n".join(lines)


def scenario_text(version: dict[str, Any]) -> list[str]:
    sessions = version["sessions"]
    lines = [f"{version['scenario']} (IR {version['ir_hash'][:12]}, "
             f"{version['first_event']} .. {version['last_event']})",
             f"  sessions: {sessions['started']} started, {sessions['completed']} completed, "
             f"{sessions['abandoned']} abandoned, {sessions['active']} active, "
             f"{sessions['resumed']} resumed",
             f"  completion rate: {percent(version['completion_rate'])}; median turns to "
             f"complete: {version['median_turns_to_complete'] or '-'}",
             "  node                          visits  turns  drop-offs  fallback  exits"]
    for node in version["nodes"]:
        exits = ", ".join(f"{reason} {count}" for reason, count in node["exits"].items())
        lines.append(f"  {node['node']:<28} {node['visits']:>7} {node['turns']:>6} "
                     f"{node['drop_offs']:>10} {percent(node['fallback_rate']):>9}  {exits}")
    lines.append("  transitions:")
    lines += [f"    {edge['from']} -> {edge['to']}: {edge['count']}"
              for edge in version["transitions"]]
    if version["safety"]:
        lines.append("  safety: " + ", ".join(f"{category} {count}" for category, count
                                              in version["safety"].items()))
    bins = version["confidence"]["bins"]
    lines.append("  confidence: " + " ".join(f"{b['from']:.1f}:{b['count']}" for b in bins)
                 + f" none:{version['confidence']['none']}")
    for node, texts in version["unmatched"].items():
        lines.append(f"  unmatched at {node}: " + "; ".join(
            f"{entry['text']!r} x{entry['count']}" for entry in texts))
    return lines
