"""Adapters for the tool families an agent uses, installed as `addressable.adapters`.

Each adapter takes a `Toolkit`, is callable and returns `addressable.Result`; creating
one registers it with the kit, so that `kit.tools()` lists it and `kit.handle()` runs it.
"""

from ._base import Adapter, Identity
from ._decode import BadAnswer
from ._hits import Hit, SearchBackend
from ._html import html_title, html_to_text
from ._http import ResponseTooLarge
from ._rootfs import BadPath, PartlyChanged
from ._searchindex import LocalIndex
from ._websearch import BraveSearch, SearXNG
from .api import Api, Scope
from .fetch import Fetch
from .files import Files
from .memory import Memory, MemoryCommandError
from .search import Search
from .shell import Shell

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
