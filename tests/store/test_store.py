"""The Store contract, on every implementation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import addressable as ad
from addressable.store.keys import BLOB, blob_key
from tests.helpers import FakeClock, put_two_sharing_a_prefix

T0 = datetime(2026, 3, 11, 9, 0, tzinfo=UTC)


def make(kit: ad.Toolkit, text: str, *, tool: str = "t", key: str | None = None) -> ad.Result:
    return kit.record(tool, {"q": text}, text.encode(), determinism="deterministic", key=key)


def blob_keys(store: ad.Store) -> list[str]:
    assert isinstance(store, ad.KeyValueStore)
    return store._backend.keys(BLOB)


def test_blobs_are_stored_once_however_often_they_recur(kit: ad.Toolkit) -> None:
    payload = b"x" * 5000
    ids = {
        kit.record(f"tool{i}", {"i": i}, payload, determinism="deterministic").id for i in range(5)
    }
    assert len(ids) == 5
    stats = kit.store.stats()
    assert (stats.blobs, stats.blob_bytes) == (1, 5000)


def test_same_call_again_appends_an_observation(kit: ad.Toolkit, clock: FakeClock) -> None:
    first = make(kit, "a")
    clock.advance(minutes=5)
    second = make(kit, "a")
    assert first.id == second.id
    seen = kit.store.observations(first.id)
    assert [o.at for o in seen] == [T0, T0 + timedelta(minutes=5)]
    assert kit.store.get(first.id).observed_at == T0  # the record itself never changes
    assert kit.store.last_seen(kit.store.get(first.id)) == T0 + timedelta(minutes=5)


def test_resolve_prefixes_like_git(kit: ad.Toolkit) -> None:
    results = [make(kit, f"v{i}") for i in range(300)]
    target = results[0].id
    assert kit.store.resolve(target) == target
    assert kit.store.resolve(target[:10]) == target
    assert kit.store.resolve(target[:6].upper()) == target
    with pytest.raises(ad.BadId, match="too short"):
        kit.store.resolve(target[:5])


def test_ambiguous_prefix_lists_the_candidates(store: ad.Store) -> None:
    put_two_sharing_a_prefix(store, T0)
    with pytest.raises(ad.AmbiguousId) as info:
        store.resolve("abcdef")
    assert info.value.candidates == ["abcdef0000000001", "abcdef0000000002"]
    assert "abcdef0000000001, abcdef0000000002" in str(info.value)
    assert store.resolve("abcdef0000000002") == "abcdef0000000002"


def test_replay_finds_a_record_as_get_and_read_do(store: ad.Store, clock: FakeClock) -> None:
    put_two_sharing_a_prefix(store, T0)
    kit = ad.Toolkit(store, clock=clock)
    res = make(kit, "payload")
    store.set_tokens(res.record.content_hash, 7)
    record = store.get(res.id)
    for text in (res.id, res.id.upper(), f" {res.id} ", res.id[:10]):
        replayed = kit.replay(text)
        assert (replayed.record, replayed.payload, replayed.replayed) == (record, b"payload", True)
    assert record.tokens == 7 and "tokens" in record.model_fields_set
    assert kit.replay(res.id).record.model_fields_set == record.model_fields_set
    assert kit.replay("abcdef0000000002").payload == b"p"
    with pytest.raises(ad.AmbiguousId):
        kit.replay("abcdef")
    with pytest.raises(ad.NotFound):
        kit.replay("0123456789abcdef")


def test_unknown_id_raises_not_found(store: ad.Store) -> None:
    with pytest.raises(ad.NotFound, match="no result with id 0123456789abcdef"):
        store.get("0123456789abcdef")
    with pytest.raises(ad.NotFound, match="no result id starts with '012345'"):
        store.resolve("012345")


def test_listing_filters(store: ad.Store, clock: FakeClock) -> None:
    a = ad.Toolkit(store, session="A", clock=clock)
    b = ad.Toolkit(store, session="B", clock=clock)
    r1 = make(a, "one", tool="fetch", key="https://x/1")
    clock.advance(hours=1)
    r2 = make(a, "two", tool="search")
    clock.advance(hours=1)
    r3 = make(b, "three", tool="fetch", key="https://x/3")
    clock.advance(hours=1)
    make(b, "one", tool="fetch", key="https://x/1")  # session B sees r1 again

    def ids(**kw: object) -> list[str]:
        return [r.id for r in store.records(**kw)]  # type: ignore[arg-type]

    assert ids() == [r1.id, r2.id, r3.id]
    assert ids(tool="fetch") == [r1.id, r3.id]
    assert ids(key="https://x/3") == [r3.id]
    assert ids(session="A") == [r1.id, r2.id]
    assert ids(session="B") == [r1.id, r3.id]
    assert ids(since=T0 + timedelta(minutes=90)) == [r1.id, r3.id]
    assert ids(tool="search", session="B") == []


def test_corrupt_blob_raises_integrity_error(store: ad.Store) -> None:
    kit = ad.Toolkit(store)
    res = kit.record("t", {}, b"hello world", determinism="deterministic")
    assert isinstance(store, ad.KeyValueStore)
    store._backend.set(blob_key(res.record.content_hash), b"hellO world")
    with pytest.raises(ad.IntegrityError, match=f"payload of result {res.id} is corrupt"):
        kit.replay(res.id)
    report = store.verify()
    assert not report.ok
    assert [(d.id, d.problem) for d in report.damaged] == [(res.id, "corrupt")]


def test_missing_blob_is_damage_and_orphan_blob_is_not(store: ad.Store) -> None:
    kit = ad.Toolkit(store)
    lost = kit.record("t", {"n": 1}, b"lost", determinism="deterministic")
    kept = kit.record("t", {"n": 2}, b"kept", determinism="deterministic")
    assert isinstance(store, ad.KeyValueStore)
    store._backend.delete(blob_key(lost.record.content_hash))
    store._backend.set(blob_key(ad.ids.content_hash(b"orphan")), b"orphan")  # killed writer
    with pytest.raises(ad.IntegrityError, match="missing"):
        kit.replay(lost.id)
    report = store.verify()
    assert [(d.id, d.problem) for d in report.damaged] == [(lost.id, "missing")]
    assert report.blobs_checked == 1  # the missing payload was not re-hashed
    assert (report.orphan_blobs, report.orphan_bytes) == (1, 6)
    assert kit.replay(kept.id).payload == b"kept"


def test_unreadable_record_is_reported_by_id(store: ad.Store) -> None:
    kit = ad.Toolkit(store)
    res = kit.record("t", {}, b"x", determinism="deterministic")
    assert isinstance(store, ad.KeyValueStore)
    store._backend.set("r:" + res.id, b"{not json")
    with pytest.raises(ad.IntegrityError, match=f"record of result {res.id} is unreadable"):
        kit.replay(res.id)
    assert [(d.id, d.problem) for d in store.verify().damaged] == [(res.id, "unreadable")]


def test_a_read_that_loses_the_race_with_gc_says_expired(store: ad.Store, clock: FakeClock) -> None:
    # A reader holds the record; gc removes it and its payload before the payload is
    # read: the reader learns what a read a moment later would, not of damage.
    kit = ad.Toolkit(store, clock=clock)
    old = make(kit, "old" * 100)
    held = store.get(old.id)
    assert store.read(held) == old.payload  # read once: the next read goes to the store
    clock.advance(days=10)
    assert store.gc(max_age=timedelta(days=7), now=clock.now).removed_records == [old.id]
    with pytest.raises(ad.Expired, match=f"result {old.id} expired"):
        store.read(held)
    assert store.verify().ok


def test_gc_by_age_keeps_pinned_and_leaves_tombstones(store: ad.Store, clock: FakeClock) -> None:
    kit = ad.Toolkit(store, clock=clock)
    old = make(kit, "old" * 100)
    pinned = make(kit, "pinned" * 100)
    store.pin(pinned.id)
    clock.advance(days=10)
    fresh = make(kit, "fresh")
    report = store.gc(max_age=timedelta(days=7), now=clock.now)
    assert report.removed_records == [old.id]
    assert report.removed_blobs == 1
    assert report.freed_bytes == 300
    assert report.kept_pinned == 1
    assert kit.replay(pinned.id).payload == b"pinned" * 100
    assert kit.replay(fresh.id).payload == b"fresh"
    with pytest.raises(ad.Expired, match=f"result {old.id} expired"):
        kit.replay(old.id)
    with pytest.raises(ad.Expired):
        kit.replay(old.id[:8])
    assert store.verify().ok


def test_gc_by_size_removes_oldest_unpinned_first(store: ad.Store, clock: FakeClock) -> None:
    kit = ad.Toolkit(store, clock=clock)
    results = []
    for i in range(5):
        results.append(
            kit.record("t", {"i": i}, bytes([65 + i]) * 1000, determinism="deterministic")
        )
        clock.advance(minutes=1)
    store.pin(results[0].id)
    make(kit, "x")  # observation order: the newest survive
    report = store.gc(max_bytes=2500, now=clock.now)
    assert report.removed_records == [results[1].id, results[2].id, results[3].id]
    assert report.blob_bytes_after <= 2500
    survivors = {r.id for r in store.records()}
    assert results[0].id in survivors and results[4].id in survivors


def test_gc_never_removes_pinned_even_over_budget(store: ad.Store, clock: FakeClock) -> None:
    kit = ad.Toolkit(store, clock=clock)
    res = kit.record("t", {}, b"y" * 4000, determinism="deterministic")
    store.pin(res.id)
    report = store.gc(max_bytes=10, max_age=timedelta(seconds=1), now=clock.now + timedelta(days=1))
    assert report.removed_records == []
    assert report.blob_bytes_after == 4000
    store.unpin(res.id)
    assert store.gc(max_bytes=10, now=clock.now).removed_records == [res.id]


def test_shared_blob_survives_until_its_last_record_goes(store: ad.Store, clock: FakeClock) -> None:
    kit = ad.Toolkit(store, clock=clock)
    a = kit.record("a", {}, b"shared", determinism="deterministic")
    clock.advance(days=2)
    b = kit.record("b", {}, b"shared", determinism="deterministic")
    report = store.gc(max_age=timedelta(days=1), now=clock.now)
    assert report.removed_records == [a.id]
    assert report.removed_blobs == 0
    assert kit.replay(b.id).payload == b"shared"


def test_gc_reclaims_orphan_blobs(store: ad.Store) -> None:
    assert isinstance(store, ad.KeyValueStore)
    store._backend.set(blob_key(ad.ids.content_hash(b"orphan")), b"orphan")
    report = store.gc()
    assert (report.removed_blobs, report.freed_bytes) == (1, 6)
    assert store.verify().orphan_blobs == 0


def test_reobserving_an_expired_result_revives_it(store: ad.Store, clock: FakeClock) -> None:
    kit = ad.Toolkit(store, clock=clock)
    res = make(kit, "a")
    store.gc(max_age=timedelta(seconds=1), now=clock.now + timedelta(seconds=2))
    with pytest.raises(ad.Expired):
        store.get(res.id)
    again = make(kit, "a")
    assert again.id == res.id
    assert kit.replay(res.id).payload == b"a"


@pytest.mark.parametrize(
    ("limits", "named"),
    [
        pytest.param({"max_bytes": 0}, r"max_bytes must be a positive .*not 0:", id="bytes-0"),
        pytest.param({"max_bytes": -1}, r"max_bytes .*not -1:", id="bytes-negative"),
        pytest.param({"max_age": timedelta(0)}, r"max_age .*not 0:00:00", id="age-0"),
        pytest.param({"max_age": timedelta(days=-1)}, r"max_age .*not -1 day", id="age-negative"),
        pytest.param(
            {"max_age": "x"}, r"max_age must be a timedelta, not str \('x'\)", id="age-str"
        ),
        pytest.param({"max_age": 7}, r"max_age must be a timedelta, not int", id="age-int"),
        pytest.param({"max_bytes": "10"}, r"max_bytes .*not str \('10'\)", id="bytes-str"),
        pytest.param({"max_bytes": 1.5}, r"max_bytes .*not float", id="bytes-float"),
        pytest.param({"max_bytes": True}, r"max_bytes .*not bool", id="bytes-bool"),
        pytest.param(
            {"now": datetime(2026, 3, 12)},
            r"now 2026-03-12T00:00:00 has no time zone",
            id="now-naive",
        ),
        pytest.param({"now": "2026-03-12"}, r"now must be a datetime, not str", id="now-str"),
    ],
)
def test_gc_refuses_bad_limits_and_removes_nothing(
    store: ad.Store, clock: FakeClock, limits: dict[str, object], named: str
) -> None:
    res = make(ad.Toolkit(store, clock=clock), "a")
    with pytest.raises(ad.ArgumentError, match=named) as info:
        store.gc(**limits)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)
    assert [r.id for r in store.records()] == [res.id]


@pytest.mark.parametrize(
    ("since", "named"),
    [
        pytest.param(datetime(2026, 3, 11), "has no time zone", id="naive"),
        pytest.param("2026-03-11", "must be a datetime, not str", id="str"),
    ],
)
def test_listing_refuses_a_since_that_is_not_an_aware_time(
    store: ad.Store, clock: FakeClock, since: object, named: str
) -> None:
    make(ad.Toolkit(store, clock=clock), "a")
    with pytest.raises(ad.ArgumentError, match=f"records since .*{named}"):
        list(store.records(since=since))  # type: ignore[arg-type]


def test_stats(store: ad.Store, clock: FakeClock) -> None:
    a = ad.Toolkit(store, session="A", clock=clock)
    make(a, "one", tool="fetch")
    clock.advance(hours=1)
    make(ad.Toolkit(store, session="B", clock=clock), "two", tool="shell")
    store.pin(next(store.records()).id)
    stats = store.stats()
    assert (stats.records, stats.blobs, stats.blob_bytes, stats.pinned) == (2, 2, 6, 1)
    assert stats.sessions == 2
    assert stats.by_tool == {"fetch": 1, "shell": 1}
    assert (stats.oldest, stats.newest) == (T0, T0 + timedelta(hours=1))


def test_pin_unknown_id_raises(store: ad.Store) -> None:
    with pytest.raises(ad.NotFound):
        store.pin("0123456789abcdef")


def test_token_counts_are_kept_beside_the_blob(kit: ad.Toolkit) -> None:
    res = make(kit, "hello world")
    assert kit.store.get(res.id).tokens is None
    n = kit.tokens(res.id)
    assert n == ad.count_tokens("hello world")
    assert kit.store.get(res.id).tokens == n
    assert next(kit.store.records()).tokens == n


def test_disk_store_persists_across_opens(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with ad.DiskStore(path) as store:
        res = ad.Toolkit(store).record("t", {}, b"kept", determinism="deterministic")
    with ad.DiskStore(path) as store:
        assert ad.Toolkit(store).replay(res.id).payload == b"kept"


def test_open_store_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(ad.open_store("memory://"), ad.MemoryStore)
    disk = ad.open_store(f"disk://{tmp_path}/a")
    assert isinstance(disk, ad.DiskStore) and disk.directory == tmp_path / "a"
    plain = ad.open_store(str(tmp_path / "b"))
    assert isinstance(plain, ad.DiskStore) and plain.directory == tmp_path / "b"
    monkeypatch.setenv("ADDRESSABLE_HOME", str(tmp_path / "home"))
    default = ad.open_store()
    assert isinstance(default, ad.DiskStore) and default.directory == tmp_path / "home"
    monkeypatch.delenv("ADDRESSABLE_HOME")
    monkeypatch.chdir(tmp_path)
    here = ad.open_store()
    assert isinstance(here, ad.DiskStore) and here.directory == tmp_path / ".addressable"
    for s in (disk, plain, default, here):
        s.close()
    with pytest.raises(ad.StoreError, match="unknown store URL 'ftp://x'"):
        ad.open_store("ftp://x")


def test_disk_failure_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ad.StoreError, match=r"disk store at .*opening failed"):
        ad.DiskStore(blocker / "store")


def test_gc_counts_only_what_it_removed(store: ad.Store, clock: FakeClock) -> None:
    # A payload a damaged record still names is kept, with its token count, and gc does
    # not count it as freed.
    assert isinstance(store, ad.KeyValueStore)
    kit = ad.Toolkit(store, clock=clock)
    old = kit.record("t", {"q": 1}, b"shared", determinism="deterministic")
    store.set_tokens(old.record.content_hash, 3)
    clock.advance(hours=2)
    damaged = kit.record("u", {"q": 2}, b"shared", determinism="deterministic")
    raw = store._backend.get("r:" + damaged.id)
    assert raw is not None
    store._backend.set("r:" + damaged.id, raw.replace(b'"u"', b'"v"'))  # checksum now wrong
    report = store.gc(max_age=timedelta(hours=1), now=clock.now)
    assert report.removed_records == [old.id]
    assert (report.removed_blobs, report.freed_bytes) == (0, 0)
    assert store._backend.get(blob_key(old.record.content_hash)) == b"shared"
    assert store._backend.get("t:" + old.record.content_hash[:32]) == b"3"


@pytest.mark.parametrize("limit", [2**63 - 1, 2**63, 2**100])
@pytest.mark.parametrize("tool", [None, "t"])
def test_a_limit_past_what_the_backend_counts_means_every_record(
    store: ad.Store, limit: int, tool: str | None
) -> None:
    kit = ad.Toolkit(store)
    made = [kit.record("t", {"i": i}, b"%d" % i, determinism="deterministic") for i in range(3)]
    found = list(store.records(tool=tool, newest_first=True, limit=limit))
    assert [r.id for r in found] == [r.id for r in reversed(made)]
