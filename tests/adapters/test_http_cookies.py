"""A cookie is a call's own: one a server sets in answer to a call made as one identity
is never sent with a call made as another, or as none (a model's fetch), whether the
adapter made its client or was given one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import httpx2
import pytest

import addressable as ad
from addressable.adapters import Api, Fetch, Identity, Scope
from tests.helpers.httpserver import LocalServer, Reply, Request

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def kit() -> ad.Toolkit:
    return ad.Toolkit(ad.open_store("memory://"))


@pytest.fixture
def site(server: LocalServer) -> LocalServer:
    """/login sets a session cookie; /whoami answers with the Cookie header it got;
    /enter sets one and redirects to /home, which wants it."""

    def login(r: Request) -> Reply:
        return Reply(200, b"{}", {**JSON, "Set-Cookie": "session=ADMIN-SESSION; Path=/"})

    def whoami(r: Request) -> Reply:
        return Reply(200, json.dumps({"cookie": r.headers.get("Cookie")}).encode(), JSON)

    def enter(r: Request) -> Reply:
        return Reply(302, b"", {"Location": "/home", "Set-Cookie": "visit=V-1; Path=/"})

    server.routes[("GET", "/login")] = login
    server.routes[("GET", "/whoami")] = whoami
    server.routes[("GET", "/enter")] = enter
    server.routes[("GET", "/home")] = whoami
    return server


def _cookie(text: str) -> str | None:
    cookie: str | None = json.loads(text)["cookie"]
    return cookie


def _api(kit: ad.Toolkit, site: LocalServer, **kwargs: object) -> Api:
    return Api(
        kit,
        identities=[Identity(name="admin", headers={"X-Admin": "1"}), Identity(name="guest")],
        scope=Scope(origins=(site.url("/"),)),
        timeout=5,
        **kwargs,  # type: ignore[arg-type]
    )


def test_api_sends_no_cookie_of_one_identity_with_a_call_as_another(
    kit: ad.Toolkit, site: LocalServer
) -> None:
    api = _api(kit, site)
    api.get(site.url("/login"), identity="admin")
    shown = kit.handle("api", {"method": "GET", "url": site.url("/whoami"), "identity": "guest"})
    assert _cookie(shown) is None
    stored = [kit.store.read(r) for r in kit.store.records()]
    assert not any(b"ADMIN-SESSION" in payload for payload in stored)  # not echoed back

    async def go() -> str:
        try:
            await api.aget(site.url("/login"), identity="admin")
            return await kit.ahandle(
                "api", {"method": "GET", "url": site.url("/whoami"), "identity": "guest"}
            )
        finally:
            await api.aclose()

    assert _cookie(asyncio.run(go())) is None


def test_fetch_sends_no_cookie_of_an_identity_with_a_models_call(
    kit: ad.Toolkit, site: LocalServer
) -> None:
    fetch = Fetch(kit, identities=[Identity(name="admin", headers={"X-Admin": "1"})], timeout=5)
    fetch(site.url("/login"), identity="admin")
    assert _cookie(kit.handle("fetch", {"url": site.url("/whoami")})) is None


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: httpx.Client(timeout=5), id="httpx"),
        pytest.param(lambda: httpx2.Client(timeout=5), id="httpx2"),
    ],
)
def test_a_given_clients_jar_is_not_sent_across_identities(
    kit: ad.Toolkit, site: LocalServer, make: Callable[[], Any]
) -> None:
    with make() as client:
        api = _api(kit, site, client=client)
        api.get(site.url("/login"), identity="admin")
        shown = kit.handle(
            "api", {"method": "GET", "url": site.url("/whoami"), "identity": "guest"}
        )
        assert _cookie(shown) is None
        Fetch(kit, client=client, timeout=5)
        assert _cookie(kit.handle("fetch", {"url": site.url("/whoami")})) is None
        assert client.cookies.get("session") == "ADMIN-SESSION"  # its jar is left alone


def test_a_cookie_set_within_a_calls_redirects_goes_with_them(
    kit: ad.Toolkit, site: LocalServer
) -> None:
    Fetch(kit, timeout=5)
    shown = kit.handle("fetch", {"url": site.url("/enter")})
    assert shown.startswith("[redirected to ")
    assert _cookie(shown.split("\n", 1)[1]) == "visit=V-1"
    assert _cookie(kit.handle("fetch", {"url": site.url("/whoami")})) is None


def test_an_identitys_own_cookie_header_is_sent(kit: ad.Toolkit, site: LocalServer) -> None:
    Api(
        kit,
        identities=[Identity(name="me", headers={"Cookie": "sid=MINE"})],
        scope=Scope(origins=(site.url("/"),)),
        timeout=5,
    )
    shown = kit.handle("api", {"method": "GET", "url": site.url("/whoami"), "identity": "me"})
    assert _cookie(shown) == "sid=MINE"


def test_a_cookie_set_on_the_way_stays_on_its_origin(kit: ad.Toolkit, site: LocalServer) -> None:
    elsewhere = LocalServer()  # another port: another origin
    try:
        elsewhere.routes[("GET", "/whoami")] = site.routes[("GET", "/whoami")]

        def login(r: Request) -> Reply:
            # A session minted from the identity's token, then a redirect off the origin.
            headers = {"Location": elsewhere.url("/whoami"), "Set-Cookie": "session=ADMIN"}
            return Reply(302, b"", headers)

        site.routes[("GET", "/sso")] = login
        fetch = Fetch(kit, identities=[Identity(name="admin", headers={"X-Admin": "1"})])
        answer = fetch(site.url("/sso"), identity="admin")
        assert answer.record.status is ad.Status.OK
        assert _cookie(answer.text) is None
        assert "X-Admin" not in elsewhere.requests[-1].headers

        async def go() -> str:
            try:
                return (await fetch.aget(site.url("/sso"), identity="admin")).text
            finally:
                await fetch.aclose()

        assert _cookie(asyncio.run(go())) is None
    finally:
        elsewhere.stop()
