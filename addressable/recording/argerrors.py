"""How a tool's arguments that do not fit are told, one line for all of them, whatever
the tool (a wrapped function, an adapter): ``TOOL: argument 'NAME' is required; ...``."""

from __future__ import annotations

import reprlib
import sys
from collections.abc import Collection, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..core.errors import ArgumentError
from ..core.ids import QUOTED_CHARS

_SHOWN_ERRORS = 5  # validation errors named in one message; the rest are counted


def argument_error(
    tool: str,
    exc: ValidationError,
    takes: Sequence[str],
    *,
    left_out: Collection[str] = (),
    positions_only: bool = False,
    of: str = "this tool",
) -> ArgumentError:
    """The one line that names each argument of `tool` that does not fit, and why:
    ``TOOL: argument 'NAME' is required; argument 'OTHER' does not fit: ...``, as
    `kit.handle` answers a model whatever the tool (a wrapped function, an adapter).
    `takes`: the arguments the tool takes. `left_out`: those given as `null`, which
    stands for an argument left out (one that is required is said to be). With
    `positions_only`, a place inside an argument is named by its list positions alone
    (not by the tags pydantic adds for each member of a union). `of`: what takes them,
    as a refused extra argument names it."""
    said: list[str] = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        inner = tuple(p for p in loc[1:] if type(p) is int) if positions_only else loc[1:]
        kind, msg = error["type"], one_line(error["msg"].removeprefix("Value error, "))
        if not loc:  # the arguments as a whole
            text = f"the arguments do not fit: {msg}"
        elif loc[0] in left_out:
            text = problem(_short(loc[0]), "is required")
        elif kind == "missing":
            text = problem(".".join(_short(p) for p in loc), "is required")
        elif kind == "extra_forbidden" and len(loc) == 1:
            text = problem(_short(loc[0]), not_taken(takes, of))
        else:
            got = _got(error["input"]) if "input" in error else ""
            where = ".".join(_short(p) for p in loc[:1] + inner)
            text = problem(where, f"does not fit: {msg}{got}")
        if text not in said:  # a null tried against each member of a union, say
            said.append(text)
    more = len(said) - _SHOWN_ERRORS
    shown = said[:_SHOWN_ERRORS] + ([f"and {more} more"] if more > 0 else [])
    return ArgumentError(f"{tool}: {'; '.join(shown)}")


def problem(where: str, what: str) -> str:
    """What is wrong with one argument (or a place inside it), as `argument_error` says
    it: ``argument 'NAME' WHAT``."""
    return f"argument {where!r} {what}"


def not_taken(takes: Sequence[str], of: str = "this tool") -> str:
    """Why an argument no parameter names is refused, listing those `of` takes."""
    return f"is not an argument of {of} (it takes: {', '.join(takes) or 'none'})"


def _got(value: object) -> str:
    """The value given, short: a scalar itself, anything else by its type."""
    if value is None or isinstance(value, str | int | float | bool):
        return f" (got {shown(value)})"
    return f" (got a {type(value).__name__})"


def shown(value: object) -> str:
    """`value` written short for a message (reprlib's way), even one holding an int past
    the digits Python writes out, which `repr` refuses with a `ValueError`."""
    try:
        return reprlib.repr(value)
    except ValueError:
        holding = "" if isinstance(value, int) else f"a {type(value).__name__} holding "
        return f"{holding}an integer of too many digits to show"


def one_line(text: object) -> str:
    """`text` on one line, its runs of white space one space."""
    return " ".join(str(text).split())


def _short(part: object) -> str:
    """A place in the arguments (a name, a key, an index) as one short piece of a line."""
    text = one_line(part) if str(part).strip() else repr(str(part))
    return text if len(text) <= QUOTED_CHARS else f"{text[:QUOTED_CHARS]}…"


class CheckedModel(BaseModel):
    """A model a user builds by hand (an identity, a scope): a value that does not fit,
    or a field it does not have (a misspelt `origin=` would otherwise be dropped, and
    the limit with it), is a one-line `ArgumentError` naming the model and each field,
    as a tool's arguments are told, not pydantic's `ValidationError` of several lines.
    Within another model's validation (a part of a document, or `model_validate` of
    what a model answered), pydantic's own error stands, with its places."""

    model_config = ConfigDict(extra="forbid")

    def __init__(self, /, **data: Any) -> None:
        if _called_by_pydantic():
            super().__init__(**data)
            return
        try:
            super().__init__(**data)
        except ValidationError as exc:
            name, fields = type(self).__name__, tuple(type(self).model_fields)
            raise argument_error(name, exc, fields, of=name) from None


def _called_by_pydantic() -> bool:
    """Whether the `__init__` asking was called by pydantic, not by a user: pydantic
    calls a model's own `__init__` for the parts of a larger model it validates, and in
    `model_validate`, where its error, with the parts' places, is the one to raise."""
    caller = sys._getframe(2)  # 0: this function, 1: `__init__`, 2: who called it
    return str(caller.f_globals.get("__name__", "")).startswith("pydantic")
