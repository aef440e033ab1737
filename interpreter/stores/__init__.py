"""Stores: where sessions are kept between turns.

`sessions` is the boundary: the `SessionStore` protocol (get, put with a version check,
delete) and the in-memory store that `mgi run`, `mgi test` and `mgi fuzz` use. Stores for the
service (SQLite, Redis) join this room behind the same protocol.

May import: the core and this room. The core imports only `sessions`.
"""

ROOM = "store"
BOUNDARY = ("sessions",)
