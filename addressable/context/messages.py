"""What a message list holds, as `parse` finds it: its shape, its tool calls and their
results (`Conversation`); and the error of a list that is not well formed.

What agent code holds, read as dicts and given back in its own kind: dicts, the
SDKs' objects (pydantic models, anywhere in the list), or LangChain messages. The SDKs
are never imported: objects are recognised by what they have (`model_dump`, and for
LangChain, `type` and `additional_kwargs`).

The tool calls and results in one message of each shape: Anthropic's Messages,
Chat Completions (and its flattened form), and the Responses API's items; each reader
raises `MalformedMessages` for a message its shape does not allow.

Message lists in the shapes of the APIs: find the tool calls and their results, check
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

What a message holds as text, and its tokens: every string a model reads in a
message or a part of one, and what is not text (an image, a file's bytes) estimated.
The one count that compaction, its timing and the benchmark price requests with.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from ..core.blocks import blocks_text, non_text
from ..core.errors import ArgumentError, MalformedMessages
from ..core.ids import lone_surrogate
from ..core.tokens import Tokenizer, count_tokens, tokenizer_in_use, using_tokenizer

Shape = Literal["anthropic", "openai", "flat", "openai-responses"]
SHAPES: tuple[Shape, ...] = ("anthropic", "openai", "flat", "openai-responses")


# Lists and objects inside one another, a message counted as 1: past what tools send (a
# syntax tree as a tool's input can go 100 and more), and short of what copying a
# message, which recurses (two frames a level), can go through within Python's stack of
# 1,000 frames, with room for the frames of the code that calls (an agent framework's).
MAX_NESTING = 300
TOO_DEEP = f"lists and objects nest more than {MAX_NESTING} deep in it"


def too_deep(message: Mapping[str, Any] | Sequence[Any]) -> bool:
    """Whether lists and objects nest more than `MAX_NESTING` deep in `message`: found
    without recursion, so that any depth (or a list that holds itself) is answered."""
    stack: list[tuple[Any, int]] = [(message, 1)]
    while stack:
        value, depth = stack.pop()
        for item in value.values() if isinstance(value, Mapping) else value:
            if type(item) is str or isinstance(item, str):  # the most common: passed quickest
                continue
            if isinstance(item, (dict, list, tuple, Mapping)):  # dict first: the quickest
                if depth == MAX_NESTING:
                    return True
                stack.append((item, depth + 1))
    return False


def nested_too_deep(messages: Sequence[Any]) -> MalformedMessages:
    """The error for a list that nests past what can be read: naming the first message
    that nests too deep (the first, if none can be found)."""
    for i, message in enumerate(messages):
        if isinstance(message, Mapping | list | tuple) and too_deep(message):
            return MalformedMessages(i, TOO_DEEP)
    return MalformedMessages(0, "lists and objects nest too deep in the list to read it")


@dataclass(frozen=True)
class ToolCall:
    """A tool call in the list: where it is, its id, the tool and its arguments.

    `unparsed` is the arguments as the model wrote them when they are not a JSON object
    (a call cut off mid-way, or malformed): the API takes such a call in the history, so
    the list is still read, with `arguments` empty. `written_id` is the id the list
    gives it when that id was given to an earlier call too (`call_id` is then `ID#N`)."""

    index: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    unparsed: str | None = None
    written_id: str | None = None


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
    written_id: str | None = None  # as ToolCall's: the id as the list gives it


@dataclass(frozen=True)
class Conversation:
    """What `parse` found: the shape, every call by id, every result in order, and the
    calls still in flight (at the end of the list, with no result yet)."""

    shape: Shape
    calls: dict[str, ToolCall]
    results: list[ToolResult]
    in_flight: list[ToolCall]


_Made = TypeVar("_Made")
_Table = dict[int, tuple[Any, _Made]]


@dataclass
class _Kept:
    """What `reading_once` keeps of each message, by its identity (the message is kept
    too, so that its id is not another's later): its dict, its calls and results (and
    the place it was read at) for each shape, and its tokens."""

    tokenizer: Tokenizer | None
    plain: _Table[Any] = field(default_factory=dict)
    items: defaultdict[str, _Table[tuple[int, list[ToolCall | ToolResult]]]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    tokens: _Table[int] = field(default_factory=dict)


def _once(table: _Table[_Made], message: Any, make: Callable[..., _Made], *args: Any) -> _Made:
    """`make(message, *args)`, made once for `message` while it is kept in `table`."""
    entry = table.get(id(message))
    if entry is None or entry[0] is not message:
        entry = table[id(message)] = (message, make(message, *args))
    return entry[1]


_KEPT: ContextVar[_Kept | None] = ContextVar("addressable_kept_readings", default=None)


@contextlib.contextmanager
def reading_once() -> Iterator[None]:
    """Within the block, each message `views`, `parse` and `view_tokens` read is read
    once, and what they found is kept by the message's identity; compaction and `trim`
    give back the messages they do not change as they are, not copied, and those they
    change as new dicts that may share their unchanged parts with the old. Only for a
    caller that never changes a message in place while it runs, such as the benchmark,
    which sends the same messages turn after turn and copies those it changes."""
    token = _KEPT.set(_Kept(tokenizer_in_use()))
    try:
        yield
    finally:
        _KEPT.reset(token)


def writable(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`views`' dicts as a list a step may change: deep copies; within `reading_once`,
    whose caller changes no message in place, the dicts themselves, each copied
    (`own`) before the step changes it in place."""
    if _KEPT.get() is None:
        return copy.deepcopy([dict(m) for m in messages])
    return [m if type(m) is dict else copy.deepcopy(dict(m)) for m in messages]


def own(out: list[dict[str, Any]], index: int) -> None:
    """Before `out[index]` is changed in place: within `reading_once`, make it a new
    copy, so that what was read and kept of the message it was stays true (a message
    may be changed twice: an Anthropic user message holds several results)."""
    if _KEPT.get() is not None:
        out[index] = copy.deepcopy(out[index])


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
    kept = _KEPT.get()
    for i, message in enumerate(messages):
        if type(message) is not dict and _is_langchain(message):
            raise MalformedMessages(
                i, "a LangChain message in a list that does not start with one: use one kind"
            )
        plain = _plain(message) if kept is None else _once(kept.plain, message, _plain)
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


# Values that are no SDK object and hold none, told apart by `type` first: a context is
# read often, and an `isinstance` against an abstract class on each part is most of it.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """`value` with every SDK object in it dumped; `value` itself when it holds none.
    Of a mapping, the lists and the SDK objects among its values are read, not its
    mappings."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is not dict and kind is not list and _is_model(value):
        return _dump(value)
    if kind is dict or isinstance(value, Mapping):
        changed = {}
        for k, v in value.items():
            if type(v) in _SCALARS or type(v) is dict:
                continue
            if isinstance(v, list | tuple) or _is_model(v):
                dumped = _plain(v)
                if dumped is not v:
                    changed[k] = dumped
        return {**value, **changed} if changed else value
    if kind is list or isinstance(value, tuple):
        items = [v if type(v) in _SCALARS else _plain(v) for v in value]
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
    calls: dict[str, ToolCall] = {}
    results: list[ToolResult] = []
    # A call's id may come back once its result is in (some models number their calls
    # afresh each turn): a result answers the latest call with its id that has none
    # yet. Each call after the first with an id is known here as `ID#N`, the Nth.
    unanswered: dict[str, str] = {}  # an id as written -> the call that has no result yet
    used: dict[str, int] = {}  # an id as written -> how many calls gave it
    kept = _KEPT.get()
    for i, message in enumerate(messages):
        if kept is None:
            items = _items(i, message, found)
        else:  # read where it first was: moved since, its calls and results move with it
            first, items = _once(kept.items[found], message, _placed, i, found)
            if first != i:
                items = [replace(item, index=i) for item in items]
        for item in items:
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


def _placed(message: Any, i: int, shape: Shape) -> tuple[int, list[ToolCall | ToolResult]]:
    return i, _items(i, message, shape)


def _items(i: int, message: Any, shape: Shape) -> list[ToolCall | ToolResult]:
    """The calls and results of message `i`, as its shape's reader finds them."""
    if not isinstance(message, Mapping):
        raise MalformedMessages(i, f"expected an object, got {type(message).__name__}")
    if too_deep(message):
        raise MalformedMessages(i, TOO_DEEP)
    return _READERS[shape](i, message, shape)


_READERS = {
    "anthropic": read_anthropic,
    "openai": read_chat,
    "flat": read_chat,
    "openai-responses": read_responses,
}


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
    only when it cuts the agent's older words (`compact(trim_to=)`, `trim`)."""
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


MESSAGE_OVERHEAD = 3  # tokens each message costs beyond its text (role and separators)


def typed(kind: object, kinds: frozenset[str]) -> bool:
    """Whether `kind` is one of `kinds` (a `type` that is not a str, which a malformed
    message may hold, is none of them)."""
    return isinstance(kind, str) and kind in kinds


def message_tokens(
    messages: Sequence[Any], system: str | None = None, *, tokenizer: Tokenizer | None = None
) -> int:
    """Tokens of a request: each message's text (content, tool calls as their JSON) plus
    `MESSAGE_OVERHEAD` a message, and the system prompt. Text is counted by `tokenizer`
    (any callable `str -> int`) when given, else by `count_tokens`. What is not text is
    estimated: `IMAGE_TOKENS` an image, a file's data by its size, and signatures,
    encrypted reasoning and audio as nothing (see `message_text`)."""
    messages = views(messages)[0]
    with using_tokenizer(tokenizer):
        total = count_tokens(system) + MESSAGE_OVERHEAD if system else 0
        for message in messages:
            total += view_tokens(message)
    return total


def view_tokens(message: Mapping[str, Any]) -> int:
    """`message_tokens` of one message as `views` gives it: a dict, read already."""
    kept = _KEPT.get()
    if kept is not None and kept.tokenizer is tokenizer_in_use():
        return _once(kept.tokens, message, _view_tokens)
    return _view_tokens(message)


def _view_tokens(message: Mapping[str, Any]) -> int:
    text, media = _read(message, False)
    return MESSAGE_OVERHEAD + count_tokens(text) + media


def content_tokens(content: Sequence[Any]) -> int:
    """Tokens of a tool result's content blocks, as `message_tokens` counts them."""
    text, media = _read(list(content), False)
    return count_tokens(text) + media


def message_text(value: Any) -> str:
    """Every string in a message (or a part of one), keys excepted, one a line: text,
    tool inputs as the JSON the model wrote, ids and names. What `message_tokens` counts,
    and where a benchmark looks for a value the model could see.

    Data no tokenizer reads is left out: an image's or a file's bytes (base64 `data`,
    `file_data`, a `data:` URL), thinking signatures, redacted thinking, encrypted
    reasoning and audio."""
    return _read(value, False)[0]


# Tokens an image counts for, whatever its size: Anthropic's vision docs give
# tokens = width * height / 750 and scale down an image over about 1,600 tokens (1092x1092
# px is about 1,590); OpenAI's high detail charges 765 for a 1024 px square. The images
# are not decoded to find their size, so the largest common cost stands for each one.
IMAGE_TOKENS = 1600
# A file's data (a PDF in an Anthropic document, a Chat `file`, a Responses input_file)
# counts one token per this many characters of its base64 text: its pages, which the
# APIs count at 1,500-3,000 tokens each, are not known here, and its size stands in.
FILE_CHARS_PER_TOKEN = 4

_UNREAD_KEYS = frozenset({"type", "role", "cache_control"})
# Parts that are an image: Anthropic's and LangChain's image, Chat's image_url,
# Responses' input_image, a computer call's screenshot, a generated image.
_IMAGE_PARTS = frozenset(
    {"image", "image_url", "input_image", "computer_screenshot", "image_generation_call"}
)
# Opaque to a model as text and counted as nothing: a thinking block's signature (the
# API checks it, the model does not read it), encrypted reasoning (Responses
# `encrypted_content`; the API may decrypt it, at a cost that cannot be told from here),
# audio (whose tokens depend on its length, not read here).
_OPAQUE_KEYS = frozenset({"signature", "thought_signature", "encrypted_content", "input_audio"})
_OPAQUE, _FILE = 1, 2
# Every key `_blob` may call data: any other is text, without asking.
_BLOB_KEYS = _OPAQUE_KEYS | frozenset(
    {"data", "base64", "result", "file_data", "url", "image_url", "file_url"}
)


def _read(value: Any, image: bool) -> tuple[str, int]:
    """`message_text` of `value`, and the tokens of what is in it and is not text.
    `image`: `value` is in an image, which is already counted."""
    if type(value) is str:
        return value, 0
    if type(value) is dict or isinstance(value, Mapping):
        kind = value.get("type")
        media = 0
        if not image and typed(kind, _IMAGE_PARTS):
            image, media = True, IMAGE_TOKENS
        texts = []
        for key, v in value.items():
            if key in _UNREAD_KEYS or v is None:
                continue
            blob = _blob(kind, key, v) if key in _BLOB_KEYS else 0
            if blob == _FILE and not image and isinstance(v, str):
                media += -(-len(v) // FILE_CHARS_PER_TOKEN)
            if blob:
                continue
            # Tool arguments count as the JSON the model wrote, whether given as a string
            # (OpenAI) or as an object (Anthropic's input, the flattened shape).
            if key in ("arguments", "input") and isinstance(v, Mapping):
                # `default`: a value no API would take (bytes) is counted as written.
                texts.append(json.dumps(v, ensure_ascii=False, default=str))
                continue
            text, n = _read(v, image)
            texts.append(text)
            media += n
        return "\n".join(texts), media
    if isinstance(value, str):
        return value, 0
    if isinstance(value, list):
        read = [_read(v, image) for v in value]
        return "\n".join(text for text, _ in read), sum(n for _, n in read)
    if isinstance(value, bool | int | float):
        return json.dumps(value), 0
    return "", 0


def _blob(kind: object, key: str, value: object) -> int:
    """Whether the field `key` of a part of type `kind` is data no tokenizer reads:
    `_OPAQUE` (counted as nothing), `_FILE` (an image's or a file's bytes), or 0."""
    if key in _OPAQUE_KEYS:
        return _OPAQUE
    if key == "data" and kind == "redacted_thinking":
        return _OPAQUE
    if key in ("data", "base64") and kind in ("audio", "input_audio"):
        return _OPAQUE
    if key == "result" and kind == "image_generation_call":
        return _FILE
    if key == "file_data":
        return _FILE
    # Anthropic's base64 source; LangChain's image, file and audio blocks.
    if key in ("data", "base64") and kind in ("base64", "image", "file"):
        return _FILE
    if key in ("url", "image_url", "file_url") and isinstance(value, str):
        return _FILE if value[:5].lower() == "data:" else 0
    return 0
