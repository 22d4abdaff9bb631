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
import shutil
import stat
from collections.abc import Iterator
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


class Root:
    """A folder whose paths are opened a name at a time without following symlinks."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def folder(self, relative: str, *, make: bool = False) -> Iterator[tuple[int | None, str]]:
        """The folder that holds `relative`, as an fd opened a name at a time from the
        root without following a symlink (folders made on the way when `make`), and the
        last name of `relative`; the fd is closed after. Where the platform has no
        `dir_fd`: no fd, the full path."""
        if not _AT:
            full = self.path / relative
            if make:
                full.parent.mkdir(parents=True, exist_ok=True)
            yield None, str(full)
            return
        *folders, name = relative.split("/")
        fd = os.open(self.path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            for part in folders:
                if make:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=fd)
                inner = os.open(part, _FOLDER, dir_fd=fd)
                os.close(fd)
                fd = inner
            yield fd, name
        finally:
            os.close(fd)

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

    def write(self, relative: str, data: bytes) -> None:
        """Write the file `relative` atomically, making the folders that hold it."""
        with self.folder(relative, make=True) as (folder, name):
            write_atomically(name, data, folder)

    def remove(self, relative: str) -> None:
        """Delete the file or folder (with all it holds) at `relative`; a symlink there is
        removed, not what it names."""
        with self.folder(relative) as (folder, name):
            if stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
                shutil.rmtree(name, dir_fd=folder)  # opens each folder without following
            else:
                os.unlink(name, dir_fd=folder)

    def rename(self, old: str, new: str) -> None:
        """Move `old` to `new`, making the folders that hold `new`."""
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


def write_atomically(name: str, data: bytes, folder: int | None = None) -> None:
    """Write `data` to the file `name` (in the folder whose fd is `folder`, if given) so
    that it is either the old file or the new one, never part of either: a temporary file
    beside it, then a rename over it. Nothing is left behind when this raises."""
    head, tail = os.path.split(name)
    tmp = os.path.join(head, f".{tail[:40]}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
    fd = os.open(tmp, flags, 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as f:
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
