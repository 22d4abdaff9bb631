"""Message lists in the shapes of the APIs: find the tool calls and their results, check
that the list is well formed, replace a result's content in place (their text and
tokens are counted in `context.messagetokens`).

Four shapes are read:

- ``anthropic``: Messages API; `tool_use` blocks in assistant messages, `tool_result`
  blocks (string or list content, `is_error`) in the user message after them.
- ``openai``: Chat Completions; assistant `tool_calls` with `function.arguments` as a
  JSON string (or a custom tool's `custom.input`, free text), `role: tool` messages
  with `tool_call_id`.
- ``flat``: the same, flattened: `tool_calls: [{"id", "name", "arguments": {...}}]`.
- ``openai-responses``: Responses API items; `function_call` and
  `function_call_output` items (and `custom_tool_call` and its output) joined by
  `call_id`. A list holding any item only this API has (`RESPONSES_ITEMS`: a reasoning
  item, an item_reference, a web search, ...) is of this shape, tool calls or not.

A list may hold what agent code holds: dicts, or the SDKs' own objects (pydantic models,
anywhere in the list: `resp.content`'s blocks, a `ChatCompletionMessage`, Responses
output items), which are read as the dicts the SDK would send; or LangChain messages
(`AIMessage` with `tool_calls`, `ToolMessage`), read as the flattened shape: see
`context.sdkviews`. Each shape's messages are read by `context.shapes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core.errors import ArgumentError, MalformedMessages
from ..core.ids import lone_surrogate
from .conversation import (
    SHAPES,
    TOO_DEEP,
    Conversation,
    Shape,
    ToolCall,
    ToolResult,
    too_deep,
)
from .messagetokens import message_text, typed
from .sdkviews import views
from .shapes import RESULT_ITEMS, read_anthropic, read_chat, read_responses

__all__ = [
    "RESPONSES_ITEMS",
    "Conversation",
    "MalformedMessages",
    "Shape",
    "ToolCall",
    "ToolResult",
    "detect",
    "parse",
    "said",
    "set_result_text",
]

# The `type`s of the Responses API's own items (the openai SDK's ResponseInputItemParam
# and ResponseOutputItem, openai 2.x): no other shape has them, so one of them in a list
# makes it a Responses list, tool calls or not. A `message` item is told by its parts.
RESPONSES_ITEMS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        *RESULT_ITEMS,
        "reasoning",
        "item_reference",
        "compaction",
        "compaction_trigger",
        "configuration_update",
        "additional_tools",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "code_interpreter_call",
        "image_generation_call",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "tool_search_call",
        "tool_search_output",
        "program",
        "program_output",
    }
)
# Parts only a Responses message holds (Chat's are text, image_url, input_audio, file,
# refusal; Anthropic's text, image, document, ...).
RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file"})


def detect(messages: Sequence[Any]) -> Shape:
    """The shape of a message list. A list with no tool calls reads as ``openai``,
    unless it holds an item only the Responses API has (a reasoning item, an
    item_reference, a message of input_text or output_text parts, a web search, ...)."""
    messages, source = views(messages)
    if source == "langchain":
        return "flat"
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise MalformedMessages(i, f"expected an object, got {type(message).__name__}")
        if _responses_item(message):
            return "openai-responses"
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result") for b in content
        ):
            return "anthropic"
        calls = message.get("tool_calls") or ()
        if not isinstance(calls, list | tuple):
            raise MalformedMessages(i, f"tool_calls is a {type(calls).__name__}, not a list")
        for call in calls:
            if isinstance(call, Mapping):
                return "openai" if "function" in call or "custom" in call else "flat"
    return "openai"


def _responses_item(message: Mapping[str, Any]) -> bool:
    kind = message.get("type")
    if typed(kind, RESPONSES_ITEMS):
        return True
    content = message.get("content")
    return (
        kind in (None, "message")
        and isinstance(content, list)
        and any(isinstance(p, Mapping) and typed(p.get("type"), RESPONSES_PARTS) for p in content)
    )


def parse(messages: Sequence[Any], shape: str = "auto") -> Conversation:
    """Find the calls and results of a message list (dicts, SDK objects or LangChain
    messages, see `views`), or raise `MalformedMessages` naming the first offending
    message."""
    messages, source = views(messages)
    if source == "langchain" and shape not in ("auto", "flat"):
        raise ArgumentError(f"a list of LangChain messages has the flat shape, not {shape!r}")
    found: Shape = detect(messages) if shape == "auto" else _shape(shape)
    reader = {
        "anthropic": read_anthropic,
        "openai": read_chat,
        "flat": read_chat,
        "openai-responses": read_responses,
    }[found]
    calls: dict[str, ToolCall] = {}
    results: list[ToolResult] = []
    # A call's id may come back once its result is in (some models number their calls
    # afresh each turn): a result answers the latest call with its id that has none
    # yet. Each call after the first with an id is known here as `ID#N`, the Nth.
    unanswered: dict[str, str] = {}  # an id as written -> the call that has no result yet
    used: dict[str, int] = {}  # an id as written -> how many calls gave it
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise MalformedMessages(i, f"expected an object, got {type(message).__name__}")
        if too_deep(message):
            raise MalformedMessages(i, TOO_DEEP)
        for item in reader(i, message, found):
            written = item.call_id
            if isinstance(item, ToolCall):
                if lone_surrogate(item.name, "the tool name") or lone_surrogate(
                    written, "the tool call id"
                ):
                    raise MalformedMessages(i, f"tool call {written!r}: not UTF-8 text")
                if written in unanswered:
                    raise MalformedMessages(
                        i, f"tool call id {written!r} is used twice before a result answers it"
                    )
                used[written] = used.get(written, 0) + 1
                name, n = written, used[written]
                while name in calls:  # the next free name (a list may spell `ID#2` too)
                    name, n = f"{written}#{n}", n + 1
                if name != written:
                    item = replace(item, call_id=name, written_id=written)
                calls[item.call_id] = item
                unanswered[written] = item.call_id
            else:
                if lone_surrogate(item.text, "the tool result"):
                    raise MalformedMessages(i, f"tool result for {written!r}: not UTF-8 text")
                own = unanswered.pop(written, None)
                if own is None and written in used:
                    raise MalformedMessages(i, f"a second tool result for {written!r}")
                if own is None:
                    raise MalformedMessages(
                        i, f"tool result for {written!r} answers no earlier tool call"
                    )
                if own != written:
                    item = replace(item, call_id=own, written_id=written)
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
            written = call.written_id or call.call_id
            raise MalformedMessages(
                call.index, f"tool call {written!r} ({call.name}) has no result"
            )
    return Conversation(found, calls, results, waiting)


def _shape(shape: str) -> Shape:
    if shape not in SHAPES:
        raise ArgumentError(f"unknown message shape {shape!r}: use auto or one of {SHAPES}")
    return shape


def set_result_text(
    messages: list[dict[str, Any]], result: ToolResult, text: str, shape: Shape
) -> None:
    """Replace a result's content with `text`, in place, keeping the kind of content
    (a string stays a string; a list becomes a list of one text part, which keeps the
    `cache_control` of the parts it replaces: a caller's cache breakpoint stays)."""
    if shape == "anthropic":
        assert result.block is not None
        block = messages[result.index]["content"][result.block]
        content = block.get("content")
        block["content"] = (
            text
            if isinstance(content, str) or "content" not in block
            else [_text_part("text", text, content)]
        )
    elif shape == "openai-responses":
        item = messages[result.index]
        output = item.get("output")
        item["output"] = (
            text if isinstance(output, str) else [_text_part("input_text", text, output)]
        )
    else:
        message = messages[result.index]
        content = message.get("content")
        message["content"] = (
            text if not isinstance(content, list) else [_text_part("text", text, content)]
        )


def _text_part(kind: str, text: str, replaced: object) -> dict[str, Any]:
    """A text part of `kind` holding `text`, with the `cache_control` of the last of the
    `replaced` parts that has one."""
    part: dict[str, Any] = {"type": kind, "text": text}
    for old in reversed(replaced if isinstance(replaced, list) else []):
        mark = old.get("cache_control") if isinstance(old, Mapping) else None
        if mark is not None:
            part["cache_control"] = dict(mark) if isinstance(mark, Mapping) else mark
            break
    return part


def said(message: Mapping[str, Any], shape: Shape) -> str:
    """The text of a message that is not a tool result: what the user, the system or
    the agent wrote, tool calls and their arguments included. Compaction rewrites it
    only with `trim_to` (see `context.trim`)."""
    if shape == "anthropic":
        content = message.get("content")
        if isinstance(content, list):
            return "\n".join(
                message_text(block)
                for block in content
                if not (isinstance(block, Mapping) and block.get("type") == "tool_result")
            )
        return message_text(message)
    if shape == "openai-responses":
        return "" if message.get("type") in RESULT_ITEMS else message_text(message)
    return "" if message.get("role") == "tool" else message_text(message)
