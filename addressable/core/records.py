"""The data addressable keeps: records of calls, results, and what replaces them in context.

All are pydantic models whose JSON round trip is lossless; the store keeps a record as
its JSON, so these field names are a storage format (see `RECORD_FORMAT`). Every time
in them is timezone-aware: a naive datetime (or an ISO 8601 text without an offset) is
refused with a `ValidationError`, so no naive time is ever compared with an aware one.

What adapters report for the state document goes through one declared interface,
`Report`: a record carries, in `Record.meta`, what the state document needs to know of
it, under its keys, and the library below the adapters never needs to know which tool
family made the record.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any, Literal, NoReturn, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from .errors import ArgumentError, ReadOnly
from .frozen import frozen
from .ids import action_id_of, canonical_args, result_id
from .kinds import Determinism as Determinism
from .kinds import Outcome as Outcome
from .kinds import Status as Status
from .kinds import member as member
from .payload import decode_payload, decode_text
from .tokens import count_tokens


class Report:
    """The keys of `Record.meta` through which an adapter reports what a call did."""

    # str: a query this call ran, as the state document lists it ("text (backend)")
    QUERY = "query_run"
    # {"path": str, "rev": str}: what a change wrote, at which revision
    ARTIFACT = "artifact"
    # str: the id of the Action this read verifies
    VERIFIES = "verifies"
    # str: a marker a side effect wrote into what it changed, so a later read can
    # tell whether it was applied
    MARKER = "marker"
    # int: how a command ended, shown first in its stub's gist
    EXIT_CODE = "exit_code"
    # [str]: the arguments that carry written content (a file's text, a request's body),
    # left out where an Action's operation is summarised
    WRITTEN = "written"


RECORD_FORMAT = 1


def aware(value: object, source: str) -> datetime:
    """`value` if it is a timezone-aware datetime, else `ArgumentError` naming it and
    where it came from (`source`, such as "the Toolkit's clock")."""
    if isinstance(value, datetime):
        if value.tzinfo is not None and value.utcoffset() is not None:
            return value
        problem = "a naive datetime (no timezone)"
    else:
        problem = f"a {type(value).__name__}, not a datetime"
    raise ArgumentError(
        f"{source} gave {value!r}, {problem}; times must be timezone-aware, "
        "such as datetime.now(UTC)"
    )


def _unchanged(self: BaseModel, name: str, value: object) -> NoReturn:
    """A record, a result or a stub item does not change once made: `ReadOnly`, from
    the library's tree, where pydantic's frozen check raises its own error."""
    raise ReadOnly(
        f"a {type(self).__name__} is frozen, it does not change once made: {name} cannot "
        "be set (model_copy(update=...) makes a changed copy)"
    )


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    __setattr__ = _unchanged


_M = TypeVar("_M", bound=BaseModel)
# What a pydantic model instance holds, as `model_construct` fills it in; checked once,
# so that another layout makes models through `model_construct` instead.
_LAYOUT = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
_BARE = BaseModel.__slots__ == _LAYOUT
_new, _set = object.__new__, object.__setattr__


def assembled(model: type[_M], values: dict[str, Any], given: set[str]) -> _M:
    """A `model` (one with no private attributes, extra fields or post-init) of
    `values`, one for each of its fields in order, that need no validation: made by
    this package, or checked to be exactly of their fields' types. `given`: the fields
    set explicitly. What `model_construct` does, without its loop over the fields."""
    if not _BARE:
        return model.model_construct(given, **values)
    made: _M = _new(model)
    _set(made, "__dict__", values)
    _set(made, "__pydantic_fields_set__", given)
    _set(made, "__pydantic_extra__", None)
    _set(made, "__pydantic_private__", None)
    return made


class Observation(_Frozen):
    """One sighting of a result: when, and in which session."""

    # Built when first used, as the models below: a listing reads records only.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    at: AwareDatetime
    session: str | None = None


class Record(_Frozen):
    """One tool call as stored: what was asked, what came back (by hash), and when.

    Immutable once written. `tokens` is derived from the content and filled in lazily
    (counting is far slower than storing), so it may be None on a fresh record.
    """

    format: Literal[1] = 1
    id: str
    tool: str
    args: dict[str, Any]  # JSON values: made from canonical JSON, so not checked again
    key: str | None = None
    determinism: Determinism
    status: Status = Status.OK
    content_hash: str
    size: int
    media_type: str
    observed_at: AwareDatetime
    session: str | None = None
    tokens: int | None = Field(default=None, ge=0)  # a count: none below zero
    error: str | None = None
    outcome: Outcome | None = None
    idempotency_key: str | None = None
    # An Action's random part (32 hex): its id follows from it and the call, so that
    # an imported or stored Action's id can be checked like a result's.
    nonce: str | None = None
    max_age: timedelta | None = None
    meta: dict[str, Any] = Field(default_factory=dict)  # JSON values, from the adapter

    @model_validator(mode="after")
    def _read_only(self) -> Record:
        """Args and meta held as containers that refuse changes (`ReadOnly`), as the
        record's own fields do: a store hands one record to several reads of it."""
        fields = self.__dict__
        fields["args"], fields["meta"] = frozen(fields["args"]), frozen(fields["meta"])
        return self

    @property
    def is_action(self) -> bool:
        return self.determinism is Determinism.SIDE_EFFECT

    def derived_id(self) -> str | None:
        """The id this record's fields give (tool, args, key, content hash, and an
        Action's nonce), to check that it was not altered; None for an Action recorded
        without its nonce, whose id cannot be derived. `ArgumentError` if the args are
        not canonical JSON."""
        args = canonical_args(self.args)
        if not self.is_action:
            return result_id(self.tool, args, self.key, self.content_hash)
        if self.nonce is None:
            return None
        return action_id_of(self.tool, args, self.key, self.content_hash, self.nonce)


class Result(BaseModel):
    """What a wrapped call returns: the record and the exact payload bytes.

    `str(result)` is the content as text. After `replay(id, verify=True)`, `changed`
    says whether the new observation differs from the old one (`previous_id`).
    `repr(result)` is one short line: the id, tool and status, and the payload's first
    `REPR_BYTES` bytes and its size (a payload may be megabytes).
    """

    model_config = ConfigDict(
        frozen=True, ser_json_bytes="base64", val_json_bytes="base64", defer_build=True
    )
    __setattr__ = _unchanged

    record: Record
    payload: bytes
    replayed: bool = False
    changed: bool | None = None
    previous_id: str | None = None

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def ok(self) -> bool:
        return self.record.status is Status.OK

    @property
    def content(self) -> Any:
        """The payload as the tool gave it: str, bytes, or the decoded JSON value."""
        return decode_payload(self.payload, self.record.media_type)

    @property
    def text(self) -> str:
        """The payload as text, in the charset of its media type (UTF-8 when none is
        named), with undecodable bytes replaced."""
        return decode_text(self.payload, self.record.media_type)

    @property
    def tokens(self) -> int:
        """Tokens of the text, from the record when known, else counted now."""
        if self.record.tokens is not None:
            return self.record.tokens
        return count_tokens(self.text)

    def __str__(self) -> str:
        return self.text

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # What pydantic's repr (and rich's, devtools') show: not the whole record.
        yield "id", self.record.id
        yield "tool", self.record.tool
        yield "status", self.record.status.value
        yield "payload", _Cut(self.payload)
        if self.replayed:
            yield "replayed", True
        if self.changed is not None:
            yield "changed", self.changed


REPR_BYTES = 80  # of a payload, in the repr of a Result


class _Cut:
    """Bytes shown by their start and their size, not whole."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def __repr__(self) -> str:
        if len(self._data) <= REPR_BYTES:
            return repr(self._data)
        return f"{self._data[:REPR_BYTES]!r}… ({len(self._data):,} bytes)"


class Reference(_Frozen):
    """What stays in context for an evicted result that its key reproduces."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    kind: Literal["reference"] = "reference"
    id: str
    tool: str
    key: str
    gist: str
    tokens: int
    observed_at: AwareDatetime


class Claim(_Frozen):
    """What stays in context for an evicted result that cannot be reproduced."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    kind: Literal["claim"] = "claim"
    id: str
    tool: str
    text: str
    observed_at: AwareDatetime
    label: str = ""  # what was asked: the query, the command


def with_tokens(record: Record, tokens: int) -> Record:
    """`record` with its token count, as `model_copy(update=...)` gives it, without the
    Python around that: a record read with its count is made on every replay."""
    values = dict(record.__dict__)
    values["tokens"] = tokens
    return assembled(Record, values, record.model_fields_set | {"tokens"})


def count_tokens_of_new(record: Record, tokens: int) -> None:
    """Set the token count of a record just read, before anyone holds it: what
    `with_tokens` gives, without copying it (a record is read on every replay)."""
    record.__dict__["tokens"] = tokens
    record.__pydantic_fields_set__.add("tokens")


def stored_result(record: Record, payload: bytes, replayed: bool) -> Result:
    """The `Result` of a record this package made or read and its payload: built
    without validating them again when the payload is exactly `bytes`."""
    if type(payload) is not bytes:  # a bytes-like value: pydantic makes it bytes
        return Result(record=record, payload=payload, replayed=replayed)
    values = {
        "record": record,
        "payload": payload,
        "replayed": replayed,
        "changed": None,
        "previous_id": None,
    }
    given = {"record", "payload", "replayed"} if replayed else {"record", "payload"}
    return assembled(Result, values, given)
