"""Exact counts for Claude models from Anthropic's counting endpoint, through the real
SDK on a mocked transport: the framing is taken off, texts are counted once, and the
counter serves as `tokenizer=` for compaction."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2

import addressable as ad
from addressable.integrations.anthropic import token_counter

FRAMING = 7  # what the endpoint adds for a user message, here


def _endpoint(seen: list[dict[str, Any]]) -> httpx2.MockTransport:
    def handle(request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/messages/count_tokens"
        body = json.loads(request.content)
        seen.append(body)
        (message,) = body["messages"]
        # One token a word, as the endpoint counts them here.
        return httpx2.Response(
            200, json={"input_tokens": FRAMING + len(message["content"].split())}
        )

    return httpx2.MockTransport(handle)


def _client(seen: list[dict[str, Any]]) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="x", http_client=httpx2.Client(transport=_endpoint(seen)))


def test_counts_are_the_endpoints_without_the_framing() -> None:
    seen: list[dict[str, Any]] = []
    count = token_counter(_client(seen), "claude-sonnet-5-5")
    assert count("three small words") == 3
    assert count("three small words") == 3  # remembered: no second request
    assert count("") == 0
    assert [b["messages"][0]["content"] for b in seen] == [".", "three small words"]
    assert {b["model"] for b in seen} == {"claude-sonnet-5-5"}


def test_the_counter_is_compactions_tokenizer(tmp_path: Any) -> None:
    seen: list[dict[str, Any]] = []
    count = token_counter(_client(seen), "claude-sonnet-5-5")
    kit = ad.Toolkit(ad.DiskStore(tmp_path / "store"))
    page = " ".join(f"word{i}" for i in range(400))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read the pages"}]
    for n in range(4):
        messages += [
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"t{n}", "name": "read", "input": {"n": n}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{n}", "content": page + f" end{n}"},
            ]},
        ]  # fmt: skip
    done = ad.compact(messages, kit=kit, keep_last=1, tokenizer=count)
    # Counted by the endpoint (a word a token), not by cl100k_base (two or three a word).
    stand_in = ad.compact(messages, kit=kit, keep_last=1)
    assert 4 * 401 <= done.tokens_before < stand_in.tokens_before
    assert done.tokens_after < done.tokens_before
    assert any(b["messages"][0]["content"] == page + " end0" for b in seen)
