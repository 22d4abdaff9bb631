"""Symlinks in the root: a symlink loop is a one-line `ArgumentError` naming the path
given, not where the root is; Memory's `delete` and `rename` act on a symlink named, not
on what it names, which is left as it was."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import Files, Memory


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root, under a folder whose name must not be shown, holding `loop -> loop`."""
    root = tmp_path / "secretroot"
    root.mkdir()
    os.symlink("loop", root / "loop")
    (root / "notes.txt").write_text("notes\n")
    return root


def files_calls(files: Files) -> list[tuple[str, Any]]:
    return [
        ("loop", lambda: files.read("loop")),
        ("loop/x", lambda: files.read("loop/x")),
        ("loop", lambda: files.write("loop", "x")),
        ("loop/x", lambda: files.write("loop/x", "x")),
    ]


def test_files_refuses_a_symlink_loop_in_one_line(kit: ad.Toolkit, root: Path) -> None:
    files = Files(kit, root)
    for path, call in files_calls(files):
        with pytest.raises(ad.ArgumentError) as info:
            call()
        assert str(info.value) == (
            f"files: argument 'path' {path!r} cannot be followed: it runs into a symlink loop"
        )
    for command in ("read", "write"):
        text = kit.handle("files", {"command": command, "path": "loop/x", "content": "x"})
        assert text == (
            "error: ArgumentError: files: argument 'path' 'loop/x' cannot be followed: "
            "it runs into a symlink loop"
        )
    assert [r for r in kit.store.records() if r.tool == "files"] == []
    assert sorted(os.listdir(root)) == ["loop", "notes.txt"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"command": "view", "path": "/memories/loop"},
        {"command": "view", "path": "/memories/loop/x"},
        {"command": "create", "path": "/memories/loop", "file_text": "x"},
        {"command": "create", "path": "/memories/loop/x", "file_text": "x"},
        {"command": "str_replace", "path": "/memories/loop", "old_str": "a", "new_str": "b"},
        {"command": "delete", "path": "/memories/loop/x"},
        {"command": "rename", "old_path": "/memories/notes.txt", "new_path": "/memories/loop/x"},
    ],
    ids=lambda a: f"{a['command']}-{a.get('path', a.get('new_path'))}",
)
def test_memory_refuses_a_symlink_loop_in_one_line(
    kit: ad.Toolkit, root: Path, tmp_path: Path, arguments: dict[str, Any]
) -> None:
    memory = Memory(kit, root)
    with pytest.raises(ad.ArgumentError, match="cannot be followed: it runs into a symlink loop"):
        memory(**arguments)
    text = kit.handle("memory", arguments)
    assert text.startswith("error: ArgumentError: memory: argument ") and "\n" not in text
    assert "'/memories/loop" in text and str(tmp_path) not in text
    assert list(kit.store.records()) == []  # refused before anything runs
    assert sorted(os.listdir(root)) == ["loop", "notes.txt"]


def test_memory_lists_a_symlink_loop_and_can_delete_it(kit: ad.Toolkit, root: Path) -> None:
    memory = Memory(kit, root)
    assert memory("view", path="/memories").text == "Directory /memories:\n- loop\n- notes.txt\n"
    assert memory("delete", path="/memories/loop").text == "deleted /memories/loop"
    assert sorted(os.listdir(root)) == ["notes.txt"]


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A memory root holding the folder `project` (with notes.md) and `current ->
    project`; beside the root, `outside` (with secret.md), and `away -> ../outside`."""
    root = tmp_path / "mem"
    (root / "project").mkdir(parents=True)
    (root / "project" / "notes.md").write_text("important\n")
    os.symlink("project", root / "current")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("secret\n")
    os.symlink("../outside", root / "away")
    return root


def test_deleting_a_symlink_removes_the_link_not_what_it_names(
    kit: ad.Toolkit, linked: Path, tmp_path: Path
) -> None:
    memory = Memory(kit, linked)
    assert memory("delete", path="/memories/current").text == "deleted /memories/current"
    assert sorted(os.listdir(linked)) == ["away", "project"]
    assert (linked / "project" / "notes.md").read_text() == "important\n"
    memory("delete", path="/memories/away")  # a link out of the root: the link alone goes
    assert sorted(os.listdir(linked)) == ["project"]
    assert (tmp_path / "outside" / "secret.md").read_text() == "secret\n"
    outcomes = [r.outcome for r in kit.store.records() if r.args["command"] == "delete"]
    assert outcomes == [ad.Outcome.COMPLETED] * 2


def test_renaming_a_symlink_moves_the_link_not_what_it_names(
    kit: ad.Toolkit, linked: Path, tmp_path: Path
) -> None:
    memory = Memory(kit, linked)
    moved = memory("rename", old_path="/memories/current", new_path="/memories/old")
    assert moved.text == "renamed /memories/current to /memories/old"
    assert moved.record.meta["artifact"] == {"path": "/memories/old"}
    assert sorted(os.listdir(linked)) == ["away", "old", "project"]
    assert os.readlink(linked / "old") == "project"
    memory("rename", old_path="/memories/away", new_path="/memories/sub/away")
    assert os.readlink(linked / "sub" / "away") == "../outside"
    assert sorted(os.listdir(tmp_path / "outside")) == ["secret.md"]


def test_renaming_onto_a_symlink_is_refused_as_a_name_that_exists(
    kit: ad.Toolkit, linked: Path
) -> None:
    os.symlink("nothing-here", linked / "dangling")
    memory = Memory(kit, linked)
    with pytest.raises(ad.ArgumentError, match="/memories/dangling already exists"):
        memory("rename", old_path="/memories/project", new_path="/memories/dangling")
    assert sorted(os.listdir(linked)) == ["away", "current", "dangling", "project"]
    assert os.readlink(linked / "dangling") == "nothing-here"


@pytest.mark.parametrize(
    "arguments",
    [
        {"command": "view", "path": "/memories/away"},
        {"command": "view", "path": "/memories/away/secret.md"},
        {"command": "delete", "path": "/memories/away/secret.md"},
        {"command": "create", "path": "/memories/away/new.md", "file_text": "x"},
        {"command": "rename", "old_path": "/memories/away/secret.md", "new_path": "/memories/s"},
        {"command": "rename", "old_path": "/memories/project", "new_path": "/memories/away/p"},
    ],
    ids=lambda a: a["command"],
)
def test_what_a_symlink_out_of_the_root_names_stays_out_of_reach(
    kit: ad.Toolkit, linked: Path, tmp_path: Path, arguments: dict[str, Any]
) -> None:
    memory = Memory(kit, linked)
    with pytest.raises(ad.ScopeError, match="leaves /memories"):
        memory(**arguments)
    assert sorted(os.listdir(tmp_path / "outside")) == ["secret.md"]
    assert sorted(os.listdir(linked)) == ["away", "current", "project"]
