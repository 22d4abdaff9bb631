"""One spelling per URL, so that the same resource always gets the same key."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from addressable._secrets import is_secret_ref

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


# Query parameters that carry credentials: their values never reach the store.
_SECRET_PARAM = re.compile(
    r"(^|[_-])(key|apikey|token|secret|password|passwd|pwd|auth|"
    r"sig|signature|credential|session)s?$",
    re.I,
)
REDACTED = "[redacted]"


def redact_url(url: str) -> str:
    """`url` with the values of credential-like query parameters replaced by
    "[redacted]", unless they are secret references (``secret:env:NAME``), which stay:
    they name the secret without holding it."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(_SECRET_PARAM.search(k) and not is_secret_ref(v) for k, v in pairs):
        return url
    safe = [
        (k, REDACTED if _SECRET_PARAM.search(k) and not is_secret_ref(v) else v) for k, v in pairs
    ]
    return urlunsplit(parts._replace(query=urlencode(safe, safe=":[]")))
