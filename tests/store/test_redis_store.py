"""What is particular to the Redis store (the Store contract runs on it in test_store.py)."""

from __future__ import annotations

import threading
import time
import uuid
from urllib.parse import urlencode

import pytest
import redis

import addressable as ad
from tests.helpers import run_writers


def fresh(redis_url: str) -> str:
    return f"{redis_url}?namespace=t-{uuid.uuid4().hex[:12]}"


def test_four_processes_share_one_redis_store(redis_url: str) -> None:
    url = fresh(redis_url)
    outputs = run_writers(url, 4, 500)
    with ad.open_store(url) as store:
        kit = ad.Toolkit(store)
        records = list(store.records())
        assert len(records) == 2000
        assert {r.id for r in records} == {i for out in outputs for i in out}
        for record in records:
            assert kit.replay(record.id).record.content_hash == record.content_hash
        assert store.verify().ok


def test_namespaces_keep_stores_apart(redis_url: str) -> None:
    a, b = ad.open_store(fresh(redis_url)), ad.open_store(fresh(redis_url))
    res = ad.Toolkit(a).record("t", {}, b"only in a", determinism="deterministic")
    assert [r.id for r in a.records()] == [res.id]
    assert list(b.records()) == []
    with pytest.raises(ad.NotFound):
        b.get(res.id)


def test_the_password_never_shows(redis_url: str) -> None:
    url = fresh(redis_url).replace("redis://", "redis://:s3cret-pw@")
    with ad.open_store(url) as store:
        assert "s3cret-pw" not in store.location
        assert store.location.startswith("redis://127.0.0.1:")
        assert "namespace=t-" in store.location
        assert "s3cret-pw" not in repr(store) and "s3cret-pw" not in store.stats().location
    with pytest.raises(ad.StoreError) as info:
        ad.open_store("redis://:s3cret-pw@127.0.0.1:1/0")
    assert "s3cret-pw" not in str(info.value)


@pytest.mark.parametrize("password", ["Zm9v/YmFy+cXV4", "hun?ter2pw", "pass#word99"])
def test_a_password_holding_a_url_delimiter_never_shows(password: str) -> None:
    # urlsplit ends the user part at the first / ? or #: the password then read as host.
    with pytest.raises(ad.StoreError, match="must be percent-encoded") as info:
        ad.open_store(f"redis://:{password}@127.0.0.1:6379/0")
    shown = str(info.value)
    assert password[:5] not in shown and "\n" not in shown


def test_an_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(
        ad.StoreError, match=r"cannot reach the redis store at redis://127\.0\.0\.1:1"
    ):
        ad.open_store("redis://127.0.0.1:1/0")


def test_writers_wait_while_gc_holds_the_store(redis_url: str) -> None:
    store = ad.open_store(fresh(redis_url))
    assert isinstance(store, ad.KeyValueStore)
    kit = ad.Toolkit(store)
    held = threading.Event()

    def hold() -> None:
        with store._backend.exclusive():
            held.set()
            time.sleep(0.3)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    start = time.monotonic()
    res = kit.record("t", {}, b"after gc", determinism="deterministic")
    waited = time.monotonic() - start
    holder.join()
    assert waited >= 0.2  # it could not land while the exclusive section was held
    assert kit.replay(res.id).payload == b"after gc"


@pytest.mark.parametrize("name", ["team:b", "team*", "te?m", "t[ea]m", "te\\am", ":"])
def test_a_namespace_that_would_reach_into_others_is_refused(redis_url: str, name: str) -> None:
    url = f"{redis_url}?{urlencode({'namespace': name})}".replace("redis://", "redis://:pw@")
    with pytest.raises(ad.StoreError, match="a namespace cannot contain") as info:
        ad.open_store(url)
    assert "\n" not in str(info.value) and ":pw@" not in str(info.value)


def test_a_namespace_sees_none_of_the_keys_of_one_named_after_it(redis_url: str) -> None:
    # Keys of another store's shape under "<name>:b:" (moved there by hand, as no
    # namespace may hold ":"): they all start with "<name>:", the prefix of "<name>".
    name = f"t-{uuid.uuid4().hex[:12]}"
    with ad.open_store(f"{redis_url}?namespace={name}-b") as made:
        ad.Toolkit(made).record("t", {"x": 1}, b"payload of b", determinism="deterministic")
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"{name}-b:*"):
        client.rename(key, key.replace(f"{name}-b:".encode(), f"{name}:b:".encode(), 1))
    theirs = {k: client.dump(k) for k in client.scan_iter(match=f"{name}:b:*")}
    assert len(theirs) > 5
    with ad.open_store(f"{redis_url}?namespace={name}") as store:
        ours = ad.Toolkit(store).record("t", {"x": 2}, b"ours", determinism="deterministic")
        assert isinstance(store, ad.KeyValueStore)
        assert all(":" not in k.partition(":")[2] for k in store._backend.keys(""))
        assert [r.id for r in store.records()] == [ours.id]
        report = store.verify()
        assert report.ok and report.records == 1 and report.orphan_blobs == 0
        gone = store.gc(max_bytes=1)
        assert gone.removed_records == [ours.id]
    assert {k: client.dump(k) for k in client.scan_iter(match=f"{name}:b:*")} == theirs
    client.close()
