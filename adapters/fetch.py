"""Fetch: HTTP GET of a URL, a Reference keyed by the URL, revalidated with ETags.

A response is recorded keyed by its URL (and identity), with the final URL, the
redirects, the ETag and Last-Modified; a 304 as another sighting of the stored bytes; a
failure as an error. The model is shown a page as readable text (`html_to_text`):
Markdown, with the links kept where they stand.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import timedelta
from typing import Any

import addressable as ad
from addressable.core.html import html_markdown

from ._base import Adapter, Identity, schema
from ._clients import HTTP_ERRORS, AsyncClient, Clients, SyncClient
from ._http import (
    DEFAULT_DEADLINE,
    DEFAULT_MAX_BYTES,
    BadAnswer,
    Exchange,
    ResponseTooLarge,
    check_deadline,
    staying_in,
)
from ._urls import check_url, checked_origins, normalize_url, redact_url, rerun_url, wire_of

DEFAULT_TIMEOUT = 30.0  # seconds, for connecting and for each read
DEFAULT_MAX_AGE = timedelta(hours=1)  # how long a fetched page may be relied on
_FAILURES: tuple[type[Exception], ...] = (*HTTP_ERRORS, ad.DeadlineExceeded)


_CAUGHT: tuple[type[Exception], ...] = (*_FAILURES, ResponseTooLarge, BadAnswer)


class Fetch(Adapter):
    """HTTP GET through httpx (or an httpx2 client given), recorded as a deterministic
    result keyed by its URL (and identity).

    The exact bytes are stored; the model is shown readable text (HTML made Markdown
    with the `html` extra). Redirects are followed and the final URL recorded. A 4xx or
    5xx is a result with status error; a timeout, a connection failure or a call still
    running after `deadline` seconds (`ad.DeadlineExceeded`; `timeout` bounds each
    connect and read) is recorded and raised. `replay(id, verify=True)` revalidates with
    the stored ETag or Last-Modified: a 304 is a new observation of the same result.

    `secret:env:NAME` is resolved in the headers of `identities`, and in a URL only for
    the names in `allow_secrets` when called from code: else a `ScopeError`, and a URL
    that does not parse one way is an `ArgumentError`; nothing is then sent or recorded.
    What it refuses and why: docs/security.md, "Fetch and Api".
    """

    name = "fetch"
    description = (
        "Fetch a web page or file by its URL (HTTP GET) and return its readable text. "
        "The result is stored: once it leaves the context it can be had again with "
        "replay_result."
    )
    input_schema = schema(
        {"url": {"type": "string", "description": "absolute http(s) URL"}}, ["url"]
    )

    def __init__(
        self,
        kit: ad.Toolkit,
        *,
        client: SyncClient | None = None,
        async_client: AsyncClient | None = None,
        identities: Iterable[Identity] = (),
        max_bytes: int = DEFAULT_MAX_BYTES,
        timeout: float = DEFAULT_TIMEOUT,
        deadline: float = DEFAULT_DEADLINE,
        max_age: timedelta = DEFAULT_MAX_AGE,
        allow_secrets: Collection[str] = (),
        origins: Iterable[str] | None = None,
        name: str | None = None,
    ) -> None:
        deadline = check_deadline(deadline)  # before registering: a bad one is refused
        allowed = frozenset(ad.ids.listed(allow_secrets, "secret references"))
        scope = None if origins is None else checked_origins(origins, "Fetch origins")
        super().__init__(kit, name)
        self.origins = scope  # where it may GET, redirects included; None: anywhere
        self._stay = None if scope is None else staying_in(scope, "the adapter's origins")
        if scope is not None:
            self.description = f"{self.description} Only URLs at: {', '.join(scope)}."
        self._clients = Clients(client, async_client, timeout)
        self.identities = {i.name: i for i in identities}
        # The origins each identity was sent to from code, in this process: a re-run of
        # a recorded call sends one of them only there, unless it names its origins.
        self._sent: dict[str, set[str]] = {}
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.deadline = deadline
        self.max_age = max_age
        self.allow_secrets = allowed
        kit.on_rerun(self.name, self._revalidate)

    # -- calls -----------------------------------------------------------------------------

    def __call__(self, url: str, *, identity: str | None = None) -> ad.Result:
        """GET `url` (as `identity`, if given) and record the response."""
        return self._get(url, identity, {}, self.allow_secrets)

    async def aget(self, url: str, *, identity: str | None = None) -> ad.Result:
        """The async twin of calling the adapter."""
        return await self._aget(url, identity, {}, self.allow_secrets)

    def handle(self, arguments: dict[str, Any]) -> str:
        # A model's arguments: no secret reference in them is ever resolved.
        # A model names no identity: Fetch has no scope of origins to hold one to.
        result = self._get(arguments["url"], None, {}, None)
        return self.render(result)

    async def ahandle(self, arguments: dict[str, Any]) -> str:
        """A model's call from async code (`kit.ahandle`): through the async client given
        (or one of the adapter's own); with only a sync client given, through that one,
        in a thread."""
        if self._clients.sync_only:
            return await asyncio.to_thread(self.handle, arguments)
        result = await self._aget(arguments["url"], None, {}, None)
        return self.render(result)

    async def _aget(
        self,
        url: str,
        identity: str | None,
        extra: Mapping[str, str],
        allowed: Collection[str] | None,
    ) -> ad.Result:
        client = self._clients.asynchronous()
        exchange, request, url = self._prepare(client, url, identity, extra, allowed)
        body = bytearray()
        try:
            response = await exchange.asend(client, request, self._collect(body, url))
        except _CAUGHT as exc:
            self._record_failure(url, identity, exc)
            raise
        return self._record_response(url, identity, response, bytes(body), exchange)

    def render(self, result: ad.Result) -> str:
        """What the model sees: readable text of a page, or the error plainly."""
        if not result.ok:
            body = result.text[:2000]
            return f"error: {result.record.error}" + (f"\n{body}" if body.strip() else "")
        text = result.text
        if "html" in result.record.media_type.lower():
            text = html_to_text(text)
        meta = result.record.meta
        final = meta.get("final_url")
        if meta.get("redirects") and isinstance(final, str):  # followed to another page
            text = f"[redirected to {final}]\n{text}"
        if isinstance(meta.get("redirect"), str):  # a redirect that was not followed
            text = f"[HTTP {meta.get('status_code')}, redirect {meta['redirect']}]\n{text}"
        return text

    # -- the work ----------------------------------------------------------------------

    def _get(
        self,
        url: str,
        identity: str | None,
        extra: Mapping[str, str],
        allowed: Collection[str] | None,
    ) -> ad.Result:
        client = self._clients.sync()
        exchange, request, url = self._prepare(client, url, identity, extra, allowed)
        body = bytearray()
        try:
            response = exchange.send(client, request, self._collect(body, url))
        except _CAUGHT as exc:
            self._record_failure(url, identity, exc)
            raise
        return self._record_response(url, identity, response, bytes(body), exchange)

    def _prepare(
        self,
        client: SyncClient | AsyncClient,
        url: str,
        identity: str | None,
        extra: Mapping[str, str],
        allowed: Collection[str] | None,
    ) -> tuple[Exchange, Any, str]:
        """Everything checked before anything is sent: the identity, the secret
        references in the URL (resolved only on the wire; credential-like query values
        never reach the record). Returns the exchange, the request and the URL to
        record."""
        where = check_url(url)  # a URL that does not parse, or parses two ways, is refused
        if self.origins is not None and where not in self.origins:
            raise ad.ScopeError(
                f"{where} is not an origin this {self.name} adapter may read "
                f"(allowed: {', '.join(self.origins)}); nothing was sent"
            )
        self.kit.secrets.check_allowed(url, allowed, "the URL")
        credentials = self._credentials(identity, where)
        wire = wire_of(url, self.kit.secrets)
        url = redact_url(url)  # what is kept: no credential written in the URL
        exchange = Exchange(
            self.kit.secrets,
            credentials=credentials,
            deadline=self.deadline,
            what=f"GET {url}",
            stay=self._stay,
        )
        request = client.build_request("GET", wire, headers={**extra, **credentials})
        return exchange, request, url

    def _collect(self, body: bytearray, url: str) -> Callable[[bytes], None]:
        def collect(chunk: bytes) -> None:
            body.extend(chunk)
            if len(body) > self.max_bytes:
                raise ResponseTooLarge(
                    f"the response from {url} is over the limit of {self.max_bytes:,} "
                    "bytes; raise max_bytes on the Fetch adapter to take it"
                )

        return collect

    def _revalidate(self, record: ad.Record) -> ad.Result:
        # A conditional GET: a 304 says the stored bytes still stand.
        conditions = {}
        # Only what a header can carry is sent (a server may have sent a Latin-1 ETag,
        # a bundle may hold anything): without it the GET is unconditional.
        if isinstance(etag := record.meta.get("etag"), str) and etag.isascii():
            conditions["If-None-Match"] = etag
        if isinstance(modified := record.meta.get("last_modified"), str) and modified.isascii():
            conditions["If-Modified-Since"] = modified
        url = rerun_url(record)
        identity = record.args.get("identity")
        who = identity if isinstance(identity, str) else None
        if who is not None and who in self.identities and self.identities[who].origins is None:
            where = check_url(url)
            if where not in self._sent.get(who, set()):
                raise ad.ScopeError(
                    f"result {record.id} is a GET of {where} as {who!r}, which this process "
                    f"never sent there: give Identity({who!r}, origins=...) to re-run it; "
                    "nothing was sent"
                )
        return self._get(url, who, conditions, self.allow_secrets)

    def _credentials(self, identity: str | None, where: str) -> dict[str, str]:
        if identity is None:
            return {}
        if identity not in self.identities:
            known = ", ".join(sorted(self.identities)) or "none"
            raise ad.ScopeError(f"no identity named {identity!r} (known: {known})")
        chosen = self.identities[identity]
        chosen.check_origin(where)
        self._sent.setdefault(identity, set()).add(where)
        return chosen.resolved_headers(self.kit.secrets)

    def close(self) -> None:
        """Close the sync client this adapter made (not one it was given)."""
        self._clients.close()

    async def aclose(self) -> None:
        """Close every client this adapter made (not ones it was given)."""
        await self._clients.aclose()

    # -- recording -------------------------------------------------------------------------

    def _args(self, url: str, identity: str | None) -> dict[str, Any]:
        return {"url": url} if identity is None else {"url": url, "identity": identity}

    def _key(self, url: str, identity: str | None) -> str:
        key = normalize_url(url)
        return key if identity is None else f"{key} as {identity}"

    def _record_response(
        self,
        url: str,
        identity: str | None,
        response: Any,
        body: bytes,
        exchange: Exchange,
    ) -> ad.Result:
        final = redact_url(str(response.url))
        meta: dict[str, Any] = {"status_code": response.status_code, "final_url": final}
        if response.history:
            meta["redirects"] = [redact_url(str(r.url)) for r in response.history]
        if exchange.note is not None:
            meta["redirect"] = exchange.note
        for header, field in (("etag", "etag"), ("last-modified", "last_modified")):
            if header in response.headers:
                meta[field] = response.headers[header]
        options: ad.RecordOptions = {
            "key": self._key(url, identity),
            "media_type": response.headers.get("content-type", "application/octet-stream"),
            "max_age": self.max_age,
            "meta": meta,
        }
        if response.status_code == 304:
            # Revalidated: the stored bytes stand, and this is another sighting of them.
            previous = self._latest(url, identity)
            if previous is not None:
                options["media_type"] = previous.media_type
                options["meta"] = {**previous.meta, "revalidated": 304}
                body = self.kit.store.read(previous)
        elif response.status_code >= 400:
            options["status"] = ad.Status.ERROR
            options["error"] = f"HTTP {response.status_code} {response.reason_phrase} for {url}"
        return self.kit.record(
            self.name,
            self._args(url, identity),
            body,
            determinism=ad.Determinism.DETERMINISTIC,
            **options,
        )

    def _record_failure(self, url: str, identity: str | None, exc: BaseException) -> None:
        self.kit.record_failure(
            self.name,
            self._args(url, identity),
            exc,
            determinism=ad.Determinism.DETERMINISTIC,
            key=self._key(url, identity),
        )

    def _latest(self, url: str, identity: str | None) -> ad.Record | None:
        found = [
            r
            for r in self.kit.store.records(tool=self.name, key=self._key(url, identity))
            if r.status is ad.Status.OK
        ]
        return found[-1] if found else None


def html_to_text(html: str) -> str:
    """Readable text of an HTML document: Markdown, with the links kept where they
    stand (`core.html.html_markdown`, the one reading of HTML in the project)."""
    return html_markdown(html)
