"""The disk store's short paths: rows written by plain SQL read back through diskcache,
and a replay that reads record, payload and token count at once still checks them."""

from __future__ import annotations

from pathlib import Path

import diskcache
import pytest

import addressable as ad
from addressable._stores._kv import RECORD, blob_key, tokens_key


def _kit(path: Path) -> ad.Toolkit:
    return ad.Toolkit(ad.DiskStore(path / "store"), session="s")


def test_rows_written_by_sql_read_back_through_diskcache(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    res = kit.record("t", {"q": 1}, b"payload", determinism="deterministic", key="k")
    again = kit.record("t", {"q": 1}, b"payload", determinism="deterministic", key="k")
    assert again.id == res.id
    kit.store.close()
    cache = diskcache.Cache(str(tmp_path / "store"))
    try:
        assert cache.get(blob_key(res.record.content_hash)) == b"payload"
        assert cache.get(RECORD + res.id) is not None
        assert len(cache) == len(list(cache.iterkeys()))  # diskcache's own count kept
    finally:
        cache.close()
    store = ad.DiskStore(tmp_path / "store")
    assert store.read(store.get(res.id)) == b"payload"
    assert [o.session for o in store.observations(res.id)] == ["s", "s"]
    assert store.verify().damaged == []


def test_a_joined_read_still_rehashes_the_payload(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    res = kit.record("t", {}, b"hello world", determinism="deterministic")
    store = kit.store
    assert isinstance(store, ad.KeyValueStore)
    store._backend.set(blob_key(res.record.content_hash), b"hellO world")
    with pytest.raises(ad.IntegrityError):
        kit.replay(res.id)


def test_a_payload_read_with_its_record_is_used_once(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    res = kit.record("t", {}, b"hello world", determinism="deterministic")
    store = kit.store
    assert isinstance(store, ad.KeyValueStore)
    record = store.get(res.id)
    store._backend.delete(blob_key(res.record.content_hash))
    assert store.read(record) == b"hello world"  # read with the record, a moment ago
    with pytest.raises(ad.IntegrityError, match="missing"):
        store.read(record)


def test_a_joined_read_gives_the_token_count_and_large_payloads(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    small = kit.record("t", {"n": 1}, b"a few words", determinism="deterministic")
    large = kit.record("t", {"n": 2}, b"z" * 100_000, determinism="deterministic")
    store = kit.store
    assert isinstance(store, ad.KeyValueStore)
    store.set_tokens(small.record.content_hash, 3)
    assert store._backend.get(tokens_key(small.record.content_hash)) == b"3"
    assert kit.replay(small.id).record.tokens == 3
    assert kit.replay(small.id).payload == b"a few words"
    assert kit.replay(large.id).payload == b"z" * 100_000  # kept in a file: read apart
    assert kit.replay(large.id).record.tokens is None


def test_a_large_payload_shared_by_two_records_is_written_once(tmp_path: Path) -> None:
    # A payload over the file threshold that the store already holds: the second record
    # points at it, and nothing fails for want of the first write's bookkeeping.
    big = b"x" * (1 << 20)
    with ad.DiskStore(tmp_path / "s") as store:
        kit = ad.Toolkit(store)
        first = kit.record("read", {"path": "a"}, big, determinism="deterministic", key="a")
        second = kit.record("read", {"path": "b"}, big, determinism="deterministic", key="b")
        assert first.id != second.id
        assert kit.replay(second.id).payload == big
        assert store.verify().ok
