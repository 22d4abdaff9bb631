"""Files: reads are References keyed `path#blake3` or `path@rev`; writes are Actions."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Any

import addressable as ad

from ._base import Adapter, schema
from ._git import clean_at_head

DEFAULT_MAX_BYTES = 10 * 1024 * 1024  # bytes; a larger file is refused
NAME_MAX = 255  # bytes in one name of a path (Linux, macOS)
PATH_MAX = 1024  # bytes in a path a model gives (macOS's limit; Linux allows 4096)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
# Where the platform opens relative to a folder's fd (Linux, macOS), a path is opened a
# name at a time from the root, following no symlink: a folder swapped for a symlink
# after the path was checked fails the call instead of leading out of the root. (os.replace
# is listed under os.rename: both are renameat.)
_AT = {os.open, os.stat, os.mkdir, os.rename, os.unlink} <= os.supports_dir_fd


class Files(Adapter):
    """Reads and writes files under `root`; paths that leave it raise `ScopeError`.

    A read is deterministic, keyed `path@commit` when the bytes read are those HEAD
    holds at that path in git, else `path#<blake3>`; the git that checks this runs no
    program the repository names and sees none of the parent's environment. Only regular
    files are read (a folder, FIFO, socket or device is refused without opening it for
    long). A write is an Action, written atomically (so it either happened or did not),
    whose record also names the artifact: the path and the revision written. Each path
    is opened a name at a time from the root without following symlinks, so a symlink
    swapped in after the check cannot lead out of the root.
    """

    name = "files"
    description = (
        "Read a file (command read) or write one (command write, with content) under the "
        "working folder. Paths are relative to it."
    )
    input_schema = schema(
        {
            "command": {"type": "string", "enum": ["read", "write"]},
            "path": {"type": "string"},
            "content": {"type": "string", "description": "the new content, for write"},
        },
        ["command", "path"],
    )

    def __init__(
        self,
        kit: ad.Toolkit,
        root: str | os.PathLike[str] = ".",
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        writable: bool = True,
        name: str | None = None,
    ) -> None:
        super().__init__(kit, name)
        self.root = Path(root).resolve()
        self.max_bytes = max_bytes
        self.writable = writable
        kit.on_rerun(self.name, lambda record: self.read(str(record.args["path"])))

    def __call__(self, path: str) -> ad.Result:
        return self.read(path)

    def read(self, path: str) -> ad.Result:
        """Read a regular file and record it as a Reference."""
        full, relative = self._inside(path)
        args = {"command": "read", "path": relative}
        try:
            data = self._read(relative)
        except (OSError, ad.AddressableError) as exc:
            if isinstance(exc, OSError):
                _name_relative(exc, relative)
            self.kit.record_failure(self.name, args, exc, determinism="deterministic", key=relative)
            raise
        clean = clean_at_head(full, data)
        if clean is not None:
            key = f"{relative}@{clean[1]}"
        else:
            key = f"{relative}#{ad.ids.content_hash(data)[:16]}"
        return self.kit.record(
            self.name,
            args,
            data,
            determinism="deterministic",
            key=key,
            media_type=_media_type(data),
            meta={"path": relative},
        )

    def write(self, path: str, content: str | bytes) -> ad.Result:
        """Write a file atomically and record the Action and its artifact."""
        full, relative = self._inside(path)
        if isinstance(content, str):
            found = ad.ids.lone_surrogate(content, f"{self.name}: argument 'content'")
            if found:
                raise ad.ArgumentError(found)
            data = content.encode("utf-8")
        elif isinstance(content, bytes):
            data = content
        else:
            raise ad.ArgumentError(
                f"{self.name}: argument 'content' must be str or bytes, "
                f"not {type(content).__name__}"
            )
        rev = "#" + ad.ids.content_hash(data)[:16]
        args = {"command": "write", "path": relative, "content_hash": rev[1:]}
        if not self.writable:
            raise ad.ScopeError(f"this Files adapter is read-only: {relative} was not written")
        if relative == "." or full.is_dir():  # the root: nothing is written, not even a temp
            raise ad.ArgumentError(
                f"{self.name}: argument 'path' names a folder, not a file: {relative!r}"
            )

        def change() -> tuple[str, dict[str, Any]]:
            try:
                folder, name = self._at(relative, make=True)
                try:
                    write_atomically(name, data, folder)
                finally:
                    if folder is not None:
                        os.close(folder)
            except OSError as exc:
                _name_relative(exc, relative)
                raise
            return (
                f"wrote {len(data):,} bytes to {relative} (revision {rev})",
                {"path": relative, "rev": rev},
            )

        return self.act(args, change, (OSError,), written=("content",))

    def handle(self, arguments: dict[str, Any]) -> str:
        command = arguments.get("command", "read")
        if command == "write":
            return self.write(arguments["path"], arguments.get("content", "")).text
        if command == "read":
            return self.read(arguments["path"]).text
        return f"error: unknown command {command!r}: use read or write"

    def _inside(self, path: str) -> tuple[Path, str]:
        check_path(path, "path", self.name)
        full = (self.root / path).resolve()
        if not full.is_relative_to(self.root):
            raise ad.ScopeError(f"{path!r} is outside the folder {self.root}")
        return full, full.relative_to(self.root).as_posix()

    def _read(self, relative: str) -> bytes:
        """The bytes of the regular file at `relative`, at most `max_bytes` of them."""
        folder, name = self._at(relative, make=False)
        try:
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
            _regular(found.st_mode, relative, self.name)  # a FIFO is never opened
            flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC | _BINARY
            fd = os.open(name, flags, dir_fd=folder)
        finally:
            if folder is not None:
                os.close(folder)
        with os.fdopen(fd, "rb") as f:
            opened = os.fstat(f.fileno())
            _regular(opened.st_mode, relative, self.name)  # swapped after the stat
            self._within_limit(opened.st_size, relative)
            data = f.read(self.max_bytes + 1)
        self._within_limit(len(data), relative)  # grown since
        return data

    def _within_limit(self, size: int, relative: str) -> None:
        if size > self.max_bytes:
            raise ad.ScopeError(
                f"{relative} is {size:,} bytes, over the limit of {self.max_bytes:,}"
            )

    def _at(self, relative: str, *, make: bool) -> tuple[int | None, str]:
        """The folder that holds `relative`, as an fd opened a name at a time from the
        root without following a symlink (folders made on the way when `make`), and the
        last name of `relative`. Where the platform has no `dir_fd`: no fd, the full path."""
        if not _AT:
            full = self.root / relative
            if make:
                full.parent.mkdir(parents=True, exist_ok=True)
            return None, str(full)
        *folders, name = relative.split("/")
        fd = os.open(self.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            for part in folders:
                if make:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=fd)
                inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd, name


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


def _regular(mode: int, relative: str, tool: str) -> None:
    """Refuse what is not a regular file, naming what it is."""
    if not stat.S_ISREG(mode):
        kind = next((k for test, k in _KINDS if test(mode)), "something other than a file")
        raise ad.ArgumentError(f"{tool}: argument 'path' names {kind}, not a file: {relative!r}")


def _name_relative(exc: OSError, relative: str) -> None:
    """Have an OSError name the path the model gave, not the absolute one (which would
    show the model where the root is) or a name within it."""
    exc.filename = relative
    del exc.filename2  # a rename's second name: deleted, for None would be shown


def _media_type(data: bytes) -> str:
    if ad.payload_text(data) is None:
        return "application/octet-stream"
    return "text/plain; charset=utf-8"
