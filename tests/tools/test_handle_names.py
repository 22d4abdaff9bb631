"""`kit.handle` and `kit.ahandle` with a tool name no API should send: not a string, or
megabytes long. Each is a one-line error the model can act on, never an exception."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import addressable as ad


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    @disk_kit.tool(determinism="nondeterministic")
    def lookup(name: str) -> str:
        return f"hello {name}"

    return disk_kit


@pytest.mark.parametrize(
    ("name", "kind"),
    [(["x"], "list"), ({"a": 1}, "dict"), (None, "NoneType"), (7, "int"), (b"lookup", "bytes")],
)
def test_a_name_that_is_not_a_string_is_an_error_text(
    kit: ad.Toolkit, name: Any, kind: str
) -> None:
    expected = f"error: a tool's name is a string, not {kind}; the tools are: lookup, replay_result"
    assert kit.handle(name, {}) == expected
    assert asyncio.run(kit.ahandle(name, {})) == expected
    assert ad.handle_content(kit, name, {}) == expected
    assert list(kit.store.records()) == []  # nothing ran


def test_a_huge_unknown_name_is_quoted_by_its_start(kit: ad.Toolkit) -> None:
    out = kit.handle("x" * 10_000_000, {})
    assert out == (
        f"error: there is no tool named {'x' * 40!r}… (10,000,000 characters); "
        "the tools are: lookup, replay_result"
    )
    assert kit.handle("lookp", {}) == (
        "error: there is no tool named 'lookp'; the tools are: lookup, replay_result"
    )
