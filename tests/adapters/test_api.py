"""The Api adapter against a real invoice server on 127.0.0.1 (respx only for what a
real server cannot do on demand: a reset after the request went out)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx

import addressable as ad
from addressable.adapters import Api, Identity, ResponseTooLarge, Scope
from tests.helpers.httpserver import LocalServer, Reply, Request


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


class Invoices:
    """Invoice 1042, owned by user_a; a PATCH can be applied late, or never."""

    def __init__(self, server: LocalServer, tokens: dict[str, str]) -> None:
        self.invoice: dict[str, Any] = {"id": 1042, "owner": "user_a", "status": "open", "memo": ""}
        self.owners = {
            f"Bearer {tokens['user_a']}": "user_a",
            f"Bearer {tokens['user_b']}": "user_b",
        }
        self.apply = True
        self.delay = 0.0
        self.reply_status = 200
        self.echo_token = False
        server.routes[("GET", "/invoices/1042")] = self.read
        server.routes[("PATCH", "/invoices/1042")] = self.patch

    def _who(self, request: Request) -> str | None:
        return self.owners.get(request.headers.get("Authorization", ""))

    def read(self, request: Request) -> Reply:
        if self._who(request) != self.invoice["owner"]:
            return Reply(403, b'{"error": "forbidden"}', {"Content-Type": "application/json"})
        body = dict(self.invoice)
        if self.echo_token:
            body["seen_auth"] = request.headers.get("Authorization")
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def patch(self, request: Request) -> Reply:
        if self._who(request) != self.invoice["owner"]:
            return Reply(403, b'{"error": "forbidden"}', {"Content-Type": "application/json"})
        if self.apply:
            self.invoice.update(json.loads(request.body))
        return Reply(
            self.reply_status,
            json.dumps(self.invoice).encode(),
            {"Content-Type": "application/json"},
            delay=self.delay,
        )


@pytest.fixture
def tokens(secret_env: Callable[[str], str]) -> dict[str, str]:
    return {"user_a": secret_env("TOKEN_A"), "user_b": secret_env("TOKEN_B")}


@pytest.fixture
def invoices(server: LocalServer, tokens: dict[str, str]) -> Invoices:
    return Invoices(server, tokens)


IDENTITIES = [
    Identity(name="user_a", headers={"Authorization": "Bearer secret:env:TOKEN_A"}),
    Identity(name="user_b", headers={"Authorization": "Bearer secret:env:TOKEN_B"}),
]


def make_api(
    kit: ad.Toolkit,
    server: LocalServer,
    *,
    timeout: float = 2.0,
    identities: tuple[str, ...] | None = ("user_a",),
) -> Api:
    scope = Scope(
        origins=(server.url(),),
        identities=identities,
        actions=frozenset({"read", "replay", "write"}),
    )
    return Api(kit, identities=IDENTITIES, scope=scope, timeout=timeout)


def test_a_get_is_a_reference_with_a_max_age(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    api = make_api(kit, server)
    res = api.get(server.url("/invoices/1042"), identity="user_a")
    assert json.loads(res.payload)["owner"] == "user_a"
    rec = res.record
    assert rec.determinism is ad.Determinism.DETERMINISTIC and rec.max_age is not None
    assert rec.key == f"GET {server.url('/invoices/1042')} as user_a"
    assert kit.replay(res.id, verify=True).changed is False
    invoices.invoice["status"] = "paid"
    assert kit.replay(res.id, verify=True).changed is True


def test_a_patch_outside_the_scope_is_refused_and_nothing_is_sent(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    api = make_api(kit, server)
    with pytest.raises(ad.ScopeError, match="identity 'user_b' is outside the scope"):
        api.patch(server.url("/invoices/1042"), identity="user_b", json_body={"status": "void"})
    with pytest.raises(ad.ScopeError, match="not an allowed origin"):
        api.patch("http://127.0.0.2:9/invoices/1042", identity="user_a", json_body={})
    reader = Api(kit, identities=IDENTITIES, name="reader", scope=Scope(origins=(server.url(),)))
    with pytest.raises(ad.ScopeError, match="reversible-write is outside the scope"):
        reader.patch(server.url("/invoices/1042"), identity="user_a", json_body={})
    assert server.requests == []
    assert invoices.invoice["status"] == "open"


def test_a_late_answer_is_unknown_until_verify_finds_it_applied(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    api = make_api(kit, server, timeout=1.0)
    invoices.delay = 2.5  # applied at once, answered after the client has given up
    res = api.patch(
        server.url("/invoices/1042"),
        identity="user_a",
        json_body={"status": "paid"},
        marker_field="memo",
    )
    rec = res.record
    assert rec.outcome is ad.Outcome.UNKNOWN and rec.status is ad.Status.ERROR
    assert rec.error is not None and rec.error.startswith("ReadTimeout after sending")
    patches = [r for r in server.requests if r.method == "PATCH"]
    assert len(patches) == 1  # sent once: never retried on its own
    assert patches[0].headers["Idempotency-Key"] == rec.idempotency_key
    marker = rec.meta["marker"]
    assert json.loads(patches[0].body) == {"status": "paid", "memo": marker}
    invoices.delay = 0.0
    checked = api.verify(res.id, identity="user_a")
    assert checked.record.outcome is ad.Outcome.COMPLETED
    assert checked.record.meta["verifies"] == res.id
    assert api.outcome(res.id) is ad.Outcome.COMPLETED
    assert kit.get(res.id).outcome is ad.Outcome.UNKNOWN  # the record itself never changes


def test_a_write_never_applied_nor_answered_is_not_applied_after_verify(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    api = make_api(kit, server, timeout=1.0)
    invoices.apply, invoices.delay = False, 2.5
    res = api.patch(
        server.url("/invoices/1042"),
        identity="user_a",
        json_body={"status": "paid"},
        marker_field="memo",
    )
    assert res.record.outcome is ad.Outcome.UNKNOWN
    invoices.delay = 0.0
    assert api.verify(res.id, identity="user_a").record.outcome is ad.Outcome.NOT_APPLIED
    assert kit.outcome(res.id) is ad.Outcome.NOT_APPLIED


def test_a_verify_read_that_is_refused_says_nothing_and_cannot_undo_a_known_outcome(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    # A model's VERIFY may read as another identity, or another URL: a 403 then says
    # nothing of the write, and a write the server answered 2xx stays completed.
    api = make_api(kit, server, timeout=1.0, identities=("user_a", "user_b"))
    done = api.patch(server.url("/invoices/1042"), identity="user_a", json_body={"status": "x"})
    assert done.record.outcome is ad.Outcome.COMPLETED
    refused = api.verify(done.id, identity="user_b")
    assert refused.record.outcome is ad.Outcome.UNKNOWN
    assert kit.outcome(done.id) is ad.Outcome.COMPLETED
    invoices.delay = 2.5
    late = api.patch(server.url("/invoices/1042"), identity="user_a", json_body={"status": "y"})
    invoices.delay = 0.0
    assert late.record.outcome is ad.Outcome.UNKNOWN
    assert api.verify(late.id, identity="user_b").record.outcome is ad.Outcome.UNKNOWN
    assert kit.outcome(late.id) is ad.Outcome.UNKNOWN


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        pytest.param(200, ad.Outcome.COMPLETED, id="2xx"),
        pytest.param(404, ad.Outcome.NOT_APPLIED, id="404"),
        pytest.param(409, ad.Outcome.NOT_APPLIED, id="409"),
        pytest.param(408, ad.Outcome.UNKNOWN, id="408"),
        pytest.param(429, ad.Outcome.UNKNOWN, id="429"),
        pytest.param(500, ad.Outcome.UNKNOWN, id="500"),
        pytest.param(503, ad.Outcome.UNKNOWN, id="503"),
    ],
)
def test_outcome_by_status(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices, status: int, outcome: ad.Outcome
) -> None:
    invoices.reply_status = status
    res = make_api(kit, server).patch(
        server.url("/invoices/1042"), identity="user_a", json_body={"status": "paid"}
    )
    assert res.record.outcome is outcome
    assert res.record.meta["status_code"] == status


def test_nothing_sent_is_not_applied(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    api = make_api(kit, server)
    url = server.url("/invoices/1042")
    server.stop()
    res = api.patch(url, identity="user_a", json_body={"status": "paid"})
    assert res.record.outcome is ad.Outcome.NOT_APPLIED
    assert "before anything was sent" in (res.record.error or "")


def test_a_reset_after_sending_and_a_5xx_after_the_write_are_unknown(
    kit: ad.Toolkit, secret_env: Callable[[str], str]
) -> None:
    secret_env("TOKEN_A")
    api = Api(
        kit,
        identities=IDENTITIES[:1],
        scope=Scope(origins=("https://billing.example",), actions=frozenset({"read", "write"})),
    )
    url = "https://billing.example/invoices/7"
    with respx.mock:
        respx.patch(url).mock(side_effect=httpx.RemoteProtocolError("connection reset"))
        reset = api.patch(url, identity="user_a", json_body={"status": "paid"})
        respx.post("https://billing.example/invoices").mock(
            return_value=httpx.Response(502, json={"error": "bad gateway"})
        )
        gateway = api.post(
            "https://billing.example/invoices", identity="user_a", json_body={"amount": 10}
        )
    assert reset.record.outcome is ad.Outcome.UNKNOWN
    assert "after sending" in (reset.record.error or "")
    assert gateway.record.outcome is ad.Outcome.UNKNOWN


def test_a_masked_value_says_so(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices, tokens: dict[str, str]
) -> None:
    invoices.echo_token = True
    api = make_api(kit, server)
    res = api.get(server.url("/invoices/1042"), identity="user_a")
    assert tokens["user_a"] not in res.text
    assert json.loads(res.payload)["seen_auth"] == "Bearer [secret:env:TOKEN_A]"
    text = kit.handle(
        "api", {"method": "GET", "url": server.url("/invoices/1042"), "identity": "user_a"}
    )
    assert "[secret:env:TOKEN_A]" in text and tokens["user_a"] not in text


def test_the_model_can_write_and_verify(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    make_api(kit, server)
    text = kit.handle(
        "api",
        {
            "method": "PATCH",
            "url": server.url("/invoices/1042"),
            "identity": "user_a",
            "body": {"status": "paid"},
        },
    )
    assert text.startswith("[action ") and ": completed]" in text.splitlines()[0]
    action_id = text.split()[1].rstrip(":")
    checked = kit.handle("api", {"method": "VERIFY", "action_id": action_id, "identity": "user_a"})
    assert checked.endswith("completed; every field written has the value written")
    refused = kit.handle(
        "api",
        {"method": "PATCH", "url": server.url("/invoices/1042"), "identity": "user_b", "body": {}},
    )
    assert refused.startswith("error: ScopeError")


def test_an_api_with_no_scope_allows_nothing(kit: ad.Toolkit, server: LocalServer) -> None:
    api = Api(kit, identities=IDENTITIES)
    with pytest.raises(ad.ScopeError, match="not an allowed origin"):
        api.get(server.url("/invoices/1042"), identity="user_a")
    assert server.requests == []


def test_an_answer_over_the_size_limit_is_not_kept(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    # A model may pick any in-scope URL: an answer of hundreds of megabytes is read only
    # up to the limit, never held whole or stored.
    big = json.dumps({"rows": ["x" * 100] * 200}).encode()  # over 20 KB
    server.routes[("GET", "/export")] = lambda request: Reply(
        200, big, {"Content-Type": "application/json"}
    )
    scope = Scope(origins=(server.url(),), actions=frozenset({"read", "write"}))
    api = Api(kit, identities=IDENTITIES, scope=scope, max_bytes=10_000)
    with pytest.raises(ResponseTooLarge, match="over the limit of 10,000 bytes"):
        api.get(server.url("/export"), identity="user_a")
    (read,) = kit.store.records()
    assert read.status is ad.Status.ERROR and "ResponseTooLarge" in (read.error or "")
    assert kit.handle("api", {"method": "GET", "url": server.url("/export"), "identity": "user_a"})
    assert kit.store.stats().blob_bytes < 10_000  # nothing of the body stored

    # A write's answer over the limit: its status still gives the outcome.
    invoices.invoice["memo"] = "m" * 20_000
    done = api.patch(server.url("/invoices/1042"), identity="user_a", json_body={"status": "paid"})
    assert done.record.outcome is ad.Outcome.COMPLETED and done.ok
    assert done.record.meta["body_over"] == 10_000 and done.record.meta["status_code"] == 200
    assert done.text.startswith("the answer to PATCH") and len(done.payload) < 200
    assert invoices.invoice["status"] == "paid"

    async def write_async() -> ad.Result:
        return await api.awrite(
            "PATCH", server.url("/invoices/1042"), identity="user_a", json_body={"status": "void"}
        )

    later = asyncio.run(write_async())
    assert later.record.outcome is ad.Outcome.COMPLETED and later.record.meta["body_over"] == 10_000


def test_a_verification_whose_read_is_over_the_limit_is_unknown(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    scope = Scope(origins=(server.url(),), actions=frozenset({"read", "write"}))
    api = Api(kit, identities=IDENTITIES, scope=scope, max_bytes=10_000)
    done = api.patch(server.url("/invoices/1042"), identity="user_a", json_body={"status": "x"})
    invoices.invoice["memo"] = "m" * 20_000  # the read back is now over the limit
    verdict = api.verify(done.id, identity="user_a")
    assert verdict.record.tool == "api_verify" and verdict.record.outcome is ad.Outcome.UNKNOWN
    assert "ResponseTooLarge" in verdict.text or "over the limit" in verdict.text

    async def verify_async() -> ad.Result:
        return await api.averify(done.id, identity="user_a")

    assert asyncio.run(verify_async()).record.outcome is ad.Outcome.UNKNOWN


# -- as DESIGN and the README show it ---------------------------------------------------


def test_read_allows_the_re_read_of_a_recorded_read(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    """A scope of "read" and "write" (as the README writes it) re-reads a GET on
    `replay(verify=True)`: a re-read is a read. "replay" alone allows only that."""
    url = server.url("/invoices/1042")
    scope = Scope(origins=(server.url(),), actions=frozenset({"read", "write"}))
    api = Api(kit, identities=IDENTITIES, scope=scope)
    res = api.get(url, identity="user_a")
    invoices.invoice["status"] = "paid"
    assert kit.replay(res.id, verify=True).changed is True
    only_replay = Scope(origins=(server.url(),), actions=frozenset({"replay"}))
    with pytest.raises(ad.ScopeError, match="read is outside the scope"):
        Api(kit, identities=IDENTITIES, scope=only_replay, name="replays").get(
            url, identity="user_a"
        )


def test_the_adapter_is_callable_by_method(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    api = make_api(kit, server)
    url = server.url("/invoices/1042")
    read = api("GET", url, identity="user_a")
    assert read.record.determinism is ad.Determinism.DETERMINISTIC
    assert json.loads(read.payload)["status"] == "open"
    wrote = api("patch", url, identity="user_a", json_body={"status": "paid"})
    assert wrote.record.determinism is ad.Determinism.SIDE_EFFECT
    assert wrote.record.args["method"] == "PATCH" and invoices.invoice["status"] == "paid"
    with pytest.raises(ad.ArgumentError, match="method"):
        api(None, url, identity="user_a")  # type: ignore[arg-type]


def test_a_write_is_keyed_by_its_idempotency_key(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices
) -> None:
    api = make_api(kit, server)
    url = server.url("/invoices/1042")
    given = api.patch(url, identity="user_a", json_body={"memo": "a"}, idempotency_key="k-1")
    made = api.patch(url, identity="user_a", json_body={"memo": "b"})
    assert given.record.key == given.record.idempotency_key == "k-1"
    assert made.record.key is not None and made.record.key == made.record.idempotency_key
    assert [r.id for r in kit.store.records(key="k-1")] == [given.id]


def test_an_identity_name_is_quoted_short(kit: ad.Toolkit, server: LocalServer) -> None:
    # A model's identity name is echoed in the error: a megabyte of it came back whole.
    url = server.url("/invoices/1042")
    make_api(kit, server)
    unknown = kit.handle("api", {"method": "GET", "url": url, "identity": "x" * 1_000_000})
    shown = f"{'x' * 40!r}… (1,000,000 characters)"
    assert unknown == (
        f"error: ScopeError: no identity named {shown} (known: user_a, user_b); nothing was sent"
    )
    # One the adapter knows, outside its scope.
    scope = Scope(origins=(server.url(),), identities=("user_a",))
    Api(kit, identities=[*IDENTITIES, Identity(name="x" * 1_000_000)], scope=scope, name="api2")
    outside = kit.handle("api2", {"method": "GET", "url": url, "identity": "x" * 1_000_000})
    assert outside == f"error: ScopeError: identity {shown} is outside the scope; nothing was sent"
    assert server.requests == []


def test_an_identity_s_own_origins_hold_inside_the_scope(
    kit: ad.Toolkit, server: LocalServer, invoices: Invoices, tokens: dict[str, str]
) -> None:
    """The scope allows this origin; the identity names only another: nothing is sent."""
    bound = Identity(
        name="user_a",
        headers={"Authorization": "Bearer secret:env:TOKEN_A"},
        origins=("https://billing.example",),
    )
    scope = Scope(origins=(server.url(), "https://billing.example"))
    api = Api(kit, identities=[bound], scope=scope)
    with pytest.raises(ad.ScopeError, match="is not sent to"):
        api.get(server.url("/invoices/1042"), identity="user_a")
    answer = kit.handle(
        "api", {"method": "GET", "url": server.url("/invoices/1042"), "identity": "user_a"}
    )
    assert answer.startswith("error:") and "is not sent to" in answer
    assert server.requests == [] and list(kit.store.records()) == []
