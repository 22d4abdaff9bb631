"""Memory cannot be broken by a deep folder tree or a large file. A model cannot make a
path deeper than `MAX_DEPTH` names, by create or by renaming one deep folder into
another; a tree deeper than Python's stack, made by someone else, is still viewed and
deleted whole. A file over `max_bytes` is not read: viewing or editing it is a one-line
`ScopeError`, and a folder holding it is viewed without reading it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import Memory

MAX_DEPTH = 64  # as adapters/_rootfs.py has it


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def records(kit: ad.Toolkit, command: str) -> list[ad.Record]:
    return [r for r in kit.store.records() if r.tool == "memory" and r.args["command"] == command]


def everything(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# -- depth ---------------------------------------------------------------------------------


def test_renaming_a_deep_folder_into_another_is_refused_before_anything_moves(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    root = tmp_path / "m"
    memory = Memory(kit, root)
    deep = 40  # each tree is allowed; one inside the other would be 83 names deep
    memory("create", path="/memories/x/" + "a/" * deep + "f.txt", file_text="deep")
    memory("create", path="/memories/y/" + "b/" * deep + "g.txt", file_text="g")
    before = everything(root)
    with pytest.raises(ad.ArgumentError, match=f"names deep, over {MAX_DEPTH}") as info:
        memory("rename", old_path="/memories/x", new_path="/memories/y/" + "b/" * deep + "x")
    assert "\n" not in str(info.value) and str(tmp_path) not in str(info.value)
    assert everything(root) == before
    assert [r.outcome for r in records(kit, "rename")] == [ad.Outcome.NOT_APPLIED]
    assert memory("view", path="/memories").text.count("\n") == 1 + len(before)
    moved = memory("rename", old_path="/memories/x", new_path="/memories/y/x")  # 43 names deep
    assert moved.record.outcome is ad.Outcome.COMPLETED


def test_a_create_deeper_than_the_limit_is_refused_before_it_is_recorded(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    memory = Memory(kit, tmp_path / "m")
    path = "/memories/" + "d/" * MAX_DEPTH + "f.txt"
    with pytest.raises(ad.ArgumentError, match=f"argument 'path' is more than {MAX_DEPTH}"):
        memory("create", path=path, file_text="x")
    text = kit.handle("memory", {"command": "create", "path": path, "file_text": "x"})
    assert text.startswith("error: ArgumentError: memory: argument 'path'") and "\n" not in text
    assert everything(tmp_path / "m") == [] and list(kit.store.records()) == []
    at_the_limit = "/memories/" + "d/" * (MAX_DEPTH - 1) + "f.txt"
    assert memory("create", path=at_the_limit, file_text="x").ok


def stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1  # type: ignore[assignment]
    return depth


def with_a_short_stack(call: Callable[[], Any]) -> Any:
    """`call()` with Python's recursion limit 150 frames above where it is called: a tree
    300 folders deep is then deeper than the stack, as one 1,000 deep is by default."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(stack_depth() + 150)
    try:
        return call()
    finally:
        sys.setrecursionlimit(before)


def test_a_tree_deeper_than_the_stack_is_viewed_and_deleted_whole(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    root = tmp_path / "m"
    deep = root / "z" / Path(*["c"] * 300)
    deep.mkdir(parents=True)  # made by someone else: a model cannot make it
    (deep / "g.txt").write_text("g\n")
    (root / "z" / "top.txt").write_text("top\n")
    memory = Memory(kit, root)
    listing = with_a_short_stack(lambda: memory("view", path="/memories").text)
    assert listing.startswith("Directory /memories:\n- z/\n")
    assert "- z/" + "c/" * 300 + "g.txt\n" in listing and "- z/top.txt\n" in listing
    deleted = with_a_short_stack(lambda: memory("delete", path="/memories/z"))
    assert deleted.record.outcome is ad.Outcome.COMPLETED
    assert everything(root) == []


def test_a_deep_delete_that_fails_part_way_says_so(
    kit: ad.Toolkit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "m"
    deep = root / "z" / Path(*["c"] * 300)
    deep.mkdir(parents=True)
    (deep / "g.txt").write_text("g\n")
    memory = Memory(kit, root)
    real, calls = os.rmdir, []

    def rmdir(name: Any, *, dir_fd: int | None = None) -> None:  # we run as root: simulated
        if dir_fd is not None:
            calls.append(name)
            if len(calls) == 51:  # the 50 deepest folders are gone, and g.txt
                raise PermissionError(13, "Permission denied", name)
        real(name, dir_fd=dir_fd)

    monkeypatch.setattr(os, "rmdir", rmdir)
    with pytest.raises(ad.AddressableError, match="partly deleted") as info:
        with_a_short_stack(lambda: memory("delete", path="/memories/z"))
    assert str(info.value).startswith("/memories/z was partly deleted: 51 of what it held")
    assert "\n" not in str(info.value) and str(tmp_path) not in str(info.value)
    assert [r.outcome for r in records(kit, "delete")] == [ad.Outcome.UNKNOWN]
    assert everything(root) == ["z"] + ["z/" + "/".join(["c"] * n) for n in range(1, 251)]


# -- size ----------------------------------------------------------------------------------


def test_a_file_over_max_bytes_is_not_viewed_or_edited(kit: ad.Toolkit, tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    (root / "big.log").write_text("line\n" * 400)  # 2,000 bytes
    (root / "small.txt").write_text("small\n")
    memory = Memory(kit, root, max_bytes=1_000)
    for arguments in (
        {"command": "view", "path": "/memories/big.log", "view_range": [1, 1]},
        {"command": "str_replace", "path": "/memories/big.log", "old_str": "x", "new_str": "y"},
        {"command": "insert", "path": "/memories/big.log", "insert_line": 0, "insert_text": "y"},
    ):
        text = kit.handle("memory", arguments)
        assert text == (
            "error: ScopeError: /memories/big.log is 2,000 bytes, over the limit of 1,000"
        )
    edits = records(kit, "str_replace") + records(kit, "insert")
    assert [r.outcome for r in edits] == [ad.Outcome.NOT_APPLIED] * 2
    assert (root / "big.log").read_text() == "line\n" * 400
    listing = memory("view", path="/memories")
    assert listing.text == "Directory /memories:\n- big.log\n- small.txt\n"
    assert memory("view", path="/memories/small.txt").text.endswith("\tsmall\n")


def test_a_folders_revision_follows_its_files_big_or_small(kit: ad.Toolkit, tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    (root / "big.log").write_text("line\n" * 400)
    (root / "small.txt").write_text("small\n")
    memory = Memory(kit, root, max_bytes=1_000)
    keys = [memory("view", path="/memories").record.key]
    (root / "small.txt").write_text("SMALL\n")
    keys.append(memory("view", path="/memories").record.key)
    (root / "big.log").write_text("LINE\n" * 401)
    keys.append(memory("view", path="/memories").record.key)
    keys.append(memory("view", path="/memories").record.key)
    assert len(set(keys)) == 3 and keys[2] == keys[3]


def test_a_renamed_files_revision_is_its_contents_hash(kit: ad.Toolkit, tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    data = os.urandom(2_500_000)  # over two of the chunks the hash is read in
    (root / "blob.bin").write_bytes(data)
    memory = Memory(kit, root)
    moved = memory("rename", old_path="/memories/blob.bin", new_path="/memories/b/blob.bin")
    rev = ad.ids.content_hash(data)[:12]
    assert moved.record.meta["artifact"] == {
        "path": "/memories/b/blob.bin",
        "rev": rev,
        "key": f"memory:/memories/b/blob.bin@{rev}",
    }
    small = Memory(kit, root, max_bytes=1_000, name="small")  # too big to hash: no revision
    done = small("rename", old_path="/memories/b/blob.bin", new_path="/memories/blob.bin")
    assert done.record.outcome is ad.Outcome.COMPLETED
    assert done.record.meta["artifact"] == {"path": "/memories/blob.bin"}
    assert (root / "blob.bin").read_bytes() == data


SPARSE = textwrap.dedent(
    """
    import os, resource, sys
    import addressable as ad
    from addressable.adapters import Memory
    root = sys.argv[1]
    with open(os.path.join(root, "big.log"), "wb") as f:
        f.truncate(4 << 30)  # 4 GB that take no room on disk
    kit = ad.Toolkit(ad.open_store("memory://"))
    Memory(kit, root)
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a read of it cannot fit
    print(kit.handle("memory", {"command": "view", "path": "/memories"}))
    view = {"command": "view", "path": "/memories/big.log", "view_range": [1, 1]}
    print(kit.handle("memory", view))
    """
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_AS is POSIX")
def test_a_folder_with_a_file_larger_than_memory_is_viewed(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", SPARSE, str(tmp_path / "m")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "Directory /memories:\n- big.log\n\n"
        "error: ScopeError: /memories/big.log is 4,294,967,296 bytes, over the limit of "
        "10,485,760\n"
    )
