"""What a Redis store URL may say, checked before redis-py reads it: the query
parameters the store takes, a database by its number, and redis-py's own errors about
the URL with its passwords written ***."""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import parse_qsl, unquote

from .._errors import StoreError

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
