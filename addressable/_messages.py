"""Message lists in the shapes of the APIs: find the tool calls and their results, check
that the list is well formed, replace a result's content in place, count tokens.

Four shapes are read:

- ``anthropic``: Messages API; `tool_use` blocks in assistant messages, `tool_result`
  blocks (string or list content, `is_error`) in the user message after them.
- ``openai``: Chat Completions; assistant `tool_calls` with `function.arguments` as a
  JSON string, `role: tool` messages with `tool_call_id`.
- ``flat``: the same, flattened: `tool_calls: [{"id", "name", "arguments": {...}}]`.
- ``openai-responses``: Responses API items; `function_call` and
  `function_call_output` items joined by `call_id`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._errors import AddressableError, ArgumentError
from ._tokens import count_tokens

Shape = Literal["anthropic", "openai", "flat", "openai-responses"]
SHAPES: tuple[Shape, ...] = ("anthropic", "openai", "flat", "openai-responses")
MESSAGE_OVERHEAD = 3  # tokens each message costs beyond its text (role and separators)


class MalformedMessages(AddressableError, ValueError):
    """A message list that is not well formed; `index` names the offending message."""

    def __init__(self, index: int, why: str) -> None:
        self.index = index
        super().__init__(f"message {index}: {why}")


@dataclass(frozen=True)
class ToolCall:
    """A tool call in the list: where it is, its id, the tool and its arguments."""

    index: int
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    """A tool result in the list: where it is (message, and block for Anthropic), the
    call it answers and its text."""

    index: int
    block: int | None
    call_id: str
    text: str
    is_error: bool


@dataclass(frozen=True)
class Conversation:
    """What `parse` found: the shape, every call by id, every result in order, and the
    calls still in flight (at the end of the list, with no result yet)."""

    shape: Shape
    calls: dict[str, ToolCall]
    results: list[ToolResult]
    in_flight: list[ToolCall]


def detect(messages: Sequence[Mapping[str, Any]]) -> Shape:
    """The shape of a message list (a list with no tool calls reads as ``openai``)."""
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise MalformedMessages(i, f"expected an object, got {type(message).__name__}")
        kind = message.get("type")
        if kind in ("function_call", "function_call_output"):
            return "openai-responses"
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result") for b in content
        ):
            return "anthropic"
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping):
                return "openai" if "function" in call else "flat"
    return "openai"


def parse(messages: Sequence[Mapping[str, Any]], shape: str = "auto") -> Conversation:
    """Find the calls and results of a message list, or raise `MalformedMessages`
    naming the first offending message."""
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise MalformedMessages(0, "a message list must be a list")
    found: Shape = detect(messages) if shape == "auto" else _shape(shape)
    reader = {
        "anthropic": _anthropic,
        "openai": _chat,
        "flat": _chat,
        "openai-responses": _responses,
    }[found]
    calls: dict[str, ToolCall] = {}
    results: list[ToolResult] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise MalformedMessages(i, f"expected an object, got {type(message).__name__}")
        for item in reader(i, message, found):
            if isinstance(item, ToolCall):
                if item.call_id in calls:
                    raise MalformedMessages(i, f"tool call id {item.call_id!r} is used twice")
                calls[item.call_id] = item
            else:
                if item.call_id not in calls:
                    raise MalformedMessages(
                        i, f"tool result for {item.call_id!r} answers no earlier tool call"
                    )
                if any(r.call_id == item.call_id for r in results):
                    raise MalformedMessages(i, f"a second tool result for {item.call_id!r}")
                results.append(item)
    answered = {r.call_id for r in results}
    waiting = [c for c in calls.values() if c.call_id not in answered]
    # A call without a result is in flight only at the end of the list: after it come
    # nothing but results and other calls still in flight (parallel calls of one turn).
    trailing = {r.index for r in results} | {c.index for c in waiting}
    for call in waiting:
        later = range(call.index + 1, len(messages))
        answered_before = any(
            r.index > call.index and calls[r.call_id].index < call.index for r in results
        )
        if any(i not in trailing for i in later) or answered_before:
            raise MalformedMessages(
                call.index, f"tool call {call.call_id!r} ({call.name}) has no result"
            )
    return Conversation(found, calls, results, waiting)


def _shape(shape: str) -> Shape:
    if shape not in SHAPES:
        raise ArgumentError(f"unknown message shape {shape!r}: use auto or one of {SHAPES}")
    return shape


def _anthropic(i: int, message: Mapping[str, Any], shape: Shape) -> list[ToolCall | ToolResult]:
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
            raise MalformedMessages(i, f"block {b} is not a typed content block")
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
                )
            )
    return out


def _chat(i: int, message: Mapping[str, Any], shape: Shape) -> list[ToolCall | ToolResult]:
    role = message.get("role")
    if role not in ("system", "developer", "user", "assistant", "tool"):
        raise MalformedMessages(i, f"unknown role {role!r}")
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            raise MalformedMessages(i, "a tool message needs a tool_call_id")
        return [ToolResult(i, None, call_id, _text(i, message.get("content")), False)]
    out: list[ToolCall | ToolResult] = []
    calls = message.get("tool_calls") or []
    if calls and role != "assistant":
        raise MalformedMessages(i, "tool_calls outside an assistant message")
    for call in calls:
        if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
            raise MalformedMessages(i, "each tool call needs an id")
        if shape == "openai":
            function = call.get("function")
            if not isinstance(function, Mapping):
                raise MalformedMessages(i, f"tool call {call['id']!r} has no function")
            name, raw = function.get("name"), function.get("arguments", "{}")
            args = _json_object(i, raw, call["id"])
        else:
            name, args = call.get("name"), call.get("arguments", {})
            if isinstance(args, str):
                args = _json_object(i, args, call["id"])
            if not isinstance(args, Mapping):
                raise MalformedMessages(i, f"tool call {call['id']!r} arguments are not an object")
        out.append(ToolCall(i, call["id"], str(name or ""), dict(args)))
    return out


def _responses(i: int, item: Mapping[str, Any], shape: Shape) -> list[ToolCall | ToolResult]:
    kind = item.get("type")
    if kind == "function_call":
        if not isinstance(item.get("call_id"), str):
            raise MalformedMessages(i, "a function_call needs a call_id")
        args = _json_object(i, item.get("arguments", "{}"), item["call_id"])
        return [ToolCall(i, item["call_id"], str(item.get("name", "")), args)]
    if kind == "function_call_output":
        if not isinstance(item.get("call_id"), str):
            raise MalformedMessages(i, "a function_call_output needs a call_id")
        return [ToolResult(i, None, item["call_id"], _text(i, item.get("output", "")), False)]
    if kind in (None, "message") and "role" not in item:
        raise MalformedMessages(i, "an item needs a type or a role")
    return []


def _json_object(i: int, raw: Any, call_id: str) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        raise MalformedMessages(i, f"tool call {call_id!r} arguments are not JSON") from None
    if not isinstance(value, dict):
        raise MalformedMessages(i, f"tool call {call_id!r} arguments are not a JSON object")
    return value


def _text(i: int, content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    raise MalformedMessages(i, "content must be a string or a list of parts")


def set_result_text(
    messages: list[dict[str, Any]], result: ToolResult, text: str, shape: Shape
) -> None:
    """Replace a result's content with `text`, in place, keeping the kind of content
    (a string stays a string; a list becomes a list of one text part)."""
    if shape == "anthropic":
        assert result.block is not None
        block = messages[result.index]["content"][result.block]
        block["content"] = (
            text
            if isinstance(block.get("content"), str) or "content" not in block
            else [{"type": "text", "text": text}]
        )
    elif shape == "openai-responses":
        item = messages[result.index]
        item["output"] = (
            text if isinstance(item.get("output"), str) else [{"type": "input_text", "text": text}]
        )
    else:
        message = messages[result.index]
        message["content"] = (
            text
            if not isinstance(message.get("content"), list)
            else [{"type": "text", "text": text}]
        )


def message_tokens(messages: Sequence[Mapping[str, Any]], system: str | None = None) -> int:
    """Tokens of a request: each message's text (content, tool calls as their JSON) plus
    `MESSAGE_OVERHEAD` a message, and the system prompt."""
    total = count_tokens(system) + MESSAGE_OVERHEAD if system else 0
    for message in messages:
        total += MESSAGE_OVERHEAD + count_tokens(_all_text(message))
    return total


def said(message: Mapping[str, Any], shape: Shape) -> str:
    """The text of a message that is not a tool result: what the user, the system or
    the agent wrote, tool calls and their arguments included. Compaction never
    rewrites it."""
    if shape == "anthropic":
        content = message.get("content")
        if isinstance(content, list):
            return "\n".join(
                _all_text(block)
                for block in content
                if not (isinstance(block, Mapping) and block.get("type") == "tool_result")
            )
        return _all_text(message)
    if shape == "openai-responses":
        return "" if message.get("type") == "function_call_output" else _all_text(message)
    return "" if message.get("role") == "tool" else _all_text(message)


def _all_text(value: Any) -> str:
    # Every string in the message, keys excepted: text, tool inputs, ids and names.
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(
            _field_text(k, v)
            for k, v in value.items()
            if k not in ("type", "role", "cache_control") and v is not None
        )
    if isinstance(value, list):
        return "\n".join(_all_text(v) for v in value)
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return ""


def _field_text(key: str, value: Any) -> str:
    # Tool arguments count as the JSON the model wrote, whether given as a string
    # (OpenAI) or as an object (Anthropic's input, the flattened shape).
    if key in ("arguments", "input") and isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    return _all_text(value)
