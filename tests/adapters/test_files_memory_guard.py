"""Files and Memory never change the store's folder or a repository's .git, whatever
their root: with the README's defaults (the store in ./.addressable, Files rooted at
.), no call changes a byte of either, and what it refuses is said in one line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Files, Memory


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    nested = folder / "vendor" / "lib"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    return folder


@pytest.fixture
def kit(working_kit: ad.Toolkit) -> ad.Toolkit:
    return working_kit


def _snapshot(work: Path) -> dict[Path, bytes | None]:
    """Every file and folder of the repositories' .git, and its bytes; of the store, the
    names of what it holds besides what its database writes as it records."""
    found: dict[Path, bytes | None] = {}
    for top in (work / ".git", work / "vendor" / "lib" / ".git"):
        for path in [top, *top.rglob("*")]:
            found[path] = path.read_bytes() if path.is_file() else None
    for path in (work / ".addressable").iterdir():
        if not path.name.startswith("cache.db") and path.is_file():
            found[path] = None
    return found


WRITES = [
    ".addressable/cache.db",
    ".addressable/new-file",
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/HEAD",
    ".GIT/config",
    "vendor/lib/.git/config",
]


@pytest.mark.parametrize("path", WRITES)
def test_files_writes_neither_the_store_nor_git(kit: ad.Toolkit, work: Path, path: str) -> None:
    files = Files(kit, work)
    before = _snapshot(work)
    with pytest.raises(ad.ScopeError, match="is not changed by this tool") as caught:
        files.write(path, "[core]\n\thooksPath = /tmp\n")
    assert "\n" not in str(caught.value)
    assert kit.store.verify().ok  # the store still reads, every record
    assert _snapshot(work) == before


def test_files_still_reads_git_and_writes_beside_it(kit: ad.Toolkit, work: Path) -> None:
    files = Files(kit, work)
    assert "[core]" in files.read(".git/config").text
    files.write("notes/.gitignore", "*.log\n")  # a name that only starts like it
    assert (work / "notes" / ".gitignore").read_text() == "*.log\n"


MEMORY_CHANGES = [
    {"command": "create", "path": "/memories/.git/hooks/post-checkout", "file_text": "x"},
    {"command": "create", "path": "/memories/.addressable/x", "file_text": "x"},
    {
        "command": "str_replace",
        "path": "/memories/.git/config",
        "old_str": "[core]",
        "new_str": "x",
    },
    {"command": "insert", "path": "/memories/.git/config", "insert_line": 0, "insert_text": "x"},
    {"command": "delete", "path": "/memories/.git"},
    {"command": "delete", "path": "/memories/vendor"},  # holds a repository
    {"command": "delete", "path": "/memories/.addressable"},
    {"command": "rename", "old_path": "/memories/.git", "new_path": "/memories/old-git"},
    {"command": "rename", "old_path": "/memories/vendor", "new_path": "/memories/v"},
    {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/.git/a.md"},
    {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/.addressable/a"},
]


@pytest.mark.parametrize("arguments", MEMORY_CHANGES, ids=lambda a: f"{a['command']}")
def test_memory_rooted_anywhere_changes_neither(
    kit: ad.Toolkit, work: Path, arguments: dict[str, object]
) -> None:
    memory = Memory(kit, work)
    (work / "a.md").write_text("a\n")
    before = _snapshot(work)
    with pytest.raises(ad.ScopeError, match="is not changed by this tool"):
        memory.run(dict(arguments))
    assert _snapshot(work) == before and kit.store.verify().ok
    assert (work / "a.md").read_text() == "a\n"
    assert "[core]" in memory.run({"command": "view", "path": "/memories/.git/config"}).text
