"""`ls`: the records of a store, oldest first, as columns of plain text.

Columns, not a drawn table: a listing is read by eye and by `grep`, `sort` and `awk`,
and it starts without rich or pydantic (the store gives it summaries, read off each
record's stored JSON), so that it answers as fast as a command that reads a few rows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import unicodedata
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..core.counts import counted
from ..core.errors import EXIT_INTEGRITY, EXIT_OK
from .output import (
    Printer,
    print_json,
    shorten,
    shorten_middle,
    size_text,
    terminal,
    time_text,
    visible,
    write_text,
)

if TYPE_CHECKING:
    from ..store import Store

HEADER = ("id", "tool", "key or args", "kind", "status", "size", "observed")
_KEY = 2  # the column that folds onto more lines when the rows are wider than the screen
_GAP = "  "
_NARROWEST_KEY = 16


def run_ls(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`ls`: the records, oldest first, filtered and limited."""
    damaged: list[str] = []  # said apart: one altered record hides none of the others
    if args.json:
        listed: list[Any] = _chosen(store.records, args, damaged)
        done = _said_damaged(list(dict.fromkeys(damaged)))
        print_json([r.model_dump(mode="json") for r in listed])
        return done
    listed = _chosen(store.summaries, args, damaged)
    done = _said_damaged(list(dict.fromkeys(damaged)))
    rows = [
        (
            r.id,
            shorten(visible(r.tool), 50),
            shorten_middle(visible(r.key or json.dumps(r.args, ensure_ascii=False)), 60),
            r.determinism,
            r.outcome or r.status,
            size_text(r.size),
            time_text(r.observed_at),
        )
        for r in listed
    ]
    lines = columns([HEADER, *rows], _width())
    write_text("\n".join([*lines, counted(len(rows), "record")]))
    return done


def _chosen(find: Any, args: argparse.Namespace, damaged: list[str]) -> list[Any]:
    """What `find` (`records` or `summaries`) gives for the command's filters, oldest
    first: with --limit, the newest, found from the newest down rather than by listing
    them all."""
    filters = {"tool": args.tool, "key": args.key, "session": args.session, "since": args.since}
    if args.limit is None:
        return list(find(**filters, damaged=damaged))
    return list(find(**filters, newest_first=True, limit=args.limit, damaged=damaged))[::-1]


def _said_damaged(damaged: list[str]) -> int:
    """Name on stderr the records a listing left out because they are damaged: EXIT_INTEGRITY
    when there are any (the rest is listed all the same), EXIT_OK otherwise."""
    if not damaged:
        return EXIT_OK
    shown = ", ".join(damaged[:5]) + (f" and {len(damaged) - 5} more" if len(damaged) > 5 else "")
    print(
        f"addressable: error: {counted(len(damaged), 'damaged record')} not listed: {shown}; "
        f"run `addressable verify` (exit {EXIT_INTEGRITY})",
        file=sys.stderr,
    )
    return EXIT_INTEGRITY


def _width() -> int | None:
    """How wide a line may be: $COLUMNS, else the terminal's; None when the output goes
    to a pipe or a file, where a record stays on one line."""
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    if terminal():
        return os.get_terminal_size(sys.stdout.fileno()).columns
    return None


def columns(rows: Sequence[Sequence[str]], width: int | None) -> list[str]:
    """`rows` (the header first) as lines of left-aligned columns. Past `width`, the key
    column folds onto as many lines as it needs, so that no key loses its end."""
    widths = [max(cells(row[i]) for row in rows) for i in range(len(rows[0]))]
    if width is not None:
        others = sum(widths) - widths[_KEY] + len(_GAP) * (len(widths) - 1)
        widths[_KEY] = min(widths[_KEY], max(_NARROWEST_KEY, width - others))
    lines = []
    for row in rows:
        parts = list(_folded(row[_KEY], widths[_KEY]))
        for n, part in enumerate(parts):
            line = [row[i] if n == 0 else "" for i in range(len(row))]
            line[_KEY] = part
            padded = [text + " " * (widths[i] - cells(text)) for i, text in enumerate(line)]
            lines.append(_GAP.join(padded).rstrip())
    return lines


def cells(text: str) -> int:
    """How many columns of a terminal `text` takes: wide characters two, marks that join
    the one before them none."""
    if text.isascii():
        return len(text)
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _folded(text: str, width: int) -> Iterator[str]:
    """`text` in pieces of at most `width` columns."""
    piece, used = "", 0
    for char in text:
        size = cells(char)
        if used + size > width and piece:
            yield piece
            piece, used = "", 0
        piece += char
        used += size
    yield piece
