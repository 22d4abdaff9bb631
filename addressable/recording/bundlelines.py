"""How a bundle's lines are read and written: one canonical JSON object a line, a
blob line's payload decoded straight from the line's bytes, and no line longer than
`MAX_LINE` held at all (see `recording.bundle` for what the lines hold)."""

from __future__ import annotations

import binascii
import json
import re
from collections.abc import Container, Iterator
from pathlib import Path
from typing import IO, Any

from ..core.errors import BundleError
from ..core.ids import canonical_json

# The longest line a bundle may have, its newline included: room for a payload of 512 MiB
# (the most a Redis store keeps in one value, by default) in base64: 715,827,884
# characters.
MAX_LINE = 720_000_000
# A blob line as export writes it: its payload is decoded straight from the line's bytes,
# never parsed into a string first.
_BLOB_HEAD = re.compile(rb'\{"blob":"([0-9a-f]{64})","data":"')
_BLOB_TAIL = b'"}'
_PIECE = 1 << 16  # bytes of a line read at once while its end is looked for


def kind_of(item: dict[str, Any]) -> str:
    """What a line after the first is: "record", "blob", "end" or "unknown". Both
    readings of a bundle take each line alike: a record line that also gives "blob" and
    "data" is a record, never a payload the first reading did not check."""
    if "record" in item:
        return "record"
    if "blob" in item:
        return "blob"
    return "end" if item.get("end") is True else "unknown"


def words(exc: object) -> str:
    return " ".join(str(exc).split())[:300]


def blob_of(path: Path, number: int, item: dict[str, Any]) -> tuple[str, bytes]:
    """A blob line's hash and payload, which `lines` decoded."""
    data = item.get("data")
    if not isinstance(data, bytes):  # `lines` said why it could not decode it
        raise BundleError(f"{path}:{number}: malformed blob line: {data}")
    return str(item["blob"]), data


def lines(path: Path, only: Container[int] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line of the bundle (or the lines numbered in `only`) as a JSON object, a
    blob line's data decoded to bytes; `BundleError` for a line longer than `MAX_LINE`
    or not a JSON object. One line is held at a time, and let go before its payload is
    used."""
    try:
        with path.open("rb") as f:
            number = 0
            while raw := _read_line(f, path, number + 1):
                number += 1
                if only is not None and number not in only:
                    continue
                item = _item(path, number, raw)
                del raw
                yield number, item
    except OSError as exc:
        raise BundleError(f"cannot read bundle {path}: {exc}") from exc


def _read_line(f: IO[bytes], path: Path, number: int) -> bytes:
    """The next line of `f`, or b"" at its end. A long line is measured before it is
    read, then read in one piece: never held twice while it is put together, and never
    held at all when it is longer than `MAX_LINE`."""
    piece = f.readline(_PIECE)
    length = len(piece)
    if length == _PIECE and not piece.endswith(b"\n"):
        start = f.tell() - length
        while len(piece) == _PIECE and not piece.endswith(b"\n") and length <= MAX_LINE:
            piece = f.readline(_PIECE)
            length += len(piece)
        if length <= MAX_LINE:
            f.seek(start)
            piece = f.read(length)
    if length > MAX_LINE:
        raise BundleError(
            f"{path}:{number}: the line is longer than {MAX_LINE:,} bytes, the most a "
            "bundle line may be"
        )
    return piece


def _item(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    """One line as a JSON object. A blob line's data is decoded to bytes, or replaced by
    why it cannot be (a string, which `blob_of` refuses); a blob line as export writes it
    is decoded from `raw` itself, without parsing its base64 into a string first."""
    end = len(raw) - raw.endswith(b"\n")
    head = _BLOB_HEAD.match(raw, 0, end)
    if head is not None and raw.endswith(_BLOB_TAIL, head.end(), end):
        with memoryview(raw) as view:
            try:
                data = binascii.a2b_base64(
                    view[head.end() : end - len(_BLOB_TAIL)], strict_mode=True
                )
            except binascii.Error:
                pass  # not as export writes it: read as JSON below, which says why
            else:
                return {"blob": head[1].decode("ascii"), "data": data}
    try:
        item = json.loads(raw)
    except RecursionError as exc:
        raise BundleError(f"{path}:{number}: nests too deeply to parse") from exc
    except ValueError as exc:
        raise BundleError(f"{path}:{number}: not JSON: {words(exc)}") from exc
    if not isinstance(item, dict):
        raise BundleError(f"{path}:{number}: not a JSON object")
    if kind_of(item) == "blob":
        try:
            item["data"] = binascii.a2b_base64(item["data"], strict_mode=True)
        except (KeyError, TypeError, ValueError) as exc:  # binascii.Error is a ValueError
            item["data"] = words(exc)
    return item


def line_of(item: dict[str, Any]) -> bytes:
    return canonical_json(item) + b"\n"
