"""What `replay_result` shows of a result: a range of numbered lines, the lines a
pattern matches in context, at most about `max_tokens`; the whole text when none is
asked. A model's pattern is bounded: in size, in what it compiles to, and in time."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import regex

from ..core.errors import ArgumentError
from ..core.tokens import count_tokens
from .patterns import expanded_size

CONTEXT_LINES = 2  # lines shown around each match of `pattern`
PATTERN_LENGTH = 1000  # characters a pattern may have
# Seconds a pattern may take over a whole result: a model's regular expression can take
# exponential time on a short line ("(a+)+$"), and matching holds the interpreter.
PATTERN_SECONDS = 1.0
# Items a pattern may stand for once its counted repeats are written out, as `regex`
# compiles it: ((a{1000}){1000}){10} stands for ten million, and compiling it alone took
# 4 s and 2.9 GB, before the time limit on matching could act. 10,000 compile in about
# 10 ms and 10 MB, whatever the items are.
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
