"""One spelling per URL, so that the same resource always gets the same key."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str) -> str:
    """Lowercase scheme and host, no default port, no fragment, sorted query, "/" for an
    empty path: equal resources, equal strings."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if parts.port and parts.port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{parts.port}"
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    return urlunsplit((scheme, host, parts.path or "/", query, ""))


def origin(url: str) -> str:
    """scheme://host[:port] of a URL, as a scope names it."""
    parts = urlsplit(normalize_url(url))
    return f"{parts.scheme}://{parts.netloc}"
