"""`export -o` to a path that cannot be written names that path, not the partial file
the bundle is first written to, in one line with exit 5, and leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

import addressable as ad
from addressable.cli import main
from addressable.core.errors import EXIT_FAILURE


def export_fails(tmp_path: Path, output: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Export a small store to `output`; the error line, checked to be one line."""
    store = tmp_path / "store"
    with ad.DiskStore(store) as opened:
        ad.Toolkit(opened).record("t", {}, b"payload", determinism="deterministic")
    before = sorted(tmp_path.rglob("*"))
    code = main(["export", "--store", str(store), "-o", str(output)])
    _, err = capsys.readouterr()
    assert code == EXIT_FAILURE
    assert err.startswith("addressable: error: ") and err.count("\n") == 1
    assert ".partial" not in err and f"cannot write {output}:" in err
    assert sorted(tmp_path.rglob("*")) == before
    return err


def test_a_directory_that_does_not_exist_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "missing" / "dir" / "x.jsonl"
    err = export_fails(tmp_path, output, capsys)
    assert f"the directory {output.parent} does not exist" in err


def test_a_file_where_the_directory_should_be_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "plain").write_bytes(b"")
    output = tmp_path / "plain" / "x.jsonl"
    err = export_fails(tmp_path, output, capsys)
    assert f"{output.parent} is not a directory" in err


def test_a_symlink_into_a_directory_that_does_not_exist_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "link.jsonl"
    output.symlink_to(tmp_path / "gone" / "x.jsonl")
    err = export_fails(tmp_path, output, capsys)
    assert f"the directory {tmp_path / 'gone'} does not exist" in err
