"""A message list nested deeper than copying or counting it can go (Python recurses
there) is `MalformedMessages` naming the message, from `parse_messages` and from
`compact`: never a RecursionError, whatever the depth, and nothing is recorded."""

from __future__ import annotations

from typing import Any

import pytest

import addressable as ad
from addressable.context.messages import MAX_NESTING


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def anthropic(given: object) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": "t1", "name": "s", "input": given}
    answer = {"type": "tool_result", "tool_use_id": "t1", "content": "x " * 3000}
    return [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [answer]},
        {"role": "assistant", "content": "ok"},
    ]


def deep_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [MAX_NESTING, 500, 5_000, 200_000])
def test_compact_refuses_a_list_nested_too_deep(depth: int) -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = anthropic(nested(depth))
    with pytest.raises(ad.MalformedMessages, match=r"^message 1: .*nest more than") as info:
        ad.compact(messages, kit=kit, keep_last=0)
    assert info.value.index == 1
    assert list(kit.store.records()) == []


def test_content_nested_too_deep_is_refused_in_every_shape() -> None:
    chat = [{"role": "user", "content": "q"}, {"role": "user", "content": deep_list(3000)}]
    with pytest.raises(ad.MalformedMessages, match=r"^message 1: "):
        ad.parse_messages(chat)


def test_a_list_that_holds_itself_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    loop.append(loop)
    with pytest.raises(ad.MalformedMessages, match=r"^message 1: "):
        ad.parse_messages(anthropic({"a": loop}))


def test_a_list_nested_as_deep_as_allowed_is_compacted() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = anthropic(nested(MAX_NESTING - 5))  # the message and its blocks are 4 more
    done = ad.compact(messages, kit=kit, keep_last=0)  # read, not refused
    # The call's arguments nest past what a record takes: its result stays whole, as
    # any result the store cannot take does.
    assert done.messages == messages


@pytest.mark.parametrize("depth", [500, 5_000])
def test_compact_and_counting_refuse_content_nested_too_deep(depth: int) -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = [*anthropic({"a": 1})[:3], {"role": "assistant", "content": deep_list(depth)}]
    for read in (
        lambda: ad.compact(messages, kit=kit, keep_last=0),
        lambda: ad.message_tokens(messages),
    ):
        with pytest.raises(ad.MalformedMessages, match=r"^message 3: .*nest more than"):
            read()
    assert list(kit.store.records()) == []


def test_a_syntax_tree_as_deep_as_tools_send_is_compacted() -> None:
    tree: dict[str, Any] = {"type": "leaf"}
    for _ in range(75):  # 150 levels of objects and lists
        tree = {"type": "node", "body": [tree]}
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = anthropic(tree)
    done = ad.compact(messages, kit=kit, keep_last=0)
    assert done.messages[1] == messages[1] and len(done.evicted) == 1


def test_compact_called_from_deep_in_a_stack_says_so_in_one_line() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = anthropic(nested(MAX_NESTING - 5))

    def deep(frames: int) -> Any:
        return deep(frames - 1) if frames else ad.compact(messages, kit=kit, keep_last=0)

    with pytest.raises(ad.MalformedMessages, match=r"^message \d+: "):
        deep(700)
