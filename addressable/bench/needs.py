"""What each turn of a recorded session needs: the values its calls take from earlier
tool results, worked out once a session, the same for every strategy.

A dependency is a value of 8 or more characters in a tool call's arguments that first
appeared in an earlier tool result (its source). It is lost when it is not in the request
that makes the call (stubs included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..messages import Conversation, ToolCall, ToolResult, message_text
from ..messages import parse as parse_messages
from .sessions import Session

MIN_VALUE = 8  # characters: shorter values are too common to count as dependencies
_VALUE = re.compile(r"[\w./:@#?=&%+~-]{8,}")


@dataclass(frozen=True)
class Source:
    """A tool result of the recorded session that a value first appeared in, and the call
    that gave it (run again to read it again)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    text: str
    position: tuple[int, int]  # message index and block: the order the session showed it


@dataclass(frozen=True)
class Needs:
    """For each assistant turn, the values its calls take from earlier results (one entry
    a value a call, with its source); for each result, the last turn that needs it; the
    session's calls and results, as `parse_messages` found them; and the calls of each
    message that makes some, in its order."""

    by_turn: dict[int, list[tuple[str, Source]]]
    last_use: dict[str, int]
    conversation: Conversation
    calls_at: dict[int, list[ToolCall]]


def needs_of(session: Session) -> Needs:
    """What every turn of `session` needs; the same for every strategy."""
    messages = session.messages
    conversation = parse_messages(messages, session.shape)
    texts = [message_text(m) for m in messages]
    results_at: dict[int, list[ToolResult]] = {}
    for result in conversation.results:
        results_at.setdefault(result.index, []).append(result)
    calls_at: dict[int, list[ToolCall]] = {}
    for call in conversation.calls.values():
        calls_at.setdefault(call.index, []).append(call)
    sources: dict[str, Source] = {}
    by_turn: dict[int, list[tuple[str, Source]]] = {}
    last_use: dict[str, int] = {}
    for turn, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        for made in calls_at.get(turn, []):
            given = made.arguments if made.unparsed is None else made.unparsed
            for value in sorted(values_in(given)):
                first = _first_seen_in_result(value, turn, texts, results_at)
                if first is None:
                    continue
                source = sources.get(first.call_id)
                if source is None:
                    call = conversation.calls[first.call_id]
                    source = Source(
                        first.call_id,
                        call.name,
                        call.arguments,
                        first.text,
                        (first.index, -1 if first.block is None else first.block),
                    )
                    sources[first.call_id] = source
                by_turn.setdefault(turn, []).append((value, source))
                last_use[source.call_id] = turn
    return Needs(by_turn, last_use, conversation, calls_at)


def _first_seen_in_result(
    value: str, turn: int, texts: list[str], results_at: dict[int, list[ToolResult]]
) -> ToolResult | None:
    """The first tool result before `turn` that holds `value`, if the value appeared
    there before anywhere else (the task, the model's own words)."""
    for index in range(turn):
        if value not in texts[index]:
            continue  # a result's text is part of its message's text
        for result in results_at.get(index, ()):
            if value in result.text:
                return result
        return None
    return None


def values_in(arguments: Any) -> set[str]:
    """The values of 8 or more characters in a call's arguments: whole strings and the
    words, paths and URLs inside them."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if MIN_VALUE <= len(value) <= 200:
                found.add(value)
            found.update(_VALUE.findall(value))
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(arguments)
    return found
