"""How Fetch and Api send a call: one exchange, with every redirect followed by hand so
that credentials stay with their origin, and an overall deadline.

Credentials (the identity's headers and every secret value the toolkit resolved) are
dropped for the rest of the chain once a redirect leaves the first request's origin,
and a redirect that would still carry one is itself the answer. The deadline bounds
the whole call: a response is read in chunks, each request's timeouts are cut to the
time left, and so is every socket read and write of the clients the adapters make
(`_clients.DeadlineTransport`). A body is decoded here, gzip and deflate only, `STEP`
bytes a step. Cookies are a call's own. The rules and their reasons: docs/security.md,
"Fetch and Api". A client is an httpx client or an httpx2 one (`_clients`).
"""

from __future__ import annotations

import asyncio
import math
import time
import zlib
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import httpx

import addressable as ad

from ._clients import (
    CALL_END,
    INVALID_URL,
    NOT_CONNECTED,
    PROTOCOL_ERRORS,
    TIMEOUTS,
    AsyncClient,
    SyncClient,
)
from ._urls import origin, shown_url, url_problem

# What the client raises for a Location it cannot make a URL of (UnicodeError: a host
# IDNA cannot read, `xn--`); neither is an HTTPError.
_BAD_LOCATION: tuple[type[Exception], ...] = (*INVALID_URL, UnicodeError)
_NOT_A_LOCATION = "Invalid URL in location header"  # httpx's words for its own check
DEFAULT_DEADLINE = 60.0  # seconds for a whole call, redirects and body included
_EARLY = 0.05  # seconds: a timeout this close to the deadline is the deadline's
_COOKIE = "cookie"


DEFAULT_MAX_BYTES = 10 * 1024 * 1024  # bytes of a response body; a larger one is not kept
STEP = 64 * 1024  # bytes: the most one step of decoding a body gives
ACCEPTED = "gzip, deflate"  # the encodings asked for: those decoded within STEP a step
MOST_LAYERS = 4  # encodings one answer may stack (each is a decoder held while reading)
_UNBOUNDED = frozenset({"br", "zstd", "compress", "x-compress"})  # known, not decoded here


class ResponseTooLarge(ad.AddressableError):
    """A response body over the adapter's size limit: refused, and recorded as an error."""


class BadAnswer(ad.AddressableError):
    """A server answered with what cannot be read as it says: a body that does not
    decode, in an encoding not asked for, a redirect to no URL that can be fetched; for
    a search backend, also what its API does not give (not its JSON, the wrong shape,
    more than `MAX_ANSWER` bytes). Nothing of it is kept.

    `response` is the answer whose body it was, when its status had been read (a
    write's outcome still follows from its status); None otherwise."""

    response: Any = None


def check_deadline(deadline: float) -> float:
    number = isinstance(deadline, int | float) and not isinstance(deadline, bool)
    if not (number and math.isfinite(deadline) and deadline > 0):
        raise ad.ArgumentError(f"deadline must be a number of seconds over 0, not {deadline!r}")
    return float(deadline)


def staying_in(origins: Collection[str], named: str) -> Callable[[str], str | None]:
    """An `Exchange`'s `stay` that follows a redirect only to one of `origins`; `named`
    says what they are in the note of one not followed ("the scope")."""

    def stay(target: str) -> str | None:
        where = origin(target)
        return None if where in origins else f"not followed: {where} is outside {named}"

    return stay


class Exchange:
    """One call: its first request and the redirects it follows, within its deadline.

    `credentials` are the identity headers sent with the first request. With `follow`
    false, a redirect is the answer. `stay` may refuse a redirect's target: it returns
    why (recorded as `note`), or None to go on. `what` names the call in messages."""

    def __init__(
        self,
        secrets: ad.Secrets,
        *,
        credentials: Mapping[str, str],
        deadline: float,
        what: str,
        follow: bool = True,
        stay: Callable[[str], str | None] | None = None,
    ) -> None:
        self.secrets = secrets
        self.credentials = dict(credentials)
        self.deadline = deadline
        self.end = time.monotonic() + deadline
        self.what = what
        self.follow = follow
        self.stay = stay
        self.history: list[Any] = []  # the responses that redirected
        self.note: str | None = None  # why a redirect was not followed
        self._started = False
        # What the HTTP layer's trace said of the first request (async clients): whether
        # it said anything, and whether the request's headers began to go out.
        self._traced = False
        self._sending = False
        self._origin: str | None = None
        self._carrying = True
        self._credential_names = {name.lower() for name in self.credentials}
        self._cookies = httpx.Cookies()  # the cookies this call's chain was given

    # -- sync ------------------------------------------------------------------------

    def send(self, client: SyncClient, request: Any, collect: Callable[[bytes], object]) -> Any:
        """Send `request` and the redirects it leads to; the body of the last response
        goes to `collect` chunk by chunk, until it returns False. Returns the last
        response (closed)."""
        token = CALL_END.set(self.end)
        try:
            current: Any = request
            while current is not None:
                self._ready(current)
                self._started = True
                with self._location_read():
                    response = client.send(current, stream=True, **self._auth())
                try:
                    current = self._next(response, client.max_redirects)
                    if current is None:
                        with _answering(response):
                            self._read(response, collect)
                        response.history = list(self.history)
                        return response
                finally:
                    response.close()
            raise AssertionError("unreachable")  # pragma: no cover
        except TIMEOUTS as exc:
            if time.monotonic() >= self.end - _EARLY:
                raise self.exceeded() from exc
            raise
        finally:
            CALL_END.reset(token)

    # -- async -----------------------------------------------------------------------

    async def asend(
        self, client: AsyncClient, request: Any, collect: Callable[[bytes], object]
    ) -> Any:
        """`send` for an async client, the whole call under `asyncio.timeout`."""
        try:
            async with asyncio.timeout(self.end - time.monotonic()):
                current: Any = request
                while current is not None:
                    self._ready(current)
                    if not self.history:
                        current.extensions["trace"] = self._trace(current.extensions.get("trace"))
                    self._started = True
                    with self._location_read():
                        response = await client.send(current, stream=True, **self._auth())
                    try:
                        current = self._next(response, client.max_redirects)
                        if current is None:
                            with _answering(response):
                                await self._aread(response, collect)
                            response.history = list(self.history)
                            return response
                    finally:
                        await response.aclose()
                raise AssertionError("unreachable")  # pragma: no cover
        except ad.DeadlineExceeded:
            raise
        except TimeoutError as exc:
            raise self.exceeded() from exc
        except TIMEOUTS as exc:
            if time.monotonic() >= self.end - _EARLY:
                raise self.exceeded() from exc
            raise

    @contextmanager
    def _location_read(self) -> Iterator[None]:
        """A redirect whose Location the client cannot make a URL of (it raises
        `InvalidURL` while it answers: every URL it is given was checked before; or its
        own protocol error, "Invalid URL in location header") is a `BadAnswer`, as a
        Location refused by `url_problem` is."""
        try:
            yield
        except (*_BAD_LOCATION, *PROTOCOL_ERRORS) as exc:
            if isinstance(exc, PROTOCOL_ERRORS) and not str(exc).startswith(_NOT_A_LOCATION):
                raise
            raise BadAnswer(
                f"{self.what}: the server redirected to a Location that is not a URL "
                "that can be fetched"
            ) from None

    def _auth(self) -> dict[str, Any]:
        """How the next request is sent: no redirect followed by the client, and once the
        chain has left its first origin, without the client's own `auth` (httpx drops
        it there when it follows a redirect itself)."""
        if self._carrying:
            return {"follow_redirects": False}
        return {"follow_redirects": False, "auth": None}

    # -- the body --------------------------------------------------------------------

    def _read(self, response: Any, collect: Callable[[bytes], object]) -> None:
        """The body to `collect`, decoded a bounded step at a time, until it returns
        False (the caller has enough: the rest is not read)."""
        if response.is_stream_consumed:  # a body already in memory (a mock's), decoded
            chunks = response.iter_bytes(STEP)
            decoders: list[Inflate] = []
        else:
            chunks, decoders = response.iter_raw(), layers(response, self.what)
        for chunk in chunks:
            for piece in through(chunk, decoders):
                self._check()
                if collect(piece) is False:
                    return

    async def _aread(self, response: Any, collect: Callable[[bytes], object]) -> None:
        """`_read` of an async response."""
        if response.is_stream_consumed:
            chunks = response.aiter_bytes(STEP)
            decoders: list[Inflate] = []
        else:
            chunks, decoders = response.aiter_raw(), layers(response, self.what)
        async for chunk in chunks:
            for piece in through(chunk, decoders):
                if collect(piece) is False:
                    return

    # -- the rules -------------------------------------------------------------------

    def exceeded(self) -> ad.DeadlineExceeded:
        return ad.DeadlineExceeded(
            f"{self.what} passed its deadline of {self.deadline:g} s and was stopped; "
            "give the adapter a longer deadline= to wait longer"
        )

    def _check(self) -> None:
        if time.monotonic() >= self.end:
            raise self.exceeded()

    def _ready(self, request: Any) -> None:
        """`request` made ready to send: only encodings decoded within a bound asked
        for, only the call's own cookies, no wait past the deadline."""
        request.headers["Accept-Encoding"] = ACCEPTED
        if not (self._carrying and _COOKIE in self._credential_names):
            request.headers.pop(_COOKIE, None)  # the client's jar: not this call's
        if self._carrying:  # the chain's cookies stay on the origin that set them
            self._cookies.set_cookie_header(request)
        # No wait of this request may outlast the call's deadline.
        left = self.end - time.monotonic()
        if left <= 0:
            raise self.exceeded()
        timeouts = request.extensions.get("timeout") or {}
        request.extensions["timeout"] = {
            phase: left if timeouts.get(phase) is None else min(float(timeouts[phase]), left)
            for phase in ("connect", "read", "write", "pool")
        }
        if self._origin is None:
            self._origin = origin(str(request.url))

    def nothing_sent(self, exc: BaseException) -> bool:
        """Whether the call failed with `exc` before any request could reach a server:
        no redirect was taken, and the first connection was never made (or, where the
        HTTP layer traced the request, its headers never began to go out: an async
        call's deadline cancels a connection being made with no error of its own)."""
        if self.history:
            return False
        if self._traced:
            return not self._sending
        cause = exc.__cause__ if isinstance(exc, ad.DeadlineExceeded) else exc
        if cause is None:
            return not self._started
        return isinstance(cause, NOT_CONNECTED)

    def _trace(self, given: Any) -> Callable[[str, dict[str, Any]], Awaitable[None]]:
        """httpcore's `trace` extension for an async request: notes when its headers
        begin to go out, then passes each event on to the one the request had."""

        async def trace(name: str, info: dict[str, Any]) -> None:
            self._traced = True
            if name.endswith("send_request_headers.started"):
                self._sending = True
            if given is not None:
                await given(name, info)

        return trace

    def _next(self, response: Any, max_redirects: int) -> Any:
        """The request a redirect leads to, stripped of credentials if the chain has
        left the first origin; None when the response is the answer."""
        request = getattr(response, "next_request", None)
        if request is None or not self.follow:
            return None
        target = origin(str(request.url))
        if self.stay is not None and (why := self.stay(str(request.url))) is not None:
            self.note = why
            return None
        problem = url_problem(str(request.url))
        if problem is not None:  # the server's Location, refused as a call's URL is
            raise BadAnswer(
                f"{self.what}: the redirect to {shown_url(str(request.url))} is not to a "
                f"URL that can be fetched: {problem}"
            )
        if self._carrying:  # set by the first origin (once off it, none is sent again)
            self._cookies.extract_cookies(response)
        if len(self.history) >= max_redirects:
            raise httpx.TooManyRedirects(f"more than {max_redirects} redirects", request=request)
        if target != self._origin:
            self._carrying = False
        if self._carrying:
            # httpx drops some credentials (a Cookie) on every redirect: put them back.
            request.headers.update(self.credentials)
            self.history.append(response)
            return request
        for name in self.credentials:
            if name in request.headers:
                del request.headers[name]
        for name, value in list(request.headers.items()):
            if self.secrets.contains(value):
                del request.headers[name]
        url = _without_secrets(request.url, self.secrets)
        if url is None:
            self.note = "not followed: the next URL would carry a credential to another origin"
            return None
        request.url = url
        self.history.append(response)
        return request


def _without_secrets(url: Any, secrets: ad.Secrets) -> Any:
    """`url` without the query parameters that hold a secret; None if one is elsewhere."""
    if not secrets.contains(str(url)):
        return url
    query = url.query.decode("ascii", errors="replace")
    kept = [part for part in query.split("&") if part and not secrets.contains(part)]
    url = url.copy_with(query="&".join(kept).encode("ascii") or None)
    return None if secrets.contains(str(url)) else url


@contextmanager
def _answering(response: Any) -> Iterator[None]:
    """While the body of `response` is read: a `BadAnswer` names the response, whose
    status was read."""
    try:
        yield
    except BadAnswer as exc:
        exc.response = response
        raise


# -- decoding a body --------------------------------------------------------------------------


def layers(response: Any, what: str) -> list[Inflate]:
    """The decoders of a response's Content-Encoding, the last applied first; an
    encoding that cannot be decoded within bounds is a `BadAnswer`. One unknown is
    passed over, as the HTTP clients do."""
    names = [n.strip().lower() for n in response.headers.get("content-encoding", "").split(",")]
    refused = [n for n in names if n in _UNBOUNDED]
    if len(names) > MOST_LAYERS:
        raise BadAnswer(
            f"{what}: the answer is encoded {len(names)} times over; at most "
            f"{MOST_LAYERS} encodings are decoded"
        )
    if refused:
        raise BadAnswer(
            f"{what}: the answer is encoded as {refused[0]}, which was not asked for and "
            f"is not decoded here (only {ACCEPTED})"
        )
    return [Inflate(n, what) for n in reversed(names) if n in ("gzip", "x-gzip", "deflate")]


def through(data: bytes, layers: Sequence[Inflate]) -> Iterator[bytes]:
    """`data` decoded through every layer, in pieces of at most `STEP` bytes; with no
    layer, `data` as it is (a raw chunk: one read of the network)."""
    if not layers:
        if data:
            yield data
        return
    for piece in layers[0].feed(data):
        yield from through(piece, layers[1:])


class Inflate:
    """One gzip or deflate layer, whose every step gives at most `STEP` bytes."""

    def __init__(self, name: str, what: str) -> None:
        self.name, self.what = name, what
        self.gzip = name != "deflate"
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16 if self.gzip else zlib.MAX_WBITS)
        self._first = True

    def feed(self, data: bytes) -> Iterator[bytes]:
        """What `data` decodes to, a step at a time; `BadAnswer` if it does not."""
        while True:
            try:
                out = self._zlib.decompress(data, STEP)
            except zlib.error as exc:
                if self._first and not self.gzip:
                    # deflate without zlib's header, as some servers send it (httpx too
                    # reads it so)
                    self._first = False
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise BadAnswer(f"{self.what}: the answer does not decode as {self.name}") from exc
            self._first = self._first and not data
            if out:
                yield out
            data = self._zlib.unconsumed_tail
            if not data and len(out) < STEP:
                return  # everything given is decoded: a full step may have more behind it
