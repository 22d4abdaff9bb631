"""`kit.ahandle` through each adapter's async path: the async client injected (httpx or
httpx2) is the one that sends, and no other client is made."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest

import addressable as ad
from addressable.adapters import Api, BraveSearch, Fetch, Identity, Scope, Search, SearXNG
from tests.helpers.httpserver import LocalServer, Page, Reply

ORIGIN = "https://api.invalid"
BOT = Identity(name="bot", headers={"Authorization": "Bearer secret:env:BOT_TOKEN"})


@pytest.fixture
def kit(disk_kit: ad.Toolkit, monkeypatch: pytest.MonkeyPatch) -> ad.Toolkit:
    monkeypatch.setenv("BOT_TOKEN", "tok-123")
    return disk_kit


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every client constructed from here on (httpx and httpx2, sync and async)."""
    seen: list[str] = []
    for module in (httpx, httpx2):
        for cls in (module.Client, module.AsyncClient):
            original = cls.__init__

            def counting(self: Any, *a: Any, _o: Any = original, **k: Any) -> None:
                seen.append(f"{type(self).__module__}.{type(self).__name__}")
                _o(self, *a, **k)

            monkeypatch.setattr(cls, "__init__", counting)
    yield seen


def _api(kit: ad.Toolkit, **kwargs: Any) -> Api:
    scope = Scope(origins=(ORIGIN,), actions=frozenset({"read", "write"}))
    return Api(kit, identities=[BOT], scope=scope, **kwargs)


# -- Api ---------------------------------------------------------------------------------


def test_api_ahandle_reads_through_the_injected_async_client(
    kit: ad.Toolkit, made: list[str]
) -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"id": 7, "state": "open"})

    async def go() -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            made.clear()
            _api(kit, async_client=client)
            return await kit.ahandle(
                "api", {"method": "GET", "url": f"{ORIGIN}/items/7", "identity": "bot"}
            )

    text = asyncio.run(go())
    assert json.loads(text) == {"id": 7, "state": "open"}
    assert [str(r.url) for r in seen] == [f"{ORIGIN}/items/7"]
    assert seen[0].headers["Authorization"] == "Bearer tok-123"
    assert made == []  # neither a sync client nor an async one of the adapter's own


def test_api_ahandle_writes_through_the_injected_async_client(
    kit: ad.Toolkit, made: list[str]
) -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=json.loads(request.content))

    async def go() -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            made.clear()
            _api(kit, async_client=client)
            return await kit.ahandle(
                "api",
                {
                    "method": "PATCH",
                    "url": f"{ORIGIN}/items/7",
                    "identity": "bot",
                    "body": {"state": "closed"},
                },
            )

    text = asyncio.run(go())
    assert text.startswith("[action ") and ": completed]" in text.splitlines()[0]
    assert [r.method for r in seen] == ["PATCH"]
    assert seen[0].headers["Idempotency-Key"]
    assert json.loads(seen[0].content) == {"state": "closed"}
    assert made == []


def test_api_async_against_a_server_keeps_the_scope_on_redirects(
    kit: ad.Toolkit, server: LocalServer, made: list[str]
) -> None:
    # The redirect leaves the scope: it is the answer, as on the sync path.
    server.routes[("GET", "/moved")] = lambda r: Reply(
        302, b"", {"Location": "http://elsewhere.invalid/x"}
    )
    server.routes[("GET", "/item")] = lambda r: Reply(
        200, b'{"ok": true}', {"Content-Type": "application/json"}
    )

    async def go() -> tuple[ad.Result, ad.Result]:
        async with httpx.AsyncClient(
            headers={"X-Agent": "async-mine"}, follow_redirects=True
        ) as client:
            made.clear()
            api = Api(
                kit,
                identities=[BOT],
                scope=Scope(origins=(server.url(),)),
                async_client=client,
            )
            return (
                await api.aget(server.url("/item"), identity="bot"),
                await api.aget(server.url("/moved"), identity="bot"),
            )

    item, moved = asyncio.run(go())
    assert json.loads(item.payload) == {"ok": True}
    assert moved.record.meta["status_code"] == 302
    assert "outside the scope" in moved.record.meta["redirect"]
    assert [r.headers["X-Agent"] for r in server.requests] == ["async-mine", "async-mine"]
    assert made == []


def test_api_async_write_past_its_deadline_is_unknown(kit: ad.Toolkit, server: LocalServer) -> None:
    server.routes[("POST", "/slow")] = lambda r: Reply(200, b"{}", delay=1.5)

    async def go() -> ad.Result:
        async with httpx.AsyncClient() as client:
            api = Api(
                kit,
                identities=[BOT],
                scope=Scope(origins=(server.url(),), actions=frozenset({"write"})),
                async_client=client,
                deadline=0.3,
            )
            return await api.awrite("POST", server.url("/slow"), identity="bot", json_body={})

    res = asyncio.run(go())
    assert res.record.outcome is ad.Outcome.UNKNOWN
    assert "DeadlineExceeded after sending" in (res.record.error or "")


def test_api_async_verify_reads_through_the_async_client(kit: ad.Toolkit) -> None:
    state: dict[str, Any] = {"memo": ""}

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH":
            state.update(json.loads(request.content))
        return httpx.Response(200, json=state)

    async def go() -> tuple[ad.Result, ad.Result]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            api = _api(kit, async_client=client)
            wrote = await api.awrite(
                "PATCH", f"{ORIGIN}/items/7", identity="bot", json_body={}, marker_field="memo"
            )
            return wrote, await api.averify(wrote.id, identity="bot")

    wrote, checked = asyncio.run(go())
    assert checked.record.outcome is ad.Outcome.COMPLETED
    assert checked.record.meta["verifies"] == wrote.id


# -- SearXNG and Brave, through Search ---------------------------------------------------


def _searx_answer(seen: list[Any]) -> Any:
    def answer(request: Any) -> Any:
        seen.append(request)
        hits = [{"url": "https://docs.invalid/locks", "title": "Locks", "content": "on locks"}]
        stack = httpx2 if isinstance(request, httpx2.Request) else httpx
        return stack.Response(200, json={"results": hits})

    return answer


def test_searxng_ahandle_searches_through_the_injected_async_client(
    kit: ad.Toolkit, made: list[str]
) -> None:
    seen: list[httpx.Request] = []

    async def go() -> str:
        transport = httpx.MockTransport(_searx_answer(seen))
        async with httpx.AsyncClient(transport=transport) as client:
            made.clear()
            Search(kit, SearXNG("https://searx.invalid/", async_client=client))
            return await kit.ahandle("search", {"query": "lock"})

    text = asyncio.run(go())
    assert "1. Locks - https://docs.invalid/locks" in text
    assert [r.url.params["q"] for r in seen] == ["lock"]
    assert made == []


def test_searxng_async_against_a_server(
    kit: ad.Toolkit, server: LocalServer, made: list[str]
) -> None:
    body = json.dumps({"results": [{"url": "https://docs.invalid/a", "title": "A"}]})
    server.routes[("GET", "/search")] = lambda r: Reply(
        200, body.encode(), {"Content-Type": "application/json"}
    )

    async def go() -> ad.Result:
        async with httpx.AsyncClient(headers={"X-Agent": "async-mine"}) as client:
            made.clear()
            search = Search(kit, SearXNG(server.url(), async_client=client))
            return await search.acall("alpha")

    res = asyncio.run(go())
    assert json.loads(res.payload)["hits"][0]["url"] == "https://docs.invalid/a"
    assert server.requests[-1].headers["X-Agent"] == "async-mine"
    assert server.requests[-1].path == "/search?q=alpha&format=json"
    assert made == []


def test_brave_ahandle_searches_through_the_injected_async_client(
    kit: ad.Toolkit, made: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "brave-key-9")
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        hits = [{"url": "https://docs.invalid/b", "title": "B", "description": "bee"}]
        return httpx.Response(200, json={"web": {"results": hits}})

    async def go() -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            made.clear()
            Search(kit, BraveSearch(kit.secrets, async_client=client))
            return await kit.ahandle("search", {"query": "bee", "limit": 3})

    text = asyncio.run(go())
    assert "1. B - https://docs.invalid/b" in text
    assert "brave-key-9" not in text
    assert [r.headers["X-Subscription-Token"] for r in seen] == ["brave-key-9"]
    assert seen[0].url.params["count"] == "3"
    assert made == []


def test_a_failing_async_backend_is_recorded_and_told(kit: ad.Toolkit) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="down")

    async def go() -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            Search(kit, SearXNG("https://searx.invalid", async_client=client))
            return await kit.ahandle("search", {"query": "lock"})

    text = asyncio.run(go())
    assert "503" in text
    failed = list(kit.store.records(tool="search"))
    assert [r.status for r in failed] == [ad.Status.ERROR]


# -- httpx2 clients ----------------------------------------------------------------------


def test_api_ahandle_uses_an_injected_httpx2_async_client(kit: ad.Toolkit, made: list[str]) -> None:
    seen: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json={"id": 7})

    async def go() -> str:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as client:
            made.clear()
            _api(kit, async_client=client)
            return await kit.ahandle(
                "api", {"method": "GET", "url": f"{ORIGIN}/items/7", "identity": "bot"}
            )

    assert json.loads(asyncio.run(go())) == {"id": 7}
    assert seen[0].headers["Authorization"] == "Bearer tok-123"
    assert made == []


def test_an_httpx2_connect_error_is_a_write_not_applied(kit: ad.Toolkit) -> None:
    # httpx2's failures are handled as httpx's: nothing sent is not_applied.
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    with httpx2.Client(transport=httpx2.MockTransport(refuse)) as client:
        api = _api(kit, client=client)
        res = api.write("POST", f"{ORIGIN}/items", identity="bot", json_body={"a": 1})
    assert res.record.outcome is ad.Outcome.NOT_APPLIED
    assert "ConnectError before anything was sent" in (res.record.error or "")


def test_an_httpx2_timeout_past_the_deadline_is_the_deadline(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    # httpx2's ReadTimeout at the deadline is the deadline, as httpx's is.
    server.pages["/slow"] = Page(b"late", delay=1.5)
    with httpx2.Client() as client:
        Fetch(kit, client=client, deadline=0.3)
        text = kit.handle("fetch", {"url": server.url("/slow")})
    assert "passed its deadline of 0.3 s" in text
    assert [r.status for r in kit.store.records(tool="fetch")] == [ad.Status.ERROR]


def test_fetch_ahandle_uses_an_injected_httpx2_async_client_against_a_server(
    kit: ad.Toolkit, server: LocalServer, made: list[str]
) -> None:
    server.pages["/doc"] = Page(b"<p>locks are fair</p>")
    server.routes[("GET", "/old")] = lambda r: Reply(302, b"", {"Location": "/doc"})

    async def go() -> tuple[str, str]:
        async with httpx2.AsyncClient(headers={"X-Agent": "two"}) as client:
            made.clear()
            Fetch(kit, async_client=client)
            page = await kit.ahandle("fetch", {"url": server.url("/old")})
            # port 1 on the loopback: refused, an httpx2.ConnectError
            return page, await kit.ahandle("fetch", {"url": "http://127.0.0.1:1/x"})

    page, refused = asyncio.run(go())
    assert "locks are fair" in page
    assert f"[redirected to {server.url('/doc')}]" in page
    assert [r.headers["X-Agent"] for r in server.requests] == ["two", "two"]
    assert refused.startswith("error")
    statuses = {r.args["url"]: r.status for r in kit.store.records(tool="fetch")}
    assert statuses["http://127.0.0.1:1/x"] is ad.Status.ERROR  # recorded, as httpx's
    assert made == []


def test_search_uses_an_injected_httpx2_async_client(kit: ad.Toolkit, made: list[str]) -> None:
    seen: list[Any] = []

    async def go() -> str:
        transport = httpx2.MockTransport(_searx_answer(seen))
        async with httpx2.AsyncClient(transport=transport) as client:
            made.clear()
            Search(kit, SearXNG("https://searx.invalid", async_client=client))
            return await kit.ahandle("search", {"query": "lock"})

    assert "1. Locks - https://docs.invalid/locks" in asyncio.run(go())
    assert len(seen) == 1 and isinstance(seen[0], httpx2.Request)
    assert made == []


def test_an_httpx2_async_failure_in_fetch_is_recorded(kit: ad.Toolkit) -> None:
    # Before, an httpx2 error escaped Fetch's handling: nothing was recorded.
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    async def go() -> str:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)) as client:
            Fetch(kit, async_client=client)
            return await kit.ahandle("fetch", {"url": "https://docs.invalid/x"})

    assert "refused" in asyncio.run(go())
    failed = list(kit.store.records(tool="fetch"))
    assert [(r.status, r.args["url"]) for r in failed] == [
        (ad.Status.ERROR, "https://docs.invalid/x")
    ]
