"""A store that lives in this process only: for tests and short scripts."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ._kv import KeyValueStore


class _MemoryBackend:
    location = "memory://"

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}
        self._lists: dict[str, list[bytes]] = {}
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

    def put_pair(self, blob: str, payload: bytes, record: str, value: bytes) -> bool:
        with self._lock:
            self._data.setdefault(blob, bytes(payload))
            if record in self._data:
                return False
            self._data[record] = bytes(value)
            return True

    def append(self, key: str, item: bytes) -> None:
        with self._lock:
            self._lists.setdefault(key, []).append(bytes(item))

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
