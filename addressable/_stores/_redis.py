"""A store on a Redis server, shared by many workers and machines (the `redis` extra)."""

from __future__ import annotations

import os
import re
import threading
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

# gc's lock lives this long unless its holder renews it, which a live holder does every
# fifth of it: a gc that dies holding the lock blocks writers for at most this long.
LOCK_TIMEOUT = 5.0  # seconds
_WAIT = 60.0  # seconds a writer (or another gc) waits for a live gc before giving up

# Renews the lock, or deletes it, or deletes a key under it: only while it is ours.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_DELETE_HOLDING = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
return redis.call('DEL', KEYS[2])
"""


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
        self._renew = self._client.register_script(_RENEW)
        self._release = self._client.register_script(_RELEASE)
        self._delete_holding = self._client.register_script(_DELETE_HOLDING)
        self._lock_key = self.namespace + "lock:exclusive"
        self.lock_timeout = LOCK_TIMEOUT
        self._holder: tuple[int, bytes] | None = None  # (thread, token) inside `exclusive`

    @translated("reading")
    def get(self, key: str) -> bytes | None:
        value = self._client.get(self.namespace + key)
        return None if value is None else bytes(cast(bytes, value))

    @translated("writing")
    def set(self, key: str, value: bytes) -> None:
        self._client.set(self.namespace + key, value)

    @translated("deleting")
    def delete(self, key: str) -> None:
        holder = self._holder
        if holder is None or holder[0] != threading.get_ident():
            self._client.delete(self.namespace + key)
            return
        # gc sweeping: only while the lock is still its own. A gc stalled past the lock's
        # timeout may find writers at work again, and must not sweep after them.
        keys = [self._lock_key, self.namespace + key]
        if int(cast(int, self._delete_holding(keys=keys, args=[holder[1]]))) < 0:
            raise StoreError(
                f"redis store at {self.location}: gc lost its lock (not renewed within "
                f"{self.lock_timeout:g} s) and stopped before deleting more; run it again"
            )

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
        """gc's section: a lock on the server that writers wait for (up to 60 s). It
        expires `lock_timeout` seconds (`LOCK_TIMEOUT`, 5) after its holder last renewed
        it; a live holder renews it every fifth of that, so a gc that dies holding it
        blocks writers for at most `lock_timeout`."""
        token = os.urandom(16).hex().encode()
        timeout_ms = max(1, int(self.lock_timeout * 1000))
        deadline = time.monotonic() + _WAIT
        try:
            while not self._client.set(self._lock_key, token, nx=True, px=timeout_ms):
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"redis store at {self.location}: another gc has held the store for "
                        f"over {_WAIT:.0f} s; try again later"
                    )
                time.sleep(0.05)
        except self.failures as exc:
            raise StoreError(f"redis store at {self.location}: locking failed: {exc}") from exc
        stop = threading.Event()
        renewer = threading.Thread(
            target=self._keep, args=(token, timeout_ms, stop), name="addressable-gc-lock"
        )
        renewer.daemon = True
        renewer.start()
        self._holder = (threading.get_ident(), token)
        try:
            yield
        finally:
            self._holder = None
            stop.set()
            renewer.join()
            with suppress(*self.failures):  # expired meanwhile: nothing left to release
                self._release(keys=[self._lock_key], args=[token])

    def _keep(self, token: bytes, timeout_ms: int, stop: threading.Event) -> None:
        """Renew the lock until `stop`, or until it is no longer ours."""
        while not stop.wait(self.lock_timeout / 5):
            try:
                if not self._renew(keys=[self._lock_key], args=[token, timeout_ms]):
                    return  # expired and perhaps taken: deletes under it now refuse
            except self.failures:
                continue  # a passing failure: the next renewal may get through

    def close(self) -> None:
        self._client.close()


class RedisStore(KeyValueStore):
    """A `Store` on a Redis server: `open_store("redis://127.0.0.1:6379/0")`.

    Many processes and machines can share it. Keys live under a namespace
    (``?namespace=name`` in the URL, ``addressable`` by default), so several stores can
    share one database. Needs the `redis` extra.

    gc holds a lock on the server while it marks and sweeps; writers wait for it (up to
    60 s, then `StoreError`). The lock expires 5 s (`LOCK_TIMEOUT`) after its holder last
    renewed it, and a live gc renews it every second: a gc that dies holding it blocks
    writers for at most 5 s.
    """

    def __init__(self, url: str = "redis://127.0.0.1:6379/0") -> None:
        super().__init__(_RedisBackend(url))
