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
_KEY_FIELDS = re.compile(
    r"(^|_)(id|ids|code|number|no|name|title|email|status|state|amount|"
    r"price|total|balance|date|time|url|path|type|origin|destination|"
    r"flight|reservation|order|invoice|user|account|sku|key)$",
    re.I,
)
_TAG = re.compile(r"<[^>]+>")
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
    """Join `parts` in order for as long as they fit in `budget` tokens."""
    kept: list[str] = []
    used = 0
    for part in parts:
        part = part.strip()
        if not part:
            continue
        cost = count_tokens(part + sep)
        if used + cost > budget:
            if not kept:  # not even one part fits: take the start of it
                kept.append(_truncate(part, budget))
            break
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
    parts = [f"{len(hits)} hits"]
    parts += [f"{h.get('title', '').strip()} <{h.get('url', '')}>" for h in hits]
    return fit(parts, budget)


def _page(text: str, budget: int) -> str:
    match = _TITLE.search(text)
    title = " ".join(html.unescape(_TAG.sub("", match[1])).split()) if match else ""
    body = " ".join(html.unescape(_TAG.sub(" ", _SKIPPED.sub(" ", text))).split())
    sentence = next(
        (s.strip() for s in _SENTENCE.findall(body) if s.strip() != title and len(s.split()) >= 4),
        body[:200],
    )
    parts = [f'"{title}"' if title else "", sentence]
    parts += list(_identifiers(body))[:20]
    return fit(parts, budget)


def _output(record: Record, text: str, budget: int) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    exit_code = record.meta.get("exit_code")
    parts: list[str] = []
    if isinstance(exit_code, int):
        parts.append(f"exit {exit_code}")
    elif lines and (m := re.fullmatch(r"\[exit (-?\d+)\]", lines[-1].strip())):
        parts.append(f"exit {m[1]}")
        lines = lines[:-1]
    found = list(_identifiers(text))
    tail = f"last: {lines[-1].strip()[:160]}" if lines else "no output"
    # The last line says how it ended; the identifiers are what a next step reuses.
    fixed = fit([*parts, tail], budget)
    rest = budget - count_tokens(fixed) - 2
    middle = fit(found, rest, sep=", ") if rest > 4 else ""
    return "; ".join(p for p in (*parts, middle, tail) if p) if middle else fixed


def _json_gist(data: Any, budget: int) -> str:
    pairs: list[str] = []
    for path, value in _leaves(data):
        name = path.rsplit(".", 1)[-1].rstrip("]").split("[")[0]
        if _KEY_FIELDS.search(name) and value not in ("", None):
            pairs.append(f"{name}={_scalar(value)}")
    if not pairs:  # no field looks identifying: fall back to the strings it holds
        pairs = [_scalar(v) for _, v in _leaves(data) if isinstance(v, str)]
    if isinstance(data, list):
        pairs.insert(0, f"{len(data)} items")
    return fit(_unique(pairs), budget, sep=", ")


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _identifiers(text: str) -> Iterator[str]:
    """URLs, paths and made-up words, in order of first appearance, each once."""
    seen: set[str] = set()
    found: list[tuple[int, str]] = []
    for pattern in (_URL, _PATH, _IDENT):
        for match in pattern.finditer(text):
            value = match[0].rstrip(".,;:")
            if len(value) >= 4 and not any(value in s for s in seen if len(s) > len(value)):
                found.append((match.start(), value))
                seen.add(value)
    kept: set[str] = set()
    for _, value in sorted(found):
        if value not in kept:
            kept.add(value)
            yield value


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


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
