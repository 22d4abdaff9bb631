from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

import addressable as ad
from addressable.adapters import Fetch, Identity, ResponseTooLarge
from tests.helpers import FakeClock
from tests.helpers.httpserver import LocalServer, Page, Reply

HTML = b"""<html><head><title>Threads and locks</title><style>p{}</style></head>
<body><h1>Locks</h1><p>The <a href="/lock">Lock</a> class is thread-safe.</p></body></html>"""


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture
def fetch(kit: ad.Toolkit) -> Fetch:
    return Fetch(kit, timeout=2.0)


def test_replay_by_id_gives_the_same_bytes_after_the_server_stops(
    fetch: Fetch, server: LocalServer
) -> None:
    server.pages["/doc"] = Page(HTML)
    res = fetch(server.url("/doc"))
    assert res.ok and res.payload == HTML
    rec = res.record
    assert rec.determinism is ad.Determinism.DETERMINISTIC
    assert rec.key == server.url("/doc")
    assert rec.media_type == "text/html; charset=utf-8"
    assert rec.meta["status_code"] == 200
    server.stop()
    with pytest.raises(httpx.ConnectError):
        fetch(server.url("/doc"))
    assert fetch.kit.replay(res.id).payload == HTML


def test_verify_reports_a_changed_page_and_records_it(
    fetch: Fetch, server: LocalServer, clock: FakeClock
) -> None:
    server.pages["/doc"] = Page(b"<p>version one</p>")
    first = fetch(server.url("/doc"))
    server.pages["/doc"] = Page(b"<p>version two</p>")
    clock.advance(minutes=5)
    fresh = fetch.kit.replay(first.id, verify=True)
    assert fresh.changed is True and fresh.previous_id == first.id
    assert fresh.payload == b"<p>version two</p>" and fresh.id != first.id
    assert [r.id for r in fetch.kit.store.records(key=first.record.key)] == [first.id, fresh.id]
    assert fetch.kit.replay(first.id).payload == b"<p>version one</p>"


def test_a_304_is_recorded_as_unchanged(
    fetch: Fetch, server: LocalServer, clock: FakeClock
) -> None:
    server.pages["/doc"] = Page(HTML, etag='"v1"')
    first = fetch(server.url("/doc"))
    assert first.record.meta["etag"] == '"v1"'
    clock.advance(minutes=10)
    again = fetch.kit.replay(first.id, verify=True)
    assert server.requests[-1].headers.get("If-None-Match") == '"v1"'
    assert again.changed is False and again.id == first.id
    assert again.payload == HTML and again.record.meta["revalidated"] == 304
    seen = fetch.kit.store.observations(first.id)
    assert [o.at for o in seen] == [first.record.observed_at, clock.now]
    assert len(list(fetch.kit.store.records())) == 1


def test_redirects_are_followed_and_the_final_url_recorded(
    fetch: Fetch, server: LocalServer
) -> None:
    server.routes[("GET", "/old")] = lambda r: Reply(302, b"", {"Location": "/new"})
    server.pages["/new"] = Page(HTML)
    res = fetch(server.url("/old"))
    assert res.payload == HTML
    assert res.record.key == server.url("/old")
    assert res.record.meta["final_url"] == server.url("/new")
    assert res.record.meta["redirects"] == [server.url("/old")]
    assert fetch.render(res).startswith(f"[redirected to {server.url('/new')}]")


def test_the_charset_is_respected(fetch: Fetch, server: LocalServer) -> None:
    server.pages["/latin"] = Page(
        "<p>café crème</p>".encode("latin-1"), content_type="text/html; charset=iso-8859-1"
    )
    res = fetch(server.url("/latin"))
    assert res.payload == "<p>café crème</p>".encode("latin-1")
    assert "café crème" in fetch.render(res)


def test_html_becomes_readable_text(fetch: Fetch, server: LocalServer) -> None:
    server.pages["/doc"] = Page(HTML)
    text = fetch.kit.handle("fetch", {"url": server.url("/doc")})
    assert "Lock" in text and "thread-safe" in text
    assert "<p>" not in text and "p{}" not in text


def test_4xx_and_5xx_are_error_records_never_success(fetch: Fetch, server: LocalServer) -> None:
    res = fetch(server.url("/missing"))
    assert not res.ok
    assert res.record.status is ad.Status.ERROR
    assert res.record.error == f"HTTP 404 Not Found for {server.url('/missing')}"
    assert fetch.kit.handle("fetch", {"url": server.url("/missing")}).startswith(
        "error: HTTP 404 Not Found"
    )
    server.pages["/boom"] = Page(b"oops", status=503)
    assert fetch(server.url("/boom")).record.status is ad.Status.ERROR
    assert not fetch.kit.replay(res.id).ok


def test_timeouts_are_recorded_and_raised(kit: ad.Toolkit, server: LocalServer) -> None:
    fetch = Fetch(kit, timeout=1.0)
    server.pages["/slow"] = Page(b"late", delay=2.5)
    with pytest.raises(httpx.ReadTimeout):
        fetch(server.url("/slow"))
    (rec,) = kit.store.records()
    assert rec.status is ad.Status.ERROR and rec.error is not None
    assert rec.error.startswith("ReadTimeout")
    text = kit.handle("fetch", {"url": server.url("/slow")})
    assert text.startswith("error: ReadTimeout")


def test_the_size_limit_is_a_clear_error(kit: ad.Toolkit, server: LocalServer) -> None:
    fetch = Fetch(kit, max_bytes=1000)
    server.pages["/big"] = Page(b"x" * 5000, content_type="text/plain")
    with pytest.raises(ResponseTooLarge, match="over the limit of 1,000 bytes"):
        fetch(server.url("/big"))
    (rec,) = kit.store.records()
    assert rec.status is ad.Status.ERROR and "ResponseTooLarge" in (rec.error or "")


def test_async_fetch(kit: ad.Toolkit, server: LocalServer) -> None:
    server.pages["/doc"] = Page(HTML)

    async def go() -> ad.Result:
        fetch = Fetch(kit)
        try:
            return await fetch.aget(server.url("/doc"))
        finally:
            await fetch.aclose()

    res = asyncio.run(go())
    assert res.payload == HTML and res.record.key == server.url("/doc")


def test_ahandle_uses_the_injected_async_client(kit: ad.Toolkit) -> None:
    # A mocked transport: the name below resolves nowhere, so only the injected client
    # can answer. Before, kit.ahandle ran the sync path with a client of its own.
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, html=HTML.decode())

    async def go() -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            fetch = Fetch(kit, async_client=client)
            text = await kit.ahandle("fetch", {"url": "https://docs.invalid/locks"})
            await fetch.aclose()
            assert not client.is_closed  # the adapter closes only the clients it made
            return text

    text = asyncio.run(go())
    assert [str(r.url) for r in seen] == ["https://docs.invalid/locks"]
    assert "thread-safe" in text
    (rec,) = kit.store.records(tool="fetch")
    assert rec.status is ad.Status.OK and rec.key == "https://docs.invalid/locks"
    assert kit.shown(text) == rec.id


def test_ahandle_uses_the_injected_async_client_against_a_server(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    server.pages["/doc"] = Page(HTML)

    async def go() -> str:
        async with httpx.AsyncClient(headers={"X-Agent": "async-mine"}) as client:
            Fetch(kit, async_client=client)
            return await kit.ahandle("fetch", {"url": server.url("/doc")})

    assert "thread-safe" in asyncio.run(go())
    assert server.requests[-1].headers["X-Agent"] == "async-mine"


def test_ahandle_with_only_a_sync_client_uses_it(kit: ad.Toolkit, server: LocalServer) -> None:
    server.pages["/doc"] = Page(HTML)
    with httpx.Client(headers={"X-Agent": "sync-mine"}) as client:
        Fetch(kit, client=client)
        text = asyncio.run(kit.ahandle("fetch", {"url": server.url("/doc")}))
    assert "thread-safe" in text
    assert server.requests[-1].headers["X-Agent"] == "sync-mine"


def test_a_given_client_is_used(kit: ad.Toolkit, server: LocalServer) -> None:
    server.pages["/doc"] = Page(HTML)
    with httpx.Client(headers={"X-Agent": "mine"}) as client:
        Fetch(kit, client=client)(server.url("/doc"))
    assert server.requests[-1].headers["X-Agent"] == "mine"


def test_an_authenticated_fetch_keeps_no_credential(
    kit: ad.Toolkit, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "tok-" + os.urandom(8).hex()
    monkeypatch.setenv("DOCS_TOKEN", token)
    seen = []

    def echo(request):  # type: ignore[no-untyped-def]
        seen.append(request.headers.get("Authorization"))
        return Reply(
            200, f"<p>hello, your token is {token}</p>".encode(), {"Content-Type": "text/html"}
        )

    server.routes[("GET", "/private")] = echo
    fetch = Fetch(
        kit,
        identities=[
            Identity(name="reader", headers={"Authorization": "Bearer secret:env:DOCS_TOKEN"})
        ],
    )
    res = fetch(server.url("/private"), identity="reader")
    assert seen == [f"Bearer {token}"]
    assert res.record.key == f"{server.url('/private')} as reader"
    assert token not in res.text and "[secret:env:DOCS_TOKEN]" in res.text
    assert token not in kit.handle("fetch", {"url": server.url("/private"), "identity": "reader"})
    with pytest.raises(ad.ScopeError, match="no identity named 'writer'"):
        fetch(server.url("/private"), identity="writer")


def test_the_key_is_the_normalised_url(fetch: Fetch, server: LocalServer) -> None:
    server.pages["/doc?a=1&b=2"] = Page(HTML)
    res = fetch(f"HTTP://127.0.0.1:{server.port}/doc?a=1&b=2#part")
    assert res.record.key == server.url("/doc?a=1&b=2")


def test_last_modified_revalidation(fetch: Fetch, server: LocalServer) -> None:
    stamp = "Wed, 11 Mar 2026 09:00:00 GMT"

    def page(request):  # type: ignore[no-untyped-def]
        if request.headers.get("If-Modified-Since") == stamp:
            return Reply(304, b"", {"Last-Modified": stamp})
        return Reply(200, b"<p>dated</p>", {"Content-Type": "text/html", "Last-Modified": stamp})

    server.routes[("GET", "/dated")] = page
    first = fetch(server.url("/dated"))
    assert first.record.meta["last_modified"] == stamp
    again = fetch.kit.replay(first.id, verify=True)
    assert again.changed is False and again.id == first.id
    assert again.record.meta["revalidated"] == 304


def test_credentials_in_the_query_string_never_reach_the_store(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    key = secret_env("DOCS_KEY")
    fetch = Fetch(kit, allow_secrets=("DOCS_KEY",))  # the user allows it in URLs
    server.pages[f"/doc?api_key={key}&q=1"] = Page(HTML)
    res = fetch(server.url("/doc?api_key=secret:env:DOCS_KEY&q=1"))
    assert res.ok and server.requests[-1].path == f"/doc?api_key={key}&q=1"
    assert res.record.args["url"] == server.url("/doc?api_key=secret:env:DOCS_KEY&q=1")
    assert key not in json.dumps(res.record.model_dump(mode="json"))
    server.pages["/doc?token=literal-value-123&q=1"] = Page(HTML)
    literal = fetch(server.url("/doc?token=literal-value-123&q=1"))
    assert literal.ok
    assert literal.record.args["url"] == server.url("/doc?token=[redacted]&q=1")
    assert "literal-value-123" not in json.dumps(literal.record.model_dump(mode="json"))


@pytest.mark.parametrize("charset", ["idna", "undefined", "punycode", "base64", "rot13"])
def test_a_page_in_a_charset_that_is_no_charset_reads_as_text(
    kit: ad.Toolkit, server: LocalServer, charset: str
) -> None:
    # The server names the charset: every reading of the stored page must still work.
    body = b"<p>hello \xff world</p>" + b"x" * 2000
    server.pages["/p"] = Page(body, content_type=f"text/html; charset={charset}")
    fetch = Fetch(kit, timeout=5)
    shown = kit.handle("fetch", {"url": server.url("/p")})
    assert shown.startswith("hello \ufffd world")
    result = fetch(server.url("/p"))
    assert str(result).startswith("<p>hello \ufffd world</p>")
    assert "hello" in kit.handle("replay_result", {"id": result.id})
    assert ad.evict(result.record, store=kit.store).id == result.id


# -- where an identity may be sent --------------------------------------------------------


def _auth_of(server: LocalServer) -> list[str | None]:
    return [r.headers.get("Authorization") for r in server.requests]


def test_an_identity_with_origins_is_sent_nowhere_else(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    token = secret_env("BOUND_TOKEN")
    server.pages["/doc"] = Page(HTML)
    bound = Identity(
        name="bound",
        headers={"Authorization": "Bearer secret:env:BOUND_TOKEN"},
        origins=("https://api.example",),
    )
    fetch = Fetch(kit, identities=[bound])
    with pytest.raises(ad.ScopeError, match="is not sent to"):
        fetch(server.url("/doc"), identity="bound")
    assert server.requests == [] and list(kit.store.records()) == []
    at_home = Identity(name="home", headers=bound.headers, origins=(server.url(),))
    Fetch(kit, identities=[at_home], name="home_fetch")(server.url("/doc"), identity="home")
    assert _auth_of(server) == [f"Bearer {token}"]


def test_a_re_run_sends_an_identity_only_where_this_process_sent_it(
    tmp_path: Path, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    """A record from elsewhere (an imported bundle) names an identity and a URL of its
    choosing: re-running it must not send the identity's credentials there."""
    token = secret_env("GH_TOKEN")
    server.pages["/collect"] = Page(HTML)
    headers = {"Authorization": "Bearer secret:env:GH_TOKEN"}
    theirs = ad.Toolkit(ad.DiskStore(tmp_path / "theirs"))
    # The bundle's maker records a GET of its own server as "github" (no secret there).
    Fetch(theirs, identities=[Identity(name="github")])(server.url("/collect"), identity="github")
    bundle = tmp_path / "bundle.jsonl"
    with bundle.open("wb") as out:
        ad.export_bundle(theirs.store, out)
    ours = ad.Toolkit(ad.DiskStore(tmp_path / "ours"))
    ad.import_bundle(ours.store, bundle)
    fetch = Fetch(ours, identities=[Identity(name="github", headers=headers)])
    (record,) = ours.store.records()
    server.requests.clear()
    with pytest.raises(ad.ScopeError, match="never sent there"):
        ours.replay(record.id, verify=True)
    assert server.requests == []
    # Sent there from code first, or bound to that origin: then it re-runs.
    fetch(server.url("/collect"), identity="github")
    assert ours.replay(record.id, verify=True).record.tool == "fetch"
    assert _auth_of(server) == [f"Bearer {token}"] * 2
    again = ad.Toolkit(ours.store)
    bound = Identity(name="github", headers=headers, origins=(server.url(),))
    Fetch(again, identities=[bound])
    again.replay(record.id, verify=True)
    assert len(server.requests) == 3


# -- origins -------------------------------------------------------------------------------


def test_origins_bound_where_fetch_may_read_redirects_included(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    other = LocalServer()
    try:
        server.pages["/doc"] = Page(HTML)
        other.pages["/secret"] = Page(b"<p>internal</p>")
        server.routes[("GET", "/away")] = lambda request: Reply(
            302, b"", {"Location": other.url("/secret")}
        )
        fetch = Fetch(kit, origins=(server.url(),))
        assert "Only URLs at: http://127.0.0.1" in fetch.description
        assert fetch(server.url("/doc")).ok
        refused = kit.handle("fetch", {"url": other.url("/secret")})
        assert refused.startswith("error:") and "not an origin" in refused
        moved = fetch(server.url("/away"))
        assert "internal" not in moved.text and "outside the adapter's origins" in str(
            moved.record.meta
        )
        assert other.requests == []
        with pytest.raises(ad.ArgumentError):
            Fetch(kit, origins="http://127.0.0.1", name="bare")
    finally:
        other.stop()


@pytest.mark.parametrize("bad", [["api.github.com"], ["ftp://files.example"], [], "https://x"])
def test_origins_that_are_no_origins_are_refused(kit: ad.Toolkit, bad: object) -> None:
    with pytest.raises(ValueError, match=r"origin|URL|str"):
        Identity(name="gh", origins=bad)  # type: ignore[arg-type]
    with pytest.raises(ad.ArgumentError):
        Fetch(kit, origins=bad)  # type: ignore[arg-type]
    assert Identity(name="gh", origins=["HTTPS://API.example/v1"]).origins == (
        "https://api.example",
    )


def test_an_etag_no_header_can_carry_is_not_sent_back(
    fetch: Fetch, server: LocalServer, clock: FakeClock
) -> None:
    # A hostile server's Latin-1 ETag: sending it back raised UnicodeEncodeError.
    server.pages["/doc"] = Page(HTML, etag='"v\xe9"')
    first = fetch(server.url("/doc"))
    assert first.record.meta["etag"] == '"v\xe9"'
    clock.advance(minutes=10)
    again = fetch.kit.replay(first.id, verify=True)
    assert "If-None-Match" not in server.requests[-1].headers
    assert again.changed is False and again.payload == HTML
