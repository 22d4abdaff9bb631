from __future__ import annotations

import asyncio
import contextlib
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import Fetch
from tests.helpers import FakeClock
from tests.helpers.httpserver import LocalServer, Page


def test_wrapped_call_returns_a_recorded_result(kit: ad.Toolkit) -> None:
    @kit.tool(determinism="deterministic", key=lambda url: url, max_age=timedelta(hours=1))
    def fetch(url: str) -> str:
        return f"<html>{url}</html>"

    res = fetch("https://example.test/a")
    assert isinstance(res, ad.Result)
    assert str(res) == res.content == "<html>https://example.test/a</html>"
    rec = res.record
    assert (rec.tool, rec.key, rec.args) == (
        "fetch",
        "https://example.test/a",
        {"url": "https://example.test/a"},
    )
    assert rec.determinism is ad.Determinism.DETERMINISTIC
    assert rec.size == len(res.payload) and rec.content_hash == ad.ids.content_hash(res.payload)
    assert rec.session == "test" and rec.max_age == timedelta(hours=1)
    assert kit.store.get(res.id) == rec
    assert fetch.__name__ == "fetch"


@pytest.mark.parametrize(
    ("value", "media_type", "payload"),
    [
        pytest.param("héllo", "text/plain; charset=utf-8", "héllo".encode(), id="str"),
        pytest.param(b"\x00\x01", "application/octet-stream", b"\x00\x01", id="bytes"),
        pytest.param(
            {"b": [1, 2], "a": None}, "application/json", b'{"a":null,"b":[1,2]}', id="json"
        ),
        pytest.param([1.5, "x"], "application/json", b'[1.5,"x"]', id="list"),
    ],
)
def test_payload_kinds(kit: ad.Toolkit, value: Any, media_type: str, payload: bytes) -> None:
    tool = kit.tool(lambda: value, name="const")
    res = tool()
    assert (res.payload, res.record.media_type) == (payload, media_type)
    again = kit.replay(res.id)
    assert again.content == value
    assert again.payload == payload and again.replayed


def test_unserialisable_return_value_is_a_clear_error(kit: ad.Toolkit) -> None:
    tool = kit.tool(lambda: {"when": object()}, name="bad")
    with pytest.raises(ad.ArgumentError, match="the tool's return value\\['when'\\]"):
        tool()


def test_arguments_are_bound_with_defaults(kit: ad.Toolkit) -> None:
    @kit.tool
    def search(query: str, limit: int = 10, *, lang: str = "en") -> str:
        return f"{query}:{limit}:{lang}"

    a = search("x")
    b = search(query="x", limit=10, lang="en")
    assert a.id == b.id
    assert a.record.args == {"query": "x", "limit": 10, "lang": "en"}
    assert a.record.determinism is ad.Determinism.NONDETERMINISTIC  # the safe default


def test_non_json_argument_fails_before_the_call(kit: ad.Toolkit) -> None:
    calls = []

    @kit.tool
    def tool(when: object) -> str:
        calls.append(when)
        return "ran"

    with pytest.raises(ad.ArgumentError, match="argument 'when' is of type object"):
        tool(object())
    assert calls == []
    assert list(kit.store.records()) == []


def test_a_call_that_raises_is_recorded_and_re_raised(kit: ad.Toolkit) -> None:
    @kit.tool(determinism="deterministic")
    def fails(x: int) -> str:
        raise ValueError(f"bad {x}")

    with pytest.raises(ValueError, match="bad 3"):
        fails(3)
    (rec,) = kit.store.records()
    assert rec.status is ad.Status.ERROR
    assert rec.error == "ValueError: bad 3"
    assert kit.replay(rec.id).text == "ValueError: bad 3"
    assert not kit.replay(rec.id).ok


class _Unsayable(Exception):
    def __str__(self) -> str:
        raise ValueError("this message cannot be made")


def test_a_tool_error_whose_message_cannot_be_made_is_still_an_answer(kit: ad.Toolkit) -> None:
    @kit.tool()
    def fails(x: int) -> str:
        raise _Unsayable()

    said = "error: _Unsayable: <_Unsayable whose message cannot be shown>"
    assert kit.handle("fails", {"x": 1}) == said
    assert asyncio.run(kit.ahandle("fails", {"x": 2})) == said
    assert [r.status for r in kit.store.records()] == [ad.Status.ERROR] * 2


def test_side_effects_are_actions_with_fresh_ids_and_known_outcomes(kit: ad.Toolkit) -> None:
    state = {"fail": False}

    @kit.tool(determinism=ad.Determinism.SIDE_EFFECT)
    def write(path: str) -> str:
        if state["fail"]:
            raise TimeoutError("no answer after sending")
        return "written"

    a, b = write("f"), write("f")
    assert a.id != b.id
    assert a.record.outcome is b.record.outcome is ad.Outcome.COMPLETED
    state["fail"] = True
    with pytest.raises(TimeoutError):
        write("f")
    failed = [r for r in kit.store.records() if r.status is ad.Status.ERROR]
    assert [r.outcome for r in failed] == [ad.Outcome.UNKNOWN]


def test_async_tools(kit: ad.Toolkit) -> None:
    @kit.tool(determinism="deterministic", key=lambda n: f"n:{n}")
    async def square(n: int) -> dict[str, int]:
        await asyncio.sleep(0)
        return {"n": n * n}

    @kit.tool(determinism="deterministic")
    async def broken() -> str:
        raise RuntimeError("async boom")

    async def scenario() -> None:
        res = await square(4)
        assert res.content == {"n": 16} and res.record.key == "n:4"
        again = await kit.areplay(res.id, verify=True)
        assert again.changed is False and again.id == res.id
        with pytest.raises(RuntimeError, match="async boom"):
            await broken()

    asyncio.run(scenario())
    assert {r.status for r in kit.store.records()} == {ad.Status.OK, ad.Status.ERROR}


def test_sync_replay_verify_runs_an_async_tool_as_handle_does(kit: ad.Toolkit) -> None:
    """With no event loop running, `replay(verify=True)` runs an async tool on a loop of
    its own, as `kit.handle` does; inside a running loop it points to `areplay`."""
    runs: list[int] = []

    @kit.tool(determinism="deterministic", key=lambda n: f"n:{n}")
    async def square(n: int) -> int:
        await asyncio.sleep(0)
        runs.append(n)
        return n * n

    first = asyncio.run(square(4))
    again = kit.replay(first.id, verify=True)
    assert (again.changed, again.id, again.previous_id) == (False, first.id, first.id)
    assert runs == [4, 4] and len(kit.store.observations(first.id)) == 2
    assert kit.handle("square", {"n": 4}) == "16" and runs == [4, 4, 4]

    async def in_a_loop() -> None:
        with pytest.raises(ad.NotReplayable, match=r"use `await kit\.areplay\("):
            kit.replay(first.id, verify=True)

    asyncio.run(in_a_loop())
    assert runs == [4, 4, 4]  # the refused re-run never started


def test_replay_verify_reports_change_and_records_the_new_observation(
    kit: ad.Toolkit, clock: FakeClock
) -> None:
    page = {"text": "v1"}

    @kit.tool(determinism="deterministic", key=lambda url: url)
    def fetch(url: str) -> str:
        return page["text"]

    first = fetch("https://x/")
    clock.advance(minutes=1)
    same = kit.replay(first.id, verify=True)
    assert (same.changed, same.id, same.previous_id) == (False, first.id, first.id)
    assert len(kit.store.observations(first.id)) == 2

    page["text"] = "v2"
    clock.advance(minutes=1)
    new = kit.replay(first.id[:8], verify=True)
    assert new.changed is True and new.id != first.id and new.text == "v2"
    assert new.previous_id == first.id and new.record.key == "https://x/"
    assert kit.replay(first.id).text == "v1"  # the old observation stays as it was
    assert [r.id for r in kit.store.records(key="https://x/")] == [first.id, new.id]


def test_replay_verify_refuses_what_cannot_be_rerun(kit: ad.Toolkit) -> None:
    search = kit.tool(lambda q: f"hits for {q}", name="search")
    act = kit.tool(lambda: "done", name="send", determinism="side_effect")
    s, a = search("x"), act()
    with pytest.raises(ad.NotReplayable, match="nondeterministic: re-running it would not"):
        kit.replay(s.id, verify=True)
    with pytest.raises(ad.NotReplayable, match=r"an action of 'send'.*never re-run"):
        kit.replay(a.id, verify=True)
    other = ad.Toolkit(kit.store)
    det = kit.tool(lambda: "d", name="det", determinism="deterministic")()
    with pytest.raises(ad.NotReplayable, match="tool 'det' is not registered"):
        other.replay(det.id, verify=True)
    assert other.replay(det.id).text == "d"


def test_replay_errors(kit: ad.Toolkit) -> None:
    with pytest.raises(ad.BadId):
        kit.replay("not-an-id")
    with pytest.raises(ad.NotFound):
        kit.replay("0123456789abcdef")


@pytest.mark.parametrize("bad", ["nothex", "", "abc", "0123456789abcdef0", 7])
def test_a_malformed_id_is_caught_as_not_found(kit: ad.Toolkit, bad: Any) -> None:
    # "kit.replay(res.id)  # exact stored result; ad.NotFound ... on bad input"
    with pytest.raises(ad.NotFound) as raised:
        kit.replay(bad)
    assert isinstance(raised.value, ad.BadId) and isinstance(raised.value, ValueError)
    assert str(raised.value) == raised.value.args[0]  # not quoted as a KeyError's is


def test_sessions_group_calls(store: ad.Store, clock: FakeClock) -> None:
    for session in ("one", "two"):
        kit = ad.Toolkit(store, session=session, clock=clock)
        kit.tool(lambda s=session: s, name="who")()
    assert [r.session for r in store.records(session="one")] == ["one"]
    fresh = ad.Toolkit(store)
    assert fresh.session.startswith("s-") and fresh.session != ad.Toolkit(store).session


def test_var_args_replay(kit: ad.Toolkit) -> None:
    @kit.tool(determinism="deterministic")
    def join(sep: str, /, *parts: str, **opts: str) -> str:
        return sep.join(parts) + repr(sorted(opts.items()))

    res = join("-", "a", "b", upper="no")
    assert res.record.args == {"sep": "-", "parts": ["a", "b"], "opts": {"upper": "no"}}
    again = kit.replay(res.id, verify=True)
    assert again.changed is False and again.text == res.text


def _open_files_under(folder: Path) -> list[str]:
    """The files under `folder` this process holds open (Linux's /proc)."""
    held = []
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith(str(folder)):
                held.append(target)
    return held


def test_close_closes_the_store_and_the_clients_adapters_made(
    tmp_path: Path, server: LocalServer
) -> None:
    server.pages["/a"] = Page(b"<p>a</p>")
    with ad.Toolkit(ad.DiskStore(tmp_path / "store")) as kit:
        fetch = Fetch(kit)
        assert "error" not in kit.handle("fetch", {"url": server.url("/a")})
        assert _open_files_under(tmp_path / "store")
    assert _open_files_under(tmp_path / "store") == []
    with pytest.raises(RuntimeError, match="client has been closed"):
        fetch(server.url("/a"))
    kit.close()  # again: nothing to do, nothing raised


def test_async_with_closes_the_async_clients_too(server: LocalServer) -> None:
    server.pages["/a"] = Page(b"<p>a</p>")

    async def go() -> Fetch:
        async with ad.Toolkit(ad.open_store("memory://")) as kit:
            fetch = Fetch(kit)
            assert (await fetch.aget(server.url("/a"))).ok
        await kit.aclose()  # again: nothing to do
        return fetch

    fetch = asyncio.run(go())
    with pytest.raises(RuntimeError, match="client has been closed"):
        asyncio.run(fetch.aget(server.url("/a")))


_DETERMINISMS = "deterministic, nondeterministic, side_effect"


@pytest.mark.parametrize(
    ("call", "said"),
    [
        pytest.param(
            lambda kit: kit.tool(determinism="bogus"),
            f"determinism is one of {_DETERMINISMS}, not 'bogus'",
            id="tool",
        ),
        pytest.param(
            lambda kit: kit.tool(determinism=["deterministic"]),
            f"determinism is one of {_DETERMINISMS}, not list",
            id="tool-unhashable",
        ),
        pytest.param(
            lambda kit: kit.record("t", {}, b"x", determinism="Deterministic"),
            f"determinism is one of {_DETERMINISMS}, not 'Deterministic'",
            id="record",
        ),
        pytest.param(
            lambda kit: kit.record_failure("t", {}, OSError("x"), determinism="pure"),
            f"determinism is one of {_DETERMINISMS}, not 'pure'",
            id="record_failure",
        ),
        pytest.param(
            lambda kit: kit.record("t", {}, b"x", determinism="deterministic", status="failed"),
            "status is one of ok, error, not 'failed'",
            id="status",
        ),
        pytest.param(
            lambda kit: kit.record("t", {}, b"x", determinism="deterministic", outcome="done"),
            "outcome is one of completed, not_applied, unknown, not 'done'",
            id="outcome",
        ),
        pytest.param(
            lambda kit: kit.ingest("call_1", "t", {}, "x", determinism="bogus"),
            f"determinism is one of {_DETERMINISMS}, not 'bogus'",
            id="ingest",
        ),
        pytest.param(
            lambda kit: kit.ingest("call_1", "t", {}, "x", content=[{"type": "text", "text": "x"}]),
            "ingest: content= needs the shape= of its message list",
            id="ingest-content",
        ),
        pytest.param(
            lambda kit: ad.compact(
                [{"role": "user", "content": "hi"}], kit=kit, determinism_of={"t": "bogus"}
            ),
            f"determinism_of['t'] is one of {_DETERMINISMS}, not 'bogus'",
            id="compact",
        ),
        pytest.param(
            lambda kit: ad.Toolkit(kit.store, stale_policy="ignore"),
            "stale_policy is one of refuse, warn, not 'ignore'",
            id="stale_policy",
        ),
        pytest.param(
            lambda kit: setattr(kit, "stale_policy", "ignore"),
            "stale_policy is one of refuse, warn, not 'ignore'",
            id="stale_policy-set",
        ),
    ],
)
def test_a_value_no_enum_has_is_an_argument_error_listing_the_values(
    kit: ad.Toolkit, call: Any, said: str
) -> None:
    with pytest.raises(ad.ArgumentError) as raised:
        call(kit)
    assert str(raised.value) == said
    assert list(kit.store.records()) == []  # refused before anything was stored


def test_a_result_with_an_image_is_ingested_whole(tmp_path: Path) -> None:
    kit = ad.Toolkit(ad.open_store(f"disk://{tmp_path / 'store'}"))
    content = [
        {"type": "text", "text": "the chart"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
    ]
    first = kit.ingest("call_1", "plot", {"n": 1}, "the chart", content=content, shape="anthropic")
    assert first.record.media_type == "application/vnd.addressable.content+json"
    again = kit.ingest("call_1", "plot", {"n": 1}, "the chart", content=content, shape="anthropic")
    assert again.record.id == first.record.id  # found, not stored twice
    shown = kit.replay(first.record.id)
    assert b"iVBO" in shown.payload and b"the chart" in shown.payload
