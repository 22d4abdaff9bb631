"""The one implementation of `Store`, over any small key-value backend.

A backend (`store.backend`) stores bytes under string keys, keeps ordered indexes and
offers a section that excludes writers. Everything else is the store's, so the disk,
memory and Redis stores differ only in where the bytes go: the layout of keys
(`store.keys`) and indexes (`store.index`) and how a record is stored (`store.codec`) are
theirs; here are writing, reading (through the indexes: by time, key, session, tool, id
prefix and the ids a record's meta names, never by reading the others), pins (gc keeps a
pinned record while its pin lasts), `stats` (read from the sizes the indexes keep), and
upkeep: `verify` names damage, `gc` removes what is old or over a size and what killed
writers left, `reindex` builds the indexes again. gc reads without holding the store and
removes in short batches, each one atomic step that checks again what it removes
(`sweep`); reindex holds the backend's `exclusive` section, so that no record is written
meanwhile.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple, TypeVar, cast

from ..core.errors import (
    AmbiguousId,
    ArgumentError,
    Expired,
    IntegrityError,
    NotFound,
    StoreError,
)
from ..core.ids import ID_LENGTH, check_prefix, content_digest, content_hash
from ..core.later import Later
from .backend import Backend, ChecksItself, Removal, StrayFiles, Sweeps
from .frame import Summary, _Damaged, summary, summary_of
from .index import (
    ADDRESS,
    BLOBS,
    IDS,
    INDEXES,
    KEY,
    PAYLOAD,
    PIN_REASONS,
    PINS,
    PINS_FOR,
    REF,
    SEEN,
    SESSION,
    SESSIONS,
    TIME,
    TOMBS,
    TOOL,
    TOOLS,
    USER_PIN,
    VERSION,
    Entry,
    all_entries,
    micros,
    record_entries,
    row_of,
    sighting_entries,
)
from .keys import (
    BLOB,
    IMPORTED,
    OBSERVED,
    PIN,
    RECORD,
    SHOWN,
    STUB,
    TOKENS,
    TOMBSTONE,
    blob_key,
    prefix_marks,
    stub_key,
    stub_record,
    tokens_key,
)
from .parsed import Parsed, ParsedRecords

if TYPE_CHECKING:
    import addressable.core.records as records
    import addressable.store.codec as codec
    import addressable.store.models as models

    from ..core.records import Observation, Record
    from .models import DamagedRecord, GcReport, Pin, StoreStats, VerifyReport
else:  # imported when first used: a listing (`summaries`) needs neither pydantic nor them
    records = Later("addressable.core.records")
    codec = Later("addressable.store.codec")
    models = Later("addressable.store.models")


def aware(name: str, when: object) -> datetime:
    """`when`, if it is a datetime with a time zone; else `ArgumentError` naming it."""
    if not isinstance(when, datetime):
        raise ArgumentError(f"{name} must be a datetime, not {type(when).__name__} ({when!r})")
    if when.utcoffset() is None:
        raise ArgumentError(
            f"{name} {when.isoformat()} has no time zone: give an aware datetime, "
            "e.g. datetime.now(UTC)"
        )
    return when


def limits(max_age: object, max_bytes: object) -> tuple[timedelta | None, int | None]:
    """gc's limits, or `ArgumentError` naming the one that is not a positive amount."""
    if max_age is not None:
        if not isinstance(max_age, timedelta):
            raise ArgumentError(
                f"gc max_age must be a timedelta, not {type(max_age).__name__} ({max_age!r})"
            )
        if max_age <= timedelta(0):
            raise ArgumentError(
                f"gc max_age must be a positive duration, not {max_age}: it removes records "
                "last seen longer ago than that"
            )
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
            raise ArgumentError(
                f"gc max_bytes must be a whole number of bytes, not "
                f"{type(max_bytes).__name__} ({max_bytes!r})"
            )
        if max_bytes <= 0:
            raise ArgumentError(
                f"gc max_bytes must be a positive number of bytes, not {max_bytes}: payloads "
                "are trimmed to at most that"
            )
    return max_age, max_bytes


_PAGE = 4096  # the most ids a listing reads from an index at once


class _Filters(NamedTuple):
    """What `records` and `summaries` choose by, and in which order and how many."""

    tool: str | None
    key: str | None
    session: str | None
    since: datetime | None
    refers_to: str | None
    newest_first: bool
    limit: int | None


_Found = TypeVar("_Found", "Record", Summary)  # what a listing reads: records or summaries
_Loader = Callable[[Iterable[str], list[str] | None], Iterator[_Found]]


def _checked(data: bytes, digest: str, record_id: str) -> bytes:
    """A record's payload, re-hashed: `IntegrityError` rather than different bytes."""
    actual = content_hash(data)
    if actual != digest:
        raise IntegrityError(
            f"the payload of result {record_id} is corrupt: its bytes hash to "
            f"{actual[:16]}, not {digest[:16]}; it will not be served"
        )
    return data


def _joined(held: Pin | None, reason: str, session: str | None, until: datetime | None) -> Pin:
    """A pin for `reason`, made over `held`. Pinned again, for this reason or while
    another holds it (a stub's over a checkpoint's): every session that holds it, and
    the later end, so that no pin ends another before its time. A pin with no end stays
    with no end."""
    if held is not None and (held.reason == reason or held.live(_now(None))):
        sessions = sorted({*held.sessions, *([session] if session else [])})
        until = None if held.until is None or until is None else max(until, held.until)
    else:
        sessions = [session] if session else []
    return models.Pin(reason=reason, sessions=sessions, until=until)


def _dumped(pin: Pin) -> bytes:
    return pin.model_dump_json(exclude_none=True).encode()


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else aware("now", now)


_log = logging.getLogger("addressable")


def _progress_log(location: str) -> Callable[[int, int], None]:
    def log(done: int, total: int) -> None:
        if total >= 1000:
            _log.info("indexing the store at %s: %d of %d records", location, done, total)

    return log


def _record_problem(record: Record, size: int) -> tuple[str | None, str]:
    """Whether a readable record still says what was written: its id follows from its
    fields (results only) and its size is its payload's."""
    if record.size != size:
        return "altered", f"it gives size {record.size}, but its payload is {size} bytes"
    try:
        derived = record.derived_id()
    except ArgumentError as exc:
        return "altered", f"its args are not canonical JSON: {exc}"
    if derived is not None and derived != record.id:
        return "altered", (
            f"its id does not follow from its tool, args, key, content hash and nonce "
            f"(they give {derived})"
        )
    return None, ""


_HASH_FIELD = re.compile(rb'"content_hash":"([0-9a-f]{64})"')


def _hashes_in(raw: bytes) -> set[str]:
    """The content hashes a record that cannot be read names, found in its bytes."""
    return {m.decode() for m in _HASH_FIELD.findall(raw)}


# Records gc removes in one step (a transaction, a script): what a writer waits for at
# most. A batch starts small, grows by a quarter while one takes well under the
# backend's `gc_batch_time` and shrinks in proportion when one takes longer: the larger
# the store, the longer each removal (a deeper tree, fewer of its pages in memory), and
# the wait stays about the same.
_BATCH = 256
_FIRST_BATCH = 16


def _chosen(
    live: list[tuple[datetime, Record]],
    pinned: set[str],
    now: datetime,
    max_age: timedelta | None,
    max_bytes: int | None,
) -> list[str]:
    """The ids gc removes, of `live` (last seen, record; oldest first): the unpinned
    ones last seen longer than `max_age` ago, then the oldest unpinned ones until the
    payloads left take at most `max_bytes`."""
    refs: Counter[str] = Counter(r.content_hash for _, r in live)
    sizes = {r.content_hash: r.size for _, r in live}
    total = sum(sizes.values())
    removed: list[str] = []

    def drop(record: Record) -> None:
        nonlocal total
        removed.append(record.id)
        refs[record.content_hash] -= 1
        if refs[record.content_hash] == 0:
            total -= sizes[record.content_hash]

    survivors: list[Record] = []
    for seen, record in live:
        if max_age is not None and record.id not in pinned and now - seen > max_age:
            drop(record)
        else:
            survivors.append(record)
    if max_bytes is not None:
        for record in survivors:  # oldest first
            if total <= max_bytes:
                break
            if record.id not in pinned:
                drop(record)
    return removed


def sweep(
    backend: Backend,
    removals: Sequence[Removal],
    addresses: Mapping[str, int | None],
    tomb: bytes,
    ids: bool,
) -> tuple[list[str], list[tuple[str, int]]]:
    """One batch of gc's, in one step that no writer interleaves with: each record of
    `removals` that is still there, has no pin (or the ended one gc read) and was not
    seen again since gc read it goes, with what goes with it, leaving a tombstone (`tomb`,
    unless empty); then each payload of `addresses` (with its size, where known) under
    which no record is indexed any more. The ids removed, and the address and size of
    each payload removed."""
    if isinstance(backend, Sweeps):  # one script on its server
        return backend.sweep(removals, list(addresses), tomb, ids)
    b = backend
    gone: list[str] = []
    freed: list[tuple[str, int]] = []
    with b.exclusive():
        stored = {a for a in addresses if b.contains(BLOB + a)}  # in a row, or apart
        registries: dict[str, tuple[str, str]] = {}
        for r in removals:
            held = b.get(PIN + r.id)
            if (
                not b.contains(RECORD + r.id)
                or (held is not None and held != r.pin)
                or len(b.items(OBSERVED + r.id)) != r.sightings
            ):
                continue
            if held is not None:  # the ended pin gc read: it goes with its record
                b.delete(PIN + r.id)
            b.delete(RECORD + r.id)
            for k in r.keys:
                b.delete(k)
            if tomb:
                b.set(TOMBSTONE + r.id, tomb)
            b.index(add=[(TOMBS, 0, r.id)] if ids and tomb else [], remove=r.entries)
            registries.update((name, (reg, m)) for name, reg, m in r.registries)
            gone.append(r.id)
        # Once a batch: a tool's or a session's index may hold many records.
        unused = [
            (reg, 0, m) for name, (reg, m) in registries.items() if not b.members(name, limit=1)
        ]
        if unused:
            b.index(remove=unused)
        for address, size in addresses.items():
            if b.members(PAYLOAD + address, limit=1):
                continue
            if size is None:
                size = len(b.get(BLOB + address) or b"")
            b.delete(BLOB + address)  # a payload kept in rows went with the last of them
            b.delete(TOKENS + address)
            b.index(remove=[(BLOBS, size, address)])
            if address in stored:
                freed.append((address, size))
    return gone, freed


class KeyValueStore:
    """A `Store` over a `Backend`; see `store.keys` for the key layout."""

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
        try:
            indexed = backend.members(INDEXES) == [VERSION]
        except StoreError:
            if not isinstance(backend, ChecksItself):
                raise
            self.reindex()  # the table that holds the marker is damaged: built again
        else:
            if not indexed:
                self._index_once()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"

    def __enter__(self) -> KeyValueStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._parsed.clear()
        self._backend.close()

    def put(self, record: Record, payload: bytes, value: bytes | None = None) -> bool:
        """`Store.put`; `value`: the record as `dump_record` gives it, when made already
        (by the recorder's one-pass writer, `_codec.new_record`)."""
        b = self._backend
        made = value is not None
        if value is None:
            value = codec.dump_record(record)
        digest = record.content_hash
        at = micros(record.observed_at)
        entries: list[Entry] = []  # none where the backend keeps rows, unless meta names ids
        if self._own or record.meta:
            entries = record_entries(record, ids=self._ids, own=self._own, at=at)
        # The blob goes in first, with the record and its index entries in the same
        # atomic step: a record never points at bytes not yet stored, and is never
        # stored unindexed, even if the writer is killed.
        while not b.put_pair(
            blob_key(digest),
            payload,
            RECORD + record.id,
            value,
            entries,
            [(BLOBS, len(payload), digest[:ADDRESS])],
            row_of(record, at),
        ):
            observation = records.Observation(at=record.observed_at, session=record.session)
            if b.append(
                OBSERVED + record.id,
                observation.model_dump_json().encode(),
                sighting_entries(record.id, observation),
                requires=RECORD + record.id,
            ):
                return False
            # gc removed the record between the two steps: it is written anew.
        # A tombstone left by gc may remain: a live record takes precedence over it.
        tokens = None if record.tokens is None else str(record.tokens).encode()
        if tokens is not None:
            b.set(tokens_key(record.content_hash), tokens)
        if made and self._joined is not None:  # kept as read back: a replay parses nothing
            self._parsed.keep_written(record, value, tokens)
        return True

    def add_observation(self, record_id: str, observation: Observation) -> None:
        """Append a sighting of an existing record (used when importing bundles)."""
        self.get(record_id)
        if not self._backend.append(
            OBSERVED + record_id,
            observation.model_dump_json().encode(),
            sighting_entries(record_id, observation),
            requires=RECORD + record_id,
        ):
            self._get_apart(record_id)  # removed meanwhile: Expired

    def set_tokens(self, content_hash: str, tokens: int) -> None:
        self._backend.set(tokens_key(content_hash), str(tokens).encode())

    def mark_imported(self, record_id: str) -> None:
        self._backend.set(IMPORTED + record_id, b"")

    def imported(self, record_id: str) -> bool:
        return self._backend.get(IMPORTED + record_id) is not None

    def set_shown(self, text_hash: str, record_id: str) -> None:
        self._backend.set(SHOWN + text_hash[:ADDRESS], record_id.encode())

    def shown(self, text_hash: str) -> str | None:
        found = self._backend.get(SHOWN + text_hash[:ADDRESS])
        return found.decode() if found is not None else None

    def set_stub(self, mark: str, record_id: str, stub: bytes) -> None:
        self._backend.set(stub_key(record_id, mark), stub)

    def stub(self, mark: str, record_id: str) -> bytes | None:
        return self._backend.get(stub_key(record_id, mark))

    def stats(self) -> StoreStats:
        """From the sizes the indexes keep: nothing is counted or read but the oldest
        and the newest record."""
        b = self._backend
        tools = {t: b.size(TOOL + t)[0] for t in b.members(TOOLS)}
        blobs, blob_bytes = b.size(BLOBS)
        return models.StoreStats(
            location=self.location,
            records=b.size(TIME)[0],
            blobs=blobs,
            blob_bytes=blob_bytes,
            pinned=b.size(PINS)[0],
            pinned_by_reason=self._pinned_by_reason(),
            sessions=b.size(SESSIONS)[0],
            by_tool={t: n for t, n in sorted(tools.items()) if n},
            oldest=self._edge(newest=False),
            newest=self._edge(newest=True),
        )

    def _pinned_by_reason(self) -> dict[str, int]:
        """Pins held, by reason: "user" is every pin with no other reason."""
        b = self._backend
        found = {r: b.size(PINS_FOR + r)[0] for r in b.members(PIN_REASONS)}
        counts = {r: n for r, n in sorted(found.items()) if n}
        user = b.size(PINS)[0] - sum(counts.values())
        return {USER_PIN: user, **counts} if user else counts

    def _edge(self, *, newest: bool) -> datetime | None:
        """When the oldest (or newest) record that can be read was observed; None for an
        empty store. A damaged one is passed over: `verify` names it, `stats` goes on."""
        offset = 0
        while ids := self._backend.members(TIME, reverse=newest, offset=offset, limit=8):
            # One removed meanwhile is skipped, and so is a damaged one.
            for record in self._load(ids, damaged=[]):
                return record.observed_at
            offset += len(ids)
        return None

    # -- reading ---------------------------------------------------------------------

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
        return self._parsed.keep(
            record_id, value, tokens, codec.load_record(record_id, value, tokens)
        )

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
        return self._with_tokens(codec.load_record(record_id, raw))

    def _with_tokens(self, record: Record) -> Record:
        tokens = self._backend.get(tokens_key(record.content_hash))
        return record if tokens is None else records.with_tokens(record, int(tokens))

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
            if self._backend.get(RECORD + record_id) is None:
                # gc removed the record after it was read: Expired (or NotFound), as a
                # read that came a moment later would say, not damage.
                self._get_apart(record_id)
            raise IntegrityError(
                f"the payload of result {record_id} (blob {digest[:16]}) is missing from the store"
            )
        return _checked(data, digest, record_id)

    def observations(self, record_id: str) -> list[Observation]:
        record = self.get(record_id)
        return [
            records.Observation(at=record.observed_at, session=record.session),
            *self._later(record_id),
        ]

    def _later(self, record_id: str) -> list[Observation]:
        return [
            codec.load_observation(record_id, o) for o in self._backend.items(OBSERVED + record_id)
        ]

    def last_seen(self, record: Record) -> datetime:
        """The latest observation of the record: what staleness and gc go by."""
        return self._last_seen(record.id, record.observed_at)

    def _last_seen(self, record_id: str, first: datetime) -> datetime:
        return max([first, *(o.at for o in self._later(record_id))])

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
        filters = _Filters(tool, key, session, since, refers_to, newest_first, limit)
        return self._select(self._load, filters, damaged)

    def summaries(
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
    ) -> Iterator[Summary]:
        filters = _Filters(tool, key, session, since, refers_to, newest_first, limit)
        return self._select(self._summaries, filters, damaged)

    def _select(
        self, load: _Loader[_Found], filters: _Filters, damaged: list[str] | None
    ) -> Iterator[_Found]:
        """What `records` and `summaries` list, each read by `load`."""
        tool, key, session, since, refers_to, newest_first, limit = filters
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

        def wanted(record: _Found) -> bool:
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
            return (
                since is None
                or name == SEEN
                or self._last_seen(record.id, record.observed_at) >= since
            )

        if limit is None or name.startswith(SESSION) or name == SEEN:
            if name == TIME:
                # Every record: read from the keys, as it reads them all anyway, so that
                # a listing shows records that no index knows (written by hand).
                ids = [k[len(RECORD) :] for k in self._backend.keys(RECORD)]
            elif name == SEEN:  # first seen since, or seen again since
                at = micros(cast(datetime, since))
                ids = self._backend.members(TIME, low=at) + self._backend.members(SEEN, high=-at)
            else:
                ids = self._backend.members(name)
            found = [r for r in load(list(dict.fromkeys(ids)), damaged) if wanted(r)]
            found.sort(key=lambda r: (r.observed_at, r.id), reverse=newest_first)
            return iter(found[:limit])
        return iter(self._walk(load, name, newest_first, limit, wanted, damaged))

    def _walk(
        self,
        load: _Loader[_Found],
        name: str,
        newest_first: bool,
        limit: int,
        wanted: Callable[[_Found], bool],
        damaged: list[str] | None,
    ) -> list[_Found]:
        """The first `limit` wanted records of an index in its order, read a page at a
        time: as many as needed, not the whole index."""
        found: list[_Found] = []
        seen: set[str] = set()  # a record written meanwhile shifts the pages: once each
        # The page, not the limit, is what a backend is asked for: a limit past what
        # SQLite's or Redis's integers hold (2**63) would fail there, and one that large
        # only means "all of them".
        offset, page = 0, min(max(limit, 16), _PAGE)
        while True:
            ids = self._backend.members(name, reverse=newest_first, offset=offset, limit=page)
            for record in load((i for i in ids if i not in seen), damaged):
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
        for record in self._each(ids, damaged, codec.load_record):
            yield self._with_tokens(record)

    def _summaries(self, ids: Iterable[str], damaged: list[str] | None) -> Iterator[Summary]:
        """`_load`, as summaries: a record that is not exactly as the store writes one is
        read in full, which says what is wrong with it."""

        def read(record_id: str, raw: bytes) -> Summary:
            found = summary(record_id, raw)
            return summary_of(codec.load_record(record_id, raw)) if found is None else found

        return self._each(ids, damaged, read)

    def _each(
        self,
        ids: Iterable[str],
        damaged: list[str] | None,
        read: Callable[[str, bytes], _Found],
    ) -> Iterator[_Found]:
        """What `read` makes of each stored record of `ids` (see `_load`)."""
        for record_id in ids:
            raw = self._backend.get(RECORD + record_id)
            if raw is None:
                continue
            try:
                found = read(record_id, raw)
            except IntegrityError:
                if damaged is None:
                    raise
                damaged.append(record_id)
                continue
            yield found

    # -- pins ------------------------------------------------------------------------

    def pin(
        self,
        record_id: str,
        *,
        reason: str = USER_PIN,
        session: str | None = None,
        until: datetime | None = None,
    ) -> None:
        self.get(record_id)
        if not isinstance(reason, str) or not reason or not reason.isidentifier():
            raise ArgumentError(f"a pin's reason must be a word, got {reason!r}")
        if reason == USER_PIN and (session is not None or until is not None):
            raise ArgumentError("a user pin lasts until unpinned: give no session or until")
        if until is not None:
            until = aware("pin until", until)
        held = self.pin_info(record_id)
        if reason == USER_PIN:
            if held is not None and held.reason == USER_PIN:
                return  # a user pin is never weakened
            under = held if held is not None and held.live(_now(None)) else None
            self._write(record_id, models.Pin(under=under), held)
        elif held is not None and held.reason == USER_PIN:
            # Kept under the user's pin, to hold again once the user unpins.
            under = _joined(held.under, reason, session, until)
            self._backend.set(PIN + record_id, _dumped(held.model_copy(update={"under": under})))
        else:
            self._write(record_id, _joined(held, reason, session, until), held)

    def _write(self, record_id: str, pin: Pin, held: Pin | None) -> None:
        """`pin` in place of `held`, in the indexes too (counted by `stats`). gc keeps a
        record that has a pin, deciding in the step that would remove it: a record
        still there once the pin is written is kept; one gone was removed before, and
        the pin goes too (`Expired`)."""
        add = [(PINS, 0, record_id)]
        if pin.reason != USER_PIN:
            add += [(PINS_FOR + pin.reason, 0, record_id), (PIN_REASONS, 0, pin.reason)]
        remove = []
        if held is not None and held.reason not in (USER_PIN, pin.reason):
            remove = [(PINS_FOR + held.reason, 0, record_id)]
        self._backend.set(PIN + record_id, _dumped(pin))
        self._backend.index(add=add, remove=remove)
        if not self._backend.contains(RECORD + record_id):
            self.unpin(record_id)
            self._get_apart(record_id)  # Expired (or NotFound)
            raise Expired(
                f"result {record_id} was removed by garbage collection as it was pinned; "
                "pin it again"
            )

    def unpin(self, record_id: str) -> None:
        held = self.pin_info(record_id)
        if held is not None and held.under is not None and held.under.live(_now(None)):
            self._write(record_id, held.under, held)  # the pin the user's was put over
            return
        self._backend.delete(PIN + record_id)
        remove = [(PINS, 0, record_id)]
        if held is not None and held.reason != USER_PIN:
            remove.append((PINS_FOR + held.reason, 0, record_id))
        self._backend.index(remove=remove)

    def pin_info(self, record_id: str) -> Pin | None:
        raw = self._backend.get(PIN + record_id)
        return None if raw is None else codec.load_pin(raw)

    def is_pinned(self, record_id: str, *, now: datetime | None = None) -> bool:
        held = self.pin_info(record_id)
        return held is not None and held.live(_now(now))

    def end_session(self, session: str) -> int:
        held_by = [
            (k[len(PIN) :], pin)
            for k in self._backend.keys(PIN)
            if (pin := self.pin_info(k[len(PIN) :])) is not None
            and (session in pin.sessions or (pin.under and session in pin.under.sessions))
        ]
        ended = 0
        for record_id, pin in held_by:
            if pin.under is not None:  # a user pin: the one under it loses the session
                left = [s for s in pin.under.sessions if s != session]
                under = pin.under.model_copy(update={"sessions": left}) if left else None
                self._backend.set(PIN + record_id, _dumped(pin.model_copy(update={"under": under})))
                continue
            left = [s for s in pin.sessions if s != session]
            if left:
                kept = pin.model_copy(update={"sessions": left})
                self._backend.set(PIN + record_id, _dumped(kept))
            else:
                self.unpin(record_id)
                ended += 1
        return ended

    # -- upkeep: verify, gc, reindex ---------------------------------------------------

    def verify(self) -> VerifyReport:
        b = self._backend
        own = b.check() if isinstance(b, ChecksItself) else []
        try:
            return self._verify(own)
        except StoreError as exc:
            if not own:
                raise
            # Records are read through the indexes found damaged: named, not read.
            return models.VerifyReport(
                records=0,
                blobs_checked=0,
                damaged=[],
                orphan_blobs=0,
                orphan_bytes=0,
                indexes=[*own, f"the records cannot be read until these are rebuilt: {exc}"],
            )

    def _verify(self, own: list[str]) -> VerifyReport:
        """`verify`, given what the backend found wrong with its own indexes."""
        damaged: list[DamagedRecord] = []
        referenced: set[str] = set()
        checked: dict[str, tuple[str | None, int]] = {}  # blob hash -> (problem, size)
        record_keys = self._backend.keys(RECORD)
        for k in record_keys:
            record_id = k[len(RECORD) :]
            raw = self._backend.get(k)
            if raw is None:
                continue
            try:
                record = codec.load_record(record_id, raw)
            except _Damaged as exc:
                # Damage to report, not garbage: its payload is kept, and not orphaned.
                referenced.update(blob_key(h) for h in _hashes_in(raw))
                damaged.append(
                    models.DamagedRecord(
                        id=record_id, content_hash=None, problem=exc.problem, detail=str(exc)
                    )
                )
                continue
            digest = record.content_hash
            referenced.add(blob_key(digest))
            if digest not in checked:
                checked[digest] = self._blob_problem(digest)
            problem, size = checked[digest]
            if problem == "missing" and not self._backend.contains(k):
                del checked[digest]  # removed by gc since it was read, with its payload
                continue
            if problem is not None:
                detail = f"blob {digest[:16]} is {problem}"
            else:
                problem, detail = _record_problem(record, size)
            if problem is not None:
                damaged.append(
                    models.DamagedRecord(
                        id=record_id, content_hash=digest, problem=problem, detail=detail
                    )
                )
        # The size of each payload stored, by address: those re-hashed, then the others.
        stored = {h[:ADDRESS]: n for h, (problem, n) in checked.items() if problem != "missing"}
        for k in self._backend.keys(BLOB):
            if k[len(BLOB) :] not in stored:
                stored[k[len(BLOB) :]] = len(self._backend.get(k) or b"")
        orphans = [a for a in stored if blob_key(a) not in referenced]
        orphan_bytes = sum(stored[a] for a in orphans)
        strays = self._backend.strays() if isinstance(self._backend, StrayFiles) else {}
        damaged.sort(key=lambda d: d.id)
        return models.VerifyReport(
            indexes=own + self._index_problems({d.id for d in damaged}, stored, set(orphans)),
            records=len(record_keys),
            blobs_checked=sum(problem != "missing" for problem, _ in checked.values()),
            damaged=damaged,
            orphan_blobs=len(orphans) + len(strays),
            orphan_bytes=orphan_bytes + sum(strays.values()),
        )

    def _blob_problem(self, digest: str) -> tuple[str | None, int]:
        data = self._backend.get(blob_key(digest))
        if data is None:
            return "missing", 0
        return (None if content_hash(data) == digest else "corrupt"), len(data)

    def gc(
        self,
        *,
        max_age: timedelta | None = None,
        max_bytes: int | None = None,
        now: datetime | None = None,
    ) -> GcReport:
        max_age, max_bytes = limits(max_age, max_bytes)
        now = datetime.now(UTC) if now is None else aware("gc now", now)
        b = self._backend
        strays = self._remove_strays()
        # Pins as they are now: one that ended (its age passed, or every session that
        # made it ended) holds its record no more.
        pins = {k[len(PIN) :]: b.get(k) for k in b.keys(PIN)}
        ended = {
            i: raw
            for i, raw in pins.items()
            if raw is not None and not codec.load_pin(raw).live(now)
        }
        # Mark, reading without holding the store: what is written meanwhile is new, and
        # each batch below checks again what it removes.
        live: list[tuple[datetime, Record]] = []
        later_of: dict[str, list[Observation]] = {}  # id -> its later sightings
        damaged: set[str] = set()  # blobs of records that cannot be read: kept
        for k in b.keys(RECORD):
            raw = b.get(k)
            if raw is None:
                continue
            try:
                record = codec.load_record(k[len(RECORD) :], raw)
            except IntegrityError:
                # Left for `verify` to report, never silently dropped: nor its payload.
                damaged.update(h[:ADDRESS] for h in _hashes_in(raw))
                continue
            later = later_of[record.id] = self._later(record.id)
            live.append((max([record.observed_at, *(o.at for o in later)]), record))
        live.sort(key=lambda item: (item[0], item[1].id))
        pinned = {r.id for _, r in live if pins.get(r.id) is not None and r.id not in ended}
        removed = _chosen(live, pinned, now, max_age, max_bytes)
        # An ended pin of a record that stays goes now, and one of a record that goes
        # with it, in its batch: each only if it is still the pin read here, so that a
        # pin renewed meanwhile stands. A few to a step: a store may hold many ended pins.
        stale = sorted(set(ended) - set(removed))
        for i in range(0, len(stale), _FIRST_BATCH):
            with b.exclusive():
                for record_id in stale[i : i + _FIRST_BATCH]:
                    if b.get(PIN + record_id) == ended[record_id]:
                        self.unpin(record_id)
        # Records whose payload is gone can never be replayed: they go too, so that
        # the same call made again stores a whole record.
        chosen, present = set(removed), {}
        for _, r in live:
            if r.id not in chosen and r.id not in pinned:
                address = r.content_hash[:ADDRESS]
                if address not in present:
                    present[address] = b.contains(BLOB + address)
                if not present[address]:
                    removed.append(r.id)
        sizes = {r.content_hash[:ADDRESS]: r.size for _, r in live}
        tomb = json.dumps({"at": now.isoformat()}).encode()
        gone, freed = self._swept(
            self._removals(live, later_of, removed, ended), sizes, set(sizes) | damaged, tomb
        )
        freed |= strays
        went = set(gone)
        left = {r.content_hash: r.size for _, r in live if r.id not in went}
        return models.GcReport(
            removed_records=gone,
            removed_blobs=len(freed),
            freed_bytes=sum(freed.values()),
            kept_pinned=len(pinned),
            blob_bytes_after=sum(left.values()),
            removed_damaged=[i for i in gone if i not in chosen],
        )

    def _swept(
        self, removals: list[Removal], sizes: dict[str, int], referenced: set[str], tomb: bytes
    ) -> tuple[list[str], dict[str, int]]:
        """Remove these records in batches (`sweep`), then the payloads no record pointed
        at (left by a writer or a gc that was killed; none of `referenced`), each in the
        batch that finds no record under it (`sizes`: of the payloads, by address);
        `tomb`: the tombstone each record leaves (none if empty). The ids removed, and
        the size of each payload removed, by address."""
        b = self._backend
        orphans = [k[len(BLOB) :] for k in b.keys(BLOB) if k[len(BLOB) :] not in referenced]
        gone: list[str] = []
        freed: dict[str, int] = {}
        size, done, first = min(_FIRST_BATCH, _BATCH), 0, True
        while done < len(removals) + len(orphans):
            if not first and b.gc_pause:  # writers waiting for the store get it between two
                time.sleep(b.gc_pause)
            first = False
            chunk = removals[done : done + size]
            addresses = {r.address: sizes.get(r.address) for r in chunk}
            if not chunk:
                at = done - len(removals)
                addresses = {a: None for a in orphans[at : at + size]}
            start = time.monotonic()
            ids, blobs = sweep(b, chunk, addresses, tomb, self._ids)
            took = time.monotonic() - start
            gone += ids
            freed.update(blobs)
            done += len(chunk) or len(addresses)
            if took > b.gc_batch_time:
                size = max(1, int(size * b.gc_batch_time / took))
            elif took < b.gc_batch_time * 3 / 4:
                size = min(size + max(1, size // 4), _BATCH)
        return gone, freed

    def remove(self, record_ids: Sequence[str]) -> GcReport:
        """Remove these records (full ids), pinned or not, with what goes with them, as
        gc would, but leaving no tombstone: afterwards they are not found, rather than
        expired. `NotFound` (or `Expired`), and nothing removed, if one is not there."""
        records = [self.get(i) for i in dict.fromkeys(record_ids)]
        later_of = {r.id: self._later(r.id) for r in records}
        for r in records:
            if self.pin_info(r.id) is not None:
                self.unpin(r.id)
        live = [(r.observed_at, r) for r in records]
        sizes = {r.content_hash[:ADDRESS]: r.size for r in records}
        removals = self._removals(live, later_of, [r.id for r in records])
        # Only the payloads of these records: others no record points to stay for gc.
        gone, freed = self._swept(
            removals, sizes, {k[len(BLOB) :] for k in self._backend.keys(BLOB)}, b""
        )
        return models.GcReport(
            removed_records=gone,
            removed_blobs=len(freed),
            freed_bytes=sum(freed.values()),
            kept_pinned=0,
            blob_bytes_after=self._backend.size(BLOBS)[1],
        )

    def _remove_strays(self) -> dict[str, int]:
        """Remove the files left by writers killed before their rows committed (on a
        backend that keeps files), holding the store; their names and sizes."""
        b = self._backend
        if not isinstance(b, StrayFiles):
            return {}
        with b.exclusive():
            strays = b.strays()
            for name in strays:
                b.remove_stray(name)
        return strays

    def _removals(
        self,
        live: list[tuple[datetime, Record]],
        later_of: dict[str, list[Observation]],
        removed: list[str],
        ended: Mapping[str, bytes] | None = None,
    ) -> list[Removal]:
        """What gc removes with each record of `removed`, as it reads them now (`ended`:
        the ended pins read, by record)."""
        ended = ended or {}
        b = self._backend
        dropped = set(removed)
        goes_with: dict[str, list[str]] = {i: [OBSERVED + i, IMPORTED + i] for i in removed}
        if dropped:
            # What a shown text stood for goes with the record; what a stub's id prefix
            # named stays, so that the stub's prefix still says "expired".
            kept = set().union(*(prefix_marks(i) for i in dropped))
            for k in b.keys(SHOWN):
                if k not in kept and (shown := (b.get(k) or b"").decode()) in dropped:
                    goes_with[shown].append(k)
            for k in b.keys(STUB):  # and so do the stubs made of it (named by it)
                if stub_record(k) in dropped:
                    goes_with[stub_record(k)].append(k)
        by_id = {r.id: r for _, r in live}
        removals = []
        for record_id in removed:
            record, later = by_id[record_id], later_of[record_id]
            sessions = {record.session, *(o.session for o in later)}
            registries = [(TOOL + record.tool, TOOLS, record.tool)]
            registries += [(SESSION + s, SESSIONS, s) for s in sorted(filter(None, sessions))]
            entries = all_entries(record, later, ids=self._ids, own=self._own)
            pin = ended.get(record_id, b"")
            if pin:
                entries.append((PINS, 0, record_id))
                if (reason := codec.load_pin(pin).reason) != USER_PIN:
                    entries.append((PINS_FOR + reason, 0, record_id))
            removals.append(
                Removal(
                    id=record_id,
                    sightings=len(later),
                    pin=pin,
                    keys=goes_with[record_id],
                    entries=entries,
                    registries=registries,
                    address=record.content_hash[:ADDRESS],
                )
            )
        return removals

    def _index_once(self) -> None:
        """Build the indexes of a store that lacks their marker: a new one, or one whose
        reindex was cut short (the marker is written last)."""
        with self._backend.exclusive():
            # Another process may have indexed it while this one waited for the section.
            if self._backend.members(INDEXES) != [VERSION]:
                self._reindex(_progress_log(self.location))

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Build every index again from the records, pins and payloads, holding the
        store as gc does; returns the number of records indexed. Opening a store whose
        reindex was cut short does this again. `progress` is called with (records done,
        records in all) as it goes. Records that cannot be read are left out (`verify`
        names them)."""
        b = self._backend
        try:
            return self._rebuilt(progress)
        except StoreError as failed:
            if not isinstance(b, ChecksItself):
                raise
            try:
                mended = b.mend()
            except StoreError:
                mended = []
            if not mended:
                raise failed  # nothing it could mend: the rebuild's own error
        return self._rebuilt(progress)

    def _rebuilt(self, progress: Callable[[int, int], None] | None) -> int:
        """`reindex`, once: the backend's own structures, then the store's indexes."""
        with self._backend.exclusive():
            if isinstance(self._backend, ChecksItself):
                self._backend.rebuild()
            return self._reindex(progress)

    def _reindex(self, progress: Callable[[int, int], None] | None) -> int:
        b = self._backend
        b.drop_indexes()
        indexed = [0]
        batch: list[Entry] = []
        for entry in self._derived(own=self._own, progress=progress, indexed=indexed):
            batch.append(entry)
            if len(batch) >= 5000:  # written a batch at a time
                b.index(add=batch)
                batch = []
        b.index(add=[*batch, (INDEXES, 0, VERSION)])  # the last: indexed, once whole
        return indexed[0]

    def _derived(
        self,
        *,
        own: bool,
        progress: Callable[[int, int], None] | None = None,
        indexed: list[int] | None = None,
    ) -> Iterator[Entry]:
        """Every index entry that the records, payloads, pins and tombstones give (`own`:
        those of records' rows too); `indexed[0]` counts the records read."""
        b = self._backend
        keys = b.keys(RECORD)
        sizes: dict[str, int] = {}  # blob address -> size, from the records
        for done, k in enumerate(keys, start=1):
            raw = b.get(k)
            try:
                if raw is None:
                    continue
                record = codec.load_record(k[len(RECORD) :], raw)
                entries = record_entries(record, ids=self._ids, own=own)
                for seen in self._later(record.id):
                    entries += sighting_entries(record.id, seen)
            except IntegrityError:
                continue  # damage: `verify` reports it
            finally:
                if progress is not None and (done % 1000 == 0 or done == len(keys)):
                    progress(done, len(keys))
            yield from entries
            sizes[record.content_hash[:ADDRESS]] = record.size
            if indexed is not None:
                indexed[0] += 1
        for k in b.keys(BLOB):
            address = k[len(BLOB) :]
            size = sizes.get(address)
            yield (BLOBS, len(b.get(k) or b"") if size is None else size, address)
        for k in b.keys(PIN):
            held = codec.load_pin(b.get(k) or b"")
            yield (PINS, 0, k[len(PIN) :])
            if held.reason != USER_PIN:
                yield (PINS_FOR + held.reason, 0, k[len(PIN) :])
                yield (PIN_REASONS, 0, held.reason)
        if self._ids:
            yield from ((TOMBS, 0, k[len(TOMBSTONE) :]) for k in b.keys(TOMBSTONE))

    def _index_problems(
        self, damaged: set[str], stored: dict[str, int], orphans: set[str]
    ) -> list[str]:
        """What is wrong with the indexes and the counts `stats` reads: each index
        compared with what the records, payloads, pins and
        tombstones give (`damaged`: ids of records that cannot be read; `stored`: the
        size of each payload stored, by address; `orphans`: the addresses of those no
        record points to, which gc removes, indexed or not)."""
        b = self._backend
        problems: list[str] = []
        want: dict[str, set[str]] = {}
        for name, _, member in self._derived(own=True):
            want.setdefault(name, set()).add(member)
        # A backend that keeps rows keeps one of a record it cannot read too, found by
        # no tool (`row_in`): not a problem of its indexes, but the damage verify names.
        unread = damaged | ({""} if damaged and b.indexes_records else set())
        for name in sorted(set(want) | set(b.index_names()) - {INDEXES}):
            try:
                have = set(b.members(name))
            except StoreError as exc:
                problems.append(f"index {name} cannot be read: {exc}")
                continue
            lacks, extra = want.get(name, set()) - have, have - want.get(name, set()) - unread
            if name == BLOBS:
                lacks, extra = lacks - orphans, extra - orphans
            if name == PIN_REASONS:  # a reason stays listed once its last pin ends
                extra = set()
            if lacks or extra:
                problems.append(f"index {name} {_differences(lacks, extra)}")
        counted = [TIME, SESSIONS, PINS, *(n for n in want if n.startswith((TOOL, PINS_FOR)))]
        for name in counted:
            expected = len(want.get(name, ()))
            if name == TIME and b.indexes_records:  # those whose record is unreadable
                expected += len(damaged - want.get(TIME, set()))
            if (found := b.size(name)[0]) != expected:
                problems.append(f"the count of {name} is {found}, not {expected}")
        blobs = (len(stored), sum(stored.values()))
        if not damaged and not orphans and b.size(BLOBS) != blobs:
            found, total = b.size(BLOBS)
            problems.append(
                f"the count of payloads is {found} of {total} bytes, not {blobs[0]} of "
                f"{blobs[1]} bytes"
            )
        return problems


def _differences(lacks: set[str], extra: set[str]) -> str:
    """How an index differs from what it should hold, naming a few of the members."""

    def some(members: set[str]) -> str:
        named = ", ".join(sorted(members)[:3])
        return named + (f" and {len(members) - 3} more" if len(members) > 3 else "")

    said = []
    if lacks:
        said.append(f"lacks {len(lacks)} it should hold ({some(lacks)})")
    if extra:
        said.append(f"holds {len(extra)} it should not ({some(extra)})")
    return " and ".join(said)
