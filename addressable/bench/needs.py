"""What each turn of a recorded session needs: the values its calls and its message take
from earlier messages, worked out once a session, the same for every strategy.

A value is a word marked as one, of 4 or more characters: it holds a digit, one of
`_./:@#-`, or a capital after a small letter (`HAT080`, `2024-05-28`, `fooBar`, a path,
a URL). In a call's arguments, any word of 8 or more characters is one too, and so is a
whole string argument of 8 to 200 characters; in the agent's prose, such a word is
mostly a word. A turn depends on a value its calls or its own text use that
first appeared in an earlier message (its source), not in the task or the system
prompt. The value is lost when the request that makes the turn does not show it
(stubs included), whatever removed it: a result cleared or stubbed, a turn dropped, the
agent's words cut. A source that is a tool result can be read again (a round trip); one
the agent or the user wrote is said again (the agent works it out again, or asks):
a round trip too, that puts the message's words back.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

from ..messages import Conversation, Shape, ToolCall, ToolResult, message_text, said
from ..messages import parse as parse_messages
from .sessions import Session

MIN_VALUE = 8  # characters: any word this long is a value
MIN_MARKED = 4  # characters: a shorter word marked as a value (see the module docstring)
_WORD = re.compile(r"[\w./:@#?=&%+~-]{4,}")
_MARKED = re.compile(r"\d|[_./:@#-]|[a-z][A-Z]")


@dataclass(frozen=True)
class Source:
    """The message a value first appeared in: a tool result of the recorded session and
    the call that gave it (run again to read it again), or, with no `call_id`, what the
    agent or the user wrote (`text`, said again)."""

    call_id: str | None
    name: str
    arguments: dict[str, Any]
    text: str
    position: tuple[int, int]  # message index and block: the order the session showed it


@dataclass(frozen=True)
class Needs:
    """For each assistant turn, the values its calls and text take from earlier messages
    (one entry a value, with its source); for each result, the last turn that needs it;
    the session's calls and results, as `parse_messages` found them; and the calls of
    each message that makes some, in its order."""

    by_turn: dict[int, list[tuple[str, Source]]]
    last_use: dict[str, int]
    conversation: Conversation
    calls_at: dict[int, list[ToolCall]]


def needs_of(session: Session) -> Needs:
    """What every turn of `session` needs; the same for every strategy."""
    messages = session.messages
    shape = session.shape
    conversation = parse_messages(messages, shape)
    first_seen = _FirstSeen([message_text(m) for m in messages])
    head = next((n for n, m in enumerate(messages) if m.get("role") == "assistant"), 0)
    results_at: dict[int, list[ToolResult]] = {}
    for result in conversation.results:
        results_at.setdefault(result.index, []).append(result)
    calls_at: dict[int, list[ToolCall]] = {}
    for call in conversation.calls.values():
        calls_at.setdefault(call.index, []).append(call)
    sources: dict[tuple[int, int], Source] = {}
    by_turn: dict[int, list[tuple[str, Source]]] = {}
    last_use: dict[str, int] = {}
    for turn, message in enumerate(messages):
        if message.get("role") != "assistant" and turn not in calls_at:
            continue
        used = values_in_text(said(message, shape))
        for made in calls_at.get(turn, []):
            used |= values_in(made.arguments if made.unparsed is None else made.unparsed)
        for value in sorted(used):
            index = first_seen(value)
            if index is None or index < head or index >= turn:
                continue  # in the task or the system prompt, or new in this turn
            source = _source(value, index, messages, shape, conversation, results_at, sources)
            by_turn.setdefault(turn, []).append((value, source))
            if source.call_id is not None:
                last_use[source.call_id] = turn
    return Needs(by_turn, last_use, conversation, calls_at)


class _FirstSeen:
    """The first message whose text holds a value, found in one search of them all."""

    def __init__(self, texts: list[str]) -> None:
        self._all = "\x00".join(texts)
        self._starts = [0]
        for text in texts[:-1]:
            self._starts.append(self._starts[-1] + len(text) + 1)
        self._known: dict[str, int | None] = {}

    def __call__(self, value: str) -> int | None:
        if value not in self._known:
            at = self._all.find(value)
            self._known[value] = None if at < 0 else bisect.bisect_right(self._starts, at) - 1
        return self._known[value]


def _source(
    value: str,
    index: int,
    messages: list[dict[str, Any]],
    shape: Shape,
    conversation: Conversation,
    results_at: dict[int, list[ToolResult]],
    sources: dict[tuple[int, int], Source],
) -> Source:
    """The source of a value first seen in message `index`: the result there that holds
    it, else the message's own words."""
    for result in results_at.get(index, ()):
        if value in result.text:
            where = (result.index, -1 if result.block is None else result.block)
            if where not in sources:
                call = conversation.calls[result.call_id]
                sources[where] = Source(
                    result.call_id, call.name, call.arguments, result.text, where
                )
            return sources[where]
    where = (index, -2)
    if where not in sources:
        sources[where] = Source(None, "", {}, said(messages[index], shape), where)
    return sources[where]


def is_value(word: str, *, long: bool = False) -> bool:
    """Whether a word counts as a value: marked as one (see the module docstring), or,
    with `long`, of `MIN_VALUE` characters or more."""
    if long and len(word) >= MIN_VALUE:
        return True
    return len(word) >= MIN_MARKED and _MARKED.search(word) is not None


def values_in_text(text: str, *, long: bool = False) -> set[str]:
    """The values among a text's words, each without the stop that ends its sentence;
    `long` counts any long word too (see `is_value`)."""
    words = (w.rstrip(".:?,-") for w in _WORD.findall(text))
    return {w for w in words if is_value(w, long=long)}


def values_in(arguments: Any) -> set[str]:
    """The values in a call's arguments: whole strings of 8 to 200 characters, and the
    values among the words inside every string."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if MIN_VALUE <= len(value) <= 200:
                found.add(value)
            found.update(values_in_text(value, long=True))
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(arguments)
    return found
