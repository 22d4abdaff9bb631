"""JSON values that refuse changes: a record's `args` and `meta`.

A `Record` is frozen, and so are the containers it holds: a `FrozenDict` is a `dict`
and a `FrozenList` a `list` to every reader (`isinstance`, `==`, `json.dumps`, pydantic),
but a change raises `ReadOnly`. So a record read once can be handed to every later read
of the same stored bytes (a store keeps the records it wrote and read parsed) without
one caller's change reaching another. `dict(value)` or `list(value)` is a copy that
changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn, SupportsIndex

from .errors import ReadOnly


def _refused(*_: object, **__: object) -> NoReturn:
    raise ReadOnly(
        "a record's args and meta do not change once it is written: change a copy "
        "(dict(...) and list(...) copy one level, json.loads(json.dumps(...)) all of them)"
    )


class FrozenDict(dict[str, Any]):
    """A `dict` that refuses changes (see the module)."""

    __slots__ = ()
    __setitem__ = __delitem__ = _refused
    clear = pop = popitem = setdefault = update = _refused

    def __new__(cls, *args: Any, **kwargs: Any) -> FrozenDict:
        made = dict.__new__(cls)
        dict.__init__(made, *args, **kwargs)  # filled once, here
        return made

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Filled by `__new__`; called again, it changes nothing (as a tuple's)."""

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refused()

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        # Copied and pickled through the constructor, not item by item.
        return FrozenDict, (dict(self),)

    def __repr__(self) -> str:
        return dict.__repr__(self)


class FrozenList(list[Any]):
    """A `list` that refuses changes (see the module)."""

    __slots__ = ()
    __setitem__ = __delitem__ = _refused
    append = extend = insert = pop = remove = clear = sort = reverse = _refused

    def __new__(cls, *args: Any) -> FrozenList:
        made = list.__new__(cls)
        list.__init__(made, *args)
        return made

    def __init__(self, *args: Any) -> None:
        """Filled by `__new__`; called again, it changes nothing."""

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refused()

    def __imul__(self, other: SupportsIndex) -> NoReturn:
        _refused()

    def __reduce__(self) -> tuple[type[FrozenList], tuple[list[Any]]]:
        return FrozenList, (list(self),)

    def __repr__(self) -> str:
        return list.__repr__(self)


def frozen_dict(items: Mapping[str, Any]) -> FrozenDict:
    """A `FrozenDict` of `items` as they are (their values frozen already, or scalars),
    made without the Python of its constructor."""
    made: FrozenDict = dict.__new__(FrozenDict)
    dict.__init__(made, items)
    return made


def _list(items: list[Any]) -> FrozenList:  # as `frozen_dict`
    made: FrozenList = list.__new__(FrozenList)
    list.__init__(made, items)
    return made


EMPTY = frozen_dict({})


def frozen(value: Any) -> Any:
    """`value` with every dict and list in it made a `FrozenDict` or `FrozenList` (a
    frozen one is kept as is: what it holds was frozen when it was made)."""
    kind = type(value)
    if kind is dict:  # the usual case: a record's args and meta, often flat
        for item in value.values():
            if isinstance(item, (dict, list)):
                return frozen_dict({k: frozen(v) for k, v in value.items()})
        return frozen_dict(value)
    if kind is FrozenDict or kind is FrozenList:
        return value
    if isinstance(value, dict):
        return frozen_dict({k: frozen(v) for k, v in value.items()})
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
