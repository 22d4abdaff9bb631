"""JSON values that refuse changes: a record's `args` and `meta`.

A `Record` is frozen, and so are the containers it holds: a `FrozenDict` is a `dict`
and a `FrozenList` a `list` to every reader (`isinstance`, `==`, `json.dumps`, pydantic),
but a change raises `ReadOnly`. So a record read once can be handed to every later read
of the same stored bytes (a store keeps the records it wrote and read parsed) without
one caller's change reaching another. `dict(value)` or `list(value)` is a copy that
changes.
"""

from __future__ import annotations

from typing import Any, NoReturn, SupportsIndex

from ._errors import ReadOnly


def _refused(*_: object, **__: object) -> NoReturn:
    raise ReadOnly(
        "a record's args and meta do not change once it is written; copy them "
        "(dict(...), list(...)) to change the copy"
    )


class FrozenDict(dict[str, Any]):
    """A `dict` that refuses changes (see the module)."""

    __slots__ = ()
    __setitem__ = __delitem__ = _refused
    clear = pop = popitem = setdefault = update = _refused

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refused()

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        # Copied and pickled through its constructor, not item by item.
        return FrozenDict, (dict(self),)

    def __repr__(self) -> str:
        return dict.__repr__(self)


class FrozenList(list[Any]):
    """A `list` that refuses changes (see the module)."""

    __slots__ = ()
    __setitem__ = __delitem__ = _refused
    append = extend = insert = pop = remove = clear = sort = reverse = _refused

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refused()

    def __imul__(self, other: SupportsIndex) -> NoReturn:
        _refused()

    def __reduce__(self) -> tuple[type[FrozenList], tuple[list[Any]]]:
        return FrozenList, (list(self),)

    def __repr__(self) -> str:
        return list.__repr__(self)


def frozen(value: Any) -> Any:
    """`value` with every dict and list in it made a `FrozenDict` or `FrozenList` (a
    frozen one is kept as is: what it holds was frozen when it was made)."""
    kind = type(value)
    if kind is dict:  # the usual case: a record's args and meta, often flat
        for item in value.values():
            if isinstance(item, (dict, list)):
                return FrozenDict({k: frozen(v) for k, v in value.items()})
        return FrozenDict(value)
    if kind is FrozenDict or kind is FrozenList:
        return value
    if isinstance(value, dict):
        return FrozenDict({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return FrozenList([frozen(v) for v in value])
    return value
