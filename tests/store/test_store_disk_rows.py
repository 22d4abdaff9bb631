"""The disk store's short paths: a record and its small payload in one row of their own
beside diskcache's (diskcache's own bookkeeping untouched), and a replay that reads
record, payload and token count at once still checks them."""

from __future__ import annotations

import os
from pathlib import Path

import diskcache
import pytest

import addressable as ad
from addressable.store.keys import RECORD, blob_key, tokens_key


def _kit(path: Path) -> ad.Toolkit:
    return ad.Toolkit(ad.DiskStore(path / "store"), session="s")


def test_records_and_small_payloads_live_in_one_row_each(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    res = kit.record("t", {"q": 1}, b"payload", determinism="deterministic", key="k")
    again = kit.record("t", {"q": 1}, b"payload", determinism="deterministic", key="k")
    other = kit.record("u", {}, b"payload", determinism="deterministic")  # the same bytes
    assert again.id == res.id and other.id != res.id
    kit.store.close()
    cache = diskcache.Cache(str(tmp_path / "store"))
    try:
        assert cache.get(blob_key(res.record.content_hash)) is None  # not a diskcache value
        assert cache.get(RECORD + res.id) is None
        assert len(cache) == len(list(cache.iterkeys()))  # diskcache's own count kept
        rows = cache._sql(
            "SELECT id, payload FROM addressable_records ORDER BY payload IS NULL"
        ).fetchall()
        # One row a record; the payload once, in the first record's row.
        assert sorted(r[0] for r in rows) == sorted([res.id, other.id])
        assert [r[1] for r in rows] == [b"payload", None]
    finally:
        cache.close()
    store = ad.DiskStore(tmp_path / "store")
    assert store.read(store.get(res.id)) == b"payload"
    assert [o.session for o in store.observations(res.id)] == ["s", "s"]
    assert store.verify().damaged == []


def test_a_write_is_one_statement_in_its_own_transaction(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    store = kit.store
    assert isinstance(store, ad.DiskStore)
    con = store._backend._cache._con
    seen: list[str] = []
    con.set_trace_callback(seen.append)  # each statement run, and each trigger of it
    res = kit.record("t", {"n": 1}, b"payload", determinism="deterministic", key="k")
    cited = kit.record("t", {"n": 2}, b"more", determinism="deterministic", meta={"of": res.id})
    con.set_trace_callback(None)
    # No BEGIN and COMMIT around a write with nothing else to index; one that names
    # another record adds an index entry, in a transaction with the row.
    assert [s.split(" (")[0] for s in dict.fromkeys(seen)] == [
        "INSERT OR IGNORE INTO addressable_records",
        "BEGIN IMMEDIATE",
        "INSERT OR IGNORE INTO addressable_records",
        "INSERT OR IGNORE INTO addressable_index",
        "COMMIT",
    ]
    assert [r.id for r in store.records(refers_to=res.id)] == [cited.id]
    assert kit.replay(res.id).payload == b"payload"


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


def test_a_write_inside_a_transaction_joins_it(tmp_path: Path) -> None:
    # A write made while this thread holds the store's transaction (as a caller of the
    # backend may) joins it, and is undone with it.
    store = ad.DiskStore(tmp_path / "store")
    kit = ad.Toolkit(store)
    assert isinstance(store, ad.KeyValueStore)
    cache = store._backend._cache  # type: ignore[attr-defined]
    with cache.transact():
        kept = kit.record("t", {"n": 1}, b"kept", determinism="deterministic")
    assert kit.replay(kept.id).payload == b"kept"
    with pytest.raises(RuntimeError), cache.transact():
        undone = kit.record("t", {"n": 2}, b"undone", determinism="deterministic")
        raise RuntimeError("the caller's transaction fails")
    with pytest.raises(ad.NotFound):
        store.get(undone.id)


def test_each_later_sighting_is_a_row_of_its_own(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    first = kit.record("t", {"q": 1}, b"same", determinism="deterministic")
    for _ in range(4):
        assert kit.record("t", {"q": 1}, b"same", determinism="deterministic").id == first.id
    assert len(kit.store.observations(first.id)) == 5
    kit.store.close()
    cache = diskcache.Cache(str(tmp_path / "store"))
    try:
        # Appended as rows, not as one value rewritten whole at every sighting.
        assert cache.get("o:" + first.id) is None
        rows = cache._sql(
            "SELECT count(*) FROM addressable_sightings WHERE id = ?", (first.id,)
        ).fetchone()
        assert rows == (4,)
    finally:
        cache.close()


def test_a_replay_gives_what_was_stored_not_an_object_someone_changed(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    meta: dict[str, object] = {"hits": ["a"]}
    res = kit.record("t", {}, b"x", determinism="deterministic", meta=meta)
    meta["hits"].append("changed by the caller")  # type: ignore[attr-defined]
    assert kit.replay(res.id).record.meta == {"hits": ["a"]}
    with pytest.raises(ad.ReadOnly):  # a reader's change is refused, not kept for the next
        kit.replay(res.id).record.meta["hits"].append("changed by a reader")
    assert kit.replay(res.id).record.meta == {"hits": ["a"]}


def _replayed_tokens(kit: ad.Toolkit, *results: ad.Result) -> list[int | None]:
    return [kit.replay(r.id).record.tokens for r in results]


def test_a_token_count_reaches_every_row_of_its_payload_however_it_is_written(
    tmp_path: Path,
) -> None:
    # Each row keeps a copy of its payload's count, read with it on a replay: the copies
    # follow the count whoever writes it, and a row written later starts with it.
    kit = _kit(tmp_path)
    first = kit.record("t", {"n": 1}, b"the same words", determinism="deterministic")
    counted = kit.tokens(first.id)
    later = kit.record("u", {"n": 2}, b"the same words", determinism="deterministic")
    assert _replayed_tokens(kit, first, later) == [counted, counted]
    store = kit.store
    assert isinstance(store, ad.KeyValueStore)
    cache = store._backend._cache  # type: ignore[attr-defined]
    key = tokens_key(first.record.content_hash)
    cache.set(key, b"7")  # written straight to its diskcache value
    assert _replayed_tokens(kit, first, later) == [7, 7]
    cache.delete(key)
    assert _replayed_tokens(kit, first, later) == [None, None]
    store.set_tokens(first.record.content_hash, 9)
    assert _replayed_tokens(kit, first, later) == [9, 9]


def test_a_forked_child_replays_through_a_connection_of_its_own(tmp_path: Path) -> None:
    # A replay reads this thread's SQLite connection straight from diskcache; after a
    # fork the child must not use the one it inherited (SQLite forbids it), but open its
    # own, as diskcache's own reads do.
    kit = _kit(tmp_path)
    res = kit.record("t", {}, b"before the fork", determinism="deterministic")
    assert kit.replay(res.id).payload == b"before the fork"  # the parent's connection made
    store = kit.store
    assert isinstance(store, ad.KeyValueStore)
    local = store._backend._cache._local  # type: ignore[attr-defined]
    parents = local.con  # held: a new connection cannot take its place in memory
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave at once
        try:
            ok = kit.replay(res.id).payload == b"before the fork"
            own = local.con is not parents and local.pid == os.getpid()
            os.write(write, f"{ok} {own}".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        said = answer.read()
    os.waitpid(pid, 0)
    assert said == "True True"
    assert kit.replay(res.id).payload == b"before the fork"
    assert local.con is parents


@pytest.mark.parametrize(("size", "in_a_file"), [(100_000, False), (200_000, True)])
def test_a_payload_under_128_kb_is_kept_in_its_row(
    tmp_path: Path, size: int, in_a_file: bool
) -> None:
    # Rows write and read payloads of this size faster than files do (see _FILE_THRESHOLD).
    kit = _kit(tmp_path)
    res = kit.record("fetch", {"url": "https://x/p"}, b"p" * size, determinism="deterministic")
    files = sorted((tmp_path / "store").glob("*/*/*.val"))
    assert bool(files) is in_a_file
    assert kit.replay(res.id).payload == b"p" * size
    with ad.DiskStore(tmp_path / "store") as other:
        assert ad.Toolkit(other).replay(res.id).payload == b"p" * size
