"""What a search backend gives and is: the types the search adapter and every backend
share, in a module of their own so that a backend need not import the adapter (which
makes a `LocalIndex` when it is given no backend)."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel


class Hit(BaseModel):
    """One search result: where, what it is called, and the text around the match."""

    title: str
    url: str
    snippet: str = ""
    score: float | None = None


class SearchBackend(Protocol):
    """Where queries go: a name (recorded with every query) and one method. A backend
    may have `async def asearch(query, limit)` too, which `kit.ahandle` awaits."""

    name: str

    def search(self, query: str, limit: int) -> list[Hit]: ...
