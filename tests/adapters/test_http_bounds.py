"""An answer is decoded within bounds: a small compressed body that decodes to far more
than `max_bytes` is stopped near the limit, never decoded whole in memory; an encoding
that cannot be decoded so is refused. And a write whose reading fails in any way after
it was sent is still recorded, as `unknown`."""

from __future__ import annotations

import asyncio
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import Api, BadAnswer, Fetch, Identity, ResponseTooLarge, Scope
from tests.helpers.httpserver import LocalServer, Reply

MIB = 1024 * 1024
DECODED = 256 * MIB  # what the bomb decodes to
LIMIT = 1 * MIB  # the adapters' max_bytes here
BOUND = 32 * MIB  # the most memory a call may take to refuse the bomb (was >= DECODED)


def _gzip(chunks: Iterator[bytes], wbits: int = 31) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return b"".join([packer.compress(c) for c in chunks] + [packer.flush()])


def _zeros(total: int) -> Iterator[bytes]:
    block = b"\0" * MIB
    for _ in range(total // MIB):
        yield block


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """256 MiB of zeros, gzipped twice: a few KB on the wire (`gzip, gzip`)."""
    return _gzip(iter([_gzip(_zeros(DECODED))]))


@pytest.fixture
def kit() -> ad.Toolkit:
    return ad.Toolkit(ad.open_store("memory://"))


def _bomb_route(server: LocalServer, method: str, status: int, bomb: bytes) -> None:
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip, gzip"}
    server.routes[(method, "/b")] = lambda r: Reply(status, bomb, headers)


def _peak(call: Callable[[], Any]) -> tuple[Any, int]:
    """What `call` returned (or raised), and the most memory it held at once."""
    tracemalloc.start()
    try:
        try:
            out: Any = call()
        except Exception as exc:
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _api(kit: ad.Toolkit, server: LocalServer, **kwargs: Any) -> Api:
    return Api(
        kit,
        identities=[Identity(name="bot")],
        scope=Scope(origins=(server.url("/"),), actions=frozenset({"read", "write"})),
        timeout=10,
        **kwargs,
    )


def test_fetch_stops_a_compression_bomb_near_the_limit(
    kit: ad.Toolkit, server: LocalServer, bomb: bytes
) -> None:
    _bomb_route(server, "GET", 200, bomb)
    fetch = Fetch(kit, max_bytes=LIMIT, timeout=10)
    raised, peak = _peak(lambda: fetch(server.url("/b")))
    assert isinstance(raised, ResponseTooLarge)
    assert peak < BOUND
    (record,) = kit.store.records()
    assert record.status is ad.Status.ERROR and "ResponseTooLarge" in (record.error or "")


def test_async_fetch_stops_a_compression_bomb_near_the_limit(
    kit: ad.Toolkit, server: LocalServer, bomb: bytes
) -> None:
    _bomb_route(server, "GET", 200, bomb)
    fetch = Fetch(kit, max_bytes=LIMIT, timeout=10)

    async def go() -> None:
        try:
            await fetch.aget(server.url("/b"))
        finally:
            await fetch.aclose()

    raised, peak = _peak(lambda: asyncio.run(go()))
    assert isinstance(raised, ResponseTooLarge)
    assert peak < BOUND


def test_api_read_and_write_stop_a_compression_bomb_near_the_limit(
    kit: ad.Toolkit, server: LocalServer, bomb: bytes
) -> None:
    _bomb_route(server, "GET", 200, bomb)
    _bomb_route(server, "POST", 201, bomb)
    api = _api(kit, server, max_bytes=LIMIT)
    shown, peak = _peak(
        lambda: kit.handle("api", {"method": "GET", "url": server.url("/b"), "identity": "bot"})
    )
    assert shown.startswith("error: ResponseTooLarge: ") and peak < BOUND
    wrote, peak = _peak(lambda: api.post(server.url("/b"), identity="bot", json_body={"a": 1}))
    assert peak < BOUND
    assert wrote.record.outcome is ad.Outcome.COMPLETED and wrote.record.meta["body_over"] == LIMIT


def test_an_encoding_not_decoded_within_bounds_is_refused(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    # Refused on its header, before a byte of it is decoded: what it holds does not matter.
    packed = b"(\xb5/\xfd" + b"\0" * 64
    headers = {"Content-Type": "application/json", "Content-Encoding": "zstd"}
    server.routes[("GET", "/z")] = lambda r: Reply(200, packed, headers)
    fetch = Fetch(kit, timeout=10)
    with pytest.raises(BadAnswer, match="encoded as zstd"):
        fetch(server.url("/z"))
    assert server.requests[-1].headers["Accept-Encoding"] == "gzip, deflate"
    (record,) = kit.store.records()
    assert record.status is ad.Status.ERROR


TEXT = b"".join(b"line %d of a page that compresses\n" % i for i in range(60_000))  # ~2 MB


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        pytest.param("gzip", _gzip(iter([TEXT])), id="gzip"),
        pytest.param("deflate", _gzip(iter([TEXT]), 15), id="deflate-zlib"),
        pytest.param("deflate", _gzip(iter([TEXT]), -15), id="deflate-raw"),
        pytest.param("gzip, gzip", _gzip(iter([_gzip(iter([TEXT]))])), id="gzip-twice"),
        pytest.param("identity", TEXT, id="identity"),
    ],
)
def test_an_encoded_answer_decodes_to_the_same_bytes(
    kit: ad.Toolkit, server: LocalServer, encoding: str, body: bytes
) -> None:
    headers = {"Content-Type": "text/plain", "Content-Encoding": encoding}
    server.routes[("GET", "/t")] = lambda r: Reply(200, body, headers)
    fetch = Fetch(kit, timeout=10)
    assert fetch(server.url("/t")).payload == TEXT

    async def go() -> bytes:
        try:
            return (await fetch.aget(server.url("/t"))).payload
        finally:
            await fetch.aclose()

    assert asyncio.run(go()) == TEXT


def test_an_answer_encoded_more_times_than_a_server_would_is_refused(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    body = b"x"
    for _ in range(50):
        body = _gzip(iter([body]))
    headers = {"Content-Type": "text/plain", "Content-Encoding": ", ".join(["gzip"] * 50)}
    server.routes[("GET", "/deep")] = lambda r: Reply(200, body, headers)
    with pytest.raises(BadAnswer, match="encoded 50 times over"):
        Fetch(kit, timeout=10)(server.url("/deep"))
    assert [r.status for r in kit.store.records()] == [ad.Status.ERROR]


def test_an_answer_that_does_not_decode_is_a_recorded_error(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    headers = {"Content-Type": "text/plain", "Content-Encoding": "gzip"}
    server.routes[("GET", "/bad")] = lambda r: Reply(200, b"not gzip at all", headers)
    with pytest.raises(BadAnswer, match="does not decode as gzip"):
        Fetch(kit, timeout=10)(server.url("/bad"))
    assert [r.status for r in kit.store.records()] == [ad.Status.ERROR]


# -- a write is recorded whatever fails after it was sent --------------------------------


def test_a_write_is_recorded_unknown_when_reading_its_answer_fails_in_any_way(
    kit: ad.Toolkit, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.routes[("POST", "/items")] = lambda r: Reply(201, b'{"id": 1}')

    def out_of_memory(self: object, chunk: bytes) -> bool:
        raise MemoryError  # what a real machine does on demand only with a real bomb

    monkeypatch.setattr("addressable.adapters.api._Body.add", out_of_memory)
    _api(kit, server)
    shown = kit.handle(
        "api", {"method": "POST", "url": server.url("/items"), "identity": "bot", "body": {}}
    )
    assert shown.startswith("[action ") and ": unknown;" in shown
    assert len(server.requests) == 1
    (action,) = kit.store.records()
    assert action.outcome is ad.Outcome.UNKNOWN and "MemoryError after sending" in (
        action.error or ""
    )


def test_a_write_cancelled_while_waiting_for_its_answer_is_recorded_unknown(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    server.routes[("POST", "/items")] = lambda r: Reply(201, b"{}", delay=1.0)
    api = _api(kit, server)

    async def go() -> None:
        try:
            await asyncio.wait_for(api.awrite("POST", server.url("/items"), identity="bot"), 0.3)
        finally:
            await api.aclose()

    with pytest.raises(TimeoutError):  # the cancel went through, as the caller asked
        asyncio.run(go())
    assert len(server.requests) == 1
    (action,) = kit.store.records()
    assert action.outcome is ad.Outcome.UNKNOWN and "CancelledError" in (action.error or "")


@pytest.mark.parametrize(
    ("status", "encoding", "outcome"),
    [
        (201, "br", ad.Outcome.COMPLETED),
        (201, "gzip", ad.Outcome.COMPLETED),  # a body that is not gzip
        (409, "gzip", ad.Outcome.NOT_APPLIED),
    ],
)
def test_a_write_whose_answer_cannot_be_read_keeps_the_outcome_its_status_gives(
    kit: ad.Toolkit, server: LocalServer, status: int, encoding: str, outcome: ad.Outcome
) -> None:
    headers = {"Content-Type": "application/json", "Content-Encoding": encoding}
    server.routes[("POST", "/b")] = lambda r: Reply(status, b"not what it says", headers)
    api = _api(kit, server)
    for done in (
        api.write("POST", server.url("/b"), identity="bot", json_body={"a": 1}),
        asyncio.run(_awrite(api, server)),
    ):
        assert done.record.outcome is outcome
        assert "does not decode" in done.text or "encoded as br" in done.text
        assert done.record.meta["status_code"] == status and "body_unreadable" in done.record.meta


async def _awrite(api: Api, server: LocalServer) -> ad.Result:
    try:
        return await api.awrite("POST", server.url("/b"), identity="bot", json_body={"a": 1})
    finally:
        await api.aclose()
