"""Bundles made to harm the store that imports them, on each store: one that would settle
an action of the store, one whose times are no times in UTC, one too large to hold, one
that gives a payload twice or hides a payload in a record line. Each is refused whole,
with one line, or imports only what it was checked to hold."""

from __future__ import annotations

import base64
import json
import os
import tracemalloc
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.cli import main
from addressable.recording import bundle as _bundle
from addressable.recording import bundle as _bundlelines
from tests.helpers import FakeClock
from tests.helpers.bundles import Lines, assert_refused, bundle, read, record_lines, write


def exported(store: ad.Store, path: Path) -> Path:
    with path.open("wb") as f:
        ad.export_bundle(store, f)
    return path


def held(store: ad.Store) -> tuple[object, ...]:
    """Everything a store holds, to show that a refused import changed nothing."""
    assert isinstance(store, ad.KeyValueStore)
    records = [(r, store.observations(r.id), store.pin_info(r.id)) for r in store.records()]
    return records, store._backend.keys(""), store.stats()


def payment(kit: ad.Toolkit) -> ad.Result:
    """A payment whose outcome is not known: the call timed out."""
    return kit.record(
        "api",
        {"method": "POST", "url": "https://billing.example/charges", "body": {"amount": 500}},
        b"timeout",
        determinism="side_effect",
        outcome=ad.Outcome.UNKNOWN,
        status=ad.Status.ERROR,
        error="ReadTimeout",
    )


def verification(kit: ad.Toolkit, action_id: str, outcome: ad.Outcome) -> ad.Result:
    """A read that says what became of `action_id`, as the API adapter records one."""
    return kit.record(
        "api",
        {"method": "GET", "url": "https://billing.example/charges?marker=abc"},
        b'{"data": []}',
        determinism="nondeterministic",
        media_type="application/json",
        outcome=outcome,
        meta={ad.Report.VERIFIES: action_id},
    )


@pytest.mark.parametrize("outcome", [ad.Outcome.NOT_APPLIED, ad.Outcome.COMPLETED])
def test_a_bundle_cannot_settle_an_action_it_does_not_bring(
    store: ad.Store, clock: FakeClock, tmp_path: Path, outcome: ad.Outcome
) -> None:
    # The store's payment may have gone through; a bundle from anyone says it did not
    # (an invitation to pay twice), or that it did. Its record's id covers neither.
    kit = ad.Toolkit(store, session="ops", clock=clock)
    pay = payment(kit)
    other = ad.open_store("memory://")
    other_kit = ad.Toolkit(other, session="x", clock=clock)
    for i in range(2):
        other_kit.record("t", {"i": i}, f"page {i}".encode(), determinism="deterministic")
    forged = verification(other_kit, pay.id, outcome)
    path = exported(other, tmp_path / "b.jsonl")
    number = 1 + next(
        i for i, line in enumerate(read(path)) if line.get("record", {}).get("id") == forged.id
    )
    before = held(store)
    with pytest.raises(ad.BundleError) as info:
        ad.import_bundle(store, path)
    message = str(info.value)
    assert "\n" not in message
    assert f":{number}: record {forged.id} names the action {pay.id}" in message
    assert held(store) == before
    assert kit.outcome(pay.id) is ad.Outcome.UNKNOWN


def test_a_bundle_settles_the_actions_it_brings(
    store: ad.Store, clock: FakeClock, tmp_path: Path
) -> None:
    # Another store's payment and its verification, imported twice: once before the
    # verification was made, once after (the store then holds the action already).
    other = ad.open_store("memory://")
    other_kit = ad.Toolkit(other, session="x", clock=clock)
    pay = payment(other_kit)
    ad.import_bundle(store, exported(other, tmp_path / "first.jsonl"))
    kit = ad.Toolkit(store, session="ops", clock=clock)
    assert kit.outcome(pay.id) is ad.Outcome.UNKNOWN
    clock.advance(minutes=1)
    verification(other_kit, pay.id, ad.Outcome.COMPLETED)
    summary = ad.import_bundle(store, exported(other, tmp_path / "second.jsonl"))
    assert (summary.records, summary.skipped) == (1, 1)
    assert kit.outcome(pay.id) is ad.Outcome.COMPLETED


def test_a_verification_of_an_action_in_neither_is_imported(
    store: ad.Store, clock: FakeClock, tmp_path: Path
) -> None:
    # It settles nothing in this store: a record like any other.
    other = ad.open_store("memory://")
    read_id = verification(
        ad.Toolkit(other, clock=clock), "0123456789abcdef", ad.Outcome.COMPLETED
    ).id
    assert ad.import_bundle(store, exported(other, tmp_path / "b.jsonl")).records == 1
    assert store.get(read_id).meta == {ad.Report.VERIFIES: "0123456789abcdef"}


LATE = "9999-12-31T23:59:59-14:00"  # the year 10000 in UTC
EARLY = "0001-01-01T00:00:00+14:00"  # the year 0 in UTC


def set_record(index: int, **fields: Any) -> Callable[[Lines], None]:
    def edit(lines: Lines) -> None:
        lines[record_lines(lines)[index]].update(fields)

    return edit


def set_time(when: str) -> Callable[[Lines], None]:
    def edit(lines: Lines) -> None:
        lines[record_lines(lines)[0]]["record"]["observed_at"] = when

    return edit


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        pytest.param(set_time(LATE), f"observed_at {LATE}", id="observed-late"),
        pytest.param(set_time(EARLY), f"observed_at {EARLY}", id="observed-early"),
        pytest.param(
            set_record(0, observations=[{"at": LATE, "session": "s"}]),
            f"an observation {LATE}",
            id="observation",
        ),
        pytest.param(
            set_record(0, pinned=True, pin={"reason": "stub", "sessions": ["s"], "until": LATE}),
            f"the pin's until {LATE}",
            id="pin",
        ),
    ],
)
def test_a_time_that_is_no_time_in_utc_is_refused(
    store: ad.Store, clock: FakeClock, tmp_path: Path, edit: Callable[[Lines], None], named: str
) -> None:
    path = bundle(tmp_path, clock)
    lines = read(path)
    edit(lines)
    write(path, lines)
    number = record_lines(lines)[0] + 1
    message = assert_refused(path, store, rf":{number}: ")
    assert named in message and "no time in UTC" in message


def far_store(url: str) -> str:
    """A store, as another program could write it, holding records seen in the year 10000
    and the year 0 in UTC; the id of the first."""
    late = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(-timedelta(hours=14)))
    early = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14)))
    store = ad.open_store(url)
    ids = []
    for i, when in enumerate((late, early)):
        data = f"x{i}".encode()
        record = ad.Record(
            id="0" * 16,
            tool="t",
            args={"i": i},
            determinism=ad.Determinism.NONDETERMINISTIC,
            content_hash=ad.ids.content_hash(data),
            size=len(data),
            media_type="text/plain",
            observed_at=when,
        )
        record = record.model_copy(update={"id": record.derived_id()})
        store.put(record, data)
        ids.append(record.id)
    store.close()
    return ids[0]


@pytest.mark.parametrize("kind", ["disk", "redis"])
def test_the_command_line_shows_a_time_that_is_no_time_in_utc_as_written(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
) -> None:
    if kind == "disk":
        url = f"disk://{tmp_path / 'store'}"
    else:
        url = f"{request.getfixturevalue('redis_url')}?namespace=far-{uuid.uuid4().hex[:12]}"
    late = far_store(url)
    shown = {}
    for command in (["ls"], ["stats"], ["show", late]):
        code = main([*command, "--store", url])
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), command
        shown[command[0]] = out
    assert "9999-12-31" in shown["ls"] and "0001-01-01" in shown["ls"]
    assert "newest   │ 9999-12-31 23:59:59-14:00" in shown["stats"]
    assert "oldest   │ 0001-01-01 00:00:00+14:00" in shown["stats"]
    assert "last seen    │ 9999-12-31 23:59:59-14:00" in shown["show"]


def test_a_line_longer_than_the_limit_is_refused(
    store: ad.Store, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limit stands in for 720 MB here: a line of it, newline included, is read.
    monkeypatch.setattr(_bundlelines, "MAX_LINE", 300_000)
    other = ad.open_store("memory://")
    kit = ad.Toolkit(other, clock=clock)
    kit.record("t", {}, os.urandom(150_000), determinism="nondeterministic")
    path = exported(other, tmp_path / "b.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(b'{"blob"'))
    fits = 300_000 - len(lines[at])  # JSON allows spaces before the closing brace
    lines[at] = lines[at][:-2] + b" " * fits + lines[at][-2:]
    path.write_bytes(b"".join(lines))
    assert ad.import_bundle(ad.open_store("memory://"), path).records == 1
    lines[at] = lines[at][:-2] + b" " + lines[at][-2:]
    path.write_bytes(b"".join(lines))
    message = assert_refused(path, store, rf":{at + 1}: ")
    assert "longer than 300,000 bytes" in message


def test_import_holds_a_payload_about_twice_not_five_times(
    store: ad.Store, clock: FakeClock, tmp_path: Path
) -> None:
    # A payload of 12 MB: its line (16 MB of base64) and the payload itself are held at
    # once, never the line parsed into a string or read in pieces joined together.
    payload = os.urandom(12_000_000)
    other = ad.open_store("memory://")
    ad.Toolkit(other, clock=clock).record(
        "t", {}, payload, determinism="nondeterministic", media_type="application/octet-stream"
    )
    path = exported(other, tmp_path / "b.jsonl")
    del payload, other
    tracemalloc.start()
    try:
        ad.import_bundle(store, path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2.6 * 12_000_000


def test_a_payload_given_twice_is_refused(
    store: ad.Store, clock: FakeClock, tmp_path: Path
) -> None:
    # Given twice, it was counted once and its records taken as already there.
    path = bundle(tmp_path, clock)
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(b'{"blob"'))
    lines.insert(at + 1, lines[at])
    path.write_bytes(b"".join(lines))
    assert_refused(path, store, rf":{at + 2}: duplicate blob .*line {at + 1}")


def test_a_payload_in_a_record_line_is_not_taken(
    store: ad.Store, clock: FakeClock, tmp_path: Path
) -> None:
    # The first reading takes the line as a record; the second took it as a payload,
    # never checked, and stored it as the record's.
    path = bundle(tmp_path, clock)
    lines = read(path)
    at = record_lines(lines)[0]
    record = lines[at]["record"]
    lines[at] |= {"blob": record["content_hash"], "data": base64.b64encode(b"forged").decode()}
    write(path, lines)
    assert ad.import_bundle(store, path).records == 3
    assert store.read(store.get(record["id"])) == f"page {record['args']['n']}".encode()


def test_a_bundle_changed_between_its_readings_is_refused(
    store: ad.Store, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Checked, then changed before it is written: the payload written is not the one
    # checked, so the import stops there.
    path = bundle(tmp_path, clock)
    check = _bundle._check

    def check_then_change(into: ad.Store, where: Path) -> Any:
        found = check(into, where)
        good = base64.b64encode(b"page 0")
        where.write_bytes(where.read_bytes().replace(good, base64.b64encode(b"PAGE 0")))
        return found

    monkeypatch.setattr(_bundle, "_check", check_then_change)
    with pytest.raises(ad.BundleError, match="changed while it was imported"):
        ad.import_bundle(store, path)
    for record in store.records():  # each one written before the change, whole
        assert store.read(record) in (b"page 0", b"page 1", b"page 2")


def test_a_bundle_cut_short_between_its_readings_is_refused(
    store: ad.Store, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bundle(tmp_path, clock)
    check = _bundle._check

    def check_then_cut(into: ad.Store, where: Path) -> Any:
        found = check(into, where)
        kept = where.read_bytes().splitlines(keepends=True)
        where.write_bytes(b"".join(kept[: len(kept) // 2]))
        return found

    monkeypatch.setattr(_bundle, "_check", check_then_cut)
    with pytest.raises(ad.BundleError, match=r"changed while it was imported: .* no longer"):
        ad.import_bundle(store, path)


def test_the_json_form_of_a_blob_line_reads_alike(
    store: ad.Store, clock: FakeClock, tmp_path: Path
) -> None:
    # A blob line written otherwise than export writes it (spaces, keys in another
    # order, an escaped character) is read as JSON, to the same payload.
    path = bundle(tmp_path, clock)
    lines = path.read_bytes().splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(b'{"blob"'):
            item = json.loads(line)
            data = item["data"].replace("c", "\\u0063", 1)
            lines[i] = f'{{ "data": "{data}", "blob": "{item["blob"]}" }}\n'.encode()
    path.write_bytes(b"".join(lines))
    assert ad.import_bundle(store, path).records == 3
    assert sorted(store.read(r) for r in store.records()) == [b"page 0", b"page 1", b"page 2"]


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b'{"blob":"%s","data":"cGFnZSAw!"}\n', id="not-base64"),
        pytest.param(b'{"blob":"%s","data":"cGFnZSA"}\n', id="unpadded"),
        pytest.param(b'{"blob":"%s","data":7}\n', id="number"),
        pytest.param(b'{"blob":"%s"}\n', id="no-data"),
    ],
)
def test_a_malformed_blob_line_is_refused(
    store: ad.Store, clock: FakeClock, tmp_path: Path, line: bytes
) -> None:
    path = bundle(tmp_path, clock)
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, item in enumerate(read(path)) if item.get("blob") is not None)
    digest = json.loads(lines[at])["blob"].encode()
    lines[at] = line % digest
    path.write_bytes(b"".join(lines))
    assert_refused(path, store, rf":{at + 1}: malformed blob line")
