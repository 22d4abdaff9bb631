"""URLs as the HTTP adapters take them: checked before anything is sent, one spelling per
resource (so that the same resource always gets the same key), and the credentials
written in them redacted wherever they are kept."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

import httpx

import addressable as ad
from addressable._secrets import is_secret_ref

_DEFAULT_PORTS = {"http": 80, "https": 443}
REDACTED = "[redacted]"
_REDACTED_USERINFO = "%5Bredacted%5D"  # brackets are not allowed before a host
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


# -- redaction -----------------------------------------------------------------------------

# The one list of parameter names that carry credentials: a name is one when any of its
# words (split at punctuation and camelCase, lowercased) is here, or when it is, or ends
# with, one of these run together ("AWSAccessKeyId" has the word "key", "accesstoken"
# ends with "token", "PHPSESSID" with "sessid"). One of fewer than 5 letters counts only
# as a whole word ("monkey" holds no key); "code", "pass", "pw" and "sid" only as the
# whole name (OAuth's "code" is a credential, "country_code" is not).
CREDENTIAL_NAMES = frozenset(
    {
        "token", "tokens", "jwt", "jws", "bearer", "assertion", "ticket", "otp", "saml",
        "key", "keys", "apikey", "secret", "secrets", "password", "passwd", "passphrase",
        "pwd", "pass", "pw", "signature", "sig", "credential", "credentials",
        "auth", "authorization", "session", "sessionid", "sessid", "sid", "cookie",
        "verifier", "code", "secretkey", "accesskey", "privatekey", "appkey", "authkey",
        "clientkey", "passkey", "signingkey", "sign", "hmac",
    }
)  # fmt: skip
_ONLY_WHOLE = frozenset({"code", "pass", "pw", "sid"})
# Words that make a "token" a place in a listing, not a credential (`pageToken`,
# `nextPageToken`, `syncToken`, `continuation_token`): kept, so that each page of a
# listing keeps a key of its own.
_POSITION = frozenset({"page", "next", "prev", "previous", "continuation", "sync", "cursor"})
# Words that make a "key" one that orders or finds things, not a secret.
_KEY_KINDS = frozenset(
    {"sort", "cache", "primary", "foreign", "partition", "range", "idempotency", "group",
     "lookup", "dedup", "dedupe", "object", "row", "index", "order", "cursor"}
)  # fmt: skip
# Last words that make a name say something about a credential, not hold one.
_ABOUT = frozenset({"type", "types", "kind", "hint", "format", "length", "method", "mode"})
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_PATH_PARAM = re.compile(r";([^;/]*=[^;/]*)")  # ";jsessionid=..." in a path segment
# A JSON Web Token under any name: header and claims are base64url JSON objects.
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")


def is_credential_name(name: str) -> bool:
    """Whether a URL parameter named `name` carries a credential (see CREDENTIAL_NAMES)."""
    name = unquote_plus(name)
    whole = re.sub(r"[^a-z0-9]", "", name.lower())
    if whole in CREDENTIAL_NAMES:
        return True
    ordered = [w.lower() for w in _WORD.findall(name)]
    words = set(ordered)
    if words & _POSITION and words <= _POSITION | {"token", "id"}:
        return False  # a place in a listing; `pageAccessToken` is still a credential
    if len(words) > 1 and words & _KEY_KINDS and words <= _KEY_KINDS | {"key", "keys"}:
        return False  # a key that orders or finds things: `sort_key`, `cache_key`
    if len(ordered) > 1 and ordered[-1] in _ABOUT:
        return False  # what kind of credential, not one: `token_type`, `auth_type`
    if any(w in CREDENTIAL_NAMES and w not in _ONLY_WHOLE for w in words):
        return True
    return any(whole.endswith(n) for n in CREDENTIAL_NAMES if len(n) >= 5)


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


def redact_url(url: str) -> str:
    """`url` as it may be kept: the password of its userinfo (or a userinfo with no
    password, which is then a token itself) and the values of credential-like
    parameters (in the query, in the fragment, after ";" in the path or the query)
    replaced by "[redacted]", as is any value that is a JSON Web Token. Secret
    references (``secret:env:NAME``) stay: they name the secret without holding it.
    Everything else is kept as written; never raises, whatever the string."""
    rest, hashmark, fragment = url.partition("#")
    rest, mark, query = rest.partition("?")
    scheme_end = rest.find("//")
    if scheme_end >= 0:
        start = scheme_end + 2
        slash = rest.find("/", start)
        end = len(rest) if slash < 0 else slash
        authority, path = rest[start:end], rest[end:]
        rest = rest[:start] + _redact_userinfo(authority)
    else:
        rest, path = "", rest
    path = _PATH_PARAM.sub(lambda m: ";" + _redact_pairs(m[1], ""), path)
    query = _redact_pairs(query, "&;")
    fragment = _redact_pairs(fragment, "&;?")
    return f"{rest}{path}{mark}{query}{hashmark}{fragment}"


def _redact_userinfo(authority: str) -> str:
    userinfo, at, host = authority.rpartition("@")
    if not at or not userinfo or _keeps(userinfo):
        return authority
    user, colon, password = userinfo.partition(":")
    ref = re.match(r"secret:env:[A-Za-z_][A-Za-z0-9_]*(?=:)", userinfo)
    if ref is not None:  # a reference as the user name: its colons are its own
        user, colon, password = ref[0], ":", userinfo[ref.end() + 1 :]
    if not colon:
        return f"{_REDACTED_USERINFO}@{host}"
    if not password or _keeps(password):
        return authority
    return f"{user}:{_REDACTED_USERINFO}@{host}"


def _redact_pairs(text: str, separators: str) -> str:
    """`text` (name=value pairs split at `separators`) with the credentials' values
    redacted."""
    if "=" not in text:
        return text
    pieces = re.split(f"([{re.escape(separators)}])", text) if separators else [text]
    out = []
    for piece in pieces:
        name, eq, value = piece.partition("=")
        if eq and value and not _keeps(value) and _is_credential(name, value):
            piece = f"{name}={REDACTED}"
        out.append(piece)
    return "".join(out)


def _is_credential(name: str, value: str) -> bool:
    return is_credential_name(name.rpartition("/")[2]) or _JWT.search(unquote(value)) is not None


def _keeps(value: str) -> bool:
    """A value kept as written: a secret reference, or already redacted."""
    plain = unquote_plus(value)
    return is_secret_ref(plain) or plain == REDACTED
