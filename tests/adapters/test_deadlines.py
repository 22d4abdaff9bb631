"""An overall deadline per call: a real loopback server that trickles its answer one byte
a second (never silent long enough for a read timeout) cannot hold a Fetch or an Api
call past it. The deadline is 1.5 s; the trickle would take 40 s or more."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

import addressable as ad
from addressable.adapters import Api, Fetch, Identity, Scope
from tests.helpers.httpserver import LocalServer, Reply

SLOW = b"x" * 40  # one byte a second: 40 s if nothing stops it
DEADLINE = 1.5
WELL_BEFORE = 15.0  # seconds: far under the trickle, far over the deadline


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def trickle(server: LocalServer, method: str, path: str, *, head: bool = False) -> None:
    server.routes[(method, path)] = lambda r: Reply(
        200, SLOW, {"Content-Type": "text/plain"}, trickle=1.0, trickle_head=head
    )


@pytest.mark.parametrize("head", [False, True], ids=["body", "headers"])
def test_a_trickling_server_cannot_hold_a_fetch_past_its_deadline(
    kit: ad.Toolkit, server: LocalServer, head: bool
) -> None:
    trickle(server, "GET", "/drip", head=head)
    fetch = Fetch(kit, timeout=5.0, deadline=DEADLINE)
    started = time.monotonic()
    with pytest.raises(ad.DeadlineExceeded, match=r"deadline of 1\.5 s"):
        fetch(server.url("/drip"))
    assert time.monotonic() - started < WELL_BEFORE
    (rec,) = kit.store.records()
    assert rec.status is ad.Status.ERROR and (rec.error or "").startswith("DeadlineExceeded")
    assert kit.handle("fetch", {"url": server.url("/drip")}).startswith("error: DeadlineExceeded")


def test_the_deadline_holds_with_a_client_the_user_gave(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    trickle(server, "GET", "/drip")
    with httpx.Client(timeout=5.0) as client:
        fetch = Fetch(kit, client=client, deadline=DEADLINE)
        started = time.monotonic()
        with pytest.raises(ad.DeadlineExceeded):
            fetch(server.url("/drip"))
    assert time.monotonic() - started < WELL_BEFORE


@pytest.mark.parametrize("head", [False, True], ids=["body", "headers"])
def test_an_async_fetch_has_the_same_deadline(
    kit: ad.Toolkit, server: LocalServer, head: bool
) -> None:
    trickle(server, "GET", "/drip", head=head)

    async def go() -> None:
        fetch = Fetch(kit, timeout=5.0, deadline=DEADLINE)
        try:
            await fetch.aget(server.url("/drip"))
        finally:
            await fetch.aclose()

    started = time.monotonic()
    with pytest.raises(ad.DeadlineExceeded):
        asyncio.run(go())
    assert time.monotonic() - started < WELL_BEFORE
    (rec,) = kit.store.records()
    assert (rec.error or "").startswith("DeadlineExceeded")


def test_the_deadline_is_60_seconds_unless_told(kit: ad.Toolkit) -> None:
    assert Fetch(kit).deadline == 60.0
    assert Api(kit).deadline == 60.0
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ad.ArgumentError, match="deadline must be a number of seconds"):
            Fetch(kit, deadline=bad, name="other")


def api_for(kit: ad.Toolkit, server: LocalServer) -> Api:
    return Api(
        kit,
        identities=[Identity(name="a", headers={"Authorization": "Bearer secret:env:DL_TOKEN"})],
        scope=Scope(origins=(server.url(),), actions=frozenset({"read", "write"})),
        timeout=5.0,
        deadline=DEADLINE,
    )


@pytest.fixture
def token(secret_env: Callable[[str], str]) -> str:
    return secret_env("DL_TOKEN")


@pytest.mark.parametrize("head", [False, True], ids=["body", "headers"])
def test_an_api_read_cannot_be_held_past_its_deadline(
    kit: ad.Toolkit, server: LocalServer, token: str, head: bool
) -> None:
    trickle(server, "GET", "/items", head=head)
    api = api_for(kit, server)
    started = time.monotonic()
    with pytest.raises(ad.DeadlineExceeded):
        api.get(server.url("/items"), identity="a")
    assert time.monotonic() - started < WELL_BEFORE
    (rec,) = kit.store.records()
    assert rec.status is ad.Status.ERROR and (rec.error or "").startswith("DeadlineExceeded")


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_an_api_write_cut_off_by_the_deadline_is_unknown(
    kit: ad.Toolkit, server: LocalServer, token: str, asynchronous: bool
) -> None:
    trickle(server, "PATCH", "/items/1")
    api = api_for(kit, server)
    started = time.monotonic()
    url = server.url("/items/1")
    if asynchronous:
        res = asyncio.run(api.awrite("PATCH", url, identity="a", json_body={"n": 2}))
    else:
        res = api.patch(url, identity="a", json_body={"n": 2})
    assert time.monotonic() - started < WELL_BEFORE
    rec = res.record
    assert rec.outcome is ad.Outcome.UNKNOWN and rec.status is ad.Status.ERROR
    assert (rec.error or "").startswith("DeadlineExceeded after sending")
    assert [json.loads(r.body) for r in server.requests] == [{"n": 2}]
    text = kit.handle(
        "api", {"method": "PATCH", "url": server.url("/items/1"), "identity": "a", "body": {}}
    )
    assert ": unknown;" in text.splitlines()[0] and "VERIFY" in text


@pytest.fixture
def unanswered() -> Iterator[str]:
    """A listening port whose backlog is full: a connection to it is never made."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    filling = []
    for _ in range(8):
        client = socket.socket()
        client.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            client.connect(("127.0.0.1", port))
        filling.append(client)
    time.sleep(0.2)
    yield f"http://127.0.0.1:{port}"
    for client in filling:
        client.close()
    listener.close()


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_write_the_deadline_stops_before_it_connects_is_not_applied(
    kit: ad.Toolkit, unanswered: str, asynchronous: bool
) -> None:
    # An async call's deadline cancels the connection being made, with no connect error
    # of its own to tell it by: what the HTTP layer traced says nothing was sent.
    api = Api(
        kit,
        identities=[Identity(name="a")],
        scope=Scope(origins=(unanswered,), actions=frozenset({"write"})),
        timeout=10.0,
        deadline=1.0,
    )
    url = unanswered + "/items"
    if asynchronous:
        wrote = asyncio.run(api.awrite("POST", url, identity="a", json_body={"n": 1}))
    else:
        wrote = api.post(url, identity="a", json_body={"n": 1})
    assert wrote.record.outcome is ad.Outcome.NOT_APPLIED
    assert (wrote.record.error or "").startswith("DeadlineExceeded before anything was sent")
