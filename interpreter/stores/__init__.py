"""Stores: where sessions are kept between turns.

`sessions` is the boundary: the `SessionStore` protocol (get, put with a version check,
delete) and the in-memory store that `mgi run`, `mgi test` and `mgi fuzz` use, and that the
engine talks to. `records` is the service's protocol (`RecordStore`: a session's encoded bytes
with a version check and a TTL, and IR blobs by hash) and `open_store`, which turns a
`--store` URL into one of its stores: `memory_store` (`memory:`, one process), `sqlite_store`
(`sqlite:PATH`, one WAL file shared by the workers of a host) and `redis_store`
(`redis://HOST:PORT/DB`, workers on many hosts).

May import: the core and this room; of the heavy stacks only the stores' own drivers, each in
its store's module alone, imported when its URL is opened: nothing in `sessions`, `records`
or here loads sqlite3 or redis, so the engine never does. The core imports only `sessions`.
"""

ROOM = "store"
BOUNDARY = ("sessions",)

# The service's defaults (`mgi serve --store`, `--session-ttl`), here so that building mgi's
# argument parser imports nothing else (`records` re-exports them).
DEFAULT_STORE = "sqlite:mago-sessions.db"
DEFAULT_TTL = 86400
