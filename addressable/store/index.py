"""The indexes a `KeyValueStore` keeps beside its records: their names and entries.

An index holds (score, member) pairs in (score, member) order; scores are integers.
The store adds a record's entries in the same atomic step as the record, a sighting's
with the sighting, and gc removes every entry it can derive from a record with the
record. Adding a pair that is there changes nothing. A member may be added with
several scores (a record seen at several times): a backend may keep them all (disk) or
only the lowest (Redis, memory), so `members` may give a member more than once and the
store reads nothing more into it. An index whose name starts with "#" has one score a
member, and the backend keeps its size (members, and the sum of their scores) as it
changes, so that `stats` counts nothing.

Indexes (member: the record id unless said otherwise; score: when the record was first
observed, in microseconds since the epoch, so that an index is in the order `records`
gives: observed_at, then id):

    #time             every record
    #tool:<tool>      the tool's records
    #tools            member: a tool name with records; score 0
    #sessions         member: a session name with records; score 0
    #pins             pinned ids; score 0
    #pins:<reason>    ids pinned for a reason other than "user" (a stub's); score 0
    pin-reasons       member: such a reason; score 0
    #blobs            member: a payload's address; score: its size in bytes
    seen              records seen again, once a later sighting; score: minus its time
                      (the lowest is the latest); with `#time`, for `since`
    ids               every record; score 0, for ids by prefix (not kept on a backend
                      whose keys are ranged: its own keys serve)
    tombs             ids removed by gc; score 0 (likewise)
    key:<key>         the records of an addressable key
    payload:<address> the records whose payload has that address: gc removes a payload
                      once this is empty, in the step that empties it
    session:<name>    the records seen in the session, once a sighting in it (the
                      record's own, or a later one); score: the sighting's time
    ref:<id>          records whose meta names the id as one of its values (a
                      verification names its action, a search hit the search)
    indexes           member: the version of this layout, once every record is indexed

A backend may keep a record's `Row` (its time, tool, key, session and payload address)
in the record's own row instead (the disk store does: one row a write): it then answers
`#time`, `#tool:`, `key:`, `payload:` and the record's own `session:` entry from those
rows, keeps
their sizes and the `#tools` and `#sessions` registries itself, and the store gives it
only the other entries (`record_entries(own=False)`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ..core.records import Observation, Record

Entry = tuple[str, int, str]
"""One pair of an index: (index name, score, member)."""

COUNTED = "#"  # names that start with it have one score a member and a kept size
TIME, BLOBS, PINS, TOOLS, SESSIONS = "#time", "#blobs", "#pins", "#tools", "#sessions"
TOOL = "#tool:"
PINS_FOR, PIN_REASONS = "#pins:", "pin-reasons"
USER_PIN = "user"
"""The reason of a pin made by hand (`addressable pin ID`): it lasts until unpinned."""
SEEN, IDS, TOMBS, INDEXES = "seen", "ids", "tombs", "indexes"
KEY, SESSION, REF, PAYLOAD = "key:", "session:", "ref:", "payload:"
VERSION = "2"  # of the layout above: a store indexed under another is indexed again

ADDRESS = 32  # hex characters of a payload's digest that address it (its first 128 bits)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_ID = re.compile(r"[0-9a-f]{16}")


def micros(when: datetime) -> int:
    """An aware time as whole microseconds since the epoch (exact: a datetime's own
    resolution, and within the 53 bits a Redis score keeps exactly until 2255)."""
    return (when - _EPOCH) // _MICROSECOND


def refs(record: Record) -> list[str]:
    """The ids a record's meta names (top-level values that are ids), itself excepted."""
    if not record.meta:
        return []
    found = {
        v
        for v in record.meta.values()
        if isinstance(v, str) and len(v) == 16 and v != record.id and _ID.fullmatch(v)
    }
    return sorted(found)


class Row(NamedTuple):
    """What a record is found by, for a backend that keeps it in the record's own row
    instead of in index entries (`#time`, `#tool:`, `key:`, the record's own
    `session:`, and the `#tools` and `#sessions` registries)."""

    at: int  # micros(observed_at)
    tool: str
    key: str | None
    session: str | None
    address: str  # of its payload


def row_of(record: Record, at: int | None = None) -> Row:
    """The record's `Row`; `at`: `micros(record.observed_at)`, when known already."""
    return Row(
        micros(record.observed_at) if at is None else at,
        record.tool,
        record.key,
        record.session,
        record.content_hash[:ADDRESS],
    )


def record_entries(
    record: Record, *, ids: bool = True, own: bool = True, at: int | None = None
) -> list[Entry]:
    """What a new record adds to the indexes (`ids`: to `ids` too; `own`: those its
    `Row` gives too, for a backend that does not keep rows; `at`: as in `row_of`)."""
    rid = record.id
    if at is None:
        at = micros(record.observed_at)
    if not own:
        return [(REF + ref, at, rid) for ref in refs(record)]
    entries: list[Entry] = [
        (TIME, at, rid),
        (TOOLS, 0, record.tool),
        (TOOL + record.tool, at, rid),
        (PAYLOAD + record.content_hash[:ADDRESS], at, rid),
    ]
    if ids:
        entries.append((IDS, 0, rid))
    if record.key is not None:
        entries.append((KEY + record.key, at, rid))
    if record.session is not None:
        entries += [(SESSIONS, 0, record.session), (SESSION + record.session, at, rid)]
    entries += [(REF + ref, at, rid) for ref in refs(record)]
    return entries


def sighting_entries(record_id: str, seen: Observation) -> list[Entry]:
    """What a later sighting of a record adds: when it was seen, and in which session."""
    at = micros(seen.at)
    entries: list[Entry] = [(SEEN, -at, record_id)]
    if seen.session is not None:
        entries += [(SESSIONS, 0, seen.session), (SESSION + seen.session, at, record_id)]
    return entries


def all_entries(
    record: Record, later: Iterable[Observation], *, ids: bool = True, own: bool = True
) -> list[Entry]:
    """Every entry of a record and its later sightings, but those of the `#tools` and
    `#sessions` registries (which other records may share): what gc removes."""
    entries = record_entries(record, ids=ids, own=own)
    for seen in later:
        entries += sighting_entries(record.id, seen)
    return [e for e in entries if e[0] not in (TOOLS, SESSIONS)]
