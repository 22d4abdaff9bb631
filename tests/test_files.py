from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Files


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def head(repo: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_clean_tracked_file_is_keyed_at_its_commit(kit: ad.Toolkit, repo: Path) -> None:
    files = Files(kit, repo)
    res = files.read("src/app.py")
    assert res.text == "def main():\n    return 42\n"
    assert res.record.key == f"src/app.py@{head(repo)}"
    assert res.record.determinism is ad.Determinism.DETERMINISTIC


def test_a_modified_or_untracked_file_is_keyed_by_its_hash(kit: ad.Toolkit, repo: Path) -> None:
    files = Files(kit, repo)
    (repo / "src" / "app.py").write_text("changed\n")
    (repo / "notes.txt").write_text("mine\n")
    digest = ad.ids.content_hash(b"changed\n")[:16]
    assert files.read("src/app.py").record.key == f"src/app.py#{digest}"
    assert files.read("notes.txt").record.key.startswith("notes.txt#")


def test_verify_rereads_and_reports_change(kit: ad.Toolkit, tmp_path: Path) -> None:
    files = Files(kit, tmp_path)
    (tmp_path / "a.txt").write_text("one\n")
    first = files.read("a.txt")
    assert kit.replay(first.id, verify=True).changed is False
    (tmp_path / "a.txt").write_text("two\n")
    fresh = kit.replay(first.id, verify=True)
    assert fresh.changed is True and fresh.text == "two\n"
    assert kit.replay(first.id).text == "one\n"


def test_a_write_is_an_action_with_its_artifact(kit: ad.Toolkit, tmp_path: Path) -> None:
    files = Files(kit, tmp_path)
    res = files.write("out/report.md", "# findings\n")
    assert (tmp_path / "out" / "report.md").read_text() == "# findings\n"
    rec = res.record
    assert rec.determinism is ad.Determinism.SIDE_EFFECT
    assert rec.outcome is ad.Outcome.COMPLETED
    rev = "#" + ad.ids.content_hash(b"# findings\n")[:16]
    assert rec.meta["artifact"] == {"path": "out/report.md", "rev": rev}
    assert files.write("out/report.md", "# findings\n").id != res.id  # each attempt its own
    assert "wrote 11 bytes to out/report.md" in kit.handle(
        "files", {"command": "write", "path": "out/report.md", "content": "# findings\n"}
    )


def test_a_failed_write_is_not_applied(kit: ad.Toolkit, tmp_path: Path) -> None:
    files = Files(kit, tmp_path)
    (tmp_path / "blocker").write_text("a file, not a folder")
    with pytest.raises(OSError):
        files.write("blocker/x.txt", "data")
    (rec,) = kit.store.records()
    assert rec.outcome is ad.Outcome.NOT_APPLIED and rec.status is ad.Status.ERROR


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../x"])
def test_paths_outside_the_root_are_refused(kit: ad.Toolkit, tmp_path: Path, path: str) -> None:
    files = Files(kit, tmp_path / "root")
    with pytest.raises(ad.ScopeError, match="is outside"):
        files.read(path)
    with pytest.raises(ad.ScopeError):
        files.write(path, "x")
    assert list(kit.store.records()) == []


def test_handle_reads_and_reports_errors(kit: ad.Toolkit, tmp_path: Path) -> None:
    Files(kit, tmp_path)
    (tmp_path / "a.txt").write_text("hello\n")
    assert kit.handle("files", {"command": "read", "path": "a.txt"}) == "hello\n"
    assert kit.handle("files", {"command": "read", "path": "nope.txt"}).startswith(
        "error: FileNotFoundError"
    )
