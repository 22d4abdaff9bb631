"""What a `KeyValueStore` needs of where its bytes live: the `Backend` protocol.

A backend stores bytes under string keys, lists keys by prefix, writes a payload and its
record in one atomic step, appends to lists, keeps ordered indexes (written in the same
atomic step as what they index), and offers a section that excludes writers (for gc).
The backends' failures become `StoreError` through `translated`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol, TypeVar, cast, runtime_checkable

from ..core.errors import StoreError
from .index import Entry, Row


class Backend(Protocol):
    """Bytes under string keys: the part of a store that differs by where data lives."""

    location: str
    # Whether `keys(prefix)` reads only the keys with the prefix (they are kept in
    # order): then ids are resolved from the keys of records, with no index of their own.
    ranged_keys: bool
    # Whether it keeps each record's `Row` in the record's own row (see `store.index`): then
    # it is given only the other index entries.
    indexes_records: bool
    # Seconds gc waits between the batches it removes records in, so that writers
    # waiting for the store get it between two.
    gc_pause: float
    # Seconds gc's batches are sized to take: what a writer may wait for.
    gc_batch_time: float

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

    def append(
        self, key: str, item: bytes, index: Sequence[Entry] = (), requires: str | None = None
    ) -> bool:
        """Append to the list under `key` and add `index` to the indexes, in one step
        atomic with respect to other appends; no `exclusive` section interleaves. With
        `requires`, only while that key exists (False, and nothing written, if not): a
        sighting never lands on a record gc has just removed."""
        ...

    # An index holds (score, member) pairs of a name, in (score, member) order; see
    # `store.index` for what the store keeps in them. Indexes live apart from the keys:
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

    def index_names(self) -> list[str]:
        """The names of the indexes that hold entries given to `index` (on a backend
        that keeps rows, those its rows answer are not listed)."""
        ...

    def items(self, key: str) -> list[bytes]:
        """The list under `key`, oldest first; empty if there is none."""
        ...

    def exclusive(self) -> AbstractContextManager[None]:
        """A section that no `put_pair` interleaves with: a batch of gc's, a reindex."""
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


@runtime_checkable
class Sweeps(Protocol):
    """A backend that runs a batch of gc's removals itself, in one atomic step (a
    script on a server), rather than as separate calls inside `exclusive`."""

    def sweep(
        self, removals: Sequence[Removal], addresses: Sequence[str], tomb: bytes, ids: bool
    ) -> tuple[list[str], list[tuple[str, int]]]:
        """What `store.kv`'s `sweep` does, and gives back."""
        ...


@runtime_checkable
class ChecksItself(Protocol):
    """A backend with structures of its own beside what the store gives it (a
    database's indexes over its tables), that it can check and build again."""

    def check(self) -> list[str]:
        """What is wrong with them, one line each; none when sound."""
        ...

    def rebuild(self) -> None:
        """Build them again from what they index. Called only inside `exclusive`."""
        ...

    def mend(self) -> list[str]:
        """Make anew, outside `exclusive`, those `rebuild` cannot build again in place
        (damaged past it); the names of those mended."""
        ...


class Removal(NamedTuple):
    """A record gc is to remove, as it was when gc read it."""

    id: str
    sightings: int  # its later sightings then: one seen again since is kept
    pin: bytes  # its ended pin then, which goes with it (empty: none); one pinned since is kept
    keys: list[str]  # the other keys that go with it (sightings, stubs, shown texts)
    entries: list[Entry]  # its index entries
    # (index, registry, member): the member leaves the registry once the index is empty
    registries: list[tuple[str, str, str]]
    address: str  # of its payload


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
    """The `StoreError` for a failure of a backend's library: which store, doing what."""
    kind = location.split(":", 1)[0]
    return StoreError(f"{kind} store at {location}: {what} failed: {exc}")
