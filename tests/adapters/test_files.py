from __future__ import annotations

import os
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
    with pytest.raises(ad.ScopeError, match="is outside") as refused:
        files.read(path)
    assert str(tmp_path) not in str(refused.value)  # the root's place is not the model's
    with pytest.raises(ad.ScopeError):
        files.write(path, "x")
    assert list(kit.store.records()) == []


def test_handle_reads_and_reports_errors(kit: ad.Toolkit, tmp_path: Path) -> None:
    Files(kit, tmp_path)
    (tmp_path / "a.txt").write_text("hello\n")
    assert kit.handle("files", {"command": "read", "path": "a.txt"}) == "hello\n"
    assert kit.handle("files", {"command": "read", "path": "nope.txt"}) == (
        "error: BadPath: files: cannot read 'nope.txt': it does not exist"
    )


def commit(repo: Path, *paths: str) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.test",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.test",
    }
    for args in (["add", "--", *paths], ["commit", "-q", "-m", "more"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.mark.parametrize(
    "name", ["with space.txt", "colon:in.txt", "-dash.txt", "brace^{tree}.txt", "ünï.txt"]
)
def test_tracked_files_with_unusual_names_are_keyed_at_the_commit(
    kit: ad.Toolkit, repo: Path, name: str
) -> None:
    (repo / "src" / name).write_text("same\n")
    commit(repo, f"src/{name}")
    assert Files(kit, repo).read(f"src/{name}").record.key == f"src/{name}@{head(repo)}"


def test_bytes_git_would_call_clean_but_differ_from_the_blob_are_keyed_by_hash(
    kit: ad.Toolkit, repo: Path
) -> None:
    # The commit holds "a\nb\n"; checked out with eol=crlf the file reads "a\r\nb\r\n".
    # `git status` calls it clean, but its bytes are not those of the commit.
    (repo / ".gitattributes").write_text("*.txt text eol=crlf\n")
    (repo / "lines.txt").write_text("a\nb\n")
    commit(repo, ".gitattributes", "lines.txt")
    (repo / "lines.txt").unlink()
    subprocess.run(["git", "checkout", "--", "lines.txt"], cwd=repo, check=True)
    assert (repo / "lines.txt").read_bytes() == b"a\r\nb\r\n"
    crlf = ad.ids.content_hash(b"a\r\nb\r\n")[:16]
    files = Files(kit, repo)
    assert files.read("lines.txt").record.key == f"lines.txt#{crlf}"
    assert files.read("README.md").record.key == f"README.md@{head(repo)}"


def test_a_working_tree_moved_elsewhere_by_the_repository_config_still_reads(
    kit: ad.Toolkit, repo: Path, tmp_path: Path
) -> None:
    # A model that can write .git/config must not be able to make reads fail.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with (repo / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tworktree = {elsewhere}\n")
    res = Files(kit, repo).read("src/app.py")
    assert res.text == "def main():\n    return 42\n"
    assert res.record.key.startswith("src/app.py#")
