"""The embedded default store: diskcache (SQLite plus files) in a directory."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import diskcache

from ._index import ADDRESS, BLOBS, INDEXES, KEY, SESSION, TIME, TOOL, TOOLS, Entry, Row, micros
from ._kv import BLOB, RECORD, KeyValueStore, store_failure, translated

# diskcache writes values from this size on to files of their own. Handing it a file
# object for those is about twice as fast as handing it the bytes (measured: 1 MB took
# 3.1 ms against 5.9 ms), and smaller ones are faster as plain bytes in SQLite.
_FILE_THRESHOLD = 32 * 1024

_SETTINGS: dict[str, Any] = {
    "eviction_policy": "none",  # never evict on its own: only our gc removes records
    "cull_limit": 0,  # no culling on writes
    "statistics": False,  # no hit/miss counters: they cost a write on every read
    "disk_min_file_size": _FILE_THRESHOLD,  # bytes; larger values go to files
    "timeout": 60,  # seconds to wait for the SQLite lock held by another writer
}

_FAILURES = (diskcache.Timeout, sqlite3.Error, OSError)
# How diskcache names the file of a large value: two levels of folders, then random hex.
_VALUE_FILE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{28}\.val")

# The indexes live in tables of their own in diskcache's SQLite database, written on its
# connection inside its transactions: an index entry commits with what it indexes. One
# table holds every pair, clustered by (name, score, member), so that the entries of a
# write land on few pages; triggers keep the size of each "#" index.
#
# Records have a table of their own, one row a record: its id, what it is found by (the
# `Row`: time, tool, key, session, payload address), its stored JSON, and its payload when
# that is small and not stored already (a later record with the same payload points at
# that copy: payloads are still stored once). SQLite's own indexes on the columns serve
# `#time`, `#tool:`, `key:` and `session:`, and triggers keep their sizes, the tool and
# session registries and the count of payloads: a write is one row in one statement.
# Large payloads go to diskcache (a file each), under their address, as before.
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS addressable_index (
        name TEXT NOT NULL, score INTEGER NOT NULL, member TEXT NOT NULL,
        PRIMARY KEY (name, score, member)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS addressable_index_size (
        name TEXT PRIMARY KEY, members INTEGER NOT NULL, total INTEGER NOT NULL) WITHOUT ROWID""",
    """CREATE TRIGGER IF NOT EXISTS addressable_index_added AFTER INSERT ON addressable_index
    WHEN substr(new.name, 1, 1) = '#'
    BEGIN
        INSERT INTO addressable_index_size VALUES (new.name, 1, new.score)
        ON CONFLICT (name) DO UPDATE SET members = members + 1, total = total + new.score;
    END""",
    """CREATE TRIGGER IF NOT EXISTS addressable_index_removed AFTER DELETE ON addressable_index
    WHEN substr(old.name, 1, 1) = '#'
    BEGIN
        UPDATE addressable_index_size SET members = members - 1, total = total - old.score
        WHERE name = old.name;
    END""",
    """CREATE TABLE IF NOT EXISTS addressable_records (
        id TEXT PRIMARY KEY, at INTEGER NOT NULL, tool TEXT NOT NULL, key TEXT, session TEXT,
        address TEXT NOT NULL, value BLOB NOT NULL, payload BLOB)""",
    "CREATE INDEX IF NOT EXISTS addressable_records_at ON addressable_records (at, id)",
    "CREATE INDEX IF NOT EXISTS addressable_records_tool ON addressable_records (tool, at, id)",
    """CREATE INDEX IF NOT EXISTS addressable_records_key ON addressable_records (key, at, id)
    WHERE key IS NOT NULL""",
    """CREATE INDEX IF NOT EXISTS addressable_records_session
    ON addressable_records (session, at, id) WHERE session IS NOT NULL""",
    "CREATE INDEX IF NOT EXISTS addressable_records_address ON addressable_records (address)",
    # Records, payloads kept in rows and their bytes, by tool: one upsert a write.
    """CREATE TABLE IF NOT EXISTS addressable_counts (
        tool TEXT PRIMARY KEY, records INTEGER NOT NULL, payloads INTEGER NOT NULL,
        bytes INTEGER NOT NULL) WITHOUT ROWID""",
    """CREATE TRIGGER IF NOT EXISTS addressable_record_added AFTER INSERT ON addressable_records
    BEGIN
        INSERT INTO addressable_counts
        VALUES (new.tool, 1, new.payload IS NOT NULL, coalesce(length(new.payload), 0))
        ON CONFLICT (tool) DO UPDATE SET records = records + 1,
            payloads = payloads + excluded.payloads, bytes = bytes + excluded.bytes;
        INSERT OR IGNORE INTO addressable_index
        SELECT '#sessions', 0, new.session WHERE new.session IS NOT NULL;
    END""",
    """CREATE TRIGGER IF NOT EXISTS addressable_record_removed
    AFTER DELETE ON addressable_records
    BEGIN
        UPDATE addressable_counts SET records = records - 1,
            payloads = payloads - (old.payload IS NOT NULL),
            bytes = bytes - coalesce(length(old.payload), 0)
        WHERE tool = old.tool;
    END""",
    """CREATE TRIGGER IF NOT EXISTS addressable_record_moved
    AFTER UPDATE OF payload ON addressable_records
    BEGIN
        UPDATE addressable_counts
        SET payloads = payloads + (new.payload IS NOT NULL) - (old.payload IS NOT NULL),
            bytes = bytes + coalesce(length(new.payload), 0) - coalesce(length(old.payload), 0)
        WHERE tool = new.tool;
    END""",
)
_ADD = "INSERT OR IGNORE INTO addressable_index (name, score, member) VALUES (?, ?, ?)"
_REMOVE = "DELETE FROM addressable_index WHERE name = ? AND score = ? AND member = ?"
# A record, with its payload unless a copy is stored already (in a record's row, or in
# diskcache under its address, ?9).
_PUT = (
    "INSERT OR IGNORE INTO addressable_records "
    "(id, at, tool, key, session, address, value, payload) "
    "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, CASE WHEN "
    "EXISTS (SELECT 1 FROM addressable_records WHERE address = ?6 AND payload IS NOT NULL) "
    "OR EXISTS (SELECT 1 FROM Cache WHERE key = ?9 AND raw = 1) THEN NULL ELSE ?8 END"
)
_PUT_ROW = (
    "INSERT OR IGNORE INTO addressable_records (id, at, tool, key, session, address, value) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_SET_ROW = (
    f"{_PUT_ROW.replace('OR IGNORE ', '')} ON CONFLICT (id) DO UPDATE SET value = excluded.value, "
    "at = excluded.at, tool = excluded.tool, key = excluded.key, session = excluded.session"
)
# The payload of a record whose row holds none: another row's copy.
_COPY = "SELECT payload FROM addressable_records WHERE address = ? AND payload IS NOT NULL LIMIT 1"
# A record with its payload (from its row, another row, or a diskcache row; not a file)
# and its token count, in one statement.
_JOINED = (
    "SELECT r.value, coalesce(r.payload, (SELECT c.payload FROM addressable_records AS c "
    "WHERE c.address = r.address AND c.payload IS NOT NULL LIMIT 1), b.value), t.value "
    "FROM addressable_records AS r "
    "LEFT JOIN Cache AS b ON b.key = 'b:' || r.address AND b.raw = 1 "
    f"AND b.mode = {diskcache.core.MODE_RAW} AND b.filename IS NULL "
    "LEFT JOIN Cache AS t ON t.key = 't:' || r.address AND t.raw = 1 "
    "WHERE r.id = ?"
)
# The counts the record triggers keep, and the session registry, from the rows again
# (after `drop_indexes`).
_RECOUNT = (
    "DELETE FROM addressable_counts",
    """INSERT INTO addressable_counts SELECT tool, count(*), count(payload),
    coalesce(sum(length(payload)), 0) FROM addressable_records GROUP BY tool""",
    "INSERT OR IGNORE INTO addressable_index SELECT DISTINCT '#sessions', 0, session "
    "FROM addressable_records WHERE session IS NOT NULL",
)
# Which column of a record's row answers an index of each name.
_COLUMNS = {TOOL: "tool", KEY: "key", SESSION: "session"}
_LOWEST, _HIGHEST = -(1 << 63), (1 << 63) - 1
_HASH = re.compile(rb'"content_hash":"([0-9a-f]{64})"')
_log = logging.getLogger("addressable")
_TOP = "\U0010ffff"  # above every character: (prefix, prefix + _TOP) is a key range


def _row_in(value: bytes) -> Row:
    """The `Row` of a record as stored (by hand, or by an earlier version); a record that
    cannot be read gets an empty one, and stays for `verify` to name."""
    body = value if value[:1] == b"{" else value.partition(b"\n")[2]
    try:
        data = json.loads(body)
        when = datetime.fromisoformat(data["observed_at"])
        key, session = data.get("key"), data.get("session")
        return Row(
            micros(when if when.tzinfo else when.replace(tzinfo=UTC)),
            str(data["tool"]),
            key if isinstance(key, str) else None,
            session if isinstance(session, str) else None,
            str(data["content_hash"])[:ADDRESS],
        )
    except (ValueError, KeyError, TypeError, RecursionError):
        found = _HASH.search(value)
        return Row(0, "", None, None, found[1].decode()[:ADDRESS] if found else "")


def default_home() -> Path:
    """`$ADDRESSABLE_HOME`, or `.addressable` in the current directory."""
    return Path(os.environ.get("ADDRESSABLE_HOME") or ".addressable")


class _DiskBackend:
    failures = _FAILURES
    ranged_keys = True  # diskcache's index on keys: `keys(prefix)` reads only those
    indexes_records = True  # a record's Row is in its own row (see `_index`)

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self.location = f"disk://{self.directory}"
        self._open()

    @translated("opening")
    def _open(self) -> None:
        self._cache = diskcache.Cache(str(self.directory), **_SETTINGS)
        found = self._sql(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'addressable\\_%' ESCAPE '\\'"
        ).fetchone()[0]
        if found < len(_SCHEMA):
            with self._cache.transact():
                for statement in _SCHEMA:
                    self._sql(statement)
        if self._sql("SELECT 1 FROM Cache WHERE key >= 'r:' AND key < 'r;' LIMIT 1").fetchone():
            self._move_records()

    def _move_records(self) -> None:
        """Records an earlier version kept as diskcache values move to their table, once;
        the store then indexes itself again (its marker goes)."""
        with self._cache.transact():
            keys = [
                str(k)
                for (k,) in self._sql(
                    "SELECT key FROM Cache WHERE key >= 'r:' AND key < 'r;' AND raw = 1"
                )
            ]
            for done, key in enumerate(keys, start=1):
                value = self._cache.get(key)
                if value is not None:
                    self._insert_row(key[len(RECORD) :], bytes(value))
                self._cache.delete(key)
                if done % 1000 == 0:
                    _log.info("moving records at %s: %d of %d", self.location, done, len(keys))
            self._sql("DELETE FROM addressable_index WHERE name = ?", (INDEXES,))

    def _insert_row(self, record_id: str, value: bytes) -> None:
        """A record's row for its stored value; one there gets the new value, and keeps
        its payload and address."""
        self._cache._con.execute(_SET_ROW, (record_id, *_row_in(value), value))

    @property
    def _sql(self) -> Callable[..., sqlite3.Cursor]:
        # diskcache's own connection (one a thread, reopened after a fork): statements on
        # it join the transaction `transact` holds.
        sql: Callable[..., sqlite3.Cursor] = self._cache._sql
        return sql

    def _add(self, entries: Sequence[Entry]) -> None:
        if entries:
            self._cache._con.executemany(_ADD, entries)

    @translated("reading")
    def get(self, key: str) -> bytes | None:
        if key.startswith(RECORD):
            row = self._sql(
                "SELECT value FROM addressable_records WHERE id = ?", (key[len(RECORD) :],)
            ).fetchone()
            return None if row is None else bytes(row[0])
        value = self._cache.get(key)
        if value is None and key.startswith(BLOB):
            row = self._sql(_COPY, (key[len(BLOB) :],)).fetchone()
            return None if row is None else bytes(row[0])
        return None if value is None else bytes(value)

    @translated("reading")
    def get_joined(self, key: str) -> tuple[bytes, bytes | None, bytes | None] | None:
        """A record's value, with its payload (when kept in a row, not a file) and its
        token count, in one statement; None if there is no record."""
        rows = self._cache._con.execute(_JOINED, (key[len(RECORD) :],)).fetchall()
        if not rows:
            return None
        ((value, payload, tokens),) = rows
        return bytes(value), None if payload is None else bytes(payload), tokens

    @translated("writing")
    def set(self, key: str, value: bytes) -> None:
        if key.startswith(RECORD):  # by hand, or an import: the row follows the value
            self._insert_row(key[len(RECORD) :], value)
            return
        if key.startswith(BLOB):
            with self._cache.transact():
                if self._sql(
                    "UPDATE addressable_records SET payload = ? "
                    "WHERE address = ? AND payload IS NOT NULL",
                    (value, key[len(BLOB) :]),
                ).rowcount:
                    return
                self._set(key, value)
            return
        self._set(key, value)

    def _set(self, key: str, value: bytes) -> None:
        if len(value) >= _FILE_THRESHOLD:
            # Inside a transaction, so that its file is written only while the writer
            # holds the lock: gc, holding it, never sees a file about to be committed.
            with self._cache.transact():
                self._cache.set(key, io.BytesIO(value), read=True)
        else:
            self._cache.set(key, value)

    @translated("writing")
    def put_pair(
        self,
        blob: str,
        payload: bytes,
        record: str,
        value: bytes,
        index: Sequence[Entry] = (),
        blob_index: Sequence[Entry] = (),
        row: Row | None = None,
    ) -> bool:
        if row is None:
            row = _row_in(value)
        rid = record[len(RECORD) :]
        if len(payload) >= _FILE_THRESHOLD:
            with self._cache.transact():
                if blob not in self._cache:
                    # Checked first: `add` would write a large payload to its file in
                    # full before finding that it is already there.
                    self._cache.set(blob, io.BytesIO(payload), read=True)
                    self._add(blob_index)
                new = self._cache._con.execute(_PUT_ROW, (rid, *row, value)).rowcount == 1
                if new:
                    self._add(index)
            return bool(new)
        # One statement, in SQLite's own transaction opened for writing at once (a read
        # that turned into a write could find the database changed meanwhile);
        # diskcache's `transact` does the same with more Python around it.
        con = self._cache._con
        con.execute("BEGIN IMMEDIATE")
        try:
            new = con.execute(_PUT, (rid, *row, value, payload, blob)).rowcount == 1
            if new:
                self._add(index)
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        return bool(new)

    @translated("writing")
    def append(self, key: str, item: bytes, index: Sequence[Entry] = ()) -> None:
        # One value holding the items, one a line (items are JSON: no raw newlines).
        with self._cache.transact():
            current = self._cache.get(key)
            self._cache.set(key, (bytes(current) if current else b"") + item + b"\n")
            self._add(index)

    @translated("indexing")
    def index(self, add: Sequence[Entry] = (), remove: Sequence[Entry] = ()) -> None:
        with self._cache.transact():
            self._add(add)
            if remove:
                self._cache._con.executemany(_REMOVE, remove)

    @translated("reading an index")
    def members(
        self,
        name: str,
        *,
        low: int | None = None,
        high: int | None = None,
        reverse: bool = False,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[str]:
        order = "DESC" if reverse else "ASC"
        args: tuple[str, ...] = ()
        if name == TOOLS:
            pairs = "SELECT 0 AS score, tool AS member FROM addressable_counts WHERE records > 0"
        elif name == TIME:
            pairs = "SELECT at AS score, id AS member FROM addressable_records"
        elif prefix := next((p for p in _COLUMNS if name.startswith(p)), None):
            value = name[len(prefix) :]
            pairs = (
                "SELECT at AS score, id AS member FROM addressable_records "
                f"WHERE {_COLUMNS[prefix]} = ?"
            )
            args = (value,)
            if prefix == SESSION:  # and the later sightings in the session
                pairs += " UNION ALL SELECT score, member FROM addressable_index WHERE name = ?"
                args = (value, name)
        else:
            pairs = "SELECT score, member FROM addressable_index WHERE name = ?"
            args = (name,)
        rows = self._sql(
            f"SELECT member FROM ({pairs}) WHERE score BETWEEN ? AND ? "
            f"ORDER BY score {order}, member {order} LIMIT ? OFFSET ?",
            (
                *args,
                _LOWEST if low is None else low,
                _HIGHEST if high is None else high,
                -1 if limit is None else limit,
                offset,
            ),
        )
        return [member for (member,) in rows]

    @translated("reading an index")
    def prefixed(self, name: str, prefix: str) -> list[str]:
        rows = self._sql(
            "SELECT member FROM addressable_index "
            "WHERE name = ? AND score = 0 AND member >= ? AND member < ? ORDER BY member",
            (name, prefix, prefix + _TOP),
        )
        return [member for (member,) in rows]

    @translated("reading an index")
    def size(self, name: str) -> tuple[int, int]:
        # The record counts are kept by tool; a count of records has no sum of scores.
        if name == TIME:
            row = self._sql("SELECT sum(records), 0 FROM addressable_counts").fetchone()
            return int(row[0] or 0), 0
        if name.startswith(TOOL):
            row = self._sql(
                "SELECT records, 0 FROM addressable_counts WHERE tool = ?", (name[len(TOOL) :],)
            ).fetchone()
            return (0, 0) if row is None else (int(row[0]), 0)
        found = self._size(name)
        if name == BLOBS:  # and the payloads kept in records' rows
            row = self._sql("SELECT sum(payloads), sum(bytes) FROM addressable_counts").fetchone()
            return found[0] + int(row[0] or 0), found[1] + int(row[1] or 0)
        return found

    def _size(self, name: str) -> tuple[int, int]:
        row = self._sql(
            "SELECT members, total FROM addressable_index_size WHERE name = ?", (name,)
        ).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    @translated("indexing")
    def drop_indexes(self) -> None:
        with self._cache.transact():
            self._sql("DELETE FROM addressable_index")
            self._sql("DELETE FROM addressable_index_size")
            for statement in _RECOUNT:  # what the records' rows give, from them
                self._sql(statement)

    @translated("reading")
    def items(self, key: str) -> list[bytes]:
        value = self._cache.get(key)
        return bytes(value).splitlines() if value else []

    @translated("deleting")
    def delete(self, key: str) -> None:
        if key.startswith(RECORD):
            with self._cache.transact():
                self._delete_record(key[len(RECORD) :])
            return
        if key.startswith(BLOB):  # wherever it is kept
            with self._cache.transact():
                self._cache.delete(key)
                self._sql(
                    "UPDATE addressable_records SET payload = NULL WHERE address = ?",
                    (key[len(BLOB) :],),
                )
            return
        self._cache.delete(key)

    def _delete_record(self, record_id: str) -> None:
        found = self._sql(
            "SELECT address, payload FROM addressable_records WHERE id = ?", (record_id,)
        ).fetchone()
        if found is None:
            return
        address, payload = found
        if payload is not None:
            # The copy others point at moves to one of them before its row goes.
            self._sql(
                "UPDATE addressable_records SET payload = ? WHERE id = "
                "(SELECT id FROM addressable_records WHERE address = ? AND id != ? LIMIT 1)",
                (payload, address, record_id),
            )
        self._sql("DELETE FROM addressable_records WHERE id = ?", (record_id,))

    @translated("reading")
    def contains(self, key: str) -> bool:
        if key.startswith(RECORD):
            return (
                self._sql(
                    "SELECT 1 FROM addressable_records WHERE id = ?", (key[len(RECORD) :],)
                ).fetchone()
                is not None
            )
        if key in self._cache:
            return True
        return key.startswith(BLOB) and self._sql(_COPY, (key[len(BLOB) :],)).fetchone() is not None

    @translated("listing")
    def keys(self, prefix: str) -> list[str]:
        # A range of diskcache's own index on keys (string keys are stored as text):
        # only the keys with the prefix are read; records' ids likewise from their table.
        rows = self._sql(
            "SELECT key FROM Cache WHERE key >= ? AND key < ? AND raw = 1 ORDER BY key",
            (prefix, prefix + _TOP),
        )
        found = [str(key) for (key,) in rows]
        if RECORD.startswith(prefix) or prefix.startswith(RECORD):
            low = prefix[len(RECORD) :] if prefix.startswith(RECORD) else ""
            ids = self._sql(
                "SELECT id FROM addressable_records WHERE id >= ? AND id < ? ORDER BY id",
                (low, low + _TOP),
            )
            found = sorted([*found, *(RECORD + str(i) for (i,) in ids)])
        return found

    @translated("listing")
    def strays(self) -> dict[str, int]:
        # Every file is written inside a transaction, before its row is committed; a
        # writer killed in between leaves the file with no row. The rows are read on a
        # connection of their own: inside gc's transaction that is the committed state.
        db = sqlite3.connect(
            f"{(self.directory / diskcache.core.DBNAME).as_uri()}?mode=ro", uri=True
        )
        try:
            known = {
                str(name)
                for (name,) in db.execute("SELECT filename FROM Cache WHERE filename IS NOT NULL")
            }
        finally:
            db.close()
        found: dict[str, int] = {}
        for path in self.directory.glob("*/*/*.val"):
            name = path.relative_to(self.directory).as_posix()
            if _VALUE_FILE.fullmatch(name) and name not in known:
                with suppress(FileNotFoundError):  # removed meanwhile by its deleter
                    found[name] = path.stat().st_size
        return found

    @translated("deleting")
    def remove_stray(self, name: str) -> None:
        if not _VALUE_FILE.fullmatch(name):
            return  # not a file of the store's own naming: never touched
        path = self.directory / name
        path.unlink(missing_ok=True)
        for folder in (path.parent, path.parent.parent):  # as diskcache does: empty ones go
            with suppress(OSError):
                folder.rmdir()

    def exclusive(self) -> _Transaction:
        """gc's section: SQLite's write lock, which the operating system frees at once
        when the process holding it dies; a live holder is waited for up to the
        `timeout` in _SETTINGS (60 s)."""
        return _Transaction(self)

    def close(self) -> None:
        self._cache.close()


class _Transaction:
    """diskcache's transaction, its failures translated (a class: cheaper than a generator
    on the path every write takes)."""

    def __init__(self, backend: _DiskBackend) -> None:
        self._backend = backend
        self._inner: AbstractContextManager[None] | None = None

    def __enter__(self) -> None:
        self._inner = self._backend._cache.transact()
        try:
            self._inner.__enter__()
        except _FAILURES as exc:
            raise store_failure(self._backend.location, "a transaction", exc) from exc

    def __exit__(self, *exc_info: Any) -> None:
        assert self._inner is not None
        try:
            self._inner.__exit__(*exc_info)
        except _FAILURES as exc:
            raise store_failure(self._backend.location, "a transaction", exc) from exc


class DiskStore(KeyValueStore):
    """A `Store` in a directory, safe for many threads and processes at once.

    Opened by `open_store()` in `$ADDRESSABLE_HOME`, or `./.addressable` when that is
    not set; `open_store("disk:///path")` or a plain path picks another directory.

    gc holds SQLite's write lock while it marks and sweeps; writers wait for it (up to
    60 s, then `StoreError`). The lock is the operating system's: it is freed the moment
    a process holding it dies, so a gc that dies blocks no writer.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        path = Path(directory) if directory is not None else default_home()
        self.directory = path.resolve()
        super().__init__(_DiskBackend(path))
