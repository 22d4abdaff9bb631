"""`compact` takes what agent code holds: the SDKs' own objects, and LangChain messages.

Each list is built the way the SDKs' tutorials build it (appending what a response
returned), compacted, and sent back through the real SDK client to a mocked transport:
the request the SDK makes must carry the stubs, and every other field as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2 as httpx
import pytest

import addressable as ad
from tests.helpers.scripted_model import responses_body

TASK = "Look up the modules one by one."
MODULES = ["json", "pathlib", "sqlite3", "logging", "textwrap"]


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    @disk_kit.tool(determinism="nondeterministic")
    def lookup(name: str) -> str:
        """Describe a module."""
        lines = [f"{name} line {n}: the module {name} does thing {n} of many." for n in range(40)]
        return "\n".join(lines)

    return disk_kit


class Recorder:
    """A mocked transport that answers every request with `reply` and keeps the bodies."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        return httpx.Response(200, json=self.reply)


def openai_request(reply: dict[str, Any], send: Callable[[Any], object]) -> dict[str, Any]:
    """The body the real OpenAI client sends for `send(client)`, to a mocked transport."""
    import openai

    recorder = Recorder(reply)
    client = openai.OpenAI(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(recorder))
    )
    send(client)
    return recorder.bodies[0]


ANTHROPIC_DONE = {
    "id": "msg_done",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-5-5",
    "content": [{"type": "text", "text": "done"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def anthropic_turn(k: int, name: str) -> dict[str, Any]:
    return {
        **ANTHROPIC_DONE,
        "id": f"msg_{k}",
        "content": [
            {"type": "text", "text": f"Looking up {name}."},
            {"type": "tool_use", "id": f"toolu_{k}", "name": "lookup", "input": {"name": name}},
        ],
        "stop_reason": "tool_use",
    }


def test_anthropic_response_content_blocks(kit: ad.Toolkit) -> None:
    import anthropic
    from anthropic.types import Message, ToolUseBlock

    messages: list[Any] = [{"role": "user", "content": TASK}]
    for k, name in enumerate(MODULES):
        resp = Message.model_validate(anthropic_turn(k, name))
        messages.append({"role": "assistant", "content": resp.content})
        block = resp.content[1]
        assert isinstance(block, ToolUseBlock)
        text = kit.handle(block.name, block.input)
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": block.id, "content": text}],
            }
        )
    result = ad.compact(messages, kit=kit, keep_last=1)

    assert result.source == "sdk" and result.shape == "anthropic"
    assert [e.call_id for e in result.evicted] == [f"toolu_{k}" for k in range(4)]
    assert len(result.messages) == len(messages)
    # What compaction did not change is a copy of what was given: the SDK's blocks.
    assert isinstance(result.messages[1]["content"][1], ToolUseBlock)
    assert result.messages[1]["content"][1].id == "toolu_0"
    assert messages[2]["content"][0]["content"].startswith("json line 0")  # input unchanged
    stub = result.messages[2]["content"][0]["content"]
    assert ad.parse_stub(stub) is not None

    recorder = Recorder(ANTHROPIC_DONE)
    client = anthropic.Anthropic(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(recorder))
    )
    client.messages.create(model="claude-sonnet-5-5", max_tokens=100, messages=result.messages)
    sent = recorder.bodies[0]["messages"]
    assert sent[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_0",
        "content": stub,
    }
    assert sent[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_0",
        "name": "lookup",
        "input": {"name": "json"},
    }
    assert sent[-1] == messages[-1]  # the newest result, whole
    assert (
        kit.handle("replay_result", {"id": ad.parse_stub(stub)[1]})
        == (  # type: ignore[index]
            messages[2]["content"][0]["content"]
        )
    )


def test_an_anthropic_message_object_itself(kit: ad.Toolkit) -> None:
    from anthropic.types import Message

    resp = Message.model_validate(anthropic_turn(0, "json"))
    text = kit.handle("lookup", {"name": "json"})
    messages: list[Any] = [
        {"role": "user", "content": TASK},
        resp,
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "content": text}],
        },
        {"role": "assistant", "content": "ok"},
    ]
    result = ad.compact(messages, kit=kit, keep_last=0)
    assert [e.call_id for e in result.evicted] == ["toolu_0"]
    assert isinstance(result.messages[1], Message) and result.messages[1].id == resp.id


def test_a_cache_breakpoint_inside_a_tool_result_stays_on_its_stub(kit: ad.Toolkit) -> None:
    import anthropic
    from anthropic.types import (
        CacheControlEphemeralParam,
        Message,
        MessageParam,
        TextBlockParam,
        ToolResultBlockParam,
    )

    resp = Message.model_validate(anthropic_turn(0, "json"))
    text = kit.handle("lookup", {"name": "json"})
    mark = CacheControlEphemeralParam(type="ephemeral", ttl="1h")
    parts: list[TextBlockParam] = [
        TextBlockParam(type="text", text=text[:100]),
        TextBlockParam(type="text", text=text[100:], cache_control=mark),
    ]
    result_block = ToolResultBlockParam(type="tool_result", tool_use_id="toolu_0", content=parts)
    messages: list[MessageParam] = [
        {"role": "user", "content": TASK},
        {"role": "assistant", "content": resp.content},
        {"role": "user", "content": [result_block]},
        {"role": "assistant", "content": "ok"},
    ]
    result = ad.compact(messages, kit=kit, keep_last=0)
    assert [e.call_id for e in result.evicted] == ["toolu_0"]

    recorder = Recorder(ANTHROPIC_DONE)
    client = anthropic.Anthropic(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(recorder))
    )
    client.messages.create(model="claude-sonnet-5-5", max_tokens=100, messages=result.messages)
    (sent,) = recorder.bodies[0]["messages"][2]["content"]
    (stub,) = sent["content"]
    assert ad.parse_stub(stub["text"]) is not None
    assert stub == {"type": "text", "text": stub["text"], "cache_control": dict(mark)}
    assert parts[1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}  # input unchanged
    assert "cache_control" not in parts[0]


CHAT_DONE = {
    "id": "chatcmpl-done",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "gpt-4o",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "logprobs": None,
            "message": {"role": "assistant", "content": "done", "refusal": None},
        }
    ],
}


def chat_turn(k: int, name: str) -> dict[str, Any]:
    call = {
        "id": f"call_{k}",
        "type": "function",
        "function": {"name": "lookup", "arguments": json.dumps({"name": name})},
    }
    message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}
    choice = {"index": 0, "finish_reason": "tool_calls", "logprobs": None, "message": message}
    return {**CHAT_DONE, "id": f"chatcmpl-{k}", "choices": [choice]}


def test_openai_chat_completion_messages(kit: ad.Toolkit) -> None:
    from openai.types.chat import ChatCompletion, ChatCompletionMessage

    messages: list[Any] = [{"role": "user", "content": TASK}]
    for k, name in enumerate(MODULES):
        message = ChatCompletion.model_validate(chat_turn(k, name)).choices[0].message
        messages.append(message)
        for call in message.tool_calls or []:
            assert call.type == "function"
            text = kit.handle(call.function.name, call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    result = ad.compact(messages, kit=kit, keep_last=1)

    assert result.source == "sdk" and result.shape == "openai"
    assert len(result.evicted) == 4
    assert all(isinstance(result.messages[i], ChatCompletionMessage) for i in (1, 3, 5, 7, 9))
    assert result.messages[1].tool_calls[0].id == "call_0"
    assert ad.parse_stub(result.messages[2]["content"]) is not None

    sent = openai_request(
        CHAT_DONE,
        lambda client: client.chat.completions.create(model="gpt-4o", messages=result.messages),
    )["messages"]
    assert sent[2] == {
        "role": "tool",
        "tool_call_id": "call_0",
        "content": result.messages[2]["content"],
    }
    assert sent[1]["tool_calls"][0]["id"] == "call_0"
    assert sent[-1] == messages[-1]


def patch_text(name: str) -> str:
    """A custom tool's free-text input, as a model writes it: not JSON."""
    return f"*** Update File: {name}.py\n@@\n-old line\n+new line for {name}\n"


def test_openai_chat_custom_tool_calls(kit: ad.Toolkit) -> None:
    # A custom tool takes free text (`custom.input`), not JSON arguments; a list that
    # mixes them with function calls is read, compacted and sent as the SDK sends it.
    from openai.types.chat import ChatCompletion, ChatCompletionMessageCustomToolCall

    messages: list[Any] = [{"role": "user", "content": TASK}]
    for k, name in enumerate(MODULES):
        turn = chat_turn(k, name)
        if k % 2:
            custom = {"name": "apply_patch", "input": patch_text(name)}
            turn["choices"][0]["message"]["tool_calls"] = [
                {"id": f"call_{k}", "type": "custom", "custom": custom}
            ]
        message = ChatCompletion.model_validate(turn).choices[0].message
        messages.append(message)
        (call,) = message.tool_calls or []
        if k % 2:
            assert isinstance(call, ChatCompletionMessageCustomToolCall)
            text = f"patched {name}: " + " ".join(f"line {n} of {name}" for n in range(200))
        else:
            assert call.type == "function"
            text = kit.handle(call.function.name, call.function.arguments)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    conversation = ad.parse_messages(messages)
    assert conversation.calls["call_1"].name == "apply_patch"
    assert conversation.calls["call_1"].arguments == {"input": patch_text("pathlib")}
    result = ad.compact(messages, kit=kit, keep_last=1)

    assert result.shape == "openai" and len(result.evicted) == 4
    stub = result.messages[4]["content"]
    assert ad.parse_stub(stub) is not None
    sent = openai_request(
        CHAT_DONE,
        lambda client: client.chat.completions.create(model="gpt-5", messages=result.messages),
    )["messages"]
    assert sent[3]["tool_calls"][0]["custom"] == {
        "name": "apply_patch",
        "input": patch_text("pathlib"),
    }
    assert sent[4] == {"role": "tool", "tool_call_id": "call_1", "content": stub}


def test_openai_responses_custom_tool_calls(kit: ad.Toolkit) -> None:
    from openai.types.responses import Response, ResponseCustomToolCall

    items: list[Any] = [{"role": "user", "content": TASK}]
    for k, name in enumerate(MODULES):
        turn = responses_turn(k, name)
        turn["output"] = [
            {
                "type": "custom_tool_call",
                "id": f"ctc_{k}",
                "call_id": f"call_{k}",
                "name": "apply_patch",
                "input": patch_text(name),
            }
        ]
        resp = Response.model_validate(turn)
        items += resp.output
        (item,) = resp.output
        assert isinstance(item, ResponseCustomToolCall)
        text = f"patched {name}: " + " ".join(f"line {n} of {name}" for n in range(200))
        items.append({"type": "custom_tool_call_output", "call_id": item.call_id, "output": text})
    result = ad.compact(items, kit=kit, keep_last=1)

    assert result.shape == "openai-responses" and len(result.evicted) == 4
    assert isinstance(result.messages[1], ResponseCustomToolCall)
    stub = result.messages[2]["output"]
    assert ad.parse_stub(stub) is not None
    sent = openai_request(
        responses_turn(9, "done"),
        lambda client: client.responses.create(model="gpt-5", input=result.messages),
    )["input"]
    assert sent[2] == {"type": "custom_tool_call_output", "call_id": "call_0", "output": stub}
    assert sent[1]["input"] == patch_text("json")


def responses_turn(k: int, name: str) -> dict[str, Any]:
    call = {
        "type": "function_call",
        "id": f"fc_{k}",
        "call_id": f"call_{k}",
        "name": "lookup",
        "arguments": json.dumps({"name": name}),
        "status": "completed",
    }
    return responses_body(f"resp_{k}", [call])


def test_openai_responses_output_items(kit: ad.Toolkit) -> None:
    from openai.types.responses import Response, ResponseFunctionToolCall

    items: list[Any] = [{"role": "user", "content": TASK}]
    for k, name in enumerate(MODULES):
        resp = Response.model_validate(responses_turn(k, name))
        items += resp.output
        for item in resp.output:
            assert isinstance(item, ResponseFunctionToolCall)
            text = kit.handle(item.name, item.arguments)
            items.append({"type": "function_call_output", "call_id": item.call_id, "output": text})
    result = ad.compact(items, kit=kit, keep_last=1)

    assert result.source == "sdk" and result.shape == "openai-responses"
    assert len(result.evicted) == 4
    assert isinstance(result.messages[1], ResponseFunctionToolCall)
    assert result.messages[1].id == "fc_0"
    stub = result.messages[2]["output"]
    assert ad.parse_stub(stub) is not None

    sent = openai_request(
        responses_turn(9, "done"),
        lambda client: client.responses.create(model="gpt-4o", input=result.messages),
    )["input"]
    assert sent[2] == {"type": "function_call_output", "call_id": "call_0", "output": stub}
    assert sent[1]["id"] == "fc_0" and sent[1]["call_id"] == "call_0"
    assert sent[-1] == items[-1]


def test_langchain_messages_keep_their_ids(kit: ad.Toolkit) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.graph.message import add_messages

    messages: list[Any] = [HumanMessage(TASK, id="h0")]
    for k, name in enumerate(MODULES):
        call = {"id": f"call_{k}", "name": "lookup", "args": {"name": name}, "type": "tool_call"}
        messages.append(AIMessage("", tool_calls=[call], id=f"ai{k}"))
        text = kit.handle("lookup", {"name": name})
        messages.append(ToolMessage(text, tool_call_id=f"call_{k}", id=f"tool{k}", name="lookup"))
    result = ad.compact(messages, kit=kit, keep_last=1)

    assert result.source == "langchain" and result.shape == "flat"
    assert len(result.evicted) == 4
    assert [m.id for m in result.messages] == [m.id for m in messages]
    assert [type(m) for m in result.messages] == [type(m) for m in messages]
    evicted = result.messages[2]
    assert isinstance(evicted, ToolMessage)
    assert evicted.tool_call_id == "call_0" and evicted.name == "lookup"
    assert ad.parse_stub(str(evicted.content)) is not None
    assert result.messages[1].tool_calls == messages[1].tool_calls
    assert messages[2].content.startswith("json line 0")  # input unchanged

    # LangGraph's reducer replaces by id: the state keeps its length, with the stubs.
    merged = add_messages(messages, result.messages)
    assert len(merged) == len(messages)
    assert merged[2].content == evicted.content


def test_langchain_invalid_tool_calls_are_calls(kit: ad.Toolkit) -> None:
    # A call whose arguments did not parse is among `invalid_tool_calls`; the agent
    # answers it with a ToolMessage (the API wants an answer to every call): the list is
    # read and compacted, not refused for a result that answers no call.
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.messages.tool import invalid_tool_call

    cut = invalid_tool_call(name="lookup", args='{"name": "jso', id="bad_0", error="bad JSON")
    text = "error: the arguments are not JSON. " + " ".join(f"hint {n}" for n in range(300))
    messages: list[Any] = [
        HumanMessage(TASK, id="h0"),
        AIMessage("", invalid_tool_calls=[cut], id="ai_bad"),
        ToolMessage(text, tool_call_id="bad_0", id="tool_bad", name="lookup"),
    ]
    for k, name in enumerate(MODULES[:2]):
        call = {"id": f"call_{k}", "name": "lookup", "args": {"name": name}, "type": "tool_call"}
        messages.append(AIMessage("", tool_calls=[call], id=f"ai{k}"))
        reply = kit.handle("lookup", {"name": name})
        messages.append(ToolMessage(reply, tool_call_id=f"call_{k}", id=f"tool{k}"))
    assert ad.parse_messages(messages).calls["bad_0"].unparsed == '{"name": "jso'
    result = ad.compact(messages, kit=kit, keep_last=1)

    assert [m.id for m in result.messages] == [m.id for m in messages]
    assert ad.parse_stub(str(result.messages[2].content)) is not None
    assert result.messages[1].invalid_tool_calls == [cut]


@pytest.mark.parametrize(
    ("make", "index", "expected"),
    [
        pytest.param(
            lambda: [{"role": "user", "content": "a"}, 42],
            1,
            "expected a message: a dict, an SDK message object or a LangChain message, got int",
            id="not-a-message",
        ),
        pytest.param(
            lambda: [
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t", "name": "x", "input": {}},
                        object(),
                    ],
                },
            ],
            0,
            "block 1 is not a typed content block: expected a dict or an SDK block with a type",
            id="untyped-block",
        ),
        pytest.param(
            lambda: _langchain_then({"role": "user", "content": "x"}),
            1,
            "expected a LangChain message like the first one",
            id="langchain-then-dict",
        ),
        pytest.param(
            lambda: [{"role": "user", "content": "x"}, *_langchain_then()],
            1,
            "a LangChain message in a list that does not start with one",
            id="dict-then-langchain",
        ),
    ],
)
def test_a_list_in_the_wrong_shape_names_the_index_and_what_was_expected(
    kit: ad.Toolkit, make: Any, index: int, expected: str
) -> None:
    with pytest.raises(ad.MalformedMessages) as info:
        ad.compact(make(), kit=kit)
    assert info.value.index == index
    assert expected in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ad.AddressableError)


def _langchain_then(*more: Any) -> list[Any]:
    from langchain_core.messages import HumanMessage

    return [HumanMessage("hi"), *more]


def test_langchain_message_chunks_are_read_by_their_kind(kit: ad.Toolkit) -> None:
    # A graph node that adds up a streamed reply puts an AIMessageChunk in the state
    # (its `type` is the class name, not "ai"); its calls are answered by ToolMessages,
    # and a result may be a ToolMessageChunk: both are read, and given back as chunks
    # under their own ids, which LangGraph's reducer takes in place of the originals.
    from langchain_core.messages import AIMessageChunk, HumanMessage, ToolMessageChunk
    from langgraph.graph.message import add_messages

    messages: list[Any] = [HumanMessage(TASK, id="h0")]
    for k, name in enumerate(MODULES[:3]):
        head = {"id": f"call_{k}", "name": "lookup", "args": '{"na', "index": 0}
        tail = {"id": None, "name": None, "args": f'me": "{name}"}}', "index": 0}
        streamed = [AIMessageChunk("", id=f"ai{k}", tool_call_chunks=[c]) for c in (head, tail)]
        reply = streamed[0] + streamed[1]  # as a node adds up a streamed reply
        assert reply.type == "AIMessageChunk" and reply.tool_calls[0]["args"] == {"name": name}
        messages.append(reply)
        text = kit.handle("lookup", {"name": name})
        messages.append(ToolMessageChunk(text, tool_call_id=f"call_{k}", id=f"tool{k}"))
    result = ad.compact(messages, kit=kit, keep_last=1)

    assert result.source == "langchain"
    assert [e.index for e in result.evicted] == [2, 4]
    assert [m.id for m in result.messages] == [m.id for m in messages]
    assert [type(m) for m in result.messages] == [type(m) for m in messages]
    assert ad.parse_stub(str(result.messages[2].content)) is not None
    merged = add_messages(messages, [result.messages[e.index] for e in result.evicted])
    assert [m.id for m in merged] == [m.id for m in messages]
    assert merged[2].content == result.messages[2].content
    assert merged[2].tool_call_id == "call_0"
