"""A `secret:` reference is the user's: resolved where the user wrote it (an Identity, an
adapter's configuration) or for names the user allowed, never in a model's arguments.
Each refusal is checked against a real loopback server that must receive nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

import addressable as ad
from addressable.adapters import Api, Fetch, Identity, Scope
from tests.helpers.httpserver import LocalServer, Page, Reply

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def test_a_model_cannot_send_an_environment_variable_through_fetch(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    value = secret_env("ANY_VAR")
    Fetch(kit)
    text = kit.handle("fetch", {"url": server.url("/c?d=secret:env:ANY_VAR")})
    assert text.startswith("error: ScopeError") and "secret:env:ANY_VAR" in text
    assert value not in text
    assert server.requests == []  # nothing was sent
    assert list(kit.store.records()) == []  # a refused call is not recorded


def test_an_async_model_call_is_refused_too(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    value = secret_env("ANY_VAR")
    Fetch(kit, allow_secrets=("ANY_VAR",))
    text = asyncio.run(kit.ahandle("fetch", {"url": server.url("/c?d=secret:env:ANY_VAR")}))
    assert text.startswith("error: ScopeError") and "secret:env:ANY_VAR" in text
    assert value not in text and server.requests == []


def test_a_name_allowed_for_code_is_still_never_resolved_for_the_model(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    value = secret_env("DOCS_KEY")
    server.pages[f"/doc?key={value}"] = Page(b"<p>the doc</p>")
    fetch = Fetch(kit, allow_secrets=("DOCS_KEY",))
    text = kit.handle("fetch", {"url": server.url("/doc?key=secret:env:DOCS_KEY")})
    assert text.startswith("error: ScopeError") and "secret:env:DOCS_KEY" in text
    assert server.requests == []
    res = fetch(server.url("/doc?key=secret:env:DOCS_KEY"))  # the user's own call
    assert res.ok and server.requests[-1].path == f"/doc?key={value}"
    assert res.record.args["url"] == server.url("/doc?key=secret:env:DOCS_KEY")


def test_a_plain_call_with_a_name_not_allowed_is_refused(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    secret_env("HOME_TOKEN")
    secret_env("DOCS_KEY")
    fetch = Fetch(kit, allow_secrets=("DOCS_KEY",))
    url = server.url("/c?a=secret:env:DOCS_KEY&b=secret:env:HOME_TOKEN")
    with pytest.raises(ad.ScopeError, match=r"secret:env:HOME_TOKEN .*allow_secrets"):
        fetch(url)

    async def go() -> None:
        try:
            await fetch.aget(url)
        finally:
            await fetch.aclose()

    with pytest.raises(ad.ScopeError, match="secret:env:HOME_TOKEN"):
        asyncio.run(go())
    assert server.requests == []
    assert list(kit.store.records()) == []


def test_identity_headers_the_user_wrote_are_resolved_for_the_model(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    value = secret_env("DOCS_TOKEN")
    server.routes[("GET", "/private")] = lambda r: Reply(200, b"ok", {"Content-Type": "text/plain"})
    me = Identity(name="me", headers={"X-Api-Key": "secret:env:DOCS_TOKEN"})
    Api(kit, identities=[me], scope=Scope(origins=(server.url(),)))
    text = kit.handle("api", {"method": "GET", "url": server.url("/private"), "identity": "me"})
    assert text == "ok"
    assert server.requests[-1].headers["X-Api-Key"] == value
    # Fetch has no scope of origins: a model cannot name its identities at all.
    Fetch(kit, identities=[me])
    refused = kit.handle("fetch", {"url": server.url("/private"), "identity": "me"})
    assert refused == (
        "error: fetch: argument 'identity' is not an argument of this tool (it takes: url)"
    )
    assert len(server.requests) == 1


def test_a_model_cannot_put_a_secret_in_an_api_url_within_its_origins(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    token = secret_env("TOKEN_A")
    value = secret_env("OTHER_VAR")
    server.routes[("GET", "/items")] = lambda r: Reply(200, b"[]", JSON)
    server.routes[("POST", "/items")] = lambda r: Reply(201, b"{}", JSON)
    api = Api(
        kit,
        identities=[Identity(name="a", headers={"Authorization": "Bearer secret:env:TOKEN_A"})],
        scope=Scope(origins=(server.url(),), actions=frozenset({"read", "write"})),
    )
    url = server.url("/items?q=secret:env:OTHER_VAR")
    for method in ("GET", "POST"):
        text = kit.handle("api", {"method": method, "url": url, "identity": "a", "body": {}})
        assert text.startswith("error: ScopeError") and "secret:env:OTHER_VAR" in text
        assert value not in text
    with pytest.raises(ad.ScopeError, match="secret:env:OTHER_VAR"):
        api.get(url, identity="a")
    with pytest.raises(ad.ScopeError, match="secret:env:OTHER_VAR"):
        api.post(url, identity="a", json_body={})
    assert server.requests == []
    assert list(kit.store.records()) == []
    assert api.get(server.url("/items"), identity="a").ok  # the identity still works
    assert server.requests[-1].headers["Authorization"] == f"Bearer {token}"


def test_a_model_cannot_verify_by_reading_a_url_with_a_secret(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    secret_env("TOKEN_A")
    secret_env("OTHER_VAR")
    server.routes[("POST", "/items")] = lambda r: Reply(201, b"{}", JSON)
    api = Api(
        kit,
        identities=[Identity(name="a", headers={"Authorization": "Bearer secret:env:TOKEN_A"})],
        scope=Scope(origins=(server.url(),), actions=frozenset({"read", "write"})),
    )
    action = api.post(server.url("/items"), identity="a", json_body={"n": 1})
    sent = len(server.requests)
    text = kit.handle(
        "api",
        {
            "method": "VERIFY",
            "action_id": action.id,
            "identity": "a",
            "url": server.url("/items?q=secret:env:OTHER_VAR"),
        },
    )
    assert text.startswith("error: ScopeError") and "secret:env:OTHER_VAR" in text
    assert len(server.requests) == sent


def test_an_allowed_name_in_an_api_url_is_resolved_for_code_and_rerun(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    secret_env("TOKEN_A")
    value = secret_env("ROW_KEY")
    server.routes[("GET", "/rows")] = lambda r: Reply(200, b'{"rows": 1}', JSON)
    api = Api(
        kit,
        identities=[Identity(name="a", headers={"Authorization": "Bearer secret:env:TOKEN_A"})],
        scope=Scope(origins=(server.url(),)),
        allow_secrets=("ROW_KEY",),
    )
    res = api.get(server.url("/rows?k=secret:env:ROW_KEY"), identity="a")
    assert server.requests[-1].path == f"/rows?k={value}"
    assert res.record.args["url"] == server.url("/rows?k=secret:env:ROW_KEY")
    again = kit.replay(res.id, verify=True)
    assert again.changed is False and server.requests[-1].path == f"/rows?k={value}"


def test_a_resolved_header_that_http_cannot_send_is_refused_without_its_value(
    kit: ad.Toolkit, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BROKEN_TOKEN", "tokval-777\nX-Injected: 1")
    server.routes[("GET", "/private")] = lambda r: Reply(200, b"ok", {"Content-Type": "text/plain"})
    fetch = Fetch(
        kit,
        identities=[
            Identity(name="me", headers={"Authorization": "Bearer secret:env:BROKEN_TOKEN"})
        ],
    )
    with pytest.raises(
        ad.ArgumentError, match="header 'Authorization' holds a line break"
    ) as refused:
        fetch(server.url("/private"), identity="me")
    assert "tokval-777" not in str(refused.value)
    assert server.requests == [] and list(kit.store.records()) == []
