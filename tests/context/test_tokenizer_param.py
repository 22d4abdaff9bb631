"""A caller's tokenizer makes every count of `compact` and of the benchmark."""

from __future__ import annotations

from typing import Any

import pytest

import addressable as ad
from addressable.bench import bench
from addressable.bench.sessions import Session
from addressable.context.messages import MESSAGE_OVERHEAD
from tests.helpers.modelloop import grep_session


class Words:
    """One token per whitespace-separated word; remembers what it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        return len(text.split())


def words(text: str) -> int:
    return len(text.split())


def test_compact_counts_with_the_tokenizer_given(disk_kit: ad.Toolkit) -> None:
    messages = grep_session()
    tokenizer = Words()
    result = ad.compact(messages, kit=disk_kit, keep_last=3, tokenizer=tokenizer)
    assert tokenizer.calls > 0
    # By hand: every message costs its words plus the overhead a message.
    expected = sum(MESSAGE_OVERHEAD + words(ad.message_text(m)) for m in messages)
    assert result.tokens_before == expected
    assert result.tokens_after == sum(
        MESSAGE_OVERHEAD + words(ad.message_text(m)) for m in result.messages
    )
    assert result.evicted
    for e in result.evicted:
        assert e.tokens_before == words(messages[e.index]["content"])
        assert e.tokens_after == words(result.messages[e.index]["content"])
    default = ad.compact(messages, kit=ad.Toolkit(disk_kit.store), keep_last=3)
    assert default.tokens_before == ad.message_tokens(messages)
    assert default.tokens_before != result.tokens_before


def test_the_trigger_is_compared_in_the_tokenizer_s_count(disk_kit: ad.Toolkit) -> None:
    messages = grep_session()
    by_words = ad.message_tokens(messages, tokenizer=words)
    by_default = ad.message_tokens(messages)
    assert by_words < by_default
    trigger = (by_words + by_default) // 2  # over in the default count, under in words
    assert ad.compact(messages, kit=disk_kit, keep_last=0, trigger_tokens=trigger).evicted
    kept = ad.compact(
        messages,
        kit=ad.Toolkit(disk_kit.store),
        keep_last=0,
        trigger_tokens=trigger,
        tokenizer=words,
    )
    assert kept.evicted == [] and kept.tokens_before == by_words


def test_a_tokenizer_may_call_count_tokens_and_must_return_a_count(
    disk_kit: ad.Toolkit,
) -> None:
    messages = grep_session()
    same = ad.compact(messages, kit=disk_kit, keep_last=3, tokenizer=ad.count_tokens)
    assert same.tokens_before == ad.message_tokens(messages)
    with pytest.raises(ad.ArgumentError, match="whole number"):
        ad.compact(messages, kit=disk_kit, keep_last=3, tokenizer=lambda t: 1.5)  # type: ignore[arg-type,return-value]
    with pytest.raises(ad.ArgumentError, match="callable"):
        ad.compact(messages, kit=disk_kit, keep_last=3, tokenizer="words")  # type: ignore[arg-type]


def test_bench_counts_with_the_tokenizer_given() -> None:
    results = ["\n".join(f"line {k}.{n}: output of step {k}" for n in range(60)) for k in range(6)]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "the task"}]
    for k, text in enumerate(results):
        messages.append(
            {
                "role": "assistant",
                "content": f"step {k}",
                "tool_calls": [{"id": f"c{k}", "name": "bash", "arguments": {"c": f"s {k}"}}],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "name": "bash", "content": text})
    messages.append({"role": "assistant", "content": "done"})
    s = Session(session_id="s", messages=messages, shape="flat")
    tokenizer = Words()
    counted = bench([s], trigger=200, keep=2, tokenizer=tokenizer)
    assert tokenizer.calls > 0
    default = bench([s], trigger=200, keep=2)
    assert counted.strategies["none"].requests != default.strategies["none"].requests
    # Under "none" every request is the list so far, counted in words.
    prefixes = {ad.message_tokens(messages[:i], tokenizer=words) for i in range(len(messages) + 1)}
    turns = counted.per_session[0].per_turn["none"]
    assert turns and set(turns) <= prefixes
