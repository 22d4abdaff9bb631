"""The records a store keeps parsed, by the bytes they were parsed from.

A replay reads a record's row every time (the store is the truth), but where the row's
bytes and token count are those a record was parsed from before, compared whole, it
takes that record rather than checking a checksum and parsing again. Readers then share
one record, which is why a record's args and meta refuse changes (`core.frozen`).

What is kept is bounded: at most `COUNT` records, none stored in more than `LARGEST`
bytes and `TOTAL` bytes in all (a parsed record takes from two to about 25 times its
stored bytes, the most for args of many empty lists), the oldest going first.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pydantic_core import TzInfo

if TYPE_CHECKING:
    from ..core.records import Record

COUNT = 1024
LARGEST = 16 << 10
TOTAL = 512 << 10

# A kept record: the stored bytes and token count it was parsed from, the record, and
# its content hash as bytes (None if that is not a hash: the payload check then fails).
Parsed = tuple[bytes, bytes | None, "Record", bytes | None]

_UTC = TzInfo(0)


class ParsedRecords:
    """Records by id, with what they were parsed from (see the module)."""

    def __init__(self) -> None:
        self._kept: dict[str, Parsed] = {}  # oldest first
        self._bytes = 0
        self._lock = threading.Lock()  # for changes; a lookup takes none

    def get(self, record_id: str, value: bytes, tokens: bytes | None) -> Parsed | None:
        """The record kept for these stored bytes and token count, if they are the same."""
        known = self._kept.get(record_id)
        if known is not None and known[0] == value and known[1] == tokens:
            return known
        return None

    def keep(self, record_id: str, value: bytes, tokens: bytes | None, record: Record) -> Parsed:
        """Keep `record`, parsed from `value` and `tokens`, if it fits the bounds."""
        try:
            digest: bytes | None = bytes.fromhex(record.content_hash)
        except ValueError:
            digest = None
        if digest is not None and digest.hex() != record.content_hash:
            digest = None  # upper case or spaced: not a hash as written, and refused so
        made = (value, tokens, record, digest)
        if len(value) > LARGEST:
            return made
        with self._lock:
            kept = self._kept
            old = kept.pop(record_id, None)
            if old is not None:
                self._bytes -= len(old[0])
            while kept and (len(kept) >= COUNT or self._bytes + len(value) > TOTAL):
                self._bytes -= len(kept.pop(next(iter(kept)))[0])
            kept[record_id] = made
            self._bytes += len(value)
        return made

    def keep_written(self, record: Record, value: bytes, tokens: bytes | None) -> None:
        """Keep a record the recorder's one-pass writer made and stored as `value`, as a
        parse of `value` gives it: the fields the stored JSON holds (those not None) as
        the fields set, and the time in pydantic's own time zone of its offset (a
        `ZoneInfo` would move wall-clock arithmetic across a change of offset). Its
        args and meta are frozen already."""
        fields = dict(record.__dict__)
        at: datetime = fields["observed_at"]
        offset = at.utcoffset()
        if offset is None:
            return
        fields["observed_at"] = at.astimezone(_zone(offset))  # the same offset: no shift
        given = {name for name, field in fields.items() if field is not None}
        from ..core.records import Record, assembled  # loaded already: a record was written

        self.keep(record.id, value, tokens, assembled(Record, fields, given))

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._bytes = 0


def _zone(offset: timedelta) -> TzInfo:
    return _UTC if not offset else TzInfo(int(offset.total_seconds()))
