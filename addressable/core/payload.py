"""Turning what a tool returns into bytes with a media type, and back.

str is stored as UTF-8 text, bytes as they are, anything else as canonical JSON; the
media type says which, so a replay gives back a value of the same kind.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from .errors import ArgumentError
from .ids import canonical_json, lone_surrogate

TEXT = "text/plain; charset=utf-8"
BLOCKS = "application/vnd.addressable.content+json"  # the media type of stored blocks
BINARY = "application/octet-stream"
JSON = "application/json"
_RETURN_VALUE = "the tool's return value"  # how errors name it
# Text codecs that are no charset of a document: each fails on most bytes, or always.
_NOT_CHARSETS = frozenset({"idna", "punycode", "undefined"})


def encode_payload(value: object, media_type: str | None = None) -> tuple[bytes, str]:
    """Bytes and media type for a tool's return value; `ArgumentError` when it cannot be
    stored (not JSON, NaN, a str with a lone surrogate), naming where."""
    if type(value) is bytes:  # the common cases first: this runs on every call
        return value, media_type or BINARY
    try:
        if type(value) is str:
            return value.encode("utf-8"), media_type or TEXT
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value), media_type or BINARY
        if isinstance(value, str):
            return value.encode("utf-8"), media_type or TEXT
    except UnicodeEncodeError as exc:
        found = lone_surrogate(str(value), _RETURN_VALUE)
        raise ArgumentError(found or f"{_RETURN_VALUE}: {exc}") from exc
    return canonical_json(value, name=_RETURN_VALUE), media_type or JSON


def decode_payload(data: bytes, media_type: str) -> Any:
    """The value `encode_payload` was given, from its bytes and media type."""
    base = media_type.split(";", 1)[0].strip().lower()
    if base == JSON or base.endswith("+json"):
        try:
            return json.loads(data)
        except (ValueError, RecursionError):  # a server's answer that only says it is JSON
            return decode_text(data, media_type)
    if base.startswith("text/") or "charset=" in media_type.lower():
        return decode_text(data, media_type)
    return data


def decode_text(data: bytes, media_type: str) -> str:
    """The payload as text, in the charset its media type names (UTF-8 otherwise);
    bytes that do not decode become U+FFFD rather than an error."""
    try:
        return data.decode(charset_of(media_type), errors="replace")
    except UnicodeError:  # a codec that fails whatever `errors` says
        return data.decode("utf-8", errors="replace")


_CONTROLS = [chr(c) for c in range(32) if chr(c) not in "\t\n\r\0\x1b"]
_MOSTLY_TEXT = 10  # a readable payload has at most 1 in 10 characters odd


def payload_text(
    payload: bytes, media_type: str | None = None, *, readable: bool = False
) -> str | None:
    """The payload as text, or None when it is binary: the one text-or-binary test.

    The bytes must decode, strictly, in the charset the media type names (UTF-8 when it
    names none, or one that is not a charset Python knows). Then they are text when the
    media type says so (``text/*``, JSON, XML, or any that names a charset); otherwise,
    with no media type or a binary one, only when they hold no NUL byte. Such text gives
    back the exact bytes (a resource, `show --json`, a media type to record).

    With `readable`, for what a model reads: text with a stray byte (a Latin-1 letter,
    NULs between names) is text too, decoded with U+FFFD for what does not decode, while
    at most 1 in 10 of its characters is odd; mostly bytes (an image, an archive) are not."""
    charset = charset_of(media_type) if media_type else "utf-8"
    try:
        text: str | None = payload.decode(charset)
    except UnicodeError:
        text = None
    if text is not None and not (media_type and _says_text(media_type)) and "\x00" in text:
        text = None
    if text is not None or not readable:
        return text
    text = decode_text(payload, media_type or "")
    odd = text.count("\ufffd") + sum(text.count(c) for c in _CONTROLS)
    return text if odd * _MOSTLY_TEXT <= len(text) else None


def _says_text(media_type: str) -> bool:
    """Whether a media type says its payload is text: ``text/*``, JSON, XML (``+json``
    and ``+xml`` included) or any that names a charset."""
    base = media_type.split(";", 1)[0].strip().lower()
    return (
        base.startswith("text/")
        or base.endswith(("json", "xml"))
        or "charset=" in media_type.lower()
    )


def charset_of(media_type: str) -> str:
    """The charset a media type names, if Python knows it as one (a server may name
    anything: `base64` is a codec of bytes, `idna` one of host names, `undefined` one
    that always fails); else UTF-8."""
    for part in media_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return _known_charset(value.strip().strip('"'))
    return "utf-8"


def _known_charset(name: str) -> str:
    try:
        codec = codecs.lookup(name)
    except LookupError:
        return "utf-8"
    if not codec._is_text_encoding or codec.name in _NOT_CHARSETS:
        return "utf-8"
    return name
