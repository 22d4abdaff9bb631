"""JSON values that refuse changes: a record's `args` and `meta`.

A `Record` is frozen, and so are the containers it holds: a `FrozenDict` is a `dict`
and a `FrozenList` a `list` to every reader (`isinstance`, `==`, `json.dumps`, pydantic),
but a change raises `ReadOnly`. So a record read once can be handed to every later read
of the same stored bytes (a store keeps the records it wrote and read parsed) without
one caller's change reaching another. `dict(value)` or `list(value)` is a copy that
changes.
"""

from __future__ import annotations

from collections.abc import Callable
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
    __init__ = __setitem__ = __delitem__ = _refused  # made by `_dict`, filled there
    clear = pop = popitem = setdefault = update = _refused

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refused()

    def __reduce__(self) -> tuple[Callable[[dict[str, Any]], FrozenDict], tuple[dict[str, Any]]]:
        # Copied and pickled through `_dict`, not item by item.
        return _dict, (dict(self),)

    def __repr__(self) -> str:
        return dict.__repr__(self)


class FrozenList(list[Any]):
    """A `list` that refuses changes (see the module)."""

    __slots__ = ()
    __init__ = __setitem__ = __delitem__ = _refused  # made by `_list`, filled there
    append = extend = insert = pop = remove = clear = sort = reverse = _refused

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refused()

    def __imul__(self, other: SupportsIndex) -> NoReturn:
        _refused()

    def __reduce__(self) -> tuple[Callable[[list[Any]], FrozenList], tuple[list[Any]]]:
        return _list, (list(self),)

    def __repr__(self) -> str:
        return list.__repr__(self)


def _dict(items: dict[str, Any]) -> FrozenDict:
    made: FrozenDict = dict.__new__(FrozenDict)
    dict.__init__(made, items)  # the one fill: FrozenDict's own __init__ refuses
    return made


def _list(items: list[Any]) -> FrozenList:
    made: FrozenList = list.__new__(FrozenList)
    list.__init__(made, items)
    return made


EMPTY = _dict({})


def frozen(value: Any) -> Any:
    """`value` with every dict and list in it made a `FrozenDict` or `FrozenList` (a
    frozen one is kept as is: what it holds was frozen when it was made)."""
    kind = type(value)
    if kind is dict:  # the usual case: a record's args and meta, often flat
        for item in value.values():
            if isinstance(item, (dict, list)):
                return _dict({k: frozen(v) for k, v in value.items()})
        return _dict(value)
    if kind is FrozenDict or kind is FrozenList:
        return value
    if isinstance(value, dict):
        return _dict({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return _list([frozen(v) for v in value])
    return value


def thawed(value: Any) -> Any:
    """A copy of `value` that changes: every dict and list in it plain again (what a
    user's function is given when a recorded call is run again)."""
    if isinstance(value, dict):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thawed(v) for v in value]
    return value
