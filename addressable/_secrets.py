"""Secrets named by reference, resolved only when sending, masked everywhere else.

A secret reference is ``secret:env:NAME``: the value of the environment variable NAME,
read at the moment a request is sent. Every value resolved is remembered (in memory
only) so that it can be masked: wherever it would reach the store, a log or the model,
it becomes the reference in brackets, ``[secret:env:NAME]``, which says plainly that a
value was masked and which one.
"""

from __future__ import annotations

import os
import re
import threading

from ._errors import ScopeError

_REF = re.compile(r"secret:env:([A-Za-z_][A-Za-z0-9_]*)")
_MIN_MASKED = 4  # characters; shorter values would mask ordinary text


def is_secret_ref(text: str) -> bool:
    return _REF.fullmatch(text) is not None


class Secrets:
    """The secrets a Toolkit has resolved, to mask them wherever data is kept."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}  # value -> reference
        self._lock = threading.Lock()

    def resolve(self, ref: str) -> str:
        """The value behind ``secret:env:NAME``; `ScopeError` if it is not set."""
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

    def remember(self, ref: str, value: str) -> None:
        if len(value) >= _MIN_MASKED:
            with self._lock:
                self._values[value] = ref

    def __bool__(self) -> bool:
        """Whether any secret has been resolved (and so may need masking)."""
        return bool(self._values)

    def known(self) -> dict[str, str]:
        """Reference by value, for checks that no value was kept anywhere."""
        with self._lock:
            return dict(self._values)

    def mask(self, text: str) -> str:
        """`text` with every known secret value replaced by ``[its reference]``."""
        for value, ref in self._ordered():
            if value in text:
                text = text.replace(value, f"[{ref}]")
        return text

    def mask_bytes(self, data: bytes) -> bytes:
        for value, ref in self._ordered():
            raw = value.encode("utf-8")
            if raw in data:
                data = data.replace(raw, f"[{ref}]".encode())
        return data

    def _ordered(self) -> list[tuple[str, str]]:
        # Longest first, so that a value containing another is masked whole.
        with self._lock:
            return sorted(self._values.items(), key=lambda item: -len(item[0]))
