"""The store's indexes: lookups read only what matches, and every index agrees with the
records themselves through writes, sightings, pins, gc, concurrent writers and a reindex
cut short. On every implementation."""

from __future__ import annotations

import contextlib
import random
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import Search
from addressable.adapters.search import Hit
from addressable.store.backend import Backend
from addressable.store.keys import BLOB, PIN, RECORD
from tests.helpers import FakeClock, run_writers

T0 = datetime(2026, 3, 11, 9, 0, tzinfo=UTC)


class Counting:
    """A real backend, passed through, that notes which records are read and which keys
    are listed: what a lookup costs, seen from below."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.reads: list[str] = []
        self.listed: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get(self, key: str) -> bytes | None:
        if key.startswith(RECORD):
            self.reads.append(key[len(RECORD) :])
        return self.inner.get(key)

    def keys(self, prefix: str) -> list[str]:
        self.listed.append(prefix)
        return self.inner.keys(prefix)

    def clear(self) -> None:
        self.reads.clear()
        self.listed.clear()


@pytest.fixture
def counted(store: ad.Store) -> tuple[ad.KeyValueStore, Counting]:
    """The store under test, seen through a `Counting` backend."""
    assert isinstance(store, ad.KeyValueStore)
    backend = Counting(store._backend)
    return ad.KeyValueStore(backend), backend  # type: ignore[arg-type]


def fetches(kit: ad.Toolkit, n: int, clock: FakeClock) -> list[ad.Result]:
    out = []
    for i in range(n):
        out.append(
            kit.record(
                "fetch",
                {"url": f"https://x.test/{i}"},
                f"page {i}".encode(),
                determinism="deterministic",
                key=f"https://x.test/{i}",
            )
        )
        clock.advance(seconds=1)
    return out


# -- lookups read only what they find ---------------------------------------------------


def test_records_by_key_reads_only_that_keys_records(
    counted: tuple[ad.KeyValueStore, Counting], clock: FakeClock
) -> None:
    store, backend = counted
    kit = ad.Toolkit(store, session="s", clock=clock)
    fetches(kit, 200, clock)
    again = kit.record(
        "fetch",
        {"url": "https://x.test/7", "v": 2},
        b"page 7, later",
        determinism="deterministic",
        key="https://x.test/7",
    )
    backend.clear()
    found = list(store.records(key="https://x.test/7"))
    assert [r.args for r in found] == [{"url": "https://x.test/7"}, again.record.args]
    assert sorted(backend.reads) == sorted(r.id for r in found)  # nothing else read
    assert RECORD not in backend.listed  # nor every id listed


def test_records_by_session_tool_and_reference_read_only_theirs(
    counted: tuple[ad.KeyValueStore, Counting], clock: FakeClock
) -> None:
    store, backend = counted
    noise = ad.Toolkit(store, session="noise", clock=clock)
    page3 = fetches(noise, 150, clock)[3]
    mine = ad.Toolkit(store, session="mine", clock=clock)
    first = mine.record("shell", {"c": "ls"}, b"a b", determinism="nondeterministic")
    clock.advance(seconds=1)
    check = mine.record(
        "check", {"n": 1}, b"ok", determinism="nondeterministic", meta={"of": first.id}
    )
    mine.record(
        "fetch",
        {"url": "https://x.test/3"},
        b"page 3",
        determinism="deterministic",
        key="https://x.test/3",
    )  # seen again, in session "mine"

    backend.clear()
    assert [r.id for r in store.records(session="mine")] == [page3.id, first.id, check.id]
    assert len(backend.reads) == 3
    backend.clear()
    assert [r.id for r in store.records(tool="shell")] == [first.id]
    assert [r.id for r in store.records(refers_to=first.id)] == [check.id]
    assert sorted(backend.reads) == sorted([first.id, check.id])
    assert RECORD not in backend.listed


def test_newest_first_with_a_limit_reads_only_the_newest(
    counted: tuple[ad.KeyValueStore, Counting], clock: FakeClock
) -> None:
    store, backend = counted
    made = fetches(ad.Toolkit(store, session="s", clock=clock), 120, clock)
    backend.clear()
    newest = list(store.records(newest_first=True, limit=3))
    assert [r.id for r in newest] == [r.id for r in made[-3:][::-1]]
    assert len(backend.reads) == 3
    backend.clear()
    assert [r.id for r in store.records(tool="fetch", newest_first=True, limit=2)] == [
        made[-1].id,
        made[-2].id,
    ]
    assert len(backend.reads) == 2
    assert [r.id for r in store.records(limit=2)] == [made[0].id, made[1].id]


def test_resolve_stats_and_outcome_read_no_other_record(
    counted: tuple[ad.KeyValueStore, Counting], clock: FakeClock
) -> None:
    store, backend = counted
    kit = ad.Toolkit(store, session="s", clock=clock)
    made = fetches(kit, 100, clock)
    backend.clear()
    assert store.resolve(made[42].id[:8]) == made[42].id
    assert backend.reads == []
    # Keys are listed only by the prefix itself (on disk, whose keys are ranged).
    assert backend.listed in ([], [RECORD + made[42].id[:8]])

    backend.clear()
    stats = store.stats()
    assert (stats.records, stats.sessions, stats.by_tool) == (100, 1, {"fetch": 100})
    assert (stats.oldest, stats.newest) == (made[0].record.observed_at, made[-1].record.observed_at)
    assert sorted(backend.reads) == sorted([made[0].id, made[-1].id])
    assert backend.listed == []

    write = kit.record(
        "api", {"method": "POST"}, b"timed out", determinism="side_effect", outcome="unknown"
    )
    fetches(kit, 50, clock)
    checks = []
    for n, outcome in enumerate(["not_applied", "completed"]):
        clock.advance(seconds=1)
        checks.append(
            kit.record(
                "api_verify",
                {"action": write.id, "n": n},
                f"read {n}".encode(),
                determinism="nondeterministic",
                outcome=outcome,
                meta={"verifies": write.id},
            )
        )
    backend.clear()
    assert kit.outcome(write.id) is ad.Outcome.COMPLETED  # the latest verification
    assert sorted(set(backend.reads)) == sorted([write.id, *(c.id for c in checks)])


def test_a_repeated_search_reads_its_session_and_its_hits(
    counted: tuple[ad.KeyValueStore, Counting], clock: FakeClock
) -> None:
    class Fixed:
        name = "fixed"

        def search(self, query: str, limit: int) -> list[Hit]:
            return [
                Hit(title=f"{query} {i}", url=f"https://hit.test/{query}/{i}") for i in range(3)
            ]

    store, backend = counted
    other = ad.Toolkit(store, session="other", clock=clock)
    Search(other, Fixed())
    for q in range(30):
        other.handle("search", {"query": f"q{q}"})
    kit = ad.Toolkit(store, session="s", clock=clock)
    Search(kit, Fixed())
    text = kit.handle("search", {"query": "q1"})
    backend.clear()
    again = kit.handle("search", {"query": "q1"})
    assert again.startswith("[the same search ran at")
    assert again.endswith(text)
    # The session's one search, then the search and its three hits to render it.
    assert len(set(backend.reads)) == 4


# -- every index agrees with the records ------------------------------------------------


def brute_stats(store: ad.KeyValueStore) -> dict[str, Any]:
    """What `stats` must say, by reading every record (as it once did)."""
    records = list(store.records())
    sessions = set()
    for r in records:
        sessions.update(o.session for o in store.observations(r.id) if o.session is not None)
    b = store._backend
    return {
        "records": len(records),
        # Payloads stored: each a record names (once however many do), and any left over.
        "blobs": len({r.content_hash[:32] for r in records} | {k[2:] for k in b.keys(BLOB)}),
        "blob_bytes": sum({r.content_hash: r.size for r in records}.values()),
        "pinned": len(b.keys(PIN)),
        "pinned_by_reason": dict(
            sorted(
                Counter(pin.reason for k in b.keys(PIN) if (pin := store.pin_info(k[2:]))).items()
            )
        ),
        "sessions": len(sessions),
        "by_tool": dict(sorted(Counter(r.tool for r in records).items())),
        "oldest": min((r.observed_at for r in records), default=None),
        "newest": max((r.observed_at for r in records), default=None),
    }


def check_indexes(store: ad.KeyValueStore) -> None:
    """Every lookup agrees with a scan of the records."""
    every = list(store.records())  # read from the keys, not an index
    seen = {r.id: store.observations(r.id) for r in every}

    def ids(**kw: Any) -> list[str]:
        return [r.id for r in store.records(**kw)]

    def scan(keep: Any) -> list[str]:
        return [r.id for r in every if keep(r)]

    for tool in {r.tool for r in every} | {"nothing"}:
        assert ids(tool=tool) == scan(lambda r, t=tool: r.tool == t), tool
    for key in {r.key for r in every if r.key} | {"nothing"}:
        assert ids(key=key) == scan(lambda r, k=key: r.key == k), key
    sessions = {o.session for s in seen.values() for o in s if o.session} | {"nothing"}
    for session in sessions:
        expected = scan(lambda r, s=session: any(o.session == s for o in seen[r.id]))
        assert ids(session=session) == expected, session
        assert ids(session=session, tool="t1") == [i for i in expected if store.get(i).tool == "t1"]
    for target in {r.id for r in every}:
        assert ids(refers_to=target) == scan(lambda r, t=target: t in r.meta.values())
    times = sorted({o.at for s in seen.values() for o in s})
    last = {i: max(o.at for o in s) for i, s in seen.items()}
    for since in [*times[:: max(1, len(times) // 6)], times[-1] + timedelta(seconds=1)]:
        assert ids(since=since) == scan(lambda r, t=since: last[r.id] >= t), since
    for n in (1, 2, 7):
        assert ids(newest_first=True, limit=n) == [r.id for r in every[::-1][:n]]
        assert ids(limit=n) == [r.id for r in every[:n]]
        assert (
            ids(tool="t0", newest_first=True, limit=n) == scan(lambda r: r.tool == "t0")[::-1][:n]
        )
    for r in every:
        prefix = r.id[:6]
        if len(scan(lambda x, p=prefix: x.id.startswith(p))) == 1:
            assert store.resolve(prefix) == r.id
        else:
            with pytest.raises(ad.AmbiguousId):
                store.resolve(prefix)
    stats = store.stats().model_dump()
    del stats["location"]
    assert stats == brute_stats(store)


def make_record(
    rng: random.Random, n: int, at: datetime, session: str | None, targets: list[str]
) -> tuple[ad.Record, bytes]:
    payload = f"payload {n % 40}".encode() * (1 + n % 7)  # some payloads shared
    tool = f"t{rng.randrange(3)}"
    args = {"n": n}
    key = rng.choice([None, None, f"k{rng.randrange(8)}"])
    meta: dict[str, Any] = {}
    if targets and rng.random() < 0.3:
        meta = {rng.choice(["verifies", "found_by"]): rng.choice(targets), "rank": 1}
    digest = ad.ids.content_hash(payload)
    rid = ad.ids.result_id(tool, ad.ids.canonical_args(args), key, digest)
    record = ad.Record(
        id=rid,
        tool=tool,
        args=args,
        key=key,
        determinism="nondeterministic",
        content_hash=digest,
        size=len(payload),
        media_type="text/plain",
        observed_at=at,
        session=session,
        meta=meta,
    )
    return record, payload


def test_every_index_agrees_with_the_records_through_writes_pins_and_gc(
    store: ad.Store,
) -> None:
    assert isinstance(store, ad.KeyValueStore)
    rng = random.Random(11)
    at = T0
    written: list[tuple[ad.Record, bytes]] = []
    sessions = [None, "s0", "s1", "s2"]
    for step in range(260):
        at += timedelta(seconds=rng.choice([1, 1, 5, 60]))
        roll = rng.random()
        if roll < 0.7 or not written:
            targets = [r.id for r, _ in written[-30:]]
            record, payload = make_record(rng, step, at, rng.choice(sessions), targets)
            assert store.put(record, payload)
            written.append((record, payload))
        elif roll < 0.85:  # the same call, the same answer: seen again, maybe elsewhere
            record, payload = rng.choice(written)
            again = record.model_copy(update={"observed_at": at, "session": rng.choice(sessions)})
            store.put(again, payload)
        elif roll < 0.95:
            record, _ = rng.choice(written)
            with contextlib.suppress(ad.AddressableError):  # removed by gc
                store.pin(record.id)
        else:
            store.unpin(rng.choice(written)[0].id)
        if step in (120, 200):
            check_indexes(store)
            report = store.gc(max_age=timedelta(minutes=30), now=at)
            assert report.removed_records
            for gone in report.removed_records:
                assert store.resolve(gone) == gone
                with pytest.raises(ad.Expired):
                    store.get(gone)
            check_indexes(store)
    check_indexes(store)
    store.gc(max_bytes=200, now=at)
    check_indexes(store)
    # Everything unpinned, everything gone: the tools and sessions go from the stats too.
    for record, _ in written:
        store.unpin(record.id)
    store.gc(max_age=timedelta(seconds=1), now=at + timedelta(days=1))
    stats = store.stats()
    assert (stats.records, stats.blobs, stats.blob_bytes, stats.pinned) == (0, 0, 0, 0)
    assert (stats.sessions, stats.by_tool, stats.oldest, stats.newest) == (0, {}, None, None)
    assert list(store.records(session="s1")) == list(store.records(key="k1")) == []


def test_reindexing_gives_the_same_answers(store: ad.Store) -> None:
    assert isinstance(store, ad.KeyValueStore)
    rng = random.Random(5)
    at = T0
    written: list[tuple[ad.Record, bytes]] = []
    for step in range(900):  # over 5,000 index entries: reindexed in batches
        at += timedelta(seconds=7)
        if written and step % 4 == 0:
            record, payload = rng.choice(written)
            store.put(record.model_copy(update={"observed_at": at, "session": "late"}), payload)
        else:
            record, payload = make_record(rng, step, at, rng.choice([None, "a", "b"]), [])
            store.put(record, payload)
            written.append((record, payload))
    store.pin(written[3][0].id)
    assert store.gc(max_age=timedelta(minutes=100), now=at).removed_records
    before = (store.stats(), [r.id for r in store.records(session="late")])
    assert store.reindex() == before[0].records
    assert (store.stats(), [r.id for r in store.records(session="late")]) == before
    check_indexes(store)


# -- a reindex cut short ----------------------------------------------------------------


def test_a_store_whose_reindex_was_cut_short_is_indexed_again_on_opening(
    shared_url: str, clock: FakeClock
) -> None:
    with ad.open_store(shared_url) as store:
        fetched = fetches(ad.Toolkit(store, session="old", clock=clock), 3, clock)
        ad.Toolkit(store, session="later", clock=clock).record(
            "fetch",
            {"url": "https://x.test/0"},
            b"page 0",
            determinism="deterministic",
            key="https://x.test/0",
        )
        store.pin(fetched[1].id)
        before = store.stats()
        assert isinstance(store, ad.KeyValueStore)
        store._backend.drop_indexes()  # what a reindex does first: the marker goes too
    with ad.open_store(shared_url) as store:
        assert store.stats() == before
        assert [r.id for r in store.records(session="later")] == [fetched[0].id]
        assert [r.id for r in store.records(key="https://x.test/2")] == [fetched[2].id]
        assert isinstance(store, ad.KeyValueStore)
        check_indexes(store)
    with ad.open_store(shared_url) as store:  # indexed whole: not again
        assert isinstance(store, ad.KeyValueStore)
        backend = Counting(store._backend)
        assert ad.KeyValueStore(backend).stats() == before  # type: ignore[arg-type]
        assert RECORD not in backend.listed


# -- many writers at once -----------------------------------------------------------------


def fresh_redis(redis_url: str) -> str:
    return f"{redis_url}?namespace=ix-{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=["disk", "redis"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "disk":
        ad.DiskStore(tmp_path / "store").close()  # created before the writers race to
        yield str(tmp_path / "store")
    else:
        yield fresh_redis(request.getfixturevalue("redis_url"))


def test_indexes_hold_under_concurrent_writers(shared_url: str) -> None:
    outputs = run_writers(shared_url, 3, 150, shared=5)
    with ad.open_store(shared_url) as store:
        assert isinstance(store, ad.KeyValueStore)
        stats = store.stats()
        assert stats.records == 3 * 150 + 5
        assert stats.by_tool == {"shared": 5, "write": 450}
        assert stats.sessions == 3
        for n, out in enumerate(outputs):
            mine = [r.id for r in store.records(session=f"w{n}", tool="write")]
            assert mine == out  # each writer's, in the order it wrote them
            assert [r.id for r in store.records(key=f"w{n}/7")] == [out[7]]
        shared = list(store.records(tool="shared"))
        for record in shared:
            sessions = {o.session for o in store.observations(record.id)}
            assert sessions == {"w0", "w1", "w2"}
            assert len(store.observations(record.id)) == 3 * 150 // 5
        for n in range(3):
            assert {r.id for r in store.records(session=f"w{n}", tool="shared")} == {
                r.id for r in shared
            }
        check_indexes(store)
        assert store.verify().ok
