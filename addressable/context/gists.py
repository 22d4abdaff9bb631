"""What the gist of each kind of result is made of: an error, a page, a JSON document, a
command's output, a search's hits (the kinds are described in `context.summarize`).

Each kind gives its essential parts (the room they need is always given) and the rest
(kept where there is room); a search gives its whole gist, its hits in rank order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urljoin

from ..core.html import read_html
from ..core.records import Record, Report
from ..core.tokens import count_tokens
from .gistparts import GIST_FLOOR, Items, Part, part_tokens, plain
from .identifiers import PATH, Known

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
    page = read_html(text)
    title = page.title
    # One line for each block, its whitespace (tabs, no-break spaces) collapsed.
    lines = (" ".join(line.split()) for line in page.text.splitlines())
    body = "\n".join(line for line in lines if line)
    sentence = next(
        (s.strip() for s in _SENTENCE.findall(body) if s.strip() != title and len(s.split()) >= 4),
        "",
    )
    # The title and the first sentence together, or the title alone when the
    # sentence would take more than half the room left for the rest.
    head = f'"{title}"' if title else ""
    if sentence and count_tokens(f"{head}: {sentence}") - part_tokens(head) <= spare // 2:
        head = f"{head}: {sentence}" if head else sentence
    links = [u for u in _links(page.links, base) if known.new(u)]
    names = [n for n in known.names(body, limit=24) if not n.startswith("file:")]
    rest: list[Part] = []
    if links:
        rest.append(Items("links: ", links[:12], " "))
    if names:
        rest.append(Items("", names, " "))
    return [head] if head else [], rest


def json_parts(data: Any, known: Known) -> tuple[list[Part], list[Part]]:
    """A JSON document: the ids, codes and dates it holds, then its other key fields."""
    groups: dict[str, dict[str, None]] = {}  # each field's values, once each, in order
    rank: dict[str, int] = {}
    for path, value in _leaves(data):
        if value in ("", None) or isinstance(value, bool):
            continue
        name = _field(path)
        # A Python literal's values may be no JSON (bytes, a set): shown as Python does.
        shown = value if isinstance(value, str) else json.dumps(value, default=repr)
        if len(shown) > MAX_VALUE or "\n" in shown:
            continue
        groups.setdefault(name, {})[shown] = None
        rank[name] = min(rank.get(name, 3), _priority(name, value))
    essential: list[Part] = [f"{len(data)} items"] if isinstance(data, list) else []
    rest: list[Part] = []
    for name, values in sorted(groups.items(), key=lambda item: rank[item[0]]):
        fresh = [v for v in values if len(v) < 6 or known.new(v)]
        if not fresh or (rank[name] == 2 and len(fresh) < len(values)):
            continue
        (essential if rank[name] == 0 else rest).append(Items(f"{name}=", fresh))
    return essential, rest


def output_parts(
    record: Record, text: str, size: int, known: Known
) -> tuple[list[Part], list[Part]]:
    """A command's output: how it ended, what failed, the paths it lists; then its
    other names."""
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
        room = max(GIST_FLOOR, size // 3)  # a third of the list at most
        for path in listed:
            room -= count_tokens(f" {path}")
            if room < 0:
                break
            if path not in named:
                failing.append(path)
                named.add(path)
    if failing:
        essential.append(Items("", failing, " "))
    rest = [n for n in names if n not in named and not (ending and n in last)]
    if exit_code == 0 and (len(essential) > 1 or rest):
        essential = essential[1:]  # "exit 0": success goes without saying
    return essential, [Items("", rest, " ")] if rest else []


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


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value
