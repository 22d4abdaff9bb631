"""Damage to an index is named by `verify` and mended by `verify --repair`.

A damaged index answers lookups wrongly (`records(key=)` misses records) while every
record still reads well: on disk, bytes flipped in the pages of each SQLite index of the
records' table; on Redis, members taken from or added to the index sets, and the counts
kept beside them changed. `verify` names each, and `addressable verify --repair` (a real
process) builds them again, after which every lookup finds every record.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
import redis

import addressable as ad
from addressable.core.records import Observation
from tests.helpers import FakeClock

SQLITE_INDEXES = {
    "key": "addressable_records_key",
    "session": "addressable_records_session",
    "tool": "addressable_records_tool",
    "time": "addressable_records_at",
    "id": "sqlite_autoindex_addressable_records_1",
}


def fill(store: ad.Store, n: int = 1500) -> dict[str, list[str]]:
    """Records with keys, sessions and tools enough to fill many index pages; the ids
    of each key's records."""
    kit = ad.Toolkit(store, clock=FakeClock())
    by_key: dict[str, list[str]] = {}
    for i in range(n):
        kit.session = f"session-{i % 5}"
        key = f"key-{i % 7}"
        res = kit.record(
            f"tool-{i % 4}", {"n": i}, f"payload {i}".encode(), determinism="deterministic", key=key
        )
        by_key.setdefault(key, []).append(res.id)
    return {k: sorted(v) for k, v in by_key.items()}


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """A disk store filled by `fill` and checked sound, made once: each test damages a
    copy of it."""
    directory = tmp_path_factory.mktemp("filled") / "store"
    with ad.DiskStore(directory) as store:
        by_key = fill(store)
        assert store.verify().ok
    return directory, by_key


def small_store(tmp_path: Path) -> tuple[Path, dict[str, list[str]]]:
    """A disk store of 40 records made by `fill`, for a test that edits one row."""
    directory = tmp_path / "store"
    with ad.DiskStore(directory) as store:
        return directory, fill(store, n=40)


def copied(filled: tuple[Path, dict[str, list[str]]], tmp_path: Path) -> Path:
    directory = tmp_path / "store"
    shutil.copytree(filled[0], directory)
    return directory


def finds_every_record(store: ad.Store, by_key: dict[str, list[str]]) -> None:
    for key, ids in by_key.items():
        assert sorted(r.id for r in store.records(key=key)) == ids
    assert store.stats().records == sum(len(v) for v in by_key.values())


def seen_again(directory: Path, ids: list[str]) -> list[str]:
    """Each record of `ids` seen again a day later, in the session "later" (entries of
    the store's own index table); the ids that session then finds."""
    with ad.DiskStore(directory) as store:
        later = FakeClock().now + timedelta(days=1)
        for record_id in ids:
            store.add_observation(record_id, Observation(at=later, session="later"))
        return sorted(r.id for r in store.records(session="later"))


def repair(url: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "addressable", "verify", "--repair", "--json", "--store", url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def leaf_pages(database: Path, index: str) -> tuple[list[int], int]:
    """The leaf pages of one SQLite index (all of it in the database file), and the
    size of a page."""
    db = sqlite3.connect(database)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = [
        p
        for (p,) in db.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (index,)
        )
    ]
    size = int(db.execute("PRAGMA page_size").fetchone()[0])
    db.close()
    return pages, size


def flip(database: Path, index: str, seed: int) -> None:
    """Flip bytes in the cell contents of some leaf pages of one SQLite index."""
    pages, size = leaf_pages(database, index)
    assert len(pages) >= 3, pages
    rng = random.Random(seed)
    data = bytearray(database.read_bytes())
    for page in rng.sample(pages, 3):
        for _ in range(4):
            data[(page - 1) * size + rng.randrange(size // 2, size)] ^= 0x5A
    database.write_bytes(bytes(data))


@pytest.mark.parametrize("which", list(SQLITE_INDEXES))
@pytest.mark.parametrize("seed", range(2))
def test_damage_to_a_sqlite_index_is_named_and_repaired(
    tmp_path: Path, which: str, seed: int, filled: tuple[Path, dict[str, list[str]]]
) -> None:
    directory, by_key = copied(filled, tmp_path), filled[1]
    flip(directory / "cache.db", SQLITE_INDEXES[which], seed)
    with ad.DiskStore(directory) as store:
        report = store.verify()
    assert not report.ok
    assert any(SQLITE_INDEXES[which] in line for line in report.indexes), report.indexes
    assert all("\n" not in line for line in report.indexes)
    repaired = repair(str(directory))
    assert repaired["ok"] is True and repaired["repaired"]
    with ad.DiskStore(directory) as store:
        finds_every_record(store, by_key)
        assert store.verify().ok


@pytest.mark.parametrize("seed", range(2))
def test_damage_to_the_table_of_index_entries_is_named_and_repaired(
    tmp_path: Path, seed: int, filled: tuple[Path, dict[str, list[str]]]
) -> None:
    # Sightings, sessions seen again: entries of the store's own index table (one that
    # SQLite cannot re-index in place, as it is a table): made anew from the records.
    directory, by_key = copied(filled, tmp_path), filled[1]
    seen_later = seen_again(directory, [i for ids in by_key.values() for i in ids][:800])
    flip(directory / "cache.db", "addressable_index", seed)
    with ad.DiskStore(directory) as store:
        assert store.verify().indexes
    repaired = repair(str(directory))
    assert repaired["ok"] is True and repaired["repaired"]
    with ad.DiskStore(directory) as store:
        finds_every_record(store, by_key)
        assert sorted(r.id for r in store.records(session="later")) == seen_later
        assert store.verify().ok


def test_an_id_index_that_stops_a_read_is_repaired_in_the_same_run(
    tmp_path: Path, filled: tuple[Path, dict[str, list[str]]]
) -> None:
    # A byte of an id in the id index made not UTF-8: listing the records through that
    # index fails half-way, and verify --repair must still rebuild it in the same run.
    directory, by_key = copied(filled, tmp_path), filled[1]
    database = directory / "cache.db"
    pages, size = leaf_pages(database, SQLITE_INDEXES["id"])
    data = bytearray(database.read_bytes())
    page = pages[len(pages) // 2]
    ids = [i for group in by_key.values() for i in group]
    start = (page - 1) * size
    at = next(
        start + found for i in ids if (found := data[start : start + size].find(i.encode())) >= 0
    )
    data[at + 4] = 0xFF
    database.write_bytes(bytes(data))
    with ad.DiskStore(directory) as store:
        report = store.verify()
    assert any(SQLITE_INDEXES["id"] in line for line in report.indexes), report.indexes
    repaired = repair(str(directory))
    assert repaired["ok"] is True and repaired["repaired"]
    with ad.DiskStore(directory) as store:
        finds_every_record(store, by_key)


def tree_damaged(database: Path, name: str) -> None:
    """A leaf page of the index (or table) `name` made to say it is a table's inner
    page: the pointers SQLite follows to free the tree lead astray, and REINDEX or DROP
    cannot free its old pages."""
    pages, size = leaf_pages(database, name)
    data = bytearray(database.read_bytes())
    data[(pages[len(pages) // 2] - 1) * size] = 0x05
    database.write_bytes(bytes(data))


@pytest.mark.parametrize("which", ["key", "id"])
def test_an_index_whose_tree_is_damaged_is_made_anew(
    tmp_path: Path, which: str, filled: tuple[Path, dict[str, list[str]]]
) -> None:
    directory, by_key = copied(filled, tmp_path), filled[1]
    tree_damaged(directory / "cache.db", SQLITE_INDEXES[which])
    repaired = repair(str(directory))
    assert repaired["ok"] is True and repaired["repaired"]
    with ad.DiskStore(directory) as store:
        finds_every_record(store, by_key)
        assert store.verify().ok  # SQLite's own check too: the old pages are gone
        record = next(iter(store.records(limit=1)))
        assert store.put(record, store.read(record)) is False  # ids are still one each
    db = sqlite3.connect(directory / "cache.db")
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    db.close()


def test_a_damaged_tree_of_the_table_of_index_entries_is_made_anew(
    tmp_path: Path, filled: tuple[Path, dict[str, list[str]]]
) -> None:
    # The table that holds the marker read when a store opens: the store still opens,
    # and the table is made anew from the records.
    directory, by_key = copied(filled, tmp_path), filled[1]
    seen_later = seen_again(directory, [i for ids in by_key.values() for i in ids][:800])
    tree_damaged(directory / "cache.db", "addressable_index")
    repair(str(directory))
    with ad.DiskStore(directory) as store:
        finds_every_record(store, by_key)
        assert sorted(r.id for r in store.records(session="later")) == seen_later
        assert store.verify().ok


def test_a_name_in_the_table_of_index_entries_that_is_not_text_is_named(
    tmp_path: Path,
) -> None:
    directory, by_key = small_store(tmp_path)
    seen_again(directory, by_key["key-1"])
    db = sqlite3.connect(directory / "cache.db")
    # One entry's name, "session:later" with a byte that is not UTF-8 in it.
    db.execute(
        "UPDATE addressable_index SET name = CAST(X'73657373696f6eff3a6c61746572' AS TEXT) "
        "WHERE name = 'session:later' AND member = ?",
        (by_key["key-1"][0],),
    )
    db.commit()
    db.close()
    with ad.DiskStore(directory) as store:
        problems = store.verify().indexes
    assert any("session:later" in line for line in problems), problems
    repaired = repair(str(directory))
    assert repaired["ok"] is True
    with ad.DiskStore(directory) as store:
        assert sorted(r.id for r in store.records(session="later")) == by_key["key-1"]


def test_a_record_whose_payload_is_damaged_is_named_and_no_index_with_it(
    tmp_path: Path,
) -> None:
    directory, by_key = small_store(tmp_path)
    victim = by_key["key-2"][0]
    db = sqlite3.connect(directory / "cache.db")
    changed = db.execute(
        "UPDATE addressable_records SET payload = CAST('payload X' AS BLOB) "
        "WHERE id = ? AND payload IS NOT NULL",
        (victim,),
    ).rowcount
    db.commit()
    db.close()
    assert changed == 1
    with ad.DiskStore(directory) as store:
        report = store.verify()
    assert [d.id for d in report.damaged] == [victim]
    assert report.indexes == []  # its record reads well: the indexes hold it rightly


def test_wrong_counts_on_disk_are_named_and_repaired(tmp_path: Path) -> None:
    directory, by_key = small_store(tmp_path)
    db = sqlite3.connect(directory / "cache.db")
    db.execute("UPDATE addressable_counts SET records = records + 5 WHERE tool = 'tool-1'")
    db.commit()
    db.close()
    with ad.DiskStore(directory) as store:
        assert store.stats().records == 45
        problems = store.verify().indexes
    assert any("#time" in line for line in problems), problems
    assert any("#tool:tool-1" in line for line in problems), problems
    repair(str(directory))
    with ad.DiskStore(directory) as store:
        finds_every_record(store, by_key)
        assert store.stats().by_tool["tool-1"] == 10


def _one_of(client: redis.Redis, pattern: str) -> bytes:
    return sorted(client.scan_iter(match=pattern))[0]


REDIS_DAMAGE: dict[str, Callable[[redis.Redis, str], str]] = {
    # Each damages the sets (or the counts) under the namespace; what verify names.
    "key": lambda c, ns: (c.zpopmin(f"{ns}:ix:key:key-3", 5), "key:key-3")[1],
    "session": lambda c, ns: (c.delete(f"{ns}:ix:session:session-2"), "session:session-2")[1],
    "tool": lambda c, ns: (
        c.zadd(f"{ns}:ix:#tool:tool-0", {"0123456789abcdef": 1}),
        "#tool:tool-0",
    )[1],
    "time": lambda c, ns: (c.zpopmax(f"{ns}:ix:#time", 3), "#time")[1],
    "id": lambda c, ns: (c.zpopmin(f"{ns}:ix:ids", 2), "ids")[1],
    "payload": lambda c, ns: (
        c.delete(_one_of(c, f"{ns}:ix:payload:*")),
        "payload:",
    )[1],
    "counts": lambda c, ns: (c.hincrbyfloat(f"{ns}:ix", "#blobs", 1000), "payloads")[1],
}


@pytest.mark.parametrize("which", list(REDIS_DAMAGE))
def test_damage_to_a_redis_index_is_named_and_repaired(redis_url: str, which: str) -> None:
    namespace = f"ix-{uuid.uuid4().hex[:12]}"
    url = f"{redis_url}?namespace={namespace}"
    with ad.open_store(url) as store:
        by_key = fill(store, n=200)
        assert store.verify().ok
    client = redis.Redis.from_url(redis_url)
    named = REDIS_DAMAGE[which](client, namespace)
    client.close()
    with ad.open_store(url) as store:
        report = store.verify()
    assert not report.ok
    assert any(named in line for line in report.indexes), report.indexes
    repaired = repair(url)
    assert repaired["ok"] is True and repaired["repaired"]
    with ad.open_store(url) as store:
        finds_every_record(store, by_key)
        assert store.verify().ok
