"""A store for the tests of gc cut short or raced: old records that gc removes and new
ones that it keeps, sharing payloads, some of them large (a file each on disk), some old
ones seen again, pinned, or with stubs and shown texts; and the checks that a store is
sound after whatever happened to gc.

Processes the tests start import it too (they run from the repository's root).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import addressable as ad
from addressable.core.records import Observation
from tests.helpers import FakeClock

OLD = datetime(2026, 1, 1, tzinfo=UTC)
NEW = OLD + timedelta(days=60)
NOW = NEW + timedelta(days=1)
MAX_AGE = timedelta(days=30)  # removes what was last seen at OLD, keeps what at NEW
LARGE = 130 * 1024  # past the disk store's file threshold


def payload(n: int) -> bytes:
    """Every fifth a large one; payloads repeat, so that old and new records share them."""
    if n % 5 == 0:
        return (f"large {n % 25} ".encode() * LARGE)[:LARGE]
    return f"small {n % 30} ".encode() * (1 + n % 4)


def fill(store: ad.Store, old: int = 40, new: int = 12) -> dict[str, bytes]:
    """Old and new records as above; their ids and payloads."""
    made: dict[str, bytes] = {}
    for n, when in [*((n, OLD) for n in range(old)), *((n, NEW) for n in range(old, old + new))]:
        kit = ad.Toolkit(store, session=f"s{n % 3}", clock=FakeClock(when))
        data = payload(n)
        key = f"k{n % 4}" if n % 2 else None
        res = kit.record(f"t{n % 3}", {"n": n}, data, determinism="deterministic", key=key)
        made[res.id] = data
    ids = list(made)
    store.add_observation(ids[1], Observation(at=NEW, session="later"))  # seen again: kept
    store.pin(ids[2])  # kept
    for n in (3, 4, 6):  # what goes with a removed record
        store.set_stub(f"{n:064x}", ids[n], b"stub")
        store.set_shown(ad.ids.content_hash(f"shown {n}".encode()), ids[n])
    return made


def check_sound(store: ad.Store, made: dict[str, bytes]) -> None:
    """Every record left replays byte for byte, every other one made is `Expired` (or
    never was: NotFound only for none), the indexes find every record, `verify` is
    clean, and the counts are right."""
    kit = ad.Toolkit(store)
    left = {r.id for r in store.records()}
    assert left <= set(made)
    for record_id, data in made.items():
        if record_id in left:
            assert kit.replay(record_id).payload == data, record_id
        else:
            try:
                store.get(record_id)
            except ad.Expired:
                continue
            raise AssertionError(f"{record_id} is neither there nor expired")
    for k in range(4):
        expected = sorted(i for i in left if store.get(i).key == f"k{k}")
        assert sorted(r.id for r in store.records(key=f"k{k}")) == expected
    report = store.verify()
    assert report.ok, report
    stats = store.stats()
    assert stats.records == len(left)
    assert stats.blobs == len({ad.ids.content_hash(made[i]) for i in left})


def write_again(store: ad.Store, made: dict[str, bytes]) -> None:
    """New records of every payload made, the removed ones' too: each replays."""
    kit = ad.Toolkit(store, clock=FakeClock(NOW))
    for n, data in enumerate(sorted(set(made.values()))):
        res = kit.record("again", {"n": n}, data, determinism="deterministic")
        assert kit.replay(res.id).payload == data
