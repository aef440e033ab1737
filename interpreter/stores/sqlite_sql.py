"""The SQL of the SQLite store: its schema and every statement the store runs (`sqlite_store`
runs them; the analytics sources read the events with `READ_EVENTS*`). In: nothing; out:
strings (and `PURGE_BATCH`, the rows one expiry statement removes at most)."""

# No index on expires_at: it would be one more page written by every put, for a sweep that
# runs once a minute in a worker thread (a scan of the table).
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
    "data BLOB NOT NULL, updated_at REAL NOT NULL, expires_at REAL NOT NULL, ir_hash TEXT)",
    "CREATE TABLE IF NOT EXISTS ir_blobs (hash TEXT PRIMARY KEY, blob BLOB NOT NULL)",
    # a table of its own rather than a column: files made before it keep working
    "CREATE TABLE IF NOT EXISTS ir_kept (hash TEXT PRIMARY KEY, until REAL NOT NULL)",
    # analytics (SPEC 16): one row per event, appended in the order written. No index on
    # session_id: it would be one more page written by every turn (measured: +60% on the
    # put of a group commit), for a DELETE of a session that is rare; a deleted session is
    # listed in events_deleted (with the last row id it may own) and its rows purged by the
    # next sweep, in a worker thread; readers skip them meanwhile.
    "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, "
    "time REAL NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS events_deleted (session_id TEXT PRIMARY KEY, "
    "upto INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS health (id INTEGER PRIMARY KEY, at REAL NOT NULL)",
)
# Files made before sessions had `ir_hash` gain it (`ADD_IR_COLUMN` when `table_info` lacks
# it). The inline IR a session runs on is set at its creation only and never updated, and
# the index is partial (registered scenarios' sessions leave it NULL): a turn's UPDATE writes
# no page of it, a creation on an inline IR one entry.
SESSION_COLUMNS = "PRAGMA table_info(sessions)"
ADD_IR_COLUMN = "ALTER TABLE sessions ADD COLUMN ir_hash TEXT"
IR_INDEX = ("CREATE INDEX IF NOT EXISTS sessions_by_ir ON sessions (ir_hash) "
            "WHERE ir_hash IS NOT NULL")
HEALTH = "REPLACE INTO health (id, at) VALUES (1, ?)"  # the write `/readyz` tries
GET = ("SELECT data, version, updated_at, expires_at FROM sessions "
       "WHERE id = ? AND expires_at > ?")
# The compare-and-set is one statement: SQLite takes the write lock when a writing statement
# starts, so the version it compares is the newest. A create also takes over an expired row.
CREATE = ("INSERT INTO sessions (id, version, data, updated_at, expires_at) "
          "VALUES (?, 1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET version = 1, "
          "data = excluded.data, updated_at = excluded.updated_at, "
          "expires_at = excluded.expires_at, ir_hash = excluded.ir_hash "
          "WHERE sessions.expires_at <= ?")
# A session on an inline IR is created only while the blob is there (SPEC 17.7: the last
# session's delete removes it; a creation racing it finds none and puts it again).
CREATE_USING = ("INSERT INTO sessions (id, version, data, updated_at, expires_at, ir_hash) "
                "SELECT ?1, 1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM ir_blobs WHERE "
                "hash = ?5) ON CONFLICT (id) DO UPDATE SET version = 1, "
                "data = excluded.data, updated_at = excluded.updated_at, "
                "expires_at = excluded.expires_at, ir_hash = excluded.ir_hash "
                "WHERE sessions.expires_at <= ?6")
IR_OF = "SELECT ir_hash FROM sessions WHERE id = ?"
HAS_IR = "SELECT 1 FROM ir_blobs WHERE hash = ?"
# ?1 the IR, ?2 now: removed when no live session (not expired) runs on it.
UNUSED = "NOT EXISTS (SELECT 1 FROM sessions WHERE ir_hash = ?1 AND expires_at > ?2)"
DROP_UNUSED_IR = f"DELETE FROM ir_blobs WHERE hash = ?1 AND {UNUSED}"
FORGET_UNUSED_KEPT = f"DELETE FROM ir_kept WHERE hash = ?1 AND {UNUSED}"
UPDATE = ("UPDATE sessions SET version = version + 1, data = ?, updated_at = ?, expires_at = ? "
          "WHERE id = ? AND version = ? AND expires_at > ?")
DELETE = "DELETE FROM sessions WHERE id = ?"
SWEEP = "DELETE FROM sessions WHERE expires_at <= ?"
INSERT_EVENT = "INSERT INTO events (session_id, time, data) VALUES (?, ?, ?)"
# `mgi report` reads the events a batch at a time, the rows after the last one read, joined
# by SQLite into one JSON array body (no Python object per row); the rows of a deleted
# session not purged yet are left out (the second form, used while there are any).
READ_EVENTS = ("SELECT max(id), CAST(group_concat(data, ',') AS BLOB) FROM (SELECT id, data "
               "FROM events WHERE id > ? AND time >= ? ORDER BY id LIMIT ?)")
READ_EVENTS_KEPT = ("SELECT max(id), CAST(group_concat(data, ',') AS BLOB) FROM (SELECT e.id, "
                    "e.data FROM events AS e WHERE e.id > ? AND e.time >= ? AND NOT EXISTS ("
                    "SELECT 1 FROM events_deleted AS d WHERE d.session_id = e.session_id "
                    "AND e.id <= d.upto) ORDER BY e.id LIMIT ?)")
READ_DELETED = "SELECT session_id, upto FROM events_deleted"
ANY_DELETED = "SELECT count(*) FROM events_deleted"
DELETE_EVENTS = ("INSERT INTO events_deleted (session_id, upto) VALUES (?, (SELECT "
                 "coalesce(max(id), 0) FROM events)) ON CONFLICT (session_id) DO UPDATE SET "
                 "upto = excluded.upto")
FIND_DELETED = ("SELECT e.id FROM events AS e JOIN events_deleted AS d "
                "ON e.session_id = d.session_id AND e.id <= d.upto")
# Rows are written in time order, so the expired ones are the rows before the first young one
# (found walking the primary key from its start, never a scan of the whole table), removed
# `PURGE_BATCH` at a time so that no write transaction holds the lock for long.
EXPIRE_EVENTS = ("DELETE FROM events WHERE id IN (SELECT id FROM events WHERE id < coalesce("
                 "(SELECT id FROM events WHERE time >= ? ORDER BY id LIMIT 1), "
                 "(SELECT max(id) + 1 FROM events), 0) ORDER BY id LIMIT ?)")
PURGE_BATCH = 2000
COUNT = "SELECT count(*) FROM sessions WHERE expires_at > ?"
PUT_IR = "INSERT OR IGNORE INTO ir_blobs (hash, blob) VALUES (?, ?)"
GET_IR = "SELECT blob FROM ir_blobs WHERE hash = ?"
KEEP_IR = ("INSERT INTO ir_kept (hash, until) VALUES (?, ?) ON CONFLICT (hash) DO UPDATE "
           "SET until = max(until, excluded.until)")
EXPIRE_IRS = "DELETE FROM ir_blobs WHERE hash IN (SELECT hash FROM ir_kept WHERE until <= ?)"
FORGET_KEPT = "DELETE FROM ir_kept WHERE until <= ?"
