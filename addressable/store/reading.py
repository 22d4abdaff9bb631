"""How a `KeyValueStore` reads: a record by id or prefix, its payload, its sightings,
and listings of records.

Records are found through the indexes (see `store.index`: by time, key, session, tool, id
prefix, and the ids their meta names), never by reading the others.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import cast

from ..core.errors import AmbiguousId, ArgumentError, Expired, IntegrityError, NotFound
from ..core.ids import ID_LENGTH, check_prefix, content_digest, content_hash
from ..core.records import Observation, Record, with_tokens
from .arguments import aware
from .backend import Backend
from .codec import load_observation, load_record
from .index import IDS, KEY, REF, SEEN, SESSION, TIME, TOMBS, TOOL, micros
from .keys import OBSERVED, RECORD, TOMBSTONE, blob_key, tokens_key
from .parsed import Parsed, ParsedRecords

_PAGE = 4096  # the most ids a listing reads from an index at once


class Reading:
    """The reads of a `KeyValueStore`, and the state they keep: the base it is built on."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._ids = not backend.ranged_keys  # ids need an index of their own
        self._own = not backend.indexes_records  # the entries of a record's Row too
        # A backend that reads a record, its payload and its token count at once (a
        # method of its class: a wrapper that passes other calls through reads apart).
        self._joined: Callable[[str], tuple[bytes, bytes | None, bytes | None] | None] | None
        joined = getattr(type(backend), "get_joined", None)
        self._joined = None if joined is None else functools.partial(joined, backend)
        self._recent: tuple[str, str, bytes] = ("", "", b"")  # id, hash, payload last read
        self._parsed = ParsedRecords()  # used where the backend joins reads

    @property
    def location(self) -> str:
        return self._backend.location

    def get(self, record_id: str) -> Record:
        found = self._joined_read(record_id)
        if found is None:
            return self._get_apart(record_id)
        record, payload = found
        if payload is not None:  # kept for a `read` of it that follows (re-hashed there)
            self._recent = (record_id, record.content_hash, payload)
        return record

    def fetch(self, record_id: str) -> tuple[Record, bytes]:
        """The record of a full id and its payload, checked as `get` and `read` check
        them: in one read where the backend joins them (a replay)."""
        # `_joined_read` and `_checked`, written out: every replay runs this.
        found = None if self._joined is None else self._joined(record_id)
        if found is None:
            record = self._get_apart(record_id)
            return record, self.read(record)
        value, payload, tokens = found
        parsed = self._parsed_from(record_id, value, tokens)
        record = parsed[2]
        if payload is None:  # kept apart (in a file of its own)
            return record, self.read(record)
        if content_digest(payload) != parsed[3]:
            _checked(payload, record.content_hash, record_id)  # raises, saying why
        return record, payload

    def _joined_read(self, record_id: str) -> tuple[Record, bytes | None] | None:
        """The record, with its token count, and its payload where kept in its row, in
        one read; None where the backend does not join them or found no record there."""
        found = None if self._joined is None else self._joined(record_id)
        if found is None:
            return None
        value, payload, tokens = found
        return self._parsed_from(record_id, value, tokens)[2], payload

    def _parsed_from(self, record_id: str, value: bytes, tokens: bytes | None) -> Parsed:
        """The record these stored bytes and token count give: the one parsed from them
        before, where they are the same bytes (compared whole), else parsed now."""
        known = self._parsed.get(record_id, value, tokens)
        if known is not None:
            return known
        return self._parsed.keep(record_id, value, tokens, load_record(record_id, value, tokens))

    def _get_apart(self, record_id: str) -> Record:
        """`get` by key (a backend may keep some records apart from the joined read)."""
        raw = self._backend.get(RECORD + record_id)
        if raw is None:
            tomb = self._backend.get(TOMBSTONE + record_id)
            if tomb is not None:
                when = json.loads(tomb).get("at", "?")
                raise Expired(
                    f"result {record_id} expired: it was removed by garbage collection at "
                    f"{when}; run the call again to get a fresh result"
                )
            raise NotFound(f"no result with id {record_id}")
        return self._with_tokens(load_record(record_id, raw))

    def _with_tokens(self, record: Record) -> Record:
        tokens = self._backend.get(tokens_key(record.content_hash))
        return record if tokens is None else with_tokens(record, int(tokens))

    def resolve(self, text: str) -> str:
        prefix = check_prefix(text)
        if len(prefix) == ID_LENGTH:
            if self._backend.contains(RECORD + prefix) or self._backend.contains(
                TOMBSTONE + prefix
            ):
                return prefix
            raise NotFound(f"no result with id {prefix}")
        if self._ids:
            matches = self._backend.prefixed(IDS, prefix)
            expired = [] if matches else self._backend.prefixed(TOMBS, prefix)
        else:
            matches = [k[len(RECORD) :] for k in self._backend.keys(RECORD + prefix)]
            gone = [] if matches else self._backend.keys(TOMBSTONE + prefix)
            expired = [k[len(TOMBSTONE) :] for k in gone]
        if not matches:
            if len(expired) == 1:
                return expired[0]
            raise NotFound(f"no result id starts with {prefix!r}")
        if len(matches) > 1:
            raise AmbiguousId(prefix, matches)
        return matches[0]

    def read(self, record: Record) -> bytes:
        return self._read_blob(record.content_hash, record.id)

    def _read_blob(self, digest: str, record_id: str) -> bytes:
        recent = self._recent
        if recent[0] == record_id and recent[1] == digest:
            data: bytes | None = recent[2]
            self._recent = ("", "", b"")  # once: a later read reads the store again
        else:
            data = self._backend.get(blob_key(digest))
        if data is None:
            raise IntegrityError(
                f"the payload of result {record_id} (blob {digest[:16]}) is missing from the store"
            )
        return _checked(data, digest, record_id)

    def observations(self, record_id: str) -> list[Observation]:
        record = self.get(record_id)
        return [Observation(at=record.observed_at, session=record.session), *self._later(record_id)]

    def _later(self, record_id: str) -> list[Observation]:
        return [load_observation(record_id, o) for o in self._backend.items(OBSERVED + record_id)]

    def last_seen(self, record: Record) -> datetime:
        """The latest observation of the record: what staleness and gc go by."""
        later = self._later(record.id)
        return max([record.observed_at, *(o.at for o in later)])

    def records(
        self,
        *,
        tool: str | None = None,
        key: str | None = None,
        session: str | None = None,
        since: datetime | None = None,
        refers_to: str | None = None,
        newest_first: bool = False,
        limit: int | None = None,
        damaged: list[str] | None = None,
    ) -> Iterator[Record]:
        if since is not None:
            since = aware("records since", since)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise ArgumentError(f"records limit must be a whole number, not {limit!r}")
        if limit is not None and limit <= 0:
            raise ArgumentError(f"records limit must be positive, not {limit}")
        # The index to walk: the narrowest of the filters given. Every one but `session`
        # and `seen` is in the order records are listed in, so that a `limit` stops the
        # walk; the others are read whole (they hold only what matches).
        if key is not None:
            name = KEY + key
        elif refers_to is not None:
            name = REF + refers_to
        elif session is not None:
            name = SESSION + session
        elif tool is not None:
            name = TOOL + tool
        elif since is not None:
            name = SEEN
        else:
            name = TIME

        def wanted(record: Record) -> bool:
            if tool is not None and record.tool != tool:
                return False
            if key is not None and record.key != key:
                return False
            if refers_to is not None and refers_to not in record.meta.values():
                return False
            if (
                session is not None
                and not name.startswith(SESSION)
                and record.session != session
                and all(o.session != session for o in self._later(record.id))
            ):
                return False
            return since is None or name == SEEN or self.last_seen(record) >= since

        if limit is None or name.startswith(SESSION) or name == SEEN:
            if name == TIME:
                # Every record: read from the keys, as it reads them all anyway, so that
                # a listing shows records that no index knows (written by hand, or by
                # an older version after this store was indexed).
                ids = [k[len(RECORD) :] for k in self._backend.keys(RECORD)]
            elif name == SEEN:  # first seen since, or seen again since
                at = micros(cast(datetime, since))
                ids = self._backend.members(TIME, low=at) + self._backend.members(SEEN, high=-at)
            else:
                ids = self._backend.members(name)
            found = [r for r in self._load(list(dict.fromkeys(ids)), damaged) if wanted(r)]
            found.sort(key=lambda r: (r.observed_at, r.id), reverse=newest_first)
            return iter(found[:limit])
        return iter(self._walk(name, newest_first, limit, wanted, damaged))

    def _walk(
        self,
        name: str,
        newest_first: bool,
        limit: int,
        wanted: Callable[[Record], bool],
        damaged: list[str] | None,
    ) -> list[Record]:
        """The first `limit` wanted records of an index in its order, read a page at a
        time: as many as needed, not the whole index."""
        found: list[Record] = []
        seen: set[str] = set()  # a record written meanwhile shifts the pages: once each
        # The page, not the limit, is what a backend is asked for: a limit past what
        # SQLite's or Redis's integers hold (2**63) would fail there, and one that large
        # only means "all of them".
        offset, page = 0, min(max(limit, 16), _PAGE)
        while True:
            ids = self._backend.members(name, reverse=newest_first, offset=offset, limit=page)
            for record in self._load((i for i in ids if i not in seen), damaged):
                seen.add(record.id)
                if wanted(record):
                    found.append(record)
                    if len(found) == limit:
                        return found
            if len(ids) < page:
                return found
            offset += len(ids)
            page = min(page * 4, _PAGE)

    def _load(self, ids: Iterable[str], damaged: list[str] | None = None) -> Iterator[Record]:
        """The records with these ids, skipping any removed since they were listed; one
        that cannot be read raises, or, given a `damaged` list, is added there."""
        for record_id in ids:
            raw = self._backend.get(RECORD + record_id)
            if raw is None:
                continue
            try:
                record = load_record(record_id, raw)
            except IntegrityError:
                if damaged is None:
                    raise
                damaged.append(record_id)
                continue
            yield self._with_tokens(record)


def _checked(data: bytes, digest: str, record_id: str) -> bytes:
    """A record's payload, re-hashed: `IntegrityError` rather than different bytes."""
    actual = content_hash(data)
    if actual != digest:
        raise IntegrityError(
            f"the payload of result {record_id} is corrupt: its bytes hash to "
            f"{actual[:16]}, not {digest[:16]}; it will not be served"
        )
    return data
