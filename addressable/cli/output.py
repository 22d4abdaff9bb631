"""How the command line prints: what tools wrote with its control characters escaped,
table cells, JSON, a payload's bytes, sizes and times."""

from __future__ import annotations

import base64
import json
import re
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

from ..core.payload import payload_text

# What a terminal would act on rather than show: C0 controls (escape sequences, carriage
# return, backspace, bell), DEL, C1 controls (0x9b is a CSI of its own), bidirectional
# overrides that reorder what is seen, line and paragraph separators, and lone surrogates
# (which cannot even be encoded).
_UNSEEN = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CONTROL_IN_LINE = re.compile(f"[\x00-\x1f{_UNSEEN}]")
_CONTROL_IN_TEXT = re.compile(f"[\x00-\x08\x0b-\x1f{_UNSEEN}]")  # keeps tab and newline
_JSON_UNSEEN = re.compile(f"[{_UNSEEN}]")  # json.dumps escapes the C0 controls itself
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with every control character written as an escape (``\\x1b``, ``\\u202e``):
    on one line, or (`lines`) keeping line breaks and tabs."""
    if lines:
        return _CONTROL_IN_TEXT.sub(_escaped, text.replace("\r\n", "\n"))
    return _CONTROL_IN_LINE.sub(_escaped, text)


def one_line(message: str) -> str:
    """`message` on one visible line, as errors are printed."""
    return visible(" ".join(part.strip() for part in message.splitlines() if part.strip()))


class Printer:
    """Where a command prints its tables and lines: rich's console, made when first
    printed to (a listing prints without rich). Nothing printed is read as markup: what
    tools wrote must show as written."""

    def __init__(self) -> None:
        self._console: Console | None = None

    def print(self, *objects: Any) -> None:
        if self._console is None:
            from rich.console import Console

            self._console = Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
        self._console.print(*objects)


def cell(text: str) -> Text:
    """A table cell that is shown as written: never read as markup or emoji codes."""
    from rich.text import Text  # loaded by the commands that print tables

    return Text(text)


def terminal() -> bool:
    """Whether stdout is a terminal (rather than a pipe or a file)."""
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def print_json(value: Any) -> None:
    """`value` as indented JSON on stdout, with what a terminal would act on escaped."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    # Non-ASCII appears only inside JSON strings, where \uXXXX means the same character.
    print(_JSON_UNSEEN.sub(lambda m: f"\\u{ord(m[0]):04x}", text))


def write_bytes(data: bytes) -> None:
    """`data` to stdout as it is, after whatever text was printed before it."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def write_text(text: str) -> None:
    """`text` to stdout, ended by a newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def write_payload(payload: bytes, media_type: str) -> None:
    """The exact stored bytes to a pipe or a file; to a terminal, text with its control
    characters escaped, and binary content left out (it would drive the terminal)."""
    if not terminal():
        write_bytes(payload)
        return
    text = payload_text(payload, media_type)
    if text is None:
        write_text(
            f"[{len(payload)} bytes of binary content: not written to a terminal; "
            "redirect to a file or a pipe for the bytes]"
        )
    else:
        write_text(visible(text, lines=True))


def content_json(payload: bytes, media_type: str) -> dict[str, Any]:
    """A payload in JSON: as text, or base64 when it is binary."""
    text = payload_text(payload, media_type)
    if text is not None:
        return {"content": text}
    return {"content_base64": base64.b64encode(payload).decode("ascii")}


def shorten(text: str, width: int) -> str:
    """`text` cut to `width` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def shorten_middle(text: str, width: int) -> str:
    """`text` cut to `width` characters in its middle, so that both ends show: the host
    and the path's last names of a URL, which tell keys on one host apart."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def size_text(n: int) -> str:
    """A size in powers of 1000 (KB, MB, GB, TB), as `--max-bytes` reads them."""
    if n < 1000:
        return f"{n:,} B"
    size = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        size /= 1000
        if round(size, 1) < 1000 or unit == "TB":
            break
    return f"{size:,.1f} {unit}"


def time_text(moment: datetime | None) -> str:
    """A moment in UTC to the second, or "-" for none; one that is no time in UTC (past
    the year 9999 there, as a store written elsewhere may hold) as it is written."""
    if moment is None:
        return "-"
    try:
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    except OverflowError:
        return moment.isoformat(sep=" ", timespec="seconds")
