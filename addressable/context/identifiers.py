"""The names a stub keeps of a text: URLs, paths and made-up words (snake_case,
CamelCase, dotted names, dunders, codes, dates), and of those the ones the conversation
does not show yet (`Known`). Not the ids of records: those are `ids`.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

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
        found = [n for n in identifiers(text, by_count=True) if self.new(n)][: limit * 2]
        whole = [n for n in found if not any(n != other and _holds(other, n) for other in found)]
        return sorted(whole, key=_telling)[:limit]

    def failing(self, text: str) -> list[str]:
        """The names on lines that say what failed: a failing test, an error."""
        names: list[str] = []
        for match in _FAILING.finditer(text):
            for name in identifiers(match[0]):
                if name not in names and self.new(name):
                    names.append(name)
        return names


def _holds(other: str, name: str) -> bool:
    """Whether `other` holds `name` whole (`src/a.py` holds `a.py`; `usr_123` does not
    hold `usr_12`)."""
    return _shows_whole(other, name, _word_char)


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
