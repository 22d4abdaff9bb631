"""The `Store` protocol: what every store does (`store.models` has the reports it returns)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .index import USER_PIN

if TYPE_CHECKING:
    from ..core.records import Observation, Record
    from .frame import Summary
    from .models import GcReport, Pin, StoreStats, VerifyReport


@runtime_checkable
class Store(Protocol):
    """Where records and their payloads live.

    Payloads are blobs addressed by their blake3 hash and stored once; a blob is written
    before (or atomically with) the record that points to it; records never change once
    written; every blob read re-hashes and raises `IntegrityError` on a mismatch.
    """

    @property
    def location(self) -> str:
        """Where the store is, as a URL `open_store` accepts."""
        ...

    def put(self, record: Record, payload: bytes) -> bool:
        """Store a record and its payload; True if new, False if the id was known (the
        observation is then appended to the record's list instead)."""
        ...

    def get(self, record_id: str) -> Record:
        """The record with this full id; `NotFound`, or `Expired` if garbage-collected."""
        ...

    def resolve(self, text: str) -> str:
        """The full id for an id or unique prefix; `BadId`, `AmbiguousId`, `NotFound`."""
        ...

    def read(self, record: Record) -> bytes:
        """The payload of `record`, re-hashed; `IntegrityError` if it is damaged or gone."""
        ...

    def add_observation(self, record_id: str, observation: Observation) -> None:
        """Append a later sighting to an existing record's list."""
        ...

    def observations(self, record_id: str) -> list[Observation]:
        """Every sighting of the record, oldest first, the first being its own."""
        ...

    def last_seen(self, record: Record) -> datetime:
        """When the record was last observed: what staleness and gc go by."""
        ...

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
        """Records matching every filter given, oldest first (by when they were first
        observed, then id), or newest first; at most `limit` of them.

        A record that cannot be given back as written raises `IntegrityError`; with a
        `damaged` list, its id is added there and the listing goes on without it.

        `session`: seen in that session (first or later); `since` (timezone-aware,
        `ArgumentError` otherwise): last seen then or later; `refers_to`: whose meta
        names that id as one of its values (a verification its action, a search hit its
        search). Found through indexes: the cost follows what matches, not the size of
        the store (listing every record reads every record)."""
        ...

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
        """What `records` gives, as much of each record as a listing shows: read off its
        stored JSON, checked against its checksum, without building the record."""
        ...

    def pin(
        self,
        record_id: str,
        *,
        reason: str = USER_PIN,
        session: str | None = None,
        until: datetime | None = None,
    ) -> None:
        """Keep the record through every gc: a user pin (the default) until unpinned;
        another (compaction pins for "stub") until `until` or until `session` has ended,
        whichever comes first. Pinning again, for the same reason or over a live pin of
        another, adds the session and keeps the later end; a user pin is never weakened
        by another: a pin made over a user pin waits under it."""
        ...

    def unpin(self, record_id: str) -> None:
        """Remove the record's pin; a user pin that was put over another (a stub's)
        leaves that one in force."""
        ...

    def pin_info(self, record_id: str) -> Pin | None:
        """The record's pin, ended or not; None if it has none."""
        ...

    def is_pinned(self, record_id: str, *, now: datetime | None = None) -> bool:
        """Whether the record has a pin that has not ended at `now` (default: now)."""
        ...

    def end_session(self, session: str) -> int:
        """Declare `session` ended: the pins it made for it alone end. How many ended."""
        ...

    def set_tokens(self, content_hash: str, tokens: int) -> None:
        """Remember the token count of a payload, so that it is counted once."""
        ...

    def mark_imported(self, record_id: str) -> None:
        """Remember that the record came in a bundle: its call was chosen elsewhere, so
        it is not run again unless the user says so. It goes with the record."""
        ...

    def imported(self, record_id: str) -> bool:
        """Whether the record came in a bundle (`mark_imported`)."""
        ...

    def set_shown(self, text_hash: str, record_id: str) -> None:
        """Remember that the text with this hash was shown to a model for the record, so
        that a compaction in any process can point a stub at the record."""
        ...

    def shown(self, text_hash: str) -> str | None:
        """The record a shown text (by its hash) stood for, if any."""
        ...

    def set_stub(self, mark: str, record_id: str, stub: bytes) -> None:
        """Remember a stub compaction made of the record, under `mark` (a hash of the
        result and its place in the conversation), so that a compaction in any process
        gives the same bytes; it goes with the record."""
        ...

    def stub(self, mark: str, record_id: str) -> bytes | None:
        """The stub of the record remembered under `mark`, if any."""
        ...

    def gc(
        self,
        *,
        max_age: timedelta | None = None,
        max_bytes: int | None = None,
        now: datetime | None = None,
    ) -> GcReport:
        """Remove unpinned records last seen longer than `max_age` ago, then the oldest
        unpinned ones until payloads take at most `max_bytes`, then unreferenced blobs.

        Both limits must be positive (`ArgumentError` otherwise, as for a `now` without a
        time zone). Unpinned records whose payload is gone go too (`removed_damaged`).
        Records that cannot be read are left, with their payloads, for `verify` to
        report; so are records whose payload no longer matches its hash (gc does not
        re-hash every payload: `verify` names them, `remove` removes them)."""
        ...

    def remove(self, record_ids: Sequence[str]) -> GcReport:
        """Remove these records (full ids), pinned or not, with their sightings, stubs
        and the payloads no other record points to; no tombstone is left, so they are
        then not found. `NotFound` (or `Expired`), and nothing removed, if one of them
        is not there."""
        ...

    def verify(self) -> VerifyReport:
        """Re-hash every blob a record points to, check every record against its
        checksum and (for results) its id, and name the damaged records; count the
        payloads no record points to."""
        ...

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Build every index, and the counts kept with them, again from the records,
        pins and payloads (what `verify` names in `indexes` is then mended); the
        number of records indexed."""
        ...

    def stats(self) -> StoreStats: ...

    def close(self) -> None: ...
