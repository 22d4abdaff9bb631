"""Credentials written in a URL (a userinfo, a parameter whose name says it carries
one, a JSON Web Token): found, and redacted wherever a URL is kept. The adapters keep
URLs through `redact_url`; the state document refuses a URL that holds one."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote, unquote_plus

from .secrets import is_secret_ref

REDACTED = "[redacted]"
_REDACTED_USERINFO = "%5Bredacted%5D"  # brackets are not allowed before a host

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
# Words that make a name a number of things: `max_tokens` is a limit, not a token.
_AMOUNT = frozenset({"max", "min", "num", "count", "limit", "total"})
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
    if len(ordered) > 1 and (ordered[0] in _AMOUNT or ordered[-1] in _AMOUNT):
        return False  # how many, not one: `max_tokens`, `token_count`
    if any(w in CREDENTIAL_NAMES and w not in _ONLY_WHOLE for w in words):
        return True
    return any(whole.endswith(n) for n in CREDENTIAL_NAMES if len(n) >= 5)


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
    path = "/".join(_redact_segment(segment) for segment in path.split("/"))
    path = _PATH_PARAM.sub(lambda m: ";" + _redact_pairs(m[1], ""), path)
    query = _redact_pairs(query, "&;")
    fragment = _redact_pairs(fragment, "&;?")
    return f"{rest}{path}{mark}{query}{hashmark}{fragment}"


# A URL anywhere in a text: a scheme, "://", and what follows up to a space, a double
# quote or a bracket. Not up to a single quote: a password may hold one unencoded, and a
# URL quoted 'so' only keeps its closing quote in its redacted form.
# A scheme is short: bounded, a long run of letters is not tried from each of its starts.
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s<>\"`]+")


def redact_urls(value: Any) -> Any:
    """`value` (a text, or JSON data at any depth: a call's arguments, a document, its
    keys included) with every URL in its strings passed through `redact_url`."""
    if isinstance(value, str):
        if "://" not in value:
            return value
        return _URL_IN_TEXT.sub(lambda m: redact_url(m[0]), value)
    if isinstance(value, dict):
        return {redact_urls(k): redact_urls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_urls(v) for v in value]
    return value


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
        elif eq and ("://" in value or value.startswith("//")):  # a URL written as it is
            piece = f"{name}={_redact_in_value(value)}"
        elif eq and "%" in value:
            piece = f"{name}={_redact_encoded(value)}"
        out.append(piece)
    return "".join(out)


def _redact_encoded(value: str, depth: int = 3) -> str:
    """A parameter's value that holds a URL percent-encoded (`next=`, `redirect_uri=`,
    `return_to=`), up to `depth` times over: the credentials in that URL redacted, the
    value encoded again; as written when there are none."""
    plain = unquote_plus(value)
    if plain == value or depth == 0:
        return value
    if "://" in plain or plain.startswith("//"):
        clean = _redact_in_value(plain)
    else:
        clean = _redact_encoded(plain, depth - 1)
    return value if clean == plain else quote(clean, safe="")


def _redact_in_value(value: str) -> str:
    """A value that holds URLs (one scheme-relative, `//user:pw@host/`, as a whole)."""
    if value.startswith("//"):
        return redact_url("x:" + value)[2:]
    return str(redact_urls(value))


def _redact_segment(segment: str) -> str:
    """A path segment: a JSON Web Token redacted whole, and a URL percent-encoded in it
    (a proxy's `/fetch/https%3A%2F%2F...%3Ftoken%3D...`) redacted as a value's is."""
    if _JWT.fullmatch(unquote(segment)):
        return REDACTED
    return _redact_encoded(segment) if "%" in segment else segment


def _is_credential(name: str, value: str) -> bool:
    return is_credential_name(name.rpartition("/")[2]) or _JWT.search(unquote(value)) is not None


def _keeps(value: str) -> bool:
    """A value kept as written: a secret reference, or already redacted."""
    plain = unquote_plus(value)
    # `[secret:env:NAME]` is how a value the toolkit resolved is masked: no credential.
    return is_secret_ref(plain.removeprefix("[").removesuffix("]")) or plain == REDACTED


def has_credential(text: str) -> bool:
    """Whether a URL in `text` has a credential written in it (one `redact_urls` would
    redact)."""
    return bool(redact_urls(text) != text)
