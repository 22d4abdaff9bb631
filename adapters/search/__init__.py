"""Search and its backends: the adapter, which records each answer and every hit
(`adapter`); what a backend gives and is (`hits`); the embedded full-text index
(`index`); the remote backends over HTTP (`web`)."""

from .adapter import DEFAULT_LIMIT, DEFAULT_REUSE, HIT_TOOL, MAX_LIMIT, MAX_QUERY, Search
from .hits import Hit, SearchBackend
from .index import LocalIndex
from .web import BraveSearch, SearXNG

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_REUSE",
    "HIT_TOOL",
    "MAX_LIMIT",
    "MAX_QUERY",
    "BraveSearch",
    "Hit",
    "LocalIndex",
    "SearXNG",
    "Search",
    "SearchBackend",
]
