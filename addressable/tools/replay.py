"""`replay_result`: the tool a model calls to get a result back by its id, and what it
shows of the result: a range of numbered lines, the lines a pattern matches in context,
at most about `max_tokens`; the whole text when none is asked. A model's pattern is
bounded: in size, in what it compiles to, and in time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import regex

from ..context.stubs import REPLAY_TOOL
from ..core.blocks import blocks_text, decode_blocks, describe, to_shape
from ..core.errors import (
    AddressableError,
    AmbiguousId,
    ArgumentError,
    BadId,
    Expired,
    IntegrityError,
    NotFound,
)
from ..core.ids import ID_LENGTH
from ..core.payload import BLOCKS
from ..core.tokens import count_tokens
from ..recording.recorder import model_resolve
from .arguments import check_arguments
from .definitions import binary_note, readable_text
from .patterns import expanded_size

CONTEXT_LINES = 2  # lines shown around each match of `pattern`
PATTERN_LENGTH = 1000  # characters a pattern may have
# Seconds a pattern may take over a whole result: a model's regular expression can take
# exponential time on a short line ("(a+)+$"), and matching holds the interpreter.
PATTERN_SECONDS = 1.0
# Items a pattern may stand for once its counted repeats are written out, as `regex`
# compiles it: the time limit covers matching, not compiling, and a pattern that stands
# for millions (((a{1000}){1000}){10}) takes seconds and gigabytes to compile.
PATTERN_ITEMS = 10_000


def select(text: str, arguments: Mapping[str, Any]) -> str:
    """What `replay_result` gives of `text` for the `arguments` (checked, see
    `ReplayTool.checked`): a range of numbered lines, the lines a pattern matches in
    context, at most about `max_tokens`; `text` exactly when none is asked. A pattern
    that runs too long raises `ArgumentError`."""
    start, end = arguments.get("start_line"), arguments.get("end_line")
    pattern, cap = arguments.get("pattern"), arguments.get("max_tokens")
    if start is None and end is None and not pattern and cap is None:
        return text  # no range, pattern or cap: the whole payload, exactly
    lines = text.splitlines()
    first = max(1, int(start or 1))
    if start is not None and first > len(lines):  # an answer, as a pattern matching none is
        return f"[start_line is past the end: the text has {len(lines)} lines]"
    last = min(len(lines), int(end or len(lines)))
    numbered = [(n, lines[n - 1]) for n in range(first, last + 1)]
    header = f"[lines {first}-{last} of {len(lines)}]"
    if pattern:
        numbered, header = _matching(numbered, str(pattern), len(lines))
    body = [f"{n}: {line}" if n else line for n, line in numbered]
    if cap is not None:
        body, note = _capped(body, int(cap))
        if note is not None:
            body.append(note)
    return "\n".join([header, *body])


def _matching(
    numbered: list[tuple[int, str]], pattern: str, total: int
) -> tuple[list[tuple[int, str]], str]:
    compiled = _compiled(pattern)
    deadline = time.monotonic() + PATTERN_SECONDS
    hits: list[int] = []
    try:
        for i, (_, line) in enumerate(numbered):
            if compiled.search(line, timeout=max(0.0, deadline - time.monotonic())):
                hits.append(i)
    except TimeoutError:
        raise ArgumentError(
            f"the pattern {pattern[:80]!r} took over {PATTERN_SECONDS:g} s on this result; "
            "give a simpler one (plain text matches as it is)"
        ) from None
    except MemoryError:  # a group repeated over a very long line keeps every capture
        raise ArgumentError(
            f"the pattern {pattern[:80]!r} took too much memory on this result; give a "
            "simpler one, without a group repeated over a long line"
        ) from None
    keep: set[int] = set()
    for i in hits:
        keep.update(range(max(0, i - CONTEXT_LINES), min(len(numbered), i + CONTEXT_LINES + 1)))
    out: list[tuple[int, str]] = []
    previous = None
    for i in sorted(keep):
        if previous is not None and i != previous + 1:
            out.append((0, "--"))
        out.append(numbered[i])
        previous = i
    return out, f"[{len(hits)} lines match {pattern!r} of {total}]"


def _compiled(pattern: str) -> regex.Pattern[str]:
    """`pattern` compiled, or as plain text where it is no regular expression. One that
    would grow too large to compile, or that `expanded_size` cannot read (verbose mode),
    is an `ArgumentError` before anything is compiled."""
    items = expanded_size(pattern)
    if items is None:
        raise ArgumentError(
            f"the pattern {pattern[:80]!r} turns on verbose mode (?x), which is not "
            "taken here; give it without"
        )
    if items > PATTERN_ITEMS:
        raise ArgumentError(
            f"the pattern {pattern[:80]!r} repeats too much: its counted repeats written "
            f"out make over {PATTERN_ITEMS:,} items; give a simpler one (plain text matches "
            "as it is)"
        )
    try:
        return regex.compile(pattern)
    except (regex.error, ValueError, OverflowError, RecursionError):
        return regex.compile(regex.escape(pattern))  # not a regular expression: text


def _capped(body: list[str], cap: int) -> tuple[list[str], str | None]:
    """The lines of `body` that fit in about `cap` tokens, and the note that says where
    they were cut (None when all fit). A first line over the cap on its own is cut
    inside, between two characters: a payload on one line (minified JSON) is capped too."""
    kept: list[str] = []
    used = 0
    for i, line in enumerate(body):
        cost = count_tokens(line) + 1
        if used + cost <= cap:
            kept.append(line)
            used += cost
            continue
        after = _first_number(body[i:]) if kept else _first_number(body[i + 1 :])
        more = f": ask with start_line={after} for more" if after is not None else ""
        if kept:
            return kept, f"[truncated at about {cap} tokens{more}]"
        label, text = _label(line)
        head = _head(text, max(1, cap - 1 - count_tokens(label)), cost - 1)
        kept.append(label + head)
        number = f"line {label[:-2]}" if label else "the line"
        more = f"; start_line={after} gives the lines after it" if after is not None else ""
        return kept, (
            f"[{number} cut at about {cap} tokens, after {len(head):,} of its "
            f"{len(text):,} characters: a larger max_tokens shows more of it{more}]"
        )
    return kept, None


def _label(line: str) -> tuple[str, str]:
    """("12: ", text) of a numbered line of `select`'s body; ("", line) of another."""
    number, sep, text = line.partition(": ")
    return (number + sep, text) if sep and number.isdigit() else ("", line)


def _first_number(body: list[str]) -> int | None:
    """The number of the first numbered line of `body`, if any is."""
    for line in body:
        label, _ = _label(line)
        if label:
            return int(label[:-2])
    return None


def _head(text: str, budget: int, tokens: int) -> str:
    """The start of `text` (of `tokens` tokens) that fits in about `budget` tokens, cut
    between two characters: first at the share of characters the budget is of the
    tokens, then shorter while it does not fit."""
    end = len(text) * budget // max(1, tokens)
    while end > 0:
        used = count_tokens(text[:end])
        if used <= budget:
            break
        end = min(end - 1, end * budget // used)
    return text[:end]


if TYPE_CHECKING:
    from ..core.records import Result
    from ..store import Store

NAME = REPLAY_TOOL
CLOSE_AMONG = 1000  # newest records an unknown id is compared with, for close ones
# Characters an id argument may have: an id is 16, a model may pad it; a longer one is
# refused by the schema, in one line, before anything quotes it.
ID_ARGUMENT_LENGTH = 64

DESCRIPTION = (
    "Get back the exact content of an earlier tool result that was replaced by a stub "
    "(a line that starts [ref:ID or [claim:ID), by the ID the stub shows. "
    "Without other arguments it returns the whole content; "
    "start_line/end_line take a range of lines, pattern takes the matching lines with "
    "some context, max_tokens caps the length."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {
            "type": "string",
            "maxLength": ID_ARGUMENT_LENGTH,
            "description": "the result id from the stub (8 to 16 hex characters)",
        },
        "start_line": {
            "type": "integer",
            "minimum": 1,
            "description": "first line to return, from 1",
        },
        "end_line": {
            "type": "integer",
            "minimum": 1,
            "description": "last line to return, inclusive",
        },
        "pattern": {
            "type": "string",
            "maxLength": PATTERN_LENGTH,
            "description": "a regular expression: return only matching lines, in context",
        },
        "max_tokens": {
            "type": "integer",
            "minimum": 1,
            "description": "return at most about this many tokens",
        },
    },
    "required": ["id"],
    "additionalProperties": False,
}


class Kit(Protocol):
    """What the replay tool needs of the kit it is registered with (and its `session`,
    if it has one: a prefix names, and an unknown id is compared with, that session's
    records only; a kit without one replays by full id or a stub's prefix alone)."""

    @property
    def store(self) -> Store: ...

    def replay(self, id: str, *, verify: bool = False) -> Result: ...

    def render(self, result: Result) -> str: ...

    def has_renderer(self, tool: str) -> bool: ...

    def handle(self, name: str, arguments: Mapping[str, Any] | str | None) -> str: ...


class ReplayTool:
    """Offers `kit.replay` to the model; every failure is a short text it can act on."""

    name = NAME
    description = DESCRIPTION
    input_schema = SCHEMA

    def __init__(self, kit: Kit) -> None:
        self._kit = kit

    def checked(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """A model's arguments checked against `SCHEMA` (see `check_arguments`); one
        without an id string is left for `handle` to say what it needs."""
        if not isinstance(arguments.get("id"), str):
            return dict(arguments)
        checked = check_arguments(SCHEMA, arguments, NAME)
        start, end = checked.get("start_line"), checked.get("end_line")
        if start is not None and end is not None and end < start:
            raise ArgumentError(
                f"{NAME}: end_line is before start_line; give a range that ends at or "
                "after its start"
            )
        return checked

    def handle(self, arguments: dict[str, Any]) -> str:
        raw_id = arguments.get("id")
        if not isinstance(raw_id, str) or not raw_id.strip():
            return (
                "error: replay_result needs the id a stub shows, "
                'e.g. replay_result(id="0123456789abcdef")'
            )
        try:
            result = self._replay(raw_id)
        except BadId as exc:
            return f"error: {exc}. Ask again with the id exactly as the stub shows it."
        except AmbiguousId as exc:
            shown = ", ".join(exc.candidates[:5])
            prefix = raw_id.strip().lower()  # checked: a short run of hex digits
            return f"error: {prefix!r} matches several results ({shown}); ask again with a full id."
        except Expired as exc:
            return f"error: {exc}"
        except NotFound:
            return self._not_found(raw_id.strip().lower())
        except IntegrityError as exc:
            return f"error: {exc}. Run the original call again to get the content."
        if not result.ok:
            return self._kit.render(result)
        if result.record.media_type == BLOCKS:  # text with images or files beside it
            content, _ = decode_blocks(result.payload)
            text = select(blocks_text(content), arguments)
            textless = describe(content, textless=True)  # a search result's text is shown
            return f"{text}\n[with it: {textless}, not shown as text]" if textless else text
        if readable_text(result) is None and not self._kit.has_renderer(result.record.tool):
            return binary_note(result)
        return select(self._kit.render(result), arguments)

    def content(self, arguments: dict[str, Any], shape: str = "anthropic") -> str | list[Any]:
        """What `handle` gives, but a result stored with images or files comes back
        whole as content blocks the API of `shape` takes in a tool result ("anthropic",
        "openai-responses", "flat" for LangChain): its stored blocks exactly when it
        was stored from that shape. A Chat Completions tool message ("openai") takes
        text only: it gets the text. The arguments are checked as `kit.handle` checks
        them: a bad one is an `error: ...` text, not an exception."""
        # Text, and every failure, as `kit.handle` gives it: one line for a bad argument
        # or a pattern that ran too long, never an exception.
        try:
            arguments = self.checked(arguments)
        except ArgumentError:
            return self._kit.handle(NAME, arguments)
        selects = any(arguments.get(k) for k in ("start_line", "end_line", "pattern"))
        raw_id = arguments.get("id")
        if shape == "openai" or selects or arguments.get("max_tokens") is not None:
            return self._kit.handle(NAME, arguments)
        try:
            result = self._replay(str(raw_id))
        except AddressableError:
            return self._kit.handle(NAME, arguments)
        if not result.ok or result.record.media_type != BLOCKS:
            return self._kit.handle(NAME, arguments)
        content, stored = decode_blocks(result.payload)
        return to_shape(content, stored, shape)

    def _replay(self, raw_id: str) -> Result:
        return self._kit.replay(self.resolve(raw_id))

    def resolve(self, raw_id: str) -> str:
        """The full id the model names by `raw_id`: see `model_resolve`."""
        return model_resolve(self._kit.store, getattr(self._kit, "session", None), raw_id)

    def _not_found(self, text: str) -> str:
        # Close ids only among the newest records of the kit's own session, the ones its
        # model can have seen: not the whole store, which a model could make every wrong
        # id read, nor another session's, whose ids would leak. (A Toolkit always has a
        # session; another kit without one gets no hints.)
        session = getattr(self._kit, "session", None)
        recent = (
            self._kit.store.records(session=session, newest_first=True, limit=CLOSE_AMONG)
            if isinstance(session, str)
            else ()
        )
        close = _closest(text, (r.id for r in recent))
        hint = f" Close ids: {', '.join(close)}." if close else ""
        return (
            f"error: no result with id {text}.{hint} Ids are {ID_LENGTH} hex characters; "
            "copy the id from the stub exactly."
        )


def _closest(text: str, ids: Any, most: int = 3) -> list[str]:
    def shared(candidate: str) -> int:
        n = 0
        while n < min(len(text), len(candidate)) and text[n] == candidate[n]:
            n += 1
        return n

    scored = sorted(((shared(i), i) for i in ids), key=lambda item: (-item[0], item[1]))
    return [i for score, i in scored[:most] if score >= 2]


def handle_content(
    kit: Kit, name: str, arguments: Mapping[str, Any] | str | None, format: str = "anthropic"
) -> str | list[Any]:
    """`kit.handle`, except that `replay_result` of a result stored with images or files
    gives them back as content blocks of the API `format` ("anthropic",
    "openai-responses"; "openai" Chat tool messages take text only), not as text:
    put what it returns as the tool result's content."""
    if name != NAME:
        return kit.handle(name, arguments)
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except (ValueError, RecursionError):
        parsed = None  # kit.handle says what is wrong
    if not isinstance(parsed, Mapping):
        return kit.handle(name, arguments)
    return ReplayTool(kit).content(dict(parsed), format)
