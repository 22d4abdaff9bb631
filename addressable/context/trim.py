"""The agent's older words cut short, when stubs alone leave a list too large.

Once every result that may go is a stub, what is left of an old turn is the agent's own
text: its reasoning, the plan it wrote before a call. When the list is still over the
goal (`compact(trim_to=)`), the oldest of those messages become `[…]` and the values
they quote from tool results (a path, an id, a test name: a later call may need them),
until the list is small enough. What stays whole: every user message (the task, and
what the user said: it cannot be asked of a tool again), tool calls and results, system
messages, thinking, and the newest turns.

The prompt cache is read up to the first byte that changed. Messages after the first
result this compaction made a stub are cut first: the cache is broken there anyway.
Older ones are cut only when that frees at least `EARLY_SHARE` of the goal, enough to
pay for the cache it breaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..core.blocks import TEXT_TYPES
from .conversation import Conversation
from .messagetokens import message_tokens

CUT = "[…]"
EARLY_SHARE = 0.2  # of the goal: what cutting before the cache break must free
MIN_QUOTED = 8  # characters: a plain word this long may be a value a call passes back
# A word of a message, and what makes a shorter one a value (a stub may have left it
# out because the message showed it): a digit, `_./:@#`, or a capital after a small.
_WORD = re.compile(r"[\w./:@#?=&%+~-]{3,}")
_MARKED = re.compile(r"[\d_./:@#]|[a-z][A-Z]")


def cut_dialogue(
    out: list[dict[str, Any]],
    conversation: Conversation,
    keep_turns: int,
    tokens: int,
    goal: int,
    broken: int,
) -> tuple[int, list[int]]:
    """Cut the agent's older messages in `out` (in place) while the list is over
    `goal` tokens; `tokens` is its size now, `broken` the first message this compaction
    changed. The newest `keep_turns` assistant messages, and all after them, stay. The
    list's size after, and the messages cut."""
    turns = [i for i, m in enumerate(out) if m.get("role") == "assistant"]
    stop = len(out) if keep_turns == 0 else turns[-keep_turns] if keep_turns <= len(turns) else 0
    candidates = [i for i in turns if i < stop and _speaks(out[i], conversation.shape)]
    seen = "\n".join(r.text for r in conversation.results)
    cut: list[int] = []
    tokens = _cut(out, [i for i in candidates if i >= broken], seen, tokens, goal, cut)
    if tokens > goal:
        # Before the break, nearest it first: the cached prefix stays as long as it can.
        trial = list(out)
        early: list[int] = []
        before = [i for i in reversed(candidates) if i < broken]
        after = _cut(trial, before, seen, tokens, goal, early)
        if tokens - after >= EARLY_SHARE * goal:
            out[:] = trial
            tokens = after
            cut += early
    return tokens, sorted(cut)


def _cut(
    out: list[dict[str, Any]],
    indexes: list[int],
    seen: str,
    tokens: int,
    goal: int,
    cut: list[int],
) -> int:
    for i in indexes:
        if tokens <= goal:
            break
        before = out[i]
        after = _shortened(before, seen)
        saved = message_tokens([before]) - message_tokens([after])
        if saved > 0:
            out[i] = after
            tokens -= saved
            cut.append(i)
    return tokens


def _speaks(message: Mapping[str, Any], shape: str) -> bool:
    """Whether `message`, one of the agent's, is a message with text of its own."""
    if shape == "openai-responses" and message.get("type", "message") != "message":
        return False
    return any(True for _ in _texts(message))


def _texts(message: Mapping[str, Any]) -> Iterator[tuple[int | None, str]]:
    """The texts of a message: its content when that is a string (None), else each
    text part's index and text."""
    content = message.get("content")
    if isinstance(content, str):
        if content and not content.startswith(CUT):
            yield None, content
        return
    if isinstance(content, list):
        for n, part in enumerate(content):
            if isinstance(part, Mapping) and part.get("type") in TEXT_TYPES:
                text = part.get("text")
                if isinstance(text, str) and text and not text.startswith(CUT):
                    yield n, text


def _value(word: str) -> bool:
    return len(word) >= MIN_QUOTED or _MARKED.search(word) is not None


def _shortened(message: dict[str, Any], seen: str) -> dict[str, Any]:
    """`message` (one that `_speaks`) with each of its texts cut to `[…]` and the values
    it quotes from `seen` (the results' text)."""
    texts = list(_texts(message))
    new = dict(message)
    content = message.get("content")
    parts = list(content) if isinstance(content, list) else None
    for n, text in texts:
        # A value as it ends a sentence or a clause: without that stop.
        quoted = (v.rstrip(".:?") for v in _WORD.findall(text))
        values = [v for v in dict.fromkeys(quoted) if _value(v) and v in seen]
        short = " ".join([CUT, *values])
        if n is None:
            new["content"] = short
        else:
            assert parts is not None
            part = {**parts[n], "text": short}
            if part.get("annotations"):
                part["annotations"] = []  # their offsets were into the text cut
            part.pop("logprobs", None)
            parts[n] = part
    if parts is not None:
        new["content"] = parts
    return new
