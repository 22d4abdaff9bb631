"""The first-sight cap: a result over `max_result_tokens` never reaches a model whole.

It is recorded whole; the model is shown its head and tail, a line saying how much was
left out, what it holds (lines, or a JSON document's keys and row counts), and how to
read the rest with `replay_result` (a line range, a character offset in a long line, or
a pattern). Binary content is never cut: it is named by its record's id and media type.

Tokens are counted by `count_tokens`, exact with tiktoken and an estimate without it: a
text is counted whole only up to `_COUNTED_CHARS` characters a token of the cap, its
first characters otherwise (an over-long text is over the cap whichever way it is
counted, and the size it gives is then an estimate, said as "about").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..context.stubs import REPLAY_TOOL
from ..core.counts import counted
from ..core.errors import ArgumentError
from ..core.tokens import count_tokens

DEFAULT_MAX_RESULT_TOKENS = 8_000
# The smallest cap taken: the lines that say what was left out and how to read it need
# about a hundred tokens of their own, and the head and tail some room beside them.
MIN_RESULT_TOKENS = 200
# Characters a token of the cap that a text may have and still be counted whole: past
# them only the start is counted (no tokenizer packs more than a few characters a token
# on real text, so a start this long over the cap says the whole is over it).
_COUNTED_CHARS = 32
_HEAD_SHARE = 0.6  # of the room for content, the head's; the tail has the rest
_JSON_KEYS = 12  # keys of a JSON object the description names, at most
_JSON_PARSED = 64 * 1024 * 1024  # characters past which a text is not parsed as JSON


def checked_cap(value: object, where: str = "max_result_tokens", off: str = "None") -> int | None:
    """`value` as a cap: None (no cap), or a whole number of at least
    `MIN_RESULT_TOKENS`; anything else is an `ArgumentError` of one line, which names
    `off` as the value that turns the cap off."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(
            f"{where} is a whole number of tokens or {off}, not {type(value).__name__}"
        )
    if value < MIN_RESULT_TOKENS:
        raise ArgumentError(
            f"{where} is at least {MIN_RESULT_TOKENS} tokens (the note of what was left "
            f"out needs room), not {value}; {off} turns the cap off"
        )
    return value


def size_within(text: str, cap: int) -> tuple[bool, int]:
    """Whether `text` fits in `cap` tokens, and its size in tokens: exact when counted
    whole, else extrapolated from its start (see the module's docstring)."""
    counted = cap * _COUNTED_CHARS
    if len(text) <= counted:
        tokens = count_tokens(text)
        return tokens <= cap, tokens
    start = count_tokens(text[:counted])
    if start > cap:
        return False, start * len(text) // counted
    tokens = count_tokens(text)  # a start this thin on tokens: the whole is counted
    return tokens <= cap, tokens


def capped(text: str, cap: int | None, record_id: str | None) -> str:
    """`text` when it fits in `cap` tokens (or there is no cap), else what a model is
    shown of it first: its head and tail within `cap`, with what was left out and how
    `replay_result(id=record_id)` reads it (None: it was not recorded)."""
    if cap is None:
        return text
    fits, tokens = size_within(text, cap)
    if fits:
        return text
    view = Sight(text, tokens, record_id, cap, exact=len(text) <= cap * _COUNTED_CHARS).view()
    # A failure stays one by its first word, which says so where nothing was recorded.
    return f"error: {view}" if text.startswith("error: ") else view


def binary_part(record_id: str | None, media_type: str, size: int) -> str:
    """What stands for an image, audio or other binary part a model is not given: its
    media type, size and the record that holds it."""
    where = f"; it is kept in result {record_id}" if record_id else ""
    return f"[{media_type}, {size:,} bytes: not shown{where}]"


def is_binary(media_type: str) -> bool:
    """Whether a media type names bytes no model reads as text: an image, audio, video,
    or bytes of no kind said."""
    base = media_type.split(";", 1)[0].strip().lower()
    return base.startswith(("image/", "audio/", "video/")) or base == "application/octet-stream"


@dataclass(frozen=True)
class _Cut:
    """Where the head ends or the tail starts: a line (from 1) and a character in it
    (from 0), None when the cut falls between lines."""

    line: int
    char: int | None = None


class Sight:
    """The first-sight view of a text over the cap: `view()` gives it."""

    def __init__(
        self, text: str, tokens: int, record_id: str | None, cap: int, *, exact: bool
    ) -> None:
        self.text = text
        self.tokens = tokens
        self.record_id = record_id
        self.cap = cap
        self.exact = exact
        self.lines = text.splitlines()

    def view(self) -> str:
        header = self._header()
        room = self.cap - count_tokens(header) - 80  # the omission and footer lines
        for _ in range(6):
            text = self._compose(header, max(0, room))
            used = count_tokens(text)
            if used <= self.cap:
                return text
            room -= used - self.cap + 16  # counts of joined parts are not quite their sum
        return self._compose(header, 0)

    def _compose(self, header: str, room: int) -> str:
        head_room = int(room * _HEAD_SHARE)
        head, head_end = self._head(head_room)
        tail, tail_start = self._tail(room - head_room, head_end)
        shown = sum(len(line) + 1 for line in (*head, *tail))
        left = self._left_out(head_end, tail_start, max(0, len(self.text) - shown))
        return "\n".join([header, *head, left, *tail, self._footer(head_end)])

    def _header(self) -> str:
        about = "" if self.exact else "about "
        holds = _holds(self.text, budget=max(40, self.cap // 10))
        said = (
            f"[result {self.record_id}" if self.record_id else "[this result (not recorded)"
        ) + (
            f": {counted(len(self.lines), 'line')}, {len(self.text):,} characters, {about}"
            f"{self.tokens:,} tokens; over the {self.cap:,}-token cap, so its head and "
            "tail are shown"
        )
        if self.record_id:
            said += " and the whole is stored"
        return f"{said}]" + (f"\n[it holds {holds}]" if holds else "")

    def _head(self, room: int) -> tuple[list[str], _Cut]:
        """The first lines that fit in `room`, and where they end: a first line over it
        on its own is cut between two characters."""
        kept: list[str] = []
        used = 0
        for n, line in enumerate(self.lines, 1):
            cost = line_cost(line, room - used)
            if used + cost > room:
                if kept:
                    return kept, _Cut(n)
                part = text_start(line, room)
                return [part] if part else [], _Cut(n, len(part))
            kept.append(line)
            used += cost
        return kept, _Cut(len(self.lines) + 1)

    def _tail(self, room: int, head_end: _Cut) -> tuple[list[str], _Cut]:
        """The last lines that fit in `room`, after where the head ends, and where they
        start: a last line over it on its own is cut between two characters (the line
        the head was cut in, only after the head's part of it)."""
        kept: list[str] = []
        used = 0
        first = head_end.line if head_end.char is None else head_end.line + 1
        for n in range(len(self.lines), first - 1, -1):
            line = self.lines[n - 1]
            cost = line_cost(line, room - used)
            if used + cost > room:
                if kept:
                    return kept[::-1], _Cut(n + 1)
                part = _end(line, room)
                return ([part] if part else []), _Cut(n, len(line) - len(part))
            kept.append(line)
            used += cost
        if head_end.char is not None:  # every later line fits: the rest of the cut one
            line = self.lines[head_end.line - 1]
            part = _end(line[head_end.char :], room - used)
            if part:
                kept.append(part)
            return kept[::-1], _Cut(head_end.line, len(line) - len(part))
        return kept[::-1], _Cut(first)

    def _left_out(self, head_end: _Cut, tail_start: _Cut, chars: int) -> str:
        start = f"line {head_end.line:,}"
        if head_end.char is not None:
            start += f" from character {head_end.char:,}"
        if tail_start.char is None:
            end = f"line {tail_start.line - 1:,}"
        elif tail_start.line == head_end.line:
            end = f"character {tail_start.char:,}"
        else:
            end = f"line {tail_start.line:,} up to character {tail_start.char:,}"
        span = start if end == f"line {head_end.line:,}" else f"{start} to {end}"
        share = self.tokens * chars // max(1, len(self.text))
        return f"[… left out: {span}, {chars:,} characters, about {share:,} tokens …]"

    def _footer(self, head_end: _Cut) -> str:
        if self.record_id is None:
            return "[the rest was not recorded and cannot be read back]"
        call = f'{REPLAY_TOOL}(id="{self.record_id}", start_line={head_end.line}'
        if head_end.char is not None:
            call += f", start_char={head_end.char}"
        return (
            f"[read the rest with {call}) and on, end_line to stop; "
            f'or {REPLAY_TOOL}(id="{self.record_id}", pattern="...") for the lines that '
            f"match; each read shows at most about {self.cap:,} tokens]"
        )


def line_cost(line: str, room: int) -> int:
    """The tokens a line takes, with its line break; a line far longer than `room` is
    not counted (megabytes on one line would be counted for nothing)."""
    if len(line) > max(0, room) * _COUNTED_CHARS:
        return room + 1
    return count_tokens(line) + 1


def text_start(text: str, budget: int) -> str:
    """The start of `text` that fits in about `budget` tokens, cut between characters."""
    if budget <= 0:
        return ""
    end = min(len(text), budget * 4)
    while end > 0:
        used = count_tokens(text[:end])
        if used <= budget:
            return text[:end]
        end = min(end - 1, end * budget // used)
    return ""


def _end(text: str, budget: int) -> str:
    """The end of `text` that fits in about `budget` tokens, cut between characters."""
    return text_start(text[::-1], budget)[::-1]


def _holds(text: str, budget: int) -> str:
    """What a JSON document holds: its keys (each with its row or key count) or its
    rows; "" for text that is not JSON (its lines are said already)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{" or len(stripped) > _JSON_PARSED:
        return ""
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return ""
    if isinstance(data, list):
        said = f"a JSON list of {_kind(data)}"
    elif isinstance(data, dict):
        keys = [f"{json.dumps(k)} ({_kind(v)})" for k, v in list(data.items())[:_JSON_KEYS]]
        more = f", and {len(data) - _JSON_KEYS:,} more keys" if len(data) > _JSON_KEYS else ""
        said = f"a JSON object of {len(data):,} keys: {', '.join(keys)}{more}"
    else:
        return ""
    return text_start(said, budget) if count_tokens(said) > budget else said


def _kind(value: Any) -> str:
    """What one JSON value is, in a few words: a list's rows and their keys, an
    object's key count, a scalar's type."""
    if isinstance(value, list):
        rows = [v for v in value if isinstance(v, dict)]
        if rows and len(rows) == len(value):
            keys = list(dict.fromkeys(k for row in rows[:50] for k in row))[:_JSON_KEYS]
            return f"{len(value):,} rows of {', '.join(keys)}" if keys else f"{len(value):,} rows"
        return f"{len(value):,} items"
    if isinstance(value, dict):
        return f"object of {len(value):,} keys"
    if isinstance(value, str):
        return f"text of {len(value):,} characters"
    if value is None:
        return "null"
    return (
        type(value)
        .__name__.replace("bool", "boolean")
        .replace("float", "number")
        .replace("int", "number")
    )
