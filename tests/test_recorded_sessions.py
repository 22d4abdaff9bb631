"""Real recorded sessions (a coding agent and an airline agent, in the flattened shape,
from ../shared/sessions; copies in tests/fixtures) through compaction and replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import addressable as ad

from . import modelloop
from .test_compaction_properties import SDK_TYPES

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


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "session",
    SESSIONS[:2] + SESSIONS[3:],
    ids=[s["session_id"] for s in SESSIONS[:2] + SESSIONS[3:]],
)
def test_the_same_sessions_in_the_api_shapes(session: dict[str, Any], shape: str) -> None:
    row = modelloop.as_shape(session, shape)
    kit = ad.Toolkit(ad.open_store("memory://"))
    result = ad.compact(row["messages"], kit=kit, keep_last=3)
    assert result.shape == shape and result.evicted
    SDK_TYPES[shape].validate_python(result.messages)
    before = {r.call_id: r.text for r in ad._messages.parse(row["messages"]).results}
    for evicted in result.evicted:
        assert kit.handle("replay_result", {"id": evicted.id}) == before[evicted.call_id]
