"""The sync transport the adapters' own clients use: httpx's, with every socket wait
(connecting, each read and write) cut to the time left before the deadline of the call
in progress (`CALL_END`), so that a server trickling even its headers cannot hold a call.
"""

from __future__ import annotations

import ssl
import time
import typing
from collections.abc import Iterable
from contextvars import ContextVar

import httpcore
import httpx

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
