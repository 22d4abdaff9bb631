"""Files and Memory given a path that names no file as asked: an error from the library's
tree, one line naming the path as the model gave it; and a re-run (`verify=True`) of a
read whose file is gone: a result that says it changed, not an exception."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import addressable as ad
from addressable import adapters
from addressable.adapters import Files, Memory, MemoryCommandError


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / "a.txt").write_text("a\n")
    return folder


def one_line_naming(error: BaseException, path: str, root: Path) -> bool:
    text = str(error)
    return repr(path) in text and "\n" not in text and str(root) not in text


@pytest.mark.parametrize(
    ("path", "why"),
    [("missing", "it does not exist"), ("a.txt/b", "a name on the way to it is not a folder")],
)
def test_a_read_of_a_path_that_names_no_file_is_an_error_of_the_tree(
    kit: ad.Toolkit, root: Path, path: str, why: str
) -> None:
    files = Files(kit, root)
    for read in (files, files.read):
        with pytest.raises(ad.ArgumentError) as refused:
            read(path)
        assert isinstance(refused.value, adapters.BadPath)
        assert str(refused.value) == f"files: cannot read {path!r}: {why}"
        assert one_line_naming(refused.value, path, root)
    text = kit.handle("files", {"command": "read", "path": path})
    assert text == f"error: BadPath: files: cannot read {path!r}: {why}"
    (record, *_) = kit.store.records()
    assert record.status is ad.Status.ERROR and str(root) not in (record.error or "")


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("a.txt/", "it is a file, not a folder"),
        ("a.txt/.", "it is a file, not a folder"),
        ("./a.txt//", "it is a file, not a folder"),
        ("a.txt/../a.txt", "a name on the way to it is not a folder"),
        ("a.txt/x/..", "a name on the way to it is not a folder"),
    ],
)
def test_a_read_of_a_file_named_as_a_folder_is_refused_as_posix_does(
    kit: ad.Toolkit, root: Path, path: str, why: str
) -> None:
    files = Files(kit, root)
    with pytest.raises(adapters.BadPath) as refused:
        files.read(path)
    assert str(refused.value) == f"files: cannot read {path!r}: {why}"
    assert refused.value.errno == errno.ENOTDIR
    with pytest.raises(OSError):  # as open() does
        open(f"{root}/{path}").close()
    # nothing is recorded under the file's own key, which still reads
    assert list(kit.store.records()) == []
    assert files.read("a.txt").text == "a\n"


def test_a_write_by_a_path_that_takes_a_file_for_a_folder_is_refused(
    kit: ad.Toolkit, root: Path
) -> None:
    files = Files(kit, root, writable=True)
    with pytest.raises(adapters.BadPath) as refused:
        files.write("a.txt/../c.txt", "c")
    assert refused.value.errno == errno.ENOTDIR
    assert "a name on the way to it is not a folder" in str(refused.value)
    assert not (root / "c.txt").exists() and list(kit.store.records()) == []


def test_a_write_through_a_file_is_an_error_of_the_tree_and_not_applied(
    kit: ad.Toolkit, root: Path
) -> None:
    files = Files(kit, root)
    with pytest.raises(adapters.BadPath) as refused:
        files.write("a.txt/b", "y")
    assert (
        str(refused.value)
        == "files: cannot write 'a.txt/b': a name on the way to it is not a folder"
    )
    assert isinstance(refused.value, ad.AddressableError)
    (record,) = kit.store.records()
    assert record.outcome is ad.Outcome.NOT_APPLIED
    assert (root / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize("path", ["newdir/", "newdir/.", "new/dir/.."])
def test_a_write_to_a_path_that_names_a_folder_is_refused(
    kit: ad.Toolkit, root: Path, path: str
) -> None:
    files = Files(kit, root)
    with pytest.raises(ad.ArgumentError) as refused:
        files.write(path, "y")
    assert str(refused.value) == f"files: argument 'path' names a folder, not a file: {path!r}"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"]  # nothing written
    assert list(kit.store.records()) == []


def test_verify_of_a_read_whose_file_was_deleted_is_a_change(kit: ad.Toolkit, root: Path) -> None:
    (root / "u.txt").write_text("u\n")
    read = Files(kit, root)("u.txt")
    os.remove(root / "u.txt")
    fresh = kit.replay(read.id, verify=True)
    assert fresh.changed is True and fresh.previous_id == read.id
    assert fresh.record.status is ad.Status.ERROR
    assert fresh.text == "BadPath: files: cannot read 'u.txt': it does not exist"
    assert kit.replay(read.id).text == "u\n"  # what was read stays as it was
    assert kit.replay(fresh.id).text == fresh.text  # the re-run is recorded
    (root / "u.txt").write_text("u\n")
    assert kit.replay(read.id, verify=True).changed is False


def test_memory_through_a_file_is_a_memory_command_error(kit: ad.Toolkit, tmp_path: Path) -> None:
    memory = Memory(kit, tmp_path / "mem")
    memory("create", path="/memories/f.md", file_text="f\n")
    memory("create", path="/memories/g.md", file_text="g\n")
    with pytest.raises(MemoryCommandError) as refused:
        memory("create", path="/memories/f.md/x", file_text="y")
    assert str(refused.value) == (
        "cannot create /memories/f.md/x: a name on the way to it is not a folder"
    )
    with pytest.raises(MemoryCommandError, match=r"^cannot rename /memories/g\.md to /memories/f"):
        memory("rename", old_path="/memories/g.md", new_path="/memories/f.md/x")
    with pytest.raises(MemoryCommandError, match=r"^/memories/newdir/ names a folder: name a file"):
        memory("create", path="/memories/newdir/", file_text="y")
    text = kit.handle("memory", {"command": "create", "path": "/memories/f.md/x"})
    assert text.startswith("error: MemoryCommandError: cannot create /memories/f.md/x")
    assert sorted(p.name for p in (tmp_path / "mem").iterdir()) == ["f.md", "g.md"]
    failed = [r for r in kit.store.records() if r.status is ad.Status.ERROR]
    assert len(failed) == 4 and all(r.outcome is ad.Outcome.NOT_APPLIED for r in failed)
    assert all(str(tmp_path) not in (r.error or "") for r in failed)


def test_verify_of_a_memory_view_whose_file_was_deleted_is_a_change(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    memory = Memory(kit, tmp_path / "mem")
    memory("create", path="/memories/notes.md", file_text="one\n")
    view = memory("view", path="/memories/notes.md")
    memory("delete", path="/memories/notes.md")
    fresh = kit.replay(view.id, verify=True)
    assert fresh.changed is True and fresh.record.status is ad.Status.ERROR
    assert fresh.text == "MemoryCommandError: /memories/notes.md does not exist"
    with pytest.raises(MemoryCommandError, match="does not exist"):  # a view still raises
        memory("view", path="/memories/notes.md")


@pytest.mark.parametrize(
    ("command", "arguments"),
    [
        ("view", {"path": "/memories/a.txt/"}),
        ("str_replace", {"path": "/memories/a.txt/", "old_str": "a", "new_str": "b"}),
        ("insert", {"path": "a.txt/../a.txt", "insert_line": 0, "insert_text": "x"}),
        ("rename", {"old_path": "/memories/a.txt/.", "new_path": "/memories/b.txt"}),
        ("delete", {"path": "/memories/a.txt/"}),
    ],
)
def test_memory_refuses_a_path_that_takes_a_file_for_a_folder_as_files_does(
    kit: ad.Toolkit, root: Path, command: str, arguments: dict[str, object]
) -> None:
    memory = Memory(kit, root)
    with pytest.raises(
        MemoryCommandError, match=r"a\.txt/?.*: (it is a file, not a folder|a name on)"
    ):
        memory(command, **arguments)
    assert (root / "a.txt").read_text() == "a\n" and not (root / "b.txt").exists()
    assert list(kit.store.records()) == []
