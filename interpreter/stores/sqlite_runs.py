"""What the SQLite store runs on one connection: compare-and-sets, batches, deletes, expiry.

In: an open `sqlite3.Connection` (autocommit: `isolation_level=None`) and each call's
arguments. Out: new versions, `VersionConflict` / `IRGone` outcomes, rows and counts.
After: each function is one statement, or one `BEGIN IMMEDIATE` transaction that commits
whole or rolls back whole; `sqlite_store` decides on which connection and thread it runs.
A put item is `(session_id, data, expected, now, expires_at, events, ir_hash)`: `events`
the (time, bytes) analytics rows written with the record, `ir_hash` the inline IR a new
session runs on (SPEC 11.1, 17.7: recorded with the session, which is only created while the
blob is in the store, so that deleting the IR's last live user removes the blob in the same
transaction; None for a registered scenario's session).
"""

from __future__ import annotations

import sqlite3
import time

from .records import IRGone, VersionConflict
from .sqlite_sql import (
    CREATE, CREATE_USING, UPDATE, DELETE, INSERT_EVENT, READ_DELETED, DELETE_EVENTS,
    FIND_DELETED, EXPIRE_EVENTS, PURGE_BATCH, PUT_IR, KEEP_IR, EXPIRE_IRS, FORGET_KEPT, GET,
    IR_OF, HAS_IR, DROP_UNUSED_IR, FORGET_UNUSED_KEPT)

Outcome = int | VersionConflict | IRGone


def run_put(conn: sqlite3.Connection, item: tuple) -> int:
    """One compare-and-set on its own (its statement is its transaction; with events, a
    transaction of its own holds both)."""
    outcome = run_puts(conn, [item])[0] if item[5] else record(conn, item)
    if isinstance(outcome, (VersionConflict, IRGone)):
        raise outcome
    return outcome


def run_puts(conn: sqlite3.Connection, batch: list[tuple]) -> list[Outcome]:
    """Compare-and-sets in one `BEGIN IMMEDIATE` transaction, so one commit writes them all:
    for each item its new version, or the `VersionConflict` (`IRGone`) it met with nothing
    of it written, and the events of the puts written, in one statement after them (in the
    order of the batch). A failure of SQLite rolls back the whole batch."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        outcomes = [record(conn, item) for item in batch]
        rows = [(item[0], *event) for item, outcome in zip(batch, outcomes)
                if type(outcome) is int for event in item[5]]
        if len(rows) == 1:  # a lone turn's one event: no executemany loop
            conn.execute(INSERT_EVENT, rows[0])
        elif rows:
            conn.executemany(INSERT_EVENT, rows)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return outcomes


def record(conn: sqlite3.Connection, item: tuple) -> Outcome:
    """The compare-and-set of a put item (its events are the caller's)."""
    session_id, data, expected, now, expires_at, _, ir_hash = item
    return compare_and_set(conn, session_id, data, expected, now, expires_at, ir_hash)


def compare_and_set(conn: sqlite3.Connection, session_id: str, data: bytes, expected: int,
                    now: float, expires_at: float, ir_hash: str | None = None) -> Outcome:
    """The record's new version, or the outcome that says why nothing was written."""
    wall = time.time()  # expiry is the clock's, as for `get`
    if expected == 0 and ir_hash is not None:
        changed = conn.execute(CREATE_USING, (session_id, data, now, expires_at, ir_hash,
                                              wall)).rowcount
        if changed != 1 and conn.execute(HAS_IR, (ir_hash,)).fetchone() is None:
            return IRGone(f"the store has no IR {ir_hash[:12]} (its last session was "
                          "deleted meanwhile); put it again")
    elif expected == 0:
        changed = conn.execute(CREATE, (session_id, data, now, expires_at, wall)).rowcount
    else:
        changed = conn.execute(UPDATE, (data, now, expires_at, session_id, expected,
                                        wall)).rowcount
    if changed != 1:
        return VersionConflict(f"session {session_id} is not at version {expected} (another "
                               "writer saved it first, or it expired); reload it and retry")
    return expected + 1


def run_delete(conn: sqlite3.Connection, session_id: str) -> bool:
    """The session, its events (listed for the next purge) and, when it was the last live
    session on an inline IR, that IR, in one transaction; whether there was a session."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(DELETE_EVENTS, (session_id,))
        row = conn.execute(IR_OF, (session_id,)).fetchone()
        gone = conn.execute(DELETE, (session_id,)).rowcount > 0
        if row is not None and row[0] is not None:
            wall = time.time()
            conn.execute(DROP_UNUSED_IR, (row[0], wall))
            conn.execute(FORGET_UNUSED_KEPT, (row[0], wall))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return gone


def rollback(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the transaction is gone with the failure that ended it


def run_expiry(conn: sqlite3.Connection, before: float) -> int:
    """The expired events, then the deleted sessions' events (found by a read, which takes
    no lock in WAL mode), each in short transactions of `PURGE_BATCH` rows; a session
    deleted again meanwhile stays listed. How many rows went."""
    gone = 0
    while True:
        removed = conn.execute(EXPIRE_EVENTS, (before, PURGE_BATCH)).rowcount
        gone += removed
        if removed < PURGE_BATCH:
            break
    listed = conn.execute(READ_DELETED).fetchall()
    if not listed:
        return gone
    rows = [row[0] for row in conn.execute(FIND_DELETED)]
    for start in range(0, len(rows), PURGE_BATCH):
        chunk = rows[start:start + PURGE_BATCH]
        gone += conn.execute(f"DELETE FROM events WHERE id IN ({','.join('?' * len(chunk))})",
                             chunk).rowcount
    conn.executemany("DELETE FROM events_deleted WHERE session_id = ? AND upto = ?", listed)
    return gone


def run_put_ir(conn: sqlite3.Connection, ir_hash: str, blob: bytes,
               until: float | None) -> None:
    """The blob (the first of its hash stays) and how long it is kept, in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(PUT_IR, (ir_hash, blob))
        if until is not None:
            conn.execute(KEEP_IR, (ir_hash, until))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def run_expire_irs(conn: sqlite3.Connection, now: float) -> int:
    conn.execute("BEGIN IMMEDIATE")
    try:
        gone = conn.execute(EXPIRE_IRS, (now,)).rowcount
        conn.execute(FORGET_KEPT, (now,))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return gone


def run_get(conn: sqlite3.Connection, session_id: str) -> tuple | None:
    return conn.execute(GET, (session_id, time.time())).fetchone()


def run_changes(conn: sqlite3.Connection, sql: str, args: tuple) -> int:
    return conn.execute(sql, args).rowcount


def run_fetch(conn: sqlite3.Connection, sql: str, args: tuple) -> tuple | None:
    return conn.execute(sql, args).fetchone()
