"""Credentials never follow a redirect to another origin: two real loopback servers on
different ports (two origins), the first sending the client to the second, which must
never see an identity's header nor a secret that was in the URL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import httpx
import pytest

import addressable as ad
from addressable.adapters import Api, BadAnswer, Fetch, Identity, Scope
from tests.helpers.httpserver import LocalServer, Reply, Request

IDENTITY = Identity(
    name="me",
    headers={
        "Authorization": "Bearer secret:env:RD_TOKEN",
        "X-Api-Key": "secret:env:RD_KEY",
        "Cookie": "sid=secret:env:RD_COOKIE",
    },
)
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture
def other() -> Iterator[LocalServer]:
    """A second server: another port, so another origin."""
    srv = LocalServer()
    yield srv
    srv.stop()


@pytest.fixture
def creds(secret_env: Callable[[str], str]) -> list[str]:
    return [secret_env("RD_TOKEN"), secret_env("RD_KEY"), secret_env("RD_COOKIE")]


def ok(request: Request) -> Reply:
    return Reply(200, b'{"landed": true}', JSON)


def leaked(request: Request, secrets: list[str]) -> list[str]:
    """The identity headers and secret values a request carried."""
    found = [h for h in request.headers if h.lower() in {"authorization", "x-api-key", "cookie"}]
    text = request.path + "".join(request.headers.values())
    return found + [s for s in secrets if s in text]


def test_fetch_drops_every_identity_header_when_a_redirect_leaves_the_origin(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer, creds: list[str]
) -> None:
    server.routes[("GET", "/start")] = lambda r: Reply(302, b"", {"Location": other.url("/land")})
    other.routes[("GET", "/land")] = ok
    res = Fetch(kit, identities=[IDENTITY])(server.url("/start"), identity="me")
    assert res.ok and res.record.meta["final_url"] == other.url("/land")
    first = server.requests[0].headers
    assert first["Authorization"] == f"Bearer {creds[0]}" and first["X-Api-Key"] == creds[1]
    assert first["Cookie"] == f"sid={creds[2]}"
    assert [r.path for r in other.requests] == ["/land"]
    assert leaked(other.requests[0], creds) == []


def test_fetch_keeps_the_identity_on_a_redirect_within_the_origin(
    kit: ad.Toolkit, server: LocalServer, creds: list[str]
) -> None:
    server.routes[("GET", "/old")] = lambda r: Reply(301, b"", {"Location": "/new"})
    server.routes[("GET", "/new")] = ok
    assert Fetch(kit, identities=[IDENTITY])(server.url("/old"), identity="me").ok
    new = server.requests[-1]
    assert new.path == "/new" and new.headers["X-Api-Key"] == creds[1]
    assert new.headers["Cookie"] == f"sid={creds[2]}"
    assert new.headers["Authorization"] == f"Bearer {creds[0]}"


def test_credentials_stay_dropped_when_a_redirect_comes_back(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer, creds: list[str]
) -> None:
    server.routes[("GET", "/start")] = lambda r: Reply(302, b"", {"Location": other.url("/b")})
    other.routes[("GET", "/b")] = lambda r: Reply(302, b"", {"Location": server.url("/back")})
    server.routes[("GET", "/back")] = ok
    assert Fetch(kit, identities=[IDENTITY])(server.url("/start"), identity="me").ok
    assert [r.path for r in server.requests] == ["/start", "/back"]
    assert leaked(other.requests[0], creds) == []
    assert leaked(server.requests[1], creds) == []  # the other origin chose this hop


def test_a_secret_in_the_url_does_not_follow_a_redirect_to_another_origin(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer, secret_env: Callable[[str], str]
) -> None:
    value = secret_env("RD_QUERY")

    def careless(request: Request) -> Reply:
        # A server that hands its whole query string on to the next hop.
        query = request.path.split("?", 1)[1]
        return Reply(302, b"", {"Location": other.url(f"/land?{query}&page=2")})

    server.routes[("GET", "/start")] = careless
    other.routes[("GET", "/land")] = ok
    fetch = Fetch(kit, allow_secrets=("RD_QUERY",))
    res = fetch(server.url("/start?key=secret:env:RD_QUERY&q=locks"))
    assert server.requests[0].path == f"/start?key={value}&q=locks"
    assert res.ok and [r.path for r in other.requests] == ["/land?q=locks&page=2"]
    assert leaked(other.requests[0], [value]) == []
    assert value not in str(res.record.model_dump())


def test_async_fetch_drops_credentials_across_origins(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer, creds: list[str]
) -> None:
    server.routes[("GET", "/start")] = lambda r: Reply(307, b"", {"Location": other.url("/land")})
    other.routes[("GET", "/land")] = ok

    async def go() -> ad.Result:
        fetch = Fetch(kit, identities=[IDENTITY])
        try:
            return await fetch.aget(server.url("/start"), identity="me")
        finally:
            await fetch.aclose()

    res = asyncio.run(go())
    assert res.ok and res.record.meta["redirects"] == [server.url("/start")]
    assert server.requests[0].headers["X-Api-Key"] == creds[1]
    assert [r.path for r in other.requests] == ["/land"]
    assert leaked(other.requests[0], creds) == []


def test_a_client_that_follows_redirects_itself_is_not_trusted_with_credentials(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer, creds: list[str]
) -> None:
    server.routes[("GET", "/start")] = lambda r: Reply(302, b"", {"Location": other.url("/land")})
    other.routes[("GET", "/land")] = ok
    with httpx.Client(follow_redirects=True) as client:
        Fetch(kit, identities=[IDENTITY], client=client)(server.url("/start"), identity="me")
    assert leaked(other.requests[0], creds) == []


def test_api_drops_credentials_when_a_redirect_leaves_the_origin(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer, creds: list[str]
) -> None:
    server.routes[("GET", "/items")] = lambda r: Reply(302, b"", {"Location": other.url("/items")})
    server.routes[("POST", "/items")] = lambda r: Reply(307, b"", {"Location": other.url("/items")})
    other.routes[("GET", "/items")] = ok
    other.routes[("POST", "/items")] = lambda r: Reply(201, b'{"id": 1}', JSON)
    scope = Scope(origins=(server.url(), other.url()), actions=frozenset({"read", "write"}))
    with httpx.Client(follow_redirects=True) as client:
        api = Api(kit, identities=[IDENTITY], scope=scope, client=client)
        read = api.get(server.url("/items"), identity="me")
        write = api.post(server.url("/items"), identity="me", json_body={"n": 1})
    assert read.ok and write.record.outcome is ad.Outcome.COMPLETED
    assert [(r.method, r.path) for r in other.requests] == [("GET", "/items"), ("POST", "/items")]
    assert all(leaked(r, creds) == [] for r in other.requests)
    assert other.requests[1].body == b'{"n":1}'  # a 307 sends the same body on
    assert all(r.headers["X-Api-Key"] == creds[1] for r in server.requests)


def test_api_does_not_follow_a_redirect_out_of_its_scope(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer, creds: list[str]
) -> None:
    server.routes[("GET", "/items")] = lambda r: Reply(302, b"", {"Location": other.url("/x")})
    other.routes[("GET", "/x")] = ok
    scope = Scope(origins=(server.url(),))
    with httpx.Client(follow_redirects=True) as client:
        api = Api(kit, identities=[IDENTITY], scope=scope, client=client)
        res = api.get(server.url("/items"), identity="me")
    assert other.requests == []
    assert res.record.meta["status_code"] == 302
    assert "not followed" in str(res.record.meta.get("redirect"))


def test_a_write_a_303_turned_into_a_get_is_unknown(
    kit: ad.Toolkit, server: LocalServer, creds: list[str]
) -> None:
    # POST, then 303 to a login page the client GETs: a 200 there says nothing of the write.
    server.routes[("POST", "/items")] = lambda r: Reply(
        303, b"", {"Location": server.url("/login")}
    )
    server.routes[("GET", "/login")] = ok
    scope = Scope(origins=(server.url(),), actions=frozenset({"read", "write"}))
    with httpx.Client(follow_redirects=True) as client:
        api = Api(kit, identities=[IDENTITY], scope=scope, client=client)
        write = api.post(server.url("/items"), identity="me", json_body={"n": 1})
    assert write.record.outcome is ad.Outcome.UNKNOWN
    assert write.record.meta["redirected_from"] == [303]
    assert write.record.error is not None and "became another request" in write.record.error


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("http://" + "a" * 64 + ".example/", id="label-over-63"),
        pytest.param("http://a..b/", id="empty-label"),
    ],
)
def test_a_redirect_to_a_host_no_lookup_takes_is_a_recorded_error(
    kit: ad.Toolkit, server: LocalServer, target: str
) -> None:
    server.routes[("GET", "/r")] = lambda r: Reply(302, b"", {"Location": target})
    server.routes[("POST", "/w")] = lambda r: Reply(307, b"", {"Location": target})
    fetch = Fetch(kit, timeout=5)
    with pytest.raises(BadAnswer, match="not to a URL that can be fetched"):
        fetch(server.url("/r"))
    shown = kit.handle("fetch", {"url": server.url("/r")})
    assert shown.startswith("error: BadAnswer: ") and "\n" not in shown
    api = Api(
        kit,
        identities=[Identity(name="me")],
        scope=Scope(origins=(server.url("/"), target), actions=frozenset({"read", "write"})),
        client=httpx.Client(follow_redirects=True, timeout=5),
    )
    wrote = api.post(server.url("/w"), identity="me", json_body={})
    assert wrote.record.outcome is ad.Outcome.UNKNOWN
    assert "BadAnswer" in (wrote.record.error or "")
    assert {r.tool for r in kit.store.records()} == {"fetch", "api"}


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    "location",
    ["http:\\\\127.0.0.1:1/x", "http://xn--/", "http://xn--zz-/", "http://[::1", "http://h:1:2/"],
)
def test_a_location_httpx_cannot_make_a_url_of_is_a_recorded_bad_answer(
    kit: ad.Toolkit, server: LocalServer, asynchronous: bool, location: str
) -> None:
    # httpx raises InvalidURL, or IDNA's UnicodeError (no HTTPError), while it answers;
    # or, for a Location it reads itself, its RemoteProtocolError ("Invalid URL in
    # location header").
    server.routes[("GET", "/r")] = lambda r: Reply(302, b"", {"Location": location})
    fetch = Fetch(kit, timeout=5)
    with pytest.raises(BadAnswer, match="redirected to a Location"):
        if asynchronous:
            asyncio.run(fetch.aget(server.url("/r")))
        else:
            fetch(server.url("/r"))
    shown = kit.handle("fetch", {"url": server.url("/r")})
    assert shown.startswith("error: BadAnswer: ") and "\n" not in shown
    api = Api(kit, identities=[Identity(name="me")], scope=Scope(origins=(server.url("/"),)))
    with pytest.raises(BadAnswer):
        api.get(server.url("/r"), identity="me")
    failed = [r for r in kit.store.records() if r.status == "error"]
    assert {r.tool for r in failed} == {"fetch", "api"}
    assert all("BadAnswer" in (r.error or "") for r in failed)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_given_clients_own_auth_stays_with_the_first_origin(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer, asynchronous: bool
) -> None:
    # httpx itself drops a client's auth when a redirect leaves the origin; the hops
    # Fetch follows by hand must too.
    server.routes[("GET", "/start")] = lambda r: Reply(302, b"", {"Location": "/same"})
    server.routes[("GET", "/same")] = lambda r: Reply(302, b"", {"Location": other.url("/land")})
    other.routes[("GET", "/land")] = ok
    auth = ("alice", "hunter2-client-pass")
    if asynchronous:
        fetch = Fetch(kit, async_client=httpx.AsyncClient(auth=auth))
        res = asyncio.run(fetch.aget(server.url("/start")))
    else:
        res = Fetch(kit, client=httpx.Client(auth=auth))(server.url("/start"))
    assert res.ok and res.record.meta["final_url"] == other.url("/land")
    assert [r.headers.get("Authorization", "")[:6] for r in server.requests] == ["Basic "] * 2
    assert "Authorization" not in other.requests[0].headers


def test_allow_secrets_given_as_one_str_is_refused(kit: ad.Toolkit) -> None:
    # Read as its letters, it would allow no reference, and say nothing of why.
    for make in (Fetch, Api):
        with pytest.raises(ad.ArgumentError, match="a list of secret references, not one str"):
            make(kit, allow_secrets="secret:env:RD_TOKEN")


def test_the_model_is_told_of_a_redirect_not_followed_and_only_of_one_that_was(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer
) -> None:
    server.routes[("GET", "/away")] = lambda r: Reply(302, b"", {"Location": other.url("/x")})
    server.routes[("GET", "/near")] = lambda r: Reply(302, b"", {"Location": server.url("/x")})
    server.routes[("GET", "/x")] = lambda r: Reply(200, b"plain", {"Content-Type": "text/plain"})
    Fetch(kit, timeout=5, origins=[server.url("/")])
    away = kit.handle("fetch", {"url": server.url("/away")})
    assert away.startswith("[HTTP 302, redirect not followed: ") and "origins" in away
    assert kit.handle("fetch", {"url": server.url("/near")}) == (
        f"[redirected to {server.url('/x')}]\nplain"
    )
    # the same page, its URL written another way: no redirect to speak of
    assert kit.handle("fetch", {"url": server.url("/x").replace("http:", "HTTP:")}) == "plain"
