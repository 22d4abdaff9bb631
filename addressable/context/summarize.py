"""The names a stub keeps of a text: URLs, paths and made-up words (snake_case,
CamelCase, dotted names, dunders, codes, dates), and of those the ones the conversation
does not show yet (`Known`). Not the ids of records: those are `ids`.

The parts a gist is made of, and how they are joined within a budget of tokens.

A part is whole: a sentence, a value, or a list of values (`Items`). `fit` leaves out a
part that does not fit rather than cut it, so that no gist ends in a broken fragment.

What the gist of each kind of result is made of: an error, a page, a JSON document, a
command's output, a search's hits (the kinds are described in `context.summarize`).

Each kind gives its essential parts (the room they need is always given) and the rest
(kept where there is room); a search gives its whole gist, its hits in rank order.

The default summariser: what a stub keeps of a result, without a model.

Agents reuse what they first saw inside a result (a path from a grep, a reservation id
from a lookup, a URL from a search), so a stub keeps those. It pays for itself: it takes
the room its essential values need, and for the rest a small share of the result it
replaces (`STUB_SHARE`, at least `GIST_FLOOR` tokens), within the budget.
A gist is made of whole parts (a sentence, a value, a line): a part that does not fit is
left out, never cut, so that no gist ends in a broken fragment.

- search: the query, then the URL (and the title, where there is room) of the hits in
  rank order, at least the first three; no hits is a negative finding
- a page: its title and its first sentence, then the pages it links to and its names
- command output: how it ended when that says something (a non-zero exit code, a last
  line with an error or a test summary), the names of what failed, the paths it lists
  and the numbers of the lines a `grep -n` in one file matched;
  then its other names, CamelCase and dunders first, then paths and dotted names, the
  most used first
- JSON (API responses, tool calls): the ids, codes and dates of the resources it holds,
  the objects of a list a row each (`flights (flight_number date): HAT080 2024-05-28 |
  ...`); then names, amounts and statuses where there is room

Values the conversation already shows (`known`: the task, the agent's own words, the
calls' arguments, the results kept whole, the stubs before) are not repeated: the room
goes to what would otherwise be lost.
"""

from __future__ import annotations

import bisect
import functools
import inspect
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urljoin

from ..core.errors import ArgumentError
from ..core.html import read_html
from ..core.payload import decode_text
from ..core.records import Record, Report, Status
from ..core.tokens import count_tokens

_URL = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
PATH = re.compile(
    r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.@+-]+/)+[\w.@+-]+(?::\d+)?|"
    r"(?<![\w/.-])[\w-]+\.(?:py|pyi|js|ts|tsx|jsx|rs|go|java|kt|c|h|cc|cpp|hpp|"
    r"rb|php|md|rst|txt|json|ya?ml|toml|cfg|ini|html?|css|sql|sh|lock|xml|csv)"
    r"(?::\d+)?\b"
)
# Words that look made up: snake_case, CamelCase, dotted names, dunders, or letters and
# digits mixed (booking codes, flight numbers, hashes), dates.
_IDENT = re.compile(
    # A UUID, or an id of words and numbers joined by hyphens (ORD-55812, INV-2025-0042)
    r"(?<![\w-])(?:[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}|"
    r"[A-Za-z]+(?:-[A-Za-z0-9]+)*-\d[A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?![\w-])|"
    r"(?<!\w)(?:_*[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|__\w+__|_[A-Za-z]\w*|"
    r"[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z0-9]*|"
    r"(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{5,}|"
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|\d{4}-\d\d-\d\d)(?![\w])"
)
# A line that says what failed: a test, an error.
_FAILING = re.compile(
    r"^[ \t]*(?:FAIL|ERROR|FAILED|ERRORS?)\b[: \t].*$|^[ \t]*[\w.]*(?:Error|Exception)\b:.*$",
    re.M,
)
_DUNDER = re.compile(r"__[A-Za-z]\w*__")
_CAMEL = re.compile(r"[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*")
_NOT_A_NAME = re.compile(r"_+|0x[0-9a-fA-F]+|[0-9a-f]{7,}")  # rules, addresses, hashes


@dataclass(frozen=True)
class Known:
    """Text the conversation already shows: a value in it is not repeated in a stub,
    whose room goes to what would otherwise be lost."""

    text: str

    def new(self, value: str) -> bool:
        """Whether the conversation does not show `value` whole: `feature/login` is new
        beside `feature/login-v2`, and `usr_12` beside `usr_123`."""
        return not _shows_whole(self.text, value, _in_value)

    def names(self, text: str, limit: int = 200) -> list[str]:
        """Identifiers in `text` the conversation does not show yet, most telling
        first: dunders and CamelCase names (classes, exceptions), then paths and dotted
        names, then the rest; in each group the most used first. A name that another
        one holds whole (a file in its path) is left to that one."""
        found = [n for n in _counted(text) if self.new(n)][: limit * 2]
        listed = "\n".join(found)  # one search a name, not one for each pair
        whole = [n for n in found if not _held_by_another(listed, n)]
        return sorted(whole, key=_telling)[:limit]

    def failing(self, text: str) -> list[str]:
        """The names on lines that say what failed: a failing test, an error."""
        names: list[str] = []
        for match in _FAILING.finditer(text):
            for name in identifiers(match[0]):
                if name not in names and self.new(name):
                    names.append(name)
        return names


def _held_by_another(listed: str, name: str) -> bool:
    """Whether a line of `listed` other than `name` itself holds `name` whole (names
    hold no line break)."""
    at = listed.find(name)
    while at >= 0:
        end = at + len(name)
        before = listed[at - 1] if at else "\n"
        after = listed[end] if end < len(listed) else "\n"
        if not (before == "\n" and after == "\n") and not (_word_char(before) or _word_char(after)):
            return True
        at = listed.find(name, at + 1)
    return False


def _shows_whole(text: str, value: str, goes_on: Callable[[str], bool]) -> bool:
    """Whether `value` is in `text` with no character either side that `goes_on` says
    would make it a longer value."""
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        if not (at and goes_on(text[at - 1])) and not (end < len(text) and goes_on(text[end])):
            return True
        at = text.find(value, at + 1)
    return False


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _in_value(char: str) -> bool:
    """Whether `char` would make a value it stands beside longer (`feature/login` in
    `feature/login-v2`)."""
    return _word_char(char) or char == "-"


def _telling(name: str) -> int:
    if _DUNDER.fullmatch(name) or _CAMEL.fullmatch(name):
        return 0
    if "/" in name or "." in name:
        return 1
    if "_" in name or not name.isalnum():
        return 2
    return 3  # letters and digits mixed: in an output, more often a hash or a version


def identifiers(text: str, by_count: bool = False) -> Iterator[str]:
    """URLs, paths and made-up words, each once: in order of first appearance, or with
    `by_count` the most repeated first. A word inside a URL or a path is not repeated."""
    taken: list[tuple[int, int]] = []  # where URLs and paths are, merged and in order
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for pattern in (_URL, _EMAIL, PATH):
        # A pattern's own matches never overlap: each is checked against the others'.
        found = []
        for match in pattern.finditer(text):
            if not _within(taken, match.start()):
                found.append((match.start(), match.end()))
                _tally(match[0].rstrip(".,;:"), match.start(), first, count)
        taken = _merged(taken + found)
    for match in _IDENT.finditer(text):
        if not _within(taken, match.start()):  # else part of a URL or a path taken whole
            _tally(match[0].rstrip(".,;:"), match.start(), first, count)

    def rank(value: str) -> tuple[int, int]:
        return (-count[value] if by_count else 0, first[value])

    yield from sorted(first, key=rank)


@functools.lru_cache(maxsize=64)
def _counted(text: str) -> tuple[str, ...]:
    """`identifiers(text, by_count=True)`, found once for each text: a result's stub is
    made again at every compaction, and for the state document."""
    return tuple(identifiers(text, by_count=True))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` in order, those that overlap made one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _within(spans: list[tuple[int, int]], at: int) -> bool:
    """Whether `at` is inside one of `spans` (merged, in order)."""
    i = bisect.bisect_right(spans, (at, math.inf)) - 1
    return i >= 0 and at < spans[i][1]


def _tally(value: str, at: int, first: dict[str, int], count: dict[str, int]) -> None:
    if len(value) < 4 or len(value) > 120 or _NOT_A_NAME.fullmatch(value):
        return
    first.setdefault(value, at)
    count[value] = count.get(value, 0) + 1


GIST_FLOOR = 12  # tokens a gist may take besides its essential values, at least (JSON: none)

# A terminal's escape sequences: CSI (colours, cursor moves, also with the 8-bit
# introducer), OSC (window titles, hyperlinks: up to BEL or ST), DCS/SOS/PM/APC strings,
# and the two-character ones. Their text is never shown, so a stub leaves it out.
ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# C0 and C1 controls besides the whitespace ones (tab, line ends: `str.split` takes those).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")


def plain(text: str) -> str:
    """`text` without escape sequences and control characters, its whitespace (tabs,
    line ends) kept: what a terminal would show of it, as text a stub can hold."""
    if text.isprintable():
        return text  # the common case: nothing to take out
    return _CONTROL.sub("", ESCAPE.sub("", text))


def one_line(text: str) -> str:
    """`text` as plain text on one line, its runs of whitespace one space each."""
    return " ".join(plain(text).split())


@dataclass(frozen=True)
class Items:
    """A part that is a list: `head` then values joined by `sep`. When it does not fit,
    it loses values from its end (never fewer than `least`) rather than being cut; when
    even its first values do not fit, it keeps, in order, the values that do."""

    head: str
    values: Sequence[str]
    sep: str = ","
    least: int = 1

    def text(self, n: int | None = None) -> str:
        return self.head + self.sep.join(self.values[: len(self.values) if n is None else n])


Part = str | Items


def part_tokens(part: Part) -> int:
    """The tokens `part` takes in a gist, its separator included."""
    return count_tokens((part.text() if isinstance(part, Items) else part) + "; ")


def fit(parts: Iterable[Part], budget: int, sep: str = "; ") -> str:
    """Join `parts`, in order, within `budget` tokens. A part that does not fit is left
    out (an `Items` part first loses values from its end), and later, smaller parts
    still get their chance: no part is ever cut in the middle."""
    kept: list[str] = []
    used = 0
    for part in parts:
        if isinstance(part, Items):
            values = list(part.values)
            n = len(values)
            text = part.text(n)
            cost = count_tokens(text + sep)
            if used + cost > budget and n > part.least:
                # Drop values from the end: estimate, then step until it fits.
                n = max(part.least, min(n - 1, int(n * (budget - used) / max(1, cost))))
                text = part.text(n)
                cost = count_tokens(text + sep)
                while used + cost > budget and n > part.least:
                    n -= 1
                    text = part.text(n)
                    cost = count_tokens(text + sep)
            if used + cost > budget and n == part.least:
                # Even its first values do not fit: keep, in order, those that do.
                chosen: list[str] = []
                for value in values:
                    trial = part.head + part.sep.join([*chosen, value])
                    if used + count_tokens(trial + sep) <= budget:
                        chosen.append(value)
                if chosen:
                    text = part.head + part.sep.join(chosen)
                    cost = count_tokens(text + sep)
            if not values or not text.strip():
                continue
        else:
            text = part.strip()
            if not text:
                continue
            cost = count_tokens(text + sep)
        if used + cost > budget:
            continue
        kept.append(text)
        used += cost
    joined = ""
    for text in kept:
        # After a sentence that ends with its own stop, a space is enough.
        joined += (" " if joined.endswith((".", "!", "?")) else sep) + text if joined else text
    return joined


SEARCH_HITS = 3  # hits of a search whose URL a stub always keeps
NAMED = 8  # names of what failed (tests, errors) an output's stub always keeps
MAX_VALUE = 48  # characters: a longer value is prose, not something a call passes back

_ANSI = re.compile(r"\[(?:\d+;)*\d+m")  # colours with their ESC lost (`plain` takes the others)
_RULE = re.compile(r"[=\-_*#~]{4,}")  # a ruled line's decoration
# A value that names one thing: letters and digits together (booking codes, user ids).
_ID_VALUE = re.compile(r"(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[\w.-]{5,}")
_ID_FIELD = re.compile(r"(^|_)(id|ids|code|number|no|key|sku)$", re.I)
_KEY_FIELDS = re.compile(
    r"(^|_)(id|ids|code|number|no|name|title|email|status|state|amount|"
    r"price|total|balance|date|time|url|path|type|origin|destination|dob|"
    r"flight|reservation|order|invoice|user|account|sku|key)$",
    re.I,
)
_DATE = re.compile(r"\d{4}-\d\d-\d\d")
# Words whose stop is an abbreviation's, not a sentence's end ("Dr. Smith", "approx. 10").
_ABBREVIATIONS = (
    *("e.g", "i.e", "etc", "vs", "cf", "al", "approx", "ca", "no", "nos", "vol", "fig"),
    *("dept", "est", "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt"),
    *("mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun"),
    *("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
)
_NOT_AN_END = "".join(rf"(?<!\b(?i:{re.escape(word)}))" for word in _ABBREVIATIONS)
_NOT_AFTER_ONE = "".join(rf"(?<!\b(?i:{re.escape(word)})\. )" for word in _ABBREVIATIONS)
# A sentence: from the start of a line or after a stop, up to a stop that ends it: not an
# abbreviation's (above, a single capital's, one within a word like "p.m." or "U.S."),
# nor one a lowercase word follows.
_SENTENCE = re.compile(
    rf"(?:(?<![^\n])|(?<=[.!?] )(?<!\b[A-Z]\. ){_NOT_AFTER_ONE})[A-Z][^\n]{{15,}}?"
    rf"{_NOT_AN_END}(?<!\b[A-Z])(?<!\.[A-Za-z])[.!?](?=\s*$|\n|[ \t]+[^a-z \t])"
)
# The last line of an output is kept when it says how the command ended.
_ENDING = re.compile(
    r"error|exception|traceback|fail|passed|\bok\b|warning|denied|not found|no such|"
    r"invalid|refused|timed? ?out|killed|abort|success|done|finished|\d+ (?:tests?|items?)",
    re.I,
)
_WRAPPER = re.compile(r"^\s*</?[A-Za-z_][\w-]*>\s*$")  # a line that is only a tag
# A line of `grep -n`: its number, then ":" on a line that matched, "-" on one around it.
_NUMBERED = re.compile(r"(\d+)([:-])(?!\d)")
_RETURN_CODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>|^\[exit (-?\d+)\]$", re.M)


def error_parts(record: Record, text: str, known: Known) -> tuple[list[Part], list[Part]]:
    """A failed call: its first line of error, then the names in its text."""
    lines = [line.strip() for line in plain(record.error or text).strip().splitlines()]
    first = next((line for line in lines if line), "failed")
    if not first.lower().startswith("error"):
        first = f"error: {first}"
    names = known.names(text, limit=24)
    return [first], [Items("", names, " ")] if names else []


def page_parts(text: str, base: str, spare: int, known: Known) -> tuple[list[Part], list[Part]]:
    """A page: its title and first sentence, then the pages it links to and its names."""
    title, body, sentence, links = _read_page(text, base)
    # The title and the first sentence together, or the title alone when the
    # sentence would take more than half the room left for the rest.
    head = f'"{title}"' if title else ""
    if sentence and count_tokens(f"{head}: {sentence}") - part_tokens(head) <= spare // 2:
        head = f"{head}: {sentence}" if head else sentence
    fresh = [u for u in links if known.new(u)]
    names = [n for n in known.names(body, limit=24) if not n.startswith("file:")]
    rest: list[Part] = []
    if fresh:
        rest.append(Items("links: ", fresh[:12], " "))
    if names:
        rest.append(Items("", names, " "))
    return [head] if head else [], rest


@functools.lru_cache(maxsize=32)
def _read_page(text: str, base: str) -> tuple[str, str, str, tuple[str, ...]]:
    """A page's title, text, first sentence and the URLs it links to, read once for each
    page: its stub is made again at every compaction, and for the state document."""
    page = read_html(text)
    title = page.title
    # One line for each block, its whitespace (tabs, no-break spaces) collapsed.
    lines = (" ".join(line.split()) for line in page.text.splitlines())
    body = "\n".join(line for line in lines if line)
    sentence = next(
        (s.strip() for s in _SENTENCE.findall(body) if s.strip() != title and len(s.split()) >= 4),
        "",
    )
    return title, body, sentence, tuple(_links(page.links, base))


def json_parts(data: Any, known: Known) -> tuple[list[Part], list[Part]]:
    """A JSON document: the ids, codes and dates it holds, then its other key fields.

    The objects of a list (flights, payments, users) are kept a row each, their fields
    named once (`flights (flight_number date): HAT080 2024-05-28 | ...`), so
    that a value stays with the others of its object: a later call passes a flight's
    number with its own date, not with any date the document holds. A row holds only
    the fields that say which object it is (ids, codes, dates; names or amounts where it
    has none of those): on recorded sessions, wider rows cost more than they saved."""
    scalars: list[tuple[str, Any]] = []
    tables: dict[str, list[dict[str, Any]]] = {}
    order: dict[str, int] = {}  # where each field and table first shows, in the document
    _walk(data, "", scalars, tables, order)
    groups: dict[str, dict[str, None]] = {}  # each field's values, once each, in order
    rank: dict[str, int] = {}
    for path, value in scalars:
        shown = _shown(value)
        if shown is not None:
            name = _field(path)
            groups.setdefault(name, {})[shown] = None
            rank[name] = min(rank.get(name, 3), _priority(name, value))
    parts: list[tuple[int, int, Part]] = []
    for name, rows in tables.items():
        table = _table(name, rows, known, _count(data, name))
        if table is not None:
            parts.append((table[0], order["t:" + name], table[1]))
    for name, values in groups.items():
        fresh = [v for v in values if len(v) < 6 or known.new(v)]
        if not fresh or (rank[name] == 2 and len(fresh) < len(values)):
            continue
        parts.append((rank[name], order["f:" + name], Items(f"{name}=", fresh)))
    if isinstance(data, list) and "" not in tables:
        parts.append((0, -1, f"{len(data)} items"))
    parts.sort(key=lambda part: part[:2])
    essential = [part for r, _, part in parts if r == 0]
    return essential, [part for r, _, part in parts if r > 0]


def _count(data: Any, name: str) -> str:
    """The head of the table of a document that is a list: how many items it holds."""
    return f"{len(data)} items" if not name and isinstance(data, list) else ""


def _walk(
    value: Any,
    path: str,
    scalars: list[tuple[str, Any]],
    tables: dict[str, list[dict[str, Any]]],
    order: dict[str, int],
) -> None:
    """Sort a document's leaves: the scalars outside any list of objects, each with its
    path, and the objects of each list (lists nested in lists flattened), by the list's
    name. A map whose keys are ids (`{"gift_card_7": {...}}`) is a list of its objects.
    A list of one object is that object: its fields need no row to stay together."""
    if isinstance(value, dict):
        if (
            len(value) > 1
            and all(isinstance(v, dict) for v in value.values())
            and all(_ID_VALUE.fullmatch(str(k)) for k in value)
        ):
            rows = _rows(path, tables, order)
            for k, v in value.items():
                row = _row(v, path, scalars, tables, order)
                if k not in row.values():
                    row = {"key": k, **row}
                rows.append(row)
            return
        for k, v in value.items():
            _walk(v, f"{path}.{k}" if path else str(k), scalars, tables, order)
    elif isinstance(value, list):
        objects = list(_objects(value))
        if len(objects) > 1:
            rows = _rows(path, tables, order)
            rows.extend(_row(v, path, scalars, tables, order) for v in objects)
        for i, v in enumerate(value):
            if len(objects) < 2 or not isinstance(v, dict | list):
                _walk(v, f"{path}[{i}]", scalars, tables, order)
    else:
        order.setdefault("f:" + _field(path), len(order))
        scalars.append((path, value))


def _rows(
    path: str, tables: dict[str, list[dict[str, Any]]], order: dict[str, int]
) -> list[dict[str, Any]]:
    """The rows of the table a list at `path` adds to: one for all the lists that share a
    name (`flights` of every reservation)."""
    name = re.sub(r"\[\d+\]", "", path)
    order.setdefault("t:" + name, len(order))
    return tables.setdefault(name, [])


def _objects(value: list[Any]) -> Iterator[dict[str, Any]]:
    """The objects of a list, and of the lists in it."""
    for v in value:
        if isinstance(v, dict):
            yield v
        elif isinstance(v, list):
            yield from _objects(v)


def _row(
    obj: dict[str, Any],
    path: str,
    scalars: list[tuple[str, Any]],
    tables: dict[str, list[dict[str, Any]]],
    order: dict[str, int],
) -> dict[str, Any]:
    """One object of a list: its scalars by their names within it (`prices.economy`),
    a list of scalars as one value; a list of objects in it is a table of its own."""
    cells: dict[str, Any] = {}
    name = re.sub(r"\[\d+\]", "", path)

    def visit(value: Any, sub: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                visit(v, f"{sub}.{k}" if sub else str(k))
        elif isinstance(value, list):
            if all(not isinstance(v, dict | list) for v in value):
                shown = [s for s in map(_shown, value) if s is not None]
                if shown:
                    cells[sub] = ",".join(shown)
            else:
                _walk(value, f"{name}.{sub}" if name else sub, scalars, tables, order)
        else:
            cells[sub] = value

    visit(obj, "")
    return cells


def _table(
    name: str, rows: list[dict[str, Any]], known: Known, count: str
) -> tuple[int, Part] | None:
    """The rank and part of a list of objects: one row each of its fields of the best
    rank it has, 0 or 1 (see `_priority`), named once. A field with one value in every
    row is said once, in the head; a row whose values the conversation all shows is
    left out."""
    columns: dict[str, int] = {}
    for row in rows:
        for column, value in row.items():
            if _shown(value) is not None:
                columns[column] = min(columns.get(column, 3), _priority(column, value))
    rank = min(columns.values(), default=2)
    kept = [c for c, r in columns.items() if r == rank]
    if rank > 1:
        return None
    same: list[str] = []
    if len(rows) > 1:
        for column in list(kept):
            values = {_shown(row.get(column)) for row in rows}
            if len(values) == 1 and None not in values:
                same.append(f"{column}={_cell(values.pop())}")
                kept.remove(column)
    lines: list[str] = []
    for row in rows:
        cells = [_shown(row.get(column)) for column in kept]
        long = [c for c in cells if c is not None and len(c) >= 6]
        if long and not any(known.new(c) for c in long):
            continue  # the conversation shows all of it
        lines.append(" ".join(_cell(c) for c in cells))
    lines = list(dict.fromkeys(lines))
    if not lines and not same:
        return None
    head = ", ".join(filter(None, [" ".join(filter(None, [count, name])), *same]))
    if kept and lines:
        head += f" ({' '.join(kept)}): "
    return rank, Items(head, lines or [""], " | ")


def _shown(value: Any) -> str | None:
    """A JSON leaf as a stub shows it; None for one it leaves out: empty, a flag, or
    prose rather than something a call passes back."""
    if value in ("", None) or isinstance(value, bool):
        return None
    # A Python literal's values may be no JSON (bytes, a set): shown as Python does.
    shown = value if isinstance(value, str) else json.dumps(value, default=repr)
    if len(shown) > MAX_VALUE or "\n" in shown:
        return None
    return shown


def _cell(shown: str | None) -> str:
    """A value in a row: quoted where its spaces or bars would blur the columns."""
    if shown is None:
        return "-"
    return json.dumps(shown, ensure_ascii=False) if re.search(r"[\s|]", shown) else shown


def output_parts(
    record: Record, text: str, size: int, known: Known
) -> tuple[list[Part], list[Part]]:
    """A command's output: how it ended, what failed, the paths it lists, the lines it
    matched; then its other names."""
    exit_code = record.meta.get(Report.EXIT_CODE)
    if not isinstance(exit_code, int) and (m := _RETURN_CODE.search(text)):
        exit_code = int(m[1] or m[2])
    body = _ANSI.sub("", plain(_RETURN_CODE.sub("", text)))
    lines = [
        line.strip() for line in body.splitlines() if line.strip() and not _WRAPPER.match(line)
    ]
    head: list[Part] = [f"exit {exit_code}"] if isinstance(exit_code, int) else []
    if not lines:
        return [*head, "no output"], []
    last = _RULE.sub(" ", lines[-1]).strip()
    names = known.names(body)
    if len(lines) == 1 and len(last) <= 160:
        rest = [n for n in names if n not in last]
        return [*(head if exit_code else []), last], [Items("", rest, " ")] if rest else []
    ending = len(last) <= 160 and (bool(_ENDING.search(last)) or exit_code not in (None, 0))
    essential: list[Part] = [*head, *([f"last: {last}"] if ending else [])]
    # The names of what failed (tests, errors) are what a next step acts on.
    failing = [n for n in known.failing(body) if n not in last][:NAMED]
    # An output that lists paths (find, ls, grep -n, a compiler's errors), a path at
    # the start of each line: its paths are its values.
    leading = [m[0] for m in map(PATH.match, lines) if m]
    listed = list(dict.fromkeys(p for p in leading if known.new(p)))
    named = set(failing)  # what `failing` holds, looked up in one step on long outputs
    if len(leading) * 2 >= len(lines):
        for path in _a_third(listed, size):
            if path not in named:
                failing.append(path)
                named.add(path)
    if failing:
        essential.append(Items("", failing, " "))
    # An output whose lines lead with a line number (`grep -n` in one file): the numbers
    # of the lines it matched are its values, where the next edit or view goes.
    numbered = [m for m in map(_NUMBERED.match, lines) if m]
    if len(numbered) * 2 >= len(lines):
        matched = list(dict.fromkeys(m[1] for m in numbered if m[2] == ":" and known.new(m[1])))
        if kept := _a_third(matched, size):
            essential.append(Items("lines ", kept, " "))
    rest = [n for n in names if n not in named and not (ending and n in last)]
    if exit_code == 0 and (len(essential) > 1 or rest):
        essential = essential[1:]  # "exit 0": success goes without saying
    return essential, [Items("", rest, " ")] if rest else []


def _a_third(values: list[str], size: int) -> list[str]:
    """The first of `values` that fit, a space before each, in a third of an output of
    `size` tokens (`GIST_FLOOR` at least): what a listing's values may take of its stub."""
    room = max(GIST_FLOOR, size // 3)
    for n, value in enumerate(values):
        room -= count_tokens(f" {value}")
        if room < 0:
            return values[:n]
    return values


def search_gist(data: dict[str, Any], budget: int) -> str:
    """The query, then the hits in rank order: the first `SEARCH_HITS` URLs always,
    their titles where there is room (best hit first), then more hits while room is
    left. No hits is a negative finding: it says so."""
    query = json.dumps(str(data.get("query", "")), ensure_ascii=False)
    hits = [h for h in data.get("hits") or [] if isinstance(h, dict)]
    if not hits:
        return f"no hits for {query} ({data.get('backend', '?')})"
    urls = [_hit_url(h) for h in hits]
    titles = [" ".join(str(h.get("title", "")).split()) for h in hits]

    def line(shown: int, titled: int) -> str:
        parts = [
            f"{titles[i]} <{urls[i]}>" if i < titled and titles[i] else urls[i]
            for i in range(shown)
        ]
        return f"{query}, {len(hits)} hits: " + "; ".join(parts)

    least = min(SEARCH_HITS, len(hits))
    best = line(least, 0)
    titled = 0
    while titled < least and count_tokens(line(least, titled + 1)) <= budget:
        titled += 1
        best = line(least, titled)
    shown = least
    while titled == least and shown < len(hits):
        more = line(shown + 1, titled) if count_tokens(line(shown + 1, titled)) <= budget else ""
        if not more:
            break
        shown += 1
        best = more
    return best


def search_floor(data: Any) -> int:
    """Tokens a search's claim needs at least: its query and the first hits' URLs."""
    if not isinstance(data, dict):
        return 0
    hits = [h for h in data.get("hits") or [] if isinstance(h, dict)][:SEARCH_HITS]
    query = json.dumps(str(data.get("query", "")), ensure_ascii=False)
    return count_tokens(f"{query}, 10 hits: " + "; ".join(_hit_url(h) for h in hits))


def _hit_url(hit: dict[str, Any]) -> str:
    """A hit's URL: some search APIs call it `link`."""
    return str(hit.get("url") or hit.get("link") or "").strip()


def _links(hrefs: Iterable[str], base: str) -> list[str]:
    """The pages a page links to, as absolute URLs without fragments, each once, in
    order: the URLs a next call would fetch."""
    found: dict[str, None] = {}
    for href in hrefs:
        url = urljoin(base, href.strip()) if base else href
        url = url.split("#", 1)[0]
        if url.startswith(("http://", "https://")) and url != base:
            found.setdefault(url)
    return list(found)


def _field(path: str) -> str:
    """The name a JSON leaf goes by: its key, with its parent's where the key alone
    says little (`prices.economy` rather than `economy`)."""
    steps = [re.sub(r"\[\d+\]", "", s) for s in path.split(".") if s]
    steps = [s for s in steps if s]
    if not steps:
        return "value"
    name = steps[-1]
    if len(steps) > 1 and not _KEY_FIELDS.search(name) and not _ID_VALUE.fullmatch(steps[-2]):
        return f"{steps[-2]}.{name}"
    return name


def _priority(name: str, value: Any) -> int:
    """0: ids and codes (what later calls pass back); 1: other key fields (dates,
    amounts, statuses, names); 2: the rest."""
    leaf = name.rsplit(".", 1)[-1]
    if _ID_FIELD.search(leaf):
        return 0
    if isinstance(value, str) and (_ID_VALUE.fullmatch(value) or _DATE.fullmatch(value)):
        return 0
    if _KEY_FIELDS.search(leaf):
        return 1
    return 2


DEFAULT_BUDGET = 120  # tokens a whole stub may take, at most
MIN_BUDGET = 32  # tokens: a stub's id, kind and size take about 20 of them
# Besides its essential values, a gist takes this share of the result, and never less
# than GIST_FLOOR tokens (a JSON document: none), within the budget: a round trip costs a
# whole request, so a gist that spares one pays for many turns of its own tokens.
STUB_SHARE = 0.2


def stub_budget(tokens: int, cap: int = DEFAULT_BUDGET) -> int:
    """How many tokens the gist of a result of `tokens` tokens may take when a
    summariser other than the default one writes it: a share of what it replaces, so
    that a small result gets a small stub, within `cap`."""
    return max(1, min(cap, max(GIST_FLOOR, round(tokens * STUB_SHARE))))


class Summarizer(Protocol):
    """Gives the gist (of a Reference) or the claim (of a Claim) of a result, in about
    `budget` tokens: a callable, so that an LLM can be plugged in."""

    def __call__(self, record: Record, payload: bytes, budget: int) -> str: ...


def check_summarizer(summarizer: object, where: str) -> None:
    """`ArgumentError` unless `summarizer` is None or a callable that takes a record,
    its payload and a budget: said at once, not as a TypeError from the first stub."""
    if summarizer is None:
        return
    if not callable(summarizer):
        raise ArgumentError(
            f"{where}: summarizer must be a callable (record, payload, budget) -> str, "
            f"not {type(summarizer).__name__}"
        )
    try:
        signature = inspect.signature(summarizer)
    except (TypeError, ValueError):  # a builtin may have none to read: taken as it is
        return
    try:
        signature.bind(None, b"", 0)
    except TypeError:
        raise ArgumentError(
            f"{where}: summarizer must take (record, payload, budget); it takes {signature}"
        ) from None


class DefaultSummarizer:
    """The summariser used when none is given; see the module docstring.

    It scales what it keeps with the result: the room its essential values need (a
    JSON document's ids, codes and dates; the names of what failed; a page's title; a
    search's query and first hits), and for the rest a share of the result's tokens
    (`tokens`, what the model was shown; by default the payload's count), at least
    `GIST_FLOOR`; all within the `budget` it is given. `known` is text the conversation
    already shows: values in it are not repeated."""

    def __init__(self, known: str = "", tokens: int | None = None) -> None:
        self.known = known
        self.tokens = tokens
        self.floor = 0  # tokens the last gist keeps whatever its budget (a search's)

    def __call__(self, record: Record, payload: bytes, budget: int) -> str:
        text = decode_text(payload, record.media_type)
        size = self.tokens if self.tokens is not None else count_tokens(text)
        data = _json(text)
        page = _looks_like_html(record.media_type, text)
        share = round(size * STUB_SHARE)
        ok = record.status is not Status.ERROR
        # A search: its adapter reports the query it ran, or the result says so itself.
        hits = isinstance(data, dict) and "hits" in data
        if ok and hits and (Report.QUERY in record.meta or "query" in data):
            # Its query and first URLs, and a share of the result for titles and more hits.
            # Its query and first URLs, whatever the budget (see `search_floor`).
            self.floor = search_floor(data)
            return search_gist(data, max(self.floor, min(budget, self.floor + share)))
        # A document's ids are what its stub carries: the rest gets no floor of room.
        spare = max(0 if ok and _is_document(data) else GIST_FLOOR, share)
        known = Known(self.known)
        if not ok:
            essential, rest = error_parts(record, text, known)
        elif page:
            essential, rest = page_parts(text, _url_of(record), spare, known)
        elif _is_document(data):
            essential, rest = json_parts(data, known)
        else:
            essential, rest = output_parts(record, text, size, known)
        room = sum(part_tokens(part) for part in essential) + spare
        return fit([*essential, *rest], min(budget, room))


def _is_document(data: Any) -> bool:
    return data is not None and not isinstance(data, str | int | float | bool)


def _url_of(record: Record) -> str:
    url = record.args.get("url")
    return url if isinstance(url, str) else ""


def _json(text: str) -> Any:
    stripped = _unwrapped(text.strip())
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except RecursionError:
        return None  # nested past what can be read: summarised as text
    except ValueError:
        return _python_literal(stripped)


_LABEL = 100  # characters of a label before a JSON document ("Result: ", a fence)


def _unwrapped(text: str) -> str:
    """A JSON document that a tool wrapped in a short label or a Markdown fence
    (``Result: {...}``, a ```` ```json ```` block) without them; `text` otherwise."""
    if not text or text[0] in "[{":
        return text
    starts = [at for at in (text.find("{", 0, _LABEL), text.find("[", 0, _LABEL)) if at > 0]
    if not starts:
        return text
    label, body = text[: min(starts)], text[min(starts) :]
    if label.rstrip().endswith(("```", "```json")) and body.endswith("```"):
        body = body[:-3].rstrip()
    return body if body[-1] in "]}" else text


def _python_literal(text: str) -> Any:
    # Some harnesses print Python reprs of dicts (single quotes, True/None).
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _looks_like_html(media_type: str, text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return "html" in media_type.lower() or head.startswith(("<!doctype html", "<html"))
