"""What `kit.tool` makes of a user's function: the checks it passes before anything is
set up under its name, and the `ToolSpec` its calls run by."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from ..core.errors import ArgumentError
from ..core.ids import quoted
from ..core.records import Determinism
from ..recording.spec import KeyFn, ToolSpec, named_parameters
from .registry import ToolRegistry, check_argument_names

__all__ = ["function_spec"]


def function_spec(
    f: Callable[..., Any],
    *,
    name: str | None,
    determinism: Determinism,
    key: KeyFn | None,
    max_age: timedelta | None,
    media_type: str | None,
    namespace: dict[str, Any] | None,
    registry: ToolRegistry,
) -> ToolSpec:
    """The spec of `f` as a tool called `name` (its `__name__` without one), or
    `ArgumentError`: no name, a name `registry` already has, an argument's name the
    APIs refuse, or a method wrapped in its class's body."""
    called = name if name is not None else getattr(f, "__name__", None)
    if called is None:
        raise ArgumentError(f"{quoted(repr(f))} has no __name__: give the tool a name=")
    signature = inspect.signature(f)
    registry.check_free(called)  # before anything is set up under it
    check_argument_names(called, [p.name for p in named_parameters(signature)])
    if _unbound_method(f, signature):
        raise ArgumentError(
            f"{called!r} is a method in its class's body: its `self` is no "
            f"argument a model can give; wrap it bound (kit.tool(obj.{called})) "
            "or make it a staticmethod"
        )
    return ToolSpec(
        name=called,
        fn=f,
        determinism=determinism,
        key=key,
        max_age=max_age,
        media_type=media_type,
        signature=signature,
        description=inspect.getdoc(f) or "",
        namespace=namespace,
    )


def _unbound_method(f: Callable[..., Any], signature: inspect.Signature) -> bool:
    """Whether `f` is a function defined in a class's body whose first parameter is
    `self` or `cls`: wrapped there, it would be offered with that parameter."""
    first = next(iter(signature.parameters), None)
    parts = getattr(f, "__qualname__", "").split(".")
    return first in ("self", "cls") and len(parts) > 1 and parts[-2] != "<locals>"
