"""Checks of what a store is given: times that name their zone, and gc's limits."""

from __future__ import annotations

from datetime import datetime, timedelta

from ..core.errors import ArgumentError


def aware(name: str, when: object) -> datetime:
    """`when`, if it is a datetime with a time zone; else `ArgumentError` naming it."""
    if not isinstance(when, datetime):
        raise ArgumentError(f"{name} must be a datetime, not {type(when).__name__} ({when!r})")
    if when.utcoffset() is None:
        raise ArgumentError(
            f"{name} {when.isoformat()} has no time zone: give an aware datetime, "
            "e.g. datetime.now(UTC)"
        )
    return when


def limits(max_age: object, max_bytes: object) -> tuple[timedelta | None, int | None]:
    """gc's limits, or `ArgumentError` naming the one that is not a positive amount."""
    if max_age is not None:
        if not isinstance(max_age, timedelta):
            raise ArgumentError(
                f"gc max_age must be a timedelta, not {type(max_age).__name__} ({max_age!r})"
            )
        if max_age <= timedelta(0):
            raise ArgumentError(
                f"gc max_age must be a positive duration, not {max_age}: it removes records "
                "last seen longer ago than that"
            )
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
            raise ArgumentError(
                f"gc max_bytes must be a whole number of bytes, not "
                f"{type(max_bytes).__name__} ({max_bytes!r})"
            )
        if max_bytes <= 0:
            raise ArgumentError(
                f"gc max_bytes must be a positive number of bytes, not {max_bytes}: payloads "
                "are trimmed to at most that"
            )
    return max_age, max_bytes
