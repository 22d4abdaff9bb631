"""Paths under a root, opened without following symlinks.

Where the platform opens relative to a folder's fd (Linux, macOS), a path is opened a name
at a time from the root's fd, following no symlink: a folder swapped for a symlink after
the path was checked fails the call instead of leading out of the root. Elsewhere
(Windows) the full path is used. The paths given are relative to the root, `/`-separated
and already checked to stay in it; `.` is the root itself.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import addressable as ad

NAME_MAX = 255  # bytes in one name of a path (Linux, macOS)
PATH_MAX = 1024  # bytes in a path a model gives (macOS's limit; Linux allows 4096)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_FOLDER = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
# os.replace is listed under os.rename (both are renameat); os.scandir takes a folder's fd.
_AT = {os.open, os.stat, os.mkdir, os.rename, os.unlink, os.rmdir} <= os.supports_dir_fd and (
    os.scandir in os.supports_fd
)


class PartlyChanged(ad.AddressableError):
    """A change to files that failed after it had changed something (a folder removed
    in part, a folder made for a rename that failed and could not be removed again): its
    Action's outcome is `unknown`, not `not_applied`. What failed is its `__cause__`."""


class Root:
    """A folder whose paths are opened a name at a time without following symlinks.
    `show` names a relative path in an error as its caller's user knows it."""

    def __init__(self, path: Path, show: Callable[[str], str] = str) -> None:
        self.path = path
        self.show = show

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
            opened.append(os.open(self.path, os.O_RDONLY | _DIRECTORY | _CLOEXEC))
            for part in folders:
                if make:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=opened[-1])
                        made.append((opened[-1], part))
                opened.append(os.open(part, _FOLDER, dir_fd=opened[-1]))
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
        with self.folder(relative) as (folder, name):
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
            regular(found.st_mode, relative, tool)  # a FIFO is never opened
            flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC | _BINARY
            fd = os.open(name, flags, dir_fd=folder)
        with os.fdopen(fd, "rb") as f:
            opened = os.fstat(f.fileno())
            regular(opened.st_mode, relative, tool)  # swapped after the stat
            _within(opened.st_size, max_bytes, relative)
            data = f.read() if max_bytes is None else f.read(max_bytes + 1)
        _within(len(data), max_bytes, relative)  # grown since
        return data

    def write(self, relative: str, data: bytes, mode: int = 0o600) -> None:
        """Write the file `relative` atomically, making the folders that hold it; a new
        file gets `mode` (less the umask), one rewritten keeps its own."""
        with self.folder(relative, make=True) as (folder, name):
            write_atomically(name, data, folder, mode)

    def remove(self, relative: str) -> None:
        """Delete the file or folder (with all it holds) at `relative`; a symlink there is
        removed, not what it names. A folder whose removal fails after something in it
        was removed raises `PartlyChanged`; an OSError means nothing was removed."""
        removed: list[str] = []
        with self.folder(relative) as (folder, name):
            try:
                if stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
                    _remove_tree(folder, name, removed)
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
        move fails). A target that is the source or inside it is refused with
        `ArgumentError` before anything is made."""
        if old == "." or new == old or new.startswith(old + "/"):
            raise ad.ArgumentError(
                f"cannot move {self.show(old)} to {self.show(new)}: that is inside itself"
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
        symlink): each path below `relative`, whether it is a folder (a symlink to one
        counts) and whether it is a regular file."""
        with self.folder(relative) as (folder, name):
            if folder is None:
                return list(_walk(name, ""))
            fd = os.open(name, _FOLDER, dir_fd=folder)
        try:
            return list(_walk(fd, ""))
        finally:
            os.close(fd)


def _remove_tree(folder: int | None, name: str, removed: list[str]) -> None:
    """Remove the folder `name` (in the folder whose fd is `folder`; a full path where
    there is none) and everything below it, opening each folder without following a
    symlink (a symlink is removed, not what it names). Each name removed is appended to
    `removed`, so a caller knows whether a failure left the folder as it was."""
    if folder is None:
        with os.scandir(name) as scan:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in scan]
        for entry, is_folder in entries:
            path = os.path.join(name, entry)
            if is_folder:
                _remove_tree(None, path, removed)
            else:
                os.unlink(path)
                removed.append(path)
        os.rmdir(name)
        removed.append(name)
        return
    fd = os.open(name, _FOLDER, dir_fd=folder)
    try:
        with os.scandir(fd) as scan:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in scan]
        for entry, is_folder in entries:
            if is_folder:
                _remove_tree(fd, entry, removed)
            else:
                os.unlink(entry, dir_fd=fd)
                removed.append(entry)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=folder)
    removed.append(name)


def _why(exc: BaseException) -> str:
    """What went wrong, without the paths an OSError names (they may show the root)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return type(exc).__name__


def _walk(top: int | str, prefix: str) -> Iterator[tuple[str, bool, bool]]:
    with os.scandir(top) as scan:
        entries = list(scan)
    for entry in entries:
        path = prefix + entry.name
        real_folder = entry.is_dir(follow_symlinks=False)
        yield path, entry.is_dir(), entry.is_file(follow_symlinks=False)
        if not real_folder:
            continue
        if isinstance(top, str):
            yield from _walk(os.path.join(top, entry.name), path + "/")
            continue
        inner = os.open(entry.name, _FOLDER, dir_fd=top)
        try:
            yield from _walk(inner, path + "/")
        finally:
            os.close(inner)


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
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
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


def check_path(path: object, argument: str, tool: str) -> None:
    """Refuse, with `ArgumentError` naming `argument`, a path no file can have: not a
    string, one holding a NUL, one that is not UTF-8 text, or one too long."""
    where = f"{tool}: argument {argument!r}"
    if not isinstance(path, str):
        raise ad.ArgumentError(f"{where} must be a string, not {type(path).__name__}")
    if "\x00" in path:
        raise ad.ArgumentError(f"{where} holds a NUL character, which no path can hold")
    found = ad.ids.lone_surrogate(path, where)
    if found:
        raise ad.ArgumentError(found)
    encoded = path.encode("utf-8")
    if len(encoded) > PATH_MAX:
        raise ad.ArgumentError(f"{where} is {len(encoded):,} bytes, over {PATH_MAX:,}")
    if any(len(part) > NAME_MAX for part in encoded.split(b"/")):
        raise ad.ArgumentError(f"{where} has a name longer than {NAME_MAX} bytes")


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


def _within(size: int, max_bytes: int | None, relative: str) -> None:
    if max_bytes is not None and size > max_bytes:
        raise ad.ScopeError(f"{relative} is {size:,} bytes, over the limit of {max_bytes:,}")


def name_path(exc: OSError, path: str, second: str | None = None) -> None:
    """Have an OSError name the path the model gave (and a rename's `second`), not the
    absolute one (which would show the model where the root is) or a name within it."""
    exc.filename = path
    if second is None:
        del exc.filename2  # deleted, for None would be shown
    else:
        exc.filename2 = second
