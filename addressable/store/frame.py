"""A record as the store keeps it: 32 hex characters of the blake3 hash of its JSON, a
newline, and the JSON (which has no raw newline); and what a listing shows of a record,
read off that JSON without building the record.

The checksum catches mistakes and damage, not an adversary who can write to the store:
anyone who can edit a record can recompute it. Nothing here loads pydantic, so that a
command that only lists records starts without it; a record that is not exactly as the
store writes one is left to `codec.load_record`, which says what is wrong with it.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import blake3

from ..core.errors import IntegrityError
from ..core.kinds import Determinism, Outcome, Status

if TYPE_CHECKING:
    from ..core.records import Record

_CHECKSUM = 32
_CHECKSUM_LINE = re.compile(rb"[0-9a-f]{%d}\n" % _CHECKSUM)


class _Damaged(IntegrityError):
    """A stored record that cannot be given back as written; `problem` says how."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem  # "unreadable" or "altered"


def checksum(body: bytes) -> bytes:
    return blake3.blake3(body).hexdigest(length=_CHECKSUM // 2).encode()


def framed(body: bytes) -> bytes:
    """A record's JSON as it is stored: its checksum first."""
    return checksum(body) + b"\n" + body


def _body(raw: bytes) -> bytes | None:
    """The JSON of a record stored as `raw`, if its checksum matches."""
    body = raw[_CHECKSUM + 1 :]
    if raw[_CHECKSUM : _CHECKSUM + 1] == b"\n" and raw[:_CHECKSUM] == checksum(body):
        return body
    return None


def unframed(record_id: str, raw: bytes) -> bytes:
    """The JSON of the record stored under `record_id` as `raw`, once its checksum is
    checked: `_Damaged` if it does not match."""
    body = _body(raw)
    if body is not None:
        return body
    if _CHECKSUM_LINE.match(raw) is None:  # not a record as the store writes one
        raise _Damaged(
            f"the record of result {record_id} is unreadable: it does not start with its "
            "checksum; it will not be served (run verify)",
            "unreadable",
        )
    raise _Damaged(
        f"the record of result {record_id} was altered after it was written: it no longer "
        "matches its checksum; it will not be served (run verify)",
        "altered",
    )


class Summary(NamedTuple):
    """What a listing shows of a record, and what it is chosen by; the kinds as their
    values (`Determinism`, `Status`, `Outcome`)."""

    id: str
    tool: str
    args: dict[str, Any]
    key: str | None
    determinism: str
    status: str
    outcome: str | None
    size: int
    observed_at: datetime
    session: str | None
    meta: dict[str, Any]


# The fields of a record (`core.records.Record`), which a stored one holds but for those
# that are None; a test keeps the two alike.
FIELDS = frozenset(
    {"format", "id", "tool", "args", "key", "determinism", "status", "content_hash", "size"}
    | {"media_type", "observed_at", "session", "tokens", "error", "outcome"}
    | {"idempotency_key", "nonce", "max_age", "meta"}
)
_REQUIRED = frozenset(
    {"format", "id", "tool", "args", "determinism", "content_hash", "size", "media_type"}
    | {"observed_at"}
)
_TEXTS = ("id", "tool", "content_hash", "media_type")
_OPTIONAL_TEXTS = ("key", "session", "error", "idempotency_key", "nonce")
_DETERMINISMS = frozenset(m.value for m in Determinism)
_STATUSES = frozenset(m.value for m in Status)
_OUTCOMES = frozenset(m.value for m in Outcome)
# A time and a duration as pydantic writes them; what else it reads is left to it.
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)")
_DURATION = re.compile(
    r"-?P(?:\d{1,6}Y)?(?:\d{1,8}D)?(?:T(?:\d{1,8}H)?(?:\d{1,8}M)?(?:\d{1,10}(?:\.\d{1,6})?S)?)?"
)


def summary(record_id: str, raw: bytes) -> Summary | None:
    """What a listing shows of the record stored under `record_id` as `raw`; None unless
    it is exactly as the store writes one (its checksum matches, and every field is of
    its type as written), for `codec.load_record` to read in full or name the damage."""
    body = _body(raw)
    if body is None:
        return None
    try:
        fields = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if type(fields) is not dict or not _REQUIRED <= fields.keys() <= FIELDS:
        return None
    get = fields.get
    at, max_age, tokens = get("observed_at"), get("max_age"), get("tokens")
    status, outcome, size = get("status", Status.OK.value), get("outcome"), fields["size"]
    if (
        fields["id"] != record_id
        or type(fields["format"]) is not int
        or fields["format"] != 1
        or any(type(get(name)) is not str for name in _TEXTS)
        or any(get(name) is not None and type(get(name)) is not str for name in _OPTIONAL_TEXTS)
        or type(fields["args"]) is not dict
        or type(get("meta", {})) is not dict
        or type(size) is not int
        or not _one_of(fields["determinism"], _DETERMINISMS)
        or not _one_of(status, _STATUSES)
        or (outcome is not None and not _one_of(outcome, _OUTCOMES))
        or (tokens is not None and (type(tokens) is not int or tokens < 0))
        or type(at) is not str
        or _TIME.fullmatch(at) is None
        or (max_age is not None and not _is_duration(max_age))
    ):
        return None
    try:
        observed_at = datetime.fromisoformat(at)
    except ValueError:  # a day or an hour out of range
        return None
    return Summary(
        record_id,
        fields["tool"],
        fields["args"],
        get("key"),
        fields["determinism"],
        status,
        outcome,
        size,
        observed_at,
        get("session"),
        get("meta", {}),
    )


def summary_of(record: Record) -> Summary:
    """The summary of a record read in full."""
    return Summary(
        record.id,
        record.tool,
        dict(record.args),
        record.key,
        record.determinism.value,
        record.status.value,
        None if record.outcome is None else record.outcome.value,
        record.size,
        record.observed_at,
        record.session,
        dict(record.meta),
    )


def _one_of(value: object, values: frozenset[str]) -> bool:
    return type(value) is str and value in values


def _is_duration(value: object) -> bool:
    return (
        type(value) is str
        and _DURATION.fullmatch(value) is not None
        and value[-1] not in "PT"  # one part at least, and none left empty after T
    )
