"""Walking a folder tree under a `Root` (see `_rootfs`), however deep: listing it and
removing it, one folder open at a time a level, never through a symlink.

Iterative, not recursive: a tree deeper than Python's stack (one a model made by moving
folders into each other) is walked like any other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Generator, Iterator
from typing import NamedTuple

# Flags of os.open where the system has them (0 where it does not).
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
FOLDER = os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC  # how a folder is opened


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
