"""A call whose fields cannot be stored, recorded all the same: every field made
storable (JSON values, UTF-8 text), and the error that names the record made."""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from ..core.errors import ArgumentError
from ..core.ids import canonical_args
from ..core.payload import TEXT
from ..core.records import Determinism, Outcome, Result, Status


class Write(Protocol):
    """The recorder's `write`: one record stored, its fields as `RecordOptions`."""

    def __call__(
        self,
        tool: str,
        args: Mapping[str, Any],
        args_json: bytes,
        payload: bytes,
        determinism: Determinism | str,
        options: Any,
        *,
        at: datetime | None = None,
    ) -> Result: ...


def record_unstored(
    write: Write,
    now: Callable[[], datetime],
    tool: str,
    args: Mapping[str, Any],
    payload: bytes | None,
    determinism: Determinism | str,
    options: Mapping[str, Any],
    exc: Exception,
    what: str,
) -> ArgumentError:
    """Record at the time `now` gives, through `write`, a call whose `what` cannot be stored: as an
    error (an action with outcome `unknown`) with every field made storable; and return
    the error for the caller to raise, naming that record (or why there is none)."""
    detail = describe(exc)
    action = determinism == Determinism.SIDE_EFFECT
    error = f"{type(exc).__name__}: {what} could not be stored: {detail}"
    meta, max_age = options.get("meta"), options.get("max_age")
    media_type = options.get("media_type") if payload is not None else None
    fields: dict[str, Any] = {
        "key": storable_text(options.get("key")),
        "media_type": storable_text(media_type) or TEXT,
        "status": Status.ERROR,
        "error": error,
        "outcome": Outcome.UNKNOWN if action else None,
        "idempotency_key": storable_text(options.get("idempotency_key")),
        "max_age": max_age if isinstance(max_age, timedelta) else None,
        "meta": storable(meta) if isinstance(meta, Mapping) else None,
    }
    safe_args: dict[str, Any] = storable(args) if isinstance(args, Mapping) else {}
    body = error.encode("utf-8") if payload is None else payload
    at = now()
    try:
        result = write(
            escaped(str(tool)),
            safe_args,
            canonical_args(safe_args),
            body,
            determinism,
            fields,
            at=at,
        )
    except Exception as again:
        return ArgumentError(
            f"{tool!r}: {what} could not be stored ({detail}), "
            f"nor could a record of the call ({describe(again)})"
        )
    ran = "the action ran and is" if action else "the call ran and is"
    status = "status error, outcome unknown" if action else "status error"
    return ArgumentError(
        f"{tool!r}: {what} could not be stored ({detail}); {ran} recorded as {result.id} ({status})"
    )


def describe(exc: BaseException) -> str:
    """An exception's message on one line, whatever its text holds."""
    return escaped(" ".join(message(exc).split()))


def message(exc: BaseException) -> str:
    """`str(exc)`, or what stands for it when making it raises (a tool's own class)."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose message cannot be shown>"


def escaped(text: str) -> str:
    """`text` with any lone surrogate written as its escape (\\ud800), so it is UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def storable_text(value: object) -> str | None:
    """`value` as UTF-8 text (its repr if it is not a string); None stays None."""
    if value is None:
        return None
    return escaped(value if isinstance(value, str) else repr(value))


def storable(value: Any, depth: int = 0) -> Any:
    """A JSON value that stands for `value`: what is not JSON (objects, NaN, lone
    surrogates, non-string keys, cycles) is written as its text."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return escaped(value)
    if depth < 32 and isinstance(value, Mapping):
        return {escaped(str(k)): storable(v, depth + 1) for k, v in value.items()}
    if depth < 32 and isinstance(value, list | tuple):
        return [storable(v, depth + 1) for v in value]
    return escaped(reprlib.repr(value))
