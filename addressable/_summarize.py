"""The default summariser: what a stub keeps of a result, without a model.

Agents reuse what they first saw inside a result (a path from a grep, a reservation id
from a lookup, a URL from a search), so a stub keeps those: identifiers first, then as
much of the rest as the token budget allows.

- search: the number of hits and their titles and URLs; no hits is a negative finding
- a page: its title and its first meaningful sentence
- command output: the exit code, the paths and identifiers it names, its last line
- JSON (API responses, tool calls): the identifying fields of the resources it holds
"""

from __future__ import annotations

import bisect
import html
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from ._models import Record, Status
from ._payload import decode_text
from ._tokens import count_tokens

DEFAULT_BUDGET = 60  # tokens a whole stub may take


class Summarizer(Protocol):
    """Gives the gist (of a Reference) or the claim (of a Claim) of a result, in about
    `budget` tokens: a callable, so that an LLM can be plugged in."""

    def __call__(self, record: Record, payload: bytes, budget: int) -> str: ...


_URL = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_PATH = re.compile(
    r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.@+-]+/)+[\w.@+-]+(?::\d+)?|"
    r"(?<![\w/.-])[\w-]+\.(?:py|pyi|js|ts|tsx|jsx|rs|go|java|kt|c|h|cc|cpp|hpp|"
    r"rb|php|md|rst|txt|json|ya?ml|toml|cfg|ini|html?|css|sql|sh|lock|xml|csv)"
    r"(?::\d+)?\b"
)
# Words that look made up: snake_case, CamelCase, dotted names, or letters and digits mixed
# (booking codes, flight numbers, hashes).
_IDENT = re.compile(
    r"\b(?:[A-Za-z_][A-Za-z0-9]*_[A-Za-z0-9_]+|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|"
    r"[a-z]+[A-Z][A-Za-z0-9]*|(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])"
    r"[A-Za-z0-9]{5,}|[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*){1,})\b"
)
# A value that names one thing: letters and digits together (booking codes, user ids).
_ID_VALUE = re.compile(r"(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[\w.-]{5,}")
_KEY_FIELDS = re.compile(
    r"(^|_)(id|ids|code|number|no|name|title|email|status|state|amount|"
    r"price|total|balance|date|time|url|path|type|origin|destination|"
    r"flight|reservation|order|invoice|user|account|sku|key)$",
    re.I,
)
_TAG = re.compile(r"<[^>]+>")
_BLOCK = re.compile(
    r"</?(?:p|div|h[1-6]|li|br|tr|td|th|dt|dd|pre|section|article|header|"
    r"footer|table|ul|ol|blockquote)\b[^>]*>",
    re.I,
)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_SKIPPED = re.compile(r"<(script|style|head|nav|noscript)\b.*?</\1>", re.I | re.S)
_SENTENCE = re.compile(r"[^.!?\n]{20,}?[.!?](?=\s|$)")


class DefaultSummarizer:
    """The summariser used when none is given; see the module docstring."""

    def __call__(self, record: Record, payload: bytes, budget: int) -> str:
        text = decode_text(payload, record.media_type)
        if record.status is Status.ERROR:
            first = (record.error or text).strip().splitlines()
            return fit([f"error: {first[0] if first else 'failed'}"], budget)
        data = _json(text)
        if record.tool == "search" and isinstance(data, dict) and "hits" in data:
            return _search(data, budget)
        if _looks_like_html(record.media_type, text):
            return _page(text, budget)
        if data is not None and not isinstance(data, str | int | float | bool):
            return _json_gist(data, budget)
        return _output(record, text, budget)


def fit(parts: Iterable[str], budget: int, sep: str = "; ") -> str:
    """Join `parts`, in order, within `budget` tokens: a part that does not fit is
    shortened (a list "a,b,c" loses its last items) or left out, and later, smaller
    parts still get their chance."""
    kept: list[str] = []
    used = 0
    for part in parts:
        part = part.strip()
        if not part:
            continue
        cost = count_tokens(part + sep)
        while used + cost > budget and "," in part:
            part = part.rsplit(",", 1)[0]
            cost = count_tokens(part + sep)
        if used + cost > budget:
            if not kept and used == 0:  # not even one part fits: take the start of it
                kept.append(_truncate(part, budget))
                used = budget
            continue
        kept.append(part)
        used += cost
    return sep.join(kept)


def _truncate(text: str, budget: int) -> str:
    words = text.split()
    while words and count_tokens(" ".join(words) + "…") > budget:
        words = words[: max(1, len(words) * 3 // 4)] if len(words) > 4 else words[:-1]
    return " ".join(words) + "…" if words else ""


def _search(data: dict[str, Any], budget: int) -> str:
    hits = data.get("hits") or []
    if not hits:
        return f"no hits for {data.get('query', '')!r} ({data.get('backend', '?')}): none found"
    # URLs first: a later step fetches them; titles only where room is left.
    parts = [f"{len(hits)} hits", *(str(h.get("url", "")) for h in hits)]
    parts += [str(h.get("title", "")).strip() for h in hits]
    return fit(parts, budget)


def _page(text: str, budget: int) -> str:
    match = _TITLE.search(text)
    title = " ".join(html.unescape(_TAG.sub("", match[1])).split()) if match else ""
    blocks = _BLOCK.sub("\n", _SKIPPED.sub(" ", text))
    lines = (" ".join(line.split()) for line in html.unescape(_TAG.sub(" ", blocks)).splitlines())
    body = "\n".join(line for line in lines if line)
    sentence = next(
        (s.strip() for s in _SENTENCE.findall(body) if s.strip() != title and len(s.split()) >= 4),
        body[:200],
    )
    # Title and first sentence as one part: cut short rather than left out.
    head = f'"{title}": {sentence}' if title else sentence
    return fit([head, *list(_identifiers(body))[:20]], budget)


_WRAPPER = re.compile(r"^\s*</?[A-Za-z_][\w-]*>\s*$")  # a line that is only a tag
_RETURN_CODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>|^\[exit (-?\d+)\]$", re.M)


def _output(record: Record, text: str, budget: int) -> str:
    exit_code = record.meta.get("exit_code")
    if not isinstance(exit_code, int) and (m := _RETURN_CODE.search(text)):
        exit_code = int(m[1] or m[2])
    body = _RETURN_CODE.sub("", text)
    lines = [
        line.strip() for line in body.splitlines() if line.strip() and not _WRAPPER.match(line)
    ]
    head = [f"exit {exit_code}"] if isinstance(exit_code, int) else []
    if not lines:
        return fit([*head, "no output"], budget)
    tail = f"last: {lines[-1][:120]}"
    # How it ended and the identifiers it names (what a next step reuses) come first;
    # the last line fills what room is left.
    found = list(_identifiers(body))
    fixed = count_tokens("; ".join([*head, "", tail]))
    middle = fit(found, budget - fixed, sep=", ") if budget - fixed > 4 else ""
    if not middle:
        return fit([*head, *found, tail], budget)
    return (
        "; ".join([*head, middle, tail])
        if count_tokens("; ".join([*head, middle, tail])) <= budget
        else fit([*head, middle], budget)
    )


def _json_gist(data: Any, budget: int) -> str:
    groups: dict[str, list[str]] = {}
    rank: dict[str, int] = {}
    for path, value in _leaves(data):
        if value in ("", None) or isinstance(value, bool):
            continue
        name = re.sub(r"\[\d+\]", "", path.rsplit(".", 1)[-1])
        shown = _scalar(value)
        values = groups.setdefault(name, [])
        if shown not in values:
            values.append(shown)
        rank[name] = min(rank.get(name, 3), _priority(name, value))
    parts = [
        f"{name}={','.join(values[:8])}"
        for name, values in sorted(groups.items(), key=lambda item: rank[item[0]])
    ]
    if isinstance(data, list):
        parts.insert(0, f"{len(data)} items")
    return fit(parts, budget, sep="; ")


def _priority(name: str, value: Any) -> int:
    """0: ids and codes (what later calls pass back); 1: other key fields (dates,
    amounts, statuses, names); 2: the rest."""
    if re.search(r"(^|_)(id|ids|code|number|no|key|sku)$", name, re.I):
        return 0
    if isinstance(value, str) and _ID_VALUE.fullmatch(value):
        return 0
    if _KEY_FIELDS.search(name):
        return 1
    return 2


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _identifiers(text: str, by_count: bool = False) -> Iterator[str]:
    """URLs, paths and made-up words, each once: in order of first appearance, or with
    `by_count` the most repeated first. A word inside a URL or a path is not repeated."""
    spans: list[tuple[int, int]] = []
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for pattern in (_URL, _PATH):
        for match in pattern.finditer(text):
            if any(s <= match.start() < e for s, e in spans):
                continue
            spans.append((match.start(), match.end()))
            _tally(match[0].rstrip(".,;:"), match.start(), first, count)
    spans.sort()
    starts = [s for s, _ in spans]
    for match in _IDENT.finditer(text):
        at = bisect.bisect_right(starts, match.start()) - 1
        if at >= 0 and match.start() < spans[at][1]:
            continue  # part of a URL or a path already taken whole
        _tally(match[0].rstrip(".,;:"), match.start(), first, count)

    def rank(value: str) -> tuple[int, int]:
        return (-count[value] if by_count else 0, first[value])

    yield from sorted(first, key=rank)


def _tally(value: str, at: int, first: dict[str, int], count: dict[str, int]) -> None:
    if len(value) < 4:
        return
    first.setdefault(value, at)
    count[value] = count.get(value, 0) + 1


def _scalar(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return _python_literal(stripped)


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
