"""How a `KeyValueStore` is kept: `verify` names damage, `gc` removes what is old or
over a size (and what killed writers left), `reindex` builds the indexes again.

Each walks every record; gc and reindex hold the backend's `exclusive` section, so that
no record is written meanwhile. A store written before the indexes existed is indexed
once, when it is first opened.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from ..core.errors import ArgumentError, IntegrityError
from ..core.ids import content_hash
from ..core.records import Observation, Record
from .arguments import aware, limits
from .backend import StrayFiles
from .codec import _Damaged, load_pin, load_record
from .index import (
    ADDRESS,
    BLOBS,
    INDEXES,
    PIN_REASONS,
    PINS,
    PINS_FOR,
    SESSION,
    SESSIONS,
    TOMBS,
    TOOL,
    TOOLS,
    VERSION,
    Entry,
    all_entries,
    record_entries,
    sighting_entries,
)
from .keys import (
    BLOB,
    OBSERVED,
    PIN,
    RECORD,
    SHOWN,
    STUB,
    TOKENS,
    TOMBSTONE,
    blob_key,
    prefix_marks,
    stub_record,
)
from .pins import Pinning
from .protocol import USER_PIN, DamagedRecord, GcReport, VerifyReport

_log = logging.getLogger("addressable")


class Upkeep(Pinning):
    """The maintenance of a `KeyValueStore`: verify, gc and reindex."""

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
                record = load_record(record_id, raw)
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
                    record = load_record(k[len(RECORD) :], raw)
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
            if dropped:
                # What a shown text stood for goes with the record; what a stub's id
                # prefix named stays, so that the stub's prefix still says "expired".
                kept = set().union(*(prefix_marks(i) for i in dropped))
                for k in b.keys(SHOWN):
                    if k not in kept and (b.get(k) or b"").decode() in dropped:
                        b.delete(k)
                for k in b.keys(STUB):  # and so do the stubs made of it (named by it)
                    if stub_record(k) in dropped:
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
            # Payloads a backend that keeps rows kept in its records' rows (see
            # `Backend.put_pair`) went with the last of them; on another backend, one not
            # listed above was missing already. One a damaged record names is kept.
            for k, size in gone.items():
                if not b.indexes_records or k in keep:
                    continue
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
                record = load_record(k[len(RECORD) :], raw)
                entries = record_entries(record, ids=self._ids, own=self._own)
                for seen in self._later(record.id):
                    entries += sighting_entries(record.id, seen)
            except IntegrityError:
                continue  # damage: `verify` reports it
            finally:
                if progress is not None and (done % 1000 == 0 or done == len(keys)):
                    progress(done, len(keys))
            add(entries)
            sizes[record.content_hash[:ADDRESS]] = record.size
            indexed += 1
        for k in b.keys(BLOB):
            address = k[len(BLOB) :]
            size = sizes.get(address)
            add([(BLOBS, len(b.get(k) or b"") if size is None else size, address)])
        for k in b.keys(PIN):
            held = load_pin(b.get(k) or b"1")
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
