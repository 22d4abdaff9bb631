from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

import addressable as ad

from .conftest import FakeClock


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
    with pytest.raises(ad.NotReplayable, match=r"is async: use `await kit\.areplay"):
        kit.replay(next(r.id for r in kit.store.records() if r.tool == "square"), verify=True)


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
