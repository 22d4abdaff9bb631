"""`addressable rm`, `export --skip-damaged`, and gc of records whose payload is gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import addressable as ad
from addressable.cli import main
from addressable.core.errors import EXIT_INTEGRITY, EXIT_NOT_FOUND
from addressable.store.keys import blob_key


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def filled(path: Path) -> list[ad.Result]:
    with ad.DiskStore(path) as store:
        kit = ad.Toolkit(store)
        results = [
            kit.record("t", {"i": i}, b"payload %d" % min(i, 4), determinism="deterministic")
            for i in range(6)
        ]
        store.pin(results[0].id)
        return results


def test_rm_removes_records_pinned_or_not_and_their_lone_payloads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    results = filled(store)
    gone = [results[0].id, results[1].id[:8], results[4].id]  # pinned, by prefix
    code, out, err = run(capsys, "rm", *gone, "--store", str(store), "--json")
    assert code == 0, err
    said = json.loads(out)
    assert said["removed"] == [results[0].id, results[1].id, results[4].id]
    assert said["removed_payloads"] == 2  # the fifth's is the sixth's too: kept
    with ad.DiskStore(store) as opened:
        for res in (results[0], results[1], results[4]):
            with pytest.raises(ad.NotFound) as info:
                opened.get(res.id)
            assert not isinstance(info.value, ad.Expired)
        kit = ad.Toolkit(opened)
        for res in (results[2], results[3], results[5]):
            assert kit.replay(res.id).payload == res.payload
        assert opened.stats().pinned == 0 and opened.stats().records == 3
        assert opened.verify().ok
    code, out, err = run(capsys, "rm", results[2].id, "--store", str(store))
    assert code == 0 and "removed 1 record and" in out


def test_rm_of_an_unknown_id_is_one_line_and_removes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    results = filled(store)
    code, out, err = run(capsys, "rm", results[3].id, "0123456789abcdef", "--store", str(store))
    assert code == EXIT_NOT_FOUND
    assert err.startswith("addressable: error: ") and err.count("\n") == 1
    assert "0123456789abcdef" in err
    code, out, _ = run(capsys, "rm", "0123456789abcdef", "--store", str(store), "--json")
    assert code == EXIT_NOT_FOUND and json.loads(out)["exit"] == EXIT_NOT_FOUND
    with ad.DiskStore(store) as opened:
        assert len(list(opened.records())) == len(results)


def damage(store: Path, results: list[ad.Result]) -> tuple[str, str]:
    """One record's payload made to differ from its hash, another's removed: their ids."""
    with ad.DiskStore(store) as opened:
        backend = opened._backend
        corrupt, missing = results[2], results[3]  # payloads held by no other record
        backend.set(blob_key(corrupt.record.content_hash), b"not what was stored")
        backend.delete(blob_key(missing.record.content_hash))
    return corrupt.id, missing.id


def test_export_skip_damaged_writes_the_others_and_names_the_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    results = filled(store)
    bad = sorted(damage(store, results))
    bundle = tmp_path / "b.jsonl"
    code, _, err = run(capsys, "export", "--store", str(store), "-o", str(bundle))
    assert code == EXIT_INTEGRITY and not bundle.exists()  # without the flag: as before
    code, out, err = run(
        capsys, "export", "--store", str(store), "-o", str(bundle), "--skip-damaged", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["left_out"] == bad
    assert all(i in err for i in bad) and "left out 2 damaged records" in err
    copy = tmp_path / "copy"
    code, _, err = run(capsys, "import", str(bundle), "--store", str(copy))
    assert code == 0, err
    with ad.DiskStore(copy) as opened:
        assert {r.id for r in opened.records()} == {r.id for r in results} - set(bad)
        assert opened.verify().ok


def test_gc_removes_a_record_whose_payload_is_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    results = filled(store)
    corrupt, missing = damage(store, results)
    with ad.DiskStore(store) as opened:
        assert {d.id: d.problem for d in opened.verify().damaged} == {
            corrupt: "corrupt",
            missing: "missing",
        }
        report = opened.gc()
        assert report.removed_records == report.removed_damaged == [missing]
        with pytest.raises(ad.Expired):
            opened.get(missing)
        # The same call made again is a whole record, replayed.
        again = ad.Toolkit(opened).record(
            "t", {"i": 3}, results[3].payload, determinism="deterministic"
        )
        assert again.id == missing
        assert ad.Toolkit(opened).replay(missing).payload == results[3].payload
        # A payload that differs from its hash is named by verify and left by gc:
        # `rm` removes it, and the same bytes written again replay.
        assert [d.id for d in opened.verify().damaged] == [corrupt]
        opened.remove([corrupt])
        rewritten = ad.Toolkit(opened).record(
            "t", {"i": 2}, results[2].payload, determinism="deterministic"
        )
        assert ad.Toolkit(opened).replay(rewritten.id).payload == results[2].payload
        assert opened.verify().ok


def test_the_counts_each_command_says_agree_in_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    results = filled(store)
    code, out, _ = run(capsys, "rm", results[0].id, "--store", str(store))
    assert code == 0 and out.startswith("removed 1 record and 1 payload (")
    code, out, _ = run(capsys, "verify", "--store", str(store))
    assert ", 1 record," not in out and "records," in out and "0 unreferenced payloads" in out
