"""A message list read in the shape the caller names gets the errors `format="auto"`
gives: a field of the wrong type is a `MalformedMessages` naming its message, never
an exception from inside the reader."""

from __future__ import annotations

from typing import Any

import pytest

import addressable as ad


@pytest.mark.parametrize("calls", [1.5, True, "call_1", {"id": "call_1"}], ids=repr)
@pytest.mark.parametrize("shape", ["auto", "openai", "flat"])
def test_tool_calls_that_are_not_a_list_are_malformed(calls: Any, shape: str) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "x", "tool_calls": calls},
    ]
    with pytest.raises(ad.MalformedMessages) as caught:
        ad.parse_messages(messages, shape)
    assert caught.value.index == 1
    assert str(caught.value) == f"message 1: tool_calls is a {type(calls).__name__}, not a list"
