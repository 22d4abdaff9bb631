"""Remote search backends over HTTP: SearXNG's JSON API and Brave Search's web API.

Each takes a sync `client=` and an `async_client=` (httpx or httpx2). `search` uses the
sync one, `asearch` (which `Search` awaits from `kit.ahandle`) the async one; with only
a sync client given, `asearch` uses that one, in a thread, never a client of its own that
would bypass its transport, proxy or mock.

An answer is read as Fetch and Api read theirs (`_http.Exchange`): within `deadline`
seconds for the whole call, decoded a bounded step at a time, and not past
`MAX_ANSWER` bytes.

A failure names the URL asked with its credentials redacted (`_urls.redact_url`): a
SearXNG URL may carry a password or a key, and the text of an error is shown to the
model and kept in the record.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import addressable as ad

from .._clients import HTTP_ERRORS, AsyncClient, Clients, SyncClient
from .._http import DEFAULT_DEADLINE, BadAnswer, Exchange, check_deadline
from .._urls import check_url, redact_urls, shown_url
from .hits import Hit

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
MAX_ANSWER = 5 * 1024 * 1024  # bytes of a backend's answer read, at most
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+")


class _Remote:
    """A remote backend: its clients given, else made only when needed (`Clients`)."""

    name: str

    def __init__(
        self,
        client: SyncClient | None,
        async_client: AsyncClient | None,
        timeout: float,
        deadline: float,
        secrets: ad.Secrets,
    ) -> None:
        self.deadline = check_deadline(deadline)
        self._clients = Clients(client, async_client, timeout)
        self._secrets = secrets

    def _request(self, client: SyncClient | AsyncClient, query: str, limit: int) -> Any:
        raise NotImplementedError

    def _hits(self, data: dict[str, Any], limit: int) -> list[Hit]:
        raise NotImplementedError

    def search(self, query: str, limit: int) -> list[Hit]:
        client = self._clients.sync()
        exchange, answer = self._exchange(client), _Answer(self.name)
        with _redacted():
            response = exchange.send(client, self._request(client, query, limit), answer.add)
            self._check_status(response)
        return self._read(bytes(answer.data), limit)

    async def asearch(self, query: str, limit: int) -> list[Hit]:
        """`search` from async code, through the async client."""
        if self._clients.sync_only:
            return await asyncio.to_thread(self.search, query, limit)
        client = self._clients.asynchronous()
        exchange, answer = self._exchange(client), _Answer(self.name)
        with _redacted():
            request = self._request(client, query, limit)
            response = await exchange.asend(client, request, answer.add)
            self._check_status(response)
        return self._read(bytes(answer.data), limit)

    def _check_status(self, response: Any) -> None:
        """The client's status error for an answer that is not a success, in one line
        naming the URL redacted (the client's own text names it whole)."""
        try:
            response.raise_for_status()
        except HTTP_ERRORS as exc:
            said = f"{response.status_code} {response.reason_phrase}".strip()
            exc.args = (f"{self.name}: {shown_url(str(response.url))} answered {said}",)
            raise

    def _exchange(self, client: SyncClient | AsyncClient) -> Exchange:
        # The API key (Brave's) is a secret resolved: it follows no redirect elsewhere.
        return Exchange(
            self._secrets,
            credentials={},
            deadline=self.deadline,
            what=f"the {self.name} search",
            follow=client.follow_redirects,
        )

    def _read(self, answer: bytes, limit: int) -> list[Hit]:
        """The hits of an answer; `BadAnswer`, one line, for one that is not its API's."""
        try:
            data = json.loads(answer)
        except (ValueError, RecursionError):
            raise BadAnswer(f"{self.name}: the answer is not JSON") from None
        try:
            hits = self._hits(data, limit)
        except (ValueError, TypeError, AttributeError, KeyError, BadAnswer) as exc:
            # ValidationError is a ValueError: a field of the wrong type.
            detail = str(exc) if isinstance(exc, BadAnswer) else type(exc).__name__
            raise self._unlike_api(detail) from None
        kept = [h for h in hits if _web(h.url)]
        for hit in kept:  # a hit is recorded as JSON: one that is not JSON is the answer's fault
            try:
                ad.ids.canonical_json(hit.model_dump(exclude_none=True), name="a hit")
            except ad.ArgumentError as exc:
                raise self._unlike_api(str(exc)) from None
        return kept

    def _unlike_api(self, detail: str) -> BadAnswer:
        return BadAnswer(f"{self.name}: the answer is not as its API gives it ({detail})")


class _Answer:
    """A backend's answer as it is read: over `MAX_ANSWER` bytes, `BadAnswer`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.data = bytearray()

    def add(self, chunk: bytes) -> None:
        self.data.extend(chunk)
        if len(self.data) > MAX_ANSWER:
            raise BadAnswer(f"{self.name}: the answer is over {MAX_ANSWER:,} bytes")


class SearXNG(_Remote):
    """A SearXNG instance's JSON API (``/search?format=json``; the instance must allow
    the json format). `timeout` bounds each connect and read, `deadline` the whole
    call. The parameters of `base_url` (a key) go with every search; an error names the
    URL with its credentials redacted, and the record of a search holds no URL."""

    name = "searxng"

    def __init__(
        self,
        base_url: str,
        *,
        client: SyncClient | None = None,
        async_client: AsyncClient | None = None,
        timeout: float = 20.0,
        deadline: float = DEFAULT_DEADLINE,
    ) -> None:
        super().__init__(client, async_client, timeout, deadline, ad.Secrets())
        check_url(base_url)  # not an http(s) URL: ArgumentError, the URL shown redacted
        self.base_url = base_url.rstrip("/")
        # The search goes to /search under the base URL's path, with the base URL's own
        # query parameters (a key, say) kept beside the search's.
        parts = urlsplit(base_url)
        path = parts.path.rstrip("/") + "/search"
        self._endpoint = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        self._params = [
            (name, value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
            if name not in ("q", "format")
        ]

    def _request(self, client: SyncClient | AsyncClient, query: str, limit: int) -> Any:
        query_string = urlencode([*self._params, ("q", query), ("format", "json")])
        return client.build_request("GET", f"{self._endpoint}?{query_string}")

    def _hits(self, data: dict[str, Any], limit: int) -> list[Hit]:
        # An answer with no `results` (an error object, another API's JSON) is not an
        # empty search: read as one, it would record a false negative finding.
        results = _listed(data.get("results"), "results")
        return [
            Hit(
                title=_line(r.get("title", "")),
                url=_url(r["url"]),
                snippet=_line(r.get("content") or ""),
                score=r.get("score"),
            )
            for r in results[:limit]
            if r.get("url")
        ]


class BraveSearch(_Remote):
    """Brave Search's web search API; `api_key` is a secret reference, resolved only
    when a request is sent. `timeout` bounds each connect and read, `deadline` the
    whole call."""

    name = "brave"

    def __init__(
        self,
        secrets: ad.Secrets,
        api_key: str = "secret:env:BRAVE_API_KEY",
        *,
        client: SyncClient | None = None,
        async_client: AsyncClient | None = None,
        timeout: float = 20.0,
        deadline: float = DEFAULT_DEADLINE,
    ) -> None:
        super().__init__(client, async_client, timeout, deadline, secrets)
        self.api_key = api_key

    def _request(self, client: SyncClient | AsyncClient, query: str, limit: int) -> Any:
        headers = {
            "Accept": "application/json",
            "X-Subscription-Token": self._secrets.resolve(self.api_key),
        }
        return client.build_request(
            "GET", BRAVE_URL, params={"q": query, "count": min(limit, 20)}, headers=headers
        )

    def _hits(self, data: dict[str, Any], limit: int) -> list[Hit]:
        web = data.get("web")
        if web is None:
            # Brave leaves `web` out when it found no page; an answer that is not a web
            # search's (an error object) is not an empty search.
            if data.get("type") != "search":
                raise BadAnswer("it has no 'web' results and is not a search's answer")
            return []
        results = _listed(web.get("results"), "web.results")
        return [
            Hit(
                title=_line(r.get("title", "")),
                url=_url(r["url"]),
                snippet=_line(r.get("description") or ""),
            )
            for r in results[:limit]
            if r.get("url")
        ]


@contextmanager
def _redacted() -> Iterator[None]:
    """A client's error raised here names every URL in its text with the credentials
    redacted: its text is shown to the model and recorded."""
    try:
        yield
    except HTTP_ERRORS as exc:
        text = str(exc)
        clean = redact_urls(text)
        if clean != text:
            exc.args = (clean,)
        raise


def _listed(value: object, name: str) -> list[Any]:
    """The list of hits an answer holds under `name`; `BadAnswer` when it holds none."""
    if value is None:
        raise BadAnswer(f"it has no {name!r} list")
    if not isinstance(value, list):
        raise BadAnswer(f"its {name!r} is a {type(value).__name__}, not a list")
    return value


def _line(value: object) -> str:
    """A title or snippet as one line of plain text: no control or direction characters
    (a newline in a title could write a hit line of its own)."""
    if not isinstance(value, str):
        raise BadAnswer(f"a text field is a {type(value).__name__}")
    return " ".join(_CONTROL.sub(" ", value).split())


def _url(value: object) -> str:
    if not isinstance(value, str):
        raise BadAnswer(f"a url is a {type(value).__name__}")
    return value.strip()


def _web(url: str) -> bool:
    """Whether a hit's URL is one a fetch can follow (not javascript:, data:, ...)."""
    return url.lower().startswith(("http://", "https://")) and not _CONTROL.search(url)
