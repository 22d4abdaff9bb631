"""Adapters for the tool families an agent uses, installed as `addressable.adapters`.

Each adapter takes a `Toolkit`, is callable and returns `addressable.Result`; creating
one registers it with the kit, so that `kit.tools()` lists it and `kit.handle()` runs it.
"""

from ._base import Adapter, Identity
from .fetch import Fetch, ResponseTooLarge
from .files import Files
from .memory import Memory, MemoryCommandError
from .shell import Shell

__all__ = [
    "Adapter",
    "Fetch",
    "Files",
    "Identity",
    "Memory",
    "MemoryCommandError",
    "ResponseTooLarge",
    "Shell",
]
