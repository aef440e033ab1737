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
in the last 30 minutes of event time: a session quiet longer is settled (abandoned, its
drop-off counted) and forgotten at the next sweep (every `SETTLE_EVERY` seconds of event
time), so what is held is bounded by the traffic of 40 minutes, never by the length of the
period reported. A session that comes back after that is
recognised by its event's `idle` (seconds since its previous event) and counted as resumed,
its abandonment taken back, without having been remembered.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any
from collections.abc import Iterable

from .events import STARTED, Event

ABANDON_SECONDS = 1800.0  # SPEC 16: no turn for 30 minutes and not complete
BINS = 10  # confidence histogram: [0, 0.1), ..., [0.9, 1.0]
UNMATCHED_KEPT = 100  # distinct unmatched texts counted per node
UNMATCHED_SHOWN = 10
# seconds of event time between two sweeps of the sessions for quiet ones: a sweep looks at
# every live session (so that an event costs one dict store, not a move to the end)
SETTLE_EVERY = 600.0
SETTLED_BATCH = 4096  # abandoned sessions listed before they are folded into counts
BINNED = 4096  # distinct confidences whose bin is remembered


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

    def turn(self, shape: tuple, count: int) -> None:
        """`count` user turns of one shape (`Aggregator.add_all`): where they were handled,
        the path they took, what they were heard as."""
        here, next_node, reason, passed, complete, turn, fallback, safety = shape
        node = self.node(here)
        node.turns += count
        if fallback:
            node.fallbacks += count
        hops = [here, *(hop for hop, _ in passed)]
        reasons = [reason, *(why for _, why in passed)]
        if next_node is not None:
            hops.append(next_node)
        for index in range(len(hops) - 1):
            source, target = hops[index], hops[index + 1]
            if source != target:
                self.node(source).exits[reasons[index]] += count
                self.node(target).visits += count
                self.transitions[source, target, reasons[index]] += count
        if complete:
            self.completed += count
            self.turns_to_complete[turn] += count
            self.node(hops[-1]).exits[reasons[len(hops) - 1]] += count
        if safety is not None:
            self.safety[safety] += count

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


class Version:
    """What the loop of `Aggregator.add_all` counts for one scenario version, in the form
    cheapest to count in: its first and last event times, {turn shape: [how many]} (a cell,
    so that a count is one hashing of the shape), the confidence histogram (`BINS` bins,
    then the turns without a confidence), the sessions started per start node, and the kept
    texts per node."""

    __slots__ = ("scenario", "ir_hash", "first", "last", "shapes", "bins", "starts", "kept")

    def __init__(self, event: Event):
        self.scenario, self.ir_hash = event.scenario, event.ir_hash
        self.first = self.last = event.time
        self.shapes: dict[tuple, list[int]] = {}
        self.bins = [0] * (BINS + 1)
        self.starts: dict[str, int] = {}
        self.kept: dict[str, Unmatched] = {}

    def keep(self, node: str, text: str) -> None:
        kept = self.kept.get(node)
        if kept is None:
            kept = self.kept[node] = Unmatched()
        kept.add(text)

    def into(self, tally: Tally) -> None:
        """Its counts spread into the figures of `tally`."""
        tally.first, tally.last = self.first, self.last
        for node, count in self.starts.items():
            tally.started += count
            tally.events += count
            tally.node(node).visits += count
        for shape, (count,) in self.shapes.items():
            tally.events += count
            tally.turn(shape, count)
        *bins, tally.no_confidence = self.bins
        tally.confidence = bins
        tally.unmatched = dict(self.kept)


class Aggregator:
    """Feed `add` (or `add_all`) the events in order; `report()` once at the end.

    Speed: a turn event costs one tuple of the fields the figures read (its shape) counted in
    its version's dict, one count in its confidence histogram (the bin of each distinct
    confidence remembered), and the update of its session's entry; the shapes are few (a
    scenario has few paths) and are spread into the figures once, by `report`. Sessions are
    settled as abandoned every `SETTLE_EVERY` seconds of event time, not at every event: a
    session quiet for 30 minutes that speaks again before it was settled is counted as
    resumed all the same (the `idle` of its event says so), and one settled is counted lost
    at the node it comes back to, so that when the sweeps run changes no figure."""

    def __init__(self, scenario: str | None = None, since: float | None = None,
                 now: float | None = None):
        self.scenario, self.since = scenario, since
        self.now = now
        self.events = 0
        self.lost = 0  # events a store dropped (a Redis stream past its cap)
        self.window: float | None = since  # the earliest time an event of this report has
        self._versions: dict[tuple[str, str], Version] = {}  # by (scenario, IR hash)
        self._resumed: dict[tuple[str, str, str, bool], int] = {}  # (.., node, settled) -> n
        # session id -> its last event (its time, current node, scenario and IR hash)
        self._live: dict[str, Event] = {}
        self._settled: list[tuple[str, str, str]] = []  # abandoned: (scenario, hash, node)
        self._abandoned: dict[tuple[str, str, str], int] = {}  # the same, folded into counts
        self._next_settle = float("-inf")
        self.settle_every = SETTLE_EVERY
        self._binned: dict[float | None, int] = {None: BINS}  # confidence -> its bin

    def add(self, event: Event) -> None:
        self.add_all((event,))

    def add_all(self, events: Iterable[Event]) -> Aggregator:
        """The loop every event goes through, kept to plain local operations (a million
        events a report); what few events need (a return, kept text) is a call."""
        if self.scenario is not None or self.since is not None:
            events = self._kept_by_filter(events)
        elif not isinstance(events, list | tuple):
            events = list(events)
        live, settle_at = self._live, self._next_settle
        binned, started_kind, abandon = self._binned, STARTED, ABANDON_SECONDS
        version = ir_hash = name = None
        for event in events:
            when = event.time
            if when >= settle_at:
                if self.window is None:
                    self.window = when
                self._settle(when - abandon)
                settle_at = when + self.settle_every
            # events come in runs of one version: its entry is looked up when that changes
            if event.ir_hash is not ir_hash or event.scenario is not name:
                version = self._version(event)
                name, ir_hash = event.scenario, event.ir_hash
                shapes, bins = version.shapes, version.bins
            if when > version.last:
                version.last = when
            if event.kind == started_kind:
                starts = version.starts
                starts[event.node] = starts.get(event.node, 0) + 1
                complete = event.complete
            else:
                if event.idle >= abandon:
                    self._resume(event, live.get(event.session_id))
                try:
                    bins[binned[event.confidence]] += 1
                except KeyError:
                    bins[self._bin(event.confidence)] += 1
                complete = event.complete
                shape = (event.node, event.next_node, event.reason, event.passed, complete,
                         event.turn if complete else 0, event.fallback is not None,
                         event.safety)
                try:
                    shapes[shape][0] += 1
                except KeyError:
                    shapes[shape] = [1]
                if event.text is not None:
                    version.keep(event.node, event.text)
            if complete:
                live.pop(event.session_id, None)
            else:
                live[event.session_id] = event  # its last event: time, node, version
        self.events += len(events)
        self._next_settle = settle_at
        return self

    def _kept_by_filter(self, events: Iterable[Event]) -> list[Event]:
        """The events of the scenario asked for, from the start time asked for."""
        scenario, since = self.scenario, self.since
        return [event for event in events
                if (scenario is None or event.scenario == scenario)
                and (since is None or event.time >= since)]

    def _bin(self, confidence: float) -> int:
        """The histogram bin of a confidence, remembered for the next event that has the
        same one (most do: a scenario's NLU gives few distinct values), up to `BINNED`."""
        bin_ = min(BINS - 1, max(0, int(confidence * BINS)))
        if len(self._binned) < BINNED:
            self._binned[confidence] = bin_
        return bin_

    def _version(self, event: Event) -> Version:
        """The entry of an event's scenario version, made on its first event."""
        key = (event.scenario, event.ir_hash)
        found = self._versions.get(key)
        if found is None:
            found = self._versions[key] = Version(event)
        return found

    def _resume(self, event: Event, entry: Event | None) -> None:
        """A session back after 30 minutes (`entry`: its place among the live ones, None
        once settled). Settled earlier in this report (its previous event is in the report's
        window), its abandonment is taken back: the node it is back at is the one it was
        counted lost at."""
        if entry is None and event.time - event.idle < self.window:
            return  # its previous event is before this report: it was never counted
        key = (event.scenario, event.ir_hash, event.node, entry is None)
        self._resumed[key] = self._resumed.get(key, 0) + 1

    def _settle(self, before: float) -> None:
        """Sessions quiet since `before` or earlier: abandoned, and forgotten."""
        live = self._live
        for session_id in [key for key, entry in live.items() if entry.time <= before]:
            entry = live.pop(session_id)
            self._settled.append((entry.scenario, entry.ir_hash,
                                  entry.next_node or entry.node))
        if len(self._settled) > SETTLED_BATCH:
            self._fold_settled()

    def _fold_settled(self) -> None:
        """Abandoned sessions as counts per (scenario, hash, node): bounded memory."""
        counts = self._abandoned
        for key in self._settled:
            counts[key] = counts.get(key, 0) + 1
        self._settled.clear()

    def report(self) -> dict[str, Any]:
        now = self.now if self.now is not None else time.time()
        self._settle(now - ABANDON_SECONDS)
        self._fold_settled()
        tallies: dict[tuple[str, str], Tally] = {}
        for key, version in self._versions.items():
            tallies[key] = Tally(*key)
            version.into(tallies[key])
        for (scenario, ir_hash, node), count in self._abandoned.items():
            tally = tallies[scenario, ir_hash]
            tally.abandoned += count
            tally.node(node).drop_offs += count
        for (scenario, ir_hash, node, settled), count in self._resumed.items():
            tally = tallies[scenario, ir_hash]
            tally.resumed += count
            if settled:
                tally.abandoned -= count
                tally.node(node).drop_offs -= count
        active: dict[tuple[str, str], int] = {}
        for entry in self._live.values():
            key = (entry.scenario, entry.ir_hash)
            active[key] = active.get(key, 0) + 1
        versions = sorted(tallies.values(), key=lambda t: (t.scenario, t.first or 0))
        return {"generated_at": stamp(time.time()), "now": stamp(now),
                "since": stamp(self.since), "scenario": self.scenario,
                "abandon_after_seconds": ABANDON_SECONDS, "events": self.events,
                "events_lost": self.lost,
                "scenarios": [t.figures(active.get((t.scenario, t.ir_hash), 0))
                              for t in versions]}


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
