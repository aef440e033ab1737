"""`redis://HOST:PORT/DB`: the service's records in Redis, shared by workers on many hosts.

In: a `redis://`, `rediss://` (TLS) or `unix://` URL, as redis-py reads it (a password as
`redis://:PASSWORD@HOST:PORT/DB`), and the session TTL; then the `RecordStore` calls of
`records`. Out: `Stored` records, new versions, IR blobs.
After: a session is one hash at `mago:session:{id}` with fields `v` (version), `d` (the record
bytes) and `u` (updated_at), whose key expires `ttl` after its last put (Redis removes it, so
`sweep` has nothing to do); `expires_at` is `u + ttl`. A put is one Lua script, run by Redis
alone: it compares the version, writes the three fields and sets the expiry, or returns -1
and changes nothing (`VersionConflict`). Each put carries a random token, stored with it: a
script resent with the token of the write already stored (redis-py resends a command when the
answer timed out) is answered with that write's version, so a put that succeeded is never
reported as a conflict, and another writer's put (a token of its own) never passes for it.
IR blobs are at `mago:ir:{hash}`, set once (`SET NX`), expiring `keep_for` after their last
put or touch (SPEC 17.7: the turns that use a blob refresh its TTL; a refresh never shortens
it; put without `keep_for`, a blob has no expiry); a session created on an inline IR joins
`mago:ir-users:{hash}` (field `i` of its hash names the IR), and the delete of the last live
one removes the blob (SPEC 11.1). `mago:session-count` counts the live sessions by bucket of
their expiry (`count`, SPEC 17.7), kept by the same script as the put. Analytics events
(SPEC 16) go into a stream per UTC day, `mago:events:{day}`, added by the same script as the
put that carries them (`EVENTS_SCRIPT`). A `get` is one HMGET,
a put one EVALSHA (redis-py loads the script when the server does not know it yet).

A command that fails to reach Redis is sent once more on a new connection (`RETRIES`), the
two attempts together cut after the store timeout (`--store-timeout`, `TIMEOUT_SECONDS`); then it is a `StoreError` of one line that names the host
and never the password, as is any error Redis answers. Creating the store connects to
nothing (the first call does), so a worker starts while Redis is still coming up; `ping` says
whether it answers. The client is redis-py's asyncio one (with hiredis when it is installed),
its bytes as they are.
Durability is Redis's: with `appendonly yes` and `appendfsync always` an acknowledged put
survives a killed Redis; with `everysec` up to a second of puts may be lost.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import time
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import AuthenticationError, RedisError, ResponseError

from .records import IRGone, Stored, StoreError, StoreURLError, VersionConflict

TIMEOUT_SECONDS = 2.0  # a command's budget (`--store-timeout`), shared by its attempts
RETRIES = 1  # a command that failed to reach Redis is sent once more, on a new connection
HEALTH_CHECK_SECONDS = 30  # a connection idle that long is PINGed before it is used again
SESSION_KEY = "mago:session:"
IR_KEY = "mago:ir:"
IR_USERS_KEY = "mago:ir-users:"  # + hash: the sessions created on that inline IR
EVENTS_KEY = "mago:events:"  # + the UTC day: a stream; + ":n" events written, ":d" deleted
SESSION_EVENTS_KEY = "mago:session-events:"  # + session id: where its events are
EVENTS_CAP = 1_000_000  # entries a day's stream keeps; beyond, the oldest go (reported lost)
HEALTH_KEY = "mago:health"
COUNT_KEY = "mago:session-count"  # the live sessions, by bucket of their expiry
COUNT_BUCKETS = 200  # buckets in a TTL: a session is counted at most TTL/200 after expiry
DB_PATH = re.compile(r"(/[0-9]*)?")
FAILURES = (RedisError, OSError, asyncio.TimeoutError)

# KEYS[1] the session, KEYS[2] the session count; ARGV: expected version, data, updated_at,
# TTL in milliseconds, the put's own random token (`w`): a resent script carries the same
# token, another writer's put never does (two writers may store the same bytes at the same
# instant); the inline IR a new session runs on (its hash, or ""), with KEYS[3] its blob and
# KEYS[4] its users (SPEC 11.1, 17.7): the session is created only while the blob is there
# (else -2: put it again) and joins the users, a set that lives as long as the blob; and the
# count's bucket of this put (`count_bucket`): the session moves to it from the one it was
# counted in (`c`), when they differ (once every `COUNT_BUCKETS`-th of the TTL at most).
CAS_SCRIPT = """
local stored = redis.call('HMGET', KEYS[1], 'v', 'w', 'c')
local current = tonumber(stored[1] or '0')
local expected = tonumber(ARGV[1])
if current ~= expected then
  if current == expected + 1 and stored[2] == ARGV[5] then
    return current
  end
  return -1
end
if expected == 0 and (ARGV[6] or '') ~= '' then
  local left = redis.call('PTTL', KEYS[3])
  if left == -2 then
    return -2
  end
  redis.call('SADD', KEYS[4], KEYS[1])
  redis.call('HSET', KEYS[1], 'i', ARGV[6])
  if left > 0 then
    redis.call('PEXPIRE', KEYS[4], left)
  end
end
local bucket = ARGV[7]
if bucket and stored[3] ~= bucket then
  if stored[3] then
    redis.call('HINCRBY', KEYS[2], stored[3], -1)
  end
  redis.call('HINCRBY', KEYS[2], bucket, 1)
  redis.call('HSET', KEYS[1], 'c', bucket)
end
redis.call('HSET', KEYS[1], 'v', current + 1, 'd', ARGV[2], 'u', ARGV[3], 'w', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return current + 1
"""

# Analytics (SPEC 16, 17.10): the compare-and-set above as a function, then the turn's events
# added to the day's stream, only when this put is the one that stored the record (not a
# resend of it, which already added them, nor a conflict). The event keys are the last three
# KEYS (the stream, its counter, the session's index of its entries) and the event arguments
# the last ARGV (the payloads, then the stream's cap, the keys' expiry time in ms and the
# number of payloads), so the script above may gain keys and arguments of its own.
EVENTS_SCRIPT = "local function cas()\n" + CAS_SCRIPT + """end
local k, a = #KEYS, #ARGV
local count = tonumber(ARGV[a])
local before = redis.call('HMGET', KEYS[1], 'v', 'w')
local resend = tonumber(before[1] or '0') == tonumber(ARGV[1]) + 1 and before[2] == ARGV[5]
local version = cas()
if version < 0 or resend then
  return version
end
local stream, counter, index = KEYS[k - 2], KEYS[k - 1], KEYS[k]
local cap, expire_at = ARGV[a - 2], ARGV[a - 1]
for i = a - 2 - count, a - 3 do
  local id = redis.call('XADD', stream, 'MAXLEN', '~', cap, '*', 'e', ARGV[i])
  redis.call('SADD', index, stream .. ' ' .. id)
end
redis.call('INCRBY', counter, count)
redis.call('PEXPIREAT', stream, expire_at)
redis.call('PEXPIREAT', counter, expire_at)
redis.call('PEXPIREAT', index, expire_at)
return version
"""
# KEYS[1] the IR blob, KEYS[2] its users; ARGV: how long to keep it (ms), then the blob to
# set if absent (a put) or nothing (a touch). A blob without expiry (put so by an older
# server) gets one; its users' set lives as long.
KEEP_IR_SCRIPT = """
if ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[2], 'NX')
end
local left = redis.call('PTTL', KEYS[1])
if left == -1 or (left >= 0 and left < tonumber(ARGV[1])) then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
return left
"""
# DELETE of a session (SPEC 17.10): its events out of the day streams, counted as deleted
# (not lost), and its index; KEYS[1] the index, KEYS[2] the session, KEYS[3] the count (the
# session leaves its bucket). With KEYS[4] and KEYS[5] (the inline IR the session was
# created on: its blob and users), the session
# leaves the users, and when no other user is live (expired ones are dropped as met, so
# each costs one look), the blob goes (SPEC 11.1). Whether there was a session.
DELETE_SCRIPT = """
local entries = redis.call('SMEMBERS', KEYS[1])
for _, entry in ipairs(entries) do
  local space = string.find(entry, ' ', 1, true)
  local stream, id = string.sub(entry, 1, space - 1), string.sub(entry, space + 1)
  if redis.call('XDEL', stream, id) == 1 then
    redis.call('INCR', stream .. ':d')
  end
end
redis.call('DEL', KEYS[1])
local bucket = redis.call('HGET', KEYS[2], 'c')
local gone = redis.call('DEL', KEYS[2])
if bucket then
  redis.call('HINCRBY', KEYS[3], bucket, -1)
end
if #KEYS < 5 then
  return gone
end
redis.call('SREM', KEYS[5], KEYS[2])
local cursor = '0'
repeat
  local page = redis.call('SSCAN', KEYS[5], cursor, 'COUNT', 100)
  cursor = page[1]
  for _, user in ipairs(page[2]) do
    if redis.call('EXISTS', user) == 1 then
      return gone
    end
    redis.call('SREM', KEYS[5], user)
  end
until cursor == '0'
redis.call('DEL', KEYS[4], KEYS[5])
return gone
"""
# KEYS[1] the session count: a hash from a bucket's end (whole seconds: no session counted
# in it outlives that time) to the sessions counted in it. ARGV[1] now. The live sessions
# are the sum of the buckets still to end; the ended ones are dropped.
COUNT_SCRIPT = """
local fields = redis.call('HGETALL', KEYS[1])
local now, total = tonumber(ARGV[1]), 0
for i = 1, #fields, 2 do
  if tonumber(fields[i]) > now then
    total = total + tonumber(fields[i + 1])
  else
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
return total
"""


def events_day(seconds: float) -> str:
    """The UTC day of a time, as the suffix of its stream's key (2026-12-01)."""
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def where(url: str) -> tuple[str, str]:
    """(HOST:PORT or the socket path, the password or "") of a Redis URL."""
    parts = urlsplit(url)
    password = unquote(parts.password or "")
    if parts.scheme == "unix":
        if not parts.path:
            raise StoreURLError("unix:// needs the socket's path, e.g. "
                                "unix:///run/redis/redis.sock?db=0")
        return parts.path, password
    example = f"write {parts.scheme}://HOST:PORT/DB, e.g. {parts.scheme}://127.0.0.1:6379/0"
    try:
        port = parts.port or 6379
    except ValueError:
        raise StoreURLError(f"redis store URL has a bad port; {example}") from None
    if not parts.hostname:
        raise StoreURLError(f"redis store URL names no host; {example}")
    if not DB_PATH.fullmatch(parts.path):
        raise StoreURLError(f"redis store URL: database {parts.path.lstrip('/')!r} is not a "
                            f"number; {example}")
    return f"{parts.hostname}:{port}", password


class RedisRecordStore:
    name = "redis"
    multi_process = True

    def __init__(self, client: aioredis.Redis, ttl: float, address: str, password: str = ""):
        self.ttl, self.address = ttl, address
        self._ttl_ms = max(1, round(ttl * 1000))
        self._password = password
        self._client = client
        self._cas = client.register_script(CAS_SCRIPT)
        self._cas_events = client.register_script(EVENTS_SCRIPT)
        self._delete = client.register_script(DELETE_SCRIPT)
        self._keep_ir = client.register_script(KEEP_IR_SCRIPT)
        self._count = client.register_script(COUNT_SCRIPT)
        self._bucket_width = max(1.0, ttl / COUNT_BUCKETS)
        self.events_days = 30  # how long a day's stream is kept after its day (--events-days)
        self.events_cap = EVENTS_CAP

    @classmethod
    def from_url(cls, url: str, ttl: float, timeout: float = TIMEOUT_SECONDS
                 ) -> RedisRecordStore:
        """`timeout`: a command's budget, both attempts together (a frozen Redis, one
        that accepts connections and never answers, costs a request that long)."""
        address, password = where(url)
        attempt = timeout / (RETRIES + 1)
        try:
            client = aioredis.from_url(
                url, decode_responses=False, socket_timeout=attempt,
                socket_connect_timeout=attempt,
                health_check_interval=HEALTH_CHECK_SECONDS,
                retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=0.1), RETRIES))
        except (ValueError, TypeError) as exc:
            raise StoreURLError(f"redis store URL: {cls._scrub(str(exc), password)}; write "
                                "redis://[:PASSWORD@]HOST:PORT/DB") from None
        return cls(client, ttl, address, password)

    @staticmethod
    def _scrub(text: str, password: str) -> str:
        text = " ".join(text.split()).rstrip(".")
        return text.replace(password, "***") if password else text

    def _failure(self, exc: BaseException) -> StoreError:
        text = self._scrub(str(exc), self._password) or type(exc).__name__
        if isinstance(exc, AuthenticationError):
            return StoreError(f"redis store at {self.address} refused the password: {text}; "
                              "check the password in --store redis://:PASSWORD@HOST:PORT/DB")
        if isinstance(exc, ResponseError):
            return StoreError(f"redis store at {self.address} refused the command: {text}")
        return StoreError(f"redis store at {self.address} did not answer: {text}")

    async def get(self, session_id: str) -> Stored | None:
        try:
            version, data, updated = await self._client.hmget(
                SESSION_KEY + session_id, "v", "d", "u")
        except FAILURES as exc:
            raise self._failure(exc) from None
        if version is None or data is None or updated is None:
            return None
        updated_at = float(updated)
        return Stored(data, int(version), updated_at, updated_at + self.ttl)

    async def put(self, session_id: str, data: bytes, expected_version: int,
                  now: float, events: tuple = (), ir_hash: str | None = None) -> int:
        keys = [SESSION_KEY + session_id, COUNT_KEY]
        args = [expected_version, data, repr(now), self._ttl_ms, os.urandom(12), ir_hash or "",
                self.count_bucket(now)]
        if ir_hash is not None:
            keys += [IR_KEY + ir_hash, IR_USERS_KEY + ir_hash]
        script = self._cas
        if events:
            script = self._cas_events
            stream = EVENTS_KEY + events_day(now)
            keys += [stream, stream + ":n", SESSION_EVENTS_KEY + session_id]
            expire_ms = round((now // 86400 + 1 + self.events_days) * 86400 * 1000)
            args += [blob for _, blob in events] + [self.events_cap, expire_ms, len(events)]
        try:
            version = await script(keys=keys, args=args)
        except FAILURES as exc:
            raise self._failure(exc) from None
        if version == -2:
            raise IRGone(f"the store has no IR {(ir_hash or '')[:12]}; put it again")
        if version < 0:
            raise VersionConflict(f"session {session_id} is not at version {expected_version};"
                                  " reload it and retry")
        return version

    async def delete(self, session_id: str) -> bool:
        """The session and its analytics events (SPEC 17.10: they are personal data)."""
        key = SESSION_KEY + session_id
        try:
            keys = [SESSION_EVENTS_KEY + session_id, key, COUNT_KEY]
            ir_hash = await self._client.hget(key, "i")
            if ir_hash is not None:
                keys += [IR_KEY + ir_hash.decode(), IR_USERS_KEY + ir_hash.decode()]
            return await self._delete(keys=keys) > 0
        except FAILURES as exc:
            raise self._failure(exc) from None

    async def put_ir(self, ir_hash: str, blob: bytes, keep_for: float | None = None) -> None:
        try:
            if keep_for is None:
                await self._client.set(IR_KEY + ir_hash, blob, nx=True)
            else:
                await self._keep_ir(keys=[IR_KEY + ir_hash, IR_USERS_KEY + ir_hash],
                                    args=[max(1, round(keep_for * 1000)), blob])
        except FAILURES as exc:
            raise self._failure(exc) from None

    async def touch_ir(self, ir_hash: str, keep_for: float) -> None:
        try:
            await self._keep_ir(keys=[IR_KEY + ir_hash, IR_USERS_KEY + ir_hash],
                                args=[max(1, round(keep_for * 1000))])
        except FAILURES as exc:
            raise self._failure(exc) from None

    async def expire_irs(self, now: float) -> int:
        return 0  # an IR blob's key expires by itself

    async def get_ir(self, ir_hash: str) -> bytes | None:
        try:
            return await self._client.get(IR_KEY + ir_hash)
        except FAILURES as exc:
            raise self._failure(exc) from None

    async def ping(self) -> None:
        try:
            await self._client.ping()
        except FAILURES as exc:
            raise self._failure(exc) from None

    async def writable(self) -> None:
        """A write of a key of its own (a Redis out of memory or read-only refuses it)."""
        try:
            await self._client.set(HEALTH_KEY, b"1", ex=60)
        except FAILURES as exc:
            raise self._failure(exc) from None

    def count_bucket(self, now: float) -> int:
        """The end of the count's bucket a session put at `now` is counted in: the first
        multiple of the bucket width at or after its expiry."""
        width = self._bucket_width
        return int(math.ceil((now + self.ttl) / width) * width)

    async def count(self) -> int:
        """The live sessions, from the counter the save script keeps (SPEC 17.7), not
        DBSIZE (every key of the database: events, IRs, other programs' keys) nor a SCAN
        (a walk of every key, a million a second at the cap). Within 1%: a session is still
        counted up to TTL/`COUNT_BUCKETS` after it expired; sessions an older server wrote
        count from their next turn."""
        try:
            return int(await self._count(keys=[COUNT_KEY], args=[time.time()]))
        except FAILURES as exc:
            raise self._failure(exc) from None

    async def sweep(self, now: float) -> int:
        return 0  # every session key expires by itself

    async def expire_events(self, before: float) -> int:
        return 0  # a day's stream expires by itself, `events_days` after its day

    async def close(self) -> None:
        try:
            await self._client.aclose()
        except FAILURES:
            pass  # closing a connection that is already gone
