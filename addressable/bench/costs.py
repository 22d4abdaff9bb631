"""What a replay costs, priced the way agents pay: the tokens of each request, prompt
caching, the round trips that read a lost result again, and the window's hard limit.

- Recovery is a round trip. For each result a turn lost values from (in the order the
  session showed them), the agent makes one more request: it runs the call that gave the
  result again (same tool, same arguments) and reads it in full, so that request is the
  context at that turn plus the call and the result. The result is then in the context
  like any other, until the strategy evicts it again; the turn's own message comes after
  it. Words the agent or the user wrote that a turn lost values from (a turn dropped,
  the agent's message cut) cost a round trip too: they are said again, in full.
  `recovery` sums those requests, `lost_results` counts the distinct results read
  again, `requests` sums the recorded turns' requests, `net` is requests + recovery.
  The strategy acts only before the recorded turns' requests, not between round trips.
- Prompt caching. `cached` prices every request, round trips included, in order: the
  prefix it shares with the previous request at `cache_read`, the rest at `cache_write`
  (in input-token units, rounded to a whole token per session). The shared prefix is the
  system prompt, the messages equal to the previous request's at the same positions, and,
  of the first message that differs, when the role is the same, its text up to the last
  line break (at or before the first differing character) that both texts follow with a
  visible character: a boundary of cl100k's pre-tokeniser, so the tokens up to there are
  exact, and what is left of the shared text after it (part of a line, or a few indented
  lines) is not counted: conservative. The first request of a session shares nothing.
- The window is a hard limit. A request (round trips included) over `window` tokens is
  one a real API refuses: the session counts in `failed` for that strategy. Its figures
  still cover the whole session, as if the request had gone through, so that every
  strategy's totals cover the same turns and the ratios compare the same work; a
  strategy with failures cannot run those sessions, whatever its figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from .. import count_tokens
from ..messages import message_text, message_tokens
from .needs import Source
from .sessions import Session

REREAD = "reread"  # the tool-call ids of round trips start with it


class Figures(BaseModel):
    """What one strategy cost on one session (or in total), in tokens or counts."""

    requests: int = 0  # request tokens summed over every recorded assistant turn
    peak: int = 0  # the largest request, round trips included
    artifact: int = 0  # tokens of the stubs, placeholders and state documents made
    lost: int = 0  # dependencies (values) not in the request when a call needed them
    lost_results: int = 0  # distinct results read again to get lost values back
    lost_said: int = 0  # lost values only the agent's or the user's removed words held
    recovery: int = 0  # tokens of the round trips' requests
    net: int = 0  # requests + recovery
    cached: int = 0  # every request priced with prompt caching, in input-token units
    failed: int = 0  # sessions with a request over the window
    repeated_calls: int = 0  # calls identical to an earlier one

    def add(self, other: Figures) -> Figures:
        return Figures(
            **{
                k: getattr(self, k) + getattr(other, k) for k in Figures.model_fields if k != "peak"
            },
            peak=max(self.peak, other.peak),
        )


@dataclass
class Run:
    """One strategy over one session: the figures and the tokens sent per recorded turn
    (its request plus its round trips)."""

    figures: Figures
    per_turn: list[int] = field(default_factory=list)


class Tokens:
    """Token counts and text of messages, each worked out once however often it is
    sent (a message is never changed in place: a strategy's step copies what it
    changes)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Any, int]] = {}
        self._texts: dict[int, tuple[Any, str]] = {}

    def of(self, message: dict[str, Any]) -> int:
        return _once(self._seen, message, lambda m: message_tokens([m]))

    def total(self, messages: list[dict[str, Any]]) -> int:
        """The sum of `of` over `messages`: what each request is sized by, so looked up
        here directly rather than through `of` once a message."""
        seen = self._seen
        total = 0
        for message in messages:
            entry = seen.get(id(message))
            total += entry[1] if entry is not None and entry[0] is message else self.of(message)
        return total

    def text(self, message: dict[str, Any]) -> str:
        """What the model reads of `message` (`message_text`)."""
        return _once(self._texts, message, message_text)


_Made = TypeVar("_Made")


def _once(
    made: dict[int, tuple[Any, _Made]],
    message: dict[str, Any],
    make: Callable[[dict[str, Any]], _Made],
) -> _Made:
    """`make(message)`, kept by the message's identity (the message is kept too, so
    that its id is not another's later)."""
    entry = made.get(id(message))
    if entry is None or entry[0] is not message:
        entry = (message, make(message))
        made[id(message)] = entry
    return entry[1]


class PromptCache:
    """Prompt caching: how much of each request was the previous request's prefix."""

    def __init__(self, system: int, tokens: Tokens) -> None:
        self._system = system
        self._tokens = tokens
        self._previous: list[dict[str, Any]] | None = None
        self.read = 0  # tokens priced as cache reads
        self.written = 0  # tokens priced as cache writes

    def send(self, request: list[dict[str, Any]], total: int) -> None:
        shared = 0 if self._previous is None else self._shared(self._previous, request)
        self.read += shared
        self.written += total - shared
        self._previous = list(request)

    def _shared(self, before: list[dict[str, Any]], now: list[dict[str, Any]]) -> int:
        k = 0
        while k < min(len(before), len(now)) and (before[k] is now[k] or before[k] == now[k]):
            k += 1
        shared = self._system + self._tokens.total(now[:k])
        if k < min(len(before), len(now)) and before[k].get("role") == now[k].get("role"):
            shared += shared_text_tokens(message_text(before[k]), message_text(now[k]))
        return shared


def shared_text_tokens(a: str, b: str) -> int:
    """Tokens of the longest prefix of `a` and `b` known to be the same tokens in both:
    up to a line break followed by a visible character (a boundary of cl100k's
    pre-tokeniser), before the first character that differs."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # the common prefix's length, by halving: slices compare in C
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    common = low
    if common == len(a) == len(b):
        return count_tokens(a)

    def starts_token(text: str, at: int) -> bool:
        return at < len(text) and not text[at].isspace()

    cut = a.rfind("\n", 0, common)
    while cut >= 0:
        start = cut + 1
        if starts_token(a, start) and starts_token(b, start):
            return count_tokens(a[:start])
        cut = a.rfind("\n", 0, cut)
    return 0


def reread_id(turn: int, n: int, call_id: str) -> str:
    """The tool-call id of the `n`th round trip at `turn`, reading `call_id`'s result again."""
    return f"{REREAD}-{turn}-{n}-{call_id}"


def read_again(source: Source, call_id: str, session: Session) -> list[dict[str, Any]]:
    """A round trip in the session's shape: the call that gave `source`, run again, and
    its result in full; or, for words the agent or the user wrote, those words again."""
    if source.call_id is None:
        return [{"role": "user", "content": source.text}]
    if session.shape == "anthropic":
        return [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": source.name,
                        "input": source.arguments,
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call_id, "content": source.text}
                ],
            },
        ]
    if session.shape == "openai":
        call: dict[str, Any] = {
            "id": call_id,
            "type": "function",
            "function": {"name": source.name, "arguments": json.dumps(source.arguments)},
        }
        return [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": source.text},
        ]
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": call_id, "name": source.name, "arguments": source.arguments}],
        },
        {"role": "tool", "tool_call_id": call_id, "name": source.name, "content": source.text},
    ]
