"""The one implementation of `Store`, over any small key-value backend.

A backend stores bytes under string keys, lists keys by prefix, writes a payload and its
record in one atomic step, appends to lists, keeps ordered indexes (written in the same
atomic step as what they index), and offers a section that excludes writers (for gc).
Everything else (the layout of keys and indexes, integrity checks, gc, verify) is here,
so the disk, memory and Redis stores differ only in where the bytes go.

Records are found through the indexes (see `_index`: by time, key, session, tool, id
prefix, and the ids their meta names), never by reading the others, and `stats` reads
the sizes the indexes keep. A store written before the indexes existed is
indexed once, when it is first opened (`reindex`).

A record is checked two ways. Its id follows from its tool, args, key and content hash
(`Record.derived_id`; an Action's id joins the nonce recorded with it), and the
stored JSON carries a checksum of all its fields, the others included (media type,
size, determinism, session, times, outcome, meta), so that a record changed after it was
written is refused rather than served. The checksum catches mistakes and damage, not an
adversary who can write to the store: anyone who can edit a record can recompute it.
Records written before the checksum existed are plain JSON: they are read as before,
and `verify` checks their ids.

Key layout:
    b:<hash>   payload bytes (content-addressed: stored once), by the hash's first 128 bits
    r:<id>     the record: a checksum of its JSON, a newline, the JSON; immutable
    o:<id>     later observations of the same id, a list, append-only
    p:<id>     pin marker
    t:<hash>   token count of a payload, keyed like its blob
    x:<id>     tombstone of a garbage-collected record
    s:<hash>   the record a text shown to a model stood for, by the text's hash

and the indexes, apart from the keys (see `_index` for their names and entries).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, suppress
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

import blake3
from pydantic import ValidationError

from .._errors import AmbiguousId, ArgumentError, Expired, IntegrityError, NotFound, StoreError
from .._models import Observation, Record
from ..ids import ID_LENGTH, check_prefix, content_hash
from ._base import USER_PIN, DamagedRecord, GcReport, Pin, StoreStats, VerifyReport
from ._index import (
    ADDRESS,
    BLOBS,
    IDS,
    INDEXES,
    KEY,
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
    VERSION,
    Entry,
    Row,
    all_entries,
    micros,
    record_entries,
    row_of,
    sighting_entries,
)

BLOB, RECORD, OBSERVED, PIN, TOKENS, TOMBSTONE = "b:", "r:", "o:", "p:", "t:", "x:"
SHOWN = "s:"
# Blobs are keyed by the first 128 bits of their blake3 hash (`ADDRESS` hex characters):
# half the key length makes every write measurably cheaper, 128 bits leave collisions out
# of reach, and every read re-hashes against the full 256-bit digest in the record, so
# none could go unnoticed.
_ADDRESS = ADDRESS
_PARSED = 2048  # records a store keeps parsed (a few MB at most)
_log = logging.getLogger("addressable")


class Backend(Protocol):
    """Bytes under string keys: the part of a store that differs by where data lives."""

    location: str
    # Whether `keys(prefix)` reads only the keys with the prefix (they are kept in
    # order): then ids are resolved from the keys of records, with no index of their own.
    ranged_keys: bool
    # Whether it keeps each record's `Row` in the record's own row (see `_index`): then
    # it is given only the other index entries.
    indexes_records: bool

    def get(self, key: str) -> bytes | None: ...

    def set(self, key: str, value: bytes) -> None: ...

    def delete(self, key: str) -> None: ...

    def contains(self, key: str) -> bool: ...

    def keys(self, prefix: str) -> list[str]: ...

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
        """Atomically: store `payload` under `blob` unless present (adding `blob_index`
        to the indexes if it was not), then `value` under `record` unless present
        (adding `index` if it was not). True if the record was new. No `exclusive`
        section may interleave with it. A backend that keeps rows takes the record's
        `row`, and may keep a small payload with it rather than under `blob` (`get` of
        `blob` still finds it, and `keys` does not list it)."""
        ...

    def append(self, key: str, item: bytes, index: Sequence[Entry] = ()) -> None:
        """Append to the list under `key` and add `index` to the indexes, in one step
        atomic with respect to other appends; no `exclusive` section interleaves."""
        ...

    # An index holds (score, member) pairs of a name, in (score, member) order; see
    # `_index` for what the store keeps in them. Indexes live apart from the keys:
    # `keys` never lists them.

    def index(self, add: Sequence[Entry] = (), remove: Sequence[Entry] = ()) -> None:
        """Add entries and remove entries, in one atomic step. A backend that keeps one
        score a member removes the member whatever the score given."""
        ...

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
        """Members of pairs of an index whose score is within [low, high], in (score,
        member) order (`reverse`: the other way), skipping `offset`, at most `limit`; a
        member with several scores may come more than once."""
        ...

    def prefixed(self, name: str, prefix: str) -> list[str]:
        """Members of an index that start with `prefix`, in order. Only for indexes
        whose members all have score 0."""
        ...

    def size(self, name: str) -> tuple[int, int]:
        """The number of members of an index whose name starts with "#" and the sum of
        their scores, kept up to date as it changes (not counted when asked)."""
        ...

    def drop_indexes(self) -> None:
        """Remove every index (before building them again)."""
        ...

    def items(self, key: str) -> list[bytes]:
        """The list under `key`, oldest first; empty if there is none."""
        ...

    def exclusive(self) -> AbstractContextManager[None]:
        """A section that no `put_pair` interleaves with: gc's mark and sweep."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class StrayFiles(Protocol):
    """A backend that keeps large values in files of their own. A writer killed after
    writing such a file but before committing its key leaves the file behind: space to
    reclaim, which `verify` reports and `gc` removes."""

    def strays(self) -> dict[str, int]:
        """Files of the backend's own naming that no key points to, with their sizes."""
        ...

    def remove_stray(self, name: str) -> None:
        """Remove one file `strays` named. Called only inside `exclusive`."""
        ...


_M = TypeVar("_M", bound=Callable[..., Any])


def translated(what: str) -> Callable[[_M], _M]:
    """Decorate a backend method so that its library's failures (the backend's
    `failures`) become `StoreError` naming the store and what failed."""

    def decorate(method: _M) -> _M:
        @functools.wraps(method)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except self.failures as exc:
                raise store_failure(self.location, what, exc) from exc

        return cast(_M, run)

    return decorate


def store_failure(location: str, what: str, exc: BaseException) -> StoreError:
    kind = location.split(":", 1)[0]
    return StoreError(f"{kind} store at {location}: {what} failed: {exc}")


class KeyValueStore:
    """A `Store` over a `Backend`; see the module docstring for the key layout."""

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
        # Records this store wrote or read lately, parsed, by their stored bytes: the same
        # bytes parse to the same record, so a hit skips the checksum and the parse, and
        # a record altered since (other bytes) is read and checked afresh.
        self._parsed: dict[bytes, Record] = {}
        if backend.members(INDEXES) != [VERSION]:
            self._index_once()

    @property
    def location(self) -> str:
        return self._backend.location

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"

    def __enter__(self) -> KeyValueStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._backend.close()

    # -- writing ---------------------------------------------------------------------

    def put(self, record: Record, payload: bytes) -> bool:
        b = self._backend
        value = _dump_record(record)
        digest = record.content_hash
        # The blob goes in first, with the record and its index entries in the same
        # atomic step: a record never points at bytes not yet stored, and is never
        # stored unindexed, even if the writer is killed.
        if not b.put_pair(
            blob_key(digest),
            payload,
            RECORD + record.id,
            value,
            record_entries(record, ids=self._ids, own=self._own),
            [(BLOBS, len(payload), digest[:_ADDRESS])],
            row_of(record),
        ):
            observation = Observation(at=record.observed_at, session=record.session)
            b.append(
                OBSERVED + record.id,
                observation.model_dump_json().encode(),
                sighting_entries(record.id, observation),
            )
            return False
        self._remember(value, record if record.tokens is None else _untokened(record))
        # A tombstone left by gc may remain: a live record takes precedence over it.
        if record.tokens is not None:
            b.set(tokens_key(record.content_hash), str(record.tokens).encode())
        return True

    def add_observation(self, record_id: str, observation: Observation) -> None:
        """Append a sighting of an existing record (used when importing bundles)."""
        self.get(record_id)
        self._backend.append(
            OBSERVED + record_id,
            observation.model_dump_json().encode(),
            sighting_entries(record_id, observation),
        )

    def set_tokens(self, content_hash: str, tokens: int) -> None:
        self._backend.set(tokens_key(content_hash), str(tokens).encode())

    def set_shown(self, text_hash: str, record_id: str) -> None:
        self._backend.set(SHOWN + text_hash[:_ADDRESS], record_id.encode())

    def shown(self, text_hash: str) -> str | None:
        found = self._backend.get(SHOWN + text_hash[:_ADDRESS])
        return found.decode() if found is not None else None

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
            until = _aware("pin until", until)
        held = self.pin_info(record_id)
        if held is not None and held.reason == USER_PIN:
            return  # a user pin is never weakened
        if held is not None and held.reason == reason and reason != USER_PIN:
            # Pinned again for the same reason: every session that holds it, and the
            # later end. A pin with no end stays with no end.
            sessions = sorted({*held.sessions, *([session] if session else [])})
            until = None if held.until is None or until is None else max(until, held.until)
        else:
            sessions = [session] if session else []
        pin = Pin(reason=reason, sessions=sessions, until=until)
        add = [(PINS, 0, record_id)]
        if reason != USER_PIN:
            add += [(PINS_FOR + reason, 0, record_id), (PIN_REASONS, 0, reason)]
        remove = []
        if held is not None and held.reason not in (USER_PIN, reason):
            remove = [(PINS_FOR + held.reason, 0, record_id)]
        self._backend.set(PIN + record_id, pin.model_dump_json().encode())
        self._backend.index(add=add, remove=remove)  # counted by `stats`

    def unpin(self, record_id: str) -> None:
        held = self.pin_info(record_id)
        self._backend.delete(PIN + record_id)
        remove = [(PINS, 0, record_id)]
        if held is not None and held.reason != USER_PIN:
            remove.append((PINS_FOR + held.reason, 0, record_id))
        self._backend.index(remove=remove)

    def pin_info(self, record_id: str) -> Pin | None:
        raw = self._backend.get(PIN + record_id)
        return None if raw is None else _load_pin(raw)

    def is_pinned(self, record_id: str, *, now: datetime | None = None) -> bool:
        held = self.pin_info(record_id)
        return held is not None and held.live(_now(now))

    def end_session(self, session: str) -> int:
        held_by = [
            (k[len(PIN) :], pin)
            for k in self._backend.keys(PIN)
            if (pin := self.pin_info(k[len(PIN) :])) is not None and session in pin.sessions
        ]
        ended = 0
        for record_id, pin in held_by:
            left = [s for s in pin.sessions if s != session]
            if left:
                self._backend.set(
                    PIN + record_id,
                    pin.model_copy(update={"sessions": left}).model_dump_json().encode(),
                )
            else:
                self.unpin(record_id)
                ended += 1
        return ended

    # -- reading ---------------------------------------------------------------------

    def get(self, record_id: str) -> Record:
        if self._joined is not None:
            # One read for the record, its payload and its token count; the payload is
            # kept for a `read` of the same record that follows (and re-hashed there).
            found = self._joined(RECORD + record_id)
            if found is not None:
                value, payload, tokens = found
                record = self._parse(record_id, value)
                if payload is not None:
                    self._recent = (record_id, record.content_hash, payload)
                if tokens is None:
                    return record
                return record.model_copy(update={"tokens": int(tokens)})
            raw: bytes | None = None
        else:
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
        return self._with_tokens(self._parse(record_id, raw))

    def _parse(self, record_id: str, raw: bytes) -> Record:
        record = self._parsed.get(raw)
        if record is None or record.id != record_id:
            record = _load_record(record_id, raw)  # checked: it raises on any damage
            self._remember(raw, record)
        return record

    def _remember(self, raw: bytes, record: Record) -> None:
        parsed = self._parsed
        if len(parsed) >= _PARSED:
            # The oldest goes (another thread may have taken it meanwhile).
            with suppress(KeyError, RuntimeError, StopIteration):
                del parsed[next(iter(parsed))]
        parsed[raw] = record

    def _with_tokens(self, record: Record) -> Record:
        tokens = self._backend.get(tokens_key(record.content_hash))
        if tokens is None:
            return record
        return record.model_copy(update={"tokens": int(tokens)})

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
        actual = content_hash(data)
        if actual != digest:
            raise IntegrityError(
                f"the payload of result {record_id} is corrupt: its bytes hash to "
                f"{actual[:16]}, not {digest[:16]}; it will not be served"
            )
        return data

    def observations(self, record_id: str) -> list[Observation]:
        record = self.get(record_id)
        return [Observation(at=record.observed_at, session=record.session), *self._later(record_id)]

    def _later(self, record_id: str) -> list[Observation]:
        return [_load_observation(record_id, o) for o in self._backend.items(OBSERVED + record_id)]

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
    ) -> Iterator[Record]:
        if since is not None:
            since = _aware("records since", since)
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
            found = [r for r in self._load(list(dict.fromkeys(ids))) if wanted(r)]
            found.sort(key=lambda r: (r.observed_at, r.id), reverse=newest_first)
            return iter(found[:limit])
        return iter(self._walk(name, newest_first, limit, wanted))

    def _walk(
        self, name: str, newest_first: bool, limit: int, wanted: Callable[[Record], bool]
    ) -> list[Record]:
        """The first `limit` wanted records of an index in its order, read a page at a
        time: as many as needed, not the whole index."""
        found: list[Record] = []
        seen: set[str] = set()  # a record written meanwhile shifts the pages: once each
        offset, page = 0, max(limit, 16)
        while True:
            ids = self._backend.members(name, reverse=newest_first, offset=offset, limit=page)
            for record in self._load(i for i in ids if i not in seen):
                seen.add(record.id)
                if wanted(record):
                    found.append(record)
                    if len(found) == limit:
                        return found
            if len(ids) < page:
                return found
            offset += len(ids)
            page = min(page * 4, 4096)

    def _load(self, ids: Iterable[str]) -> Iterator[Record]:
        """The records with these ids, skipping any removed since they were listed."""
        for record_id in ids:
            raw = self._backend.get(RECORD + record_id)
            if raw is not None:
                yield self._with_tokens(self._parse(record_id, raw))

    # -- maintenance -----------------------------------------------------------------

    def verify(self) -> VerifyReport:
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
                record = _load_record(record_id, raw)
            except _Damaged as exc:
                # Damage to report, not garbage: its payload is kept, and not orphaned.
                referenced.update(blob_key(h) for h in _hashes_in(raw))
                damaged.append(
                    DamagedRecord(
                        id=record_id, content_hash=None, problem=exc.problem, detail=str(exc)
                    )
                )
                continue
            digest = record.content_hash
            referenced.add(blob_key(digest))
            if digest not in checked:
                checked[digest] = self._blob_problem(digest)
            problem, size = checked[digest]
            if problem is not None:
                detail = f"blob {digest[:16]} is {problem}"
            else:
                problem, detail = _record_problem(record, size)
            if problem is not None:
                damaged.append(
                    DamagedRecord(id=record_id, content_hash=digest, problem=problem, detail=detail)
                )
        orphans = [k for k in self._backend.keys(BLOB) if k not in referenced]
        orphan_bytes = sum(len(self._backend.get(k) or b"") for k in orphans)
        strays = self._backend.strays() if isinstance(self._backend, StrayFiles) else {}
        damaged.sort(key=lambda d: d.id)
        return VerifyReport(
            records=len(record_keys),
            blobs_checked=len(checked),
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
        max_age, max_bytes = _limits(max_age, max_bytes)
        now = datetime.now(UTC) if now is None else _aware("gc now", now)
        b = self._backend
        # One atomic section for mark and sweep: a writer that found a blob already
        # stored must not see it swept before its record lands.
        with b.exclusive():
            # Files left by killed writers first, while every key still has its file.
            strays: dict[str, int] = {}
            if isinstance(b, StrayFiles):
                strays = b.strays()
                for name in strays:
                    b.remove_stray(name)
            live: list[tuple[datetime, Record]] = []
            later_of: dict[str, list[Observation]] = {}  # id -> its later sightings
            damaged: set[str] = set()  # blobs of records that cannot be read: kept
            for k in b.keys(RECORD):
                raw = b.get(k)
                if raw is None:
                    continue
                try:
                    record = _load_record(k[len(RECORD) :], raw)
                except IntegrityError:
                    # Left for `verify` to report, never silently dropped: nor its payload.
                    damaged.update(blob_key(h) for h in _hashes_in(raw))
                    continue
                later = later_of[record.id] = self._later(record.id)
                live.append((max([record.observed_at, *(o.at for o in later)]), record))
            live.sort(key=lambda item: (item[0], item[1].id))
            # Pins that ended (their age passed, or every session that made them ended)
            # go now: their records are as any other.
            for k in b.keys(PIN):
                held = self.pin_info(k[len(PIN) :])
                if held is not None and not held.live(now):
                    self.unpin(k[len(PIN) :])
            pinned = {r.id for _, r in live if self.is_pinned(r.id, now=now)}
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

            survivors: list[tuple[datetime, Record]] = []
            for seen, record in live:
                if max_age is not None and record.id not in pinned and now - seen > max_age:
                    drop(record)
                else:
                    survivors.append((seen, record))
            if max_bytes is not None:
                for _, record in survivors:  # oldest first
                    if total <= max_bytes:
                        break
                    if record.id not in pinned:
                        drop(record)

            tomb = json.dumps({"at": now.isoformat()}).encode()
            dropped = set(removed)
            for k in b.keys(SHOWN):  # what a shown text stood for goes with the record
                if (b.get(k) or b"").decode() in dropped:
                    b.delete(k)
            by_id = {r.id: r for _, r in live}
            emptied: set[str] = set()  # tool and session indexes that may now be empty
            for record_id in removed:
                record, later = by_id[record_id], later_of[record_id]
                entries = all_entries(record, later, ids=self._ids, own=self._own)
                b.delete(RECORD + record_id)
                b.delete(OBSERVED + record_id)
                b.set(TOMBSTONE + record_id, tomb)
                b.index(add=[(TOMBS, 0, record_id)] if self._ids else [], remove=entries)
                sessions = {record.session, *(o.session for o in later)} - {None}
                emptied.update([TOOL + record.tool, *(SESSION + str(n) for n in sessions)])
            # A tool or a session none of whose records is left leaves its registry.
            unused = [
                (TOOLS, 0, n[len(TOOL) :])
                if n.startswith(TOOL)
                else (SESSIONS, 0, n[len(SESSION) :])
                for n in sorted(emptied)
                if not b.members(n, limit=1)
            ]
            if unused:
                b.index(remove=unused)
            keep = {blob_key(h) for h, n in refs.items() if n > 0} | damaged
            gone = {blob_key(h): sizes[h] for h, n in refs.items() if n == 0}
            blob_sizes = {blob_key(h): n for h, n in sizes.items()}
            freed = sum(strays.values())
            blobs_removed = len(strays)
            for k in b.keys(BLOB):
                if k in keep:
                    continue
                freed += gone.pop(k, 0) or len(b.get(k) or b"")
                b.delete(k)
                b.delete(TOKENS + k[len(BLOB) :])
                # Indexed with its size, which its records give (a blob no record
                # pointed to was never indexed: removing it changes nothing).
                b.index(remove=[(BLOBS, blob_sizes.get(k, 0), k[len(BLOB) :])])
                blobs_removed += 1
            # Payloads a backend kept in their records' rows went with the last of them.
            for k, size in gone.items():
                b.delete(TOKENS + k[len(BLOB) :])
                freed += size
                blobs_removed += 1
        return GcReport(
            removed_records=removed,
            removed_blobs=blobs_removed,
            freed_bytes=freed,
            kept_pinned=len(pinned),
            blob_bytes_after=total,
        )

    def stats(self) -> StoreStats:
        """From the sizes the indexes keep: nothing is counted or read but the oldest
        and the newest record."""
        b = self._backend
        tools = {t: b.size(TOOL + t)[0] for t in b.members(TOOLS)}
        blobs, blob_bytes = b.size(BLOBS)
        return StoreStats(
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
        """Pins held, by reason: "user" is every pin with no other reason (pins made
        before pins had reasons among them)."""
        b = self._backend
        found = {r: b.size(PINS_FOR + r)[0] for r in b.members(PIN_REASONS)}
        counts = {r: n for r, n in sorted(found.items()) if n}
        user = b.size(PINS)[0] - sum(counts.values())
        return {USER_PIN: user, **counts} if user else counts

    def _edge(self, *, newest: bool) -> datetime | None:
        """When the oldest (or newest) record was observed; None for an empty store."""
        offset = 0
        while ids := self._backend.members(TIME, reverse=newest, offset=offset, limit=8):
            for record in self._load(ids):  # one removed meanwhile is skipped
                return record.observed_at
            offset += len(ids)
        return None

    # -- indexes ---------------------------------------------------------------------

    def _index_once(self) -> None:
        with self._backend.exclusive():
            # Another process may have indexed it while this one waited for the section.
            if self._backend.members(INDEXES) != [VERSION]:
                self._reindex(_progress_log(self.location))

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Build every index again from the records, pins and payloads, holding the
        store as gc does; returns the number of records indexed. Opening a store that
        was written before the indexes existed does this once. `progress` is called
        with (records done, records in all) as it goes. Records that cannot be read are
        left out (`verify` names them)."""
        with self._backend.exclusive():
            return self._reindex(progress)

    def _reindex(self, progress: Callable[[int, int], None] | None) -> int:
        b = self._backend
        b.drop_indexes()
        keys = b.keys(RECORD)
        sizes: dict[str, int] = {}  # blob address -> size, from the records
        batch: list[Entry] = []
        indexed = 0

        def add(entries: list[Entry]) -> None:
            nonlocal batch
            batch += entries
            if len(batch) >= 5000:  # written a batch at a time
                b.index(add=batch)
                batch = []

        for done, k in enumerate(keys, start=1):
            raw = b.get(k)
            try:
                if raw is None:
                    continue
                record = _load_record(k[len(RECORD) :], raw)
                entries = record_entries(record, ids=self._ids, own=self._own)
                for seen in self._later(record.id):
                    entries += sighting_entries(record.id, seen)
            except IntegrityError:
                continue  # damage: `verify` reports it
            finally:
                if progress is not None and (done % 1000 == 0 or done == len(keys)):
                    progress(done, len(keys))
            add(entries)
            sizes[record.content_hash[:_ADDRESS]] = record.size
            indexed += 1
        for k in b.keys(BLOB):
            address = k[len(BLOB) :]
            size = sizes.get(address)
            add([(BLOBS, len(b.get(k) or b"") if size is None else size, address)])
        for k in b.keys(PIN):
            held = _load_pin(b.get(k) or b"1")
            add([(PINS, 0, k[len(PIN) :])])
            if held.reason != USER_PIN:
                add([(PINS_FOR + held.reason, 0, k[len(PIN) :]), (PIN_REASONS, 0, held.reason)])
        if self._ids:
            add([(TOMBS, 0, k[len(TOMBSTONE) :]) for k in b.keys(TOMBSTONE)])
        b.index(add=[*batch, (INDEXES, 0, VERSION)])  # the last: indexed, once whole
        return indexed


def _progress_log(location: str) -> Callable[[int, int], None]:
    def log(done: int, total: int) -> None:
        if total >= 1000:
            _log.info("indexing the store at %s: %d of %d records", location, done, total)

    return log


def blob_key(digest: str) -> str:
    """The key of a payload with this blake3 hex digest."""
    return BLOB + digest[:_ADDRESS]


def tokens_key(digest: str) -> str:
    return TOKENS + digest[:_ADDRESS]


def _untokened(record: Record) -> Record:
    return record.model_copy(update={"tokens": None})


def _dump_record(record: Record) -> bytes:
    # The token count lives beside the blob (t:<hash>): it is derived, and filled later.
    # None fields are left out: they read back as their default, None.
    if record.tokens is not None:
        record = _untokened(record)
    try:
        body = record.model_dump_json(exclude_none=True).encode("utf-8")
    except ValueError as exc:  # nested deeper than the serialiser goes, or not Unicode
        raise ArgumentError(
            f"the record of result {record.id} cannot be stored: {one_line(exc)}"
        ) from exc
    return _checksum(body) + b"\n" + body


# A record as stored: 32 hex characters of the blake3 hash of its JSON, a newline, the
# JSON (which has no raw newline). Records from before the checksum start with "{".
_CHECKSUM = 32


def _checksum(body: bytes) -> bytes:
    return blake3.blake3(body).hexdigest(length=_CHECKSUM // 2).encode()


def _load_pin(raw: bytes) -> Pin:
    """A pin as stored; the "1" of a pin made before pins had reasons is a user pin."""
    if raw == b"1":
        return Pin()
    try:
        return Pin.model_validate_json(raw)
    except ValidationError:
        return Pin()  # unreadable: kept, as a user pin keeps it


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else _aware("now", now)


class _Damaged(IntegrityError):
    """A stored record that cannot be given back as written; `problem` says how."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem  # "unreadable" or "altered"


def _load_record(record_id: str, raw: bytes) -> Record:
    if raw[:1] == b"{":
        body = raw  # written before records carried a checksum
    else:
        body = raw[_CHECKSUM + 1 :]
        if raw[_CHECKSUM : _CHECKSUM + 1] != b"\n" or raw[:_CHECKSUM] != _checksum(body):
            raise _Damaged(
                f"the record of result {record_id} was altered after it was written: it no "
                "longer matches its checksum; it will not be served (run verify)",
                "altered",
            )
    try:
        record = Record.model_validate_json(body)
        if record.observed_at.tzinfo is None:
            raise ValueError("a time without a time zone")
    except ValueError as exc:  # ValidationError included
        # Rare paths, kept off the fast one: JSON nested deeper than pydantic's own parser
        # goes, and times written without a time zone (taken as UTC).
        record = _load_slowly(record_id, body, exc)
    if record.id != record_id:
        raise _Damaged(
            f"the record stored under {record_id} names another id, {record.id}", "altered"
        )
    return record


def _load_slowly(record_id: str, body: bytes, first: ValueError) -> Record:
    try:
        data = json.loads(body)
        if isinstance(data, dict) and isinstance(data.get("observed_at"), str):
            data["observed_at"] = _utc(data["observed_at"])
        return Record.model_validate(data)
    except (ValueError, RecursionError):
        raise _Damaged(
            f"the record of result {record_id} is unreadable: {one_line(first)}", "unreadable"
        ) from first


def _load_observation(record_id: str, raw: bytes) -> Observation:
    try:
        observation = Observation.model_validate_json(raw)
        if observation.at.tzinfo is None:
            raise ValueError("a time without a time zone")
        return observation
    except ValueError as first:
        try:  # a time written without a time zone: taken as UTC
            data = json.loads(raw)
            data["at"] = _utc(data["at"])
            return Observation.model_validate(data)
        except (ValueError, TypeError, KeyError):
            raise _Damaged(
                f"an observation of result {record_id} is unreadable: {one_line(first)}",
                "unreadable",
            ) from first


def _utc(text: str) -> str:
    """An ISO time as written, with UTC added when it names no time zone."""
    when = datetime.fromisoformat(text)
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()


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


def one_line(exc: BaseException) -> str:
    """An exception's message on one line; a pydantic error as each field and its fault."""
    if isinstance(exc, ValidationError):
        text = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
    else:
        text = str(exc)
    return " ".join(text.split())


def _aware(name: str, when: object) -> datetime:
    if not isinstance(when, datetime):
        raise ArgumentError(f"{name} must be a datetime, not {type(when).__name__} ({when!r})")
    if when.utcoffset() is None:
        raise ArgumentError(
            f"{name} {when.isoformat()} has no time zone: give an aware datetime, "
            "e.g. datetime.now(UTC)"
        )
    return when


def _limits(max_age: object, max_bytes: object) -> tuple[timedelta | None, int | None]:
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
