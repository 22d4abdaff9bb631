"""Files: reads are References keyed `path#blake3` or `path@rev`; writes are Actions."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import addressable as ad

from ._base import Adapter, schema
from ._git import clean_at_head
from ._rootfs import (
    DEFAULT_MAX_BYTES,
    BadPath,
    Root,
    check_path,
    check_size,
    file_as_folder,
    name_path,
    path_problem,
    resolved,
    store_folders,
)


class Files(Adapter):
    """Reads and writes files under `root`; paths that leave it raise `ScopeError`.

    A read is deterministic, keyed `path@commit` when the bytes read are those HEAD
    holds at that path in git, else `path#<blake3>`. A write is an Action, written
    atomically, whose record also names the artifact: the path and the revision written;
    a new file is made 0600 (less the umask), a file rewritten keeps its permissions. A
    file over `max_bytes` (10 MB) is neither read nor written (`ScopeError`). What it
    refuses and why: docs/security.md, "Files and Memory".
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
        self._fs = Root(self.root, kept=store_folders(kit))
        self.max_bytes = max_bytes
        self.writable = writable
        kit.on_rerun(self.name, lambda record: self._read(str(record.args["path"]), True))

    def __call__(self, path: str) -> ad.Result:
        return self.read(path)

    def read(self, path: str) -> ad.Result:
        """Read a regular file and record it as a Reference."""
        return self._read(path, False)

    def _read(self, path: str, rerun: bool) -> ad.Result:
        """`read`; for a re-run (`verify=True`), a file no longer there (or no longer a
        file) is not raised but returned as the failed read recorded, which differs
        from what was read before: a read that cannot be verified is a change."""
        full, relative = self._inside(path)
        self._walks_as_posix(path, "read")
        args = {"command": "read", "path": relative}
        try:
            data = self._fs.read(relative, self.name, self.max_bytes)
        except (OSError, ad.AddressableError) as exc:
            error = self._named(exc, relative, "read")
            failed = self.kit.record_failure(
                self.name, args, error, determinism="deterministic", key=relative
            )
            if rerun and isinstance(error, ad.ArgumentError):
                return failed
            if error is exc:
                raise
            raise error from None
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
        self._walks_as_posix(path, "write")
        self._fs.writable(relative)  # not .git, not the store: refused, nothing recorded
        # The root, a folder, or a path that ends as a folder's does ("new/", "a/."):
        # nothing is written, not even a temporary file.
        if relative == "." or full.is_dir() or path.rpartition("/")[2] in ("", ".", ".."):
            shown = relative if relative == "." or full.is_dir() else path
            raise ad.ArgumentError(
                f"{self.name}: argument 'path' names a folder, not a file: {shown!r}"
            )
        check_size(self.name, "argument 'content' is", len(data), self.max_bytes)

        def change() -> tuple[str, dict[str, Any]]:
            try:
                self._fs.write(relative, data)
            except OSError as exc:
                error = self._named(exc, relative, "write")
                if error is exc:
                    raise
                raise error from None
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

    def _walks_as_posix(self, path: str, doing: str) -> None:
        """Refuse, with `BadPath` (errno ENOTDIR), a path that takes a file for a folder
        where resolving it would drop the names that did (see `file_as_folder`).
        Nothing is recorded: the path resolved may be the file's own, whose key a
        failure must not take."""
        why = file_as_folder(self.root, path)
        if why is not None:
            refused = BadPath(f"{self.name}: cannot {doing} {path!r}: {why}")
            refused.errno = errno.ENOTDIR
            raise refused

    def _named(self, exc: BaseException, relative: str, doing: str) -> BaseException:
        """The error to raise for `exc`: `BadPath` for a path that names no file as
        asked, else `exc`, an OSError naming the path given rather than the root."""
        if not isinstance(exc, OSError):
            return exc
        why = path_problem(exc)
        if why is None:
            name_path(exc, relative)
            return exc
        error = BadPath(f"{self.name}: cannot {doing} {relative!r}: {why}")
        error.errno = exc.errno
        return error

    def _inside(self, path: str) -> tuple[Path, str]:
        check_path(path, "path", self.name)
        full = resolved(self.root, path, path, f"{self.name}: argument 'path'")
        if not full.is_relative_to(self.root):
            # The root is not named: where it lies on the machine is not the model's.
            raise ad.ScopeError(f"{path!r} is outside the folder this tool reads and writes")
        return full, full.relative_to(self.root).as_posix()


def _media_type(data: bytes) -> str:
    if ad.payload_text(data) is None:
        return "application/octet-stream"
    return "text/plain; charset=utf-8"
