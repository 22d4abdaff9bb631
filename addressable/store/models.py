"""What a store hands back besides records: a pin as it is kept, and the reports of
`stats`, `verify` and `gc`. Apart from `store.protocol` because they are pydantic
models, which a command that only lists records does not load."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from .index import USER_PIN


class DamagedRecord(BaseModel):
    """A record that cannot be given back as it was stored, or whose payload cannot."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    content_hash: str | None
    # "corrupt": the payload re-hashes to something else; "missing": the payload is gone;
    # "unreadable": the record is not a record; "altered": the record was changed after
    # it was written (it no longer matches its checksum, its id no longer follows from
    # its tool, args, key and content hash, or its size is not its payload's).
    problem: str
    detail: str


class VerifyReport(BaseModel):
    """What `Store.verify` found: damage names records; orphan blobs are only reclaimable.

    `orphan_blobs` and `orphan_bytes` count payloads no record points to, left by a
    writer killed mid-write (on disk, also payload files whose key was never committed):
    space that `gc` reclaims, not damage.
    """

    model_config = ConfigDict(defer_build=True)

    records: int
    blobs_checked: int
    damaged: list[DamagedRecord]
    orphan_blobs: int
    orphan_bytes: int
    # What is wrong with the indexes and the counts `stats` reads, one line each (an
    # index that lacks records or holds others, one that cannot be read, the database's
    # own check): `reindex` (`addressable verify --repair`) builds them again.
    indexes: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.damaged and not self.indexes


class GcReport(BaseModel):
    """What `Store.gc` removed, and what it kept because it was pinned."""

    model_config = ConfigDict(defer_build=True)

    removed_records: list[str]
    removed_blobs: int
    freed_bytes: int
    kept_pinned: int
    blob_bytes_after: int
    # Of `removed_records`, those removed because their payload was gone (they could
    # never be replayed; the same call made again stores a whole record).
    removed_damaged: list[str] = []


class Pin(BaseModel):
    """Why a record is pinned, and until when. A pin with sessions ends when every one
    of them has ended (`Store.end_session`); one with `until` ends then; one with
    neither (a user pin) lasts until unpinned."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    reason: str = USER_PIN
    sessions: list[str] = []
    until: datetime | None = None
    # On a user pin: the pin it was put over (a stub's), which holds again once the
    # user unpins, so that unpinning never ends a pin the user did not make.
    under: Pin | None = None

    def live(self, now: datetime) -> bool:
        return self.until is None or now < self.until


class StoreStats(BaseModel):
    """Counts and sizes of what a store holds, as its indexes keep them (nothing is
    counted when asked). `blobs` and `blob_bytes` are the payloads stored, each once;
    `sessions` the sessions that saw a record, first or again; `oldest` and `newest`
    the first observations of the oldest and newest records that can be read (a damaged
    one is passed over: `verify` names it)."""

    model_config = ConfigDict(defer_build=True)

    location: str
    records: int
    blobs: int
    blob_bytes: int
    pinned: int
    pinned_by_reason: dict[str, int] = {}  # "user", "stub" (compaction's): pins held
    sessions: int
    by_tool: dict[str, int]
    oldest: datetime | None
    newest: datetime | None
