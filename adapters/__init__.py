"""Adapters for the tool families an agent uses, installed as `addressable.adapters`.

Each adapter takes a `Toolkit`, is callable and returns `addressable.Result`.
"""

__all__: list[str] = []
