"""No secret value reaches a store or a bundle, in any field or any common encoding.

A run of succeeding and failing calls (HTTP errors, timeouts, redirects, tools that raise
with the secret in their message) is made against real loopback servers and a real
disk store and redis-server; then every byte they hold, and an export bundle of each, is
searched for the value: raw, percent-encoded (quote, quote_plus), JSON- and
HTML-escaped, and for its random core alone, which every one of those forms contains."""

from __future__ import annotations

import base64
import codecs
import html
import io
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote, unquote_plus

import httpx
import pytest

import addressable as ad
from addressable.adapters import Api, Fetch, Identity, Scope
from tests.helpers import SECRET_VALUES
from tests.helpers.httpserver import LocalServer, Reply, Request


def forms(value: str) -> dict[str, bytes]:
    """The ways a value is commonly written down, each as bytes."""
    written = {
        "raw": value,
        "quote": quote(value, safe=""),
        "quote/": quote(value),
        "quote_plus": quote_plus(value),
        "quote lower": quote(value, safe="").lower(),
        "json ascii": json.dumps(value)[1:-1],
        "json utf-8": json.dumps(value, ensure_ascii=False)[1:-1],
        "html": html.escape(value),
        "repr": repr(value)[1:-1],
        "ascii": ascii(value)[1:-1],
    }
    return {name: text.encode("utf-8") for name, text in written.items()}


Secret = tuple[str, str]  # a value, and the random core every form of it contains


def found_in(data: bytes, secrets: list[Secret]) -> list[str]:
    hits = []
    for value, core in secrets:
        hits += [name for name, form in forms(value).items() if form in data]
        hits += ["core"] if core.encode() in data else []
    return hits


@pytest.fixture
def leaky(monkeypatch: pytest.MonkeyPatch) -> list[Secret]:
    """Two credentials with characters every encoder writes differently: LEAKY can go
    in a header (ASCII), LEAKY_WIDE cannot (it is not ASCII)."""
    made = []
    for name, shape in (("LEAKY", "s3cr/{} +&\"x=1<'>"), ("LEAKY_WIDE", "wïde/{} é€😀")):
        core = uuid.uuid4().hex
        value = shape.format(core)
        monkeypatch.setenv(name, value)
        SECRET_VALUES.add(value)
        made.append((value, core))
    return made


def echo_everything(*values: str) -> bytes:
    return "\n".join(
        form
        for value in values
        for form in (
            value,
            quote(value, safe=""),
            quote_plus(value),
            json.dumps({"v": value}),
            html.escape(value),
        )
    ).encode("utf-8")


def run_calls(
    kit: ad.Toolkit, server: LocalServer, other: LocalServer, secrets: list[Secret]
) -> list[str]:
    """Calls that succeed, fail, time out, redirect and raise, all near the secrets.
    Returns every text a model was shown."""
    (value, _), (wide, _) = secrets
    quoted = quote(value, safe="")

    def echo(request: Request) -> Reply:
        # A server that reflects what it was sent, in every encoding it knows of.
        got = " ".join(
            [unquote(request.path), unquote_plus(request.path), *request.headers.values()]
        )
        sent = [v for v in (value, wide) if v in got]
        note = quote(sent[0], safe="") if sent else "none"
        headers = {
            "Content-Type": f"text/plain; note={note}",
            "ETag": f'"{note}"',
            "Last-Modified": quote_plus(sent[0]) if sent else "none",
        }
        return Reply(200, echo_everything(*sent) + request.path.encode(), headers)

    def hop(request: Request) -> Reply:
        location = f"/final?d={quote_plus(value)}&e={quoted}"
        return Reply(302, b"", {"Location": location})

    def away(request: Request) -> Reply:
        return Reply(302, b"", {"Location": other.url(f"/land?d={quoted}")})

    def final(request: Request) -> Reply:
        return Reply(200, request.path.encode(), {"Content-Type": "text/plain"})

    def fail(request: Request) -> Reply:
        body = json.dumps({"error": f"bad key {value}", "seen": request.headers.get("X-Key")})
        return Reply(500, body.encode(), {"Content-Type": "application/json"})

    server.routes[("GET", "/echo")] = echo
    server.routes[("GET", "/hop")] = hop
    server.routes[("GET", "/away")] = away
    server.routes[("GET", "/final")] = final
    server.routes[("GET", "/fail")] = fail
    server.routes[("POST", "/fail")] = fail
    server.routes[("GET", "/api")] = echo
    server.routes[("PATCH", "/api")] = lambda r: Reply(200, echo_everything(value), delay=1.5)
    server.routes[("GET", "/slow")] = lambda r: Reply(200, b"late", delay=1.5)
    other.routes[("GET", "/land")] = final

    fetch = Fetch(
        kit,
        timeout=0.5,
        allow_secrets=("LEAKY",),
        identities=[Identity(name="me", headers={"X-Key": "secret:env:LEAKY"})],
    )
    shown: list[str] = []
    ref = "secret:env:LEAKY"
    # The wide secret first: a value is masked once the kit has resolved it.
    assert Fetch(kit, name="wide", allow_secrets=("LEAKY_WIDE",))(
        server.url("/echo?w=secret:env:LEAKY_WIDE")
    ).ok
    assert fetch(server.url(f"/echo?d={ref}")).ok
    assert fetch(server.url(f"/hop?d={ref}"), identity="me").ok
    assert fetch(server.url(f"/away?d={ref}"), identity="me").ok
    assert not fetch(server.url(f"/fail?d={ref}"), identity="me").ok
    with pytest.raises(httpx.TimeoutException):
        fetch(server.url(f"/slow?d={ref}"))
    shown.append(kit.handle("fetch", {"url": server.url("/echo"), "identity": "me"}))
    shown.append(kit.handle("fetch", {"url": server.url(f"/echo?d={ref}")}))  # refused
    shown.append(kit.handle("fetch", {"url": server.url("/hop"), "identity": "me"}))

    api = Api(
        kit,
        identities=[Identity(name="me", headers={"X-Key": "secret:env:LEAKY"})],
        scope=Scope(origins=(server.url(),), actions=frozenset({"read", "write"})),
        timeout=0.5,
    )
    assert api.get(server.url("/api"), identity="me").ok
    assert api.post(server.url("/fail"), identity="me", json_body={}).record.outcome is (
        ad.Outcome.UNKNOWN
    )
    cut = api.patch(server.url("/api"), identity="me", json_body={"a": 1}, marker_field="m")
    assert cut.record.outcome is ad.Outcome.UNKNOWN
    shown.append(kit.handle("api", {"method": "GET", "url": server.url("/api"), "identity": "me"}))

    @kit.tool(determinism="nondeterministic", key=lambda token: f"token/{quote(token)}")
    def upstream(token: str) -> str:
        if "fail" in token:
            raise RuntimeError(f"rejected {quote(value)} and {value!r} and {json.dumps(wide)}")
        return json.dumps({"token": value, "html": html.escape(value), "wide": wide})

    upstream(f"{value}")
    with pytest.raises(RuntimeError):
        upstream(f"fail {quote_plus(value)}")
    shown.append(kit.handle("upstream", {"token": f"fail {value}"}))
    kit.record(
        "manual",
        {"note": json.dumps(value), "nested": {value: [quote_plus(wide)]}},
        value.encode() + quote(value).encode(),
        determinism="nondeterministic",
        key=f"k {html.escape(value)}",
        error=f"oops {quote_plus(value)}",
        status=ad.Status.ERROR,
        media_type=f"text/plain; v={quoted}",
        meta={"final_url": f"http://x.test/?d={quote_plus(value)}", "v": [value]},
    )
    # The other origin was only reached by a redirect: it never got the secret.
    assert other.requests and all(found_in(r.path.encode(), secrets) == [] for r in other.requests)
    return shown


@pytest.fixture
def other() -> Iterator[LocalServer]:
    srv = LocalServer()
    yield srv
    srv.stop()


def disk_bytes(folder: Path) -> Iterator[tuple[str, bytes]]:
    for file in folder.rglob("*"):
        if file.is_file():
            yield str(file), file.read_bytes()


def redis_bytes(url: str) -> Iterator[tuple[str, bytes]]:
    import redis

    client = redis.Redis.from_url(url)
    try:
        for key in client.scan_iter(count=1000):
            kind = client.type(key).decode()
            if kind == "string":
                values = [client.get(key)]
            elif kind == "list":
                values = client.lrange(key, 0, -1)
            elif kind == "hash":
                values = [b for pair in client.hgetall(key).items() for b in pair]
            elif kind in ("set", "zset"):
                values = list(client.smembers(key) if kind == "set" else client.zrange(key, 0, -1))
            else:
                values = [repr(client.dump(key)).encode()]
            yield f"redis key {key!r}", key + b"\n" + b"\n".join(values)
    finally:
        client.close()


def bundle_bytes(store: ad.Store) -> Iterator[tuple[str, bytes]]:
    out = io.BytesIO()
    ad.export_bundle(store, out)
    data = out.getvalue()
    yield "bundle", data
    for line in data.splitlines():
        blob = json.loads(line).get("data")
        if blob is not None:
            yield "bundle blob", base64.b64decode(blob)


@pytest.mark.parametrize("kind", ["disk", "redis"])
def test_no_form_of_a_secret_reaches_a_store_or_a_bundle(
    kind: str,
    tmp_path: Path,
    server: LocalServer,
    other: LocalServer,
    leaky: list[Secret],
    request: pytest.FixtureRequest,
) -> None:
    if kind == "disk":
        store = ad.open_store(str(tmp_path / "store"))
    else:
        redis_url: str = request.getfixturevalue("redis_url")
        store = ad.open_store(f"{redis_url}?namespace=mask-{uuid.uuid4().hex[:8]}")
    kit = ad.Toolkit(store, session="masking")
    shown = run_calls(kit, server, other, leaky)
    assert server.requests, "the calls reached the server"
    assert [name for text in shown for name in found_in(text.encode(), leaky)] == [], shown
    records = list(store.records())
    assert len(records) >= 10 and any(r.status is ad.Status.ERROR for r in records)
    assert any("[secret:env:LEAKY]" in (r.error or "") for r in records)
    assert any("[secret:env:LEAKY]" in json.dumps(r.meta) for r in records)
    assert any(b"[secret:env:LEAKY_WIDE]" in store.read(r) for r in records)
    assert any(b"[secret:env:LEAKY]" in store.read(r) for r in records)
    places = list(bundle_bytes(store))
    if kind == "disk":
        store.close()
        places += list(disk_bytes(tmp_path / "store"))
    else:
        places += list(redis_bytes(redis_url))
        store.close()
    leaks = [(where, found_in(data, leaky)) for where, data in places]
    assert [leak for leak in leaks if leak[1]] == []


@pytest.mark.parametrize("name", ["LEAKY", "LEAKY_WIDE"])
def test_masking_names_the_reference_in_every_form(
    leaky: list[Secret], disk_kit: ad.Toolkit, name: str
) -> None:
    kit = disk_kit
    value = kit.secrets.resolve(f"secret:env:{name}")
    masked = f"<[secret:env:{name}]>"
    for how, form in forms(value).items():
        assert kit.secrets.mask(f"<{form.decode()}>") == masked, how
        assert kit.secrets.mask_bytes(b"<" + form + b">") == masked.encode(), how


def test_a_record_error_is_masked(disk_kit: ad.Toolkit, secret_env: Callable[[str], str]) -> None:
    kit = disk_kit
    value = secret_env("PLAIN_TOKEN")
    kit.secrets.resolve("secret:env:PLAIN_TOKEN")

    @kit.tool(determinism="nondeterministic")
    def call() -> str:
        raise ValueError(f"the server refused {value}")

    with pytest.raises(ValueError):
        call()
    (rec,) = kit.store.records()
    assert rec.error == "ValueError: the server refused [secret:env:PLAIN_TOKEN]"


@pytest.mark.parametrize("charset", ["utf-16", "utf-16-be", "utf-32", "cp500", "latin-1"])
def test_a_secret_echoed_in_the_charset_the_answer_names_is_stored_masked(
    disk_kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str], charset: str
) -> None:
    # The payload is read later in the charset its media type names (replay, show, a
    # bundle's reader, another process that never resolved the secret): it is masked
    # as that reading spells it, not only as UTF-8 bytes.
    value = secret_env("ECHO_TOKEN")
    media = f"application/json; charset={charset}"

    def echo(request: Request) -> Reply:
        body = json.dumps({"you_sent": request.headers.get("Authorization")}, ensure_ascii=False)
        return Reply(200, body.encode(charset), {"Content-Type": media})

    server.routes[("GET", "/me")] = echo
    identity = Identity(name="me", headers={"Authorization": "Bearer secret:env:ECHO_TOKEN"})
    api = Api(disk_kit, identities=[identity], scope=Scope(origins=(server.url("/"),)))
    result = api.get(server.url("/me"), identity="me")
    stored = disk_kit.store.read(result.record)
    assert value not in stored.decode(charset, errors="replace")
    assert json.loads(stored.decode(charset)) == {"you_sent": "Bearer [secret:env:ECHO_TOKEN]"}
    assert result.record.media_type == media


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_a_secret_echoed_in_utf16_with_a_byte_order_mark_and_no_charset_is_masked(
    disk_kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str], codec: str
) -> None:
    # No charset named, but the mark says how a reader (a browser, `file`, Python's
    # "utf-16") takes the bytes.
    value = secret_env("MARKED_TOKEN")
    mark = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(
        codec, codecs.BOM_UTF32_LE
    )

    def echo(request: Request) -> Reply:
        body = f"you sent {request.headers.get('Authorization')}".encode(codec)
        return Reply(200, mark + body, {"Content-Type": "text/plain"})

    server.routes[("GET", "/me")] = echo
    identity = Identity(name="me", headers={"Authorization": "Bearer secret:env:MARKED_TOKEN"})
    api = Api(disk_kit, identities=[identity], scope=Scope(origins=(server.url("/"),)))
    result = api.get(server.url("/me"), identity="me")
    stored = disk_kit.store.read(result.record)
    assert stored.startswith(mark)
    text = stored[len(mark) :].decode(codec)
    assert value not in text and text == "you sent Bearer [secret:env:MARKED_TOKEN]"
