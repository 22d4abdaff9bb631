"""URLs as the HTTP adapters take them: checked before anything is sent, one spelling per
resource (so that the same resource always gets the same key), and the credentials
written in them redacted wherever they are kept."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import httpx

import addressable as ad

# The rules for credentials written in a URL are the core's (the state document uses
# them too); the adapters take them from here.
from addressable.core.credentials import (
    CREDENTIAL_NAMES as CREDENTIAL_NAMES,
)
from addressable.core.credentials import REDACTED as REDACTED
from addressable.core.credentials import is_credential_name as is_credential_name
from addressable.core.credentials import redact_url as redact_url
from addressable.core.credentials import redact_urls as redact_urls
from addressable.core.secrets import references

_DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_LABEL = 63  # characters of one label of a host name (RFC 1035)
_MAX_NAME = 253  # characters of a whole host name, without a trailing dot


def normalize_url(url: str) -> str:
    """Lowercase scheme and host, no default port, no userinfo, no fragment, sorted
    query, "/" for an empty path: equal resources, equal strings. Never raises: a URL
    that does not parse is its own spelling, stripped (`check_url` refuses it before a
    call)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url.strip().partition("#")[0]
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address: its colons are not a port's
    if port and port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    return urlunsplit((scheme, host, parts.path or "/", query, ""))


def origin(url: str) -> str:
    """scheme://host[:port] of a URL, as a scope names it."""
    parts = urlsplit(normalize_url(url))
    return f"{parts.scheme}://{parts.netloc}"


# -- checking ------------------------------------------------------------------------------


def checked_origins(origins: object, what: str) -> tuple[str, ...]:
    """`origins` (a list of absolute http(s) URLs) as their origins, in order, once
    each; `ArgumentError` for a bare str, an empty list or an entry that is not one."""
    if not isinstance(origins, Iterable):
        raise ad.ArgumentError(f"{what} is a list of URLs, not {origins!r:.40}")
    found = tuple(dict.fromkeys(check_url(o) for o in ad.ids.listed(origins, what)))
    if not found:
        raise ad.ArgumentError(f"{what} names no origin: give at least one, or None for any")
    return found


def check_url(url: object) -> str:
    """The origin of `url` if it is an absolute http(s) URL that Python and the HTTP
    client read alike (same scheme, host and port), with no control character and no
    space around it; else `ArgumentError`, one line naming the problem (the URL shown
    redacted)."""
    if not isinstance(url, str):
        raise ad.ArgumentError(f"a URL must be a string, not {type(url).__name__}")
    problem = url_problem(url)
    if problem is not None:
        raise ad.ArgumentError(f"{shown_url(url)} is not a URL that can be fetched: {problem}")
    return origin(url)


def wire_of(url: str, secrets: ad.Secrets) -> str:
    """The URL sent: `url` with its secret references resolved (see `check_wire`). A
    reference in its userinfo is sent as a Basic Authorization header, whose base64 form
    is then masked as the secret is, wherever a server echoes it back."""
    wire = secrets.resolve_all(url)
    check_wire(url, wire)
    written = urlsplit(url).netloc.rpartition("@")[0]
    refs = references(written)
    if refs and wire != url:
        sent = urlsplit(wire)
        pair = f"{unquote(sent.username or '')}:{unquote(sent.password or '')}"
        secrets.remember(refs[0], base64.b64encode(pair.encode("utf-8")).decode("ascii"))
    return wire


def check_wire(url: str, wire: str) -> None:
    """`wire` (`url` with its secret references resolved) must point where `url` does:
    a secret's value cannot move a call to another host. The message shows no value."""
    if wire == url:
        return
    if url_problem(wire) is not None or origin(wire) != origin(url):
        raise ad.ArgumentError(
            f"{shown_url(url)}: with its secret references resolved, the URL is invalid or "
            "points elsewhere; percent-encode the secret's value"
        )


def url_problem(url: str) -> str | None:
    """Why `url` cannot be fetched (see `check_url`), in a few words; None if it can."""
    bad = next((c for c in url if c < " " or c == "\x7f" or c in "\u2028\u2029\x85"), None)
    if bad is not None:
        return f"it holds the control character {bad!r}"
    if url != url.strip():
        return "it has spaces around it"
    try:
        parts = urlsplit(url)
        port = parts.port  # parsed here: an unparsable port raises
    except ValueError as exc:
        return _parse_problem(str(exc))
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return "only http and https URLs can be fetched"
    if not parts.hostname:
        return "it names no host (write it as http://host/path)"
    try:
        sent = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        return _parse_problem(str(exc))
    ours = (scheme, _ascii_host(parts.hostname), port or _DEFAULT_PORTS[scheme])
    theirs = (sent.scheme, sent.raw_host.decode("ascii").lower(), sent.port or ours[2])
    if ours != theirs:
        return "its host or port reads differently to different URL parsers"
    return _host_problem(theirs[1])


def _host_problem(host: str) -> str | None:
    """What makes a host (as sent, ASCII) one no name lookup takes: an empty label
    (``a..b``) or one over 63 characters, or a name over 253."""
    if ":" in host:
        return None  # an IPv6 address
    name = host.removesuffix(".")  # a trailing dot names the root: allowed
    if len(name) > _MAX_NAME:
        return f"its host is over {_MAX_NAME} characters"
    if any(not 0 < len(label) <= _MAX_LABEL for label in name.split(".")):
        return f"its host has an empty label or one over {_MAX_LABEL} characters"
    return None


def has_userinfo(url: str) -> bool:
    """Whether `url` names a user (and maybe a password) before its host."""
    return "@" in urlsplit(url).netloc


def _ascii_host(host: str) -> str:
    """`host` as the HTTP client sends it (an international name in IDNA)."""
    if host.isascii():
        return host.lower()
    try:
        return httpx.URL(f"http://{host}/").raw_host.decode("ascii").lower()
    except (httpx.InvalidURL, ValueError):
        return host


def _parse_problem(message: str) -> str:
    """What a parser's complaint says, in words of our own: its message may quote the
    URL, userinfo and all."""
    lowered = message.lower()
    if "nfkc" in lowered:
        return "its host has characters that change under NFKC normalization"
    if "port" in lowered:
        return "its port is not a number from 0 to 65535"
    if "ipv6" in lowered or "ipv4" in lowered or "bracket" in lowered:
        return "its [ ] do not hold an IPv6 address"
    if "idna" in lowered:
        return "its host is not a valid international domain name (IDNA)"
    return "it does not parse as a URL"


def shown_url(url: str) -> str:
    """`url` fit for a message: credentials redacted, quoted, one line, at most about
    120 characters."""
    text = redact_url(url)
    if len(text) > 120:
        text = text[:117] + "..."
    return repr(text)


def rerun_url(record: ad.Record) -> str:
    """The URL a recorded call is made again with; `NotReplayable` when a credential
    written in it was redacted, since the record no longer holds what was sent."""
    url = str(record.args["url"])
    if REDACTED in unquote(url):
        raise ad.NotReplayable(
            f"result {record.id} cannot be fetched again from its record: a credential "
            "written in its URL was not kept; make the call again from your code"
        )
    return url
