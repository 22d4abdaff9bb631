"""Credentials written in a URL never reach the store, and a URL that does not parse (or
parses two ways) is an ArgumentError before anything is sent or recorded: for Fetch and
Api, called from code and by a model."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from collections.abc import Callable
from urllib.parse import quote

import httpx
import pytest

import addressable as ad
from addressable.adapters import Api, Fetch, Identity, Scope
from addressable.adapters._urls import (
    CREDENTIAL_NAMES,
    is_credential_name,
    normalize_url,
    origin,
    redact_url,
)
from tests.helpers import SECRET_VALUES
from tests.helpers.httpserver import LocalServer, Reply

OK = Reply(200, b"ok", {"Content-Type": "text/plain"})
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl"


def _stored(kit: ad.Toolkit) -> str:
    """Every field of every record in the store, and every stub made of them, as text."""
    parts = []
    for record in kit.store.records():
        parts.append(json.dumps(record.model_dump(mode="json")))
        parts.append(json.dumps(ad.evict(record, store=kit.store).model_dump(mode="json")))
    return "\n".join(parts)


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


# What a model (or a user) may write in a URL, with the credential it holds: the path
# after the port. Each is fetched as written and stored without the credential.
WRITTEN = {
    "userinfo password": ("alice:PW-USERINFO-1@", "/a"),
    "userinfo that is a token": ("ghp_USERINFO_TOKEN_2@", "/a"),
    "token in a fragment": ("", "/cb#access_token=FRAG-TOKEN-3&expires_in=60"),
    "token in a routed fragment": ("", "/app#/cb?id_token=FRAG-TOKEN-4"),
    "jwt": ("", "/q?jwt=JWT-VALUE-5&q=1"),
    "AWS query signing": ("", "/q?AWSAccessKeyId=AWS-ID-6&Signature=AWS-SIG-7&Expires=9"),
    "X-Amz presigned": (
        "",
        "/q?X-Amz-Credential=AMZ-CRED-8&X-Amz-Security-Token=AMZ-TOK-9&X-Amz-Signature=AMZ-10",
    ),
    "semicolon separator": ("", "/q?x=1;api_key=SEMI-KEY-11"),
    "path parameter": ("", "/app;jsessionid=SESSION-12/page"),
    "camelCase name": ("", "/q?accessToken=CAMEL-13&apiKey=CAMEL-14"),
    "percent-encoded name": ("", "/q?client%5Fsecret=ENCODED-15"),
    "oauth code": ("", "/cb?code=OAUTH-CODE-16&state=xyz"),
    "jwt under another name": ("", f"/q?state={JWT}"),
    # A URL inside a parameter (next=, return_to=, redirect_uri=), as written or encoded.
    "url in a parameter": ("", "/cb?return_to=https://b.example/x?api_key=NESTED-17"),
    "encoded url in a parameter": (
        "",
        "/cb?next=" + quote("https://b.example/x?access_token=NESTED-18&p=1", safe=""),
    ),
    "url encoded twice": ("", "/cb?r=" + quote(quote("https://u:NESTED-19@b/", safe=""), safe="")),
}
# The credential each case holds, as it would be sent.
HELD = {
    "userinfo password": "PW-USERINFO-1",
    "userinfo that is a token": "ghp_USERINFO_TOKEN_2",
    "token in a fragment": "FRAG-TOKEN-3",
    "token in a routed fragment": "FRAG-TOKEN-4",
    "jwt": "JWT-VALUE-5",
    "AWS query signing": "AWS-",
    "X-Amz presigned": "AMZ-",
    "semicolon separator": "SEMI-KEY-11",
    "path parameter": "SESSION-12",
    "camelCase name": "CAMEL-1",
    "percent-encoded name": "ENCODED-15",
    "oauth code": "OAUTH-CODE-16",
    "jwt under another name": JWT,
    "url in a parameter": "NESTED-17",
    "encoded url in a parameter": "NESTED-18",
    "url encoded twice": "NESTED-19",
}


def _url(server: LocalServer, case: str) -> str:
    userinfo, path = WRITTEN[case]
    return f"http://{userinfo}127.0.0.1:{server.port}{path}"


def _answer_everything(server: LocalServer) -> None:
    for path in ("/a", "/cb", "/app", "/q", "/app;jsessionid=SESSION-12/page"):
        server.routes[("GET", path)] = lambda r: OK


@pytest.mark.parametrize("case", sorted(WRITTEN))
def test_a_credential_a_model_writes_in_a_url_is_sent_but_never_stored(
    kit: ad.Toolkit, server: LocalServer, case: str
) -> None:
    _answer_everything(server)
    Fetch(kit, timeout=5)
    url = _url(server, case)
    shown = kit.handle("fetch", {"url": url})
    assert shown.startswith("ok") and len(server.requests) == 1
    sent = server.requests[0]
    basic = sent.headers.get("Authorization", "Basic ").removeprefix("Basic ")
    wire = sent.path + " " + base64.b64decode(basic).decode()
    if "#" not in url:  # a fragment stays with the client; the rest goes as written
        assert HELD[case] in wire
    assert HELD[case] not in _stored(kit)
    assert HELD[case] not in shown
    record = next(iter(kit.store.records()))
    assert "redacted" in record.args["url"]  # "[redacted]", as the URL encodes it


def test_a_url_with_a_credential_keeps_one_key_and_one_id(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    _answer_everything(server)
    fetch = Fetch(kit, timeout=5)
    url = server.url("/q?jwt=JWT-VALUE-5&q=1")
    first, again = fetch(url), fetch(url)
    assert first.id == again.id and first.record.key == again.record.key
    assert first.record.key == server.url("/q?jwt=%5Bredacted%5D&q=1")
    other = fetch(f"http://bob:PW-2@127.0.0.1:{server.port}/a")
    assert other.record.key == server.url("/a")
    assert other.record.args["url"] == f"http://bob:%5Bredacted%5D@127.0.0.1:{server.port}/a"
    assert fetch(f"http://bob:PW-2@127.0.0.1:{server.port}/a").id == other.id


def test_a_redirect_that_carries_a_credential_is_kept_redacted(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    server.routes[("GET", "/login")] = lambda r: Reply(
        302, b"", {"Location": "/hop?session_token=HOP-TOKEN-1"}
    )
    server.routes[("GET", "/hop")] = lambda r: Reply(
        302, b"", {"Location": "/done?AWSAccessKeyId=AWS-ID-2&X-Amz-Signature=AMZ-SIG-3"}
    )
    server.routes[("GET", "/done")] = lambda r: OK
    Fetch(kit, timeout=5)
    shown = kit.handle("fetch", {"url": server.url("/login")})
    assert [r.path.split("?")[0] for r in server.requests] == ["/login", "/hop", "/done"]
    assert "AWS-ID-2" in server.requests[-1].path  # sent as the server asked
    record = next(iter(kit.store.records()))
    assert record.meta["redirects"][1] == server.url("/hop?session_token=[redacted]")
    assert record.meta["final_url"].endswith("AWSAccessKeyId=[redacted]&X-Amz-Signature=[redacted]")
    stored = _stored(kit)
    for held in ("HOP-TOKEN-1", "AWS-ID-2", "AMZ-SIG-3"):
        assert held not in stored and held not in shown


def test_an_error_message_does_not_repeat_a_credential(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    fetch = Fetch(kit, timeout=5)
    missing = fetch(server.url("/gone;sessionid=SESS-1?token=TOK-2#sig=SIG-3"))
    assert missing.record.error is not None and missing.record.error.startswith("HTTP 404")
    server.stop()
    with pytest.raises(httpx.ConnectError):
        fetch(f"http://carol:PW-4@127.0.0.1:{server.port}/down?api-key=KEY-5")
    stored = _stored(kit)
    for held in ("SESS-1", "TOK-2", "SIG-3", "PW-4", "KEY-5"):
        assert held not in stored


def _api(kit: ad.Toolkit, server: LocalServer) -> Api:
    return Api(
        kit,
        identities=[Identity(name="ops", headers={"X-Ops": "1"})],
        scope=Scope(origins=(server.url(""),), actions=frozenset({"read", "write"})),
        timeout=5,
    )


def test_api_keeps_no_credential_written_in_a_url(kit: ad.Toolkit, server: LocalServer) -> None:
    server.routes[("GET", "/items")] = lambda r: Reply(200, b'{"n": "ad-x"}')
    server.routes[("POST", "/items")] = lambda r: Reply(201, b"{}")
    api = _api(kit, server)
    base = f"http://dave:PW-1@127.0.0.1:{server.port}/items"  # userinfo: the user's own
    read = api.get(f"{base}?access_token=TOK-2", identity="ops")
    assert read.ok and "TOK-2" in server.requests[-1].path
    written = server.url("/items;jwt=JWT-3#sig=SIG-4")
    wrote = kit.handle("api", {"method": "POST", "url": written, "identity": "ops", "body": {}})
    action_id = wrote.split()[1].rstrip(":")
    api.verify(action_id, identity="ops", read=f"{base}?key=K-5")
    assert len(server.requests) == 3
    assert read.record.key == f"GET {server.url('/items?access_token=%5Bredacted%5D')} as ops"
    stored = _stored(kit)
    for held in ("PW-1", "TOK-2", "JWT-3", "SIG-4", "K-5"):
        assert held not in stored


# URLs no HTTP call can be made to, or that Python and the HTTP client read differently.
BAD_URLS = {
    "port over 65535": "http://127.0.0.1:99999/",
    "two ports": "http://127.0.0.1:{port}:1/",
    "unclosed IPv6 bracket": "http://[bad/",
    "NUL": "http://127.0.0.1:{port}/a\x00b",
    "CR LF": "http://127.0.0.1:{port}/a\r\nX-Injected: 1",
    "tab": "http://127.0.0.1:{port}/\t@example.com/",
    "NFKC netloc": "http://ex\uff0fample:PW-NFKC@127.0.0.1:{port}/",
    "IDNA": "http://\u2100.com/",
    "space before": " http://127.0.0.1:{port}/",
    "no host": "http:127.0.0.1:{port}/",
    "another scheme": "ftp://127.0.0.1:{port}/",
    "not a URL": "a page",
    "host label over 63": "http://" + "a" * 64 + ".example/",
    "empty host label": "http://a..b/",
    "host name over 253": "http://" + "a." * 127 + "example/",
}


def _bad(server: LocalServer, case: str) -> str:
    return BAD_URLS[case].replace("{port}", str(server.port))


def _refused(exc: pytest.ExceptionInfo[ad.ArgumentError], url: str) -> None:
    message = str(exc.value)
    assert "\n" not in message and "PW-NFKC" not in message
    assert "URL" in message


@pytest.mark.parametrize("case", sorted(BAD_URLS))
def test_fetch_refuses_a_bad_url_before_anything_is_sent(
    kit: ad.Toolkit, server: LocalServer, case: str
) -> None:
    server.routes[("GET", "/")] = lambda r: OK
    fetch = Fetch(kit, timeout=5)
    url = _bad(server, case)
    with pytest.raises(ad.ArgumentError) as raised:
        fetch(url)
    _refused(raised, url)

    async def go() -> None:
        try:
            await fetch.aget(url)
        finally:
            await fetch.aclose()

    with pytest.raises(ad.ArgumentError):
        asyncio.run(go())
    shown = kit.handle("fetch", {"url": url})
    assert shown.startswith("error: ArgumentError: ") and "\n" not in shown
    assert asyncio.run(kit.ahandle("fetch", {"url": url})).startswith("error: ArgumentError: ")
    assert server.requests == []
    assert list(kit.store.records()) == []


@pytest.mark.parametrize("case", sorted(BAD_URLS))
def test_api_refuses_a_bad_url_before_anything_is_sent(
    kit: ad.Toolkit, server: LocalServer, case: str
) -> None:
    api = _api(kit, server)
    url = _bad(server, case)
    with pytest.raises(ad.ArgumentError) as raised:
        api.get(url, identity="ops")
    _refused(raised, url)
    with pytest.raises(ad.ArgumentError):
        api.post(url, identity="ops", json_body={"a": 1})
    for method in ("GET", "POST", "DELETE"):
        shown = kit.handle("api", {"method": method, "url": url, "identity": "ops"})
        assert shown.startswith("error: ArgumentError: ") and "\n" not in shown
    assert server.requests == []
    assert list(kit.store.records()) == []


def test_a_model_call_to_api_without_a_url_is_an_argument_error(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    _api(kit, server)
    shown = kit.handle("api", {"method": "GET", "identity": "ops"})
    assert shown == "error: ArgumentError: api: GET needs the argument 'url'"
    shown = kit.handle("api", {"method": "VERIFY", "identity": "ops"})
    assert shown == "error: ArgumentError: api: VERIFY needs the argument 'action_id'"
    assert server.requests == [] and list(kit.store.records()) == []


def test_a_secret_cannot_move_a_url_to_another_host(
    kit: ad.Toolkit, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = LocalServer()
    try:
        value = f"x@127.0.0.1:{other.port}/"
        SECRET_VALUES.add(value)
        monkeypatch.setenv("ODD_PASSWORD", value)
        fetch = Fetch(kit, timeout=5, allow_secrets=("ODD_PASSWORD",))
        url = f"http://u:secret:env:ODD_PASSWORD@127.0.0.1:{server.port}/"
        with pytest.raises(ad.ArgumentError, match="points elsewhere") as raised:
            fetch(url)
        assert value not in str(raised.value)
        assert other.requests == [] and server.requests == []
        assert list(kit.store.records()) == []
    finally:
        other.stop()


def test_secret_references_in_a_url_stay_as_written(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    password = secret_env("SITE_PASSWORD")
    server.routes[("GET", "/a")] = lambda r: OK
    fetch = Fetch(kit, timeout=5, allow_secrets=("SITE_PASSWORD",))
    url = f"http://ann:secret:env:SITE_PASSWORD@127.0.0.1:{server.port}/a"
    res = fetch(url)
    assert res.ok and res.record.args["url"] == url
    sent = base64.b64decode(server.requests[0].headers["Authorization"].split()[1]).decode()
    assert sent == f"ann:{password}"
    assert password not in _stored(kit)


@pytest.mark.parametrize(
    "name",
    [
        "token", "access_token", "id_token", "refresh_token", "jwt", "key", "api_key",
        "apikey", "apiKey", "x-api-key", "secret", "client_secret", "password", "passwd",
        "pwd", "signature", "sig", "X-Amz-Signature", "X-Amz-Credential",
        "X-Amz-Security-Token", "X-Goog-Signature", "AWSAccessKeyId", "session",
        "sessionid", "jsessionid", "PHPSESSID", "auth", "authorization", "code",
        "oauth_verifier", "sessionToken", "SAMLResponse", "TOKEN", "auth[token]",
        "secretkey", "accesskey", "privatekey", "appkey", "authkey", "clientkey",
        "apisecretkey", "passkey", "sign", "hmac", "pageAccessToken",
    ],
)  # fmt: skip
def test_credential_names(name: str) -> None:
    assert is_credential_name(name)
    assert redact_url(f"https://h/p?{name}=v1&q=2") == f"https://h/p?{name}=[redacted]&q=2"


@pytest.mark.parametrize(
    "name",
    ["q", "page", "id", "client_id", "zipcode", "country_code", "keyword", "monkey",
     "author", "sort", "format", "Expires", "X-Amz-Date", "state", "lang",
     "pageToken", "nextPageToken", "page_token", "syncToken", "continuation_token",
     "cursor", "sort_key", "cacheKey", "primary_key", "token_type", "auth_type",
     "token_type_hint", "max_tokens", "maxTokens", "token_count", "min_keys"],
)  # fmt: skip
def test_names_that_are_not_credentials(name: str) -> None:
    assert not is_credential_name(name)
    assert redact_url(f"https://h/p?{name}=v1") == f"https://h/p?{name}=v1"


def test_each_page_of_a_listing_keeps_a_key_of_its_own(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    _answer_everything(server)
    fetch = Fetch(kit, timeout=5)
    pages = [fetch(server.url(f"/items?pageToken={t}&api_key=K-9")) for t in ("p1", "p2")]
    assert pages[0].record.key == server.url("/items?api_key=%5Bredacted%5D&pageToken=p1")
    assert pages[0].record.key != pages[1].record.key
    assert "K-9" not in _stored(kit)


def test_a_url_whose_credential_was_not_kept_is_not_fetched_again(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    _answer_everything(server)
    fetch = Fetch(kit, timeout=5)
    kept = fetch(server.url("/doc?access_token=T-1"))
    sent = len(server.requests)
    with pytest.raises(ad.NotReplayable, match="credential written in its URL was not kept"):
        kit.replay(kept.id, verify=True)
    assert len(server.requests) == sent  # "[redacted]" was never sent in its place
    plain = fetch(server.url("/doc?q=1"))
    assert kit.replay(plain.id, verify=True).changed is False


def test_an_ipv6_origin_keeps_its_brackets() -> None:
    # [::1]:8080 and [::1:8080] are two origins: port 8080 of ::1, and port 80 of ::1:8080.
    assert origin("http://[::1]:8080/") == "http://[::1]:8080"
    assert origin("http://[::1:8080]/") == "http://[::1:8080]"
    assert normalize_url("http://[::1]:8080/a") != normalize_url("http://[::1:8080]/a")


def test_every_name_of_the_one_list_is_a_credential() -> None:
    assert all(is_credential_name(name) for name in CREDENTIAL_NAMES)


def test_redaction_is_total_and_leaves_the_rest_as_written() -> None:
    for text in ("", "a page", "http://[bad/", "http://h:99999/?token=x", "//h/?key=1#"):
        redact_url(text)
    assert redact_url("http://h:99999/?token=x") == "http://h:99999/?token=[redacted]"
    kept = "HTTP://Host/A%20b?x=1&y=%2F#frag"
    assert redact_url(kept) == kept
    once = redact_url("http://u:p@h/?token=t#code=c")
    assert redact_url(once) == once == "http://u:%5Bredacted%5D@h/?token=[redacted]#code=[redacted]"


@pytest.mark.parametrize("method", ["GET", "POST", "VERIFY"])
def test_a_model_cannot_send_api_credentials_of_its_own_in_a_url(
    kit: ad.Toolkit, server: LocalServer, method: str
) -> None:
    # httpx would send the userinfo as Basic auth in place of the identity's header.
    server.routes[("POST", "/items")] = lambda r: Reply(201, b"{}")
    api = _api(kit, server)
    done = api.post(server.url("/items"), identity="ops", json_body={})
    url = f"http://mallory:PW-M@127.0.0.1:{server.port}/items"
    arguments = {"method": method, "url": url, "identity": "ops", "action_id": done.id}
    shown = kit.handle("api", {**arguments, "body": {}})
    assert shown.startswith("error: ScopeError: ") and "user name or password" in shown
    assert "\n" not in shown and "PW-M" not in shown
    assert asyncio.run(kit.ahandle("api", arguments)).startswith("error: ScopeError: ")
    assert len(server.requests) == 1  # the user's own write only
    assert [r.id for r in kit.store.records()] == [done.id]


def test_redact_urls_finds_every_url_in_text_and_json() -> None:
    from addressable.core.credentials import redact_urls

    # A password may hold a quote unencoded; a URL may be a key of a mapping.
    assert redact_urls("https://bob:it's-hunter2@host/x") == "https://bob:%5Bredacted%5D@host/x"
    assert "hunter2" not in redact_urls("see https://h/x?token=a'hunter2 now")
    data = {"https://bob:hunter2@host/": ["ok https://h/y?api_key=k3y", 1, None]}
    assert redact_urls(data) == {
        "https://bob:%5Bredacted%5D@host/": ["ok https://h/y?api_key=[redacted]", 1, None]
    }
    # Quoted as errors quote them: the credential goes, the text stays readable.
    said = "Client error '404 Not Found' for url 'https://u:pw123456@h/x?page=2'"
    assert redact_urls(said) == (
        "Client error '404 Not Found' for url 'https://u:%5Bredacted%5D@h/x?page=2'"
    )
    assert redact_urls("no url here") == "no url here"


def test_a_write_whose_url_credential_was_not_kept_is_not_verified_with_it_redacted(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    # A server that answers 404 to a wrong key (as GitHub does) would read "[redacted]"
    # as a resource not there: the write would be judged not applied, inviting a retry.
    def items(request: object) -> Reply:
        keyed = "api_key=K-1" in server.requests[-1].path
        return Reply(200 if keyed else 404, b'{"name": "a"}')

    server.routes[("GET", "/items")] = items
    server.routes[("POST", "/items")] = lambda r: Reply(500, b"{}")  # it may have applied
    api = _api(kit, server)
    url = server.url("/items?api_key=K-1")
    wrote = kit.handle("api", {"method": "POST", "url": url, "identity": "ops", "body": {}})
    action_id = wrote.split()[1].rstrip(":")
    sent = len(server.requests)
    told = kit.handle("api", {"method": "VERIFY", "action_id": action_id, "identity": "ops"})
    assert told.startswith("error: NotReplayable: api: action ") and "give the URL to read" in told
    assert len(server.requests) == sent and kit.outcome(action_id) is not ad.Outcome.NOT_APPLIED
    with pytest.raises(ad.NotReplayable, match="credential was not kept"):
        api.verify(action_id, identity="ops")
    # given the URL to read, it reads it
    api.verify(action_id, identity="ops", read=url)
    assert kit.outcome(action_id) is ad.Outcome.COMPLETED


@pytest.mark.parametrize("userinfo", ["bot:secret:env:TOK", "secret:env:TOK"])
def test_a_secret_in_a_urls_userinfo_is_masked_in_the_header_it_becomes(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str], userinfo: str
) -> None:
    # httpx sends a URL's user and password as a Basic Authorization header: a server
    # that echoes the request's headers (a debug page) echoes the secret in base64.
    value = secret_env("TOK")
    server.routes[("GET", "/headers")] = lambda r: Reply(
        200, json.dumps(server.requests[-1].headers).encode(), {"Content-Type": "application/json"}
    )
    fetch = Fetch(kit, timeout=5, allow_secrets=["TOK"])
    got = fetch(f"http://{userinfo}@127.0.0.1:{server.port}/headers")
    user = "bot" if userinfo.startswith("bot:") else value
    password = value if userinfo.startswith("bot:") else ""
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    assert server.requests[-1].headers.get("Authorization") == f"Basic {token}"  # it was sent
    bundle = io.BytesIO()
    ad.export_bundle(kit.store, bundle)
    for kept in (got.payload.decode(), _stored(kit), bundle.getvalue().decode()):
        assert token not in kept and value not in kept
    assert "Basic [secret:env:TOK]" in got.payload.decode()


@pytest.mark.parametrize(
    ("url", "held"),
    [
        ("http://h/proxy/https%3A%2F%2Fapi.example%2Fv1%3Faccess_token%3DTOK-1", "TOK-1"),
        ("http://h/login/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.U0lHLTI", "U0lHLTI"),
        ("http://h/x?redirect=//u:PW-3@other.example/", "PW-3"),
        ("http://h/x?next=%2F%2Fu%3APW-4%40other.example%2F", "PW-4"),
    ],
)
def test_credentials_in_a_path_or_a_scheme_relative_url_are_redacted(url: str, held: str) -> None:
    # a URL percent-encoded in a path segment (a proxy's), a token as a segment of its
    # own (a magic link), and a URL with no scheme in a parameter's value
    kept = redact_url(url)
    assert held not in kept and "redacted" in kept
    assert redact_url(kept) == kept
    assert redact_url("http://h/a%20b/c%2Fd/eyJnot-a-token?q=//h/p") == (
        "http://h/a%20b/c%2Fd/eyJnot-a-token?q=//h/p"
    )
