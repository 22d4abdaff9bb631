"""How the disk store makes a record's row from its stored value, and moves what an
earlier version kept as diskcache values (records under `r:`, sightings under `o:`) to
the tables it keeps them in now: once, when the store is opened."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

import diskcache

from ..index import ADDRESS, INDEXES, Row, micros
from ..keys import OBSERVED, RECORD
from .sql import ADD_SIGHTING, PUT_ROW, SET_ROW, TOP

_HASH = re.compile(rb'"content_hash":"([0-9a-f]{64})"')
_log = logging.getLogger("addressable")
# Values moved in one transaction: other writers wait for one batch, not the whole move.
_BATCH = 2000


def row_in(value: bytes) -> Row:
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


class DiskRows:
    """Records' rows of the disk backend, a base of it: the backend opens the cache."""

    location: str
    _cache: diskcache.Cache

    def _cache_keys(self, prefix: str, limit: int = -1) -> list[str]:
        """Keys with `prefix` kept as diskcache values, in order: a range of diskcache's
        own index on keys (string keys are stored as text), so only those are read.
        Records and sightings among them are as an earlier version kept them."""
        rows = self._cache._sql(
            "SELECT key FROM Cache WHERE key >= ? AND key < ? AND raw = 1 ORDER BY key LIMIT ?",
            (prefix, prefix + TOP, limit),
        )
        return [str(k) for (k,) in rows]

    def _move_records(self) -> None:
        """Records an earlier version kept as diskcache values move to their table, once,
        a batch a transaction (a record is read where it is until it has moved); the
        store then indexes itself again (its marker goes first)."""
        self._cache._sql("DELETE FROM addressable_index WHERE name = ?", (INDEXES,))
        done = 0
        while keys := self._cache_keys(RECORD, limit=_BATCH):
            with self._moving() as drop:
                for key in keys:
                    value = self._cache.get(key)
                    if value is not None:
                        self._insert_row(key[len(RECORD) :], bytes(value))
                    drop(key)
            done += len(keys)
            _log.info("moving records at %s: %d moved", self.location, done)

    def _move_sightings(self) -> None:
        """Sightings an earlier version kept as one diskcache value a record (a line
        each) move to their table, once, in their order, a batch a transaction."""
        while keys := self._cache_keys(OBSERVED, limit=_BATCH):
            with self._moving() as drop:
                for key in keys:
                    value = self._cache.get(key)
                    lines = bytes(value).splitlines() if value else []
                    self._cache._con.executemany(
                        ADD_SIGHTING, [(key[len(OBSERVED) :], line) for line in lines]
                    )
                    drop(key)

    @contextmanager
    def _moving(self) -> Iterator[Callable[[str], None]]:
        """One transaction that moves values out of diskcache: `drop(key)` removes a
        value's row in it, and the file of a large value only once it has committed
        (diskcache's own delete removes the file at once, and a move cut short would
        then lose it). A file left by a process killed in between is a stray gc frees."""
        files: list[str] = []

        def drop(key: str) -> None:
            found = self._cache._sql(
                "SELECT filename FROM Cache WHERE key = ? AND raw = 1", (key,)
            ).fetchone()
            if found is not None and found[0] is not None:
                files.append(str(found[0]))
            self._cache._sql("DELETE FROM Cache WHERE key = ? AND raw = 1", (key,))

        with self._cache.transact():
            yield drop
        for name in files:
            with suppress(FileNotFoundError):
                (Path(self._cache.directory) / name).unlink()

    def _insert_row(self, record_id: str, value: bytes) -> None:
        """A record's row for its stored value. One there is replaced whole, keeping its
        payload and address, so that the counts kept by tool and session follow."""
        with self._cache.transact():
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
