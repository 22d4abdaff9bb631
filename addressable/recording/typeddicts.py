"""`typing.TypedDict` annotations as pydantic reads them on Python 3.11.

Before 3.12, pydantic takes only `typing_extensions.TypedDict`, and a parameter typed
with `typing.TypedDict` would be left untyped: no schema for the model, no check of what
it sends. Such a class is remade, once, as the same `typing_extensions.TypedDict`: the
same keys, the same required ones, nested ones and those inside other types too.
"""

from __future__ import annotations

import sys
import typing
import weakref
from typing import Any

import typing_extensions

_MADE: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # class -> remade


def readable(hint: Any) -> Any:
    """`hint`, with every `typing.TypedDict` in it remade for pydantic where it needs
    that (before Python 3.12); `hint` itself when there is none."""
    if sys.version_info >= (3, 12):
        return hint
    return _remade(hint, 0)


_DEEPEST = 20  # nesting of types looked into


def _remade(hint: Any, depth: int) -> Any:
    if depth > _DEEPEST:
        return hint
    if typing.is_typeddict(hint) and type(hint).__module__ == "typing":
        return _typed_dict(hint, depth)
    args = typing.get_args(hint)
    if not args:
        return hint
    if typing.get_origin(hint) is typing.Annotated:
        inner = _remade(args[0], depth + 1)
        return hint if inner is args[0] else typing.Annotated[(inner, *hint.__metadata__)]
    if typing.get_origin(hint) is typing.Literal:
        return hint
    remade = tuple(_remade(a, depth + 1) for a in args)
    if all(new is old for new, old in zip(remade, args, strict=True)):
        return hint
    try:
        return hint.copy_with(remade)  # typing's aliases: List[X], Union[...], Optional
    except AttributeError:
        pass
    try:
        return typing.get_origin(hint)[remade]  # list[X], dict[K, V], X | Y
    except TypeError:
        return hint  # a form that cannot be rebuilt: left as it was


def _typed_dict(cls: Any, depth: int) -> Any:
    made = _MADE.get(cls)
    if made is None:
        hints = typing.get_type_hints(cls, include_extras=True)
        required = getattr(cls, "__required_keys__", frozenset(hints))
        fields = {
            key: (
                typing_extensions.Required[_remade(value, depth + 1)]
                if key in required
                else typing_extensions.NotRequired[_remade(value, depth + 1)]
            )
            for key, value in hints.items()
        }
        # The functional form, as a call: its name is known only at run time.
        make: Any = typing_extensions.TypedDict
        made = make(cls.__name__, fields)
        made.__doc__ = cls.__doc__
        _MADE[cls] = made
    return made
