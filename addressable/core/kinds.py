"""The kinds a record is of, as plain values: how its result can be recovered, whether its
tool returned, and what is known of an Action's effect.

Apart from the records (`core.records`) so that what reads a record's stored JSON
without building it (a listing) can check its values without loading pydantic.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from .errors import ArgumentError
from .ids import quoted


class Determinism(StrEnum):
    """How a result can be recovered once it has left the context."""

    DETERMINISTIC = "deterministic"  # a function of its key: kept as a Reference
    NONDETERMINISTIC = "nondeterministic"  # cannot be reproduced: kept as a Claim
    SIDE_EFFECT = "side_effect"  # changed the world: an Action, never replayed


class Outcome(StrEnum):
    """What is known of an Action's effect. `unknown` is never guessed away."""

    COMPLETED = "completed"
    NOT_APPLIED = "not_applied"
    UNKNOWN = "unknown"


class Status(StrEnum):
    """Whether the tool returned (`ok`) or raised (`error`)."""

    OK = "ok"
    ERROR = "error"


_E = TypeVar("_E", bound=StrEnum)


def member(kind: type[_E], value: object, what: str) -> _E:
    """`value` as a member of `kind` (given as one, or by its value), else an
    `ArgumentError` in one line naming `what` and listing the values it takes."""
    if isinstance(value, kind):
        return value
    try:
        return kind(value)  # type: ignore[arg-type]  # any value: refused below if not one
    except (ValueError, TypeError):
        takes = ", ".join(m.value for m in kind)
        shown = quoted(value) if isinstance(value, str) else type(value).__name__
        raise ArgumentError(f"{what} is one of {takes}, not {shown}") from None
