"""The embedded default store: diskcache (SQLite plus files) in a directory."""

from __future__ import annotations

import io
import os
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, suppress
from pathlib import Path
from typing import Any

import diskcache

from ._index import Entry
from ._kv import KeyValueStore, store_failure, translated

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
)
_ADD = "INSERT OR IGNORE INTO addressable_index (name, score, member) VALUES (?, ?, ?)"
_REMOVE = "DELETE FROM addressable_index WHERE name = ? AND score = ? AND member = ?"
# A value under the file threshold, as diskcache's `set` stores bytes: a raw (text) key,
# no expiry or tag, mode 1 (raw bytes in the row), size 0 (no file).
_INSERT = (
    "INSERT OR IGNORE INTO Cache (key, raw, store_time, expire_time, access_time, "
    "access_count, tag, size, mode, filename, value) VALUES (?, 1, ?, NULL, ?, 0, NULL, 0, "
    f"{diskcache.core.MODE_RAW}, NULL, ?)"
)
# A record with its payload and its token count, found by the content hash its JSON
# names (the reader checks that hash against the bytes, as on every read).
_HASH_AT = (
    'substr(CAST(r.value AS TEXT), instr(CAST(r.value AS TEXT), \'"content_hash":"\') + 16, 32)'
)
_JOINED = (
    f"SELECT r.value, b.value, t.value FROM Cache AS r "
    f"LEFT JOIN Cache AS b ON b.key = 'b:' || {_HASH_AT} AND b.raw = 1 "
    f"AND b.mode = {diskcache.core.MODE_RAW} AND b.filename IS NULL "
    f"LEFT JOIN Cache AS t ON t.key = 't:' || {_HASH_AT} AND t.raw = 1 "
    "WHERE r.key = ? AND r.raw = 1"
)
_LOWEST, _HIGHEST = -(1 << 63), (1 << 63) - 1


def default_home() -> Path:
    """`$ADDRESSABLE_HOME`, or `.addressable` in the current directory."""
    return Path(os.environ.get("ADDRESSABLE_HOME") or ".addressable")


class _DiskBackend:
    failures = _FAILURES
    ranged_keys = True  # diskcache's index on keys: `keys(prefix)` reads only those

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self.location = f"disk://{self.directory}"
        self._open()

    @translated("opening")
    def _open(self) -> None:
        self._cache = diskcache.Cache(str(self.directory), **_SETTINGS)
        found = self._sql(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'addressable\\_index%' ESCAPE '\\'"
        ).fetchone()[0]
        if found < len(_SCHEMA):
            with self._cache.transact():
                for statement in _SCHEMA:
                    self._sql(statement)

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
        value = self._cache.get(key)
        return None if value is None else bytes(value)

    @translated("reading")
    def get_joined(self, key: str) -> tuple[bytes, bytes | None, bytes | None] | None:
        """A record's value, with its payload (when kept in the row, not a file) and its
        token count, in one statement; None if there is no record."""
        rows = self._cache._con.execute(_JOINED, (key,)).fetchall()
        if not rows:
            return None
        ((value, payload, tokens),) = rows
        return bytes(value), None if payload is None else bytes(payload), tokens

    @translated("writing")
    def set(self, key: str, value: bytes) -> None:
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
    ) -> bool:
        with self._cache.transact():
            con = self._cache._con
            now = time.time()
            if len(payload) < _FILE_THRESHOLD:
                # Rows as diskcache writes them (raw string key, bytes in the row), in
                # one statement each: no read before the write, and `INSERT OR IGNORE`
                # on diskcache's unique index says whether the key was there.
                new_blob = con.execute(_INSERT, (blob, now, now, payload)).rowcount == 1
            elif new_blob := blob not in self._cache:
                # Checked first: `add` would write a large payload to its file in full
                # before finding that it is already there.
                self._cache.set(blob, io.BytesIO(payload), read=True)
            if con.execute(_INSERT, (record, now, now, value)).rowcount != 1:
                if new_blob:
                    self._add(blob_index)
                return False
            self._add([*index, *blob_index] if new_blob else index)
            return True

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
        rows = self._sql(
            "SELECT member FROM addressable_index WHERE name = ? AND score BETWEEN ? AND ? "
            f"ORDER BY score {order}, member {order} LIMIT ? OFFSET ?",
            (
                name,
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
            (name, prefix, prefix + "\U0010ffff"),
        )
        return [member for (member,) in rows]

    @translated("reading an index")
    def size(self, name: str) -> tuple[int, int]:
        row = self._sql(
            "SELECT members, total FROM addressable_index_size WHERE name = ?", (name,)
        ).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    @translated("indexing")
    def drop_indexes(self) -> None:
        with self._cache.transact():
            self._sql("DELETE FROM addressable_index")
            self._sql("DELETE FROM addressable_index_size")

    @translated("reading")
    def items(self, key: str) -> list[bytes]:
        value = self._cache.get(key)
        return bytes(value).splitlines() if value else []

    @translated("deleting")
    def delete(self, key: str) -> None:
        self._cache.delete(key)

    @translated("reading")
    def contains(self, key: str) -> bool:
        return key in self._cache

    @translated("listing")
    def keys(self, prefix: str) -> list[str]:
        # A range of diskcache's own index on keys (string keys are stored as text):
        # only the keys with the prefix are read.
        rows = self._sql(
            "SELECT key FROM Cache WHERE key >= ? AND key < ? AND raw = 1 ORDER BY key",
            (prefix, prefix + "\U0010ffff"),
        )
        return [str(key) for (key,) in rows]

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
