"""A function wrapped by `kit.tool`: its signature, its arguments as JSON, its schema."""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NamedTuple

from ._models import Determinism

KeyFn = Callable[..., str | None]


@dataclass(frozen=True)
class ToolSpec:
    """A wrapped tool: the callable and how its results can be recovered."""

    name: str
    fn: Callable[..., Any]
    determinism: Determinism
    key: KeyFn | None
    max_age: timedelta | None
    media_type: str | None
    signature: inspect.Signature
    description: str = ""

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    def bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments by parameter name, defaults applied."""
        names = self.positional_names
        if not kwargs and names is not None and len(args) == len(names):
            # The common case, all arguments given by position: no need for bind().
            return dict(zip(names, args, strict=True))
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    @functools.cached_property
    def positional_names(self) -> tuple[str, ...] | None:
        """The parameters' names when each can be given by position and none is variadic."""
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params = self.signature.parameters.values()
        return tuple(p.name for p in params) if all(p.kind in kinds for p in params) else None

    def unbind(self, arguments: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Positional and keyword arguments that repeat a recorded call."""
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        for p in self.signature.parameters.values():
            if p.name not in arguments:
                continue
            value = arguments[p.name]
            if p.kind is p.VAR_POSITIONAL:
                positional.extend(value)
            elif p.kind is p.VAR_KEYWORD:
                keywords.update(value)
            elif p.kind is p.KEYWORD_ONLY:
                keywords[p.name] = value
            else:
                positional.append(value)
        return positional, keywords

    @functools.cached_property
    def input_schema(self) -> dict[str, Any]:
        """A JSON Schema of the parameters, from their annotations."""
        try:
            hints = typing.get_type_hints(self.fn)
        except Exception:  # unresolvable annotations: describe the parameters untyped
            hints = {}
        properties: dict[str, Any] = {}
        required: list[str] = []
        for p in self.signature.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            properties[p.name] = _schema_of(hints.get(p.name, Any))
            if p.default is p.empty:
                required.append(p.name)
        return {"type": "object", "properties": properties, "required": required}


class Call(NamedTuple):
    """One call on its way to the store: the tool, its bound arguments and its key."""

    spec: ToolSpec
    arguments: dict[str, Any]
    args_json: bytes
    key: str | None


_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
    type(None): "null",
}


def _schema_of(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [_schema_of(a) for a in typing.get_args(hint)]
        types_ = [o["type"] for o in options if "type" in o]
        return {"type": types_} if len(types_) == len(options) else {}
    if origin is typing.Literal:
        return {"enum": list(typing.get_args(hint))}
    base = origin or hint
    name = _JSON_TYPES.get(base)
    if name is None:
        return {}
    if name == "array" and typing.get_args(hint):
        return {"type": "array", "items": _schema_of(typing.get_args(hint)[0])}
    return {"type": name}
