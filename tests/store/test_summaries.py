"""A listing reads each record's stored JSON without building the record (`summaries`,
`store.frame.summary`). It must list what `records` lists, with the same values, and
find damaged every record that `records` finds damaged: a record that is not exactly as
the store writes one is read in full, and that read gives the verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import addressable as ad
from addressable.core.records import Record
from addressable.store.codec import dump_record, load_record
from addressable.store.frame import FIELDS, framed, summary, summary_of
from tests.helpers import FakeClock

AT = datetime(2026, 3, 11, 9, 0, tzinfo=UTC)


def kinds_of_records() -> list[Record]:
    """A record of each kind a kit writes: a result with a key and a max age, one without
    a key, an error, and an Action with its nonce, outcome and idempotency key."""
    kit = ad.Toolkit(ad.MemoryStore(), clock=FakeClock(AT), session="s1")
    kit.record(
        "fetch",
        {"url": "https://x/a"},
        b"<p>a</p>",
        determinism="deterministic",
        key="https://x/a",
        max_age=timedelta(hours=1, microseconds=120),
        meta={"status": 200, "hits": ["x", 1.5, None]},
    )
    kit.record("search", {"q": "ü", "n": 3}, b"[]", determinism="nondeterministic")
    kit.record("run", {"cmd": "false"}, b"exit 1", determinism="nondeterministic", status="error")
    kit.record(
        "post",
        {"body": {"a": [1, {"b": True}]}},
        b"ok",
        determinism="side_effect",
        outcome="completed",
        idempotency_key="k-1",
    )
    return list(kit.store.records())


def test_the_fields_read_are_the_record_s_fields() -> None:
    assert set(Record.model_fields) == FIELDS


def test_a_record_as_the_store_writes_it_is_summarised_as_it_reads() -> None:
    records = kinds_of_records()
    assert {r.determinism for r in records} == set(ad.Determinism)
    for record in records:
        assert summary(record.id, dump_record(record)) == summary_of(record)


def test_summaries_list_what_records_lists(store: ad.Store) -> None:
    kit = ad.Toolkit(store, clock=FakeClock(AT), session="s1")
    for n in range(5):
        kit.record("t", {"n": n}, b"x" * n, determinism="deterministic", key=f"k{n % 2}")
    kit.session = "s2"
    kit.record("u", {}, b"y", determinism="nondeterministic")
    for filters in (
        {},
        {"tool": "t"},
        {"key": "k1"},
        {"session": "s2"},
        {"since": AT},
        {"newest_first": True, "limit": 2},
        {"tool": "t", "session": "s1", "limit": 3},
    ):
        listed = [summary_of(r) for r in store.records(**filters)]  # type: ignore[arg-type]
        assert list(store.summaries(**filters)) == listed, filters  # type: ignore[arg-type]


def test_a_damaged_record_is_named_as_records_names_it(tmp_path: Path) -> None:
    store = ad.DiskStore(tmp_path / "store")
    kit = ad.Toolkit(store, clock=FakeClock(AT))
    kept = kit.record("t", {"n": 1}, b"x", determinism="deterministic")
    bad = kit.record("t", {"n": 2}, b"y", determinism="deterministic")
    raw = store._backend.get("r:" + bad.id)
    assert raw is not None
    store._backend.set("r:" + bad.id, raw.replace(b'"tool":"t"', b'"tool":"T"'))
    damaged: list[str] = []
    assert [s.id for s in store.summaries(damaged=damaged)] == [kept.id]
    assert damaged == [bad.id]
    with pytest.raises(ad.IntegrityError, match="altered"):
        list(store.summaries())
    store.close()


ODD = [None, 0, 1, -5, 2**70, 1.0, True, "", "x", [], {}, {"a": 1}, "ok", "error"]
ODD += ["completed", "deterministic", "side_effect", "2026-03-11T10:00:00"]
ODD += ["2026-03-11T10:00:00Z", "2026-03-11T10:00:00.5+05:30", "2026-13-01T00:00:00Z"]
ODD += ["2026-03-11T10:00:60Z", "2026-03-11 10:00:00Z", "20260311T100000Z"]
ODD += ["2026-03-11T10:00:00+24:00", "PT1H", "P", "PT", "-PT1S", "P1Y35DT3.12S", "P1DT"]
ODD += ["P1W", "PT1.1234567S", "1 day", ...]  # ...: the field left out


def changed(record: Record, changes: list[tuple[str, Any]]) -> bytes:
    """`record` as stored, with fields changed (or left out) and its checksum made again."""
    fields = json.loads(dump_record(record).split(b"\n", 1)[1])
    for name, value in changes:
        if value is ...:
            fields.pop(name, None)
        else:
            fields[name] = value
    return framed(json.dumps(fields).encode())


def summary_agrees(record_id: str, raw: bytes) -> bool:
    """Whether a summary, where one is given, is of a record that reads, and says what
    it says; a full read that finds it damaged must have had no summary."""
    found = summary(record_id, raw)
    try:
        read: Record | None = load_record(record_id, raw)
    except ad.IntegrityError:
        read = None
    return found is None or (read is not None and found == summary_of(read))


def test_a_summary_is_given_only_where_the_record_reads_and_says_the_same() -> None:
    for record in kinds_of_records():
        for name in [*sorted(FIELDS), "extra"]:
            for value in ODD:
                raw = changed(record, [(name, value)])
                assert summary_agrees(record.id, raw), (record.tool, name, value)


@settings(max_examples=300, deadline=None)
@given(
    which=st.sampled_from(range(4)),
    changes=st.lists(
        st.tuples(
            st.sampled_from([*sorted(FIELDS), "extra"]),
            st.sampled_from(ODD) | st.text(max_size=8) | st.integers(),
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_so_do_several_changes_at_once(which: int, changes: list[tuple[str, Any]]) -> None:
    record = kinds_of_records()[which]
    assert summary_agrees(record.id, changed(record, changes))


def test_ls_starts_without_pydantic_models_or_rich(tmp_path: Path) -> None:
    path = tmp_path / "store"
    with ad.DiskStore(path) as store:
        kinds = kinds_of_records()
        for record in kinds:
            store.put(record, b"<p>a</p>")
    code = (
        "import sys\n"
        "from addressable.cli import main\n"
        f"assert main(['ls', '--store', {str(path)!r}]) == 0\n"
        "loaded = [m for m in ('pydantic.main', 'rich', 'addressable.core.records') "
        "if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert all(r.id in proc.stdout for r in kinds) and "4 records" in proc.stdout
