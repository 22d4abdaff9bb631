"""The tool calls and results in one message of each shape: Anthropic's Messages,
Chat Completions (and its flattened form), and the Responses API's items; each reader
raises `MalformedMessages` for a message its shape does not allow."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..core.blocks import blocks_text, non_text
from ..core.errors import MalformedMessages
from .conversation import Shape, ToolCall, ToolResult


def read_anthropic(i: int, message: Mapping[str, Any], shape: Shape) -> list[ToolCall | ToolResult]:
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise MalformedMessages(i, f"role must be user or assistant, not {role!r}")
    content = message.get("content")
    if isinstance(content, str):
        return []
    if not isinstance(content, list):
        raise MalformedMessages(i, "content must be a string or a list of blocks")
    out: list[ToolCall | ToolResult] = []
    for b, block in enumerate(content):
        if not isinstance(block, Mapping) or "type" not in block:
            raise MalformedMessages(
                i,
                f"block {b} is not a typed content block: expected a dict or an SDK "
                f"block with a type, got {type(block).__name__}",
            )
        if block["type"] == "tool_use":
            if role != "assistant":
                raise MalformedMessages(i, "tool_use outside an assistant message")
            args = block.get("input")
            if not isinstance(block.get("id"), str) or not isinstance(args, Mapping):
                raise MalformedMessages(i, f"tool_use block {b} needs an id and an input object")
            out.append(ToolCall(i, block["id"], str(block.get("name", "")), dict(args)))
        elif block["type"] == "tool_result":
            if role != "user":
                raise MalformedMessages(i, "tool_result outside a user message")
            if not isinstance(block.get("tool_use_id"), str):
                raise MalformedMessages(i, f"tool_result block {b} needs a tool_use_id")
            out.append(
                ToolResult(
                    i,
                    b,
                    block["tool_use_id"],
                    _text(i, block.get("content", "")),
                    bool(block.get("is_error", False)),
                    _parts(block.get("content")),
                )
            )
    return out


def read_chat(i: int, message: Mapping[str, Any], shape: Shape) -> list[ToolCall | ToolResult]:
    role = message.get("role")
    if role not in ("system", "developer", "user", "assistant", "tool"):
        raise MalformedMessages(i, f"unknown role {role!r}")
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            raise MalformedMessages(i, "a tool message needs a tool_call_id")
        content = message.get("content")
        return [ToolResult(i, None, call_id, _text(i, content), False, _parts(content))]
    out: list[ToolCall | ToolResult] = []
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list | tuple):
        raise MalformedMessages(i, f"tool_calls is a {type(calls).__name__}, not a list")
    if calls and role != "assistant":
        raise MalformedMessages(i, "tool_calls outside an assistant message")
    for call in calls:
        if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
            raise MalformedMessages(i, "each tool call needs an id")
        if shape == "openai" and _custom(call):
            out.append(_custom_call(i, call["id"], call.get("custom")))
            continue
        if shape == "openai":
            function = call.get("function")
            if not isinstance(function, Mapping):
                raise MalformedMessages(i, f"tool call {call['id']!r} has no function")
            name, raw = function.get("name"), function.get("arguments", "{}")
        else:
            name, raw = call.get("name"), call.get("arguments", {})
        out.append(_call(i, call["id"], name, raw))
    return out


def read_responses(i: int, item: Mapping[str, Any], shape: Shape) -> list[ToolCall | ToolResult]:
    kind = item.get("type")
    if kind == "function_call":
        if not isinstance(item.get("call_id"), str):
            raise MalformedMessages(i, "a function_call needs a call_id")
        return [_call(i, item["call_id"], item.get("name"), item.get("arguments", "{}"))]
    if kind == "custom_tool_call":
        if not isinstance(item.get("call_id"), str):
            raise MalformedMessages(i, "a custom_tool_call needs a call_id")
        return [_custom_call(i, item["call_id"], item)]
    if kind in RESULT_ITEMS:
        if not isinstance(item.get("call_id"), str):
            raise MalformedMessages(i, f"a {kind} needs a call_id")
        output = item.get("output", "")
        return [ToolResult(i, None, item["call_id"], _text(i, output), False, _parts(output))]
    if kind in (None, "message") and "role" not in item:
        raise MalformedMessages(i, "an item needs a type or a role")
    return []


# Responses items that carry a tool's result, written back as their `output`.
RESULT_ITEMS = ("function_call_output", "custom_tool_call_output")


def _custom(call: Mapping[str, Any]) -> bool:
    """A Chat Completions call of a custom tool: free text in, not JSON arguments."""
    return call.get("type") == "custom" or ("custom" in call and "function" not in call)


def _custom_call(i: int, call_id: str, custom: Any) -> ToolCall:
    """A custom tool's call (Chat's `custom`, or a Responses `custom_tool_call` item):
    its one text, as the model wrote it, is kept as the argument `input`."""
    if not isinstance(custom, Mapping) or not isinstance(custom.get("input", ""), str):
        raise MalformedMessages(i, f"custom tool call {call_id!r} needs a name and a text input")
    return ToolCall(i, call_id, str(custom.get("name") or ""), {"input": custom.get("input", "")})


def _call(i: int, call_id: str, name: Any, raw: Any) -> ToolCall:
    """A call whose arguments are an object, or JSON text of one; other text is what the
    model wrote (cut off, or malformed), kept as `unparsed`: the API takes it as it is."""
    name = str(name or "")
    if isinstance(raw, Mapping):
        return ToolCall(i, call_id, name, dict(raw))
    if not isinstance(raw, str):
        raise MalformedMessages(i, f"tool call {call_id!r} arguments are not an object")
    try:
        value = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        return ToolCall(i, call_id, name, value)
    return ToolCall(i, call_id, name, {}, unparsed=raw)


def _parts(content: Any) -> tuple[Any, ...] | None:
    return tuple(content) if non_text(content) else None


def _text(i: int, content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return blocks_text(content)
    raise MalformedMessages(i, "content must be a string or a list of parts")
