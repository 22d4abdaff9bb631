"""A module imported when one of its names is first used.

For a module that a command may never need, when importing it is most of the time that
command takes: the store needs pydantic to build records, a listing does not. Import
the module itself under `TYPE_CHECKING`, so that the names are checked as usual.
"""

from __future__ import annotations

import importlib
from typing import Any


class Later:
    """Stands for the module `name`, and imports it when a name of it is first asked."""

    def __init__(self, name: str) -> None:
        self.__name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(importlib.import_module(self.__name), attribute)
        setattr(self, attribute, value)  # found directly from then on, as a module's are
        return value

    def __repr__(self) -> str:
        return f"<module {self.__name!r}, imported when first used>"
