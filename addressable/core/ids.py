"""Canonical JSON, content hashes and result ids.

A result id is the first 64 bits of a blake3 hash over (tool, canonical arguments, key,
content hash), written as 16 lowercase hex characters. The same call that gives the
same content therefore gets the same id in any process on any machine. An Action gets a
fresh id for every attempt: a random nonce joins the hashed fields.

Like git, any unique prefix of at least `MIN_PREFIX` characters names a result.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import blake3

from .errors import ArgumentError, BadId

__all__ = [
    "ID_LENGTH",
    "MAX_DEPTH",
    "MIN_PREFIX",
    "action_id",
    "action_id_of",
    "canonical_args",
    "canonical_json",
    "check_id",
    "check_prefix",
    "content_hash",
    "listed",
    "lone_surrogate",
    "result_id",
    "whole_number",
]

ID_LENGTH = 16  # hex characters: 64 bits
MIN_PREFIX = 6  # shortest prefix that resolves
SHORT_ID = 8  # hex characters of an id a stub shows, at least
QUOTED_CHARS = 40  # characters of a typed value an error message quotes, at most
# Levels a value in a call's arguments may nest, the value itself the first and a scalar
# in it a level too: a record is written by pydantic, whose writer stops past 255. A
# deeper value is refused before the call runs, since its record could not be written.
MAX_DEPTH = 255
_HEX = re.compile(r"[0-9a-f]+")
_HEX_DIGITS = "0123456789abcdef"
_SCALARS = frozenset({str, int, bool, type(None)})  # floats are checked: NaN is not JSON
# JSON's scalars as Python gives them: values of these exact types are kept as given.
JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
# Bumped only if the hashed fields change; keeps ids of different schemes apart.
_SCHEME = b"addressable/id/1"


def canonical_json(value: object, *, name: str = "value", argument: bool = False) -> bytes:
    """Serialise `value` as canonical JSON: sorted keys, no spaces, UTF-8.

    Two equal values always give the same bytes. NaN and infinities, cycles, non-string
    keys, objects that are not JSON, nesting past Python's stack and integers too long
    to write raise `ArgumentError` naming where they sit, starting from `name`. With
    `argument=True`, `value` is one a record's arguments will hold: nested past
    `MAX_DEPTH` levels, it is refused as `canonical_args` refuses it.
    """
    too_deep = f"{name} nests lists and objects too deep to write"
    try:
        _check_json(value, name, set(), depth=1 if argument else 0, top=name)
    except RecursionError:
        raise ArgumentError(too_deep) from None
    try:
        return _dumps(value)
    except UnicodeEncodeError as exc:  # a lone surrogate: only looked for when one is there
        raise ArgumentError(lone_surrogate(value, name) or f"{name} is not UTF-8 text") from exc
    except RecursionError:
        raise ArgumentError(too_deep) from None
    except ValueError as exc:  # an integer past Python's limit on digits
        raise ArgumentError(_long_int(value, name) or f"{name}: {exc}") from None


def json_writer(*, sort_keys: bool) -> Callable[[object], str]:
    """Compact JSON (no spaces, Unicode as is, no NaN) with one encoder for every call
    (json.dumps builds one each time): the C one `json.JSONEncoder` runs, where there is
    one. It does not look for cycles: its callers have, first. `TypeError` for a value
    that is not JSON, `ValueError` for NaN."""
    encoder = json.JSONEncoder(
        sort_keys=sort_keys,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        check_circular=False,
    )
    make: Callable[..., Callable[[object, int], list[str]]] | None
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without json's C part
        return encoder.encode
    quote = json.encoder.encode_basestring
    run = make(None, encoder.default, quote, None, ":", ",", sort_keys, False, False)
    return lambda value: "".join(run(value, 0))


_ENCODE = json_writer(sort_keys=True)  # canonical: sorted keys


def _dumps(value: object) -> bytes:
    return _ENCODE(value).encode("utf-8")


def canonical_args(args: Mapping[str, object]) -> bytes:
    """Canonical JSON of a call's arguments, naming the offending argument on error. A
    value nested past `MAX_DEPTH` levels, which a record cannot hold, is refused too."""
    for arg_name, value in args.items():
        if not isinstance(arg_name, str):
            raise ArgumentError(
                f"an argument's name is {quoted(repr(arg_name))} of type "
                f"{type(arg_name).__name__}; names are strings"
            )
        if type(value) not in _SCALARS:  # scalars need no walk: the common case, kept fast
            where = f"argument {arg_name!r}"
            _check_json(value, where, set(), depth=1, top=where)
    try:
        return _ENCODE(args).encode("utf-8")  # `_dumps`, one call fewer: the hot path
    except UnicodeEncodeError as exc:
        for arg_name, value in args.items():
            found = lone_surrogate(arg_name, "an argument's name") or lone_surrogate(
                value, f"argument {arg_name!r}"
            )
            if found:
                raise ArgumentError(found) from exc
        raise ArgumentError(f"the arguments are not UTF-8 text: {exc}") from exc
    except ValueError as exc:  # an integer past Python's limit on digits
        for arg_name, value in args.items():
            found = _long_int(value, f"argument {arg_name!r}")
            if found:
                raise ArgumentError(found) from None
        raise ArgumentError(f"the arguments cannot be written as JSON: {exc}") from None


def _long_int(value: object, where: str) -> str | None:
    """Where `value` holds an integer too long for Python to write in digits (4,300 by
    default), said in one line; None when it holds none. Only the failure path calls
    this: it walks the whole value (without recursing: it may nest deep)."""
    limit = sys.get_int_max_str_digits()
    todo: list[tuple[object, str]] = [(value, where)]
    while todo:
        item, at = todo.pop()
        if isinstance(item, dict):
            todo.extend((v, f"{at}[{k!r}]") for k, v in reversed(item.items()))
        elif isinstance(item, list | tuple):
            todo.extend((v, f"{at}[{i}]") for i, v in reversed(list(enumerate(item))))
        # Past the limit in digits is past it in bits less a little: write it to know.
        elif isinstance(item, int) and limit and item.bit_length() > limit * 3:
            try:
                str(item)
            except ValueError:
                return f"{at} is an integer of more than {limit:,} digits, not written as JSON"
    return None


def lone_surrogate(value: object, where: str) -> str | None:
    """Where `value` (a str, or JSON made of lists and dicts) holds a lone surrogate, a
    code point Python strings allow but UTF-8 cannot encode, said in one line; None when
    it holds none. Only the failure path calls this: it walks the whole value."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return (
                f"{where} holds a lone surrogate ({value[exc.start]!r} at position "
                f"{exc.start}), which is not UTF-8 text"
            )
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            found = lone_surrogate(k, f"a key of {where}") or lone_surrogate(v, f"{where}[{k!r}]")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found = lone_surrogate(v, f"{where}[{i}]")
            if found:
                return found
    return None


def _check_json(value: object, where: str, active: set[int], depth: int = 0, top: str = "") -> None:
    """Raise `ArgumentError` for what JSON cannot hold in `value`, saying where; with
    `depth` (the value's own level, from 1) also for a value nested past `MAX_DEPTH`,
    named by `top` (the path to it would be hundreds of levels long)."""
    # json.dumps would report the same faults, but without saying where they are.
    if depth > MAX_DEPTH:
        raise ArgumentError(
            f"{top} nests lists and objects more than {MAX_DEPTH} levels deep, "
            "which a record cannot hold"
        )
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ArgumentError(f"{where} is {value!r}, which JSON cannot represent")
        return
    if isinstance(value, (list, tuple, dict)):
        if id(value) in active:
            raise ArgumentError(f"{where} contains itself (a cycle); JSON cannot represent it")
        active.add(id(value))
        inner = depth + 1 if depth else 0
        try:
            if isinstance(value, dict):
                for k, v in value.items():
                    if not isinstance(k, str):
                        raise ArgumentError(
                            f"{where} has the key {k!r} of type {type(k).__name__}; "
                            "JSON object keys must be strings"
                        )
                    _check_json(v, f"{where}[{k!r}]", active, inner, top)
            else:
                for i, v in enumerate(value):
                    _check_json(v, f"{where}[{i}]", active, inner, top)
        finally:
            active.discard(id(value))
        return
    raise ArgumentError(
        f"{where} is of type {type(value).__name__}, which is not JSON; "
        "pass str, int, float, bool, None, lists or dicts"
    )


def listed(values: Iterable[str], what: str = "ids") -> list[str]:
    """`values` as a list; `ArgumentError` for one str or bytes, whose characters would
    be read as the items (`pins="call_1"` pins no call)."""
    if isinstance(values, str | bytes):
        raise ArgumentError(
            f"give a list of {what}, not one {type(values).__name__}: [{values!r:.40}]"
        )
    try:
        return list(values)
    except TypeError:  # not iterable (None, a number): no list to read
        raise ArgumentError(f"give a list of {what}, not {type(values).__name__}") from None


def expect(value: object, kind: type | tuple[type, ...], what: str) -> None:
    """`ArgumentError` unless `value` is a `kind`: one line naming `what`, where Python
    would raise an AttributeError or a TypeError from deep inside."""
    if not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wanted = " or ".join(k.__name__ for k in kinds)
        raise ArgumentError(f"{what} must be a {wanted}, not {type(value).__name__}")


def whole_number(name: str, value: object, least: int) -> None:
    """`ArgumentError` unless `value` is an int (not a bool) of at least `least`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(f"{name} must be a whole number, got {value!r}")
    if value < least:
        raise ArgumentError(f"{name} must be at least {least}, got {value}")


def content_hash(data: bytes) -> str:
    """The blake3 hash of `data` as 64 hex characters."""
    return blake3.blake3(data).hexdigest()


def content_digest(data: bytes) -> bytes:
    """`content_hash` as its 32 bytes: quicker to make and to compare (a replay)."""
    return blake3.blake3(data).digest()


def result_id(tool: str, args_json: bytes, key: str | None, digest: str) -> str:
    """The stable id of a result: the same call with the same content, the same id."""
    return _derive(tool, args_json, key, digest, None)


def action_id(
    tool: str,
    args_json: bytes,
    key: str | None,
    digest: str,
    nonce: Callable[[], bytes] = lambda: os.urandom(16),
) -> str:
    """A fresh id for one attempt of a side effect; `nonce` is injectable for tests."""
    return action_id_of(tool, args_json, key, digest, nonce().hex())


def action_id_of(tool: str, args_json: bytes, key: str | None, digest: str, nonce: str) -> str:
    """The id of the attempt of a side effect whose random part is `nonce` (hex). The
    nonce is recorded with the Action, so that its id can be checked like a result's."""
    return _derive(tool, args_json, key, digest, nonce)


def _derive(tool: str, args_json: bytes, key: str | None, digest: str, nonce: str | None) -> str:
    # The lengths of all fields come first, and None is told apart from "", so that no
    # two different tuples of fields can hash the same material.
    # (The two optional fields are spelt out, not built by a helper: this runs on
    # every recorded call.)
    name, d = tool.encode(), digest.encode()
    k = b"\x00" if key is None else b"\x01" + key.encode("utf-8")
    n = b"\x00" if nonce is None else b"\x01" + nonce.encode("utf-8")
    lengths = _LENGTHS(len(name), len(args_json), len(k), len(d), len(n))
    material = b"".join((_SCHEME, lengths, name, args_json, k, d, n))
    return blake3.blake3(material).hexdigest(length=ID_LENGTH // 2)


_LENGTHS = struct.Struct(">5Q").pack


def read_args(args: Mapping[str, Any], args_json: bytes) -> dict[str, Any]:
    """A call's arguments as a reader of their canonical JSON (`args_json`) sees them:
    tuples become lists."""
    if all(type(v) in JSON_SCALARS for v in args.values()):
        return dict(args)  # already plain JSON values: no need to parse them back
    parsed: dict[str, Any] = json.loads(args_json)
    return parsed


def check_prefix(text: str) -> str:
    """Normalise an id or id prefix the user typed, or raise `BadId` saying why."""
    # A full id as ids are written, the common case: nothing to normalise. (`strip`
    # leaves nothing of a text made of hex digits alone; no regex, no copies.)
    if type(text) is str and len(text) == ID_LENGTH and not text.strip(_HEX_DIGITS):
        return text
    if not isinstance(text, str):
        raise BadId(f"a result id is a string, not {type(text).__name__}")
    candidate = text.strip().lower()
    if not candidate:
        raise BadId("empty result id: ids are 16 hex characters (a prefix of 6 or more resolves)")
    if not _HEX.fullmatch(candidate):
        raise BadId(
            f"{quoted(text)} is not a result id: ids are 16 hex characters 0-9a-f "
            "(a prefix of 6 or more resolves)"
        )
    if len(candidate) < MIN_PREFIX:
        raise BadId(f"id prefix {quoted(text)} is too short: give at least {MIN_PREFIX} characters")
    if len(candidate) > ID_LENGTH:
        raise BadId(
            f"{quoted(text)} is too long for a result id: ids are {ID_LENGTH} hex characters"
        )
    return candidate


def check_id(text: str) -> str:
    """Normalise a full id, or raise `BadId`."""
    candidate = check_prefix(text)
    if len(candidate) != ID_LENGTH:
        raise BadId(
            f"{quoted(text)} is a prefix, not a full result id of {ID_LENGTH} hex characters"
        )
    return candidate


def quoted(value: str) -> str:
    """`value` quoted for an error message, cut to its first `QUOTED_CHARS` characters:
    what a model or a user typed can be megabytes long, and an error is one short line."""
    if len(value) <= QUOTED_CHARS:
        return repr(value)
    return f"{value[:QUOTED_CHARS]!r}… ({len(value):,} characters)"
