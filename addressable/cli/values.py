"""The values options take: counts, durations, sizes and moments, each refused by name
(argparse's usage error) when it is not one."""

from __future__ import annotations

import argparse
import math
import re
from datetime import UTC, datetime, timedelta

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZES = {  # powers of 1000, as sizes are printed; powers of 1024 when named so (KiB)
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}


def count(text: str) -> int:
    """A whole number from 1 to 2**63 - 1 (--limit): no store holds more records, and
    SQLite's and Redis's integers go no further."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: give 1 or more")
    if n >= 2**63:
        raise argparse.ArgumentTypeError(f"{text!r} is too large a count: give at most 2**63 - 1")
    return n


def _span(text: str) -> timedelta | None:
    """`text` as a duration (30s, 15m, 2h, 7d, 1w), or None if it is not one."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if not match:
        return None
    try:
        return timedelta(seconds=float(match[1]) * _UNITS[match[2]])
    except OverflowError:  # past timedelta's 999,999,999 days, or infinite
        raise argparse.ArgumentTypeError(f"{text!r} is too long a duration") from None


def duration(text: str) -> timedelta:
    """A duration above zero: 30s, 15m, 2h, 7d, 1w (--max-age)."""
    span = _span(text)
    if span is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: use 30s, 15m, 2h, 7d, 1w")
    if span <= timedelta(0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration above zero")
    return span


def size(text: str) -> int:
    """A size of a byte or more: 1048576, 500MB or 1GiB (--max-bytes)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*", text.lower())
    if not match or match[2] not in _SIZES:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: use 1048576, 500MB or 1GiB")
    size = float(match[1]) * _SIZES[match[2]]
    if not math.isfinite(size) or size >= 2**63:
        raise argparse.ArgumentTypeError(f"{text!r} is too large a size")
    if int(size) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size of a byte or more")
    return int(size)


def when(text: str) -> datetime:
    """A moment: a duration ago (2h, 7d) or an ISO time, in UTC (--since)."""
    span = _span(text)
    if span is not None:
        try:
            return datetime.now(UTC) - span
        except OverflowError:  # before the year 1
            raise argparse.ArgumentTypeError(f"{text!r} is too far back in time") from None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a duration (2h, 7d) nor an ISO time (2026-03-11T09:00)"
        ) from None
    try:
        return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    except OverflowError:  # in UTC, after 9999-12-31 or before the year 1
        edge = "after the year 9999" if moment.year == 9999 else "before the year 1"
        raise argparse.ArgumentTypeError(f"{text!r} is {edge} in UTC") from None
