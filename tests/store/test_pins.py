"""Pins: a user's last until unpinned; compaction's end with their session or their age."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import addressable as ad
from addressable.context.compaction import STUB_PIN_AGE
from tests.helpers import DAY, FakeClock, exists
from tests.helpers.modelloop import grep_session


def compacted(kit: ad.Toolkit) -> list[str]:
    """Compact a foreign session: the ids of the records the stubs point to."""
    evicted = ad.compact(grep_session(), kit=kit, keep_last=3).evicted
    assert evicted
    return [e.id for e in evicted]


def test_a_compaction_pin_ends_after_its_age_and_gc_frees_the_record(
    disk_kit: ad.Toolkit, clock: FakeClock
) -> None:
    store = disk_kit.store
    ids = compacted(disk_kit)
    for record_id in ids:
        pin = store.pin_info(record_id)
        assert pin is not None and pin.reason == "stub" and pin.sessions == [disk_kit.session]
        assert pin.until == clock.now + STUB_PIN_AGE
    soon = clock.now + STUB_PIN_AGE - DAY
    report = store.gc(max_age=timedelta(seconds=1), now=soon)
    assert report.kept_pinned == len(ids) and all(exists(store, i) for i in ids)
    later = clock.now + STUB_PIN_AGE + DAY
    store.gc(max_age=timedelta(seconds=1), now=later)
    assert not any(exists(store, i) for i in ids)
    assert all(store.pin_info(i) is None for i in ids)


def test_compacting_again_refreshes_the_age(disk_kit: ad.Toolkit, clock: FakeClock) -> None:
    ids = compacted(disk_kit)
    clock.advance(days=5)
    assert compacted(ad.Toolkit(disk_kit.store, session="test", clock=clock)) == ids
    disk_kit.store.gc(max_age=timedelta(seconds=1), now=clock.now + STUB_PIN_AGE - DAY)
    assert all(exists(disk_kit.store, i) for i in ids)


def test_a_user_pin_does_not_end(disk_kit: ad.Toolkit, clock: FakeClock) -> None:
    store = disk_kit.store
    first, *others = compacted(disk_kit)
    store.pin(first)  # by hand: stays, whatever compaction did
    compacted(ad.Toolkit(store, session="other", clock=clock))  # does not weaken it
    assert store.end_session("test") == 0  # "other" holds them still
    assert store.end_session("other") == len(others)
    store.gc(max_age=timedelta(seconds=1), now=clock.now + 10 * STUB_PIN_AGE)
    assert exists(store, first)
    assert not any(exists(store, i) for i in others)
    pin = store.pin_info(first)
    assert pin is not None and pin.reason == "user" and pin.until is None


def test_a_pin_ends_with_the_sessions_that_made_it(disk_kit: ad.Toolkit, clock: FakeClock) -> None:
    store = disk_kit.store
    ids = compacted(disk_kit)
    compacted(ad.Toolkit(store, session="other", clock=clock))
    assert store.end_session("test") == 0  # "other" still holds them
    assert all(store.is_pinned(i, now=clock.now) for i in ids)
    assert store.end_session("other") == len(ids)
    store.gc(max_age=timedelta(seconds=1), now=clock.now + DAY)
    assert not any(exists(store, i) for i in ids)


def test_stats_shows_why_records_are_pinned(disk_kit: ad.Toolkit, clock: FakeClock) -> None:
    store = disk_kit.store
    first, *others = compacted(disk_kit)
    store.pin(first)
    stats = store.stats()
    assert stats.pinned == len(others) + 1
    assert stats.pinned_by_reason == {"stub": len(others), "user": 1}
    store.unpin(first)
    store.gc(now=clock.now + 2 * STUB_PIN_AGE, max_age=timedelta(days=10_000))
    assert store.stats().pinned_by_reason == {}
    assert store.stats().pinned == 0


def test_bad_pins_are_refused(disk_kit: ad.Toolkit) -> None:
    (record_id, *_) = compacted(disk_kit)
    with pytest.raises(ad.ArgumentError, match="user pin"):
        disk_kit.store.pin(record_id, session="s")
    with pytest.raises(ad.ArgumentError, match="time zone"):
        disk_kit.store.pin(record_id, reason="stub", until=datetime(2030, 1, 1))


def test_a_pin_for_another_reason_ends_neither_before_its_time(disk_kit: ad.Toolkit) -> None:
    store = disk_kit.store
    rid = disk_kit.record("t", {"x": 1}, b"cited", determinism="deterministic").id
    later = datetime.now(UTC) + timedelta(days=7)
    store.pin(rid, reason="checkpoint", session="B", until=later)
    store.pin(rid, reason="stub", session="A", until=later - timedelta(days=1))
    store.end_session("A")  # the stub's session ends; the checkpoint's has not
    held = store.pin_info(rid)
    assert held is not None and held.sessions == ["B"] and held.until == later
    assert store.is_pinned(rid)
    store.gc(max_age=timedelta(seconds=1), now=datetime.now(UTC) + timedelta(days=1))
    assert exists(store, rid)


def test_unpinning_a_user_pin_leaves_the_stub_pin_it_was_put_over(store: ad.Store) -> None:
    kit = ad.Toolkit(store, session="work")  # pins end by the real time: the kit's too
    ids = compacted(kit)
    held, other = ids[0], ids[1:]
    store.pin(held)  # the user pins a record a live stub points to, then unpins it
    assert store.stats().pinned_by_reason == {"stub": len(other), "user": 1}
    store.unpin(held)
    pin = store.pin_info(held)
    assert pin is not None and (pin.reason, pin.sessions) == ("stub", ["work"])
    tomorrow = datetime.now(UTC) + DAY
    store.gc(max_age=timedelta(seconds=1), now=tomorrow)
    assert all(exists(store, i) for i in ids)  # every stub still has its record
    # A stub pin made while the user's holds waits under it too, and ends with its
    # session as any other.
    store.pin(held)
    store.pin(held, reason="stub", session="later", until=tomorrow + STUB_PIN_AGE)
    assert store.end_session("work") == len(other)
    store.unpin(held)
    pin = store.pin_info(held)
    assert pin is not None and (pin.reason, pin.sessions) == ("stub", ["later"])
    store.end_session("later")
    store.gc(max_age=timedelta(seconds=1), now=tomorrow)
    assert not exists(store, held)
