"""The recipe in docs/recipes.md for LangChain v1 agents (`create_agent` with the
compaction middleware), and LangGraph's older `create_react_agent` with its
`pre_model_hook`, each run with LangChain's ChatOpenAI on a scripted model behind a
mocked transport."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from langchain_openai import ChatOpenAI

import addressable as ad
from addressable.integrations.langgraph import middleware, pre_model_hook, tools
from tests.helpers.scripted_model import ANSWER, MODULES, ScriptedModel, lookup_text, make_kit

TASK = "Describe the modules json, pathlib, sqlite3, logging and textwrap."
# The context a loop allows before it compacts (100_000, say, in docs/recipes.md): the
# scripted session is short, so here every request is over it.
TRIGGER = 1


def test_the_agent_s_middleware_compacts_its_state(disk_kit: ad.Toolkit) -> None:
    from langchain.agents import create_agent

    kit = make_kit(disk_kit)
    model = ScriptedModel()
    llm = ChatOpenAI(
        model="gpt-4o", api_key="x", http_client=httpx2.Client(transport=model.transport())
    )
    # fmt: off
    compacting = middleware(kit, keep_last=2, trigger_tokens=TRIGGER,
                            cache_prices=ad.CachePrices())
    agent = create_agent(llm, tools(kit), middleware=[compacting])
    state = agent.invoke({"messages": [{"role": "user", "content": TASK}]}, {"recursion_limit": 50})
    # fmt: on
    check(model, state)


def check(model: ScriptedModel, state: dict[str, Any]) -> None:
    assert state["messages"][-1].content == ANSWER
    assert len(model.bodies) == len(MODULES) + 2
    assert model.stubs_sent > 0
    assert model.replay_text == lookup_text(MODULES[0])
    # The state holds the stubs, in place: evicted results replaced by id.
    tool_messages = [m for m in state["messages"] if m.type == "tool"]
    assert len(tool_messages) == len(MODULES) + 1
    assert ad.parse_stub(str(tool_messages[0].content)) is not None
    assert len({m.id for m in state["messages"]}) == len(state["messages"])


# create_react_agent (the home of pre_model_hook) warns that it moved to langchain.agents
@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
def test_the_react_agent_compacts_its_state(disk_kit: ad.Toolkit) -> None:
    from langgraph.prebuilt import create_react_agent

    kit = make_kit(disk_kit)
    model = ScriptedModel()
    llm = ChatOpenAI(
        model="gpt-4o", api_key="x", http_client=httpx2.Client(transport=model.transport())
    )
    hook = pre_model_hook(kit, keep_last=2, trigger_tokens=TRIGGER, cache_prices=ad.CachePrices())
    agent = create_react_agent(llm, tools(kit), pre_model_hook=hook)
    state = agent.invoke({"messages": [("user", TASK)]}, {"recursion_limit": 50})
    check(model, state)
