"""A store that lives in this process only: for tests and short scripts."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .index import Entry, Row
from .kv import KeyValueStore


class _MemoryBackend:
    location = "memory://"
    ranged_keys = False
    indexes_records = False
    gc_pause = 0.0  # one lock, in one process: no writer polls for it
    gc_batch_time = 0.01

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}
        self._lists: dict[str, list[bytes]] = {}
        self._index: dict[str, dict[str, int]] = {}  # name -> member -> score
        self._totals: dict[str, int] = {}  # name -> sum of its scores
        self._lock = threading.RLock()

    def get(self, key: str) -> bytes | None:
        return self._data.get(key)

    def set(self, key: str, value: bytes) -> None:
        with self._lock:
            self._data[key] = bytes(value)

    def delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)
            self._lists.pop(key, None)

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
        with self._lock:
            if blob not in self._data:
                self._data[blob] = bytes(payload)
                self._add(blob_index)
            if record in self._data:
                return False
            self._data[record] = bytes(value)
            self._add(index)
            return True

    def append(
        self, key: str, item: bytes, index: Sequence[Entry] = (), requires: str | None = None
    ) -> bool:
        with self._lock:
            if requires is not None and requires not in self._data:
                return False
            self._lists.setdefault(key, []).append(bytes(item))
            self._add(index)
        return True

    def index(self, add: Sequence[Entry] = (), remove: Sequence[Entry] = ()) -> None:
        # One score a member, the lowest, as on Redis; removing ignores the score.
        with self._lock:
            self._add(add)
            for name, _, member in remove:
                scores = self._index.get(name)
                if scores is not None and member in scores:
                    self._totals[name] -= scores.pop(member)
                    if not scores:
                        del self._index[name], self._totals[name]

    def _add(self, entries: Sequence[Entry]) -> None:
        for name, score, member in entries:
            scores = self._index.setdefault(name, {})
            old = scores.get(member)
            if old is None or score < old:
                scores[member] = score
                self._totals[name] = self._totals.get(name, 0) + score - (old or 0)

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
        # Sorted when asked: a store for tests and short scripts, kept simple.
        with self._lock:
            items = sorted(
                (score, member)
                for member, score in self._index.get(name, {}).items()
                if (low is None or score >= low) and (high is None or score <= high)
            )
        if reverse:
            items.reverse()
        end = None if limit is None else offset + limit
        return [member for _, member in items[offset:end]]

    def prefixed(self, name: str, prefix: str) -> list[str]:
        with self._lock:
            return sorted(m for m in self._index.get(name, {}) if m.startswith(prefix))

    def size(self, name: str) -> tuple[int, int]:
        with self._lock:
            return len(self._index.get(name, {})), self._totals.get(name, 0)

    def drop_indexes(self) -> None:
        with self._lock:
            self._index.clear()
            self._totals.clear()

    def index_names(self) -> list[str]:
        with self._lock:
            return list(self._index)

    def items(self, key: str) -> list[bytes]:
        with self._lock:
            return list(self._lists.get(key, ()))

    def contains(self, key: str) -> bool:
        return key in self._data

    def keys(self, prefix: str) -> list[str]:
        with self._lock:
            return [k for k in self._data if k.startswith(prefix)]

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._lock:
            yield

    def close(self) -> None:
        pass


class MemoryStore(KeyValueStore):
    """An in-process `Store`; gone when the process ends. `open_store("memory://")`."""

    def __init__(self) -> None:
        super().__init__(_MemoryBackend())
