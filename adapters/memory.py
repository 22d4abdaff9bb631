"""Memory: the commands of Anthropic's memory tool over a folder, every revision addressable.

The model names files under ``/memories``; they live in the adapter's root folder. A
`view` is a Reference keyed ``memory:/memories/path@rev`` (rev: the first 12 hex
characters of the content's blake3), so each revision has an address of its own;
`create`, `str_replace`, `insert`, `delete` and `rename` are Actions whose records name
the revision they wrote. A path that leaves the root raises `ScopeError`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

import addressable as ad

from ._base import Adapter, schema

PREFIX = "/memories"
_REV = 12  # hex characters of the content hash in a revision


class MemoryCommandError(ad.ArgumentError):
    """A memory command that cannot be done as asked (nothing was changed)."""


class Memory(Adapter):
    """Anthropic's memory tool (view, create, str_replace, insert, delete, rename)."""

    name = "memory"
    description = (
        "Your memory folder, /memories: view a file or folder, create a file, str_replace "
        "or insert text in one, delete or rename. Keep what you learn here."
    )
    input_schema = schema(
        {
            "command": {
                "type": "string",
                "enum": ["view", "create", "str_replace", "insert", "delete", "rename"],
            },
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

    def __init__(
        self, kit: ad.Toolkit, root: str | os.PathLike[str], *, name: str | None = None
    ) -> None:
        super().__init__(kit, name)
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        kit.on_rerun(self.name, lambda record: self.run(dict(record.args)))

    def __call__(self, command: str, **arguments: Any) -> ad.Result:
        return self.run({"command": command, **arguments})

    def handle(self, arguments: dict[str, Any]) -> str:
        return self.run(arguments).text

    def run(self, arguments: dict[str, Any]) -> ad.Result:
        """Carry out one memory command, given as the model sends it."""
        command = arguments.get("command")
        if command == "view":
            return self._view(arguments)
        if command not in ("create", "str_replace", "insert", "delete", "rename"):
            raise MemoryCommandError(f"unknown memory command {command!r}")
        args = {k: v for k, v in arguments.items() if v is not None}
        change = getattr(self, f"_{command}")
        refused = (MemoryCommandError, OSError, KeyError)
        return self.act(args, lambda: change(arguments), refused, written=("file_text",))

    # -- commands --------------------------------------------------------------------------

    def _view(self, arguments: dict[str, Any]) -> ad.Result:
        path = str(arguments.get("path", PREFIX))
        full, shown = self._resolve(path)
        args = {k: v for k, v in arguments.items() if v is not None}
        if full.is_dir():
            entries = sorted(
                p.relative_to(full).as_posix() + ("/" if p.is_dir() else "")
                for p in full.rglob("*")
                if not p.name.startswith(".")
            )
            text = f"Directory {shown}:\n" + "".join(f"- {e}\n" for e in entries)
        elif full.is_file():
            lines = full.read_text(encoding="utf-8").splitlines()
            first, last = 1, len(lines)
            if arguments.get("view_range"):
                first, last = (int(n) for n in arguments["view_range"])
                last = len(lines) if last == -1 else min(last, len(lines))
            body = "".join(f"{n:6}\t{lines[n - 1]}\n" for n in range(max(first, 1), last + 1))
            text = f"Content of {shown}:\n{body}"
        else:
            missing = FileNotFoundError(f"{shown} does not exist")
            self.kit.record_failure(
                self.name, args, missing, determinism="deterministic", key=f"memory:{shown}"
            )
            raise missing
        key = f"memory:{shown}@{self.revision(full)}"
        return self.kit.record(self.name, args, text.encode(), determinism="deterministic", key=key)

    def _create(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        full, shown = self._resolve(arguments["path"])
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(arguments.get("file_text", ""), encoding="utf-8")
        return f"created {shown}", self._artifact(full, shown)

    def _str_replace(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        full, shown = self._existing_file(arguments["path"])
        text = full.read_text(encoding="utf-8")
        old = arguments["old_str"]
        count = text.count(old)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            raise MemoryCommandError(f"old_str {where} in {shown}; it must occur exactly once")
        full.write_text(text.replace(old, arguments.get("new_str", ""), 1), encoding="utf-8")
        return f"edited {shown}", self._artifact(full, shown)

    def _insert(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        full, shown = self._existing_file(arguments["path"])
        lines = full.read_text(encoding="utf-8").splitlines(keepends=True)
        at = int(arguments["insert_line"])
        if not 0 <= at <= len(lines):
            raise MemoryCommandError(f"insert_line {at} is outside 0-{len(lines)} for {shown}")
        insert = arguments.get("insert_text", "")
        if insert and not insert.endswith("\n"):
            insert += "\n"
        if at and lines and not lines[at - 1].endswith("\n"):
            lines[at - 1] += "\n"
        lines.insert(at, insert)
        full.write_text("".join(lines), encoding="utf-8")
        return f"inserted text into {shown} after line {at}", self._artifact(full, shown)

    def _delete(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        full, shown = self._resolve(arguments["path"])
        if full == self.root:
            raise MemoryCommandError("the memory folder itself cannot be deleted")
        if full.is_dir():
            shutil.rmtree(full)
        elif full.exists():
            full.unlink()
        else:
            raise MemoryCommandError(f"{shown} does not exist")
        return f"deleted {shown}", {"path": shown, "rev": "deleted"}

    def _rename(self, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
        source, old = self._resolve(arguments["old_path"])
        target, new = self._resolve(arguments["new_path"])
        if not source.exists():
            raise MemoryCommandError(f"{old} does not exist")
        if target.exists():
            raise MemoryCommandError(f"{new} already exists")
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        artifact = self._artifact(target, new) if target.is_file() else {"path": new}
        return f"renamed {old} to {new}", artifact

    # -- paths -----------------------------------------------------------------------------

    def _resolve(self, path: str) -> tuple[Path, str]:
        """The file a model's path names, and the path as the model should see it."""
        posix = PurePosixPath(path)
        if posix.is_absolute():
            try:
                posix = posix.relative_to(PREFIX)
            except ValueError:
                raise ad.ScopeError(f"{path!r} is outside {PREFIX}") from None
        full = (self.root / posix).resolve()
        if not full.is_relative_to(self.root):
            raise ad.ScopeError(f"{path!r} leaves {PREFIX}")
        relative = full.relative_to(self.root).as_posix()
        return full, PREFIX if relative == "." else f"{PREFIX}/{relative}"

    def _existing_file(self, path: str) -> tuple[Path, str]:
        full, shown = self._resolve(path)
        if not full.is_file():
            raise MemoryCommandError(f"{shown} is not a file")
        return full, shown

    def revision(self, full: Path) -> str:
        """The revision of a file or folder: a hash of its content (a folder: its listing
        and its files' contents)."""
        if full.is_file():
            return ad.ids.content_hash(full.read_bytes())[:_REV]
        parts = [
            f"{p.relative_to(full).as_posix()}:{self.revision(p)}"
            for p in sorted(full.rglob("*"))
            if p.is_file()
        ]
        return ad.ids.content_hash("\n".join(parts).encode())[:_REV]

    def _artifact(self, full: Path, shown: str) -> dict[str, str]:
        rev = self.revision(full)
        return {"path": shown, "rev": rev, "key": f"memory:{shown}@{rev}"}
