"""What later tool calls need of earlier results, and whether a list still shows it.

A value a call needs is a string of 8 or more characters in its arguments (a whole
argument, or a word, path or URL in it) that first appeared in an earlier tool result:
what the agent read there and passed back. The benchmark counts the same thing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from addressable.context import messages as _messages

_VALUE = re.compile(r"[\w./:@#?=&%+~-]{8,}")


def values_in(arguments: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(arguments, str):
        if 8 <= len(arguments) <= 200:
            found.add(arguments)
        found.update(_VALUE.findall(arguments))
    elif isinstance(arguments, Mapping):
        for value in arguments.values():
            found |= values_in(value)
    elif isinstance(arguments, list):
        for value in arguments:
            found |= values_in(value)
    return found


def said(messages: list[dict[str, Any]]) -> str:
    """Everything the list shows outside tool results."""
    shape = _messages.detect(messages)
    return "\n".join(_messages.said(m, shape) for m in messages)


def results_text(messages: list[dict[str, Any]]) -> str:
    """Everything the list shows in tool results: the kept ones and the stubs."""
    return "\n".join(r.text for r in _messages.parse(messages).results)


def needed_from_results(
    before: list[dict[str, Any]], after: list[dict[str, Any]], system: str | None = None
) -> set[str]:
    """The values calls in `after` take from the tool results of `before` and that
    nothing else in `before` (the task, the agent's words, the calls) shows: without
    those results (or their stubs), the agent could not have them."""
    shown = results_text(before)
    elsewhere = said(before) + "\n" + (system or "")
    return {
        value
        for arguments in calls_of(after)
        for value in values_in(arguments)
        if value in shown and value not in elsewhere
    }


def calls_of(messages: list[dict[str, Any]]) -> Iterator[Any]:
    """The arguments of the calls in a slice of a list (its results may be elsewhere)."""
    for message in messages:
        for call in message.get("tool_calls") or []:
            if "function" in call:
                yield json.loads(call["function"].get("arguments") or "{}")
            else:
                yield call.get("arguments", {})
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, Mapping) and block.get("type") == "tool_use":
                    yield block.get("input", {})
