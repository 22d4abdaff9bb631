"""What a message holds as text, and its tokens: every string a model reads in a
message or a part of one, and what is not text (an image, a file's bytes) estimated.
The one count that compaction, its timing and the benchmark price requests with."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.tokens import Tokenizer, count_tokens, using_tokenizer
from .sdkviews import views

MESSAGE_OVERHEAD = 3  # tokens each message costs beyond its text (role and separators)


def typed(kind: object, kinds: frozenset[str]) -> bool:
    """Whether `kind` is one of `kinds` (a `type` that is not a str, which a malformed
    message may hold, is none of them)."""
    return isinstance(kind, str) and kind in kinds


def message_tokens(
    messages: Sequence[Any], system: str | None = None, *, tokenizer: Tokenizer | None = None
) -> int:
    """Tokens of a request: each message's text (content, tool calls as their JSON) plus
    `MESSAGE_OVERHEAD` a message, and the system prompt. Text is counted by `tokenizer`
    (any callable `str -> int`) when given, else by `count_tokens`. What is not text is
    estimated: `IMAGE_TOKENS` an image, a file's data by its size, and signatures,
    encrypted reasoning and audio as nothing (see `message_text`)."""
    messages = views(messages)[0]
    with using_tokenizer(tokenizer):
        total = count_tokens(system) + MESSAGE_OVERHEAD if system else 0
        for message in messages:
            text, media = _read(message, False)
            total += MESSAGE_OVERHEAD + count_tokens(text) + media
    return total


def content_tokens(content: Sequence[Any]) -> int:
    """Tokens of a tool result's content blocks, as `message_tokens` counts them."""
    text, media = _read(list(content), False)
    return count_tokens(text) + media


def message_text(value: Any) -> str:
    """Every string in a message (or a part of one), keys excepted, one a line: text,
    tool inputs as the JSON the model wrote, ids and names. What `message_tokens` counts,
    and where a benchmark looks for a value the model could see.

    Data no tokenizer reads is left out: an image's or a file's bytes (base64 `data`,
    `file_data`, a `data:` URL), thinking signatures, redacted thinking, encrypted
    reasoning and audio."""
    return _read(value, False)[0]


# Tokens an image counts for, whatever its size: Anthropic's vision docs give
# tokens = width * height / 750 and scale down an image over about 1,600 tokens (1092x1092
# px is about 1,590); OpenAI's high detail charges 765 for a 1024 px square. The images
# are not decoded to find their size, so the largest common cost stands for each one.
IMAGE_TOKENS = 1600
# A file's data (a PDF in an Anthropic document, a Chat `file`, a Responses input_file)
# counts one token per this many characters of its base64 text: its pages, which the
# APIs count at 1,500-3,000 tokens each, are not known here, and its size stands in.
FILE_CHARS_PER_TOKEN = 4

_UNREAD_KEYS = frozenset({"type", "role", "cache_control"})
# Parts that are an image: Anthropic's and LangChain's image, Chat's image_url,
# Responses' input_image, a computer call's screenshot, a generated image.
_IMAGE_PARTS = frozenset(
    {"image", "image_url", "input_image", "computer_screenshot", "image_generation_call"}
)
# Opaque to a model as text and counted as nothing: a thinking block's signature (the
# API checks it, the model does not read it), encrypted reasoning (Responses
# `encrypted_content`; the API may decrypt it, at a cost that cannot be told from here),
# audio (whose tokens depend on its length, not read here).
_OPAQUE_KEYS = frozenset({"signature", "thought_signature", "encrypted_content", "input_audio"})
_OPAQUE, _FILE = 1, 2


def _read(value: Any, image: bool) -> tuple[str, int]:
    """`message_text` of `value`, and the tokens of what is in it and is not text.
    `image`: `value` is in an image, which is already counted."""
    if isinstance(value, str):
        return value, 0
    if isinstance(value, Mapping):
        kind = value.get("type")
        media = 0
        if not image and typed(kind, _IMAGE_PARTS):
            image, media = True, IMAGE_TOKENS
        texts = []
        for key, v in value.items():
            if key in _UNREAD_KEYS or v is None:
                continue
            blob = _blob(kind, key, v)
            if blob == _FILE and not image and isinstance(v, str):
                media += -(-len(v) // FILE_CHARS_PER_TOKEN)
            if blob:
                continue
            # Tool arguments count as the JSON the model wrote, whether given as a string
            # (OpenAI) or as an object (Anthropic's input, the flattened shape).
            if key in ("arguments", "input") and isinstance(v, Mapping):
                # `default`: a value no API would take (bytes) is counted as written.
                texts.append(json.dumps(v, ensure_ascii=False, default=str))
                continue
            text, n = _read(v, image)
            texts.append(text)
            media += n
        return "\n".join(texts), media
    if isinstance(value, list):
        read = [_read(v, image) for v in value]
        return "\n".join(text for text, _ in read), sum(n for _, n in read)
    if isinstance(value, bool | int | float):
        return json.dumps(value), 0
    return "", 0


def _blob(kind: object, key: str, value: object) -> int:
    """Whether the field `key` of a part of type `kind` is data no tokenizer reads:
    `_OPAQUE` (counted as nothing), `_FILE` (an image's or a file's bytes), or 0."""
    if key in _OPAQUE_KEYS:
        return _OPAQUE
    if key == "data" and kind == "redacted_thinking":
        return _OPAQUE
    if key in ("data", "base64") and kind in ("audio", "input_audio"):
        return _OPAQUE
    if key == "result" and kind == "image_generation_call":
        return _FILE
    if key == "file_data":
        return _FILE
    # Anthropic's base64 source; LangChain's image, file and audio blocks.
    if key in ("data", "base64") and kind in ("base64", "image", "file"):
        return _FILE
    if key in ("url", "image_url", "file_url") and isinstance(value, str):
        return _FILE if value[:5].lower() == "data:" else 0
    return 0
