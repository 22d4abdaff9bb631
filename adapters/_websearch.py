"""Remote search backends over HTTP: SearXNG's JSON API and Brave Search's web API.

Each takes a sync `client=` and an `async_client=` (httpx or httpx2). `search` uses the
sync one, `asearch` (which `Search` awaits from `kit.ahandle`) the async one; with only
a sync client given, `asearch` uses that one, in a thread, never a client of its own that
would bypass its transport, proxy or mock.
"""

from __future__ import annotations

import asyncio
from typing import Any

import addressable as ad

from ._hits import Hit
from ._http import AsyncClient, Clients, SyncClient

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"


class _Remote:
    """A remote backend: its clients given, else made only when needed (`Clients`)."""

    name: str

    def __init__(
        self, client: SyncClient | None, async_client: AsyncClient | None, timeout: float
    ) -> None:
        self._clients = Clients(client, async_client, timeout)

    def _request(self, client: SyncClient | AsyncClient, query: str, limit: int) -> Any:
        raise NotImplementedError

    def _hits(self, data: dict[str, Any], limit: int) -> list[Hit]:
        raise NotImplementedError

    def search(self, query: str, limit: int) -> list[Hit]:
        client = self._clients.sync()
        response = client.send(self._request(client, query, limit))
        response.raise_for_status()
        return self._hits(response.json(), limit)

    async def asearch(self, query: str, limit: int) -> list[Hit]:
        """`search` from async code, through the async client."""
        if self._clients.sync_only:
            return await asyncio.to_thread(self.search, query, limit)
        client = self._clients.asynchronous()
        response = await client.send(self._request(client, query, limit))
        response.raise_for_status()
        return self._hits(response.json(), limit)


class SearXNG(_Remote):
    """A SearXNG instance's JSON API (``/search?format=json``; the instance must allow
    the json format)."""

    name = "searxng"

    def __init__(
        self,
        base_url: str,
        *,
        client: SyncClient | None = None,
        async_client: AsyncClient | None = None,
        timeout: float = 20.0,
    ) -> None:
        super().__init__(client, async_client, timeout)
        self.base_url = base_url.rstrip("/")

    def _request(self, client: SyncClient | AsyncClient, query: str, limit: int) -> Any:
        return client.build_request(
            "GET", f"{self.base_url}/search", params={"q": query, "format": "json"}
        )

    def _hits(self, data: dict[str, Any], limit: int) -> list[Hit]:
        results: list[dict[str, Any]] = data.get("results", [])
        return [
            Hit(
                title=str(r.get("title", "")),
                url=str(r["url"]),
                snippet=str(r.get("content") or ""),
                score=r.get("score"),
            )
            for r in results[:limit]
            if r.get("url")
        ]


class BraveSearch(_Remote):
    """Brave Search's web search API; `api_key` is a secret reference, resolved only
    when a request is sent."""

    name = "brave"

    def __init__(
        self,
        secrets: ad.Secrets,
        api_key: str = "secret:env:BRAVE_API_KEY",
        *,
        client: SyncClient | None = None,
        async_client: AsyncClient | None = None,
        timeout: float = 20.0,
    ) -> None:
        super().__init__(client, async_client, timeout)
        self._secrets = secrets
        self.api_key = api_key

    def _request(self, client: SyncClient | AsyncClient, query: str, limit: int) -> Any:
        headers = {
            "Accept": "application/json",
            "X-Subscription-Token": self._secrets.resolve(self.api_key),
        }
        return client.build_request(
            "GET", BRAVE_URL, params={"q": query, "count": min(limit, 20)}, headers=headers
        )

    def _hits(self, data: dict[str, Any], limit: int) -> list[Hit]:
        results: list[dict[str, Any]] = data.get("web", {}).get("results", [])
        return [
            Hit(
                title=str(r.get("title", "")),
                url=str(r["url"]),
                snippet=str(r.get("description") or ""),
            )
            for r in results[:limit]
            if r.get("url")
        ]
