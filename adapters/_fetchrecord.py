"""What `Fetch` records of a GET: the response, keyed by its URL (and identity), with
the final URL, the redirects, the ETag and Last-Modified; a 304 as another sighting of
the stored bytes; a failure as an error."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import addressable as ad

from ._base import Adapter
from ._http import Exchange
from ._urls import normalize_url, redact_url


class FetchRecording(Adapter):
    """The recording side of `Fetch`: a response or a failure recorded under the URL's
    key. `Fetch` sets the attributes."""

    max_age: timedelta

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
