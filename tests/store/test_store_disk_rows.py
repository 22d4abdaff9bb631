"""The disk store's short paths: a record and its small payload in one row of their own
beside diskcache's (diskcache's own bookkeeping untouched), and a replay that reads
record, payload and token count at once still checks them."""

from __future__ import annotations

import io
import os
from pathlib import Path

import diskcache
import pytest

import addressable as ad
from addressable.store.disk import store as _disk_rows
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


def _as_an_earlier_version_kept_it(path: Path) -> None:
    """Records as diskcache values (`r:<id>`), small payloads as `b:<address>` values,
    and no index: the layout of stores written before records had a table."""
    cache = diskcache.Cache(str(path))
    try:
        rows = cache._sql("SELECT id, address, value, payload FROM addressable_records").fetchall()
        for record_id, address, value, payload in rows:
            cache.set(RECORD + record_id, bytes(value))
            if payload is not None:
                cache.set("b:" + address, bytes(payload))
            seen = cache._sql(
                "SELECT item FROM addressable_sightings WHERE id = ? ORDER BY rowid", (record_id,)
            ).fetchall()
            if seen:  # one value a record, a line a sighting (a file when it is large)
                lines = b"".join(bytes(item) + b"\n" for (item,) in seen)
                cache.set("o:" + record_id, io.BytesIO(lines), read=True)
        cache._sql("DELETE FROM addressable_records")
        cache._sql("DELETE FROM addressable_sightings")
        cache._sql("DELETE FROM addressable_index")
        cache._sql("DELETE FROM addressable_index_size")
    finally:
        cache.close()


def test_a_store_of_an_earlier_layout_is_moved_and_indexed_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_disk_rows, "_BATCH", 7)  # moved in several transactions
    kit = _kit(tmp_path)
    made = [
        kit.record(
            "read",
            {"n": n},
            f"page {n}".encode() * 10,
            determinism="deterministic",
            key=f"k{n % 3}",
        )
        for n in range(30)
    ]
    shared = kit.record("other", {}, made[0].payload, determinism="deterministic")
    before = kit.store.stats()
    kit.store.close()
    _as_an_earlier_version_kept_it(tmp_path / "store")

    store = ad.DiskStore(tmp_path / "store")
    kit = ad.Toolkit(store)
    for res in [*made, shared]:
        assert kit.replay(res.id[:8]).payload == res.payload
    assert [r.id for r in store.records(key="k1")] == [r.id for r in made if r.record.key == "k1"]
    assert [r.id for r in store.records(session="s", limit=3)] == [r.id for r in made[:3]]
    after = store.stats()
    assert (after.records, after.by_tool, after.sessions) == (31, {"other": 1, "read": 30}, 1)
    assert (after.blobs, after.blob_bytes) == (before.blobs, before.blob_bytes)
    assert store.verify().ok
    # The old values are gone from diskcache: records are kept once.
    assert isinstance(store, ad.KeyValueStore)
    assert [k for k in store._backend.keys("r:") if k.startswith("r:")] == sorted(
        "r:" + r.id for r in [*made, shared]
    )
    store.close()
    cache = diskcache.Cache(str(tmp_path / "store"))
    try:
        assert cache.get(RECORD + made[0].id) is None
    finally:
        cache.close()


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


def test_a_move_cut_short_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Sightings an earlier version kept as one large value (a file of diskcache's own):
    # a move of the store cut short leaves them where they were, whole, for the next open.
    kit = _kit(tmp_path)
    made = [kit.record("poll", {"n": n}, b"same", determinism="deterministic") for n in range(3)]
    for _ in range(800):
        for n in range(3):
            kit.record("poll", {"n": n}, b"same", determinism="deterministic")
    kit.store.close()
    _as_an_earlier_version_kept_it(tmp_path / "store")

    read = diskcache.Cache.get
    moved: list[str] = []

    def cut_short(self: diskcache.Cache, key: str, *args: object, **kwargs: object) -> object:
        if key.startswith("o:"):
            moved.append(key)
            if len(moved) == 2:
                raise KeyboardInterrupt  # the user stops the process mid-move
        return read(self, key, *args, **kwargs)

    monkeypatch.setattr(diskcache.Cache, "get", cut_short)
    with pytest.raises(KeyboardInterrupt):
        ad.DiskStore(tmp_path / "store")
    monkeypatch.setattr(diskcache.Cache, "get", read)
    with ad.DiskStore(tmp_path / "store") as store:
        assert [len(store.observations(r.id)) for r in made] == [801, 801, 801]
        assert store.verify().ok


def test_records_an_earlier_version_writes_into_a_moved_store_are_kept(tmp_path: Path) -> None:
    # A process still on an earlier version writes a record and its payload as diskcache
    # values into a store this version has moved: they are read, and gc keeps them.
    store = ad.DiskStore(tmp_path / "store")
    kit = ad.Toolkit(store)
    mine = kit.record("t", {"n": 1}, b"mine", determinism="deterministic")
    payload = b"written the earlier way"
    theirs = ad.Record(
        id=ad.ids.result_id("t", b'{"n":2}', None, ad.ids.content_hash(payload)),
        tool="t",
        args={"n": 2},
        determinism="deterministic",
        content_hash=ad.ids.content_hash(payload),
        size=len(payload),
        media_type="text/plain",
        observed_at=mine.record.observed_at,
    )
    with diskcache.Cache(str(tmp_path / "store")) as cache:
        cache.set(RECORD + theirs.id, theirs.model_dump_json(exclude_none=True).encode())
        cache.set(blob_key(theirs.content_hash), payload)
    assert kit.replay(theirs.id).payload == payload
    assert store.gc().removed_records == []
    assert kit.replay(theirs.id).payload == payload and store.verify().ok
    store.close()
    with ad.DiskStore(tmp_path / "store") as again:  # moved on opening
        assert ad.Toolkit(again).replay(theirs.id).payload == payload
        assert again.stats().records == 2


def test_a_replay_gives_what_was_stored_not_an_object_someone_changed(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    meta: dict[str, object] = {"hits": ["a"]}
    res = kit.record("t", {}, b"x", determinism="deterministic", meta=meta)
    meta["hits"].append("changed by the caller")  # type: ignore[attr-defined]
    assert kit.replay(res.id).record.meta == {"hits": ["a"]}
    with pytest.raises(ad.ReadOnly):  # a reader's change is refused, not kept for the next
        kit.replay(res.id).record.meta["hits"].append("changed by a reader")
    assert kit.replay(res.id).record.meta == {"hits": ["a"]}


def test_a_store_with_the_earlier_single_trigger_counts_each_record_once(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    kit.record("t", {"n": 0}, b"zero", determinism="deterministic")
    kit.store.close()
    cache = diskcache.Cache(str(tmp_path / "store"))
    try:  # the trigger an earlier version made, in place of the two it makes now
        cache._sql("DROP TRIGGER addressable_record_counted")
        cache._sql("DROP TRIGGER addressable_session_seen")
        cache._sql(
            "CREATE TRIGGER addressable_record_added AFTER INSERT ON addressable_records "
            "BEGIN INSERT INTO addressable_counts VALUES (new.tool, 1, "
            "new.payload IS NOT NULL, coalesce(length(new.payload), 0)) ON CONFLICT (tool) "
            "DO UPDATE SET records = records + 1, payloads = payloads + excluded.payloads, "
            "bytes = bytes + excluded.bytes; INSERT OR IGNORE INTO addressable_index "
            "SELECT '#sessions', 0, new.session WHERE new.session IS NOT NULL; END"
        )
    finally:
        cache.close()
    kit = ad.Toolkit(ad.DiskStore(tmp_path / "store"), session="later")
    kit.record("t", {"n": 1}, b"one", determinism="deterministic")
    stats = kit.store.stats()
    assert (stats.records, stats.by_tool, stats.sessions) == (2, {"t": 2}, 2)
    assert stats.blobs == 2 and stats.blob_bytes == len(b"zero") + len(b"one")


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
    cache.set(key, b"7")  # as an earlier version writes it: a diskcache value
    assert _replayed_tokens(kit, first, later) == [7, 7]
    cache.delete(key)
    assert _replayed_tokens(kit, first, later) == [None, None]
    store.set_tokens(first.record.content_hash, 9)
    assert _replayed_tokens(kit, first, later) == [9, 9]


def test_a_store_made_before_rows_kept_token_counts_gets_them_on_open(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    first = kit.record("t", {"n": 1}, b"some words here", determinism="deterministic")
    other = kit.record("t", {"n": 2}, b"other words", determinism="deterministic")
    counted = kit.tokens(first.id)
    kit.store.close()
    cache = diskcache.Cache(str(tmp_path / "store"))
    try:  # the table and triggers as an earlier version left them
        for name in ("added", "changed", "removed"):
            cache._sql(f"DROP TRIGGER addressable_tokens_{name}")
        cache._sql("ALTER TABLE addressable_records DROP COLUMN tokens")
    finally:
        cache.close()
    kit = _kit(tmp_path)
    assert _replayed_tokens(kit, first, other) == [counted, None]
    same = kit.record("u", {}, b"some words here", determinism="deterministic")
    assert _replayed_tokens(kit, same) == [counted]
    assert kit.store.verify().ok


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


def test_a_row_an_earlier_version_inserts_is_read_with_its_payloads_count(
    tmp_path: Path,
) -> None:
    kit = _kit(tmp_path)
    first = kit.record("t", {"n": 1}, b"the same words", determinism="deterministic")
    counted = kit.tokens(first.id)
    with ad.DiskStore(tmp_path / "elsewhere") as elsewhere:  # the bytes of a second record
        later = ad.Toolkit(elsewhere, session="s").record(
            "u", {"n": 2}, b"the same words", determinism="deterministic"
        )
        value = elsewhere._backend.get(RECORD + later.id)  # type: ignore[attr-defined]
    store = kit.store
    assert isinstance(store, ad.KeyValueStore)
    con = store._backend._cache._con  # type: ignore[attr-defined]
    # The insert an earlier version makes: no token column named.
    con.execute(
        "INSERT INTO addressable_records (id, at, tool, key, session, address, value) "
        "SELECT ?, at, 'u', NULL, session, address, ? FROM addressable_records WHERE id = ?",
        (later.id, value, first.id),
    )
    assert _replayed_tokens(kit, later) == [counted]
    assert store.verify().ok


@pytest.mark.parametrize(("size", "in_a_file"), [(100_000, False), (200_000, True)])
def test_a_payload_under_128_kb_is_kept_in_its_row(
    tmp_path: Path, size: int, in_a_file: bool
) -> None:
    # Rows write and read pages of this size faster than files do (see _disk).
    kit = _kit(tmp_path)
    res = kit.record("fetch", {"url": "https://x/p"}, b"p" * size, determinism="deterministic")
    files = sorted((tmp_path / "store").glob("*/*/*.val"))
    assert bool(files) is in_a_file
    assert kit.replay(res.id).payload == b"p" * size
    with ad.DiskStore(tmp_path / "store") as other:
        assert ad.Toolkit(other).replay(res.id).payload == b"p" * size
