"""The one implementation of `Store`, over any small key-value backend.

A backend (`store.backend`) stores bytes under string keys, keeps ordered indexes and
offers a section that excludes writers. Everything else is the store's, so the disk,
memory and Redis stores differ only in where the bytes go: the layout of keys
(`store.keys`) and indexes (`store.index`), how a record is stored (`store.codec`), reads
(`store.reading`), pins (`store.pins`), verify, gc and reindex (`store.upkeep`); and here, opening
(a store written before the indexes existed is indexed then, once), writing, and
`stats`, which reads the sizes the indexes keep rather than counting.
"""

from __future__ import annotations

from datetime import datetime

from ..core.records import Observation, Record
from .backend import Backend
from .codec import dump_record
from .index import (
    ADDRESS,
    BLOBS,
    INDEXES,
    PIN_REASONS,
    PINS,
    PINS_FOR,
    SESSIONS,
    TIME,
    TOOL,
    TOOLS,
    VERSION,
    Entry,
    micros,
    record_entries,
    row_of,
    sighting_entries,
)
from .keys import OBSERVED, RECORD, SHOWN, blob_key, stub_key, tokens_key
from .protocol import USER_PIN, StoreStats
from .upkeep import Upkeep


class KeyValueStore(Upkeep):
    """A `Store` over a `Backend`; see `store.keys` for the key layout."""

    def __init__(self, backend: Backend) -> None:
        super().__init__(backend)
        if backend.members(INDEXES) != [VERSION]:
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

    # -- writing ---------------------------------------------------------------------

    def put(self, record: Record, payload: bytes, value: bytes | None = None) -> bool:
        """`Store.put`; `value`: the record as `dump_record` gives it, when made already
        (by the recorder's one-pass writer, `_codec.new_record`)."""
        b = self._backend
        made = value is not None
        if value is None:
            value = dump_record(record)
        digest = record.content_hash
        at = micros(record.observed_at)
        entries: list[Entry] = []  # none where the backend keeps rows, unless meta names ids
        if self._own or record.meta:
            entries = record_entries(record, ids=self._ids, own=self._own, at=at)
        # The blob goes in first, with the record and its index entries in the same
        # atomic step: a record never points at bytes not yet stored, and is never
        # stored unindexed, even if the writer is killed.
        if not b.put_pair(
            blob_key(digest),
            payload,
            RECORD + record.id,
            value,
            entries,
            [(BLOBS, len(payload), digest[:ADDRESS])],
            row_of(record, at),
        ):
            observation = Observation(at=record.observed_at, session=record.session)
            b.append(
                OBSERVED + record.id,
                observation.model_dump_json().encode(),
                sighting_entries(record.id, observation),
            )
            return False
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
        self._backend.append(
            OBSERVED + record_id,
            observation.model_dump_json().encode(),
            sighting_entries(record_id, observation),
        )

    def set_tokens(self, content_hash: str, tokens: int) -> None:
        self._backend.set(tokens_key(content_hash), str(tokens).encode())

    def set_shown(self, text_hash: str, record_id: str) -> None:
        self._backend.set(SHOWN + text_hash[:ADDRESS], record_id.encode())

    def shown(self, text_hash: str) -> str | None:
        found = self._backend.get(SHOWN + text_hash[:ADDRESS])
        return found.decode() if found is not None else None

    def set_stub(self, mark: str, record_id: str, stub: bytes) -> None:
        self._backend.set(stub_key(record_id, mark), stub)

    def stub(self, mark: str, record_id: str) -> bytes | None:
        return self._backend.get(stub_key(record_id, mark))

    # -- counting --------------------------------------------------------------------

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
        """When the oldest (or newest) record that can be read was observed; None for an
        empty store. A damaged one is passed over: `verify` names it, `stats` goes on."""
        offset = 0
        while ids := self._backend.members(TIME, reverse=newest, offset=offset, limit=8):
            # One removed meanwhile is skipped, and so is a damaged one.
            for record in self._load(ids, damaged=[]):
                return record.observed_at
            offset += len(ids)
        return None
