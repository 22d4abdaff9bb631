"""A gc cut short, at any point, leaves a sound store; a reader or a pin racing gc.

gc removes records in batches, each one step (a transaction on disk, a script on
Redis) that deletes a payload's file only once it has committed. Whatever stops it, a
fault in a delete or a SIGKILL at a random moment, every record left replays byte for
byte, every one removed is `Expired`, `verify` is clean, and the same bytes written
again replay (see `tests.helpers.gcstore` for the store and the checks).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
import addressable.store.kv as kv
from addressable.store.disk.store import _DiskBackend
from addressable.store.models import Pin
from tests.helpers import ROOT
from tests.helpers.gcstore import MAX_AGE, NOW, check_sound, fill, write_again

BACKENDS = ["disk", "redis"]


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "disk":
        yield f"disk://{tmp_path / 'store'}"
    else:
        yield f"{request.getfixturevalue('redis_url')}?namespace=gc-{uuid.uuid4().hex[:12]}"


def gc_to_the_end(store: ad.Store, made: dict[str, bytes]) -> None:
    """A gc run to its end, after whatever came before: the store is sound, and what it
    removed can be written again."""
    store.gc(max_age=MAX_AGE, now=NOW)
    check_sound(store, made)
    assert len(list(store.records())) < len(made)
    write_again(store, made)


class Fault(Exception):
    """Raised where a delete was to happen."""


@pytest.mark.parametrize("at", range(1, 25))
def test_a_gc_that_fails_at_a_delete_leaves_a_sound_store(
    url: str, at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Many batches: some done, one cut, some not begun.
    monkeypatch.setattr(kv, "_BATCH", 4 if url.startswith("disk") else 2)
    calls = [0]
    if url.startswith("disk"):
        # Right after a delete of gc's batches (a record, a payload and its file, its
        # token count), every third one through the run: the batch's transaction is
        # rolled back around the fault.
        real = _DiskBackend.delete

        def delete(self: _DiskBackend, key: str) -> None:
            real(self, key)
            if key.startswith(("r:", "b:", "t:")):
                calls[0] += 1
                if calls[0] == 3 * at:
                    raise Fault(key)

        monkeypatch.setattr(_DiskBackend, "delete", delete)
    else:
        # A batch is one script: the fault falls before one runs, or after it ran and
        # before gc heard back (a connection lost then).
        real_sweep = kv.sweep

        def sweep(*args: Any) -> Any:
            calls[0] += 1
            if calls[0] == (at + 1) // 2 and at % 2:
                raise Fault("before")
            done = real_sweep(*args)
            if calls[0] == at // 2:
                raise Fault("after")
            return done

        monkeypatch.setattr(kv, "sweep", sweep)
    with ad.open_store(url) as store:
        made = fill(store)
        with pytest.raises(Fault):
            store.gc(max_age=MAX_AGE, now=NOW)
        check_sound(store, made)
        monkeypatch.undo()
        gc_to_the_end(store, made)


GC = """
import sys, time
import addressable as ad
import addressable.store.kv as kv
from tests.helpers.gcstore import MAX_AGE, NOW
kv._BATCH = 4
store = ad.open_store(sys.argv[1])
store._backend.gc_pause = max(store._backend.gc_pause, 0.04)  # a run long enough to cut
print("start", flush=True)
store.gc(max_age=MAX_AGE, now=NOW)
print("done", flush=True)
"""


@pytest.mark.parametrize("seed", range(20))
def test_a_gc_killed_at_a_random_moment_leaves_a_sound_store(url: str, seed: int) -> None:
    with ad.open_store(url) as store:
        made = fill(store)
    with subprocess.Popen(
        [sys.executable, "-c", GC, url], cwd=ROOT, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "start"
        time.sleep(random.Random(seed).uniform(0.0, 0.8))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    with ad.open_store(url) as store:
        check_sound(store, made)
        gc_to_the_end(store, made)


# Reads every record over and over until gc is over (the stop file is there), then once
# more: what it reads after gc removed a record must say so.
READER = """
import json, os, sys, time
import addressable as ad
store = ad.open_store(sys.argv[1])
ids = json.loads(open(sys.argv[2]).read())
kit = ad.Toolkit(store)
seen = {"bytes": 0, "expired": 0, "wrong": [], "errors": []}
print("reading", flush=True)
end = time.monotonic() + 120
last = False
while not last and time.monotonic() < end:
    last = os.path.exists(sys.argv[3])
    for record_id, data in ids.items():
        try:
            got = kit.replay(record_id).payload
        except ad.Expired:
            seen["expired"] += 1
            continue
        except ad.AddressableError as exc:
            seen["errors"].append(f"{type(exc).__name__}: {exc}")
            continue
        if got == data.encode("latin-1"):
            seen["bytes"] += 1
        else:
            seen["wrong"].append(record_id)
print(json.dumps(seen), flush=True)
"""


def test_a_reader_racing_gc_gets_the_bytes_or_expired(url: str, tmp_path: Path) -> None:
    with ad.open_store(url) as store:
        made = fill(store, old=60, new=4)
        ids = tmp_path / "ids.json"
        ids.write_text(json.dumps({i: d.decode("latin-1") for i, d in made.items()}))
        stop = tmp_path / "stop"
        readers = [
            subprocess.Popen(
                [sys.executable, "-c", READER, url, str(ids), str(stop)],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            for reader in readers:
                assert reader.stdout is not None
                assert reader.stdout.readline().strip() == "reading"
            removed = store.gc(max_age=MAX_AGE, now=NOW).removed_records
        finally:
            stop.touch()  # the readers end, whatever went wrong here
        assert len(removed) > 50
        for reader in readers:
            out = reader.communicate(timeout=120)[0]
            seen = json.loads(out.splitlines()[-1])
            assert seen["errors"] == [] and seen["wrong"] == [], seen
            assert seen["bytes"] > 0 and seen["expired"] > 0, seen
        check_sound(store, made)


def test_a_pin_racing_gc_keeps_its_record_or_raises(url: str) -> None:
    with ad.open_store(url) as store:
        made = fill(store, old=80, new=4)
        before = store.stats().pinned
        with subprocess.Popen(
            [sys.executable, "-c", GC, url], cwd=ROOT, stdout=subprocess.PIPE, text=True
        ) as proc:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "start"
            kept, refused = [], []
            for record_id in made:  # spread over gc's run
                try:
                    store.pin(record_id)
                except ad.Expired:
                    refused.append(record_id)
                else:
                    kept.append(record_id)
                time.sleep(0.02)
            assert proc.stdout.readline().strip() == "done"
        # Both happened: gc removed some before they were pinned, and some pins came
        # first and kept their records.
        assert refused and kept, (refused, kept)
        kit = ad.Toolkit(store)
        for record_id in kept:
            assert store.is_pinned(record_id)
            assert kit.replay(record_id).payload == made[record_id]
        for record_id in refused:
            assert not store.is_pinned(record_id)
            with pytest.raises(ad.Expired):
                store.get(record_id)
        assert store.stats().pinned == len(kept) >= before
        check_sound(store, made)


def gc_pinning_again(
    store: ad.Store, target: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[ad.GcReport, list[str]]:
    """gc, with `target` given a user pin as gc reads the first ended pin; its report,
    and [target] once the pin was made."""
    real = kv.codec.load_pin
    pinned_again: list[str] = []

    def load_pin(raw: bytes) -> Pin:
        held = real(raw)
        if not pinned_again and held.reason == "stub" and not held.live(NOW):
            pinned_again.append(target)
            store.pin(target)  # a user pin, made while gc holds the ended one
        return held

    monkeypatch.setattr(kv.codec, "load_pin", load_pin)
    report = store.gc(max_age=MAX_AGE, now=NOW)
    monkeypatch.undo()
    return report, pinned_again


def test_a_record_pinned_again_after_gc_read_its_ended_pin_is_kept(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # gc reads a pin that has ended; before it removes the record, the user pins it: the
    # record is kept, with the new pin (gc removes an ended pin only as it read it).
    with ad.open_store(url) as store:
        made = fill(store)
        target = next(i for i in made if not store.is_pinned(i))
        store.pin(target, reason="stub", until=NOW - timedelta(days=1))  # ended at NOW
        report, pinned_again = gc_pinning_again(store, target, monkeypatch)
        assert pinned_again == [target]
        assert target not in report.removed_records
        assert store.is_pinned(target)
        assert ad.Toolkit(store).replay(target).payload == made[target]
        check_sound(store, made)


def test_a_pin_renewed_after_gc_read_it_ended_stands_on_a_record_gc_keeps(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # gc reads an ended pin of a record it keeps (a new one); meanwhile the user pins the
    # record again: gc drops the ended pin it read, never the one made since.
    with ad.open_store(url) as store:
        made = fill(store)
        target = list(made)[-1]  # among the newest: gc keeps it
        store.pin(target, reason="stub", until=NOW - timedelta(days=1))  # ended at NOW
        other = list(made)[-2]
        store.pin(other, reason="stub", until=NOW - timedelta(days=1))  # ended, not renewed
        report, renewed = gc_pinning_again(store, target, monkeypatch)
        assert renewed == [target] and target not in report.removed_records
        held = store.pin_info(target)
        assert held is not None and held.reason == "user"
        assert store.pin_info(other) is None  # the ended pin that nobody renewed went
        check_sound(store, made)
