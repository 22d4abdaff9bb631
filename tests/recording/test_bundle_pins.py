"""Pins travel in bundles as they were: a compaction's stub pin keeps its reason, its
sessions and its end, a user pin stays a user pin, and a bundle written before pins
had reasons still imports (its pins as user pins)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.context.compaction import STUB_PIN_AGE
from tests.helpers import DAY, FakeClock, exists
from tests.helpers.bundles import assert_refused, read, record_lines, write
from tests.helpers.modelloop import grep_session


def export(store: ad.Store, path: Path) -> Path:
    with path.open("wb") as f:
        ad.export_bundle(store, f)
    return path


def compacted(store: ad.Store, clock: FakeClock, session: str) -> list[str]:
    """Compact a foreign session in `session`: the ids its stubs point to (stub pins)."""
    evicted = ad.compact(grep_session(), kit=ad.Toolkit(store, session=session, clock=clock))
    assert evicted.evicted
    return [e.id for e in evicted.evicted]


def test_a_stub_pin_comes_back_as_it_was_and_ends_when_it_did(
    tmp_path: Path, clock: FakeClock
) -> None:
    source = ad.DiskStore(tmp_path / "source")
    ids = compacted(source, clock, "one")
    pins = {i: source.pin_info(i) for i in ids}
    for pin in pins.values():
        assert pin is not None and pin.reason == "stub" and pin.sessions == ["one"]
        assert pin.until == clock.now + STUB_PIN_AGE
    first = export(source, tmp_path / "first.jsonl")
    source.close()

    target = ad.DiskStore(tmp_path / "target")
    ad.import_bundle(target, first)
    assert {i: target.pin_info(i) for i in ids} == pins  # reason, sessions, until
    assert export(target, tmp_path / "second.jsonl").read_bytes() == first.read_bytes()

    # It ends when it did in the source: gc keeps it before, frees it after.
    report = target.gc(max_age=timedelta(seconds=1), now=clock.now + STUB_PIN_AGE - DAY)
    assert report.kept_pinned == len(ids) and all(exists(target, i) for i in ids)
    report = target.gc(max_age=timedelta(seconds=1), now=clock.now + STUB_PIN_AGE + DAY)
    assert set(ids) <= set(report.removed_records)
    assert not any(exists(target, i) for i in ids)
    target.close()


def test_a_pin_of_several_sessions_keeps_them_all_and_ends_with_them(
    tmp_path: Path, clock: FakeClock
) -> None:
    source = ad.open_store("memory://")
    ids = compacted(source, clock, "one")
    clock.advance(days=2)
    assert compacted(source, clock, "two") == ids
    pin = source.pin_info(ids[0])
    assert pin is not None and pin.sessions == ["one", "two"]
    assert pin.until == clock.now + STUB_PIN_AGE  # the later end
    bundle = export(source, tmp_path / "b.jsonl")

    target = ad.open_store("memory://")
    ad.import_bundle(target, bundle)
    assert target.pin_info(ids[0]) == pin
    ad.import_bundle(target, bundle)  # again: the same pin, not a longer one
    assert target.pin_info(ids[0]) == pin
    target.end_session("one")
    assert target.is_pinned(ids[0], now=clock.now)
    target.end_session("two")
    assert target.pin_info(ids[0]) is None  # every session that made it has ended


def test_a_user_pin_stays_a_user_pin(tmp_path: Path, clock: FakeClock) -> None:
    source = ad.open_store("memory://")
    kit = ad.Toolkit(source, session="s", clock=clock)
    pinned = kit.record("t", {"q": 1}, b"keep me", determinism="deterministic")
    loose = kit.record("t", {"q": 2}, b"not pinned", determinism="deterministic")
    source.pin(pinned.id)
    bundle = export(source, tmp_path / "b.jsonl")
    lines = {line["record"]["id"]: line for line in read(bundle) if "record" in line}
    assert lines[pinned.id]["pinned"] is True
    assert lines[pinned.id]["pin"] == {"reason": "user", "sessions": [], "until": None}
    assert lines[loose.id]["pinned"] is False and "pin" not in lines[loose.id]

    target = ad.open_store("memory://")
    ad.import_bundle(target, bundle)
    held = target.pin_info(pinned.id)
    assert held is not None and held == source.pin_info(pinned.id)
    assert (held.reason, held.sessions, held.until) == ("user", [], None)
    assert target.pin_info(loose.id) is None
    target.gc(max_age=timedelta(seconds=1), now=clock.now + 100 * STUB_PIN_AGE)
    assert exists(target, pinned.id) and not exists(target, loose.id)


def test_a_line_pinned_without_its_pin_is_refused(tmp_path: Path, clock: FakeClock) -> None:
    source = ad.open_store("memory://")
    compacted(source, clock, "one")
    bundle = export(source, tmp_path / "b.jsonl")
    lines = read(bundle)
    index = next(i for i in record_lines(lines) if "pin" in lines[i])
    del lines[index]["pin"]
    write(bundle, lines)
    assert_refused(bundle, ad.open_store("memory://"), f":{index + 1}: .*gives no pin")


@pytest.mark.parametrize(
    ("pin", "pinned", "named"),
    [
        pytest.param({"until": "2026-03-18T09:00:00"}, True, "has no time zone", id="naive"),
        pytest.param({"reason": "not a word"}, True, "reason must be a word", id="reason"),
        pytest.param({"reason": "user", "sessions": ["s"]}, True, "user pin", id="user-session"),
        pytest.param({"sessions": ["", "s"]}, True, "sessions must be named", id="no-name"),
        pytest.param({"sessions": "s"}, True, "malformed pin: .*sessions", id="not-a-list"),
        pytest.param({}, False, "gives a pin, but pinned is false", id="pinned-false"),
    ],
)
def test_a_pin_the_store_could_not_hold_is_refused_whole(
    tmp_path: Path, clock: FakeClock, pin: dict[str, Any], pinned: bool, named: str
) -> None:
    source = ad.open_store("memory://")
    compacted(source, clock, "one")
    bundle = export(source, tmp_path / "b.jsonl")
    lines = read(bundle)
    index = next(i for i in record_lines(lines) if "pin" in lines[i])
    lines[index]["pin"].update(pin)
    lines[index]["pinned"] = pinned
    write(bundle, lines)
    message = assert_refused(bundle, ad.open_store("memory://"), f":{index + 1}: .*{named}")
    assert message.startswith(f"{bundle}:{index + 1}: ")  # the line, and what was wrong


def test_a_user_pin_put_over_a_stub_pin_travels_with_it(tmp_path: Path) -> None:
    source = ad.open_store("memory://")
    evicted = ad.compact(grep_session(), kit=ad.Toolkit(source, session="work")).evicted
    rid = evicted[0].id
    source.pin(rid)
    bundle = export(source, tmp_path / "b.jsonl")
    target = ad.open_store("memory://")
    ad.import_bundle(target, bundle)
    assert target.pin_info(rid) == source.pin_info(rid)
    target.unpin(rid)
    held = target.pin_info(rid)
    assert held is not None and (held.reason, held.sessions) == ("stub", ["work"])
