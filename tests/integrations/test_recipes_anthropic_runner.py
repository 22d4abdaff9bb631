"""The recipe in docs/recipes.md for the Anthropic SDK's tool runner, run against the SDK's
runner with a scripted model on a mocked transport."""

from __future__ import annotations

import asyncio

import anthropic
import httpx2

import addressable as ad
from addressable.integrations.anthropic import async_runner_tools, compact_runner, runner_tools
from tests.helpers.scripted_model import ANSWER, MODULES, ScriptedModel, lookup_text, make_kit

TASK = "Describe the modules json, pathlib, sqlite3, logging and textwrap."
# The context a loop allows before it compacts (100_000, say, in docs/recipes.md): the
# scripted session is short, so here every request is over it.
TRIGGER = 1


def test_the_tool_runner_compacts_between_turns(disk_kit: ad.Toolkit) -> None:
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
    for _message in runner:
        compact_runner(runner, kit, keep_last=2, trigger_tokens=TRIGGER,
                       cache_prices=ad.CachePrices())
    # fmt: on
    assert len(model.bodies) == len(MODULES) + 2
    assert model.stubs_sent > 0
    assert model.replay_text == lookup_text(MODULES[0])
    final = runner.until_done()
    assert final.content[0].type == "text" and final.content[0].text == ANSWER
    names = [t["name"] for t in model.bodies[0]["tools"]]
    assert names == [t["name"] for t in kit.tools("anthropic")]


def test_the_async_tool_runner_compacts_between_turns(disk_kit: ad.Toolkit) -> None:
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
        async for _message in runner:
            compact_runner(runner, kit, keep_last=2, trigger_tokens=TRIGGER,
                           cache_prices=ad.CachePrices())
        # fmt: on
        return await runner.until_done()

    final = asyncio.run(run())
    assert len(model.bodies) == len(MODULES) + 2
    assert model.stubs_sent > 0
    assert model.replay_text == lookup_text(MODULES[0])
    assert final.content[0].type == "text" and final.content[0].text == ANSWER
    names = [t["name"] for t in model.bodies[0]["tools"]]
    assert names == [t["name"] for t in kit.tools("anthropic")]
