"""gc's lock: a gc that dies holding it frees the store within the lock's own timeout.

A real process takes the lock and is killed with SIGKILL (no cleanup runs); a writer in
the test must then complete, blocked no longer than the timeout allows. Bounds are ratios
to the timeout, generous for a busy machine.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis

import addressable as ad
from addressable.store.redis.store import LOCK_TIMEOUT

HOLDER = """
import sys, time
import addressable as ad
store = ad.open_store(sys.argv[1])
with store._backend.exclusive():
    print("held", flush=True)
    time.sleep(300)
"""


def killed_holding_the_lock(url: str) -> float:
    """Start a process that takes gc's lock, SIGKILL it; when it died (monotonic)."""
    with subprocess.Popen([sys.executable, "-c", HOLDER, url], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"held"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return time.monotonic()


def written_after(store: ad.Store, died: float) -> float:
    """Write one record; how long after the death it landed (it must land)."""
    res = ad.Toolkit(store).record("t", {"n": 1}, b"after", determinism="deterministic")
    waited = time.monotonic() - died
    assert ad.Toolkit(store).replay(res.id).payload == b"after"
    return waited


def fresh(redis_url: str) -> str:
    return f"{redis_url}?namespace=t-{uuid.uuid4().hex[:12]}"


def test_the_lock_timeout_is_seconds() -> None:
    assert 1 <= LOCK_TIMEOUT <= 30


def test_a_redis_gc_killed_holding_the_lock_frees_the_store(redis_url: str) -> None:
    url = fresh(redis_url)
    with ad.open_store(url) as store:
        died = killed_holding_the_lock(url)
        waited = written_after(store, died)
    # The writer waits for the lock to expire, and no longer: at most the timeout (plus
    # slack for a busy machine), where it used to give up after a minute.
    assert waited / LOCK_TIMEOUT < 2.0, f"blocked {waited:.1f} s, timeout {LOCK_TIMEOUT} s"


def test_a_disk_gc_killed_holding_the_lock_frees_the_store(tmp_path: Path) -> None:
    # SQLite's lock is the operating system's: it goes with the process.
    directory = str(tmp_path / "s")
    ad.DiskStore(directory).close()
    died = killed_holding_the_lock(directory)
    with ad.DiskStore(directory) as store:
        waited = written_after(store, died)
    assert waited / LOCK_TIMEOUT < 2.0, f"blocked {waited:.1f} s"


def test_a_live_gc_keeps_its_lock_past_the_timeout(redis_url: str) -> None:
    # The lock is renewed while its holder lives: a long gc is not cut short.
    store = ad.open_store(fresh(redis_url))
    assert isinstance(store, ad.RedisStore)
    store._backend.lock_timeout = 0.5  # type: ignore[attr-defined]
    held = threading.Event()

    def hold() -> None:
        with store._backend.exclusive():
            held.set()
            time.sleep(2.0)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    start = time.monotonic()
    res = ad.Toolkit(store).record("t", {}, b"x", determinism="deterministic")
    waited = time.monotonic() - start
    holder.join()
    assert waited >= 1.5  # blocked for the whole of the gc, four timeouts long
    assert ad.Toolkit(store).replay(res.id).payload == b"x"
    store.close()


def test_a_gc_that_lost_its_lock_deletes_nothing(redis_url: str) -> None:
    # Were a gc stalled past the timeout, writers may go on: it must not sweep after them.
    url = fresh(redis_url)
    store = ad.open_store(url)
    assert isinstance(store, ad.RedisStore)
    res = ad.Toolkit(store).record("t", {}, b"kept", determinism="deterministic")
    server = redis.Redis.from_url(redis_url)
    namespace = url.rsplit("namespace=", 1)[1]
    with store._backend.exclusive():
        assert server.delete(f"{namespace}:lock:exclusive") == 1  # as if it had expired
        with pytest.raises(ad.StoreError, match="lost its lock") as info:
            store._backend.delete("r:" + res.id)
    assert "\n" not in str(info.value)
    assert store.get(res.id).id == res.id
    server.close()
    store.close()


@pytest.mark.parametrize(
    "meta",
    [
        pytest.param(None, id="one-statement"),
        pytest.param({"of": "0123456789abcdef"}, id="with-index-entries"),
    ],
)
def test_a_disk_write_waits_for_a_live_gc(tmp_path: Path, meta: dict[str, str] | None) -> None:
    # A write of one statement takes the lock as a write of several does: it waits for
    # gc's section to end (SQLite's busy timeout), never writes inside it nor fails.
    directory = tmp_path / "s"
    gc_store, store = ad.DiskStore(directory), ad.DiskStore(directory)
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with gc_store._backend.exclusive():
            held.set()
            time.sleep(1.5)
            done.set()

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    res = ad.Toolkit(store).record("t", {}, b"x", determinism="deterministic", meta=meta)
    written_after_gc = done.is_set()
    holder.join()
    assert written_after_gc
    assert ad.Toolkit(store).replay(res.id).payload == b"x"
    gc_store.close()
    store.close()
