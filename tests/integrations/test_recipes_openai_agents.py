"""The recipe in docs/recipes.md for the OpenAI Agents SDK, run with the SDK's Runner and its
Responses model, on a scripted model behind a mocked transport."""

from __future__ import annotations

import asyncio

import httpx2
from agents import Agent, OpenAIResponsesModel, RunConfig, Runner
from openai import AsyncOpenAI

import addressable as ad
from addressable.integrations.openai_agents import input_filter, tools
from tests.helpers.scripted_model import ANSWER, MODULES, ScriptedModel, lookup_text, make_kit

TASK = "Describe the modules json, pathlib, sqlite3, logging and textwrap."
# The context a loop allows before it compacts (100_000, say, in docs/recipes.md): the
# scripted session is short, so here every request is over it.
TRIGGER = 1


# Runner.run rather than run_sync: run_sync leaves the event loop it makes open.
def test_the_agents_runner_compacts_every_model_call(disk_kit: ad.Toolkit) -> None:
    kit = make_kit(disk_kit)
    model = ScriptedModel()
    client = AsyncOpenAI(api_key="x", http_client=httpx2.AsyncClient(transport=model.transport()))
    llm = OpenAIResponsesModel(model="gpt-4o", openai_client=client)
    # fmt: off
    agent = Agent(name="researcher", instructions="Use the tools.", model=llm, tools=tools(kit))
    compacting = input_filter(kit, keep_last=2, trigger_tokens=TRIGGER,
                              cache_prices=ad.CachePrices())
    config = RunConfig(call_model_input_filter=compacting, tracing_disabled=True)
    result = asyncio.run(Runner.run(agent, TASK, run_config=config))
    # fmt: on
    assert result.final_output == ANSWER
    assert len(model.bodies) == len(MODULES) + 2
    assert model.stubs_sent > 0
    assert model.replay_text == lookup_text(MODULES[0])
    sent = [t["name"] for t in model.bodies[0]["tools"]]
    assert sent == [t["name"] for t in kit.tools("openai-responses")]
