"""The embedded default store: diskcache (SQLite plus files) in a folder.

Its tables and statements are in `store.disk.sql`. The backend keeps a record in a row of
its own and its indexes in SQLite, on diskcache's own connection, so that an entry
commits with what it indexes; it finds the stray files a writer killed before its row
committed left behind.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import diskcache

from ...core.errors import StoreError
from ..backend import store_failure, translated
from ..index import (
    ADDRESS,
    BLOBS,
    KEY,
    PAYLOAD,
    SESSION,
    TIME,
    TOOL,
    TOOLS,
    Entry,
    Row,
    micros,
)
from ..keys import BLOB, OBSERVED, RECORD
from ..kv import KeyValueStore
from .sql import (
    ADD,
    ADD_SIGHTING,
    COPY,
    JOINED,
    PUT,
    PUT_ROW,
    RECOUNT,
    REMOVE,
    SCHEMA,
    SET_ROW,
    TOP,
)

_HASH = re.compile(rb'"content_hash":"([0-9a-f]{64})"')


def row_in(value: bytes) -> Row:
    """The `Row` of a record as stored (set by hand, or imported); a record that cannot
    be read gets an empty one, and stays for `verify` to name."""
    try:
        data = json.loads(value.partition(b"\n")[2])
        when = datetime.fromisoformat(data["observed_at"])
        key, session = data.get("key"), data.get("session")
        return Row(
            micros(when),
            str(data["tool"]),
            key if isinstance(key, str) else None,
            session if isinstance(session, str) else None,
            str(data["content_hash"])[:ADDRESS],
        )
    except (ValueError, KeyError, TypeError, RecursionError):
        found = _HASH.search(value)
        return Row(0, "", None, None, found[1].decode()[:ADDRESS] if found else "")


# How diskcache names the file of a large value: two levels of folders, then random hex.
_VALUE_FILE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{28}\.val")


# Which column of a record's row answers an index of each name.
_COLUMNS = {TOOL: "tool", KEY: "key", SESSION: "session", PAYLOAD: "address"}
_LOWEST, _HIGHEST = -(1 << 63), (1 << 63) - 1


# Payloads from this size on go to files, handed to diskcache as file objects; smaller
# ones stay in their record's row, where SQLite writes and reads them faster than a file
# (the figures: benchmarks/README.md, "Why the store is built as it is").
_FILE_THRESHOLD = 128 * 1024

_SETTINGS: dict[str, Any] = {
    "eviction_policy": "none",  # never evict on its own: only our gc removes records
    "cull_limit": 0,  # no culling on writes
    "statistics": False,  # no hit/miss counters: they cost a write on every read
    "disk_min_file_size": _FILE_THRESHOLD,  # bytes; larger values go to files
    "timeout": 60,  # seconds to wait for the SQLite lock held by another writer
}

_FAILURES = (diskcache.Timeout, sqlite3.Error, OSError)


# Forks of this process since this module was imported (see `get_joined`).
_forks = [0]
if hasattr(os, "register_at_fork"):  # POSIX: elsewhere no process forks
    os.register_at_fork(after_in_child=lambda: _forks.__setitem__(0, _forks[0] + 1))


def stored(value: bytes | memoryview | str) -> bytes:
    """A value as SQLite gave it back, as bytes. Values are written as BLOBs; one edited
    by hand with SQL's text functions (`replace(value, ...)`) comes back as TEXT, and
    is read as the UTF-8 it holds, for its record's checksum to judge."""
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)


def default_home() -> Path:
    """`$ADDRESSABLE_HOME`, or `.addressable` in the current directory."""
    return Path(os.environ.get("ADDRESSABLE_HOME") or ".addressable")


class _DiskBackend:
    failures = _FAILURES
    ranged_keys = True  # diskcache's index on keys: `keys(prefix)` reads only those
    indexes_records = True  # a record's Row is in its own row (see `store.index`)
    # A writer waiting for the lock looks again after 1, 2, 5, 10, 15, 20 and 25 ms
    # (SQLite's busy handler, up to 100 ms once it has waited 128 ms): with batches
    # this short, it looks within each pause.
    gc_batch_time = 0.01  # seconds
    gc_pause = 0.03

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self.location = f"disk://{self.directory}"
        self._forks = _forks[0]
        # Files of values deleted in the transaction a thread holds, by thread: removed
        # once it commits (see `_drop`).
        self._doomed: dict[int, list[str]] = {}
        self._open()

    @translated("opening")
    def _open(self) -> None:
        self._cache = diskcache.Cache(str(self.directory), **_SETTINGS)
        found = self._sql(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'addressable\\_%' ESCAPE '\\'"
        ).fetchone()[0]
        if found != len(SCHEMA):  # a new store
            with self._cache.transact():
                for statement in SCHEMA:
                    self._sql(statement)

    @translated("reading")
    def get(self, key: str) -> bytes | None:
        if key.startswith(RECORD):
            row = self._sql(
                "SELECT value FROM addressable_records WHERE id = ?", (key[len(RECORD) :],)
            ).fetchone()
            return None if row is None else stored(row[0])
        value = self._cache.get(key)
        if value is None and key.startswith(BLOB):
            row = self._sql(COPY, (key[len(BLOB) :],)).fetchone()
            return None if row is None else stored(row[0])
        return None if value is None else stored(value)

    def get_joined(self, record_id: str) -> tuple[bytes, bytes | None, bytes | None] | None:
        """A record's value, with its payload (when kept in a row, not a file) and its
        token count, in one statement; None if there is no record."""
        # `id` is the primary key: one row at most. Blobs come back as `bytes`. What
        # `translated` does, written out: a replay runs this, and a wrapper is a call.
        row: tuple[bytes, bytes | None, bytes | None] | None
        try:
            # diskcache's `_con` asks the system for the process id on every call, to
            # open a connection of its own in a forked child. Here this thread's
            # connection is read directly while no fork has happened since; else (or
            # when this thread has none yet) `_con` makes one, as diskcache does.
            try:
                if self._forks != _forks[0]:
                    raise AttributeError
                con = self._cache._local.con
            except AttributeError:
                con = self._cache._con
                self._forks = _forks[0]
            row = con.execute(JOINED, (record_id,)).fetchone()
        except _FAILURES as exc:
            raise store_failure(self.location, "reading", exc) from exc
        return row

    @translated("writing")
    def set(self, key: str, value: bytes) -> None:
        if key.startswith(RECORD):  # by hand, or an import: the row follows the value
            self._insert_row(key[len(RECORD) :], value)
            return
        if key.startswith(BLOB):
            with self._transaction():
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
        if len(value) >= _FILE_THRESHOLD or self._in_transaction():
            # Inside a transaction, so that its file is written only while the writer
            # holds the lock: gc, holding it, never sees a file about to be committed.
            # The value it replaces is dropped first, its file kept until the commit
            # (diskcache, nested, would remove it at once).
            with self._transaction():
                self._drop(key)
                if len(value) >= _FILE_THRESHOLD:
                    self._cache.set(key, io.BytesIO(value), read=True)
                else:
                    self._cache.set(key, value)
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
            row = row_in(value)
        rid = record[len(RECORD) :]
        if len(payload) >= _FILE_THRESHOLD:
            with self._transaction():
                kept = self._sql(
                    "SELECT filename FROM Cache WHERE key = ? AND raw = 1", (blob,)
                ).fetchone()
                # Checked first: `add` would write a large payload to its file in full
                # before finding that it is already there. A row whose file is gone
                # (damage) is written again: the new record is then whole.
                if kept is None or (kept[0] and not (self.directory / kept[0]).is_file()):
                    self._drop(blob)
                    self._cache.set(blob, io.BytesIO(payload), read=True)
                    self._add(blob_index)
                new = self._cache._con.execute(PUT_ROW, (rid, *row, value)).rowcount == 1
                if new:
                    self._add(index)
            return bool(new)
        # SQLite's own transaction, opened for writing at once (a read that turned into a
        # write could find the database changed meanwhile). A statement that writes opens
        # its own so, before it reads, waiting for another writer up to the timeout: one
        # statement needs no BEGIN and COMMIT, and a write is spared their cost; with
        # index entries too, BEGIN IMMEDIATE does the same for several. Inside a
        # transaction this thread already holds, either joins that one.
        con = self._cache._con
        if not index:
            return bool(con.execute(PUT, (rid, *row, value, payload, blob)).rowcount == 1)
        own = not con.in_transaction
        if own:
            con.execute("BEGIN IMMEDIATE")
        try:
            new = con.execute(PUT, (rid, *row, value, payload, blob)).rowcount == 1
            if new:
                self._add(index)
            if own:
                con.execute("COMMIT")
        except BaseException:
            if own and con.in_transaction:  # a failed COMMIT too: the lock is let go
                con.execute("ROLLBACK")
            raise
        return bool(new)

    @translated("writing")
    def append(
        self, key: str, item: bytes, index: Sequence[Entry] = (), requires: str | None = None
    ) -> bool:
        with self._transaction():
            if requires is not None and not self.contains(requires):
                return False
            if key.startswith(OBSERVED):  # a row of its own: the others are not read
                self._cache._con.execute(ADD_SIGHTING, (key[len(OBSERVED) :], item))
            else:  # one value holding the items, one a line (JSON: no raw newlines)
                current = self._cache.get(key)
                self._set(key, (bytes(current) if current else b"") + item + b"\n")
            self._add(index)
        return True

    @translated("reading")
    def items(self, key: str) -> list[bytes]:
        if key.startswith(OBSERVED):
            rows = self._all(
                "SELECT item FROM addressable_sightings WHERE id = ? ORDER BY rowid",
                (key[len(OBSERVED) :],),
            )
            return [stored(item) for (item,) in rows]
        value = self._cache.get(key)
        return stored(value).splitlines() if value else []

    @translated("deleting")
    def delete(self, key: str) -> None:
        if key.startswith(RECORD):
            with self._transaction():
                self._delete_record(key[len(RECORD) :])
            return
        if key.startswith(OBSERVED):
            self._sql("DELETE FROM addressable_sightings WHERE id = ?", (key[len(OBSERVED) :],))
            return
        with self._transaction():
            self._drop(key)
            if key.startswith(BLOB):  # wherever it is kept
                self._sql(
                    "UPDATE addressable_records SET payload = NULL WHERE address = ?",
                    (key[len(BLOB) :],),
                )

    # -- transactions: a value's file is removed only once its row's deletion commits --

    def _in_transaction(self) -> bool:
        return bool(self._cache._txn_id == threading.get_ident())

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """diskcache's transaction (joined, when this thread holds one already); the
        outermost removes the files of the values dropped in it once it has committed.
        A process killed before that leaves them unreferenced: strays, which gc
        reclaims; never a row whose file is gone."""
        if self._in_transaction():
            yield
            return
        thread = threading.get_ident()
        self._doomed[thread] = []
        try:
            with self._cache.transact():
                yield
            for name in self._doomed[thread]:
                self._cache._disk.remove(name)
        finally:
            del self._doomed[thread]

    def _drop(self, key: str) -> None:
        """Delete a diskcache value inside this thread's transaction. diskcache's own
        delete, nested in a transaction, removes the value's file before that commits:
        a crash then, or a reader meanwhile, would find its row without its file."""
        con = self._cache._con
        found = con.execute(
            "SELECT rowid, filename FROM Cache WHERE key = ? AND raw = 1", (key,)
        ).fetchone()
        if found is None:
            return
        con.execute("DELETE FROM Cache WHERE rowid = ?", (found[0],))
        doomed = self._doomed.get(threading.get_ident())
        if found[1] is not None and doomed is not None:  # else left for gc, as a stray
            doomed.append(found[1])

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
            row = self._sql(
                "SELECT 1 FROM addressable_records WHERE id = ?", (key[len(RECORD) :],)
            ).fetchone()
            return row is not None
        if not key.startswith(BLOB):
            return key in self._cache
        kept = self._sql("SELECT filename FROM Cache WHERE key = ? AND raw = 1", (key,)).fetchone()
        if kept is not None:  # a payload in a file of its own is there if its file is
            return kept[0] is None or (self.directory / kept[0]).is_file()
        return self._sql(COPY, (key[len(BLOB) :],)).fetchone() is not None

    @translated("listing")
    def keys(self, prefix: str) -> list[str]:
        # Ranges of indexes: only the keys with the prefix are read, diskcache's and
        # the ids of records and sightings kept in their tables (never in diskcache).
        found = [k for k in self._cache_keys(prefix) if not k.startswith((RECORD, OBSERVED))]
        for kept, table in ((RECORD, "addressable_records"), (OBSERVED, "addressable_sightings")):
            if kept.startswith(prefix) or prefix.startswith(kept):
                low = prefix[len(kept) :] if prefix.startswith(kept) else ""
                ids = self._all(
                    f"SELECT DISTINCT id FROM {table} WHERE id >= ? AND id < ? ORDER BY id",
                    (low, low + TOP),
                )
                found = sorted([*found, *(kept + str(i) for (i,) in ids)])
        return found

    def exclusive(self) -> _Transaction:
        """A batch of gc's, a reindex: SQLite's write lock, which the operating system
        frees at once when the process holding it dies; a live holder is waited for up
        to the `timeout` in _SETTINGS (60 s)."""
        return _Transaction(self)

    def close(self) -> None:
        self._cache.close()

    # -- rows: a record's row, beside diskcache's values ------------------------------

    def _cache_keys(self, prefix: str) -> list[str]:
        """Keys with `prefix` kept as diskcache values, in order: a range of diskcache's
        own index on keys (string keys are stored as text), so only those are read."""
        rows = self._cache._sql(
            "SELECT key FROM Cache WHERE key >= ? AND key < ? AND raw = 1 ORDER BY key",
            (prefix, prefix + TOP),
        )
        return [str(k) for (k,) in rows]

    def _insert_row(self, record_id: str, value: bytes) -> None:
        """A record's row for its stored value. One there is replaced whole, keeping its
        payload and address, so that the counts kept by tool and session follow."""
        with self._transaction():
            con = self._cache._con
            row = row_in(value)
            found = con.execute(
                "SELECT address, payload FROM addressable_records WHERE id = ?", (record_id,)
            ).fetchone()
            if found is None:
                con.execute(PUT_ROW, (record_id, *row, value))
                return
            con.execute("DELETE FROM addressable_records WHERE id = ?", (record_id,))
            con.execute(SET_ROW, (record_id, *row[:4], found[0], value, found[1]))

    # -- stray files: written by a writer killed before its row committed ------------

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

    # -- indexes: in SQLite, on diskcache's connection ---------------------------------

    @property
    def _sql(self) -> Callable[..., sqlite3.Cursor]:
        # diskcache's own connection (one a thread, reopened after a fork): statements on
        # it join the transaction `transact` holds.
        sql: Callable[..., sqlite3.Cursor] = self._cache._sql
        return sql

    def _all(self, statement: str, args: Sequence[Any] = ()) -> list[Any]:
        """Every row a query gives, its statement closed even when a damaged page stops
        it: one left open (held by the traceback of the failure) locks its table against
        the REINDEX that would mend the damage."""
        cursor = self._sql(statement, args)
        try:
            return cursor.fetchall()
        finally:
            cursor.close()

    def _add(self, entries: Sequence[Entry]) -> None:
        if entries:
            self._cache._con.executemany(ADD, entries)

    @translated("indexing")
    def index(self, add: Sequence[Entry] = (), remove: Sequence[Entry] = ()) -> None:
        with self._transaction():
            self._add(add)
            if remove:
                self._cache._con.executemany(REMOVE, remove)

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
        rows = self._all(
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
        return [_text(member) for (member,) in rows]

    @translated("reading an index")
    def prefixed(self, name: str, prefix: str) -> list[str]:
        rows = self._all(
            "SELECT member FROM addressable_index "
            "WHERE name = ? AND score = 0 AND member >= ? AND member < ? ORDER BY member",
            (name, prefix, prefix + TOP),
        )
        return [_text(member) for (member,) in rows]

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
        with self._transaction():
            self._sql("DELETE FROM addressable_index")
            self._sql("DELETE FROM addressable_index_size")
            for statement in RECOUNT:  # what the records' rows give, from them
                self._sql(statement)

    @translated("listing the indexes")
    def index_names(self) -> list[str]:
        # As bytes: a damaged name that is not UTF-8 is listed (and found wrong), not a
        # failure to read them all.
        rows = self._all("SELECT DISTINCT CAST(name AS BLOB) FROM addressable_index")
        return sorted({_text(name) for (name,) in rows})

    # -- SQLite's own indexes: checked against their tables, and built again -----------

    def check(self) -> list[str]:
        """SQLite's quick_check (the pages of every table and index), then each index
        read whole and compared with a scan of its table: quick_check does not look
        into what an index holds, and an index that lost entries or holds wrong ones
        answers lookups wrongly while every record reads well."""
        problems = []
        try:
            found = [str(line) for (line,) in self._all("PRAGMA quick_check")]
        except _FAILURES as exc:
            found = [str(exc)]
        if found != ["ok"]:
            problems += [f"SQLite's quick_check: {' '.join(line.split())}" for line in found[:5]]
        rows = self._sql(
            "SELECT i.name, i.tbl_name, i.sql FROM sqlite_master AS i JOIN sqlite_master AS t "
            "ON t.name = i.tbl_name AND t.type = 'table' "
            "WHERE i.type = 'index' AND t.sql NOT LIKE '%WITHOUT ROWID%' ORDER BY i.name"
        ).fetchall()
        for name, table, sql in rows:
            try:
                columns = ", ".join(
                    f'"{c}"' for (_, _, c) in self._all(f'PRAGMA index_info("{name}")')
                )
                partial = _PARTIAL.search(sql or "")
                where = f"WHERE {partial[1]}" if partial else ""
                select = f'SELECT {columns}, rowid FROM "{table}" {{}} {where}'
                indexed = Counter(self._all(select.format(f'INDEXED BY "{name}"')))
                scanned = Counter(self._all(select.format("NOT INDEXED")))
            except _FAILURES as exc:
                from ..codec import one_line  # loaded here: listing records needs no codec

                problems.append(f"SQLite index {name} cannot be read: {one_line(exc)}")
                continue
            if indexed != scanned:
                differ = sum(((indexed - scanned) + (scanned - indexed)).values())
                problems.append(
                    f"SQLite index {name} does not match its table {table}: {differ} entries differ"
                )
        return problems

    @translated("rebuilding SQLite's indexes")
    def rebuild(self) -> None:
        # The store's own index tables hold nothing the records do not give: made anew
        # (a damaged table cannot be re-indexed in place), then every SQLite index.
        for table in _OWN_TABLES:
            self._sql(f"DROP TABLE IF EXISTS {table}")
        for statement in SCHEMA:
            self._sql(statement)
        try:
            self._sql("REINDEX")
        except sqlite3.DatabaseError as exc:
            # Damage to the pages that hold an index's tree (not only its entries):
            # SQLite cannot free them to build it again.
            failure = store_failure(self.location, "rebuilding SQLite's indexes", exc)
            raise StoreError(
                f"{failure}; the damage is past mending in place: copy the records into a "
                "new store with `addressable export` and `addressable import`"
            ) from exc

    @translated("mending SQLite's indexes")
    def mend(self) -> list[str]:
        # REINDEX frees an index's old tree before it builds the new one, and a damaged
        # page of that tree (a pointer, not only an entry) stops it. Such an index is
        # built anew under another name and put in the old one's place in SQLite's
        # schema, which leaves the damaged pages unused; a VACUUM then drops them. Each
        # step is a transaction of its own: the store's other connections wait for it
        # and read the new schema after.
        db = sqlite3.connect(
            self.directory / diskcache.core.DBNAME,
            timeout=_SETTINGS["timeout"],
            isolation_level=None,
        )
        try:
            # Waited for once: a store held by a live writer fails here, not at each step.
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
            mended = [t for t in _OWN_TABLES if _forgot(db, t)]
            for name, table, sql in db.execute(
                "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index'"
            ).fetchall():
                try:
                    db.execute(f"REINDEX {_quoted(name)}")
                except sqlite3.DatabaseError:
                    if _replace_index(db, str(name), str(table), sql):
                        mended.append(str(name))
            unused = any("never used" in str(line) for (line,) in db.execute("PRAGMA quick_check"))
            if mended or unused:
                db.execute("VACUUM")
            return mended
        finally:
            db.close()


# The tables of the store's own indexes, which `rebuild` makes anew.
_OWN_TABLES = ("addressable_index", "addressable_index_size")


def _forgot(db: sqlite3.Connection, table: str) -> bool:
    """Whether `table` (one the records give again: `rebuild` makes it anew) had to be
    taken out of SQLite's schema, with its triggers, because dropping it fails on a
    damaged page of its tree. `rebuild` makes it again; its old pages, unused, go at the
    next VACUUM."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(f"DROP TABLE IF EXISTS {_quoted(table)}")
    except sqlite3.DatabaseError:
        broken = True
    else:
        broken = False
    finally:
        db.execute("ROLLBACK")  # only tried: `rebuild` drops it
    if broken:
        _edit_schema(db, [("DELETE FROM sqlite_master WHERE tbl_name = ?", (table,))])
    return broken


def _replace_index(db: sqlite3.Connection, name: str, table: str, sql: str | None) -> bool:
    """Build the index named `name` anew under another name, then give it `name` and
    `sql` in SQLite's schema in place of the damaged one. An index SQLite made for a
    constraint (no `sql`: the ids' of the records' table) is made again as the same
    unique index on the same columns. False when it cannot be made again so."""
    temporary = f"mended_{name}"  # not "sqlite_...", which SQLite keeps for itself
    if sql is None:
        row = db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        if row is None or "WITHOUT ROWID" in str(row[0]).upper():
            return False  # there the index is the table itself
        columns = [
            f"{_quoted(column)} COLLATE {_quoted(collation)}{' DESC' if descending else ''}"
            for (_, _, column, descending, collation, key) in db.execute(
                f"PRAGMA index_xinfo({_quoted(name)})"
            )
            if key
        ]
        if not columns:
            return False
        made = (
            f"CREATE UNIQUE INDEX {_quoted(temporary)} ON {_quoted(table)} ({', '.join(columns)})"
        )
    else:
        made, found = re.subn(
            rf'^(CREATE\s+(?:UNIQUE\s+)?INDEX\s+)(?:"{re.escape(name)}"|{re.escape(name)})(?=[\s(])',
            lambda found: found[1] + _quoted(temporary),
            sql,
            count=1,
            flags=re.IGNORECASE,
        )
        if not found:
            return False
    _edit_schema(
        db,
        [
            ("DELETE FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)),
            (
                "UPDATE sqlite_master SET name = ?, sql = ? WHERE type = 'index' AND name = ?",
                (name, sql, temporary),
            ),
        ],
        first=made,
    )
    return True


def _edit_schema(
    db: sqlite3.Connection, edits: list[tuple[str, tuple[Any, ...]]], first: str = ""
) -> None:
    """Run `first`, then `edits` of SQLite's schema table, in one transaction, and
    change the schema's version so that every connection reads the schema anew."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if first:
            db.execute(first)
        (version,) = db.execute("PRAGMA schema_version").fetchone()
        db.execute("PRAGMA writable_schema = ON")
        for statement, args in edits:
            db.execute(statement, args)
        db.execute(f"PRAGMA schema_version = {int(version) + 1}")
        db.execute("PRAGMA writable_schema = OFF")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.execute("PRAGMA writable_schema = OFF")
        raise


def _quoted(name: str) -> str:
    """A name as an SQL identifier, whatever it holds: names here come from the
    database's own schema, which may be damaged."""
    return '"' + name.replace('"', '""') + '"'


def _text(value: object) -> str:
    """A name or member of an index as text: a damaged page can give back another type
    (bytes, a number), which is then a wrong entry that `verify` names, not a crash."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# The condition of a partial index, in the statement that made it.
_PARTIAL = re.compile(r"\bWHERE\b(.*)$", re.IGNORECASE | re.DOTALL)


class _Transaction:
    """diskcache's transaction, its failures translated (a class: cheaper than a generator
    on the path every write takes)."""

    def __init__(self, backend: _DiskBackend) -> None:
        self._backend = backend
        self._inner: AbstractContextManager[None] | None = None

    def __enter__(self) -> None:
        self._inner = self._backend._transaction()
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

    gc reads the records without holding the store, then removes what it chose in
    batches, each one SQLite transaction: writers wait for one batch at most, and a
    payload's file is deleted only once the batch that stops referencing it has
    committed. SQLite's lock is the operating system's: it is freed the moment a process
    holding it dies, so a gc that dies blocks no writer and leaves at most files that no
    record points to, which the next gc removes.
    """

    # The settings its diskcache.Cache is opened with (no eviction or culling of its
    # own, no statistics, values from 128 KB in files): a benchmark's baseline cache is
    # opened with them to compare like with like.
    DISKCACHE_SETTINGS: Mapping[str, Any] = MappingProxyType(_SETTINGS)

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        path = Path(directory) if directory is not None else default_home()
        self.directory = path.resolve()
        super().__init__(_DiskBackend(path))
