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

A list may hold what agent code holds: dicts, or the SDKs' own objects (pydantic models,
anywhere in the list: `resp.content`'s blocks, a `ChatCompletionMessage`, Responses
output items), which are read as the dicts the SDK would send (`views`); or LangChain
messages (`AIMessage` with `tool_calls`, `ToolMessage`), read as the flattened shape.
The SDKs are never imported: objects are recognised by what they have (`model_dump`,
and for LangChain, `type` and `additional_kwargs`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._blocks import non_text
from ._errors import AddressableError, ArgumentError
from ._tokens import Tokenizer, count_tokens, using_tokenizer

Shape = Literal["anthropic", "openai", "flat", "openai-responses"]
Source = Literal["dicts", "sdk", "langchain"]  # what the list held: see `views`
SHAPES: tuple[Shape, ...] = ("anthropic", "openai", "flat", "openai-responses")
MESSAGE_OVERHEAD = 3  # tokens each message costs beyond its text (role and separators)


class MalformedMessages(AddressableError, ValueError):
    """A message list that is not well formed, or an item that is no message (neither a
    dict, an SDK message object nor a LangChain message); `index` names the offending
    message and the message says what was expected."""

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
    content: tuple[Any, ...] | None = None  # the parts, when one is not text (an image)


@dataclass(frozen=True)
class Conversation:
    """What `parse` found: the shape, every call by id, every result in order, and the
    calls still in flight (at the end of the list, with no result yet)."""

    shape: Shape
    calls: dict[str, ToolCall]
    results: list[ToolResult]
    in_flight: list[ToolCall]


def detect(messages: Sequence[Any]) -> Shape:
    """The shape of a message list (a list with no tool calls reads as ``openai``)."""
    messages, source = views(messages)
    if source == "langchain":
        return "flat"
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


def parse(messages: Sequence[Any], shape: str = "auto") -> Conversation:
    """Find the calls and results of a message list (dicts, SDK objects or LangChain
    messages, see `views`), or raise `MalformedMessages` naming the first offending
    message."""
    messages, source = views(messages)
    if source == "langchain" and shape not in ("auto", "flat"):
        raise ArgumentError(f"a list of LangChain messages has the flat shape, not {shape!r}")
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


def _chat(i: int, message: Mapping[str, Any], shape: Shape) -> list[ToolCall | ToolResult]:
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
        output = item.get("output", "")
        return [ToolResult(i, None, item["call_id"], _text(i, output), False, _parts(output))]
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


def _parts(content: Any) -> tuple[Any, ...] | None:
    return tuple(content) if non_text(content) else None


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


def message_tokens(
    messages: Sequence[Any], system: str | None = None, *, tokenizer: Tokenizer | None = None
) -> int:
    """Tokens of a request: each message's text (content, tool calls as their JSON) plus
    `MESSAGE_OVERHEAD` a message, and the system prompt. Counted by `tokenizer` (any
    callable `str -> int`) when given, else by `count_tokens`."""
    messages = views(messages)[0]
    with using_tokenizer(tokenizer):
        total = count_tokens(system) + MESSAGE_OVERHEAD if system else 0
        for message in messages:
            total += MESSAGE_OVERHEAD + count_tokens(message_text(message))
    return total


def said(message: Mapping[str, Any], shape: Shape) -> str:
    """The text of a message that is not a tool result: what the user, the system or
    the agent wrote, tool calls and their arguments included. Compaction never
    rewrites it."""
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
        return "" if message.get("type") == "function_call_output" else message_text(message)
    return "" if message.get("role") == "tool" else message_text(message)


def message_text(value: Any) -> str:
    """Every string in a message (or a part of one), keys excepted, one a line: text,
    tool inputs as the JSON the model wrote, ids and names. What `message_tokens` counts,
    and where a benchmark looks for a value the model could see."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(
            _field_text(k, v)
            for k, v in value.items()
            if k not in ("type", "role", "cache_control") and v is not None
        )
    if isinstance(value, list):
        return "\n".join(message_text(v) for v in value)
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return ""


def _field_text(key: str, value: Any) -> str:
    # Tool arguments count as the JSON the model wrote, whether given as a string
    # (OpenAI) or as an object (Anthropic's input, the flattened shape).
    if key in ("arguments", "input") and isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    return message_text(value)


# -- what agent code holds: dicts, SDK objects, LangChain messages --------------------

_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def views(messages: Sequence[Any]) -> tuple[list[Mapping[str, Any]], Source]:
    """The list as dicts, and what it held.

    ``dicts``: a message that holds no object is itself (not copied). ``sdk``: an SDK
    object (a pydantic model, wherever it is in the list) is read as the dict the SDK
    sends for it (`model_dump(mode="json", exclude_unset=True, by_alias=True)`).
    ``langchain``: every message is a LangChain `BaseMessage`, read as the flattened
    shape (`role`, `content`, `tool_calls` with `id`, `name`, `arguments`, `tool_call_id`).
    Raises `MalformedMessages` naming the first item that is none of these."""
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        raise MalformedMessages(0, f"a message list must be a list, got {type(messages).__name__}")
    if messages and _is_langchain(messages[0]):
        return [_langchain_view(i, m) for i, m in enumerate(messages)], "langchain"
    out: list[Mapping[str, Any]] = []
    source: Source = "dicts"
    for i, message in enumerate(messages):
        if _is_langchain(message):
            raise MalformedMessages(
                i, "a LangChain message in a list that does not start with one: use one kind"
            )
        plain = _plain(message)
        if plain is not message:
            source = "sdk"
        if not isinstance(plain, Mapping):
            raise MalformedMessages(
                i,
                "expected a message: a dict, an SDK message object or a LangChain message, "
                f"got {type(message).__name__}",
            )
        out.append(plain)
    return out, source


def _is_model(value: Any) -> bool:
    return not isinstance(value, Mapping) and callable(getattr(value, "model_dump", None))


def _dump(value: Any) -> Any:
    """An SDK object as the SDK sends it in a request."""
    return value.model_dump(
        mode="json",
        exclude_unset=True,
        by_alias=True,
        exclude=getattr(value, "__api_exclude__", None),
    )


def _plain(value: Any) -> Any:
    """`value` with every SDK object in it dumped; `value` itself when it holds none."""
    if _is_model(value):
        return _dump(value)
    if isinstance(value, Mapping):
        changed = {
            k: _plain(v) for k, v in value.items() if isinstance(v, list | tuple) or _is_model(v)
        }
        if any(changed[k] is not value[k] for k in changed):
            return {**value, **changed}
        return value
    if isinstance(value, list | tuple):
        items = [_plain(v) for v in value]
        if any(a is not b for a, b in zip(items, value, strict=True)):
            return items
    return value


def _is_langchain(value: Any) -> bool:
    return (
        _is_model(value)
        and isinstance(getattr(value, "type", None), str)
        and hasattr(value, "additional_kwargs")
        and hasattr(value, "content")
    )


def _langchain_view(i: int, message: Any) -> dict[str, Any]:
    if not _is_langchain(message):
        raise MalformedMessages(
            i,
            "expected a LangChain message like the first one (AIMessage, ToolMessage, ...), "
            f"got {type(message).__name__}",
        )
    kind = str(message.type).removesuffix("Chunk").lower()
    role = _LANGCHAIN_ROLES.get(kind, getattr(message, "role", None) if kind == "chat" else None)
    if role is None:
        raise MalformedMessages(i, f"a LangChain {type(message).__name__} has no role to read")
    view: dict[str, Any] = {"role": role, "content": _plain(message.content)}
    if role == "tool":
        view["tool_call_id"] = getattr(message, "tool_call_id", None)
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        view["tool_calls"] = [
            {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("args", {})}
            for c in calls
        ]
    return view


def restore(
    originals: Sequence[Any],
    out: list[dict[str, Any]],
    changed: set[int],
    source: Source,
) -> list[Any]:
    """The compacted list in the kind it came in: each message compaction did not
    change is a copy of the original (the same object type: an SDK object, a LangChain
    message); a changed one is, for LangChain, the original message with its new
    content (same id and fields), else the dict the SDK accepts (`out`'s)."""
    if source == "dicts":
        return out
    result: list[Any] = []
    for i, original in enumerate(originals):
        if i not in changed:
            result.append(copy.deepcopy(original))
        elif source == "langchain":
            result.append(original.model_copy(update={"content": out[i]["content"]}))
        else:
            result.append(out[i])
    return result
