"""Decoding an HTTP body within bounds: a small compressed answer cannot become a
large one in memory.

Only gzip and deflate are asked for (`ACCEPTED`); each layer of them (`gzip, gzip`
included, up to `MOST_LAYERS`) gives at most `STEP` bytes a step, so a reader that stops
at its limit stops within a step of it. An answer in an encoding that cannot be decoded
so (br, zstd, compress) is a `BadAnswer`, not read.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import addressable as ad

STEP = 64 * 1024  # bytes: the most one step of decoding a body gives
ACCEPTED = "gzip, deflate"  # the encodings asked for: those decoded within STEP a step
MOST_LAYERS = 4  # encodings one answer may stack (each is a decoder held while reading)
_UNBOUNDED = frozenset({"br", "zstd", "compress", "x-compress"})  # known, not decoded here


class BadAnswer(ad.AddressableError):
    """A server answered with what cannot be read as it says: a body that does not
    decode, in an encoding not asked for, a redirect to no URL that can be fetched; for
    a search backend, also what its API does not give (not its JSON, the wrong shape,
    more than `MAX_ANSWER` bytes). Nothing of it is kept.

    `response` is the answer whose body it was, when its status had been read (a
    write's outcome still follows from its status); None otherwise."""

    response: Any = None


def layers(response: Any, what: str) -> list[Inflate]:
    """The decoders of a response's Content-Encoding, the last applied first; an
    encoding that cannot be decoded within bounds is a `BadAnswer`. One unknown is
    passed over, as the HTTP clients do."""
    names = [n.strip().lower() for n in response.headers.get("content-encoding", "").split(",")]
    refused = [n for n in names if n in _UNBOUNDED]
    if len(names) > MOST_LAYERS:
        raise BadAnswer(
            f"{what}: the answer is encoded {len(names)} times over; at most "
            f"{MOST_LAYERS} encodings are decoded"
        )
    if refused:
        raise BadAnswer(
            f"{what}: the answer is encoded as {refused[0]}, which was not asked for and "
            f"is not decoded here (only {ACCEPTED})"
        )
    return [Inflate(n, what) for n in reversed(names) if n in ("gzip", "x-gzip", "deflate")]


def through(data: bytes, layers: Sequence[Inflate]) -> Iterator[bytes]:
    """`data` decoded through every layer, in pieces of at most `STEP` bytes; with no
    layer, `data` as it is (a raw chunk: one read of the network)."""
    if not layers:
        if data:
            yield data
        return
    for piece in layers[0].feed(data):
        yield from through(piece, layers[1:])


class Inflate:
    """One gzip or deflate layer, whose every step gives at most `STEP` bytes."""

    def __init__(self, name: str, what: str) -> None:
        self.name, self.what = name, what
        self.gzip = name != "deflate"
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16 if self.gzip else zlib.MAX_WBITS)
        self._first = True

    def feed(self, data: bytes) -> Iterator[bytes]:
        """What `data` decodes to, a step at a time; `BadAnswer` if it does not."""
        while True:
            try:
                out = self._zlib.decompress(data, STEP)
            except zlib.error as exc:
                if self._first and not self.gzip:
                    # deflate without zlib's header, as some servers send it (httpx too
                    # reads it so)
                    self._first = False
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise BadAnswer(f"{self.what}: the answer does not decode as {self.name}") from exc
            self._first = self._first and not data
            if out:
                yield out
            data = self._zlib.unconsumed_tail
            if not data and len(out) < STEP:
                return  # everything given is decoded: a full step may have more behind it
