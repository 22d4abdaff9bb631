"""Remote search backends over httpx: SearXNG's JSON API and Brave Search's web API."""

from __future__ import annotations

from typing import Any

import httpx

import addressable as ad

from .search import Hit

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"


class SearXNG:
    """A SearXNG instance's JSON API (``/search?format=json``; the instance must allow
    the json format)."""

    name = "searxng"

    def __init__(
        self, base_url: str, *, client: httpx.Client | None = None, timeout: float = 20.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = client or httpx.Client(timeout=timeout)

    def search(self, query: str, limit: int) -> list[Hit]:
        response = self._client.get(
            f"{self.base_url}/search", params={"q": query, "format": "json"}
        )
        response.raise_for_status()
        results: list[dict[str, Any]] = response.json().get("results", [])
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


class BraveSearch:
    """Brave Search's web search API; `api_key` is a secret reference, resolved only
    when a request is sent."""

    name = "brave"

    def __init__(
        self,
        secrets: ad.Secrets,
        api_key: str = "secret:env:BRAVE_API_KEY",
        *,
        client: httpx.Client | None = None,
        timeout: float = 20.0,
    ) -> None:
        self._secrets = secrets
        self.api_key = api_key
        self._client = client or httpx.Client(timeout=timeout)

    def search(self, query: str, limit: int) -> list[Hit]:
        headers = {
            "Accept": "application/json",
            "X-Subscription-Token": self._secrets.resolve(self.api_key),
        }
        response = self._client.get(
            BRAVE_URL, params={"q": query, "count": min(limit, 20)}, headers=headers
        )
        response.raise_for_status()
        results: list[dict[str, Any]] = response.json().get("web", {}).get("results", [])
        return [
            Hit(
                title=str(r.get("title", "")),
                url=str(r["url"]),
                snippet=str(r.get("description") or ""),
            )
            for r in results[:limit]
            if r.get("url")
        ]
