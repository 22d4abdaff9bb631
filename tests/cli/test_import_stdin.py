"""`addressable import -` reads a bundle from stdin: into a file a chunk at a time (the
bundle is read twice, checked then written), never whole in memory, and its errors name
it as `<stdin>`, not the temporary file it was kept in."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import addressable as ad
from addressable.cli import main


def bundle_of(tmp_path: Path, records: int, size: int) -> Path:
    kit = ad.Toolkit(ad.DiskStore(tmp_path / "source"))
    for i in range(records):
        kit.record("t", {"i": i}, os.urandom(size), determinism="deterministic")
    path = tmp_path / "bundle.jsonl"
    with path.open("wb") as out:
        ad.export_bundle(kit.store, out)
    return path


def test_a_bundle_piped_in_is_imported_whole(tmp_path: Path) -> None:
    bundle = bundle_of(tmp_path, 5, 1000)
    done = subprocess.run(
        [sys.executable, "-m", "addressable", "import", "-", "--store", str(tmp_path / "copy")],
        input=bundle.read_bytes(),
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    assert b"imported 5 records and 5 payloads" in done.stdout
    assert len(list(ad.DiskStore(tmp_path / "copy").records())) == 5


def test_a_bad_bundle_from_stdin_is_named_as_stdin(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "addressable", "import", "-", "--store", str(tmp_path / "s")],
        input=b'{"bad": 1}\n',
        capture_output=True,
    )
    err = done.stderr.decode()
    assert done.returncode != 0
    assert err == "addressable: error: <stdin> is not an addressable bundle of version 1\n"


def test_a_bundle_from_stdin_is_not_held_whole_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = bundle_of(tmp_path, 300, 40_000)
    size = bundle.stat().st_size
    assert size > 15_000_000
    with bundle.open("rb") as piped:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(piped))
        tracemalloc.start()
        try:
            code = main(["import", "-", "--store", str(tmp_path / "copy"), "--json"])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert code == 0
    assert len(list(ad.DiskStore(tmp_path / "copy").records())) == 300
    assert peak < size / 4, f"peak {peak:,} bytes for a bundle of {size:,}"
