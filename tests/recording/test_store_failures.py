"""A call whose result the store fails to keep raises `StoreError`, whatever the store's
backend raised: never an `ArgumentError` that calls the result unstorable."""

from __future__ import annotations

from typing import Any

import pytest

import addressable as ad
from addressable.store.backend import Backend


class _CutShort:
    """A backend whose library raised what the backend does not translate (as a client
    may on a reply cut short): every write of a record fails so."""

    def __init__(self, inner: Backend) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def put_pair(self, *args: Any, **kwargs: Any) -> bool:
        raise RuntimeError("the reply was cut short")


def test_a_store_failing_outside_its_own_errors_is_a_store_error() -> None:
    store = ad.KeyValueStore(_CutShort(ad.MemoryStore()._backend))  # type: ignore[arg-type]
    kit = ad.Toolkit(store)

    @kit.tool(determinism="deterministic")
    def echo(text: str) -> str:
        return text

    with pytest.raises(ad.StoreError, match="writing failed: the reply was cut short"):
        echo("x")
    with pytest.raises(ad.StoreError, match="the reply was cut short"):
        kit.record("t", {}, b"x", determinism="side_effect")
    assert list(store.records()) == []
