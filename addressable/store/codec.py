"""How a record, a sighting and a pin are stored as bytes, and read back.

A record is checked two ways. Its id follows from its tool, args, key and content hash
(`Record.derived_id`; an Action's id joins the nonce recorded with it), and the
stored JSON carries a checksum of all its fields, the others included (media type,
size, determinism, session, times, outcome, meta), so that a record changed after it was
written is refused rather than served (`store.frame`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..core.errors import ArgumentError
from ..core.frozen import EMPTY, frozen, frozen_dict
from ..core.ids import JSON_SCALARS, json_writer
from ..core.payload import TEXT
from ..core.records import (
    Determinism,
    Observation,
    Outcome,
    Record,
    Status,
    assembled,
    count_tokens_of_new,
)
from .frame import _Damaged, framed, unframed
from .models import Pin


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
    return framed(body)


# JSON as pydantic writes it: strings escaped alike, values in their own order (the C
# encoder `json` runs; `TypeError` for a value that is not JSON). No check for cycles:
# `_plain` walks a value first.
_string = json.encoder.encode_basestring
_JSON = json_writer(sort_keys=False)
_DURATION = TypeAdapter(timedelta)
# What `Record.model_validate_json` calls, called directly: a record is read on every
# replay.
_VALIDATE = Record.__pydantic_validator__.validate_json
_MINUTE = timedelta(minutes=1)
# The fields set on a record the recorder validates (its `model_fields_set`), but for
# the options it is given.
_GIVEN = frozenset(
    {"id", "tool", "args", "key", "determinism", "content_hash", "size"}
    | {"media_type", "observed_at", "session"}
)


# A new record's own fields: id, tool, args (and their canonical JSON), key,
# determinism, content hash, size and time; its session, nonce and options come apart.
NewFields = tuple[str, str, Mapping[str, Any], bytes, str | None, Determinism, str, int, datetime]


def new_record(
    fields: NewFields, session: str | None, nonce: str | None, options: Mapping[str, Any]
) -> tuple[Record, bytes] | None:
    """A new record and the bytes it is stored as, made in one pass without pydantic.

    The bytes are what `dump_record` gives, except that floats are spelt as Python
    writes them (they read back the same). Nothing is validated again: the id, hashes,
    size and nonce are the recorder's, the args canonical JSON, and the other fields
    are checked here to be exactly of the types their fields take. None when one is
    not (a str subclass, a timedelta given as seconds, meta that is not plain JSON,
    ...): the caller then validates the record, which converts such a value or says
    why it cannot be stored.
    """
    rid, tool, args, args_json, key, determinism, digest, size, at = fields
    get = options.get
    media_type, status = get("media_type"), get("status")
    if media_type is None:
        media_type = TEXT
    given = set(_GIVEN)
    if status is None:
        status = Status.OK
    else:
        given.add("status")
    if (
        type(tool) is not str
        or type(media_type) is not str
        or type(status) is not Status
        or (key is not None and type(key) is not str)
        or (session is not None and type(session) is not str)
        or type(at) is not datetime
    ):
        return None
    values: dict[str, Any] = {
        "format": 1,
        "id": rid,
        "tool": tool,
        "args": None,
        "key": key,
        "determinism": determinism,
        "status": status,
        "content_hash": digest,
        "size": size,
        "media_type": media_type,
        "observed_at": at,
        "session": session,
        "tokens": None,
        "error": None,
        "outcome": None,
        "idempotency_key": None,
        "nonce": nonce,
        "max_age": None,
        "meta": EMPTY,
    }
    try:
        when = _time(at)
        if when is None:
            return None
        # `ids.read_args`, with the checks this writer needs, in one pass over the args.
        for name, value in args.items():
            if type(value) not in JSON_SCALARS:  # as read back from canonical JSON: sorted
                text = args_json.decode()
                loaded = json.loads(text)
                if not _plain(loaded):  # nested deeper than is written here
                    return None
                values["args"] = frozen(loaded)
                break
            if type(name) is not str:
                return None
        else:  # scalars, as given: in their order
            text = args_json.decode() if len(args) < 2 else _JSON(args)
            values["args"] = frozen_dict(args)  # scalars: nothing nested to freeze
        tail: str | None = ',"meta":{}}'
        if (
            nonce is not None
            or get("error") is not None
            or get("outcome") is not None
            or get("idempotency_key") is not None
            or get("max_age") is not None
            or get("meta") is not None
        ):
            tail = _tail(options, nonce, values, given)
            if tail is None:
                return None
        keyed = "" if key is None else ',"key":' + _string(key)
        seen = "" if session is None else ',"session":' + _string(session)
        body = (
            f'{{"format":1,"id":"{rid}","tool":{_string(tool)},"args":{text}{keyed},'
            f'"determinism":"{determinism}","status":"{status}",'
            f'"content_hash":"{digest}","size":{size},"media_type":{_string(media_type)},'
            f'"observed_at":"{when}"{seen}{tail}'
        ).encode()
    except (TypeError, ValueError, RecursionError):  # not JSON (UnicodeError included)
        return None
    return assembled(Record, values, given), framed(body)


def _tail(
    options: Mapping[str, Any], nonce: str | None, values: dict[str, Any], given: set[str]
) -> str | None:
    """The fields after the session, as pydantic writes them, put in `values` and
    `given` too; None if one is not of its field's type."""
    parts = []
    for name in ("error", "outcome", "idempotency_key"):
        value = options.get(name)
        if value is not None:
            if type(value) is not (Outcome if name == "outcome" else str):
                return None
            parts.append(f',"{name}":{_string(value)}')
            values[name] = value
            given.add(name)
    if nonce is not None:
        parts.append(f',"nonce":"{nonce}"')
        given.add("nonce")
    max_age, meta = options.get("max_age"), options.get("meta")
    if max_age is not None:
        if type(max_age) is not timedelta:
            return None
        parts.append(f',"max_age":{_DURATION.dump_json(max_age).decode()}')
        values["max_age"] = max_age
        given.add("max_age")
    if meta is None:
        parts.append(',"meta":{}}')
    elif type(meta) is dict and _plain(meta):
        parts.append(f',"meta":{_JSON(meta)}}}')
        values["meta"] = frozen(meta)
        given.add("meta")
    else:
        return None
    return "".join(parts)


def _time(at: datetime) -> str | None:
    """An aware time as pydantic writes it; None for an offset with seconds, which
    pydantic drops."""
    if at.tzinfo is UTC:  # the common case, without working out the offset
        return at.isoformat()[:-6] + "Z"
    offset = at.utcoffset()
    if offset is None or offset % _MINUTE:
        return None
    return at.isoformat()[:-6] + "Z" if not offset else at.isoformat()


# Nesting written here: deeper values go through pydantic, whose writer has a limit of
# its own (a record it cannot write could not be exported).
_DEEPEST = 64


def _plain(value: object, depth: int = 0) -> bool:
    """Whether `value` is made of JSON's own types only (no subclass, no tuple), nested
    at most `_DEEPEST` levels."""
    if type(value) is dict:
        return depth < _DEEPEST and all(
            type(k) is str and _plain(v, depth + 1) for k, v in value.items()
        )
    if type(value) is list:
        return depth < _DEEPEST and all(_plain(v, depth + 1) for v in value)
    return type(value) in JSON_SCALARS


def load_pin(raw: bytes) -> Pin:
    """A pin as stored; one that cannot be read is kept as a user pin."""
    try:
        return Pin.model_validate_json(raw)
    except ValidationError:
        return Pin()  # unreadable: kept, as a user pin keeps it


def load_record(record_id: str, raw: bytes, tokens: bytes | None = None) -> Record:
    """The record stored under `record_id`, checked: `_Damaged` if it cannot be given
    back as written. `tokens`: its payload's token count as stored beside it, if read
    with it."""
    body = unframed(record_id, raw)
    try:
        record: Record = _VALIDATE(body)
    except ValueError as exc:  # ValidationError included
        # A rare path, kept off the fast one: JSON nested deeper than pydantic's own
        # parser goes (its writer goes deeper), read by `json`.
        record = _load_slowly(record_id, body, exc)
    if record.id != record_id:
        raise _Damaged(
            f"the record stored under {record_id} names another id, {record.id}", "altered"
        )
    if tokens is not None:  # the record is new and not yet shared: set, not copied
        count_tokens_of_new(record, int(tokens))
    return record


def _load_slowly(record_id: str, body: bytes, first: ValueError) -> Record:
    try:
        return Record.model_validate(json.loads(body))
    except (ValueError, RecursionError):
        raise _Damaged(
            f"the record of result {record_id} is unreadable: {one_line(first)}", "unreadable"
        ) from first


def load_observation(record_id: str, raw: bytes) -> Observation:
    """A later sighting of a record as stored; `_Damaged` if it cannot be read."""
    try:
        return Observation.model_validate_json(raw)
    except ValueError as exc:
        raise _Damaged(
            f"an observation of result {record_id} is unreadable: {one_line(exc)}",
            "unreadable",
        ) from exc


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
