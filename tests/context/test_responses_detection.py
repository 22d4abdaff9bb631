"""A Responses list is known by its items' types before any function call: a reasoning
item, an item_reference, a message of output_text parts, a web search. Read as Chat
Completions, such a list was refused ("unknown role None"), and the OpenAI Agents SDK
recipe failed on its second run with a reasoning model."""

from __future__ import annotations

import asyncio
import json
import typing
from typing import Any

import httpx2
import pytest
from agents import Agent, OpenAIResponsesModel, RunConfig, Runner
from openai import AsyncOpenAI
from openai.types.responses import response_input_item_param, response_output_item

import addressable as ad
from addressable.context.messages import RESPONSES_ITEMS, detect
from addressable.integrations.openai_agents import input_filter, tools
from tests.helpers.scripted_model import make_kit

USER = {"role": "user", "content": "hi"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA=="}
ANSWER = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Hello! What module?", "annotations": []}],
}
WEB_SEARCH = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "x"},
}
REPLY = {
    "id": "resp_1",
    "object": "response",
    "created_at": 0,
    "model": "o4-mini",
    "status": "completed",
    "output": [REASONING, ANSWER],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}


def test_the_agents_recipe_runs_a_second_turn_after_a_reasoning_answer(
    disk_kit: ad.Toolkit,
) -> None:
    kit = make_kit(disk_kit)
    bodies: list[dict[str, Any]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=REPLY)

    transport = httpx2.MockTransport(handle)
    client = AsyncOpenAI(api_key="x", http_client=httpx2.AsyncClient(transport=transport))
    llm = OpenAIResponsesModel(model="o4-mini", openai_client=client)
    agent = Agent(name="r", instructions="Use the tools.", model=llm, tools=tools(kit))
    config = RunConfig(
        call_model_input_filter=input_filter(kit, keep_last=2), tracing_disabled=True
    )

    async def two_turns() -> str:
        first = await Runner.run(agent, "hi", run_config=config)
        again: list[Any] = [*first.to_input_list(), {"role": "user", "content": "Describe json"}]
        second = await Runner.run(agent, again, run_config=config)
        return str(second.final_output)

    assert asyncio.run(two_turns()) == "Hello! What module?"
    assert len(bodies) == 2
    sent = bodies[1]["input"]
    assert [item.get("type") for item in sent[1:3]] == ["reasoning", "message"]
    assert sent[1]["encrypted_content"] == "gAAAA=="
    assert sent[-1]["content"] == "Describe json"


LISTS: dict[str, list[dict[str, Any]]] = {
    "reasoning and a message": [USER, REASONING, ANSWER, {"role": "user", "content": "more"}],
    "an item_reference": [USER, {"type": "item_reference", "id": "msg_1"}],
    "a web_search_call": [USER, WEB_SEARCH],
    "a message of input_text parts": [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"role": "assistant", "content": "hello"},
    ],
}


@pytest.mark.parametrize("name", LISTS)
def test_a_responses_list_without_function_calls_compacts_unchanged(name: str) -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    items = LISTS[name]
    before = json.dumps(items)
    compacted = ad.compact(items, kit=kit, keep_last=2)
    assert compacted.shape == "openai-responses"
    assert compacted.evicted == []
    assert json.dumps(compacted.messages) == before
    assert json.dumps(items) == before


@pytest.mark.parametrize(
    "kind",
    sorted(
        RESPONSES_ITEMS
        - {"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output"}
    ),
)
def test_each_item_type_of_the_responses_api_marks_the_list(kind: str) -> None:
    items = [USER, {"type": kind, "id": "it_1"}]
    assert detect(items) == "openai-responses"
    compacted = ad.compact(items, kit=ad.Toolkit(ad.open_store("memory://")))
    assert compacted.messages == items


def _item_types(union: Any) -> set[str]:
    """The `type` literals of the item classes in one of the SDK's unions."""
    if typing.get_origin(union) is typing.Annotated:
        union = typing.get_args(union)[0]
    kinds: set[str] = set()
    for cls in typing.get_args(union):
        fields = getattr(cls, "model_fields", None)  # a pydantic model, or a TypedDict
        if fields is not None:
            hint = fields["type"].annotation
        else:
            hint = typing.get_type_hints(cls, include_extras=True)["type"]
        while typing.get_origin(hint) is not typing.Literal:  # Required[Literal[...]]
            hint = typing.get_args(hint)[0]
        kinds.update(typing.get_args(hint))
    return kinds


def test_every_item_type_the_openai_sdk_defines_is_known() -> None:
    sdk = _item_types(response_input_item_param.ResponseInputItemParam) | _item_types(
        response_output_item.ResponseOutputItem
    )
    assert "reasoning" in sdk
    # A `message` item is told by its parts: Anthropic's SDK dumps its messages with
    # type "message" too.
    assert sdk - {"message"} <= RESPONSES_ITEMS


@pytest.mark.parametrize(
    ("messages", "shape"),
    [
        ([USER, {"role": "assistant", "content": "hello"}], "openai"),
        ([USER, {"type": "message", "role": "assistant", "content": "hello"}], "openai"),
        (
            [
                USER,
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "hi"}],
                },
            ],
            "openai",
        ),
        ([USER, {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}], "openai"),
        ([{"role": "user", "content": [{"type": {"x": 1}}]}, {"type": ["reasoning"]}], "openai"),
    ],
)
def test_a_list_with_no_responses_item_is_detected_as_before(
    messages: list[dict[str, Any]], shape: str
) -> None:
    assert detect(messages) == shape
