"""The HTTP clients the adapters send through: an httpx client or an httpx2 one (the
stack newer SDKs use), given by the user or made here. Both have the same
`build_request`, `send` and streamed responses, and the failures of either are handled
alike (`HTTP_ERRORS`, `TIMEOUTS`). httpx2 is optional: without it, httpx alone.

The sync clients made here send through `DeadlineTransport`: httpx's transport, with
every socket wait (connecting, each read and write) cut to the time left before the
deadline of the call in progress (`CALL_END`), so that a server trickling even its
headers cannot hold a call.
"""

from __future__ import annotations

import logging
import ssl
import time
import typing
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import ModuleType
from typing import Any, Protocol

import httpcore
import httpx

from addressable.core.credentials import redact_urls
from addressable.core.secrets import mask_resolved


def _httpx2() -> ModuleType | None:
    try:
        import httpx2
    except ImportError:
        return None
    return httpx2


_STACKS: tuple[ModuleType, ...] = tuple(m for m in (httpx, _httpx2()) if m is not None)


def _errors(*names: str) -> tuple[type[Exception], ...]:
    return tuple(getattr(stack, name) for stack in _STACKS for name in names)


# The loggers of either stack: httpx logs every request's URL at INFO, httpcore the
# headers of every answer at DEBUG (a redirect's Location may repeat a URL's secret).
HTTP_LOGGERS = (
    "httpx",
    "httpx2",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
    "httpcore2.connection",
    "httpcore2.http11",
    "httpcore2.http2",
    "httpcore2.proxy",
    "httpcore2.socks",
    "hpack.hpack",  # HTTP/2 header compression logs each header it adds, values too
)
HTTP_ERRORS = _errors("HTTPError")  # every failure of a call, in either stack
TIMEOUTS = _errors("TimeoutException")
NOT_CONNECTED = _errors("ConnectError", "ConnectTimeout", "PoolTimeout")
INVALID_URL = _errors("InvalidURL")  # not an HTTPError: a redirect's Location may raise it
PROTOCOL_ERRORS = _errors("RemoteProtocolError")


class _Builds(Protocol):
    """What the adapters use of either kind of client besides `send`."""

    follow_redirects: bool
    max_redirects: int

    def build_request(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any: ...


class SyncClient(_Builds, Protocol):
    """What the adapters use of a sync client: an `httpx.Client` or an `httpx2.Client`."""

    def send(
        self, request: Any, *, stream: bool = ..., auth: Any = ..., follow_redirects: bool = ...
    ) -> Any: ...


class AsyncClient(_Builds, Protocol):
    """What the adapters use of an async client: an `httpx.AsyncClient` or an
    `httpx2.AsyncClient`."""

    async def send(
        self, request: Any, *, stream: bool = ..., auth: Any = ..., follow_redirects: bool = ...
    ) -> Any: ...


class Clients:
    """The clients an adapter sends through: the ones it was given, else its own, made
    when first needed with `timeout` (the sync one on the deadline transport). Given only
    a sync client, async calls use that one too (in a thread), never one of the adapter's
    own that would bypass its transport, proxy or mock. `close`/`aclose` close only the
    clients made here, never the ones given."""

    def __init__(
        self, client: SyncClient | None, async_client: AsyncClient | None, timeout: float
    ) -> None:
        self._client = client
        self._async_client = async_client
        self.timeout = timeout
        # What the clients log, given or made here, with no credential in it.
        _mask_logs(HTTP_LOGGERS)
        self.sync_only = client is not None and async_client is None
        self._own: list[httpx.Client | httpx.AsyncClient] = []

    def sync(self) -> SyncClient:
        if self._client is None:
            own = httpx.Client(
                timeout=self.timeout, transport=DeadlineTransport(), cookies=_no_cookies()
            )
            self._own.append(own)
            self._client = own
        return self._client

    def asynchronous(self) -> AsyncClient:
        if self._async_client is None:
            # retries: 0, httpx's default
            own = httpx.AsyncClient(timeout=self.timeout, cookies=_no_cookies())
            self._own.append(own)
            self._async_client = own
        return self._async_client

    def close(self) -> None:
        for client in self._own:
            if isinstance(client, httpx.Client):
                client.close()

    async def aclose(self) -> None:
        for client in self._own:
            if isinstance(client, httpx.AsyncClient):
                await client.aclose()
            else:
                client.close()


class _Masked(logging.Filter):
    """A log record's message with every secret a kit in this process resolved masked
    and the credentials of its URLs redacted: the clients log the URLs they send to
    (httpx at INFO, `HTTP Request: GET ...?key=...`), resolved and whole."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record that cannot be formatted: its handler says so
            return True
        masked = redact_urls(mask_resolved(message))
        if masked != message:
            record.msg, record.args = masked, None
        return True


_MASKED = _Masked()


def _mask_logs(names: tuple[str, ...]) -> None:
    """Mask what the loggers `names` write (a filter of the logger's own, so that its
    records are masked before any handler, the user's included, sees them), once."""
    for name in names:
        logger = logging.getLogger(name)
        if _MASKED not in logger.filters:
            logger.addFilter(_MASKED)


def _no_cookies() -> CookieJar:
    """A cookie jar that keeps none: a cookie set in answer to one call is not sent
    with the next, which may be made as another identity (`Exchange` keeps a call's)."""
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


# -- the transport of the clients made here ---------------------------------------------------

CALL_END: ContextVar[float | None] = ContextVar("addressable_http_deadline", default=None)
"""When the call in progress must end (`time.monotonic()`), or None outside a call."""


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    end = CALL_END.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise error("the call's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(
            self._inner.start_tls(
                ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)
            )
        )

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(
            host, port, _left(timeout, httpcore.ConnectTimeout), local_address, socket_options
        )
        return _Stream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(
            path, _left(timeout, httpcore.ConnectTimeout), socket_options
        )
        return _Stream(stream)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport, with every socket read and write cut to the time left
    before the deadline of the call in progress (if any)."""

    def __init__(self, *, retries: int = 0) -> None:
        super().__init__(retries=retries)
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            retries=retries,
            network_backend=_Backend(),
        )
