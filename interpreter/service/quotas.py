"""Quotas a stranger cannot run the server out of (SPEC 11.1, 17.5, 17.7).

In: a request's peer address and headers, and each session creation. Out: the client
address (the peer, or the last `X-Forwarded-For` entry when the peer is a trusted proxy of
`--forwarded-allow-ips`); whether it may create one more session now (`--rate` a minute, a
token bucket per address: `Retry-After` says when the next one is allowed); whether the
store has room for one more live session (`--max-sessions`: the store's count, read at most
once a second off the event loop, plus what this worker created since).
After: memory stays bounded: buckets back to full are forgotten once `MAX_CLIENTS` are held.
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import time
from typing import Any

MAX_CLIENTS = 100_000  # addresses tracked before full buckets are forgotten
COUNT_EVERY = 1.0  # seconds between two counts of the store's sessions


def trusted_proxies(spec: str) -> list:
    """`--forwarded-allow-ips`: comma-separated addresses or networks ("" trusts none)."""
    return [ipaddress.ip_network(part.strip(), strict=False)
            for part in spec.split(",") if part.strip()]


class ClientAddress:
    def __init__(self, proxies: list):
        self.proxies = proxies

    def of(self, scope: dict, headers: list) -> str:
        peer = (scope.get("client") or ("unknown", 0))[0]
        if not self.proxies or not self._trusted(peer):
            return peer
        for name, value in headers:
            if name == b"x-forwarded-for":
                last = value.decode("latin-1").rsplit(",", 1)[-1].strip()
                return last or peer
        return peer

    def _trusted(self, peer: str) -> bool:
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in network for network in self.proxies)


class CreationRate:
    """A token bucket per client address: `per_minute` sessions, refilled continuously."""

    def __init__(self, per_minute: int):
        self.capacity = float(per_minute)
        self.refill = per_minute / 60.0
        self._buckets: dict[str, list[float]] = {}

    def retry_after(self, client: str) -> int:
        """0 when `client` may create a session now (the token is taken), else the seconds
        until it may."""
        now = time.monotonic()
        bucket = self._buckets.get(client)
        if bucket is None:
            if len(self._buckets) >= MAX_CLIENTS:
                self._forget_full(now)
            bucket = self._buckets[client] = [self.capacity, now]
        tokens = min(self.capacity, bucket[0] + (now - bucket[1]) * self.refill)
        bucket[1] = now
        if tokens >= 1.0:
            bucket[0] = tokens - 1.0
            return 0
        bucket[0] = tokens
        return max(1, math.ceil((1.0 - tokens) / self.refill))

    def _forget_full(self, now: float) -> None:
        full = [client for client, (tokens, at) in self._buckets.items()
                if tokens + (now - at) * self.refill >= self.capacity]
        for client in full or list(self._buckets)[:MAX_CLIENTS // 10]:
            del self._buckets[client]


class SessionCap:
    """Whether the store holds fewer than `limit` live sessions (counted by the store)."""

    def __init__(self, limit: int, count: Any):
        self.limit = limit
        self._count = count  # async () -> int
        self._known, self._since, self._at = 0, 0, float("-inf")
        self._counting: asyncio.Task | None = None

    async def room(self) -> bool:
        now = time.monotonic()
        if self._counting is None and now - self._at >= COUNT_EVERY:
            self._counting = asyncio.ensure_future(self._recount(now))
        if self._at == float("-inf"):
            await asyncio.shield(self._counting)  # the first count is waited for
        return self._known + self._since < self.limit

    def created(self) -> None:
        self._since += 1

    async def _recount(self, now: float) -> None:
        try:
            known = await self._count()
        except Exception:  # noqa: BLE001 - a store that cannot count: the last count stays
            known = self._known
        self._known, self._since, self._at = known, 0, now
        self._counting = None
