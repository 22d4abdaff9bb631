"""Adapters for the tool families an agent uses, installed as `addressable.adapters`.

Each adapter takes a `Toolkit`, is callable and returns `addressable.Result`; creating
one registers it with the kit, so that `kit.tools()` lists it and `kit.handle()` runs it.
"""

from addressable.core.html import html_title

from ._base import Adapter, Identity
from ._http import BadAnswer, ResponseTooLarge
from ._rootfs import BadPath, PartlyChanged
from .api import Api, Scope
from .fetch import Fetch, html_to_text
from .files import Files
from .memory import Memory, MemoryCommandError
from .search import BraveSearch, Hit, LocalIndex, Search, SearchBackend, SearXNG
from .shell import NoSandbox, Shell

__all__ = [
    "Adapter",
    "Api",
    "BadAnswer",
    "BadPath",
    "BraveSearch",
    "Fetch",
    "Files",
    "Hit",
    "Identity",
    "LocalIndex",
    "Memory",
    "MemoryCommandError",
    "NoSandbox",
    "PartlyChanged",
    "ResponseTooLarge",
    "Scope",
    "SearXNG",
    "Search",
    "SearchBackend",
    "Shell",
    "html_title",
    "html_to_text",
]
