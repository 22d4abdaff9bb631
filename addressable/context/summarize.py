"""The default summariser: what a stub keeps of a result, without a model.

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

import inspect
import json
from typing import Any, Protocol

from ..core.errors import ArgumentError
from ..core.payload import decode_text
from ..core.records import Record, Report, Status
from ..core.tokens import count_tokens
from .gistparts import GIST_FLOOR, fit, part_tokens
from .gists import error_parts, json_parts, output_parts, page_parts, search_floor, search_gist
from .identifiers import Known

DEFAULT_BUDGET = 120  # tokens a whole stub may take, at most
MIN_BUDGET = 32  # tokens: a stub's id, kind and size take about 20 of them
# Besides its essential values, a gist takes this share of the result, and never less
# than GIST_FLOOR tokens (a JSON document: none): more costs more on every later turn
# than it saves in round trips.
STUB_SHARE = 0.01


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
