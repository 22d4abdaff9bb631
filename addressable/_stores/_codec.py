"""How a record, a sighting and a pin are stored as bytes, and read back.

A record is checked two ways. Its id follows from its tool, args, key and content hash
(`Record.derived_id`; an Action's id joins the nonce recorded with it), and the
stored JSON carries a checksum of all its fields, the others included (media type,
size, determinism, session, times, outcome, meta), so that a record changed after it was
written is refused rather than served. The checksum catches mistakes and damage, not an
adversary who can write to the store: anyone who can edit a record can recompute it.
Records written before the checksum existed are plain JSON: they are read as before,
and `verify` checks their ids.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import blake3
from pydantic import ValidationError

from .._errors import ArgumentError, IntegrityError
from .._models import Observation, Record
from ._base import Pin


def dump_record(record: Record) -> bytes:
    """The bytes a record is stored as: its checksum, a newline, its JSON."""
    # The token count lives beside the blob (t:<hash>): it is derived, and filled later.
    # None fields are left out: they read back as their default, None.
    if record.tokens is not None:
        record = record.model_copy(update={"tokens": None})
    try:
        body = record.model_dump_json(exclude_none=True).encode("utf-8")
    except ValueError as exc:  # nested deeper than the serialiser goes, or not Unicode
        raise ArgumentError(
            f"the record of result {record.id} cannot be stored: {one_line(exc)}"
        ) from exc
    return _checksum(body) + b"\n" + body


# A record as stored: 32 hex characters of the blake3 hash of its JSON, a newline, the
# JSON (which has no raw newline). Records from before the checksum start with "{".
_CHECKSUM = 32


def _checksum(body: bytes) -> bytes:
    return blake3.blake3(body).hexdigest(length=_CHECKSUM // 2).encode()


def load_pin(raw: bytes) -> Pin:
    """A pin as stored; the "1" of a pin made before pins had reasons is a user pin."""
    if raw == b"1":
        return Pin()
    try:
        return Pin.model_validate_json(raw)
    except ValidationError:
        return Pin()  # unreadable: kept, as a user pin keeps it


class _Damaged(IntegrityError):
    """A stored record that cannot be given back as written; `problem` says how."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem  # "unreadable" or "altered"


def load_record(record_id: str, raw: bytes) -> Record:
    """The record stored under `record_id`, checked: `_Damaged` if it cannot be given
    back as written."""
    if raw[:1] == b"{":
        body = raw  # written before records carried a checksum
    else:
        body = raw[_CHECKSUM + 1 :]
        if raw[_CHECKSUM : _CHECKSUM + 1] != b"\n" or raw[:_CHECKSUM] != _checksum(body):
            raise _Damaged(
                f"the record of result {record_id} was altered after it was written: it no "
                "longer matches its checksum; it will not be served (run verify)",
                "altered",
            )
    try:
        record = Record.model_validate_json(body)
        if record.observed_at.tzinfo is None:
            raise ValueError("a time without a time zone")
    except ValueError as exc:  # ValidationError included
        # Rare paths, kept off the fast one: JSON nested deeper than pydantic's own parser
        # goes, and times written without a time zone (taken as UTC).
        record = _load_slowly(record_id, body, exc)
    if record.id != record_id:
        raise _Damaged(
            f"the record stored under {record_id} names another id, {record.id}", "altered"
        )
    return record


def _load_slowly(record_id: str, body: bytes, first: ValueError) -> Record:
    try:
        data = json.loads(body)
        if isinstance(data, dict) and isinstance(data.get("observed_at"), str):
            data["observed_at"] = _utc(data["observed_at"])
        return Record.model_validate(data)
    except (ValueError, RecursionError):
        raise _Damaged(
            f"the record of result {record_id} is unreadable: {one_line(first)}", "unreadable"
        ) from first


def load_observation(record_id: str, raw: bytes) -> Observation:
    """A later sighting of a record as stored; `_Damaged` if it cannot be read."""
    try:
        observation = Observation.model_validate_json(raw)
        if observation.at.tzinfo is None:
            raise ValueError("a time without a time zone")
        return observation
    except ValueError as first:
        try:  # a time written without a time zone: taken as UTC
            data = json.loads(raw)
            data["at"] = _utc(data["at"])
            return Observation.model_validate(data)
        except (ValueError, TypeError, KeyError):
            raise _Damaged(
                f"an observation of result {record_id} is unreadable: {one_line(first)}",
                "unreadable",
            ) from first


def _utc(text: str) -> str:
    """An ISO time as written, with UTC added when it names no time zone."""
    when = datetime.fromisoformat(text)
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()


def one_line(exc: BaseException) -> str:
    """An exception's message on one line; a pydantic error as each field and its fault."""
    if isinstance(exc, ValidationError):
        text = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
    else:
        text = str(exc)
    return " ".join(text.split())
