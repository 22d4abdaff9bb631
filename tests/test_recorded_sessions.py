"""Real recorded sessions (a coding agent and an airline agent, in the flattened shape,
from ../shared/sessions; copies in tests/fixtures) through compaction and replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import addressable as ad

SESSIONS = [
    json.loads(line)
    for line in (Path(__file__).parent / "fixtures" / "sessions.jsonl").read_text().splitlines()
]


@pytest.mark.parametrize("session", SESSIONS, ids=[s["session_id"] for s in SESSIONS])
def test_a_recorded_session_compacts_and_replays(session: dict[str, Any]) -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = session["messages"]
    result = ad.compact(messages, kit=kit, keep_last=3, system=session.get("system"))
    assert result.shape == "flat"
    assert result.evicted, "a session this long has results worth evicting"
    assert result.tokens_after < result.tokens_before
    tool_before = sum(ad.count_tokens(m["content"]) for m in messages if m["role"] == "tool")
    tool_after = sum(ad.count_tokens(m["content"]) for m in result.messages if m["role"] == "tool")
    assert tool_after <= 0.5 * tool_before
    for evicted in result.evicted:
        assert kit.handle("replay_result", {"id": evicted.id}) == messages[evicted.index]["content"]
        stub = result.messages[evicted.index]["content"]
        assert ad.parse_stub(stub) == ("claim", evicted.id)  # foreign results: Claims
        assert ad.count_tokens(stub) <= 60
    # every value a call passes was already visible where it was written
    text = json.dumps(result.messages, ensure_ascii=False)
    for message in messages:
        for call in message.get("tool_calls") or []:
            assert json.dumps(call["arguments"], ensure_ascii=False) in text
