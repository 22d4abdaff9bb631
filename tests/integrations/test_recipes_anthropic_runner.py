"""The recipe in docs/recipes.md for the Anthropic SDK's tool runner, run against the SDK's
runner with a scripted model on a mocked transport, and side by side with the plain loop:
each request carries the same results whole and the same as stubs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic
import httpx2

import addressable as ad
from addressable.integrations.anthropic import (
    acompact_runner,
    async_runner_tools,
    compact_runner,
    runner_tools,
)
from tests.helpers.scripted_model import ANSWER, MODULES, ScriptedModel, lookup_text, make_kit

TASK = "Describe the modules json, pathlib, sqlite3, logging and textwrap."
# The context a loop allows before it compacts (100_000, say, in docs/recipes.md): the
# scripted session is short, so here every request is over it.
TRIGGER = 1


def _fresh(tmp_path: Path) -> ad.Toolkit:
    return ad.Toolkit(ad.open_store(f"disk://{tmp_path / 'plain'}"))


def _lookups(kit: ad.Toolkit) -> int:
    return len(list(kit.store.records(tool="lookup")))


def from_first_stub(stubbed: list[list[bool]]) -> tuple[int, list[list[bool]]]:
    """The first request that carried a stub, and which results were stubs from there
    on. (Before it, the runner sends only what its thread on the server lacks.)"""
    first = next(n for n, row in enumerate(stubbed) if any(row))
    return first, stubbed[first:]


def plain_loop(kit: ad.Toolkit) -> list[list[bool]]:
    """Which results each request of the plain loop (docs/recipes.md) sent as stubs."""
    model = ScriptedModel()
    client = anthropic.Anthropic(
        api_key="x", http_client=httpx2.Client(transport=model.transport())
    )
    messages: list[Any] = [{"role": "user", "content": TASK}]
    while True:
        resp = client.messages.create(
            model="claude-sonnet-5-5", max_tokens=1024, messages=messages, tools=kit.tools()
        )
        messages.append({"role": "assistant", "content": resp.content})
        if resp.stop_reason != "tool_use":
            break
        results = [
            {"type": "tool_result", "tool_use_id": b.id, "content": kit.handle(b.name, b.input)}
            for b in resp.content
            if b.type == "tool_use"
        ]
        messages.append({"role": "user", "content": results})
        messages = ad.compact(
            messages, kit=kit, keep_last=2, trigger_tokens=TRIGGER, cache_prices=ad.CachePrices()
        ).messages
    kit.close()
    return model.stubbed()


def test_the_tool_runner_compacts_on_the_turn_a_plain_loop_does(
    disk_kit: ad.Toolkit, tmp_path: Path
) -> None:
    kit = make_kit(disk_kit)
    model = ScriptedModel()
    client = anthropic.Anthropic(
        api_key="x", http_client=httpx2.Client(transport=model.transport())
    )
    # fmt: off
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5-5", max_tokens=1024, tools=runner_tools(kit),
        messages=[{"role": "user", "content": TASK}],
    )
    for message in runner:
        compact_runner(runner, kit, message, keep_last=2, trigger_tokens=TRIGGER,
                       cache_prices=ad.CachePrices())
    # fmt: on
    assert len(model.bodies) == len(MODULES) + 2
    assert from_first_stub(model.stubbed()) == from_first_stub(
        plain_loop(make_kit(_fresh(tmp_path)))
    )
    assert _lookups(kit) == len(MODULES)  # each tool ran once
    assert model.replay_text == lookup_text(MODULES[0])
    final = runner.until_done()
    assert final.content[0].type == "text" and final.content[0].text == ANSWER
    names = [t["name"] for t in model.bodies[0]["tools"]]
    assert names == [t["name"] for t in kit.tools("anthropic")]


def test_the_async_tool_runner_compacts_on_the_turn_a_plain_loop_does(
    disk_kit: ad.Toolkit, tmp_path: Path
) -> None:
    kit = make_kit(disk_kit)
    model = ScriptedModel()
    client = anthropic.AsyncAnthropic(
        api_key="x", http_client=httpx2.AsyncClient(transport=model.transport())
    )

    async def run() -> anthropic.types.beta.BetaMessage:
        # fmt: off
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-5-5", max_tokens=1024, tools=async_runner_tools(kit),
            messages=[{"role": "user", "content": TASK}],
        )
        async for message in runner:
            await acompact_runner(runner, kit, message, keep_last=2, trigger_tokens=TRIGGER,
                                  cache_prices=ad.CachePrices())
        # fmt: on
        return await runner.until_done()

    final = asyncio.run(run())
    assert len(model.bodies) == len(MODULES) + 2
    assert from_first_stub(model.stubbed()) == from_first_stub(
        plain_loop(make_kit(_fresh(tmp_path)))
    )
    assert _lookups(kit) == len(MODULES)
    assert model.replay_text == lookup_text(MODULES[0])
    assert final.content[0].type == "text" and final.content[0].text == ANSWER
    names = [t["name"] for t in model.bodies[0]["tools"]]
    assert names == [t["name"] for t in kit.tools("anthropic")]
