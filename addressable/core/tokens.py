"""Token counts in OpenAI's encodings: cl100k_base (the default) and o200k_base.

With tiktoken (a dependency of the package) counts are exact. The encoding files ship with
addressable (OpenAI's own files, checked against the hashes tiktoken checks them
against), so nothing is ever downloaded. An encoding that cannot be loaded (a damaged
installation) raises `IntegrityError`; a name with no file here raises `ArgumentError`:
with tiktoken installed a count is never an estimate in disguise.

Where tiktoken cannot be imported, counts are an estimate: one token per four bytes of
UTF-8, rounded up, which is close for English prose and undercounts code and non-Latin
text by up to a half. `token_counter()` and `tokens_exact()` say which one is in use; asking for an
encoding by name when it cannot be used warns once (`TokenEstimateWarning`).

`encoding_for_model` names the encoding of an OpenAI model (gpt-4o and later: o200k).
Claude's tokenizer is not published: for Claude models cl100k_base stands in, an
approximation of Anthropic's own count (which their token-counting endpoint gives).

`using_tokenizer(fn)` makes every count without an explicit encoding, inside the
block, come from `fn` (any callable `str -> int`): this is how `compact(tokenizer=)`
and `bench(tokenizer=)` count with the caller's tokenizer.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import gzip
import hashlib
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from .errors import ArgumentError, IntegrityError
from .ids import expect

DEFAULT_ENCODING = "cl100k_base"
FILES_DIR = Path(__file__).parent / "encodings"  # gzipped .tiktoken files


class EncodingFile(NamedTuple):
    """What tiktoken needs besides the merges: the split pattern and special tokens."""

    sha256: str  # of the uncompressed file, as tiktoken checks it
    pattern: str
    special: dict[str, int]


_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
FILES: dict[str, EncodingFile] = {
    "cl100k_base": EncodingFile(
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
        r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": EncodingFile(
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}
ENCODINGS = tuple(FILES)

# Model name prefixes, most specific first ("gpt-4o" before "gpt-4").
_MODELS: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("gpt-oss", "o200k_base"),  # o200k_harmony: o200k_base plus special tokens
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("gpt-35", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
    ("davinci-002", "cl100k_base"),
    ("babbage-002", "cl100k_base"),
    ("claude", "cl100k_base"),  # a stand-in: Claude's tokenizer is not published
)


class TokenEstimateWarning(UserWarning):
    """Exact counts in a named encoding were asked for, and tiktoken is not installed:
    the counts are estimates. Said once per encoding."""


def encoding_for_model(model: str) -> str:
    """The encoding that counts tokens for `model`: o200k_base for gpt-4o, gpt-4.1,
    gpt-4.5, gpt-5, o1, o3, o4 and gpt-oss; cl100k_base for gpt-4, gpt-3.5 and the
    embedding models, and as a stand-in for Claude models. `ArgumentError` for others."""
    name = model.strip().lower()
    for prefix in ("ft:", "openai/", "anthropic/"):
        name = name.removeprefix(prefix)
    for prefix, encoding in _MODELS:
        if name.startswith(prefix):
            return encoding
    raise ArgumentError(
        f"no encoding is known for model {model!r}: pass encoding= "
        f"({' or '.join(ENCODINGS)}) instead"
    )


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens in one encoding; says whether the counts are exact.

    Callable (`counter(text) -> int`), so it can be passed wherever a tokenizer is taken.
    """

    encoding: str
    exact: bool

    def __call__(self, text: str) -> int:
        return count_tokens(text, self.encoding)

    def __str__(self) -> str:
        if self.exact:
            return f"exact {self.encoding} counts (tiktoken)"
        return "estimated counts: one token per four bytes of UTF-8 (tiktoken is not installed)"


def token_counter(encoding: str | None = None, *, model: str | None = None) -> TokenCounter:
    """The counter `count_tokens` uses for `encoding` (or `model`'s encoding; else the
    default, cl100k_base): exact with tiktoken, else the estimate, and it says which."""
    if model is not None:
        if encoding is not None:
            raise ArgumentError("pass encoding= or model=, not both")
        encoding = encoding_for_model(model)
    name = _checked(encoding)
    exact = _encoding(name) is not None
    if not exact and encoding is not None:
        _warn_estimate(name)
    return TokenCounter(name, exact)


def tokens_exact(encoding: str | None = None) -> bool:
    """True when `count_tokens` gives exact counts in `encoding`, False when it estimates."""
    return _encoding(_checked(encoding)) is not None


def count_tokens(text: str, encoding: str | None = None) -> int:
    """Tokens in `text`: exact in `encoding` (default cl100k_base) with tiktoken,
    else bytes / 4 rounded up (`token_counter()` says which).

    Special-token markers such as ``<|endoftext|>`` are counted as ordinary text.
    """
    if type(text) is not str:
        expect(text, str, "count_tokens: text")
    if encoding is None:
        tokenizer = _TOKENIZER.get()
        if tokenizer is not None:
            return _call(tokenizer, text)
    name = DEFAULT_ENCODING if encoding is None else encoding
    if name not in FILES:
        _checked(name)  # raises, naming the encodings there are
    if encoding is not None and not _tiktoken_installed():
        _warn_estimate(name)
    if len(text) >= _CACHED_FROM:
        return _count_long(text, name)
    if len(text) >= _SHORT_CACHED_FROM:
        return _count_short(text, name)
    return _count(text, name)


Tokenizer = Callable[[str], int]
_TOKENIZER: ContextVar[Tokenizer | None] = ContextVar("addressable_tokenizer", default=None)


def tokenizer_in_use() -> Tokenizer | None:
    """The tokenizer `using_tokenizer` set for this block; None outside one."""
    return _TOKENIZER.get()


@contextlib.contextmanager
def using_tokenizer(tokenizer: Tokenizer | None) -> Iterator[None]:
    """Within the block, `count_tokens(text)` (no encoding) is `tokenizer(text)`; with
    None, nothing changes. Raises `ArgumentError` when `tokenizer` is not callable."""
    if tokenizer is None:
        yield
        return
    if not callable(tokenizer):
        raise ArgumentError(
            f"tokenizer must be a callable str -> int, got {type(tokenizer).__name__}"
        )
    token = _TOKENIZER.set(tokenizer)
    try:
        yield
    finally:
        _TOKENIZER.reset(token)


def _call(tokenizer: Tokenizer, text: str) -> int:
    token = _TOKENIZER.set(None)  # a tokenizer may itself call count_tokens
    try:
        n = tokenizer(text)
    finally:
        _TOKENIZER.reset(token)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ArgumentError(f"tokenizer must return a whole number of tokens, got {n!r}")
    return n


_CACHED_FROM = 512  # characters; longer texts are remembered: a context is counted often
_SHORT_CACHED_FROM = 24  # and shorter ones down to this, in a cache of their own


@functools.lru_cache(maxsize=8192)
def _count_long(text: str, name: str) -> int:
    return _count(text, name)


@functools.lru_cache(maxsize=16384)  # under 512 characters each: a few MB at most
def _count_short(text: str, name: str) -> int:
    return _count(text, name)


def _count(text: str, name: str) -> int:
    encoding = _encoding(name)
    if encoding is None:
        return -(-len(text.encode("utf-8")) // 4)
    return len(encoding.encode_ordinary(text))


def _checked(encoding: str | None) -> str:
    name = DEFAULT_ENCODING if encoding is None else encoding
    if name in FILES:
        return name
    if isinstance(name, str) and _known_to_tiktoken(name):
        raise ArgumentError(
            f"there is no local file for the encoding {name!r}, and encodings are never "
            f"downloaded: use {' or '.join(ENCODINGS)}"
        )
    raise ArgumentError(f"unknown encoding {name!r}: use {' or '.join(ENCODINGS)}")


def _known_to_tiktoken(name: str) -> bool:
    try:
        import tiktoken
    except ImportError:
        return False
    return name in tiktoken.list_encoding_names()


@functools.cache
def _tiktoken_installed() -> bool:
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        return False
    return True


_warned: set[str] = set()


def _warn_estimate(name: str) -> None:
    if name in _warned:
        return
    _warned.add(name)
    warnings.warn(
        TokenEstimateWarning(
            f"exact {name} token counts need tiktoken, which is not installed: counting one "
            "token per four bytes of UTF-8 instead; pip install tiktoken"
        ),
        stacklevel=3,
    )


@functools.cache
def _encoding(name: str) -> Any:
    """The tiktoken Encoding for `name`, or None without tiktoken."""
    try:
        import tiktoken
    except ImportError:
        return None
    spec = FILES[name]
    return tiktoken.Encoding(
        name=name,
        pat_str=spec.pattern,
        mergeable_ranks=_ranks(name, spec),
        special_tokens=spec.special,
    )


def _ranks(name: str, spec: EncodingFile) -> dict[bytes, int]:
    path = FILES_DIR / f"{name}.tiktoken.gz"
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError) as exc:
        raise IntegrityError(
            f"the {name} encoding file {path} is missing or unreadable ({exc}): "
            "reinstall addressable-tools"
        ) from exc
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        raise IntegrityError(
            f"the {name} encoding file {path} is damaged (its sha256 is not {spec.sha256}): "
            "reinstall addressable-tools"
        )
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks
