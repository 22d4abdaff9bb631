"""Where a `KeyValueStore` keeps each thing: the prefixes of its keys.

Key layout:
    b:<hash>   payload bytes (content-addressed: stored once), by the hash's first 128 bits
    r:<id>     the record: a checksum of its JSON, a newline, the JSON; immutable
    o:<id>     later observations of the same id, a list, append-only
    p:<id>     pin marker
    t:<hash>   token count of a payload, keyed like its blob
    x:<id>     tombstone of a garbage-collected record
    i:<id>     the record came in a bundle
    s:<hash>   the record a text shown to a model stood for, by the text's hash
    m:<id>-<hash>  a stub compaction made of the record, by the hash of its place: the
               stub as JSON (gc finds a record's by their names alone)

and the indexes, apart from the keys (see `store.index` for their names and entries).
"""

from __future__ import annotations

from ..core.ids import ID_LENGTH, SHORT_ID, content_hash
from .index import ADDRESS

BLOB, RECORD, OBSERVED, PIN, TOKENS, TOMBSTONE = "b:", "r:", "o:", "p:", "t:", "x:"
SHOWN = "s:"
STUB = "m:"
IMPORTED = "i:"


# Blobs are keyed by the first 128 bits of their blake3 hash (`ADDRESS` hex characters):
# half the key length makes every write measurably cheaper, 128 bits leave collisions out
# of reach, and every read re-hashes against the full 256-bit digest in the record, so
# none could go unnoticed.
def blob_key(digest: str) -> str:
    """The key of a payload with this blake3 hex digest."""
    return BLOB + digest[:ADDRESS]


def tokens_key(digest: str) -> str:
    """The key of the token count of a payload with this blake3 hex digest."""
    return TOKENS + digest[:ADDRESS]


def stub_key(record_id: str, mark: str) -> str:
    """The key of a stub made of the record `record_id`, at the place `mark` hashes."""
    return f"{STUB}{record_id}-{mark[:ADDRESS]}"


def stub_record(key: str) -> str:
    """The record id a stub's key names."""
    return key[len(STUB) :].partition("-")[0]


def prefix_mark(prefix: str) -> str:
    """The hash under which the store remembers the record a stub's id prefix names."""
    return content_hash(f"stub id {prefix}".encode())


def prefix_marks(record_id: str) -> set[str]:
    """The keys under which stubs' prefixes of `record_id` may be remembered: these stay
    when gc removes the record, so that a stub's prefix still names it (expired)."""
    return {SHOWN + prefix_mark(record_id[:n])[:ADDRESS] for n in range(SHORT_ID, ID_LENGTH)}
