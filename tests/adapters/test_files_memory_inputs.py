"""Files and Memory take a model's bad input, and Python's, as one line from the library's
error tree naming the argument, before anything is written or recorded as an Action that
may have happened: the root or a folder as a file to write, content that is not text, a
path with a NUL or a name too long, a FIFO or socket to read, a memory command missing an
argument or with a range that is not one. A folder swapped for a symlink after the check
does not lead out of the root."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import Files, Memory, MemoryCommandError, Shell


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture
def box(tmp_path: Path) -> Path:
    """The folder that holds the adapter's root: nothing may ever appear in it."""
    (tmp_path / "box" / "root").mkdir(parents=True)
    return tmp_path / "box"


def records(kit: ad.Toolkit, tool: str) -> list[ad.Record]:
    return [r for r in kit.store.records() if r.tool == tool]


def everything(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# -- Files: writes -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["", ".", "sub/..", "sub", "sub/"])
def test_writing_the_root_or_a_folder_writes_nothing_anywhere(
    kit: ad.Toolkit, box: Path, path: str
) -> None:
    root = box / "root"
    (root / "sub").mkdir()
    files = Files(kit, root)
    with pytest.raises(ad.ArgumentError, match="argument 'path' names a folder"):
        files.write(path, "X" * 100_000)
    assert everything(box) == ["root", "root/sub"]  # no temp file, in the root or above it
    text = kit.handle("files", {"command": "write", "path": path, "content": "x"})
    assert text.startswith("error: ArgumentError: files: argument 'path'") and "\n" not in text
    assert str(box) not in text
    assert everything(box) == ["root", "root/sub"] and records(kit, "files") == []


@pytest.mark.parametrize("content", [7, 209_715_200, [104, 105], None, 2.5, bytearray(b"hi")])
def test_content_that_is_not_str_or_bytes_is_refused(
    kit: ad.Toolkit, box: Path, content: Any
) -> None:
    files = Files(kit, box / "root")
    with pytest.raises(ad.ArgumentError, match="argument 'content' must be str or bytes"):
        files.write("a.bin", content)
    assert everything(box) == ["root"] and records(kit, "files") == []
    assert files.write("a.bin", b"\x00\x01").record.outcome is ad.Outcome.COMPLETED
    assert (box / "root" / "a.bin").read_bytes() == b"\x00\x01"


def test_content_with_a_lone_surrogate_is_refused_before_writing(
    kit: ad.Toolkit, box: Path
) -> None:
    files = Files(kit, box / "root")
    with pytest.raises(ad.ArgumentError, match="argument 'content' holds a lone surrogate"):
        files.write("z.txt", "ok \ud800")
    text = kit.handle("files", {"command": "write", "path": "z.txt", "content": "\ud800"})
    assert text.startswith("error: ArgumentError: files: argument 'content'")
    assert everything(box) == ["root"] and records(kit, "files") == []


BAD_PATHS = [
    ("a\x00b", "holds a NUL"),
    ("n" * 300, "a name longer than 255 bytes"),
    ("d/" * 2_000 + "f", "over 1,024"),
    ("\udcff.txt", "lone surrogate"),
]


@pytest.mark.parametrize(("path", "says"), BAD_PATHS, ids=["nul", "name", "long", "surrogate"])
def test_a_path_no_file_can_have_is_one_line_naming_it(
    kit: ad.Toolkit, box: Path, path: str, says: str
) -> None:
    files = Files(kit, box / "root")
    for call in (lambda: files.read(path), lambda: files.write(path, "x")):
        with pytest.raises(ad.ArgumentError, match="files: argument 'path'") as info:
            call()
        assert says in str(info.value) and "\n" not in str(info.value)
    for command in ("read", "write"):
        text = kit.handle("files", {"command": command, "path": path, "content": "x"})
        assert text.startswith("error: ArgumentError: files: argument 'path'"), text
    assert everything(box) == ["root"] and records(kit, "files") == []


def test_errors_name_the_path_given_not_where_the_root_is(kit: ad.Toolkit, box: Path) -> None:
    root = box / "root"
    (root / "blocker").write_text("a file, not a folder")
    files = Files(kit, root)
    with pytest.raises(ad.ArgumentError) as missing:  # BadPath: in the tree, and an OSError
        files.read("nope.txt")
    assert str(missing.value) == "files: cannot read 'nope.txt': it does not exist"
    with pytest.raises(OSError) as blocked:
        files.write("blocker/x.txt", "data")
    assert str(box) not in str(blocked.value) and "blocker/x.txt" in str(blocked.value)
    outcomes = {r.args["command"]: r.outcome for r in records(kit, "files")}
    assert outcomes == {"read": None, "write": ad.Outcome.NOT_APPLIED}
    assert all(str(box) not in (r.error or "") for r in records(kit, "files"))


# -- Files: reads of what is not a regular file ------------------------------------------


def finishes(call: Callable[[], object], unblock: Path | None = None) -> object:
    """`call`'s result or exception, run in a thread; fails if it is still blocked after
    five seconds (and then opens the FIFO `unblock` for writing, to free the thread)."""
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["result"] = call()
        except Exception as exc:
            out["result"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive() and unblock is not None:
        os.close(os.open(unblock, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(5)
        pytest.fail(f"reading {unblock.name} blocked until a writer came")
    assert not thread.is_alive()
    return out["result"]


def test_a_fifo_is_refused_without_blocking(kit: ad.Toolkit, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    files = Files(kit, tmp_path)
    error = finishes(lambda: files.read("fifo"), unblock=tmp_path / "fifo")
    assert isinstance(error, ad.ArgumentError)
    assert str(error) == "files: argument 'path' names a FIFO, not a file: 'fifo'"
    text = finishes(lambda: kit.handle("files", {"command": "read", "path": "fifo"}))
    assert text == "error: ArgumentError: files: argument 'path' names a FIFO, not a file: 'fifo'"


def test_a_socket_or_a_folder_is_refused(kit: ad.Toolkit, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    files = Files(kit, tmp_path)
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(tmp_path / "sock"))
        with pytest.raises(ad.ArgumentError, match="names a socket, not a file: 'sock'"):
            files.read("sock")
    for path in ("sub", "", "sub/.."):
        with pytest.raises(ad.ArgumentError, match="names a folder, not a file"):
            files.read(path)


# -- Files: a folder swapped for a symlink after the check -------------------------------


def swap_after_check(
    adapter: Files | Memory, folder: Path, outside: Path, mp: pytest.MonkeyPatch
) -> None:
    """Once a path is checked, replace `folder` by a symlink to `outside`, as a process
    racing the adapter could; each check sees the folder, each use after it the symlink."""
    name = "_inside" if isinstance(adapter, Files) else "_resolve"
    check = getattr(adapter, name)
    stash = folder.with_name("stash")

    def checked_then_swapped(*args: Any) -> Any:
        if folder.is_symlink():  # swapped after an earlier check: the folder is back
            folder.unlink()
            stash.rename(folder)
        found = check(*args)
        folder.rename(stash)
        folder.symlink_to(outside)
        return found

    mp.setattr(adapter, name, checked_then_swapped)


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_read(
    kit: ad.Toolkit, box: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = box / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("TOP SECRET\n")
    (box / "root" / "d").mkdir()
    (box / "root" / "d" / "f.txt").write_text("inside\n")
    files = Files(kit, box / "root")
    swap_after_check(files, box / "root" / "d", outside, monkeypatch)
    with pytest.raises(OSError):
        files.read("d/f.txt")
    assert all(
        kit.store.read(r) != b"TOP SECRET\n"
        for r in records(kit, "files")
        if r.status is ad.Status.OK
    )


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_written(
    kit: ad.Toolkit, box: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = box / "outside"
    outside.mkdir()
    (box / "root" / "d").mkdir()
    files = Files(kit, box / "root")
    swap_after_check(files, box / "root" / "d", outside, monkeypatch)
    with pytest.raises(OSError):
        files.write("d/new.txt", "planted")
    assert list(outside.iterdir()) == []
    (record,) = records(kit, "files")
    assert record.outcome is ad.Outcome.NOT_APPLIED


# -- Memory: a folder swapped for a symlink after the check ------------------------------


@pytest.fixture
def raced(kit: ad.Toolkit, box: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Memory, Path]:
    """A Memory whose folder `d` (holding f.txt and sub/g.txt, as `outside` does) is
    swapped for a symlink to `outside` after each path is checked."""
    outside = box / "outside"
    for folder, says in ((outside, "TOP SECRET"), (box / "root" / "d", "inside")):
        (folder / "sub").mkdir(parents=True)
        (folder / "f.txt").write_text(f"{says}\n")
        (folder / "sub" / "g.txt").write_text(f"{says} too\n")
    (box / "root" / "top.txt").write_text("top\n")
    memory = Memory(kit, box / "root")
    swap_after_check(memory, box / "root" / "d", outside, monkeypatch)
    return memory, outside


SECRET = {"f.txt": "TOP SECRET\n", "sub": None, "sub/g.txt": "TOP SECRET too\n"}


def unchanged(outside: Path) -> bool:
    found = {
        p.relative_to(outside).as_posix(): p.read_text() if p.is_file() else None
        for p in outside.rglob("*")
    }
    return found == SECRET


@pytest.mark.parametrize("path", ["/memories/d/f.txt", "/memories/d", "/memories/d/sub"])
def test_memory_does_not_view_through_a_folder_swapped_for_a_symlink(
    raced: tuple[Memory, Path], kit: ad.Toolkit, path: str
) -> None:
    memory, outside = raced
    with pytest.raises((OSError, ad.AddressableError)):
        memory("view", path=path)
    seen = [kit.store.read(r) for r in records(kit, "memory") if r.status is ad.Status.OK]
    assert not any(b"TOP SECRET" in data or b"g.txt" in data for data in seen)
    assert unchanged(outside)


CHANGES: list[dict[str, Any]] = [
    {"command": "create", "path": "/memories/d/new.txt", "file_text": "planted"},
    {"command": "create", "path": "/memories/d/f.txt", "file_text": "planted"},
    {"command": "str_replace", "path": "/memories/d/f.txt", "old_str": "TOP", "new_str": "X"},
    {"command": "insert", "path": "/memories/d/f.txt", "insert_line": 0, "insert_text": "X"},
    {"command": "delete", "path": "/memories/d/f.txt"},
    {"command": "delete", "path": "/memories/d/sub"},
    {"command": "rename", "old_path": "/memories/d/f.txt", "new_path": "/memories/moved.txt"},
    {"command": "rename", "old_path": "/memories/d/sub", "new_path": "/memories/moved"},
    {"command": "rename", "old_path": "/memories/top.txt", "new_path": "/memories/d/top.txt"},
]


@pytest.mark.parametrize(
    "arguments", CHANGES, ids=[f"{a['command']}-{i}" for i, a in enumerate(CHANGES)]
)
def test_memory_changes_nothing_through_a_folder_swapped_for_a_symlink(
    raced: tuple[Memory, Path], kit: ad.Toolkit, box: Path, arguments: dict[str, Any]
) -> None:
    memory, outside = raced
    with pytest.raises((OSError, MemoryCommandError)) as info:  # "does not exist", for one
        memory(**arguments)
    assert str(box) not in str(info.value)  # named as given, not where the root is
    assert unchanged(outside)
    assert not (box / "root" / "moved.txt").exists() and not (box / "root" / "moved").exists()
    (record,) = records(kit, "memory")
    assert record.outcome is ad.Outcome.NOT_APPLIED


# -- Memory ------------------------------------------------------------------------------


@pytest.fixture
def memory(kit: ad.Toolkit, box: Path) -> Memory:
    (box / "outside.txt").write_text("TOP SECRET\n")
    os.symlink(box, box / "root" / "dirlink")
    memory = Memory(kit, box / "root")
    memory("create", path="/memories/notes.txt", file_text="one\ntwo\nthree\n")
    return memory


NOTES = "/memories/notes.txt"
REFUSED: list[tuple[dict[str, Any], str]] = [  # a ScopeError when it says "leaves"
    ({"command": "rename", "old_path": NOTES, "new_path": "/memories/../x"}, "leaves /memories"),
    ({"command": "delete", "path": "/memories/dirlink/outside.txt"}, "leaves /memories"),
    ({"command": "create", "path": "/memories/dirlink/new.txt"}, "leaves /memories"),
    ({"command": "insert", "path": NOTES, "insert_line": "abc"}, "argument 'insert_line'"),
    ({"command": "insert", "path": NOTES, "insert_line": True}, "argument 'insert_line'"),
    ({"command": "str_replace", "path": NOTES, "old_str": ["one"]}, "argument 'old_str'"),
    ({"command": "create", "path": "/memories/a\x00b"}, "holds a NUL"),
    ({"command": "create", "path": "/memories/" + "n" * 300}, "255 bytes"),
    ({"command": "create", "file_text": "x"}, "argument 'path' is missing"),
    ({"command": "str_replace", "path": NOTES, "new_str": "1"}, "argument 'old_str' is missing"),
    ({"command": "insert", "path": NOTES, "insert_text": "z"}, "argument 'insert_line' is missing"),
    ({"command": "rename", "old_path": NOTES}, "argument 'new_path' is missing"),
    ({"command": "rename", "old_path": "/m\x00", "new_path": "/b"}, "argument 'old_path' holds"),
    ({"command": "create", "path": "/memories/s", "file_text": "\ud800"}, "'file_text' holds a"),
    ({"command": "create", "path": "/memories/s.txt", "bogus": 1}, "argument 'bogus' is not"),
]


@pytest.mark.parametrize(
    ("arguments", "says"), REFUSED, ids=[f"{a['command']}-{i}" for i, (a, _) in enumerate(REFUSED)]
)
def test_a_refused_memory_command_is_not_an_action_that_may_have_happened(
    memory: Memory, kit: ad.Toolkit, box: Path, arguments: dict[str, Any], says: str
) -> None:
    before = everything(box)
    command = arguments["command"]
    error = ad.ScopeError if says.startswith("leaves") else ad.ArgumentError
    with pytest.raises(error, match=says) as info:
        memory(command, **{k: v for k, v in arguments.items() if k != "command"})
    assert "\n" not in str(info.value)
    text = kit.handle("memory", arguments)
    assert text.startswith("error: ") and says in text and "\n" not in text
    assert everything(box) == before
    assert [r.outcome for r in records(kit, "memory")] == [ad.Outcome.COMPLETED]  # the create


COMMANDS_NOT_GIVEN_AS_TEXT: list[tuple[Callable[[Memory], object], str]] = [
    (lambda m: m.run({"command": ["view"]}), "argument 'command' must be a string, not list"),
    (lambda m: m(["view"]), "argument 'command' must be a string, not list"),  # type: ignore[arg-type]
    (lambda m: m.run({"command": {"view": 1}}), "argument 'command' must be a string, not dict"),
    (lambda m: m.run({"command": 5}), "argument 'command' must be a string, not int"),
    (lambda m: m.run({}), "argument 'command' must be a string, not NoneType"),
    (lambda m: m.run("view"), "the arguments must be an object, not str"),  # type: ignore[arg-type]
    (lambda m: m.run(["view"]), "the arguments must be an object, not list"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(
    ("call", "says"),
    COMMANDS_NOT_GIVEN_AS_TEXT,
    ids=["list", "list-positional", "dict", "int", "none", "str-arguments", "list-arguments"],
)
def test_a_memory_call_whose_command_is_not_text_is_refused_in_one_line(
    memory: Memory, kit: ad.Toolkit, box: Path, call: Callable[[Memory], object], says: str
) -> None:
    before = everything(box)
    with pytest.raises(ad.ArgumentError) as info:
        call(memory)
    assert str(info.value) == f"memory: {says}"
    assert everything(box) == before
    assert [r.outcome for r in records(kit, "memory")] == [ad.Outcome.COMPLETED]  # the create


def test_a_models_command_that_is_not_text_is_one_line(memory: Memory, kit: ad.Toolkit) -> None:
    text = kit.handle("memory", {"command": ["view"], "path": "/memories"})
    assert text.startswith("error: memory: argument 'command' does not fit: "), text
    assert text.endswith("(got a list)")
    assert "\n" not in text


@pytest.mark.parametrize("view_range", [[1], [1, 2, 3], [3, 1], [-1, 2], [0, 2], [2, -2]])
def test_a_view_range_that_is_not_a_range_is_refused(
    memory: Memory, kit: ad.Toolkit, view_range: list[int]
) -> None:
    with pytest.raises(ad.ArgumentError, match="argument 'view_range'") as info:
        memory("view", path="/memories/notes.txt", view_range=view_range)
    assert "\n" not in str(info.value)
    text = kit.handle(
        "memory", {"command": "view", "path": "/memories/notes.txt", "view_range": view_range}
    )
    assert text.startswith("error: ArgumentError: memory: argument 'view_range'"), text
    assert [r.tool for r in kit.store.records()] == ["memory"]  # the create alone


def test_view_ranges_that_are_ranges_still_work(memory: Memory) -> None:
    view = memory("view", path="/memories/notes.txt", view_range=[2, -1]).text
    assert view == "Content of /memories/notes.txt:\n     2\ttwo\n     3\tthree\n"
    assert memory("view", path="/memories/notes.txt", view_range=[3, 3]).text.endswith(
        "     3\tthree\n"
    )


def test_a_command_the_files_make_impossible_is_not_applied(
    memory: Memory, kit: ad.Toolkit, box: Path
) -> None:
    (box / "root" / "sub").mkdir()
    (box / "root" / "latin1.txt").write_bytes(b"caf\xe9\n")
    before = everything(box)
    with pytest.raises(MemoryCommandError, match="is a folder"):
        memory("create", path="/memories/sub", file_text="x")
    with pytest.raises(MemoryCommandError, match="is a folder"):
        memory("create", path="/memories", file_text="x")  # the root: nothing above it
    with pytest.raises(MemoryCommandError, match="not UTF-8 text"):
        memory("str_replace", path="/memories/latin1.txt", old_str="caf", new_str="x")
    with pytest.raises(MemoryCommandError, match="not UTF-8 text"):
        memory("view", path="/memories/latin1.txt")
    assert everything(box) == before
    failed = [r.outcome for r in records(kit, "memory") if r.status is ad.Status.ERROR]
    assert failed == [ad.Outcome.NOT_APPLIED] * 3


# -- permissions: a rewrite keeps a file's mode; a new file is made as before ------------


@pytest.fixture
def umask_022() -> Any:
    """The umask 022, for the test's length (these tests run in one thread)."""
    before = os.umask(0o022)
    yield
    os.umask(before)


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


@pytest.mark.usefixtures("umask_022")
def test_memory_keeps_a_files_mode_and_makes_a_new_file_as_open_does(
    kit: ad.Toolkit, box: Path
) -> None:
    root = box / "root"
    memory = Memory(kit, root)
    memory("create", path="/memories/new.txt", file_text="one\n")
    assert mode(root / "new.txt") == 0o644  # 0666 less the umask, as write_text made it
    for name, kept in (("shared.txt", 0o644), ("private.txt", 0o600), ("run.sh", 0o750)):
        (root / name).write_text("one\ntwo\n")
        (root / name).chmod(kept)
        memory("str_replace", path=f"/memories/{name}", old_str="two", new_str="2")
        assert mode(root / name) == kept
        memory("insert", path=f"/memories/{name}", insert_line=1, insert_text="x")
        assert mode(root / name) == kept
        memory("create", path=f"/memories/{name}", file_text="again\n")
        assert mode(root / name) == kept and (root / name).read_text() == "again\n"
    assert everything(box) == [
        "root",
        "root/new.txt",
        "root/private.txt",
        "root/run.sh",
        "root/shared.txt",
    ]


@pytest.mark.usefixtures("umask_022")
def test_files_makes_a_new_file_0600_and_a_rewrite_keeps_its_mode(
    kit: ad.Toolkit, box: Path
) -> None:
    root = box / "root"
    files = Files(kit, root)
    files.write("new.txt", "x")
    assert mode(root / "new.txt") == 0o600
    (root / "tool.sh").write_text("#!/bin/sh\n")
    (root / "tool.sh").chmod(0o755)
    files.write("tool.sh", "#!/bin/sh\necho hi\n")
    assert mode(root / "tool.sh") == 0o755  # the executable bit survives a rewrite
    assert (root / "tool.sh").read_text() == "#!/bin/sh\necho hi\n"


# -- a change that fails leaves nothing behind a not_applied ------------------------------


@pytest.mark.parametrize("new_path", ["/memories/d/x/y", "/memories/d/x", "/memories/d"])
def test_a_rename_into_the_folder_it_moves_is_refused_before_anything_is_made(
    kit: ad.Toolkit, box: Path, new_path: str
) -> None:
    (box / "root" / "d").mkdir()
    (box / "root" / "d" / "f.txt").write_text("f\n")
    memory = Memory(kit, box / "root")
    before = everything(box)
    with pytest.raises(ad.ArgumentError) as info:
        memory("rename", old_path="/memories/d", new_path=new_path)
    assert "\n" not in str(info.value) and str(box) not in str(info.value)
    assert everything(box) == before  # no d/x left behind
    (record,) = records(kit, "memory")
    assert record.outcome is ad.Outcome.NOT_APPLIED


def fail_on(mp: pytest.MonkeyPatch, name: str, error: OSError) -> None:
    """Make os.<name>, called with a folder's fd (as the adapters call it, not the store),
    raise `error`."""
    real = getattr(os, name)

    def failing(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("dir_fd") is not None or kwargs.get("src_dir_fd") is not None:
            raise error
        return real(*args, **kwargs)

    mp.setattr(os, name, failing)


CROSS_DEVICE = OSError(18, "Invalid cross-device link")


def test_a_rename_that_fails_removes_the_folders_it_made(
    kit: ad.Toolkit, box: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (box / "root" / "f.txt").write_text("f\n")
    memory = Memory(kit, box / "root")
    fail_on(monkeypatch, "rename", CROSS_DEVICE)  # the move fails once its folders are made
    with pytest.raises(OSError, match="cross-device"):
        memory("rename", old_path="/memories/f.txt", new_path="/memories/a/b/f.txt")
    assert everything(box) == ["root", "root/f.txt"]
    (record,) = records(kit, "memory")
    assert record.outcome is ad.Outcome.NOT_APPLIED


def test_a_files_write_that_fails_removes_the_folders_it_made(
    kit: ad.Toolkit, box: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = Files(kit, box / "root")
    fail_on(monkeypatch, "replace", CROSS_DEVICE)
    with pytest.raises(OSError, match="cross-device"):
        files.write("a/b/new.txt", "x")
    assert everything(box) == ["root"]  # no a/b, no temp file
    (record,) = records(kit, "files")
    assert record.outcome is ad.Outcome.NOT_APPLIED


def test_a_failed_rename_whose_folders_cannot_be_removed_is_unknown(
    kit: ad.Toolkit, box: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (box / "root" / "f.txt").write_text("f\n")
    memory = Memory(kit, box / "root")
    fail_on(monkeypatch, "rename", CROSS_DEVICE)
    fail_on(monkeypatch, "rmdir", OSError(16, "Device or resource busy"))
    with pytest.raises(ad.AddressableError, match="could not all be removed") as info:
        memory("rename", old_path="/memories/f.txt", new_path="/memories/a/f.txt")
    assert "\n" not in str(info.value) and str(box) not in str(info.value)
    assert "/memories/a/f.txt" in str(info.value)
    (record,) = records(kit, "memory")
    assert record.outcome is ad.Outcome.UNKNOWN  # root/a was made and is still there


@pytest.fixture
def held(box: Path) -> Path:
    """A memory folder d holding three files and a folder with one more."""
    d = box / "root" / "d"
    (d / "sub").mkdir(parents=True)
    for name in ("a.txt", "b.txt", "c.txt", "sub/e.txt"):
        (d / name).write_text(name)
    return d


def unlink_fails_at(mp: pytest.MonkeyPatch, call: int) -> None:
    """Make the `call`th removal of a file in a folder's fd fail. We run as root here, so a
    read-only folder would not stop a removal: the failure is simulated."""
    real = os.unlink
    calls = []

    def unlink(name: Any, *, dir_fd: int | None = None) -> None:
        if dir_fd is not None:
            calls.append(name)
            if len(calls) == call:
                raise PermissionError(13, "Permission denied", name)
        real(name, dir_fd=dir_fd)

    mp.setattr(os, "unlink", unlink)


def test_a_folder_delete_that_fails_part_way_is_unknown(
    kit: ad.Toolkit, box: Path, held: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory(kit, box / "root")
    unlink_fails_at(monkeypatch, 2)  # the first file is gone when the second fails
    with pytest.raises(ad.AddressableError, match="partly deleted") as info:
        memory("delete", path="/memories/d")
    assert not isinstance(info.value, OSError | ad.ArgumentError | ad.ScopeError)
    assert "\n" not in str(info.value) and str(box) not in str(info.value)
    assert str(info.value).startswith("/memories/d was partly deleted")
    assert len(list(held.rglob("*.txt"))) == 3  # one of the four removed
    (record,) = records(kit, "memory")
    assert record.outcome is ad.Outcome.UNKNOWN


def test_a_folder_delete_that_fails_before_removing_anything_is_not_applied(
    kit: ad.Toolkit, box: Path, held: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory(kit, box / "root")
    before = everything(box)
    unlink_fails_at(monkeypatch, 1)
    with pytest.raises(PermissionError):
        memory("delete", path="/memories/d")
    assert everything(box) == before
    (record,) = records(kit, "memory")
    assert record.outcome is ad.Outcome.NOT_APPLIED
    monkeypatch.undo()
    memory("delete", path="/memories/d")
    assert everything(box) == ["root"]


@pytest.mark.parametrize(
    ("command", "argument"),
    [
        ({"command": "view", "path": "/memories/x\nerror: y"}, "path"),
        ({"command": "create", "path": "/memories/a\rb", "file_text": "t"}, "path"),
        ({"command": "delete", "path": "/memories/a\x1b[2Jb"}, "path"),
        ({"command": "view", "path": "/memories/x\u2028error: y"}, "path"),
        (
            {"command": "rename", "old_path": "/memories/a", "new_path": "/memories/b\nc"},
            "new_path",
        ),
    ],
)
def test_a_memory_path_with_a_control_character_is_refused_in_one_line(
    kit: ad.Toolkit, box: Path, command: dict[str, Any], argument: str
) -> None:
    # Memory's messages show a path as it is: a newline in one would add a line to them.
    Memory(kit, box / "root")
    (box / "root" / "a").write_text("kept")
    shown = kit.handle("memory", command)
    assert shown.startswith("error: ArgumentError: memory: ") and "\n" not in shown
    assert f"argument {argument!r} holds a control character" in shown
    assert everything(box / "root") == ["a"] and records(kit, "memory") == []


def test_an_integer_too_long_to_write_out_is_told_in_one_line_of_the_tree(
    kit: ad.Toolkit, box: Path
) -> None:
    # Python refuses to write out an int of over 4,300 digits (a ValueError): a message
    # that quoted it raised that instead of the library's own error.
    memory = Memory(kit, box / "root")
    memory("create", path="/memories/a.md", file_text="a\nb\n")
    huge = -(10**5000)
    told = kit.handle(
        "memory", {"command": "view", "path": "/memories/a.md", "view_range": [2, huge]}
    )
    assert told.startswith("error: ArgumentError: memory: argument 'view_range' a list holding")
    assert "\n" not in told
    with pytest.raises(ad.ArgumentError, match="not an integer of too many digits to show"):
        Shell(kit, cwd=box / "root")("ls", timeout=huge)
