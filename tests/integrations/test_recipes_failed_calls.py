"""A tool call that failed looks failed in each SDK's own terms, with the one-line
`error: ...` text the model sees unchanged: the Anthropic tool runner sends its result
with `is_error`, LangGraph's ToolMessage has status "error", and the Agents SDK sets the
error of the call's function span. A tool that succeeded with a text that happens to
start with "error: " is not marked; a call whose record failed is, whatever its text
(the MCP server's `is_error` follows the same rule). Each SDK runs against a mocked
transport: the model asks for three calls at once, then answers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

import addressable as ad
from tests.helpers.scripted_model import chat_body, responses_body

CALLS = [("call_0", "lookup"), ("call_1", "boom"), ("call_2", "says")]
FAILED = "error: RuntimeError: the backend is down"
SAID = "error: this line is what the log holds, not a failure"
ANSWER = "Done."


def make_kit(kit: ad.Toolkit) -> ad.Toolkit:
    @kit.tool(determinism="nondeterministic")
    def lookup(name: str) -> str:
        """Describe a Python module."""
        return f"{name}: a module."

    @kit.tool(determinism="nondeterministic")
    def boom(name: str) -> str:
        """Fail."""
        raise RuntimeError("the backend is down")

    @kit.tool(determinism="nondeterministic")
    def says(name: str) -> str:
        """Succeed with a text that starts like an error."""
        return SAID

    return kit


class TwoTurns:
    """Asks for the three calls, then answers; keeps every request body."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.bodies: list[dict[str, Any]] = []

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        first = len(self.bodies) == 1
        reply = {"anthropic": _anthropic, "chat": _chat, "responses": _responses}[self.api]
        return httpx2.Response(200, json=reply(first))


def _anthropic(first: bool) -> dict[str, Any]:
    uses = [{"type": "tool_use", "id": i, "name": n, "input": {"name": "json"}} for i, n in CALLS]
    return {
        "id": "msg_1" if first else "msg_2",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": uses if first else [{"type": "text", "text": ANSWER}],
        "stop_reason": "tool_use" if first else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _chat(first: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None if first else ANSWER}
    if first:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": '{"name": "x"}'}}
            for i, n in CALLS
        ]
    return chat_body(message)


def _responses(first: bool) -> dict[str, Any]:
    calls = [
        {
            "type": "function_call",
            "id": f"fc_{i}",
            "call_id": i,
            "name": n,
            "arguments": '{"name": "x"}',
            "status": "completed",
        }
        for i, n in CALLS
    ]
    answer = {
        "type": "message",
        "id": "msg_2",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
    }
    return responses_body("resp_1", calls if first else [answer])


def _tool_results(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for message in body["messages"]:
        if isinstance(message["content"], list):
            yield from (b for b in message["content"] if b.get("type") == "tool_result")


def _check_anthropic_results(model: TwoTurns) -> None:
    assert len(model.bodies) == 2
    results = {r["tool_use_id"]: r for r in _tool_results(model.bodies[1])}
    assert [results[i].get("is_error", False) for i, _ in CALLS] == [False, True, False]
    assert results["call_1"]["content"] == FAILED
    assert results["call_2"]["content"] == SAID


def test_the_tool_runner_sends_a_failed_call_with_is_error(disk_kit: ad.Toolkit) -> None:
    from addressable.integrations.anthropic import runner_tools

    kit = make_kit(disk_kit)
    model = TwoTurns("anthropic")
    client = anthropic.Anthropic(
        api_key="x", http_client=httpx2.Client(transport=model.transport())
    )
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5-5",
        max_tokens=1024,
        tools=runner_tools(kit),
        messages=[{"role": "user", "content": "go"}],
    )
    assert runner.until_done().content[0].type == "text"
    _check_anthropic_results(model)


def test_the_async_tool_runner_sends_a_failed_call_with_is_error(disk_kit: ad.Toolkit) -> None:
    from addressable.integrations.anthropic import async_runner_tools

    kit = make_kit(disk_kit)
    model = TwoTurns("anthropic")
    client = anthropic.AsyncAnthropic(
        api_key="x", http_client=httpx2.AsyncClient(transport=model.transport())
    )

    async def run() -> None:
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-5-5",
            max_tokens=1024,
            tools=async_runner_tools(kit),
            messages=[{"role": "user", "content": "go"}],
        )
        await runner.until_done()

    asyncio.run(run())
    _check_anthropic_results(model)


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
def test_langgraph_records_a_failed_call_with_status_error(disk_kit: ad.Toolkit, mode: str) -> None:
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    from addressable.integrations.langgraph import pre_model_hook, tools

    kit = make_kit(disk_kit)
    model = TwoTurns("chat")
    llm = ChatOpenAI(
        model="gpt-4o",
        api_key="x",
        http_client=httpx2.Client(transport=model.transport()),
        http_async_client=httpx2.AsyncClient(transport=model.transport()),
    )
    agent = create_react_agent(llm, tools(kit), pre_model_hook=pre_model_hook(kit))
    request = {"messages": [("user", "go")]}
    state = agent.invoke(request) if mode == "invoke" else asyncio.run(agent.ainvoke(request))

    answers = {m.tool_call_id: m for m in state["messages"] if m.type == "tool"}
    assert [answers[i].status for i, _ in CALLS] == ["success", "error", "success"]
    assert answers["call_1"].content == FAILED
    assert answers["call_2"].content == SAID
    assert state["messages"][-1].content == ANSWER
    sent = {
        m["tool_call_id"]: m["content"] for m in model.bodies[1]["messages"] if "tool_call_id" in m
    }
    assert sent["call_1"] == FAILED


def test_the_agents_sdk_sets_the_error_of_a_failed_calls_span(disk_kit: ad.Toolkit) -> None:
    from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, set_trace_processors
    from agents.tracing import TracingProcessor
    from agents.tracing.processors import default_processor
    from openai import AsyncOpenAI

    from addressable.integrations.openai_agents import tools

    class Spans(TracingProcessor):
        """Keeps the function spans that end, instead of exporting them."""

        def __init__(self) -> None:
            self.ended: list[Any] = []

        def on_trace_start(self, trace: Any) -> None: ...
        def on_trace_end(self, trace: Any) -> None: ...
        def on_span_start(self, span: Any) -> None: ...
        def on_span_end(self, span: Any) -> None:
            if span.span_data.type == "function":
                self.ended.append(span)

        def shutdown(self) -> None: ...
        def force_flush(self) -> None: ...

    kit = make_kit(disk_kit)
    model = TwoTurns("responses")
    client = AsyncOpenAI(api_key="x", http_client=httpx2.AsyncClient(transport=model.transport()))
    llm = OpenAIResponsesModel(model="gpt-4o", openai_client=client)
    agent = Agent(name="researcher", instructions="Use the tools.", model=llm, tools=tools(kit))
    spans = Spans()
    set_trace_processors([spans])
    try:
        result = asyncio.run(Runner.run(agent, "go", run_config=RunConfig()))
    finally:
        set_trace_processors([default_processor()])

    assert result.final_output == ANSWER
    errors = {s.span_data.name: s.error for s in spans.ended}
    assert errors["lookup"] is None and errors["says"] is None
    assert errors["boom"] is not None
    assert errors["boom"]["data"] == {"tool_name": "boom", "error": FAILED}
    sent = {i["call_id"]: i["output"] for i in model.bodies[1]["input"] if "output" in i}
    assert sent == {"call_0": "x: a module.", "call_1": FAILED, "call_2": SAID}


def test_a_call_whose_record_failed_is_failed_whatever_its_text(
    disk_kit: ad.Toolkit, tmp_path: Path
) -> None:
    from addressable.adapters import Shell
    from addressable.kit import failed

    Shell(disk_kit, cwd=tmp_path, allow=["sleep"], timeout=0.2)
    # A command that timed out shows its output and how it ended, not "error: ...".
    timed_out = disk_kit.handle("shell", {"command": "sleep 5"})
    assert not timed_out.startswith("error: ")
    assert failed(disk_kit, "shell", timed_out)
    assert not failed(disk_kit, "shell", disk_kit.handle("shell", {"command": "sleep 0"}))
