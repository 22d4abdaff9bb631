"""A store on a Redis server, shared by many workers and machines (the `redis` extra)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .._errors import MissingDependency, StoreError
from ._kv import KeyValueStore, translated

# Writes the payload unless present, then the record unless present, in one step that
# nothing else on the server interleaves with. It refuses (-1) while gc holds the
# exclusive lock, so that gc never sweeps a blob a new record has just come to rely on.
_PUT_PAIR = """
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'NX')
if redis.call('SET', KEYS[2], ARGV[2], 'NX') then return 1 end
return 0
"""

_LOCK_TTL = 600.0  # seconds: a gc that dies holding the lock frees it after this
_WAIT = 60.0  # seconds a writer waits for a gc to finish before giving up


class _RedisBackend:
    def __init__(self, url: str) -> None:
        try:
            import redis
        except ImportError:
            raise MissingDependency("the Redis store", "redis", "redis") from None
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        self.namespace = query.pop("namespace", "addressable") + ":"
        server_url = urlunsplit(parts._replace(query=urlencode(query)))
        # The location is shown and logged: never with the password in it.
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        shown = {"namespace": self.namespace[:-1]} if self.namespace != "addressable:" else {}
        self.location = urlunsplit(parts._replace(netloc=netloc, query=urlencode(shown)))
        self.failures: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        try:
            self._client = redis.Redis.from_url(server_url)
            self._client.ping()
        except (redis.RedisError, OSError, ValueError) as exc:
            raise StoreError(f"cannot reach the redis store at {self.location}: {exc}") from exc
        self._put_pair = self._client.register_script(_PUT_PAIR)
        self._lock_key = self.namespace + "lock:exclusive"

    @translated("reading")
    def get(self, key: str) -> bytes | None:
        value = self._client.get(self.namespace + key)
        return None if value is None else bytes(cast(bytes, value))

    @translated("writing")
    def set(self, key: str, value: bytes) -> None:
        self._client.set(self.namespace + key, value)

    @translated("deleting")
    def delete(self, key: str) -> None:
        self._client.delete(self.namespace + key)

    @translated("reading")
    def contains(self, key: str) -> bool:
        return bool(self._client.exists(self.namespace + key))

    @translated("listing")
    def keys(self, prefix: str) -> list[str]:
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self.namespace + prefix) + "*"
        start = len(self.namespace)
        return [
            cast(bytes, k).decode()[start:]
            for k in self._client.scan_iter(match=pattern, count=1000)
        ]

    @translated("writing")
    def put_pair(self, blob: str, payload: bytes, record: str, value: bytes) -> bool:
        keys = [self.namespace + blob, self.namespace + record, self._lock_key]
        deadline = time.monotonic() + _WAIT
        while True:
            done = int(cast(int, self._put_pair(keys=keys, args=[payload, value])))
            if done >= 0:
                return done == 1
            if time.monotonic() > deadline:
                raise StoreError(
                    f"redis store at {self.location}: a gc has held the store for over "
                    f"{_WAIT:.0f} s; try again when it has finished"
                )
            time.sleep(0.01)

    @translated("writing")
    def append(self, key: str, item: bytes) -> None:
        self._client.rpush(self.namespace + key, item)

    @translated("reading")
    def items(self, key: str) -> list[bytes]:
        return [
            bytes(i) for i in cast(list[bytes], self._client.lrange(self.namespace + key, 0, -1))
        ]

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        lock = self._client.lock(self._lock_key, timeout=_LOCK_TTL, blocking_timeout=_WAIT)
        try:
            acquired = lock.acquire()
        except self.failures as exc:
            raise StoreError(f"redis store at {self.location}: locking failed: {exc}") from exc
        if not acquired:
            raise StoreError(
                f"redis store at {self.location}: another gc holds the store; try again later"
            )
        try:
            yield
        finally:
            with suppress(*self.failures):  # expired meanwhile: nothing left to release
                lock.release()

    def close(self) -> None:
        self._client.close()


class RedisStore(KeyValueStore):
    """A `Store` on a Redis server: `open_store("redis://127.0.0.1:6379/0")`.

    Many processes and machines can share it. Keys live under a namespace
    (``?namespace=name`` in the URL, ``addressable`` by default), so several stores can
    share one database. Needs the `redis` extra.
    """

    def __init__(self, url: str = "redis://127.0.0.1:6379/0") -> None:
        super().__init__(_RedisBackend(url))
