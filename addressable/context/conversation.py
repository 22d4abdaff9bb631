"""What a message list holds, as `parse` finds it: its shape, its tool calls and their
results (`Conversation`); and the error of a list that is not well formed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..core.errors import MalformedMessages

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
            if isinstance(item, str):  # the most common, and quickest to pass over
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
