"""A count said in words, its noun agreeing in number: what the command line and the
model are told ("1 record", "2,048 lines")."""

from __future__ import annotations


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, agreeing in number: "1 record", "2 records"."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
