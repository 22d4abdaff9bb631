"""A store on a Redis server, shared by many workers and machines (the `redis` extra)."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, cast

from ...core.errors import MissingDependency, StoreError
from ..backend import Removal, translated
from ..index import Entry, Row
from ..kv import KeyValueStore
from .scripts import APPEND, DELETE_HOLDING, INDEX, PUT_PAIR, RELEASE, RENEW, SWEEP
from .url import read_url, scrubbed

# gc's lock lives this long unless its holder renews it, which a live holder does every
# fifth of it: a gc that dies holding the lock blocks writers for at most this long.
LOCK_TIMEOUT = 5.0  # seconds
_WAIT = 60.0  # seconds a writer (or another gc) waits for a live gc before giving up


class _RedisBackend:
    ranged_keys = False  # SCAN reads every key: ids have an index of their own
    indexes_records = False
    gc_pause = 0.0  # a batch is one script: the server runs writers' between two
    # A write is several commands, and each may wait for a script: scripts are kept short.
    gc_batch_time = 0.003

    def __init__(self, url: str) -> None:
        try:
            import redis
        except ImportError:
            raise MissingDependency("the Redis store", "redis", "redis") from None
        where = read_url(url)
        server_url, namespace, secrets = where.server_url, where.namespace, where.secrets
        self.location = where.location
        self.failures: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        try:
            self._client = redis.Redis.from_url(server_url)
        except (TypeError, ValueError) as exc:  # a value redis-py cannot read
            said = scrubbed(str(exc), secrets)
            raise StoreError(f"redis store URL {self.location}: {said}") from None
        try:
            self._client.ping()
        except TypeError as exc:  # a parameter this redis-py's connection does not take
            said = scrubbed(str(exc), secrets)
            raise StoreError(f"redis store URL {self.location}: {said}") from None
        except (redis.RedisError, OSError, ValueError) as exc:
            said = scrubbed(str(exc), secrets)
            raise StoreError(f"cannot reach the redis store at {self.location}: {said}") from exc
        self.namespace = _checked(namespace, self.location) + ":"
        self._put_pair = self._client.register_script(PUT_PAIR)
        self._append = self._client.register_script(APPEND)
        self._index = self._client.register_script(INDEX)
        self._area = self.namespace + "ix:"  # index names follow
        self._totals = self.namespace + "ix"
        self._renew = self._client.register_script(RENEW)
        self._release = self._client.register_script(RELEASE)
        self._delete_holding = self._client.register_script(DELETE_HOLDING)
        self._sweep = self._client.register_script(SWEEP)
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
        found = (
            cast(bytes, k).decode()[start:]
            for k in self._client.scan_iter(match=pattern, count=1000)
        )
        return [k for k in found if _own(k)]

    def _entries(self, entries: Sequence[Entry]) -> tuple[list[str], list[Any]]:
        keys = [self._area + name for name, _, _ in entries]
        args: list[Any] = []
        for name, score, member in entries:
            args += [score, member, name]
        return keys, args

    def _waiting(self, run: Any, keys: list[str], args: list[Any]) -> int:
        """Run a script that refuses (-1) while gc holds the lock, until it does not."""
        deadline = time.monotonic() + _WAIT
        while True:
            done = int(cast(int, run(keys=keys, args=args)))
            if done >= 0:
                return done
            if time.monotonic() > deadline:
                raise StoreError(
                    f"redis store at {self.location}: a gc has held the store for over "
                    f"{_WAIT:.0f} s; try again when it has finished"
                )
            time.sleep(0.01)

    @translated("writing")
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
        keys, args = self._entries([*index, *blob_index])
        keys = [self.namespace + blob, self.namespace + record, self._lock_key, self._totals, *keys]
        args = [payload, value, len(index), len(blob_index), *args]
        return self._waiting(self._put_pair, keys, args) == 1

    @translated("writing")
    def append(
        self, key: str, item: bytes, index: Sequence[Entry] = (), requires: str | None = None
    ) -> bool:
        keys, args = self._entries(index)
        required = self.namespace + (key if requires is None else requires)
        keys = [self.namespace + key, self._lock_key, self._totals, required, *keys]
        args = [item, "0" if requires is None else "1", *args]
        return self._waiting(self._append, keys, args) == 1

    @translated("collecting garbage")
    def sweep(
        self, removals: Sequence[Removal], addresses: Sequence[str], tomb: bytes, ids: bool
    ) -> tuple[list[str], list[tuple[str, int]]]:
        args: list[Any] = [self.namespace, tomb, "1" if ids else "0", len(removals)]
        for r in removals:
            args += [r.id, r.sightings, r.pin, len(r.keys), *r.keys, len(r.entries)]
            for name, _, member in r.entries:
                args += [name, member]
            args.append(len(r.registries))
            for triple in r.registries:
                args += triple
        args += [len(addresses), *addresses]
        gone, freed = cast(list[list[bytes]], self._sweep(keys=[], args=args))
        pairs = [(freed[i].decode(), int(freed[i + 1])) for i in range(0, len(freed), 2)]
        return [i.decode() for i in gone], pairs

    @translated("indexing")
    def index(self, add: Sequence[Entry] = (), remove: Sequence[Entry] = ()) -> None:
        holder = self._holder
        token = holder[1] if holder is not None and holder[0] == threading.get_ident() else b""
        keys, args = self._entries(add)
        for name, _, member in remove:  # one score a member: removed whatever it is
            keys.append(self._area + name)
            args += [member, name]
        keys = [self._lock_key, self._totals, *keys]
        if int(cast(int, self._index(keys=keys, args=[token, len(add), *args]))) < 0:
            raise StoreError(
                f"redis store at {self.location}: gc lost its lock (not renewed within "
                f"{self.lock_timeout:g} s) and stopped before changing more; run it again"
            )

    @translated("reading an index")
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
        lowest = "-inf" if low is None else low
        highest = "+inf" if high is None else high
        found = self._client.zrange(
            self._area + name,
            highest if reverse else lowest,
            lowest if reverse else highest,
            desc=reverse,
            byscore=True,
            offset=offset if offset or limit is not None else None,
            num=(-1 if limit is None else limit) if offset or limit is not None else None,
        )
        return [m.decode() for m in cast(list[bytes], found)]

    @translated("reading an index")
    def prefixed(self, name: str, prefix: str) -> list[str]:
        found = self._client.zrangebylex(
            self._area + name, b"[" + prefix.encode(), b"(" + prefix.encode() + b"\xff"
        )
        return [m.decode() for m in cast(list[bytes], found)]

    @translated("reading an index")
    def size(self, name: str) -> tuple[int, int]:
        with self._client.pipeline(transaction=True) as pipe:
            pipe.zcard(self._area + name)
            pipe.hget(self._totals, name)
            members, total = pipe.execute()
        # A float: the sums of times overflow 64 bits (payload sizes are exact).
        return int(members), int(float(total or 0))

    @translated("indexing")
    def drop_indexes(self) -> None:
        for name in self.index_names():
            self._client.delete(self._area + name)
        self._client.delete(self._totals)

    @translated("listing")
    def index_names(self) -> list[str]:
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self._area) + "*"
        start = len(self._area)
        return [
            cast(bytes, k).decode()[start:]
            for k in self._client.scan_iter(match=pattern, count=1000)
        ]

    @translated("reading")
    def items(self, key: str) -> list[bytes]:
        return [
            bytes(i) for i in cast(list[bytes], self._client.lrange(self.namespace + key, 0, -1))
        ]

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """A reindex's section (gc's batches are scripts): a lock on the server that
        writers wait for (up to 60 s). It expires `lock_timeout` seconds (`LOCK_TIMEOUT`,
        5) after its holder last renewed it; a live holder renews it every fifth of that,
        so one that dies holding it blocks writers for at most `lock_timeout`."""
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


# A namespace is the first part of every key, up to its ":". One with a ":" of its own
# would share keys with another ("team" and "team:b": team's listing read team:b's keys,
# and its gc swept them), and glob characters would reach further in SCAN's patterns.
_NOT_IN_NAMESPACE = re.compile(r"[:*?\[\]\\]")


def _checked(namespace: str, location: str) -> str:
    """`namespace` if it keeps its keys apart from every other namespace's; else a
    `StoreError` naming what is wrong with it."""
    bad = _NOT_IN_NAMESPACE.search(namespace)
    if bad is not None:
        raise StoreError(
            f"redis store URL {location}: a namespace cannot contain {bad[0]!r} (nor any "
            "of : * ? [ ] \\): it would reach into other namespaces' keys"
        )
    return namespace


def _own(key: str) -> bool:
    """Whether a key found under the namespace is one of its own: a kind, a ":", then a
    hash or an id (see `store.keys`). The indexes ("ix", "ix:...") and the lock are apart,
    and a key of any other shape (another program's, with more parts) is not ours."""
    kind, colon, rest = key.partition(":")
    return bool(colon) and kind not in ("ix", "lock") and ":" not in rest and rest != "ix"


class RedisStore(KeyValueStore):
    """A `Store` on a Redis server: `open_store("redis://127.0.0.1:6379/0")`.

    Many processes and machines can share it. Keys live under a namespace
    (``?namespace=name`` in the URL, ``addressable`` by default), so several stores can
    share one database; a name with ``:``, ``*``, ``?``, ``[``, ``]`` or ``\\`` would
    reach into another's keys and is refused (`StoreError`). Needs the `redis` extra.

    gc reads the records without holding the store, then removes what it chose in
    batches, each one script that the server runs whole: writers wait for one batch at
    most, and a gc killed between two leaves a consistent store. A reindex holds a lock
    on the server; writers wait for it (up to 60 s, then `StoreError`). The lock expires
    5 s (`LOCK_TIMEOUT`) after its holder last renewed it, and a live holder renews it
    every second: one that dies holding it blocks writers for at most 5 s.
    """

    def __init__(self, url: str = "redis://127.0.0.1:6379/0") -> None:
        super().__init__(_RedisBackend(url))
