"""What agent code holds, read as dicts and given back in its own kind: dicts, the
SDKs' objects (pydantic models, anywhere in the list), or LangChain messages. The SDKs
are never imported: objects are recognised by what they have (`model_dump`, and for
LangChain, `type` and `additional_kwargs`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..core.errors import MalformedMessages
from .conversation import nested_too_deep

Source = Literal["dicts", "sdk", "langchain"]  # what the list held: see `views`

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
    try:
        return _views(messages)
    except RecursionError:  # lists in lists past Python's stack, which reading recurses
        raise nested_too_deep(messages) from None


def _views(messages: Sequence[Any]) -> tuple[list[Mapping[str, Any]], Source]:
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


def _langchain_kind(type_: str) -> str:
    """A LangChain message's kind ("ai", "human", "tool", "chat", ...) from its `type`:
    a whole message's is the kind itself, a chunk's (what adding up a streamed reply
    gives) is its class name, "AIMessageChunk", "ToolMessageChunk"."""
    if type_.endswith("MessageChunk"):
        return type_.removesuffix("MessageChunk").lower()
    return type_.removesuffix("Chunk").lower()


def _langchain_view(i: int, message: Any) -> dict[str, Any]:
    if not _is_langchain(message):
        raise MalformedMessages(
            i,
            "expected a LangChain message like the first one (AIMessage, ToolMessage, ...), "
            f"got {type(message).__name__}",
        )
    kind = _langchain_kind(str(message.type))
    role = _LANGCHAIN_ROLES.get(kind, getattr(message, "role", None) if kind == "chat" else None)
    if role is None:
        raise MalformedMessages(i, f"a LangChain {type(message).__name__} has no role to read")
    view: dict[str, Any] = {"role": role, "content": _plain(message.content)}
    if role == "tool":
        view["tool_call_id"] = getattr(message, "tool_call_id", None)
    # A call whose arguments did not parse is among `invalid_tool_calls`, its `args` the
    # text the model wrote: it is still a call, and a ToolMessage may answer it.
    invalid = [c for c in getattr(message, "invalid_tool_calls", None) or [] if c.get("id")]
    calls = [*(getattr(message, "tool_calls", None) or []), *invalid]
    if calls:
        view["tool_calls"] = [
            {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("args") or {}}
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
