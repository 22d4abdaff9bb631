"""`addressable export -o` writes a whole bundle or leaves what was there: it never
writes into the store it exports, and a failed export keeps the file it would replace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import addressable as ad
from addressable.cli import main
from addressable.core.errors import EXIT_INTEGRITY, EXIT_USAGE


def filled_store(path: Path) -> list[ad.Result]:
    with ad.DiskStore(path) as store:
        kit = ad.Toolkit(store)
        # Payloads large enough to be files of their own beside the database.
        return [
            kit.record("t", {"i": i}, b"%d" % i * 150_000, determinism="deterministic")
            for i in range(5)
        ]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", ["cache.db", "bundle.jsonl", "ab/new.jsonl"])
def test_an_output_inside_the_store_is_refused_and_the_store_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    store = tmp_path / "store"
    results = filled_store(store)
    before = sorted(store.rglob("*"))
    code, _, err = run(capsys, "export", "--store", str(store), "-o", str(store / name))
    assert code == EXIT_USAGE
    assert err.startswith("addressable: error: ") and err.count("\n") == 1
    assert "inside the store" in err
    assert sorted(store.rglob("*")) == before  # nothing written there, not even a part
    code, out, _ = run(capsys, "verify", "--store", str(store), "--json")
    report = json.loads(out)
    assert code == 0 and report["records"] == 5 and report["orphan_blobs"] == 0
    with ad.DiskStore(store) as opened:
        assert {r.id for r in opened.records()} == {r.id for r in results}


def test_a_symlink_into_the_store_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    filled_store(store)
    link = tmp_path / "bundle.jsonl"
    link.symlink_to(store / "cache.db")
    size = (store / "cache.db").stat().st_size
    code, _, err = run(capsys, "export", "--store", str(store), "-o", str(link))
    assert code == EXIT_USAGE and "inside the store" in err
    assert (store / "cache.db").stat().st_size == size


def test_a_failed_export_keeps_the_bundle_it_would_replace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    filled_store(store)
    bundle = tmp_path / "bundle.jsonl"
    assert run(capsys, "export", "--store", str(store), "-o", str(bundle))[0] == 0
    good = bundle.read_bytes()
    assert good.endswith(b'{"blobs":5,"end":true,"records":5}\n')
    damaged = next(store.rglob("*.val"))
    with damaged.open("r+b") as f:  # a payload's bytes no longer hash to their name
        f.seek(10)
        f.write(b"XXXX")
    code, _, err = run(capsys, "export", "--store", str(store), "-o", str(bundle))
    assert code == EXIT_INTEGRITY and "corrupt" in err
    assert bundle.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle.jsonl", "store"]


def test_an_export_replaces_the_file_whole_and_keeps_its_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    filled_store(store)
    bundle = tmp_path / "bundle.jsonl"
    bundle.write_bytes(b"an older, longer file " * 100_000)
    bundle.chmod(0o640)
    assert run(capsys, "export", "--store", str(store), "-o", str(bundle))[0] == 0
    assert bundle.read_bytes().startswith(b'{"format":"addressable-bundle"')
    assert bundle.stat().st_mode & 0o777 == 0o640
    empty = tmp_path / "empty"
    code, out, _ = run(capsys, "import", str(bundle), "--store", str(empty), "--json")
    assert code == 0 and json.loads(out)["records"] == 5


def test_a_directory_as_output_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    filled_store(store)
    code, _, err = run(capsys, "export", "--store", str(store), "-o", str(tmp_path))
    assert code == EXIT_USAGE and "is a directory" in err and err.count("\n") == 1


def test_export_to_dash_writes_the_bundle_to_stdout(tmp_path: Path) -> None:
    store = tmp_path / "store"
    filled_store(store)
    done = subprocess.run(
        [sys.executable, "-m", "addressable", "export", "--store", str(store), "-o", "-", "--json"],
        capture_output=True,
        check=True,
        cwd=tmp_path,
    )
    assert not (tmp_path / "-").exists()
    assert done.stdout.startswith(b'{"format":"addressable-bundle"')
    assert json.loads(done.stderr)["records"] == 5  # the summary is not in the bundle
    (tmp_path / "b.jsonl").write_bytes(done.stdout)
    imported = subprocess.run(
        [
            sys.executable,
            "-m",
            "addressable",
            "import",
            str(tmp_path / "b.jsonl"),
            "--store",
            str(tmp_path / "copy"),
        ],
        capture_output=True,
    )
    assert imported.returncode == 0, imported.stderr
