"""Files and Memory write nothing they would refuse to read back: content over the
adapter's `max_bytes` is refused with a one-line `ScopeError`, before anything is
written; an argument that big is not recorded either."""

from __future__ import annotations

from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Files, Memory

LIMIT = 100


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


def test_files_refuses_content_over_its_limit_and_records_nothing(
    disk_kit: ad.Toolkit, root: Path
) -> None:
    files = Files(disk_kit, root, writable=True, max_bytes=LIMIT)
    with pytest.raises(ad.ScopeError) as refused:
        files.write("big.txt", "x" * (LIMIT + 1))
    assert str(refused.value) == (
        f"files: argument 'content' is {LIMIT + 1:,} bytes, over the limit of {LIMIT:,}: "
        "nothing was written"
    )
    assert not (root / "big.txt").exists() and list(root.iterdir()) == []
    assert list(disk_kit.store.records()) == []
    # at the limit it is written, and reads back
    files.write("full.txt", b"y" * LIMIT)
    assert files.read("full.txt").payload == b"y" * LIMIT
    text = disk_kit.handle("files", {"command": "write", "path": "b.txt", "content": "z" * 500})
    assert text.startswith("error: ScopeError: files: argument 'content' is 500 bytes")


@pytest.mark.parametrize(
    ("command", "arguments"),
    [
        ("create", {"path": "/memories/new.md", "file_text": "x" * (LIMIT + 1)}),
        ("str_replace", {"path": "/memories/a.md", "old_str": "a", "new_str": "é" * 60}),
        ("insert", {"path": "/memories/a.md", "insert_line": 0, "insert_text": "i" * 200}),
    ],
)
def test_memory_refuses_a_text_over_its_limit_before_recording_it(
    disk_kit: ad.Toolkit, root: Path, command: str, arguments: dict[str, object]
) -> None:
    memory = Memory(disk_kit, root, max_bytes=LIMIT)
    memory("create", path="/memories/a.md", file_text="a\n")
    before = list(disk_kit.store.records())
    with pytest.raises(ad.ScopeError) as refused:
        memory(command, **arguments)
    name = next(n for n in ("file_text", "new_str", "insert_text") if n in arguments)
    assert f"memory: argument {name!r} is " in str(refused.value)
    assert str(refused.value).endswith(f"over the limit of {LIMIT}: nothing was written")
    assert list(disk_kit.store.records()) == before
    assert (root / "a.md").read_text() == "a\n" and not (root / "new.md").exists()


def test_a_text_a_command_does_not_write_is_not_measured(disk_kit: ad.Toolkit, root: Path) -> None:
    memory = Memory(disk_kit, root, max_bytes=LIMIT)
    memory("create", path="/memories/a.md", file_text="a\n")
    assert "a" in memory("view", path="/memories/a.md", file_text="x" * 500).text
    with pytest.raises(ad.ArgumentError, match="lone surrogate"):  # not a size
        memory("create", path="/memories/b.md", file_text="\ud800" * 500)


def test_a_read_only_files_says_so_before_it_measures(disk_kit: ad.Toolkit, root: Path) -> None:
    files = Files(disk_kit, root, max_bytes=LIMIT, writable=False)
    with pytest.raises(ad.ScopeError, match="read-only"):
        files.write("big.txt", "x" * (LIMIT + 1))


def test_memory_refuses_an_edit_that_would_grow_a_file_past_its_limit(
    disk_kit: ad.Toolkit, root: Path
) -> None:
    memory = Memory(disk_kit, root, max_bytes=LIMIT)
    memory("create", path="/memories/a.md", file_text="a" * 90 + "\n")
    with pytest.raises(ad.ScopeError, match=r"/memories/a.md would be 111 bytes, over the limit"):
        memory("insert", path="/memories/a.md", insert_line=1, insert_text="b" * 19)
    assert (root / "a.md").read_text() == "a" * 90 + "\n"  # unchanged
    (action,) = [r for r in disk_kit.store.records() if r.status is ad.Status.ERROR]
    assert action.outcome is ad.Outcome.NOT_APPLIED  # recorded: the edit was asked, not done
    # still readable as it was
    assert "a" * 90 in memory("view", path="/memories/a.md").text
