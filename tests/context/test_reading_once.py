"""`reading_once`: a caller that sends the same messages again and again (the benchmark)
has each one read once; what it is told is what a fresh read tells."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import pytest

import addressable as ad
from addressable.messages import MalformedMessages, message_tokens, parse, reading_once


def chat(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "look at the files"}]
    for k in range(n):
        out.append(
            {
                "role": "assistant",
                "content": f"reading part {k}",
                "tool_calls": [{"id": f"c{k}", "name": "read", "arguments": {"part": k}}],
            }
        )
        out.append({"role": "tool", "tool_call_id": f"c{k}", "content": f"part {k} says {k * 7}"})
    return out


def test_the_same_messages_at_other_places_are_found_where_they_are_now() -> None:
    messages = chat(4)
    shorter = [messages[0], *messages[3:]]  # the first turn dropped: every index moves
    with reading_once():
        assert parse(messages, "flat") == parse(chat(4), "flat")
        moved = parse(shorter, "flat")
    assert moved == parse(shorter, "flat")
    assert [r.index for r in moved.results] == [2, 4, 6]


def test_within_the_block_a_message_is_read_once() -> None:
    # The contract it rests on: a message changed in place is not read again.
    messages = chat(2)
    with reading_once():
        before = message_tokens(messages)
        messages[2]["content"] = "far longer than it was: " * 20
        assert message_tokens(messages) == before
    assert message_tokens(messages) > before


def test_a_tokenizer_set_within_the_block_counts_anew() -> None:
    messages = chat(2)
    with reading_once():
        by_default = message_tokens(messages)
        by_words = message_tokens(messages, tokenizer=lambda text: len(text.split()))
    assert by_words == message_tokens(messages, tokenizer=lambda text: len(text.split()))
    assert by_words != by_default


def test_a_malformed_message_is_named_where_it_is_each_time() -> None:
    messages = chat(2)
    orphan = {"role": "tool", "tool_call_id": "nobody", "content": "?"}
    with reading_once():
        for where in (5, 3):
            listed = [*messages[:where], orphan, *messages[where:]]
            with pytest.raises(MalformedMessages) as raised:
                parse(listed, "flat")
            assert raised.value.index == where


def test_compaction_within_the_block_gives_what_it_gives_outside() -> None:
    messages = chat(6)
    kit = ad.Toolkit(ad.open_store("memory://"))
    outside = ad.compact(messages, kit=kit, keep_last=2, format="flat")
    with reading_once():
        inside = ad.compact(messages, kit=kit, keep_last=2, format="flat")
    assert inside.messages == outside.messages


def anthropic(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "look at the files"}]
    for k in range(n):
        use = {"type": "tool_use", "id": f"t{k}", "name": "read", "input": {"part": k}}
        plan = f"Part {k - 1} said what I expected, so I will now read part {k}. " * 4
        out.append({"role": "assistant", "content": [{"type": "text", "text": plan}, use]})
        said = f"part {k} says {k * 7}: " + "lorem ipsum dolor sit amet " * 40
        result = {"type": "tool_result", "tool_use_id": f"t{k}", "content": said}
        out.append({"role": "user", "content": [result]})
    return out


def test_within_the_block_compaction_changes_copies_and_gives_back_the_rest_as_is() -> None:
    messages = anthropic(6)
    before = copy.deepcopy(messages)
    kit = ad.Toolkit(ad.open_store("memory://"))
    with reading_once():
        done = ad.compact(messages, kit=kit, keep_last=2, format="anthropic", trim_to=10)
    assert messages == before  # a stub is written into a copy, and so is a cut
    assert done.evicted and done.cut
    changed = {e.index for e in done.evicted} | set(done.cut)
    for n, message in enumerate(done.messages):
        assert (message is messages[n]) == (n not in changed)
    outside = ad.compact(before, kit=kit, keep_last=2, format="anthropic", trim_to=10)
    assert outside.messages == done.messages


def parallel(n: int, calls: int) -> list[dict[str, Any]]:
    """Anthropic turns of `calls` tool calls each: their results share one user message."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "look at the files"}]
    for k in range(n):
        uses = [
            {"type": "tool_use", "id": f"t{k}_{c}", "name": "read", "input": {"part": c}}
            for c in range(calls)
        ]
        out.append({"role": "assistant", "content": [{"type": "text", "text": "next"}, *uses]})
        results = [
            {
                "type": "tool_result",
                "tool_use_id": f"t{k}_{c}",
                "content": f"part {k}.{c}: " + "lorem ipsum dolor sit amet " * 30,
            }
            for c in range(calls)
        ]
        out.append({"role": "user", "content": results})
    return out


@pytest.mark.parametrize("limits", [{}, {"trim_to": 500}, {"target_tokens": 2500}])
def test_a_message_of_several_results_is_counted_as_each_stub_leaves_it(
    limits: dict[str, int],
) -> None:
    messages = parallel(8, 3)
    kit = ad.Toolkit(ad.open_store("memory://"))
    outside = ad.compact(messages, kit=kit, keep_last=1, format="anthropic", **limits)
    with reading_once():
        inside = ad.compact(messages, kit=kit, keep_last=1, format="anthropic", **limits)
        counted = message_tokens(inside.messages)
    assert inside.messages == outside.messages
    assert inside.evicted == outside.evicted
    assert inside.tokens_after == outside.tokens_after == counted


def test_of_two_faults_in_one_message_the_first_item_s_is_named() -> None:
    waiting = {"role": "assistant", "tool_calls": [{"id": "A", "name": "read", "arguments": {}}]}
    both = {
        "role": "assistant",
        "tool_calls": [
            {"id": "A", "name": "read", "arguments": {}},  # A has no result yet
            {"id": "B", "name": "bad\ud800", "arguments": {}},  # not UTF-8
        ],
    }
    for block in (contextlib.nullcontext(), reading_once()):
        with block, pytest.raises(MalformedMessages, match="used twice before a result"):
            parse([{"role": "user", "content": "go"}, waiting, both], "flat")
