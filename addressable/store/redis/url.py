"""A Redis store URL read and checked before redis-py reads it: the query parameters
the store takes, a database by its number, the namespace, the location shown without
its password, and redis-py's own errors about the URL with its passwords written ***."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from ...core.errors import StoreError

# The query parameters a store URL may carry: the namespace, and those of redis-py's
# connection that a URL can spell and that leave the replies as the store reads them
# (decode_responses, encoding, protocol and the like would change its keys or replies).
_PARAMETERS = frozenset(
    {
        "namespace",
        "db",
        "username",
        "password",
        "client_name",
        "socket_timeout",
        "socket_connect_timeout",
        "socket_keepalive",
        "socket_read_size",
        "retry_on_timeout",
        "health_check_interval",
        "max_connections",
    }
)
# Those only a TLS connection (rediss://) takes.
_TLS_PARAMETERS = frozenset(
    {
        "ssl_keyfile",
        "ssl_certfile",
        "ssl_cert_reqs",
        "ssl_ca_certs",
        "ssl_ca_data",
        "ssl_ca_path",
        "ssl_check_hostname",
        "ssl_password",
        "ssl_min_version",
        "ssl_ciphers",
        "ssl_include_verify_flags",
        "ssl_exclude_verify_flags",
    }
)


def check_parameters(scheme: str, query: str, location: str) -> None:
    """A `StoreError` naming the first query parameter the store does not take: redis-py
    hands any name on to its connection, which refuses it only later, as a TypeError."""
    accepted = _PARAMETERS | _TLS_PARAMETERS if scheme == "rediss" else _PARAMETERS
    for name, _ in parse_qsl(query, keep_blank_values=True):
        if name in accepted:
            continue
        shown = repr(name if len(name) <= 40 else name[:39] + "…")
        if name in _TLS_PARAMETERS:
            raise StoreError(
                f"redis store URL {location}: the parameter {shown} is for TLS "
                "connections: use rediss://"
            )
        raise StoreError(
            f"redis store URL {location}: unknown parameter {shown} (it takes "
            f"{', '.join(sorted(accepted))})"
        )


def check_database(path: str, location: str) -> None:
    """A `StoreError` unless the path names a database by its number (or none, for 0):
    redis-py reads any other path as database 0."""
    database = unquote(path).removeprefix("/")
    if database and not re.fullmatch(r"[0-9]+", database):
        shown = repr(database if len(database) <= 40 else database[:39] + "…")
        raise StoreError(
            f"redis store URL {location}: the database {shown} is not a number "
            "(redis://host:port/0 names database 0)"
        )


def scrubbed(text: str, secrets: Sequence[str]) -> str:
    """`text` (an error from redis-py) with each of `secrets` in it written ***."""
    for secret in secrets:
        for form in {secret, unquote(secret)}:
            if form:
                text = text.replace(form, "***")
    return text


@dataclass(frozen=True)
class RedisURL:
    """A store URL read: what redis-py connects to, the namespace of the store's keys,
    the location shown and logged (never with a password), and the secrets it holds,
    which no message may show."""

    server_url: str
    namespace: str
    location: str
    secrets: tuple[str, ...]


def read_url(url: str) -> RedisURL:
    """`url` read and checked: a `StoreError` naming what does not fit (a password
    whose '/', '?' or '#' is not percent-encoded, a port, a database, a parameter)."""
    parts = urlsplit(url)
    written = url.partition("://")[2]
    if "@" in written and "@" not in parts.netloc:  # a password that holds / ? or #
        host = written.rpartition("@")[2].partition("?")[0].partition("#")[0]
        raise StoreError(
            f"redis store URL {parts.scheme}://***@{host}: a '/', '?' or '#' in its "
            "password must be percent-encoded (%2F, %3F, %23)"
        )
    query = dict(parse_qsl(parts.query))
    namespace = query.pop("namespace", "addressable")
    shown = {"namespace": namespace} if namespace != "addressable" else {}
    netloc = parts.netloc.rpartition("@")[2]
    location = urlunsplit(parts._replace(netloc=netloc, query=urlencode(shown)))
    try:
        parts.port  # noqa: B018 - read for its check: a number from 0 to 65535
    except ValueError:
        raise StoreError(
            f"redis store URL {location}: the port is not a number from 0 to 65535"
        ) from None
    check_database(parts.path, location)
    check_parameters(parts.scheme.lower(), parts.query, location)
    return RedisURL(
        server_url=urlunsplit(parts._replace(query=urlencode(query))),
        namespace=namespace,
        location=location,
        secrets=(parts.password or "", query.get("password", ""), query.get("ssl_password", "")),
    )
