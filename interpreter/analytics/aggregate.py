"""The streaming tally of events into a report (SPEC 16), per scenario and IR hash.

In: `Event`s in the order they were written (a file's lines, a store's rows or streams: time
order, give or take the clocks of several workers), a scenario filter, a start time, and the
time the report is made at (`now`, which decides who has been quiet for 30 minutes). Out:
`Aggregator.report()`, the JSON-able figures: sessions started, completed, abandoned (no turn
for `ABANDON_SECONDS` and not complete), still active, and resumed (abandoned, then back);
completion rate; median turns to complete; per node visits (transient hops count), turns
handled, exits by reason, drop-offs (the last node of an abandoned session) and the fallback
rate; per transition the times taken (with the reasons); safety events by category; the
confidence histogram; the most frequent kept (masked) unmatched utterances per node.

Memory stays constant in the number of events: every figure is a counter bounded by the
scenario's size (nodes, edges, reasons, turn counts, ten histogram bins, at most
`UNMATCHED_KEPT` distinct texts per node, by the space-saving algorithm: exact while a node
has no more distinct texts than that). The only per-session memory is the sessions heard from
in the last 30 minutes of event time: a session quiet longer is settled at once (abandoned,
its drop-off counted) and forgotten, so what is held is bounded by the traffic of half an
hour, never by the length of the period reported. A session that comes back after that is
recognised by its event's `idle` (seconds since its previous event) and counted as resumed,
its abandonment taken back, without having been remembered.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from typing import Any, Iterable

from .events import STARTED, Event

ABANDON_SECONDS = 1800.0  # SPEC 16: no turn for 30 minutes and not complete
BINS = 10  # confidence histogram: [0, 0.1), ..., [0.9, 1.0]
UNMATCHED_KEPT = 100  # distinct unmatched texts counted per node
UNMATCHED_SHOWN = 10


class Unmatched:
    """The most frequent texts of one node, in bounded space (space-saving: a new text takes
    the place of the least frequent one and inherits its count, so counts may over-estimate,
    never under-estimate, once more than `UNMATCHED_KEPT` distinct texts were seen)."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, text: str) -> None:
        counts = self.counts
        if text in counts or len(counts) < UNMATCHED_KEPT:
            counts[text] = counts.get(text, 0) + 1
            return
        least = min(counts, key=counts.__getitem__)
        counts[text] = counts.pop(least) + 1

    def top(self) -> list[dict[str, Any]]:
        ranked = sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))
        return [{"text": text, "count": count} for text, count in ranked[:UNMATCHED_SHOWN]]


class NodeTally:
    __slots__ = ("visits", "turns", "exits", "drop_offs", "fallbacks")

    def __init__(self) -> None:
        self.visits = self.turns = self.drop_offs = self.fallbacks = 0
        self.exits: Counter[str] = Counter()

    def figures(self, node: str) -> dict[str, Any]:
        rate = self.fallbacks / self.turns if self.turns else 0.0
        return {"node": node, "visits": self.visits, "turns": self.turns,
                "exits": dict(sorted(self.exits.items())), "drop_offs": self.drop_offs,
                "fallbacks": self.fallbacks, "fallback_rate": round(rate, 4)}


class Tally:
    """The figures of one scenario version (scenario name and IR hash)."""

    def __init__(self, scenario: str, ir_hash: str):
        self.scenario, self.ir_hash = scenario, ir_hash
        self.events = self.started = self.completed = self.abandoned = self.resumed = 0
        self.first = self.last = None
        self.turns_to_complete: Counter[int] = Counter()
        self.nodes: dict[str, NodeTally] = {}
        self.transitions: Counter[tuple[str, str, str]] = Counter()
        self.safety: Counter[str] = Counter()
        self.confidence = [0] * BINS
        self.no_confidence = 0
        self.unmatched: dict[str, Unmatched] = {}

    def node(self, node: str) -> NodeTally:
        tally = self.nodes.get(node)
        if tally is None:
            tally = self.nodes[node] = NodeTally()
        return tally

    def turn(self, event: Event) -> None:
        """A user turn: where it was handled, the path it took, what it was heard as."""
        node = self.node(event.node)
        node.turns += 1
        if event.fallback is not None:
            node.fallbacks += 1
        hops = [event.node, *(hop for hop, _ in event.passed)]
        reasons = [event.reason, *(reason for _, reason in event.passed)]
        if event.next_node is not None:
            hops.append(event.next_node)
        for index in range(len(hops) - 1):
            here, there = hops[index], hops[index + 1]
            if here != there:
                self.node(here).exits[reasons[index]] += 1
                self.node(there).visits += 1
                self.transitions[here, there, reasons[index]] += 1
        if event.complete:
            self.completed += 1
            self.turns_to_complete[event.turn] += 1
            self.node(hops[-1]).exits[reasons[len(hops) - 1]] += 1
        if event.safety is not None:
            self.safety[event.safety] += 1
        if event.confidence is None:
            self.no_confidence += 1
        else:
            self.confidence[min(BINS - 1, max(0, int(event.confidence * BINS)))] += 1
        if event.text is not None:
            kept = self.unmatched.get(event.node)
            if kept is None:
                kept = self.unmatched[event.node] = Unmatched()
            kept.add(event.text)

    def figures(self, active: int) -> dict[str, Any]:
        started = self.started
        nodes = sorted(self.nodes.items(), key=lambda item: (-item[1].visits, item[0]))
        edges: dict[tuple[str, str], dict[str, Any]] = {}
        for (here, there, reason), count in sorted(self.transitions.items()):
            edge = edges.setdefault((here, there), {"from": here, "to": there, "count": 0,
                                                    "reasons": {}})
            edge["count"] += count
            edge["reasons"][reason] = count
        return {
            "scenario": self.scenario, "ir_hash": self.ir_hash, "events": self.events,
            "first_event": stamp(self.first), "last_event": stamp(self.last),
            "sessions": {"started": started, "completed": self.completed,
                         "abandoned": self.abandoned, "active": active,
                         "resumed": self.resumed},
            "completion_rate": round(self.completed / started, 4) if started else None,
            "median_turns_to_complete": median(self.turns_to_complete),
            "nodes": [tally.figures(node) for node, tally in nodes],
            "transitions": sorted(edges.values(), key=lambda e: (-e["count"], e["from"],
                                                                 e["to"])),
            "safety": dict(sorted(self.safety.items())),
            "confidence": {"bins": [{"from": i / BINS, "to": (i + 1) / BINS, "count": n}
                                    for i, n in enumerate(self.confidence)],
                           "none": self.no_confidence},
            "unmatched": {node: kept.top() for node, kept in sorted(self.unmatched.items())},
        }


class Aggregator:
    """Feed `add` the events in order; `report()` once at the end."""

    def __init__(self, scenario: str | None = None, since: float | None = None,
                 now: float | None = None):
        self.scenario, self.since = scenario, since
        self.now = now
        self.tallies: dict[tuple[str, str], Tally] = {}
        self.events = 0
        self.lost = 0  # events a store dropped (a Redis stream past its cap)
        self.window: float | None = since  # the earliest time an event of this report has
        # session id -> [tally, time of its last event, its current node], oldest first
        self._live: OrderedDict[str, list] = OrderedDict()

    def add_all(self, events: Iterable[Event]) -> "Aggregator":
        for event in events:
            self.add(event)
        return self

    def add(self, event: Event) -> None:
        if self.scenario is not None and event.scenario != self.scenario:
            return
        when = event.time
        if self.since is not None and when < self.since:
            return
        if self.window is None:
            self.window = when
        self.events += 1
        self._settle(when - ABANDON_SECONDS)
        key = (event.scenario, event.ir_hash)
        tally = self.tallies.get(key)
        if tally is None:
            tally = self.tallies[key] = Tally(*key)
        tally.events += 1
        if tally.first is None or when < tally.first:
            tally.first = when
        if tally.last is None or when > tally.last:
            tally.last = when
        live = self._live.get(event.session_id)
        if event.kind == STARTED:
            tally.started += 1
            tally.node(event.node).visits += 1
        else:
            if live is None and event.idle >= ABANDON_SECONDS \
                    and when - event.idle >= self.window:
                self._resume(tally, event)  # settled as abandoned earlier in this report
            tally.turn(event)
        self._follow(event, tally, live)

    def _follow(self, event: Event, tally: Tally, live: list | None) -> None:
        """Keep the session's last time and node, or forget it once complete."""
        session_id = event.session_id
        if event.complete:
            if live is not None:
                del self._live[session_id]
            return
        where = event.next_node or event.node
        if live is None:
            self._live[session_id] = [tally, event.time, where]
        else:
            live[1], live[2] = event.time, where
            self._live.move_to_end(session_id)

    def _resume(self, tally: Tally, event: Event) -> None:
        tally.abandoned -= 1
        tally.resumed += 1
        tally.node(event.node).drop_offs -= 1

    def _settle(self, before: float) -> None:
        """Sessions quiet since `before` or earlier: abandoned, and forgotten."""
        live = self._live
        while live:
            session_id, entry = next(iter(live.items()))
            if entry[1] > before:
                return
            del live[session_id]
            self._abandon(entry)

    def _abandon(self, entry: list) -> None:
        tally, _, node = entry
        tally.abandoned += 1
        tally.node(node).drop_offs += 1

    def report(self) -> dict[str, Any]:
        now = self.now if self.now is not None else time.time()
        self._settle(now - ABANDON_SECONDS)
        active: Counter[tuple[str, str]] = Counter(
            (entry[0].scenario, entry[0].ir_hash) for entry in self._live.values())
        scenarios = sorted(self.tallies.values(), key=lambda t: (t.scenario, t.first or 0))
        return {"generated_at": stamp(time.time()), "now": stamp(now),
                "since": stamp(self.since), "scenario": self.scenario,
                "abandon_after_seconds": ABANDON_SECONDS, "events": self.events,
                "events_lost": self.lost,
                "scenarios": [t.figures(active[t.scenario, t.ir_hash]) for t in scenarios]}


def median(counts: Counter[int]) -> float | None:
    """The median of values given as value -> how many times."""
    total = sum(counts.values())
    if not total:
        return None
    ranked = sorted(counts.items())
    low, high = (total - 1) // 2, total // 2
    seen, found = 0, []
    for value, count in ranked:
        for wanted in (low, high):
            if seen <= wanted < seen + count:
                found.append(value)
        seen += count
    return (found[0] + found[-1]) / 2


def stamp(seconds: float | None) -> str | None:
    """UTC ISO 8601 with milliseconds and a Z, or None."""
    if seconds is None:
        return None
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{whole}.{int(seconds * 1000) % 1000:03d}Z"
