"""Paths under a root, opened without following symlinks, and the folder trees below
them walked.

Where the platform opens relative to a folder's fd (Linux, macOS), a path is opened a
name at a time from the root's fd, following no symlink; elsewhere (Windows) the full
path is used. The paths given are relative to the root, `/`-separated and already
checked to stay in it; `.` is the root itself. A folder tree is listed and removed
iteratively, one folder open a level, never through a symlink. Why: docs/security.md,
"Files and Memory".
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import secrets
import stat
import unicodedata
from collections.abc import Callable, Generator, Iterator
from pathlib import Path, PurePath
from typing import BinaryIO, NamedTuple

import blake3

import addressable as ad

NAME_MAX = 255  # bytes in one name of a path (Linux, macOS)
PATH_MAX = 1024  # bytes in a path a model gives (macOS's limit; Linux allows 4096)
MAX_DEPTH = 64  # names in a path Memory makes, by create or rename (a walk holds an fd a level)
DEFAULT_MAX_BYTES = 10 * 1024 * 1024  # bytes of a file read; a larger one is refused
_CHUNK = 1024 * 1024  # bytes read at a time when a file is hashed

# Flags of os.open where the system has them (0 where it does not).
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
FOLDER = os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC  # how a folder is opened
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_BINARY = getattr(os, "O_BINARY", 0)
# os.replace is listed under os.rename (both are renameat); os.scandir takes a folder's fd.
_AT = {os.open, os.stat, os.mkdir, os.rename, os.unlink, os.rmdir} <= os.supports_dir_fd and (
    os.scandir in os.supports_fd
)


class PartlyChanged(ad.AddressableError):
    """A change to files that failed after it had changed something (a folder removed
    in part, a folder made for a rename that failed and could not be removed again): its
    Action's outcome is `unknown`, not `not_applied`. What failed is its `__cause__`."""


class BadPath(ad.ArgumentError, OSError):
    """A path that names no file to read or write as asked: nothing is there, a name on
    the way to it is not a folder, or it is a folder. One line naming the path as the
    model gave it; also the OSError it was before (`errno` says which)."""


def path_problem(exc: OSError) -> str | None:
    """What is wrong with a path, in words and without it, for an OSError a path the
    model gave can cause; None for another (a permission, a disk, a race)."""
    if isinstance(exc, FileNotFoundError):
        return "it does not exist"
    if isinstance(exc, NotADirectoryError):
        return "a name on the way to it is not a folder"
    if isinstance(exc, IsADirectoryError):
        return "it is a folder, not a file"
    return None


def _holds_git(top: Path) -> bool:
    """Whether a folder below `top` is named .git; symlinks are not followed, and a
    tree deeper than the stack is walked all the same."""
    stack = [str(top)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name.casefold() == ".git":
                        return True
                    stack.append(entry.path)
    return False


def store_folders(kit: ad.Toolkit) -> tuple[Path, ...]:
    """The folder the kit's store keeps its files in, if it has one: as the store says,
    not guessed from a folder's name."""
    location = kit.store.location
    if location.startswith("disk://"):
        return (Path(location.removeprefix("disk://")).resolve(),)
    return ()


class Root:
    """A folder whose paths are opened a name at a time without following symlinks.
    `show` names a relative path in an error as its caller's user knows it. Nothing is
    written, moved or removed in a `.git` folder or in `kept` (the store's folder):
    `ScopeError` (see `writable`)."""

    def __init__(
        self, path: Path, show: Callable[[str], str] = str, kept: tuple[Path, ...] = ()
    ) -> None:
        self.path = path
        self.show = show
        self.kept = kept

    def writable(self, relative: str, whole: bool = False) -> None:
        """`ScopeError` unless `relative` may be changed: it is not in a `.git` folder
        (whose config and hooks the next git runs) nor in, or holding, the store's
        folder; with `whole` (a removal or a move), neither does any folder it holds."""
        full = self.path / relative
        why = None
        if any(name.casefold() == ".git" for name in relative.split("/")):
            why = "it is in a repository's .git folder, which the next git reads"
        elif any(full.is_relative_to(k) or k.is_relative_to(full) for k in self.kept):
            why = "it is or holds the store's folder"
        elif whole and full.is_dir() and not full.is_symlink() and _holds_git(full):
            why = "it holds a repository's .git folder, which the next git reads"
        if why is not None:
            raise ad.ScopeError(f"{self.show(relative)!r} is not changed by this tool: {why}")

    @contextlib.contextmanager
    def folder(self, relative: str, *, make: bool = False) -> Iterator[tuple[int | None, str]]:
        """The folder that holds `relative`, as an fd opened a name at a time from the
        root without following a symlink, and the last name of `relative`; the fd is
        closed after. Where the platform has no `dir_fd`: no fd, the full path.

        With `make`, the folders on the way are made, and removed again when the block
        (or the making) raises, so a call that fails leaves none of them behind; one that
        cannot be removed raises `PartlyChanged`."""
        made: list[tuple[int | None, str]] = []  # (fd of the folder holding it, its name)
        opened: list[int] = []
        try:
            if not _AT:
                full = self.path / relative
                if make:
                    missing = [p for p in reversed(full.parents) if not p.exists()]
                    for folder in missing:
                        folder.mkdir()
                        made.append((None, str(folder)))
                yield None, str(full)
                return
            *folders, name = relative.split("/")
            opened.append(os.open(self.path, os.O_RDONLY | DIRECTORY | CLOEXEC))
            for part in folders:
                if make:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=opened[-1])
                        made.append((opened[-1], part))
                opened.append(os.open(part, FOLDER, dir_fd=opened[-1]))
            yield opened[-1], name
        except BaseException as exc:
            self._unmake(made, relative, exc)
            raise
        finally:
            for fd in opened:
                os.close(fd)

    def _unmake(
        self, made: list[tuple[int | None, str]], relative: str, exc: BaseException
    ) -> None:
        """Remove the folders `made` (the deepest first), after `exc`."""
        for fd, name in reversed(made):
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError as failed:
                raise PartlyChanged(
                    f"{self.show(relative)}: the call failed ({_why(exc)}) after making "
                    f"folders for it that could not all be removed ({_why(failed)})"
                ) from exc

    def lstat(self, relative: str) -> os.stat_result | None:
        """What is at `relative`, not following a last symlink; None if nothing is."""
        try:
            with self.folder(relative) as (fd, name):
                return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def read(self, relative: str, tool: str, max_bytes: int | None = None) -> bytes:
        """The bytes of the regular file at `relative` (at most `max_bytes` of them, else
        `ScopeError`); anything else is refused without opening it for long."""
        with self._opened(relative, tool) as (f, size):
            self._within(size, max_bytes, relative)
            data = f.read() if max_bytes is None else f.read(max_bytes + 1)
        self._within(len(data), max_bytes, relative)  # grown since
        return data

    def digest(self, relative: str, tool: str, max_bytes: int | None = None) -> str:
        """The blake3 of the regular file at `relative`, as `ad.ids.content_hash` gives it
        for the file's bytes, read a chunk at a time so that no more than a chunk is held;
        a file over `max_bytes` is refused with `ScopeError`, as `read` refuses it."""
        hasher = blake3.blake3()
        with self._opened(relative, tool) as (f, size):
            self._within(size, max_bytes, relative)
            total = 0
            while chunk := f.read(_CHUNK):
                total += len(chunk)
                self._within(total, max_bytes, relative)  # grown since
                hasher.update(chunk)
        return hasher.hexdigest()

    @contextlib.contextmanager
    def _opened(self, relative: str, tool: str) -> Iterator[tuple[BinaryIO, int]]:
        """The regular file at `relative`, open for reading, and its size; anything else
        is refused without opening it for long (a FIFO is never opened)."""
        with self.folder(relative) as (folder, name):
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
            regular(found.st_mode, relative, tool)
            flags = os.O_RDONLY | NOFOLLOW | _NONBLOCK | _NOCTTY | CLOEXEC | _BINARY
            fd = os.open(name, flags, dir_fd=folder)
        with os.fdopen(fd, "rb") as f:
            opened = os.fstat(f.fileno())
            regular(opened.st_mode, relative, tool)  # swapped after the stat
            yield f, opened.st_size

    def _within(self, size: int, max_bytes: int | None, relative: str) -> None:
        if max_bytes is not None and size > max_bytes:
            raise ad.ScopeError(
                f"{self.show(relative)} is {size:,} bytes, over the limit of {max_bytes:,}"
            )

    def write(self, relative: str, data: bytes, mode: int = 0o600) -> None:
        """Write the file `relative` atomically, making the folders that hold it; a new
        file gets `mode` (less the umask), one rewritten keeps its own."""
        self.writable(relative)
        with self.folder(relative, make=True) as (folder, name):
            write_atomically(name, data, folder, mode)

    def remove(self, relative: str) -> None:
        """Delete the file or folder (with all it holds) at `relative`; a symlink there is
        removed, not what it names. A folder whose removal fails after something in it
        was removed raises `PartlyChanged`; an OSError means nothing was removed."""
        self.writable(relative, whole=True)
        removed: list[str] = []
        with self.folder(relative) as (folder, name):
            try:
                if stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
                    remove_tree(folder, name, removed)
                else:
                    os.unlink(name, dir_fd=folder)
            except OSError as exc:
                if not removed:
                    raise
                raise PartlyChanged(
                    f"{self.show(relative)} was partly deleted: {len(removed)} of what it "
                    f"held removed before a removal failed ({_why(exc)})"
                ) from exc

    def rename(self, old: str, new: str) -> None:
        """Move `old` to `new`, making the folders that hold `new` (removed again if the
        move fails). A target that is the source or inside it, or one that would put a
        path more than `MAX_DEPTH` names deep, is refused with `ArgumentError` before
        anything is made."""
        self.writable(old, whole=True)
        self.writable(new)
        if old == "." or new == old or new.startswith(old + "/"):
            raise ad.ArgumentError(
                f"cannot move {self.show(old)} to {self.show(new)}: that is inside itself"
            )
        depth = len(new.split("/")) + self._height(old)
        if depth > MAX_DEPTH:
            raise ad.ArgumentError(
                f"cannot move {self.show(old)} to {self.show(new)}: it would put a path "
                f"{depth} names deep, over {MAX_DEPTH}"
            )
        with (
            self.folder(old) as (source, old_name),
            self.folder(new, make=True) as (
                target,
                new_name,
            ),
        ):
            os.rename(old_name, new_name, src_dir_fd=source, dst_dir_fd=target)

    def walk(self, relative: str) -> list[tuple[str, bool, bool]]:
        """Everything in the folder `relative` and the folders below it (not through a
        symlink), however deep: each path below `relative`, whether it is a folder (a
        symlink to one counts; one that cannot be followed does not) and whether it is a
        regular file."""
        with self.folder(relative) as (folder, name):
            top = open_folder(folder, name)
        try:
            with contextlib.closing(depth_first(top)) as walked:
                return [
                    (level.path + entry.name, entry.folder, entry.regular)
                    for level, entry in walked
                    if entry is not None
                ]
        finally:
            close_folder(top)

    def _height(self, relative: str) -> int:
        """How many names deep the paths below `relative` go: 0 for what is not a folder."""
        found = self.lstat(relative)
        if found is None or not stat.S_ISDIR(found.st_mode):
            return 0
        return max((path.count("/") + 1 for path, _, _ in self.walk(relative)), default=0)


def _why(exc: BaseException) -> str:
    """What went wrong, without the paths an OSError names (they may show the root)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return type(exc).__name__


def write_atomically(name: str, data: bytes, folder: int | None = None, mode: int = 0o600) -> None:
    """Write `data` to the file `name` (in the folder whose fd is `folder`, if given) so
    that it is either the old file or the new one, never part of either: a temporary file
    beside it, then a rename over it. Nothing is left behind when this raises.

    A regular file rewritten keeps its permissions (an executable bit survives); a new
    one is created with `mode`, less the umask, as `open` would create it."""
    head, tail = os.path.split(name)
    tmp = os.path.join(head, f".{tail[:40]}.{secrets.token_hex(6)}.tmp")
    try:
        old = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    keep = stat.S_IMODE(old.st_mode) if old is not None and stat.S_ISREG(old.st_mode) else None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC | _BINARY
    # A file rewritten: made 0600 and given the old file's mode before anything is written
    # to it, so it is never more open than either; a new one: `mode` less the umask.
    fd = os.open(tmp, flags, mode if keep is None else 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            if keep is not None:
                if hasattr(os, "fchmod"):
                    os.fchmod(f.fileno(), keep)
                else:  # Windows before 3.13, where there is no folder fd either
                    os.chmod(tmp, keep)
            f.write(data)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise


def file_as_folder(root: Path, path: str) -> str | None:
    """Why `path`, under `root`, takes a file for a folder on the way ("a.txt/",
    "a.txt/../b.txt"), as open() would refuse it; None if it does not. Only a path
    whose resolving drops the names that did is looked at: one that keeps them
    ("a.txt/b") fails where it is opened."""
    names = path.split("/")
    if ".." not in names and names[-1] not in ("", "."):
        return None
    full = os.path.join(root, path)
    try:
        os.stat(full)
    except NotADirectoryError as exc:
        named = os.path.join(root, path.rstrip("/").removesuffix("/.").rstrip("/"))
        whole = named != full and os.path.isfile(named)
        return "it is a file, not a folder" if whole else path_problem(exc)
    except (OSError, ValueError):  # missing, a loop: judged where the file is opened
        pass
    return None


def check_size(tool: str, what: str, size: int, max_bytes: int) -> None:
    """Refuse with `ScopeError`, before anything is written, content over `max_bytes`:
    the adapter would refuse to read back what it wrote. `what` names it with its verb
    ("argument 'content' is", "/memories/a.md would be")."""
    if size > max_bytes:
        raise ad.ScopeError(
            f"{tool}: {what} {size:,} bytes, over the limit of {max_bytes:,}: nothing was written"
        )


def check_path(path: object, argument: str, tool: str, printable: bool = False) -> None:
    """Refuse, with `ArgumentError` naming `argument`, a path no file can have: not a
    string, one holding a NUL, one that is not UTF-8 text, or one too long; with
    `printable`, also one holding a control character (a newline would let a message
    that shows the path as it is say more than it is)."""
    where = f"{tool}: argument {argument!r}"
    if not isinstance(path, str):
        raise ad.ArgumentError(f"{where} must be a string, not {type(path).__name__}")
    if "\x00" in path:
        raise ad.ArgumentError(f"{where} holds a NUL character, which no path can hold")
    if printable and any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in path):
        raise ad.ArgumentError(
            f"{where} holds a control character ({path[:80]!r}): name a path of "
            "printable characters"
        )
    found = ad.ids.lone_surrogate(path, where)
    if found:
        raise ad.ArgumentError(found)
    encoded = path.encode("utf-8")
    if len(encoded) > PATH_MAX:
        raise ad.ArgumentError(f"{where} is {len(encoded):,} bytes, over {PATH_MAX:,}")
    if any(len(part) > NAME_MAX for part in encoded.split(b"/")):
        raise ad.ArgumentError(f"{where} has a name longer than {NAME_MAX} bytes")


def resolved(root: Path, path: PurePath | str, given: str, where: str) -> Path:
    """`root / path` with its symlinks followed, as `Path.resolve` gives it. One that
    cannot be followed (a symlink loop: RuntimeError on Python 3.11, OSError elsewhere)
    is a one-line `ArgumentError` naming `where` and the path `given`, not the absolute
    path, which would show the model where the root is."""
    try:
        return (root / path).resolve()
    except (RuntimeError, OSError) as exc:
        loop = isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP
        why = "it runs into a symlink loop" if loop else _why(exc)
        raise ad.ArgumentError(f"{where} {given!r} cannot be followed: {why}") from None


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISLNK, "a symlink"),
)


def regular(mode: int, relative: str, tool: str) -> None:
    """Refuse what is not a regular file, naming what it is."""
    if not stat.S_ISREG(mode):
        kind = next((k for test, k in _KINDS if test(mode)), "something other than a file")
        raise ad.ArgumentError(f"{tool}: argument 'path' names {kind}, not a file: {relative!r}")


def name_path(exc: OSError, path: str, second: str | None = None) -> None:
    """Have an OSError name the path the model gave (and a rename's `second`), not the
    absolute one (which would show the model where the root is) or a name within it."""
    exc.filename = path
    if second is None:
        del exc.filename2  # deleted, for None would be shown
    else:
        exc.filename2 = second


# -- folder trees -----------------------------------------------------------------------------


class _Entry(NamedTuple):
    """A name in a folder, as a scan of the folder found it."""

    name: str
    real_folder: bool  # a folder, not a symlink to one
    folder: bool  # a folder or a symlink to one
    regular: bool  # a regular file, not a symlink to one


@dataclasses.dataclass
class _Level:
    """A folder on the way down a tree: its fd (its full path where there are no fds),
    its path below the top (ending in `/`), its name and the level that holds it, and
    its entries not yet visited (scanned when it is first visited)."""

    folder: int | str
    path: str = ""
    name: str = ""
    parent: _Level | None = None
    entries: Iterator[_Entry] | None = None


def depth_first(top: int | str) -> Generator[tuple[_Level, _Entry | None], None, None]:
    """Each entry of the folder `top` (an fd, or a full path where there are none) and of
    the folders below it, depth first, with the level of the folder holding it; then
    `(level, None)` once a folder's entries are done and its fd closed. A folder is
    entered after its entry is yielded, without following a symlink. Iterative, not
    recursive, so that a tree of any depth is walked; one fd is open a level, and those
    this opened are closed when it is closed (`top` is the caller's)."""
    levels = [_Level(top)]
    try:
        while levels:
            level = levels[-1]
            if level.entries is None:
                level.entries = iter(_scan(level.folder))
            entry = next(level.entries, None)
            if entry is None:
                levels.pop()
                if levels:
                    close_folder(level.folder)
                yield level, None
                continue
            yield level, entry
            if entry.real_folder:
                inner = open_folder(level.folder, entry.name)
                levels.append(_Level(inner, f"{level.path}{entry.name}/", entry.name, level))
    finally:
        for level in levels[1:]:
            close_folder(level.folder)


def _scan(folder: int | str) -> list[_Entry]:
    with os.scandir(folder) as scan:
        return [
            _Entry(
                e.name,
                e.is_dir(follow_symlinks=False),
                _names_folder(e),
                e.is_file(follow_symlinks=False),
            )
            for e in scan
        ]


def _names_folder(entry: os.DirEntry[str]) -> bool:
    """Whether `entry` is a folder or a symlink to one; a symlink that cannot be followed
    (a loop, a target it may not see) is not."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def open_folder(folder: int | str | None, name: str) -> int | str:
    """The folder `name` in `folder`, opened without following a symlink: its fd, or its
    full path where there are no fds (`folder` a path, or None and `name` a full path)."""
    if folder is None:
        return name
    if isinstance(folder, str):
        return os.path.join(folder, name)
    return os.open(name, FOLDER, dir_fd=folder)


def close_folder(folder: int | str) -> None:
    if isinstance(folder, int):
        os.close(folder)


def _remove_in(remove: Callable[..., None], folder: int | str, name: str) -> None:
    """`remove` (os.unlink or os.rmdir) of the name `name` in `folder`, as `store.open` gives it."""
    if isinstance(folder, str):
        remove(os.path.join(folder, name))
    else:
        remove(name, dir_fd=folder)


def remove_tree(folder: int | None, name: str, removed: list[str]) -> None:
    """Remove the folder `name` (in the folder whose fd is `folder`; a full path where
    there is none) and everything below it, however deep, opening each folder without
    following a symlink (a symlink is removed, not what it names). Each name removed is
    appended to `removed`, so a caller knows whether a failure left the folder as it was."""
    top = open_folder(folder, name)
    try:
        with contextlib.closing(depth_first(top)) as walked:
            for level, entry in walked:
                if entry is None and level.parent is not None:  # a folder below, emptied
                    _remove_in(os.rmdir, level.parent.folder, level.name)
                    removed.append(level.path)
                elif entry is not None and not entry.real_folder:
                    _remove_in(os.unlink, level.folder, entry.name)
                    removed.append(level.path + entry.name)
    finally:
        close_folder(top)
    os.rmdir(name, dir_fd=folder)
    removed.append(name)
