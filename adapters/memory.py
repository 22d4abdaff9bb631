"""Memory: the commands of Anthropic's memory tool over a folder, every revision addressable.

The model names files under ``/memories``; they live in the adapter's root folder. A
`view` is a Reference keyed ``memory:/memories/path@rev`` (rev: the first 12 hex
characters of the content's blake3), so each revision has an address of its own;
`create`, `str_replace`, `insert`, `delete` and `rename` are Actions whose records name
the revision they wrote. A command the files as they are make impossible (no such file,
`old_str` not found once) is an Action `not_applied`. Arguments are checked before
anything runs or is recorded: a path outside the root, or a file over `max_bytes`
(10 MB), raises `ScopeError` (a folder's revision stands for such a file by its size and
time of change); a malformed argument raises `ArgumentError`. A file is written whole:
one rewritten keeps its permissions, a new one is made 0666 less the umask. What it
refuses and why: docs/security.md, "Files and Memory".
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path, PurePosixPath
from typing import Any

import addressable as ad
from addressable.core.frozen import thawed
from addressable.recording.argerrors import shown as shown_value

from ._base import Adapter, schema
from ._rootfs import (
    DEFAULT_MAX_BYTES,
    MAX_DEPTH,
    Root,
    check_path,
    check_size,
    file_as_folder,
    name_path,
    path_problem,
    resolved,
    store_folders,
)

PREFIX = "/memories"
_REV = 12  # hex characters of the content hash in a revision

NEEDS = {  # the arguments each command cannot do without (the others have defaults)
    "view": (),
    "create": ("path",),
    "str_replace": ("path", "old_str"),
    "insert": ("path", "insert_line"),
    "delete": ("path",),
    "rename": ("old_path", "new_path"),
}
_PATHS = ("path", "old_path", "new_path")
# The argument of each command that is written into a file
_TEXT = {"create": "file_text", "str_replace": "new_str", "insert": "insert_text"}
_ON_THE_NAME = ("delete", "rename")  # commands that act on a symlink named, not its target

MEMORY_SCHEMA = schema(
    {
        "command": {"type": "string", "enum": list(NEEDS)},
        "path": {"type": "string", "description": "a path under /memories"},
        "view_range": {
            "type": "array",
            "items": {"type": "integer"},
            "description": "first and last line to view",
        },
        "file_text": {"type": "string"},
        "old_str": {"type": "string"},
        "new_str": {"type": "string"},
        "insert_line": {"type": "integer"},
        "insert_text": {"type": "string"},
        "old_path": {"type": "string"},
        "new_path": {"type": "string"},
    },
    ["command"],
)

# resolve(path, argument, follow): the path relative to the root, and as the model sees it
Resolve = Callable[[str, str, bool], tuple[str, str]]


class MemoryCommandError(ad.ArgumentError):
    """A memory command that cannot be done as asked (nothing was changed)."""


class Memory(Adapter):
    """Anthropic's memory tool (view, create, str_replace, insert, delete, rename)."""

    name = "memory"
    description = (
        "Your memory folder, /memories: view a file or folder, create a file, str_replace "
        "or insert text in one, delete or rename. Keep what you learn here."
    )
    input_schema = MEMORY_SCHEMA

    def __init__(
        self,
        kit: ad.Toolkit,
        root: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        name: str | None = None,
    ) -> None:
        super().__init__(kit, name)
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self._fs = Root(self.root, _shown, store_folders(kit))
        self.max_bytes = max_bytes
        kit.on_rerun(self.name, lambda record: self._run(thawed(record.args), rerun=True))

    def __call__(self, command: str, **arguments: Any) -> ad.Result:
        return self.run({"command": command, **arguments})

    def handle(self, arguments: dict[str, Any]) -> str:
        return self.run(arguments).text

    def run(self, arguments: dict[str, Any]) -> ad.Result:
        """Carry out one memory command, given as the model sends it."""
        return self._run(arguments)

    def _run(self, arguments: dict[str, Any], rerun: bool = False) -> ad.Result:
        """`run`; a re-run (`verify=True`) of a view of what is no longer there returns
        that failed view, recorded, rather than raise: it cannot be verified, so it
        changed."""
        if not isinstance(arguments, Mapping):
            raise ad.ArgumentError(
                f"{self.name}: the arguments must be an object, not {type(arguments).__name__}"
            )
        command = arguments.get("command")
        if not isinstance(command, str):
            raise ad.ArgumentError(
                f"{self.name}: argument 'command' must be a string, not {type(command).__name__}"
            )
        if command not in NEEDS:
            raise MemoryCommandError(f"unknown memory command {command!r}")
        args = self._checked(command, arguments)
        if command == "view":
            return self._view(args, rerun)
        change = getattr(self, f"_{command}")
        # Each command raises these before it changes anything: the Action is not_applied.
        # One that fails after changing something (a folder `delete` that removed part of
        # it) raises an error not among them: the Action's outcome is unknown.
        refused = (ad.ArgumentError, ad.ScopeError, OSError)
        return self.act(args, lambda: self._named(change, args), refused, written=("file_text",))

    def _named(self, change: Any, args: dict[str, Any]) -> tuple[str, dict[str, str]]:
        """`change(args)`, its OSErrors naming the paths given, not where the root is."""
        try:
            result: tuple[str, dict[str, str]] = change(args)
        except OSError as exc:
            path = args.get("path", args.get("old_path", ""))
            why = path_problem(exc)
            if why is not None:  # a path the model gave that names nothing as asked
                paths = path if "new_path" not in args else f"{path} to {args['new_path']}"
                raise MemoryCommandError(f"cannot {args['command']} {paths}: {why}") from None
            name_path(exc, path, args.get("new_path"))
            raise
        return result

    def _checked(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments given (nulls left out), refused with `ArgumentError` naming the
        argument, or `ScopeError` for a path outside the root, before anything runs."""
        args = self.checked(arguments)  # the schema's types, for direct calls too
        check_command(self.name, command, args, self._resolve, self.max_bytes)
        return args

    # -- commands --------------------------------------------------------------------------

    def _view(self, args: dict[str, Any], rerun: bool = False) -> ad.Result:
        relative, shown = self._resolve(args.get("path", PREFIX))
        found = self._fs.lstat(relative)
        if found is not None and stat.S_ISDIR(found.st_mode):
            walked = self._fs.walk(relative)
            entries = sorted(
                path + ("/" if folder else "")
                for path, folder, _ in walked
                if not path.rpartition("/")[2].startswith(".")
            )
            text = f"Directory {shown}:\n" + "".join(f"- {e}\n" for e in entries)
            rev = self._folder_revision(relative, walked)
        elif found is not None and stat.S_ISREG(found.st_mode):
            data = self._fs.read(relative, self.name, self.max_bytes)
            rev = _rev(data)
            lines = _text(data, shown).splitlines()
            first, last = 1, len(lines)
            if args.get("view_range"):
                first, last = args["view_range"]  # checked: 1 <= first <= last, or -1
                last = len(lines) if last == -1 else min(last, len(lines))
            body = "".join(f"{n:6}\t{lines[n - 1]}\n" for n in range(first, last + 1))
            text = f"Content of {shown}:\n{body}"
        else:
            missing = MemoryCommandError(f"{shown} does not exist")
            failed = self.kit.record_failure(
                self.name, args, missing, determinism="deterministic", key=f"memory:{shown}"
            )
            if rerun:
                return failed
            raise missing
        key = f"memory:{shown}@{rev}"
        return self.kit.record(self.name, args, text.encode(), determinism="deterministic", key=key)

    def _create(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        relative, shown = self._resolve(arguments["path"])
        found = self._fs.lstat(relative)
        if arguments["path"].rpartition("/")[2] in ("", ".", ".."):  # "new/", "a/."
            raise MemoryCommandError(f"{arguments['path']} names a folder: name a file to create")
        if found is not None and stat.S_ISDIR(found.st_mode):
            raise MemoryCommandError(f"{shown} is a folder: name a file to create")
        return f"created {shown}", self._write(relative, shown, arguments.get("file_text", ""))

    def _str_replace(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        relative, shown, text = self._existing_file(arguments["path"])
        old = arguments["old_str"]
        count = text.count(old)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            raise MemoryCommandError(f"old_str {where} in {shown}; it must occur exactly once")
        return f"edited {shown}", self._write(
            relative, shown, text.replace(old, arguments.get("new_str", ""), 1)
        )

    def _insert(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        relative, shown, text = self._existing_file(arguments["path"])
        lines = text.splitlines(keepends=True)
        at = arguments["insert_line"]
        if not 0 <= at <= len(lines):
            raise MemoryCommandError(f"insert_line {at} is outside 0-{len(lines)} for {shown}")
        insert = arguments.get("insert_text", "")
        if insert and not insert.endswith("\n"):
            insert += "\n"
        if at and lines and not lines[at - 1].endswith("\n"):
            lines[at - 1] += "\n"
        lines.insert(at, insert)
        artifact = self._write(relative, shown, "".join(lines))
        return f"inserted text into {shown} after line {at}", artifact

    def _delete(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        relative, shown = self._resolve(arguments["path"], "path", False)
        if relative == ".":
            raise MemoryCommandError("the memory folder itself cannot be deleted")
        if self._fs.lstat(relative) is None:
            raise MemoryCommandError(f"{shown} does not exist")
        self._fs.remove(relative)
        return f"deleted {shown}", {"path": shown, "rev": "deleted"}

    def _rename(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        source, old = self._resolve(arguments["old_path"], "old_path", False)
        target, new = self._resolve(arguments["new_path"], "new_path", False)
        if self._fs.lstat(source) is None:
            raise MemoryCommandError(f"{old} does not exist")
        if self._fs.lstat(target) is not None:
            raise MemoryCommandError(f"{new} already exists")
        self._fs.rename(source, target)
        done = f"renamed {old} to {new}"
        found = self._fs.lstat(target)
        if found is None or not stat.S_ISREG(found.st_mode):
            return done, {"path": new}
        try:
            rev = self._fs.digest(target, self.name, self.max_bytes)[:_REV]
        except (OSError, ad.AddressableError):  # the move is done: only its revision is unknown
            return done, {"path": new}
        return done, _artifact(new, rev)

    # -- paths -----------------------------------------------------------------------------

    def _resolve(self, path: str, argument: str = "path", follow: bool = True) -> tuple[str, str]:
        """The file a model's path names, relative to the root (`.` for the root), and
        the path as the model should see it. Without `follow`, the folder that holds it
        is resolved but its last name is kept, so that a symlink there is what is named
        (to be removed or moved), not what it names."""
        check_path(path, argument, self.name, printable=True)  # its messages show it as is
        posix = PurePosixPath(path)
        if posix.is_absolute():
            try:
                posix = posix.relative_to(PREFIX)
            except ValueError:
                raise ad.ScopeError(f"{path!r} is outside {PREFIX}") from None
        where = f"{self.name}: argument {argument!r}"
        if follow or posix.name in ("", ".."):  # `..` and the root itself are no names
            full = resolved(self.root, posix, path, where)
        else:
            full = resolved(self.root, posix.parent, path, where) / posix.name
        if not full.is_relative_to(self.root):
            raise ad.ScopeError(f"{path!r} leaves {PREFIX}")
        # "a.md/" or "a.md/../b.md" takes a file for a folder, which resolving drops
        written = path.removeprefix(PREFIX).lstrip("/") if path.startswith("/") else path
        if written and (why := file_as_folder(self.root, written)) is not None:
            raise MemoryCommandError(f"{path}: {why}")
        relative = full.relative_to(self.root).as_posix()
        return relative, _shown(relative)

    def _existing_file(self, path: str) -> tuple[str, str, str]:
        """The regular file a model's path names, as `_resolve` gives it, and its text."""
        relative, shown = self._resolve(path)
        found = self._fs.lstat(relative)
        if found is None or not stat.S_ISREG(found.st_mode):
            raise MemoryCommandError(f"{shown} is not a file")
        return relative, shown, _text(self._fs.read(relative, self.name, self.max_bytes), shown)

    def _write(self, relative: str, shown: str, text: str) -> dict[str, str]:
        """Write the file `relative` through a temporary file and a rename; its artifact."""
        data = text.encode("utf-8")
        check_size(self.name, f"{shown} would be", len(data), self.max_bytes)
        self._fs.write(relative, data, 0o666)  # as open() makes a file: less the umask
        return _artifact(shown, _rev(data))

    def _folder_revision(self, relative: str, walked: list[tuple[str, bool, bool]]) -> str:
        """The revision of a folder: a hash of its regular files' paths and revisions."""
        files = sorted((path for path, _, regular in walked if regular), key=lambda p: p.split("/"))
        parts = [f"{p}:{self._file_revision(_below(relative, p))}" for p in files]
        return _rev("\n".join(parts).encode())

    def _file_revision(self, relative: str) -> str:
        """A file's revision, hashed a chunk at a time; for one over `max_bytes`, which is
        not read, its size and time of change stand for its content."""
        try:
            return self._fs.digest(relative, self.name, self.max_bytes)[:_REV]
        except ad.ScopeError:
            found = self._fs.lstat(relative)
            return "unread" if found is None else f"{found.st_size}@{found.st_mtime_ns}"


def check_command(
    tool: str, command: str, args: dict[str, Any], resolve: Resolve, max_bytes: int
) -> None:
    """Refuse, with `ArgumentError` naming the argument (or `ScopeError` for a path
    outside the root, as `resolve` raises it, or a text over `max_bytes`, which would
    make a file the tool cannot read), what `command` cannot run with: a missing
    argument, a path too deep to create, a `view_range` that is no range of lines."""
    for needed in NEEDS[command]:
        if needed not in args:
            raise ad.ArgumentError(
                f"{tool}: argument {needed!r} is missing: {command} needs "
                + ", ".join(NEEDS[command])
            )
    for name in _PATHS:
        if name in args:
            relative, _ = resolve(args[name], name, command not in _ON_THE_NAME)
            if command == "create" and relative.count("/") >= MAX_DEPTH:
                raise ad.ArgumentError(
                    f"{tool}: argument 'path' is more than {MAX_DEPTH} names deep"
                )
    written = _TEXT.get(command)
    text = args.get(written) if written is not None else None
    if isinstance(text, str):  # as large as the file it goes into: refused unrecorded
        with suppress(UnicodeEncodeError):  # no text at all: refused as args are recorded
            check_size(tool, f"argument {written!r} is", len(text.encode()), max_bytes)
    view_range = args.get("view_range")
    if view_range:
        if len(view_range) != 2:
            raise ad.ArgumentError(
                f"{tool}: argument 'view_range' must be two line numbers, "
                f"[first, last]; it has {len(view_range)}"
            )
        first, last = view_range
        if first < 1 or (last != -1 and last < first):
            raise ad.ArgumentError(
                f"{tool}: argument 'view_range' {shown_value(view_range)} is not a range of "
                "lines: first is 1 or more, last is first or more, or -1 for the end"
            )


def _shown(relative: str) -> str:
    """A path relative to the root as the model names it."""
    return PREFIX if relative == "." else f"{PREFIX}/{relative}"


def _below(relative: str, path: str) -> str:
    return path if relative == "." else f"{relative}/{path}"


def _rev(data: bytes) -> str:
    return ad.ids.content_hash(data)[:_REV]


def _artifact(shown: str, rev: str) -> dict[str, str]:
    return {"path": shown, "rev": rev, "key": f"memory:{shown}@{rev}"}


def _text(data: bytes, shown: str) -> str:
    text = ad.payload_text(data, "text/plain; charset=utf-8")  # exactly UTF-8
    if text is None:
        raise MemoryCommandError(f"{shown} is not UTF-8 text")
    return text.replace("\r\n", "\n").replace("\r", "\n")  # newlines read as text mode does
