"""`replay_result`: the tool a model calls to get a result back by its id, and what it
shows of the result: a range of numbered lines, the lines a pattern matches in context,
at most about `max_tokens`; the whole text when none is asked. A model's pattern is
bounded: in size, in what it compiles to, and in time.
"""

from __future__ import annotations

import itertools
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
from .firstsight import capped, line_cost, text_start
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
# A line longer than this many characters shows, where a pattern matches it, only
# `WINDOW` characters either side of its first `WINDOWS` matches.
LONG_LINE = 2_000
WINDOW = 400
WINDOWS = 3
WINDOW_LABEL = regex.compile(r"\[characters \d+-\d+ of the line\] ")
# Tokens of a read kept for its first line and the note of where it was cut, when the
# read is capped by the tool's own cap rather than the max_tokens a model asked for.
NOTE_ROOM = 80


def select(text: str, arguments: Mapping[str, Any], cap: int | None = None) -> str:
    """What `replay_result` gives of `text` for the `arguments` (checked, see
    `ReplayTool.checked`): a range of numbered lines (the first from `start_char` on),
    the lines a pattern matches in context, at most about `max_tokens`, and never over
    `cap`; `text` exactly when none is asked. A pattern that runs too long raises
    `ArgumentError`."""
    start, end = arguments.get("start_line"), arguments.get("end_line")
    pattern, asked = arguments.get("pattern"), arguments.get("max_tokens")
    start_char = int(arguments.get("start_char") or 0)
    if start is None and end is None and not pattern and asked is None and not start_char:
        return text  # no range, pattern or cap: the whole payload, exactly
    limit = int(asked) if asked is not None else cap
    if cap is not None and limit is not None:
        limit = min(limit, cap)
    lines = text.splitlines()
    first = max(1, int(start or 1))
    if start is not None and first > len(lines):  # an answer, as a pattern matching none is
        return f"[start_line is past the end: the text has {len(lines)} lines]"
    last = min(len(lines), int(end or len(lines)))
    offsets = {first: start_char} if start_char else {}
    if start_char and start_char >= len(lines[first - 1] if first <= len(lines) else ""):
        length = len(lines[first - 1]) if first <= len(lines) else 0
        return f"[start_char is past the end of line {first}: it has {length:,} characters]"
    numbered = [(n, lines[n - 1][offsets.get(n, 0) :]) for n in range(first, last + 1)]
    header = f"[lines {first}-{last} of {len(lines)}]"
    if start_char:
        header = (
            f"[lines {first}-{last} of {len(lines)}; line {first} from character {start_char:,}]"
        )
    if pattern:
        numbered, header, offsets = _matching(numbered, str(pattern), len(lines), offsets)
    body = [f"{n}: {line}" if n else line for n, line in numbered]
    if limit is not None:
        # The tool's own cap holds the header and the note too; a model's max_tokens
        # is kept as it always was, for the lines.
        room = limit if asked is not None and int(asked) <= limit else limit - NOTE_ROOM
        body, note = _capped(body, max(1, room), offsets, limit)
        if note is not None:
            body.append(note)
    return "\n".join([header, *body])


def _matching(
    numbered: list[tuple[int, str]], pattern: str, total: int, offsets: dict[int, int]
) -> tuple[list[tuple[int, str]], str, dict[int, int]]:
    """The lines that match, with `CONTEXT_LINES` around each; of a line longer than
    `LONG_LINE`, only a window of characters around its first matches (`offsets` then
    says where the window starts, for `start_char`)."""
    compiled = _compiled(pattern)
    deadline = time.monotonic() + PATTERN_SECONDS
    hits: list[int] = []
    windows: dict[int, tuple[int, str]] = {}
    try:
        for i, (n, line) in enumerate(numbered):
            left = max(0.0, deadline - time.monotonic())
            if len(line) <= LONG_LINE:
                if compiled.search(line, timeout=left):
                    hits.append(i)
                continue
            found = [
                m.span() for m in itertools.islice(compiled.finditer(line, timeout=left), WINDOWS)
            ]
            if found:
                hits.append(i)
                windows[i] = _window(line, found, offsets.get(n, 0))
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
    where: dict[int, int] = {}
    previous = None
    for i in sorted(keep):
        if previous is not None and i != previous + 1:
            out.append((0, "--"))
        n, line = numbered[i]
        if i in windows:
            start, line = windows[i]
            where[n] = start
        elif len(line) > LONG_LINE:  # context, not a match: its start only
            line = f"{line[:WINDOW]}…"
            where[n] = offsets.get(n, 0)
        else:
            where[n] = offsets.get(n, 0)
        out.append((n, line))
        previous = i
    return out, f"[{len(hits)} lines match {pattern!r} of {total}]", where


def _window(line: str, spans: list[tuple[int, int]], offset: int) -> tuple[int, str]:
    """The characters of a long line around its matches at `spans` (the line itself
    starting at character `offset` of the stored line): where the window starts in the
    stored line, and the window, saying which characters it shows."""
    start = max(0, spans[0][0] - WINDOW)
    end = min(len(line), max(spans[-1][1], spans[0][1]) + WINDOW)
    shown = line[start:end]
    return offset + start, f"[characters {offset + start}-{offset + end} of the line] {shown}"


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


def _capped(
    body: list[str], cap: int, offsets: dict[int, int], said: int | None = None
) -> tuple[list[str], str | None]:
    """The lines of `body` that fit in about `cap` tokens, and the note that says where
    they were cut (None when all fit), naming `said` tokens (`cap` without it). A first
    line over the cap on its own is cut inside, between two characters: a payload on
    one line (minified JSON) is capped too, and the note gives the `start_char` its
    next read starts at (`offsets`: where each numbered line's text starts)."""
    said = cap if said is None else said
    kept: list[str] = []
    used = 0
    for i, line in enumerate(body):
        cost = line_cost(line, cap - used)
        if used + cost <= cap:
            kept.append(line)
            used += cost
            continue
        after = _first_number(body[i:]) if kept else _first_number(body[i + 1 :])
        more = f": ask with start_line={after} for more" if after is not None else ""
        if kept:
            return kept, f"[truncated at about {said} tokens{more}]"
        label, text = _label(line)
        head = text_start(text, max(1, cap - 1 - count_tokens(label)))
        kept.append(label + head)
        more = f"; start_line={after} gives the lines after it" if after is not None else ""
        if not label:
            return (
                kept,
                f"[the line cut at about {said} tokens, after {len(head):,} characters{more}]",
            )
        n = int(label[:-2])
        window = WINDOW_LABEL.match(text)  # a window of a long line: counted from its start
        at = offsets.get(n, 0) + len(head) - (window.end() if window else 0)
        return kept, (
            f"[line {n} cut at about {said} tokens: start_line={n}, start_char={at} "
            f"goes on from there{more}]"
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
    "start_line/end_line take a range of lines (start_char: where in a very long first "
    "line), pattern takes the matching lines with some context, max_tokens caps the "
    "length. A result too long to show whole shows its head and tail and says how to "
    "read the rest."
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
        "start_char": {
            "type": "integer",
            "minimum": 0,
            "description": "character of start_line to start at, from 0, in a very long line",
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

    def result_cap(self, tool: str) -> int | None: ...


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
            return self._read(self._kit.render(result), arguments, result.record.id)
        if result.record.media_type == BLOCKS:  # text with images or files beside it
            content, _ = decode_blocks(result.payload)
            text = self._read(blocks_text(content), arguments, result.record.id)
            textless = describe(content, textless=True)  # a search result's text is shown
            return f"{text}\n[with it: {textless}, not shown as text]" if textless else text
        if readable_text(result) is None and not self._kit.has_renderer(result.record.tool):
            return binary_note(result)
        return self._read(self._kit.render(result), arguments, result.record.id)

    def _read(self, text: str, arguments: Mapping[str, Any], record_id: str) -> str:
        """`select` of `text` within this tool's cap; asked whole, a text over the cap
        is shown as it was at first sight: its head and tail, and how to read the rest."""
        cap = self._kit.result_cap(NAME)
        if set(arguments) <= {"id"}:
            return capped(text, cap, record_id)
        return select(text, arguments, cap)

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
        selects = any(arguments.get(k) for k in ("start_line", "end_line", "pattern", "start_char"))
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
