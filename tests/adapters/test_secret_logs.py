"""What the HTTP clients log holds no credential: httpx logs every request's URL at INFO
(`HTTP Request: GET ...?key=...`) and httpcore every answer's headers at DEBUG, with a
secret the user allowed in a URL resolved, and a SearXNG key as written."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

import pytest

import addressable as ad
from addressable.adapters import Api, Fetch, Identity, Scope, Search, SearXNG
from tests.helpers.httpserver import LocalServer, Page, Reply


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def test_a_secret_allowed_in_a_url_is_masked_in_the_client_logs(
    kit: ad.Toolkit,
    server: LocalServer,
    secret_env: Callable[[str], str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = secret_env("MAPS_KEY")
    server.pages[f"/geo?q=x&key={key}"] = Page(b"ok", "text/plain")
    # A redirect within the origin, whose Location repeats the key (httpcore logs it).
    server.routes[("GET", "/old")] = lambda r: Reply(
        302, b"", {"Location": f"/geo?q=x&key={key}", "Content-Type": "text/plain"}
    )
    caplog.set_level(logging.DEBUG)
    fetch = Fetch(kit, allow_secrets=("MAPS_KEY",))
    fetch(server.url("/geo?q=x&key=secret:env:MAPS_KEY"))
    fetch(server.url("/old?key=secret:env:MAPS_KEY"))
    asyncio.run(fetch.aget(server.url("/geo?q=x&key=secret:env:MAPS_KEY")))
    api = Api(
        kit,
        identities=[Identity(name="me")],
        scope=Scope(origins=(server.url(),)),
        allow_secrets=("MAPS_KEY",),
    )
    api.get(server.url("/geo?q=x&key=secret:env:MAPS_KEY"), identity="me")
    requests = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert len(requests) == 5  # each request, the redirect's two
    assert all("key=[secret:env:MAPS_KEY]" in line for line in requests)
    assert key not in caplog.text
    assert any(
        "Location" in r.getMessage() for r in caplog.records if r.name.startswith("httpcore")
    )


def test_a_searxng_key_is_redacted_in_the_client_logs(
    kit: ad.Toolkit, server: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "k-5e1f7a9c"
    body = json.dumps({"results": [{"url": "https://a.example/1", "title": "A"}]}).encode()
    server.routes[("GET", "/searx/search")] = lambda r: Reply(
        200, body, {"Content-Type": "application/json"}
    )
    caplog.set_level(logging.INFO)
    Search(kit, SearXNG(server.url(f"/searx/?api_key={secret}&lang=en")))("lock")
    assert server.requests[-1].path.startswith(f"/searx/search?api_key={secret}&")  # sent
    (line,) = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert "/searx/search?api_key=[redacted]&lang=en&q=lock&format=json" in line
    assert secret not in caplog.text
