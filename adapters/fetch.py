"""Fetch: HTTP GET of a URL, a Reference keyed by the URL, revalidated with ETags."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

import httpx

import addressable as ad

from ._base import Adapter, Identity, schema
from ._html import html_to_text
from ._urls import normalize_url, redact_url

DEFAULT_MAX_BYTES = 10 * 1024 * 1024  # bytes; a larger body is refused, not cut
DEFAULT_TIMEOUT = 30.0  # seconds, for connecting and for each read
DEFAULT_MAX_AGE = timedelta(hours=1)  # how long a fetched page may be relied on


class ResponseTooLarge(ad.AddressableError):
    """A response body over the adapter's size limit: refused, and recorded as an error."""


class Fetch(Adapter):
    """HTTP GET through httpx, recorded as a deterministic result keyed by its URL.

    The exact bytes are stored; the model is shown readable text (HTML made Markdown
    with the `html` extra). Redirects are followed and the final URL recorded. A 4xx or
    5xx is a result with status error; a timeout or a connection failure is recorded
    and raised. `kit.replay(id, verify=True)` revalidates with the stored ETag or
    Last-Modified: a 304 is recorded as a new observation of the same result.
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
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
        identities: Iterable[Identity] = (),
        max_bytes: int = DEFAULT_MAX_BYTES,
        timeout: float = DEFAULT_TIMEOUT,
        max_age: timedelta = DEFAULT_MAX_AGE,
        name: str | None = None,
    ) -> None:
        super().__init__(kit, name)
        self._client = client
        self._async_client = async_client
        self._own_clients: list[httpx.Client | httpx.AsyncClient] = []
        self.identities = {i.name: i for i in identities}
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.max_age = max_age
        kit.on_rerun(self.name, self._revalidate)

    # -- calls -----------------------------------------------------------------------------

    def __call__(self, url: str, *, identity: str | None = None) -> ad.Result:
        """GET `url` (as `identity`, if given) and record the response."""
        return self._get(url, identity, {})

    async def aget(self, url: str, *, identity: str | None = None) -> ad.Result:
        """The async twin of calling the adapter."""
        headers = self._headers(identity, {})
        wire, url = self.kit.secrets.resolve_all(url), redact_url(url)
        try:
            async with self._aclient().stream(
                "GET", wire, headers=headers, follow_redirects=True
            ) as response:
                body = b""
                async for chunk in response.aiter_bytes():
                    body = self._grow(body, chunk, url)
                return self._record_response(url, identity, response, body)
        except (httpx.HTTPError, ResponseTooLarge) as exc:
            self._record_failure(url, identity, exc)
            raise

    def handle(self, arguments: dict[str, Any]) -> str:
        return self.render(self(arguments["url"], identity=arguments.get("identity")))

    def render(self, result: ad.Result) -> str:
        """What the model sees: readable text of a page, or the error plainly."""
        if not result.ok:
            body = result.text[:2000]
            return f"error: {result.record.error}" + (f"\n{body}" if body.strip() else "")
        text = result.text
        if "html" in result.record.media_type.lower():
            text = html_to_text(text)
        final = result.record.meta.get("final_url")
        if isinstance(final, str) and final != result.record.args.get("url"):
            text = f"[redirected to {final}]\n{text}"
        return text

    # -- the work ----------------------------------------------------------------------

    def _get(self, url: str, identity: str | None, extra: Mapping[str, str]) -> ad.Result:
        headers = self._headers(identity, extra)
        # Secret references in the URL are resolved only on the wire; credential-like
        # query values never reach the record.
        wire, url = self.kit.secrets.resolve_all(url), redact_url(url)
        try:
            with self._sync_client().stream(
                "GET", wire, headers=headers, follow_redirects=True
            ) as response:
                body = b""
                for chunk in response.iter_bytes():
                    body = self._grow(body, chunk, url)
                return self._record_response(url, identity, response, body)
        except (httpx.HTTPError, ResponseTooLarge) as exc:
            self._record_failure(url, identity, exc)
            raise

    def _revalidate(self, record: ad.Record) -> ad.Result:
        # A conditional GET: a 304 says the stored bytes still stand.
        conditions = {}
        if isinstance(etag := record.meta.get("etag"), str):
            conditions["If-None-Match"] = etag
        if isinstance(modified := record.meta.get("last_modified"), str):
            conditions["If-Modified-Since"] = modified
        url = str(record.args["url"])
        identity = record.args.get("identity")
        return self._get(url, identity if isinstance(identity, str) else None, conditions)

    def _grow(self, body: bytes, chunk: bytes, url: str) -> bytes:
        body += chunk
        if len(body) > self.max_bytes:
            raise ResponseTooLarge(
                f"the response from {url} is over the limit of {self.max_bytes:,} bytes; "
                "raise max_bytes on the Fetch adapter to take it"
            )
        return body

    def _headers(self, identity: str | None, extra: Mapping[str, str]) -> dict[str, str]:
        headers = dict(extra)
        if identity is not None:
            if identity not in self.identities:
                known = ", ".join(sorted(self.identities)) or "none"
                raise ad.ScopeError(f"no identity named {identity!r} (known: {known})")
            headers.update(self.identities[identity].resolved_headers(self.kit.secrets))
        return headers

    def _args(self, url: str, identity: str | None) -> dict[str, Any]:
        return {"url": url} if identity is None else {"url": url, "identity": identity}

    def _key(self, url: str, identity: str | None) -> str:
        key = normalize_url(url)
        return key if identity is None else f"{key} as {identity}"

    def _record_response(
        self, url: str, identity: str | None, response: httpx.Response, body: bytes
    ) -> ad.Result:
        final = redact_url(str(response.url))
        meta: dict[str, Any] = {"status_code": response.status_code, "final_url": final}
        if response.history:
            meta["redirects"] = [redact_url(str(r.url)) for r in response.history]
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

    def _sync_client(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout)
            self._own_clients.append(self._client)
        return self._client

    def _aclient(self) -> httpx.AsyncClient:
        if self._async_client is None:
            self._async_client = httpx.AsyncClient(timeout=self.timeout)
            self._own_clients.append(self._async_client)
        return self._async_client

    def close(self) -> None:
        """Close the sync client this adapter made (not one it was given)."""
        for client in self._own_clients:
            if isinstance(client, httpx.Client):
                client.close()

    async def aclose(self) -> None:
        """Close every client this adapter made (not ones it was given)."""
        for client in self._own_clients:
            if isinstance(client, httpx.AsyncClient):
                await client.aclose()
            else:
                client.close()
