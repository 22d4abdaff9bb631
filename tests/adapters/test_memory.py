from __future__ import annotations

from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Memory, MemoryCommandError


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture
def memory(kit: ad.Toolkit, tmp_path: Path) -> Memory:
    return Memory(kit, tmp_path / "memories")


def test_every_revision_is_addressable(memory: Memory, kit: ad.Toolkit) -> None:
    created = memory("create", path="/memories/notes.md", file_text="alpha\nbeta\n")
    assert created.record.determinism is ad.Determinism.SIDE_EFFECT
    assert created.record.outcome is ad.Outcome.COMPLETED
    rev1 = ad.ids.content_hash(b"alpha\nbeta\n")[:12]
    assert created.record.meta["artifact"]["key"] == f"memory:/memories/notes.md@{rev1}"
    first = memory("view", path="/memories/notes.md")
    assert first.record.key == f"memory:/memories/notes.md@{rev1}"
    assert first.text == "Content of /memories/notes.md:\n     1\talpha\n     2\tbeta\n"
    memory("str_replace", path="/memories/notes.md", old_str="beta", new_str="gamma")
    second = memory("view", path="/memories/notes.md")
    assert second.record.key != first.record.key
    assert kit.replay(first.id).text.endswith("beta\n")  # the old revision stays addressable
    assert kit.replay(first.id, verify=True).changed is True


def test_insert_delete_rename_and_folders(memory: Memory, tmp_path: Path) -> None:
    memory("create", path="/memories/a.md", file_text="one\nthree\n")
    memory("insert", path="/memories/a.md", insert_line=1, insert_text="two")
    assert (tmp_path / "memories" / "a.md").read_text() == "one\ntwo\nthree\n"
    memory("rename", old_path="/memories/a.md", new_path="/memories/sub/b.md")
    listing = memory("view", path="/memories").text
    assert listing == "Directory /memories:\n- sub/\n- sub/b.md\n"
    memory("delete", path="/memories/sub/b.md")
    assert not (tmp_path / "memories" / "sub" / "b.md").exists()
    ranged = memory("create", path="/memories/c.md", file_text="1\n2\n3\n4\n")
    assert ranged.ok
    assert memory("view", path="/memories/c.md", view_range=[2, 3]).text == (
        "Content of /memories/c.md:\n     2\t2\n     3\t3\n"
    )


def test_a_command_that_cannot_be_done_is_not_applied(memory: Memory, kit: ad.Toolkit) -> None:
    memory("create", path="/memories/a.md", file_text="x x\n")
    with pytest.raises(MemoryCommandError, match="occurs 2 times"):
        memory("str_replace", path="/memories/a.md", old_str="x", new_str="y")
    failed = [r for r in kit.store.records() if r.status is ad.Status.ERROR]
    assert [r.outcome for r in failed] == [ad.Outcome.NOT_APPLIED]
    assert kit.handle(
        "memory",
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "zzz", "new_str": "y"},
    ).startswith("error: MemoryCommandError: old_str does not occur")


@pytest.mark.parametrize(
    "path",
    [
        "/memories/../escape.md",
        "../escape.md",
        "/etc/passwd",
        "/memories/a/../../x",
        "/other/file.md",
    ],
)
def test_paths_outside_the_root_are_refused(memory: Memory, tmp_path: Path, path: str) -> None:
    with pytest.raises(ad.ScopeError):
        memory("create", path=path, file_text="x")
    with pytest.raises(ad.ScopeError):
        memory("view", path=path)
    assert not (tmp_path / "escape.md").exists()
    assert "error: ScopeError" in memory.kit.handle("memory", {"command": "view", "path": path})
