"""The LangGraph helper's tools hand the model's arguments to the kit whatever their
names: LangChain fills `config` and `run_manager` in for a tool that declares them, and a
`self` argument once met the tool's own. Checked with a tool call invoked directly (sync
and async) and through `create_react_agent` on a mocked transport."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

import addressable as ad
from tests.helpers.scripted_model import chat_body

CALLS = [
    ("call_0", "deploy", {"service": "web", "config": {"env": "prod"}}),
    ("call_1", "trace", {"run_manager": "ops"}),
    ("call_2", "bind", {"self": "me"}),
]
RESULTS = ["deploy web with {'env': 'prod'}", "trace ops", "bind me"]
ANSWER = "Done."


def make_kit(kit: ad.Toolkit) -> ad.Toolkit:
    @kit.tool(determinism="nondeterministic")
    def deploy(service: str, config: dict[str, str]) -> str:
        """Deploy a service."""
        return f"deploy {service} with {config}"

    @kit.tool(determinism="nondeterministic")
    def trace(run_manager: str) -> str:
        """Trace a run."""
        return f"trace {run_manager}"

    @kit.tool(determinism="nondeterministic")
    def bind(self: str) -> str:
        """Bind a name."""
        return f"bind {self}"

    return kit


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_a_tool_call_reaches_the_kit_with_every_argument(disk_kit: ad.Toolkit, mode: str) -> None:
    from addressable.integrations.langgraph import tools

    by_name = {t.name: t for t in tools(make_kit(disk_kit))}
    for (call_id, name, args), expected in zip(CALLS, RESULTS, strict=True):
        call = {"type": "tool_call", "name": name, "args": args, "id": call_id}
        tool = by_name[name]
        message = tool.invoke(call) if mode == "invoke" else asyncio.run(tool.ainvoke(call))
        assert (message.status, message.content) == ("success", expected)
    # The schema is the kit's, as given: the model is told of `config` and `self`.
    assert set(by_name["deploy"].args) == {"service", "config"}
    assert set(by_name["bind"].args) == {"self"}


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_a_failed_call_still_has_status_error(disk_kit: ad.Toolkit, mode: str) -> None:
    from addressable.integrations.langgraph import tools

    tool = {t.name: t for t in tools(make_kit(disk_kit))}["deploy"]
    call = {"type": "tool_call", "name": "deploy", "args": {"service": "web"}, "id": "c"}
    message = tool.invoke(call) if mode == "invoke" else asyncio.run(tool.ainvoke(call))
    assert message.status == "error"
    assert message.content == "error: deploy: argument 'config' is required"


def _chat(first: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None if first else ANSWER}
    if first:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in CALLS
        ]
    return chat_body(message)


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
def test_the_react_agent_passes_every_argument(disk_kit: ad.Toolkit, mode: str) -> None:
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    from addressable.integrations.langgraph import tools

    bodies: list[dict[str, Any]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=_chat(len(bodies) == 1))

    transport = httpx2.MockTransport(handle)
    llm = ChatOpenAI(
        model="gpt-4o",
        api_key="x",
        http_client=httpx2.Client(transport=transport),
        http_async_client=httpx2.AsyncClient(transport=transport),
    )
    agent = create_react_agent(llm, tools(make_kit(disk_kit)))
    request = {"messages": [("user", "go")]}
    state = agent.invoke(request) if mode == "invoke" else asyncio.run(agent.ainvoke(request))

    answers = {m.tool_call_id: m for m in state["messages"] if m.type == "tool"}
    assert [(answers[i].status, answers[i].content) for i, _, _ in CALLS] == [
        ("success", r) for r in RESULTS
    ]
    assert state["messages"][-1].content == ANSWER
    assert len(bodies) == 2
