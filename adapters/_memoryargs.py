"""What the memory tool takes: its commands, their JSON Schema, and the checks a
command's arguments pass before anything runs or is recorded."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Any

import addressable as ad
from addressable.recording.argerrors import shown

from ._base import schema
from ._rootfs import MAX_DEPTH, check_size

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
                f"{tool}: argument 'view_range' {shown(view_range)} is not a range of "
                "lines: first is 1 or more, last is first or more, or -1 for the end"
            )
