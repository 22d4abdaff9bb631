"""An Api call made ready and sent: checked against the scope, the secrets allowed and the
identity, with its headers; sent once through the sync or the async client, a transport
failure returned rather than raised, for the caller to record."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import addressable as ad

from ._apiscope import WRITES, Action, Scope
from ._base import Adapter, Identity
from ._clients import HTTP_ERRORS, Clients
from ._decode import BadAnswer
from ._http import Exchange, staying_in
from ._urls import has_userinfo, normalize_url, origin, redact_url, shown_url, wire_of

# What a call may fail with: the transport's failures, the deadline, an answer that
# cannot be read as sent.
FAILURES: tuple[type[Exception], ...] = (*HTTP_ERRORS, ad.DeadlineExceeded, BadAnswer)


class ApiRequests(Adapter):
    """The request side of `Api`: a call checked and built, then sent; the clients it
    made, closed. `Api` sets the attributes."""

    identities: dict[str, Identity]
    scope: Scope
    deadline: float
    max_bytes: int
    _clients: Clients

    def _read_call(
        self, url: str, identity: str, action: Action, allowed: Collection[str] | None
    ) -> Call:
        """A GET checked against the scope and the secrets allowed; nothing sent yet."""
        self._check(url, identity, action, allowed)
        self.kit.secrets.check_allowed(url, allowed, "the URL")
        credentials = self._credentials(identity)
        wire, url = self._wire(url), redact_url(url)
        return Call(
            method="GET",
            wire=wire,
            url=url,
            credentials=credentials,
            headers=self._headers(credentials),
            args={"method": "GET", "url": url, "identity": identity},
            key=f"GET {normalize_url(url)} as {identity}",
        )

    def _write_call(
        self,
        method: str,
        url: str,
        *,
        identity: str,
        json_body: dict[str, Any] | None = None,
        marker_field: str | None = None,
        idempotency_key: str | None = None,
        depends_on: Sequence[str] = (),
        allowed: Collection[str] | None,
    ) -> Call:
        """A write checked against the scope, the secrets allowed and the freshness of
        what it depends on, with its idempotency key and marker; nothing sent yet."""
        method = method.upper()
        if method not in WRITES:
            raise ad.ArgumentError(f"{method} is not a write: use {', '.join(WRITES)}")
        self._check(url, identity, WRITES[method], allowed)  # type: ignore[arg-type]
        self.kit.secrets.check_allowed(url, allowed, "the URL")
        self.kit.require_fresh(depends_on)  # a write on stale facts waits: nothing is sent
        key = idempotency_key or uuid.uuid4().hex
        body = dict(json_body) if json_body is not None else None
        if body is not None:
            # Not JSON (NaN, a cycle) or nested deeper than a record holds: refused, and
            # nothing sent (a write sent and then not recorded would be lost).
            ad.ids.canonical_json(body, name="the body", argument=True)
        marker = None
        if marker_field is not None:
            marker = f"ad-{key[:16]}"
            body = {**(body or {}), marker_field: marker}
        credentials = self._credentials(identity)
        wire, url = self._wire(url), redact_url(url)
        return Call(
            method=method,
            wire=wire,
            url=url,
            credentials=credentials,
            headers={**self._headers(credentials), "Idempotency-Key": key},
            args={"method": method, "url": url, "identity": identity, "body": body},
            key=key,
            body=body,
            meta={
                ad.Report.MARKER: marker,
                "marker_field": marker_field,
                ad.Report.WRITTEN: ["body"],
            },
        )

    def _send(self, call: Call) -> Sent:
        """Send `call` through the sync client; a failure is returned, not raised (see
        `kit.failed`)."""
        client = self._clients.sync()
        exchange = self._exchange(call, client.follow_redirects)
        request = client.build_request(call.method, call.wire, json=call.body, headers=call.headers)
        body = _Body(self.max_bytes)
        try:
            response = exchange.send(client, request, body.add)
        except BadAnswer as exc:
            return _unreadable(call, exchange, exc)
        except BaseException as exc:
            return _failed(call, exchange, exc)
        return Sent(exchange, response, bytes(body.data), over=body.over)

    async def _asend(self, call: Call) -> Sent:
        """`_send` through the async client."""
        client = self._clients.asynchronous()
        exchange = self._exchange(call, client.follow_redirects)
        request = client.build_request(call.method, call.wire, json=call.body, headers=call.headers)
        body = _Body(self.max_bytes)
        try:
            response = await exchange.asend(client, request, body.add)
        except BadAnswer as exc:
            return _unreadable(call, exchange, exc)
        except BaseException as exc:
            return _failed(call, exchange, exc)
        return Sent(exchange, response, bytes(body.data), over=body.over)

    def close(self) -> None:
        """Close the sync client this adapter made (not one it was given)."""
        self._clients.close()

    async def aclose(self) -> None:
        """Close every client this adapter made (not ones it was given)."""
        await self._clients.aclose()

    def _check(
        self, url: str, identity: str, action: Action, allowed: Collection[str] | None
    ) -> None:
        """The identity known, the URL in scope; from a model (`allowed` None), a URL
        with no user name or password, which the HTTP client would send in place of the
        identity's own Authorization header."""
        if identity not in self.identities:
            known = ", ".join(sorted(self.identities)) or "none"
            raise ad.ScopeError(
                f"no identity named {ad.ids.quoted(identity)} (known: {known}); nothing was sent"
            )
        self.scope.check(url, identity, action)
        self.identities[identity].check_origin(origin(url))  # its own origins, if it names any
        if allowed is None and has_userinfo(url):
            raise ad.ScopeError(
                f"{shown_url(url)}: a URL may not hold a user name or password; "
                "credentials come only from the identity named; nothing was sent"
            )

    def _wire(self, url: str) -> str:
        """The URL sent: `url` with its secret references resolved, pointing where it
        does."""
        return wire_of(url, self.kit.secrets)

    def _credentials(self, identity: str) -> dict[str, str]:
        return self.identities[identity].resolved_headers(self.kit.secrets)

    def _headers(self, credentials: dict[str, str]) -> dict[str, str]:
        return {"Accept": "application/json", **credentials}

    def _exchange(self, call: Call, follow: bool) -> Exchange:
        stay = staying_in({origin(o) for o in self.scope.origins}, "the scope")
        return Exchange(
            self.kit.secrets,
            credentials=call.credentials,
            deadline=self.deadline,
            what=f"{call.method} {call.url}",
            follow=follow,
            stay=stay,
        )


@dataclass
class Call:
    """One call checked and ready to send: nothing of it depends on the client."""

    method: str
    wire: str  # the URL sent, secrets resolved
    url: str  # the URL recorded
    credentials: dict[str, str]
    headers: dict[str, str]
    args: dict[str, Any]
    key: str  # a read's record key; a write's idempotency key
    body: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Sent:
    """What sending a call gave: the last response and its body, or the failure. `over`:
    the body went over the size limit, and was not read past it."""

    exchange: Exchange
    response: Any = None
    body: bytes = b""
    error: BaseException | None = None
    over: bool = False
    unreadable: str | None = None  # why the body could not be read (its status was)


def _failed(call: Call, exchange: Exchange, exc: BaseException) -> Sent:
    """A failure to record, whatever it is: a write's request may have gone out before
    it (a reset, the deadline, an answer that does not decode, memory running out), and
    its Action is recorded all the same. A read's is only its transport's and deadline's
    failures; an interrupt (Ctrl-C, a task cancelled) of a write is recorded, then
    raised again (`ApiRecording._write_result`)."""
    if call.method == "GET" and not isinstance(exc, FAILURES):
        raise exc
    return Sent(exchange, error=exc)


def _unreadable(call: Call, exchange: Exchange, exc: BadAnswer) -> Sent:
    """An answer whose body could not be read: a write whose status was read has the
    outcome its status gives (its body is not kept, as one over the limit is not)."""
    if call.method == "GET" or exc.response is None:
        return _failed(call, exchange, exc)
    return Sent(exchange, exc.response, unreadable=str(exc))


class _Body:
    """A response body up to `limit` bytes: past it, reading stops (a write's answer
    still tells its status; its body is not held in memory or kept)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.over = False

    def add(self, chunk: bytes) -> bool:
        if len(self.data) + len(chunk) > self.limit:
            self.over = True
            return False
        self.data.extend(chunk)
        return True
