"""`verify` checks records, not only payloads; payloads no record points to are reclaimed.

The damage is done the way it happens: a record's stored bytes edited by hand (through
the backend, in the SQLite file on disk, on the Redis server), and a writer process
killed after its payload reached the disk but before its record did.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis

import addressable as ad
from addressable.store.keys import BLOB, RECORD, blob_key
from tests.helpers import FakeClock


def fill(store: ad.Store, clock: FakeClock) -> tuple[ad.Result, ad.Result]:
    kit = ad.Toolkit(store, session="s", clock=clock)
    edited = kit.record(
        "fetch",
        {"url": "https://x/a"},
        b"<p>a</p>",
        determinism="deterministic",
        key="https://x/a",
        media_type="text/html",
    )
    kept = kit.record("search", {"q": "b"}, b"hits", determinism="nondeterministic")
    return edited, kept


def backend(store: ad.Store) -> ad.Backend:
    assert isinstance(store, ad.KeyValueStore)
    return store._backend


def edit(store: ad.Store, record_id: str, old: bytes, new: bytes) -> None:
    """Change the stored bytes of a record as a hand edit would: in place, nothing else."""
    raw = backend(store).get(RECORD + record_id)
    assert raw is not None and raw.count(old) == 1
    backend(store).set(RECORD + record_id, raw.replace(old, new))


def assert_altered(store: ad.Store, damaged_id: str, kept: ad.Result) -> None:
    report = store.verify()
    assert not report.ok
    assert [(d.id, d.problem) for d in report.damaged] == [(damaged_id, "altered")]
    with pytest.raises(ad.IntegrityError, match=f"record of result {damaged_id}"):
        ad.Toolkit(store).replay(damaged_id)
    assert ad.Toolkit(store).replay(kept.id).payload == b"hits"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(b'"key":"https://x/a"', b'"key":"https://x/b"', id="key"),
        pytest.param(b'"args":{"url":"https://x/a"}', b'"args":{"url":"https://x/b"}', id="args"),
        pytest.param(b'"media_type":"text/html"', b'"media_type":"text/plain"', id="media_type"),
        pytest.param(b'"determinism":"deterministic"', b'"determinism":"side_effect"', id="kind"),
        pytest.param(b'"size":8', b'"size":9', id="size"),
        pytest.param(b'"session":"s"', b'"session":"t"', id="session"),
    ],
)
def test_a_hand_edited_record_is_damage(
    store: ad.Store, clock: FakeClock, old: bytes, new: bytes
) -> None:
    edited, kept = fill(store, clock)
    edit(store, edited.id, old, new)
    assert_altered(store, edited.id, kept)


def test_stats_passes_over_a_damaged_oldest_or_newest_record(
    store: ad.Store, clock: FakeClock
) -> None:
    edited, kept = fill(store, clock)  # edited: the oldest
    clock.advance(hours=1)
    newest = ad.Toolkit(store, clock=clock).record("t", {}, b"new", determinism="deterministic")
    edit(store, edited.id, b'"size":8', b'"size":9')
    stats = store.stats()
    assert (stats.records, stats.oldest, stats.newest) == (3, kept.record.observed_at, clock.now)
    edit(store, newest.id, b'"size":3', b'"size":4')
    assert store.stats().newest == kept.record.observed_at
    assert [d.id for d in store.verify().damaged] == sorted([edited.id, newest.id])


def _edit_in_the_file(path: Path, record_id: str) -> None:
    with sqlite3.connect(path / "cache.db") as db:
        row = db.execute(
            "SELECT value FROM addressable_records WHERE id = ?", (record_id,)
        ).fetchone()
        assert row is not None
        value = row[0]
        assert b'"media_type":"text/html"' in value
        changed = bytes(value).replace(b"text/html", b"text/plain")
        db.execute("UPDATE addressable_records SET value = ? WHERE id = ?", (changed, record_id))


def test_a_record_edited_with_sqls_text_functions_is_named_not_a_crash(
    tmp_path: Path, clock: FakeClock
) -> None:
    # SQL's replace() gives TEXT back, where the store writes BLOBs: verify, listings
    # and replay name the edited record, and read one only retyped as it was.
    with ad.DiskStore(tmp_path / "s") as store:
        edited, kept = fill(store, clock)
    with sqlite3.connect(tmp_path / "s" / "cache.db") as db:
        sql = "UPDATE addressable_records SET value = replace(value, ?, ?) WHERE id = ?"
        db.execute(sql, ("text/html", "text/plain", edited.id))
        sql = "UPDATE addressable_records SET value = CAST(value AS TEXT), "
        sql += "payload = CAST(payload AS TEXT) WHERE id = ?"
        db.execute(sql, (kept.id,))
    with ad.DiskStore(tmp_path / "s") as store:
        assert_altered(store, edited.id, kept)
        damaged: list[str] = []
        assert [r.id for r in store.records(damaged=damaged)] == [kept.id]
        assert damaged == [edited.id]
        assert store.stats().records == 2


def test_a_record_edited_in_the_sqlite_file_is_damage(tmp_path: Path, clock: FakeClock) -> None:
    with ad.DiskStore(tmp_path / "s") as store:
        edited, kept = fill(store, clock)
    _edit_in_the_file(tmp_path / "s", edited.id)
    with ad.DiskStore(tmp_path / "s") as store:
        assert_altered(store, edited.id, kept)


def test_a_record_edited_while_the_store_is_open_is_damage(
    tmp_path: Path, clock: FakeClock
) -> None:
    # The store keeps records it wrote and read parsed; an edit made meanwhile by another
    # process is still refused, not served from what it parsed before.
    with ad.DiskStore(tmp_path / "s") as store:
        edited, kept = fill(store, clock)
        assert ad.Toolkit(store).replay(edited.id).record.media_type == "text/html"
        _edit_in_the_file(tmp_path / "s", edited.id)
        assert_altered(store, edited.id, kept)


def test_a_record_edited_on_the_redis_server_is_damage(redis_url: str, clock: FakeClock) -> None:
    namespace = f"t-{uuid.uuid4().hex[:12]}"
    with ad.open_store(f"{redis_url}?namespace={namespace}") as store:
        edited, kept = fill(store, clock)
        server = redis.Redis.from_url(redis_url)
        name = f"{namespace}:{RECORD}{edited.id}"
        value = server.get(name)
        assert isinstance(value, bytes)
        server.set(name, value.replace(b'"key":"https://x/a"', b'"key":"https://x/b"'))
        server.close()
        assert_altered(store, edited.id, kept)


def without_checksum(store: ad.Store, result: ad.Result) -> None:
    """Store a record as its JSON alone, without the checksum line the store writes."""
    raw = result.record.model_dump_json(exclude_none=True).encode()
    backend(store).set(RECORD + result.id, raw)


@pytest.mark.parametrize(
    ("checksum", "problem"),
    [pytest.param(True, "altered", id="checksum"), pytest.param(False, "unreadable", id="plain")],
)
def test_gc_keeps_the_payload_of_a_record_it_cannot_read(
    store: ad.Store, clock: FakeClock, checksum: bool, problem: str
) -> None:
    # The record is damage to report, not garbage: its payload is all that is left of it.
    edited, _ = fill(store, clock)
    if not checksum:
        without_checksum(store, edited)
    edit(store, edited.id, b'"determinism":"deterministic"', b'"determinism":"bogus"')
    store.gc()
    assert backend(store).contains(blob_key(edited.record.content_hash))
    report = store.verify()
    assert [(d.id, d.problem) for d in report.damaged] == [(edited.id, problem)]
    assert report.orphan_blobs == 0


# A writer that stops for good between writing a payload file and committing its record,
# the moment a SIGKILL can land on any writer of large payloads.
STOPPED_WRITER = """
import sys, time
import diskcache.core
import addressable as ad

store_file = diskcache.core.Disk.store

def store_then_stop(self, value, read, key=diskcache.core.UNKNOWN):
    stored = store_file(self, value, read, key=key)
    if stored[2] is not None:  # a file of its own was written
        print("payload on disk", flush=True)
        time.sleep(120)
    return stored

diskcache.core.Disk.store = store_then_stop
kit = ad.Toolkit(ad.DiskStore(sys.argv[1]))
kit.record("fetch", {"url": "https://x/big"}, b"z" * 200_000, determinism="deterministic")
"""


def payload_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*/*/*.val"))


def test_a_payload_file_left_by_a_killed_writer_is_reclaimable(
    tmp_path: Path, clock: FakeClock
) -> None:
    directory = tmp_path / "s"
    with ad.DiskStore(directory) as store:
        _, kept = fill(store, clock)
        big = ad.Toolkit(store).record("t", {}, b"y" * 150_000, determinism="deterministic")
    (directory / "notes.txt").write_text("mine")  # not the store's: never touched
    with subprocess.Popen(
        [sys.executable, "-c", STOPPED_WRITER, str(directory)], stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "payload on disk"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert len(payload_files(directory)) == 2  # big's, and the killed writer's

    with ad.DiskStore(directory) as store:
        assert len(list(store.records())) == 3
        report = store.verify()
        assert report.ok  # space to reclaim, not damage
        assert (report.orphan_blobs, report.orphan_bytes) == (1, 200_000)
        gc = store.gc()
        assert gc.removed_records == []
        assert (gc.removed_blobs, gc.freed_bytes) == (1, 200_000)
        assert payload_files(directory) != [] and len(payload_files(directory)) == 1
        after = store.verify()
        assert after.ok and (after.orphan_blobs, after.orphan_bytes) == (0, 0)
        assert ad.Toolkit(store).replay(big.id).payload == b"y" * 150_000
        assert ad.Toolkit(store).replay(kept.id).payload == b"hits"
    assert (directory / "notes.txt").read_text() == "mine"


def test_blob_keys_without_records_are_reclaimable_on_every_store(store: ad.Store) -> None:
    backend(store).set(BLOB + "0" * 32, b"left behind")
    report = store.verify()
    assert report.ok and (report.orphan_blobs, report.orphan_bytes) == (1, 11)
    assert store.gc().removed_blobs == 1
    assert store.verify().orphan_blobs == 0


def test_a_listing_goes_on_past_a_damaged_record_and_names_it(
    store: ad.Store, clock: FakeClock
) -> None:
    edited, kept = fill(store, clock)
    edit(store, edited.id, b'"size":8', b'"size":9')
    with pytest.raises(ad.IntegrityError, match=edited.id):
        list(store.records())
    damaged: list[str] = []
    assert [r.id for r in store.records(damaged=damaged)] == [kept.id]
    assert damaged == [edited.id]
    damaged = []
    newest = store.records(newest_first=True, limit=5, damaged=damaged)
    assert [r.id for r in newest] == [kept.id] and damaged == [edited.id]


def test_ls_lists_the_others_and_exits_4_naming_the_damaged(
    tmp_path: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    from addressable.cli import main

    path = tmp_path / "s"
    with ad.DiskStore(path) as store:
        edited, kept = fill(store, clock)
        edit(store, edited.id, b'"size":8', b'"size":9')
    for extra in ([], ["--limit", "5"]):
        code = main(["ls", "--store", str(path), "--json", *extra])
        out, err = capsys.readouterr()
        assert code == 4 and [r["id"] for r in json.loads(out)] == [kept.id]
        assert f"1 damaged record not listed: {edited.id}" in err
