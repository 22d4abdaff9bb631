"""Secrets named by reference, resolved only when sending, masked everywhere else.

A secret reference is ``secret:env:NAME``: the value of the environment variable NAME,
read at the moment a request is sent. A reference is the user's: it is resolved where
the user wrote it (an identity's headers, an adapter's configuration) or, in a URL given
to an adapter, for the names the user allowed (``allow_secrets=``); a reference in a
model's arguments is never resolved (see `check_allowed`).

Every value resolved is remembered (in memory only) so that it can be masked: wherever
it would reach the store, a log or the model, it becomes the reference in brackets,
``[secret:env:NAME]``, which says plainly that a value was masked and which one. The
value is masked as written and in the forms encoders write it: percent-encoded (with
``%20`` or ``+`` for a space, in either case of hex, or encoded twice), JSON- or
Python-escaped (``\\"``, ``\\u00e9``, ``\\'``, ``\\xe9``) and HTML-escaped (``&amp;``,
``&#233;``).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from .errors import ScopeError

_REF = re.compile(r"secret:env:([A-Za-z_][A-Za-z0-9_]*)")
_MIN_MASKED = 4  # characters; shorter values would mask ordinary text
_ANCHOR = re.compile(r"[A-Za-z0-9]{4,}")  # runs no encoder rewrites
_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f"}
_JSON_SHORT |= {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_HTML_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}


def is_secret_ref(text: str) -> bool:
    return _REF.fullmatch(text) is not None


def references(text: str) -> list[str]:
    """The secret references in `text`, in order."""
    return [m[0] for m in _REF.finditer(text)]


def _hex(n: int, width: int) -> str:
    # Hex digits in either case, with leading zeros optional beyond `width`.
    return "0*" + "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{n:0{width}x}")


def _char(ch: str) -> str:
    """A regular expression for one character of a secret, in any of its encodings."""
    alternatives = [re.escape(ch)]
    utf8 = ch.encode("utf-8", "surrogatepass")
    alternatives.append("".join(f"%(?:25)?{_hex(b, 2)[2:]}" for b in utf8))
    code = ord(ch)
    if code < 0x10000:
        alternatives.append(rf"\\u{_hex(code, 4)[2:]}")
    else:
        high = 0xD800 + ((code - 0x10000) >> 10)
        low = 0xDC00 + ((code - 0x10000) & 0x3FF)
        alternatives.append(rf"\\u{_hex(high, 4)[2:]}\\u{_hex(low, 4)[2:]}")
    if ch in _JSON_SHORT:
        alternatives.append(re.escape(_JSON_SHORT[ch]))
    if ch == "'":
        alternatives.append(r"\\'")  # Python's repr, JavaScript
    if code < 0x100:
        alternatives.append(rf"\\x{_hex(code, 2)[2:]}")
    elif code >= 0x10000:
        alternatives.append(rf"\\U{_hex(code, 8)[2:]}")
    if code >= 0x80:  # the repr of its UTF-8 bytes
        alternatives.append("".join(rf"\\x{_hex(b, 2)[2:]}" for b in utf8))
    alternatives.append(f"&#0*{code};")
    alternatives.append(f"&#[xX]{_hex(code, 1)};")
    if ch in _HTML_NAMED:
        alternatives.append(re.escape(_HTML_NAMED[ch]))
    if ch == "'":
        alternatives.append("&#39;")
    if ch == " ":  # form-encoded, and that percent-encoded
        alternatives += [r"\+", "%(?:25)?2[bB]"]
    return "(?:" + "|".join(alternatives) + ")"


class _Matcher:
    """Finds every known value, in any of its encodings, in text or bytes."""

    def __init__(self, values: dict[str, str]) -> None:
        # Longest first, so that a value containing another is masked whole.
        ordered = sorted(values.items(), key=lambda item: -len(item[0]))
        self.refs = [ref for _, ref in ordered]
        source = "|".join(
            f"(?P<s{i}>{''.join(_char(c) for c in value)})" for i, (value, _) in enumerate(ordered)
        )
        self.text = re.compile(source)
        self.data = re.compile(source.encode("utf-8", "surrogatepass"))
        # A value can only be present where its longest alphanumeric run is, unless an
        # escape spells one of its letters (see `may_hold`): a cheap test before the
        # expression runs.
        anchors = [max(_ANCHOR.findall(value), key=len, default="") for value, _ in ordered]
        self.anchors = None if "" in anchors else sorted(set(anchors), key=len)

    def may_hold(self, text: str | bytes) -> bool:
        if self.anchors is None:
            return True
        # An escape can spell a letter or a digit too (&#x61;, %61, \u0061): text with
        # one may hold a value whose anchor it does not show as written.
        if isinstance(text, bytes):
            return any(a.encode() in text for a in self.anchors) or any(
                e in text for e in _ESCAPES_BYTES
            )
        return any(a in text for a in self.anchors) or any(e in text for e in _ESCAPES)

    def mask(self, text: str) -> str:
        if not self.may_hold(text):
            return text
        return self.text.sub(lambda m: f"[{self.refs[int(str(m.lastgroup)[1:])]}]", text)

    def mask_bytes(self, data: bytes) -> bytes:
        if not self.may_hold(data):
            return data
        return self.data.sub(lambda m: f"[{self.refs[int(str(m.lastgroup)[1:])]}]".encode(), data)


_ESCAPES = ("&#", "%", "\\")  # how HTML, URLs and JSON/Python escape a character
_ESCAPES_BYTES = tuple(e.encode() for e in _ESCAPES)


# Every value any kit in this process has resolved (in memory only), with its reference:
# a state document is checked against them all, whichever kit resolved them, and the
# logs of the HTTP clients the adapters send through are masked with them.
_RESOLVED: dict[str, str] = {}
_RESOLVED_LOCK = threading.Lock()
_resolved_matcher: _Matcher | None = None


def resolved_values() -> frozenset[str]:
    """The values of every secret a kit in this process has resolved, to check that none
    was written where it must not be (a state document)."""
    with _RESOLVED_LOCK:
        return frozenset(_RESOLVED)


def mask_resolved(text: str) -> str:
    """`text` with the value of every secret a kit in this process has resolved masked,
    as `Secrets.mask` masks a kit's own: for text no one kit owns (a log line)."""
    global _resolved_matcher
    with _RESOLVED_LOCK:
        if not _RESOLVED:
            return text
        if _resolved_matcher is None:
            _resolved_matcher = _Matcher(_RESOLVED)
        matcher = _resolved_matcher
    return matcher.mask(text)


class Secrets:
    """The secrets a Toolkit has resolved, to mask them wherever data is kept."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}  # value -> reference
        self._lock = threading.Lock()
        self._matcher: _Matcher | None = None

    def resolve(self, ref: str) -> str:
        """The value behind ``secret:env:NAME``; `ScopeError` if it is not set.

        For references the user wrote (an identity's headers, an adapter's
        configuration); a reference that may have come from a model goes through
        `check_allowed` first."""
        match = _REF.fullmatch(ref)
        if match is None:
            raise ScopeError(f"{ref!r} is not a secret reference: use secret:env:NAME")
        value = os.environ.get(match[1])
        if not value:
            raise ScopeError(f"secret {ref} is not set: export {match[1]} before sending")
        self.remember(ref, value)
        return value

    def resolve_all(self, text: str) -> str:
        """`text` with every secret reference in it replaced by its value."""
        return _REF.sub(lambda m: self.resolve(m[0]), text)

    def check_allowed(self, text: str, allowed: Collection[str] | None, where: str) -> None:
        """Refuse (`ScopeError` naming it) a reference in `text` whose name is not in
        `allowed`; `allowed=None` means the text came from a model, where no reference
        is ever resolved. `where` says what the text is, for the message."""
        for match in _REF.finditer(text):
            if allowed is None:
                raise ScopeError(
                    f"{match[0]} in {where} is never resolved in a model's arguments: "
                    "credentials go in an identity's headers; nothing was sent"
                )
            if match[1] not in allowed:
                raise ScopeError(
                    f"{match[0]} in {where} is not allowed: add {match[1]!r} to the "
                    "adapter's allow_secrets to resolve it; nothing was sent"
                )

    def remember(self, ref: str, value: str) -> None:
        global _resolved_matcher
        if len(value) >= _MIN_MASKED:
            with _RESOLVED_LOCK:
                if _RESOLVED.get(value) != ref:
                    _RESOLVED[value] = ref
                    _resolved_matcher = None
            with self._lock:
                if self._values.get(value) != ref:
                    self._values[value] = ref
                    self._matcher = None

    def __bool__(self) -> bool:
        """Whether any secret has been resolved (and so may need masking)."""
        return bool(self._values)

    def known(self) -> dict[str, str]:
        """Reference by value, for checks that no value was kept anywhere."""
        with self._lock:
            return dict(self._values)

    def mask(self, text: str) -> str:
        """`text` with every known secret value, as written or encoded, replaced by
        ``[its reference]``."""
        matcher = self._current()
        return text if matcher is None else matcher.mask(text)

    def mask_bytes(self, data: bytes) -> bytes:
        matcher = self._current()
        return data if matcher is None else matcher.mask_bytes(data)

    def mask_in(self, data: bytes, charset: str) -> bytes:
        """`data`, text in `charset`, with every known value masked as it reads in that
        charset (UTF-16, a Latin or an EBCDIC code page: `mask_bytes` sees only UTF-8):
        when one is found, the text, decoded as a reader would (undecodable bytes
        replaced), masked and encoded again; else `data` itself."""
        matcher = self._current()
        if matcher is None:
            return data
        text = data.decode(charset, errors="replace")
        masked = matcher.mask(text)
        return data if masked == text else masked.encode(charset, errors="replace")

    def mask_json(self, value: Any) -> Any:
        """A JSON-like value (dicts, lists, tuples, strings, scalars) with every string
        in it, keys included, masked; the very same object when nothing was masked."""
        matcher = self._current()
        if matcher is None:
            return value
        masked, changed = _walk(value, matcher)
        return masked if changed else value

    def contains(self, text: str | bytes) -> list[str]:
        """The references whose values are in `text`, as written or encoded."""
        matcher = self._current()
        if matcher is None or not matcher.may_hold(text):
            return []
        found: Iterator[re.Match[Any]] = (
            matcher.data.finditer(text) if isinstance(text, bytes) else matcher.text.finditer(text)
        )
        return sorted({matcher.refs[int(str(m.lastgroup)[1:])] for m in found})

    def _current(self) -> _Matcher | None:
        with self._lock:
            if not self._values:
                return None
            if self._matcher is None:
                self._matcher = _Matcher(self._values)
            return self._matcher


def _walk(value: Any, matcher: _Matcher) -> tuple[Any, bool]:
    if type(value) is str:
        masked = matcher.mask(value)
        return masked, masked != value
    if isinstance(value, Mapping):
        changed = False
        out: dict[Any, Any] = {}
        for k, v in value.items():
            key, key_changed = _walk(k, matcher)
            item, item_changed = _walk(v, matcher)
            out[key] = item
            changed = changed or key_changed or item_changed
        return out, changed
    if isinstance(value, list | tuple):
        items = [_walk(v, matcher) for v in value]
        if not any(c for _, c in items):
            return value, False
        masked_items = [v for v, _ in items]
        return (tuple(masked_items) if isinstance(value, tuple) else masked_items), True
    return value, False
