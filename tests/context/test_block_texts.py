"""The text inside Anthropic's search results and text documents, in a tool result, is
text the model read: the stub's gist, the tokens an eviction saves and the text form of
`replay_result` all read it."""

from __future__ import annotations

from typing import Any

import pytest

import addressable as ad

TITLE = "Order history export"
SOURCE = "https://shop.example/orders"
BODY = "\n".join(
    f"order ORD-{7000 + n} shipped on day {n} to the warehouse in zone {n % 4}" for n in range(40)
)

SEARCH_RESULT = {
    "type": "search_result",
    "source": SOURCE,
    "title": TITLE,
    "content": [{"type": "text", "text": BODY}],
    "citations": {"enabled": True},
}
TEXT_DOCUMENT = {
    "type": "document",
    "source": {"type": "text", "media_type": "text/plain", "data": BODY},
    "title": TITLE,
}
CONTENT_DOCUMENT = {
    "type": "document",
    "source": {"type": "content", "content": [{"type": "text", "text": BODY}]},
    "title": TITLE,
}
PDF_DOCUMENT = {
    "type": "document",
    "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"},
}


def conversation(*blocks: dict[str, Any]) -> list[dict[str, Any]]:
    """A search whose result holds `blocks`, then the agent's answer."""
    return [
        {"role": "user", "content": "Which orders shipped?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "docs", "input": {"q": "orders"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": list(blocks)}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."}]},
    ]


@pytest.mark.parametrize(
    "block",
    [SEARCH_RESULT, TEXT_DOCUMENT, CONTENT_DOCUMENT],
    ids=["search_result", "text document", "content document"],
)
def test_a_blocks_text_is_read_for_the_stub_the_tokens_and_the_replay(
    disk_kit: ad.Toolkit, block: dict[str, Any]
) -> None:
    compacted = ad.compact(conversation(block), kit=disk_kit, keep_last=0)
    [evicted] = compacted.evicted
    stub = compacted.messages[2]["content"][0]["content"][0]["text"]
    assert "no output" not in stub  # the search found something
    assert "ORD-70" in stub  # the gist holds its values
    assert evicted.tokens_before >= ad.count_tokens(BODY)

    text = disk_kit.handle("replay_result", {"id": evicted.id})
    assert BODY in text and TITLE in text
    assert "not shown as text" not in text  # its text is what it holds
    assert ("shop.example/orders" in text) is (block is SEARCH_RESULT)
    # The content form gives the block back whole, as it was.
    assert ad.handle_content(disk_kit, "replay_result", {"id": evicted.id}, "anthropic") == [block]


def test_a_replay_names_only_the_blocks_whose_text_it_does_not_show(
    disk_kit: ad.Toolkit,
) -> None:
    compacted = ad.compact(conversation(SEARCH_RESULT, PDF_DOCUMENT), kit=disk_kit, keep_last=0)
    [evicted] = compacted.evicted
    stub = compacted.messages[2]["content"][0]["content"][0]["text"]
    assert "1 search_result, 1 document" in stub  # the stub names what the result held
    text = disk_kit.handle("replay_result", {"id": evicted.id})
    assert text.startswith(f"{TITLE}\n{SOURCE}\n{BODY}")
    assert text.endswith("\n[with it: 1 document, not shown as text]")


def test_blocks_of_the_wrong_kind_carry_no_text(disk_kit: ad.Toolkit) -> None:
    """A search result or document whose fields are not text is read as no text, not
    an error: the API is what says whether such a block is allowed."""
    odd = [
        {"type": "search_result", "title": 5, "content": "plain words"},
        {"type": "document", "source": "not a source"},
        {"type": "document", "source": {"type": "content", "content": 3}},
    ]
    found = ad.parse_messages(conversation(*odd))
    assert found.results[0].text == "plain words"


@pytest.mark.parametrize(
    "blocks",
    [
        [{"type": "weird", "x": 1}],
        [{"type": "text", "text": "ok"}],
        [PDF_DOCUMENT],
    ],
    ids=["a block of an unknown kind", "a short text", "a tiny file"],
)
def test_blocks_whose_stub_would_be_as_long_stay_whole(
    disk_kit: ad.Toolkit, blocks: list[dict[str, Any]]
) -> None:
    messages = conversation(*blocks)
    compaction = ad.compact(messages, kit=disk_kit, keep_last=0)
    assert compaction.evicted == []
    assert compaction.tokens_after <= compaction.tokens_before
    assert compaction.messages[2] == messages[2]
