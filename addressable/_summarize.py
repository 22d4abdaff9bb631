"""The default summariser: what a stub keeps of a result, without a model.

Agents reuse what they first saw inside a result (a path from a grep, a reservation id
from a lookup, a URL from a search), so a stub keeps those. It pays for itself: it takes
the room its essential values need, and for the rest a small share of the result it
replaces (`STUB_SHARE`, `PAGE_SHARE`, at least `GIST_FLOOR` tokens), within the budget.
A gist is made of whole parts (a sentence, a value, a line): a part that does not fit is
left out, never cut, so that no gist ends in a broken fragment.

- search: the query, then the URL (and the title, where there is room) of the hits in
  rank order, at least the first three; no hits is a negative finding
- a page: its title and its first sentence, then the pages it links to and its names
- command output: how it ended when that says something (a non-zero exit code, a last
  line with an error or a test summary), the names of what failed, the paths it lists;
  then its other names, CamelCase and dunders first, then paths and dotted names, the
  most used first
- JSON (API responses, tool calls): the ids, codes and dates of the resources it holds;
  then names, amounts and statuses where there is room

Values the conversation already shows (`known`: the task, the agent's own words, the
calls' arguments, the results kept whole, the stubs before) are not repeated: the room
goes to what would otherwise be lost.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urljoin

from ._html import read_html
from ._models import Record, Status
from ._payload import decode_text
from ._reports import Report
from ._tokens import count_tokens

DEFAULT_BUDGET = 120  # tokens a whole stub may take, at most
STUB_SHARE = 0.02  # besides its essential values, a gist takes this share of the result...
PAGE_SHARE = 0.01  # ...of a page (pages are long, and their links are many)...
GIST_FLOOR = 12  # ...and never less than this many tokens (a JSON document: none)
SEARCH_HITS = 3  # hits of a search whose URL a stub always keeps
NAMED = 8  # names of what failed (tests, errors) an output's stub always keeps


def stub_budget(tokens: int, cap: int = DEFAULT_BUDGET) -> int:
    """How many tokens the gist of a result of `tokens` tokens may take when a
    summariser other than the default one writes it: a share of what it replaces, so
    that a small result gets a small stub, within `cap`."""
    return max(1, min(cap, max(GIST_FLOOR, round(tokens * STUB_SHARE))))


class Summarizer(Protocol):
    """Gives the gist (of a Reference) or the claim (of a Claim) of a result, in about
    `budget` tokens: a callable, so that an LLM can be plugged in."""

    def __call__(self, record: Record, payload: bytes, budget: int) -> str: ...


@dataclass(frozen=True)
class Items:
    """A part that is a list: `head` then values joined by `sep`. When it does not fit,
    it loses values from its end (never fewer than `least`) rather than being cut."""

    head: str
    values: Sequence[str]
    sep: str = ","
    least: int = 1

    def text(self, n: int | None = None) -> str:
        return self.head + self.sep.join(self.values[: len(self.values) if n is None else n])


Part = str | Items


def _cost(part: Part) -> int:
    return count_tokens((part.text() if isinstance(part, Items) else part) + "; ")


_URL = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_PATH = re.compile(
    r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.@+-]+/)+[\w.@+-]+(?::\d+)?|"
    r"(?<![\w/.-])[\w-]+\.(?:py|pyi|js|ts|tsx|jsx|rs|go|java|kt|c|h|cc|cpp|hpp|"
    r"rb|php|md|rst|txt|json|ya?ml|toml|cfg|ini|html?|css|sql|sh|lock|xml|csv)"
    r"(?::\d+)?\b"
)
# Words that look made up: snake_case, CamelCase, dotted names, dunders, or letters and
# digits mixed (booking codes, flight numbers, hashes), dates.
_IDENT = re.compile(
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
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\[(?:\d+;)*\d+m")  # colours, also with their ESC lost
_NOT_A_NAME = re.compile(r"_+|0x[0-9a-fA-F]+|[0-9a-f]{7,}")  # rules, addresses, hashes
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
# A sentence: from the start of a line or after a stop, up to a stop that ends it (not
# the one of "e.g." or "etc.").
_SENTENCE = re.compile(
    r"(?:(?<![^\n])|(?<=[.!?] ))[A-Z][^\n]{15,}?"
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\b[A-Z])[.!?](?=\s|$)"
)
# The last line of an output is kept when it says how the command ended.
_ENDING = re.compile(
    r"error|exception|traceback|fail|passed|\bok\b|warning|denied|not found|no such|"
    r"invalid|refused|timed? ?out|killed|abort|success|done|finished|\d+ (?:tests?|items?)",
    re.I,
)
MAX_VALUE = 48  # characters: a longer value is prose, not something a call passes back


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

    def __call__(self, record: Record, payload: bytes, budget: int) -> str:
        text = decode_text(payload, record.media_type)
        size = self.tokens if self.tokens is not None else count_tokens(text)
        data = _json(text)
        page = _looks_like_html(record.media_type, text)
        share = round(size * (PAGE_SHARE if page else STUB_SHARE))
        ok = record.status is not Status.ERROR
        # A search: its adapter reports the query it ran, or the result says so itself.
        hits = isinstance(data, dict) and "hits" in data
        if ok and hits and (Report.QUERY in record.meta or "query" in data):
            # Its query and first URLs, and a share of the result for titles and more hits.
            return _search(data, min(budget, search_floor(data) + share))
        # A document's ids are what its stub carries: the rest gets no floor of room.
        spare = max(0 if ok and _is_document(data) else GIST_FLOOR, share)
        if not ok:
            essential, rest = self._error(record, text)
        elif page:
            essential, rest = self._page(text, _url_of(record), spare)
        elif _is_document(data):
            essential, rest = self._json(data)
        else:
            essential, rest = self._output(record, text, size)
        room = sum(_cost(part) for part in essential) + spare
        return fit([*essential, *rest], min(budget, room))

    # -- the kinds ---------------------------------------------------------------------

    def _error(self, record: Record, text: str) -> tuple[list[Part], list[Part]]:
        lines = [line.strip() for line in (record.error or text).strip().splitlines()]
        first = next((line for line in lines if line), "failed")
        if not first.lower().startswith("error"):
            first = f"error: {first}"
        names = self._names(text, limit=24)
        return [first], [Items("", names, " ")] if names else []

    def _page(self, text: str, base: str, spare: int) -> tuple[list[Part], list[Part]]:
        page = read_html(text)
        title = page.title
        # One line for each block, its whitespace (tabs, no-break spaces) collapsed.
        lines = (" ".join(line.split()) for line in page.text.splitlines())
        body = "\n".join(line for line in lines if line)
        sentence = next(
            (
                s.strip()
                for s in _SENTENCE.findall(body)
                if s.strip() != title and len(s.split()) >= 4
            ),
            "",
        )
        # The title and the first sentence together, or the title alone when the
        # sentence would take more than half the room left for the rest.
        head = f'"{title}"' if title else ""
        if sentence and count_tokens(f"{head}: {sentence}") - _cost(head) <= spare // 2:
            head = f"{head}: {sentence}" if head else sentence
        links = [u for u in _links(page.links, base) if self._new(u)]
        names = [n for n in self._names(body, limit=24) if not n.startswith("file:")]
        rest: list[Part] = []
        if links:
            rest.append(Items("links: ", links[:12], " "))
        if names:
            rest.append(Items("", names, " "))
        return [head] if head else [], rest

    def _json(self, data: Any) -> tuple[list[Part], list[Part]]:
        groups: dict[str, list[str]] = {}
        rank: dict[str, int] = {}
        for path, value in _leaves(data):
            if value in ("", None) or isinstance(value, bool):
                continue
            name = _field(path)
            shown = value if isinstance(value, str) else json.dumps(value)
            if len(shown) > MAX_VALUE or "\n" in shown:
                continue
            values = groups.setdefault(name, [])
            if shown not in values:
                values.append(shown)
            rank[name] = min(rank.get(name, 3), _priority(name, value))
        essential: list[Part] = [f"{len(data)} items"] if isinstance(data, list) else []
        rest: list[Part] = []
        for name, values in sorted(groups.items(), key=lambda item: rank[item[0]]):
            fresh = [v for v in values if not (len(v) >= 6 and v in self.known)]
            if not fresh or (rank[name] == 2 and len(fresh) < len(values)):
                continue
            (essential if rank[name] == 0 else rest).append(Items(f"{name}=", fresh))
        return essential, rest

    def _output(self, record: Record, text: str, size: int) -> tuple[list[Part], list[Part]]:
        exit_code = record.meta.get("exit_code")
        if not isinstance(exit_code, int) and (m := _RETURN_CODE.search(text)):
            exit_code = int(m[1] or m[2])
        body = _ANSI.sub("", _RETURN_CODE.sub("", text))
        lines = [
            line.strip() for line in body.splitlines() if line.strip() and not _WRAPPER.match(line)
        ]
        head: list[Part] = [f"exit {exit_code}"] if isinstance(exit_code, int) else []
        if not lines:
            return [*head, "no output"], []
        last = _RULE.sub(" ", lines[-1]).strip()
        names = self._names(body)
        if len(lines) == 1 and len(last) <= 160:
            rest = [n for n in names if n not in last]
            return [*(head if exit_code else []), last], [Items("", rest, " ")] if rest else []
        ending = len(last) <= 160 and (bool(_ENDING.search(last)) or exit_code not in (None, 0))
        essential: list[Part] = [*head, *([f"last: {last}"] if ending else [])]
        # The names of what failed (tests, errors) are what a next step acts on.
        failing = [n for n in self._failing(body) if n not in last][:NAMED]
        # An output that lists paths (find, ls, grep -n, a compiler's errors), a path at
        # the start of each line: its paths are its values.
        leading = [m[0] for m in map(_PATH.match, lines) if m]
        listed = list(dict.fromkeys(p for p in leading if self._new(p)))
        if len(leading) * 2 >= len(lines):
            room = max(GIST_FLOOR, size // 3)  # a third of the list at most
            for path in listed:
                room -= count_tokens(f" {path}")
                if room < 0:
                    break
                if path not in failing:
                    failing.append(path)
        if failing:
            essential.append(Items("", failing, " "))
        rest = [n for n in names if n not in failing and not (ending and n in last)]
        if exit_code == 0 and (len(essential) > 1 or rest):
            essential = essential[1:]  # "exit 0": success goes without saying
        return essential, [Items("", rest, " ")] if rest else []

    # -- helpers -----------------------------------------------------------------------

    def _new(self, value: str) -> bool:
        return value not in self.known

    def _names(self, text: str, limit: int = 200) -> list[str]:
        """Identifiers in `text` the conversation does not show yet, most telling
        first: dunders and CamelCase names (classes, exceptions), then paths and dotted
        names, then the rest; in each group the most used first. A name that another
        one holds whole (a file in its path) is left to that one."""
        found = [n for n in _identifiers(text, by_count=True) if self._new(n)][: limit * 2]
        whole = [n for n in found if not any(n != other and n in other for other in found)]
        return sorted(whole, key=_telling)[:limit]

    def _failing(self, text: str) -> list[str]:
        """The names on lines that say what failed: a failing test, an error."""
        names: list[str] = []
        for match in _FAILING.finditer(text):
            for name in _identifiers(match[0]):
                if name not in names and self._new(name):
                    names.append(name)
        return names


def _telling(name: str) -> int:
    if _DUNDER.fullmatch(name) or _CAMEL.fullmatch(name):
        return 0
    if "/" in name or "." in name:
        return 1
    if "_" in name or not name.isalnum():
        return 2
    return 3  # letters and digits mixed: in an output, more often a hash or a version


_WRAPPER = re.compile(r"^\s*</?[A-Za-z_][\w-]*>\s*$")  # a line that is only a tag
_RETURN_CODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>|^\[exit (-?\d+)\]$", re.M)


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


def _search(data: dict[str, Any], budget: int) -> str:
    """The query, then the hits in rank order: the first `SEARCH_HITS` URLs always,
    their titles where there is room (best hit first), then more hits while room is
    left. No hits is a negative finding: it says so."""
    query = json.dumps(str(data.get("query", "")), ensure_ascii=False)
    hits = [h for h in data.get("hits") or [] if isinstance(h, dict)]
    if not hits:
        return f"no hits for {query} ({data.get('backend', '?')})"
    urls = [str(h.get("url", "")).strip() for h in hits]
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
    return count_tokens(f"{query}, 10 hits: " + "; ".join(str(h.get("url", "")) for h in hits))


def _is_document(data: Any) -> bool:
    return data is not None and not isinstance(data, str | int | float | bool)


def _url_of(record: Record) -> str:
    url = record.args.get("url")
    return url if isinstance(url, str) else ""


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
    if len(value) < 4 or len(value) > 120 or _NOT_A_NAME.fullmatch(value):
        return
    first.setdefault(value, at)
    count[value] = count.get(value, 0) + 1


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
