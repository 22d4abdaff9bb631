"""How the disk store keeps its indexes: in SQLite, on diskcache's own connection, so
that an entry commits with what it indexes (see `store.disk.sql` for the tables)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

import diskcache

from ..backend import translated
from ..index import BLOBS, KEY, SESSION, TIME, TOOL, TOOLS, Entry
from .sql import ADD, RECOUNT, REMOVE, TOP

# Which column of a record's row answers an index of each name.
_COLUMNS = {TOOL: "tool", KEY: "key", SESSION: "session"}
_LOWEST, _HIGHEST = -(1 << 63), (1 << 63) - 1


class DiskIndexes:
    """The indexes of the disk backend, a base of it: the backend opens the cache."""

    failures: tuple[type[BaseException], ...]
    location: str
    _cache: diskcache.Cache

    @property
    def _sql(self) -> Callable[..., sqlite3.Cursor]:
        # diskcache's own connection (one a thread, reopened after a fork): statements on
        # it join the transaction `transact` holds.
        sql: Callable[..., sqlite3.Cursor] = self._cache._sql
        return sql

    def _add(self, entries: Sequence[Entry]) -> None:
        if entries:
            self._cache._con.executemany(ADD, entries)

    @translated("indexing")
    def index(self, add: Sequence[Entry] = (), remove: Sequence[Entry] = ()) -> None:
        with self._cache.transact():
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
            (name, prefix, prefix + TOP),
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
            for statement in RECOUNT:  # what the records' rows give, from them
                self._sql(statement)
