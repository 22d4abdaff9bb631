"""A `kit.tool` function as a model drives it: an Action is recorded even when its call
is cancelled or interrupted, a sync function does not hold the event loop, a tool's own
TypeError is named as its own, and `null` for an argument with a default is that
argument left out."""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest

import addressable as ad


@pytest.fixture
def kit() -> ad.Toolkit:
    return ad.Toolkit(ad.open_store("memory://"))


def test_a_cancelled_async_action_is_recorded_unknown(kit: ad.Toolkit) -> None:
    began = []

    @kit.tool(determinism="side_effect")
    async def transfer(amount: int) -> str:
        began.append(amount)
        await asyncio.sleep(5)
        return "done"

    async def go() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(kit.ahandle("transfer", {"amount": 100}), 0.2)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(transfer(7), 0.2)

    asyncio.run(go())
    assert began == [100, 7]
    records = list(kit.store.records())
    assert len(records) == 2
    assert all(r.outcome is ad.Outcome.UNKNOWN and r.status is ad.Status.ERROR for r in records)


def test_an_interrupted_sync_action_is_recorded_unknown(kit: ad.Toolkit) -> None:
    @kit.tool(determinism="side_effect")
    def send(to: str) -> str:
        time.sleep(5)
        return "sent"

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            send("ops")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    (record,) = kit.store.records()
    assert record.outcome is ad.Outcome.UNKNOWN


def test_a_cancelled_read_is_not_recorded(kit: ad.Toolkit) -> None:
    @kit.tool(determinism="nondeterministic")
    async def look(q: str) -> str:
        await asyncio.sleep(5)
        return q

    async def go() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(kit.ahandle("look", {"q": "x"}), 0.1)

    asyncio.run(go())
    assert list(kit.store.records()) == []


def test_ahandle_runs_a_sync_tool_in_a_thread(kit: ad.Toolkit) -> None:
    threads = []

    @kit.tool(determinism="nondeterministic")
    def slow(n: int) -> str:
        threads.append(threading.get_ident())
        time.sleep(0.3)
        return str(n)

    async def go() -> tuple[list[str], int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.02)
                ticks += 1

        beat = asyncio.create_task(ticker())
        texts = await asyncio.gather(kit.ahandle("slow", {"n": 1}), kit.ahandle("slow", {"n": 2}))
        beat.cancel()
        return list(texts), ticks

    texts, ticks = asyncio.run(go())
    assert texts == ["1", "2"]
    assert threading.get_ident() not in threads  # not on the loop's thread
    assert ticks > 0  # the loop went on while they ran


def test_a_tools_own_type_error_is_named_as_its_own(kit: ad.Toolkit) -> None:
    @kit.tool(determinism="nondeterministic")
    def raises(x: int) -> str:
        raise TypeError("inner type error")

    text = kit.handle("raises", {"x": 1})
    assert text == "error: TypeError: inner type error"


def test_null_for_an_argument_with_a_default_is_the_argument_left_out(kit: ad.Toolkit) -> None:
    @kit.tool(determinism="nondeterministic")
    def defaults(n: int = 5, name: str = "x") -> str:
        return f"{name}{n}"

    assert kit.handle("defaults", {"n": None, "name": None}) == "x5"
    assert kit.handle("defaults", {"n": 2}) == "x2"
    assert kit.handle("defaults", {"n": "2"}).startswith("error: ")  # still strict


def test_a_key_function_gets_the_same_arguments_from_a_model_as_from_python(
    kit: ad.Toolkit,
) -> None:
    @kit.tool(determinism="deterministic", key=lambda path: f"file:{path}")
    def read(path: str, n: int = 1) -> str:
        return path * n

    direct = read("a")
    assert direct.record.key == "file:a" and direct.record.args == {"path": "a", "n": 1}
    assert kit.handle("read", {"path": "a"}) == "a"
    (record,) = kit.store.records()  # the same call, the same record, as a model made it
    assert record.id == direct.id
    # Arguments the key function cannot take: a one-line ArgumentError, nothing run.
    with pytest.raises(ad.ArgumentError, match="its key function failed"):
        read("b", 2)
    text = kit.handle("read", {"path": "b", "n": 2})
    assert text.startswith("error: ") and "key function failed" in text and "\n" not in text
    assert len(list(kit.store.records())) == 1


def test_a_key_function_that_raises_is_an_argument_error(kit: ad.Toolkit) -> None:
    @kit.tool(determinism="deterministic", key=lambda order: {"a": 1}[order])
    def look(order: str) -> str:
        return order

    with pytest.raises(ad.ArgumentError, match="KeyError"):
        look("zz")
    assert list(kit.store.records()) == []
