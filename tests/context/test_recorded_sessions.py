"""Real recorded sessions (a coding agent and an airline agent, in the flattened shape,
from ../shared/sessions; copies in tests/fixtures) through compaction and replay."""

from __future__ import annotations

import json
from typing import Any

import pytest

import addressable as ad
from addressable.context import messages as _messages
from tests import helpers
from tests.helpers import modelloop, needs
from tests.helpers.modelloop import SDK_TYPES

SESSIONS = [
    json.loads(line) for line in (helpers.FIXTURES / "sessions.jsonl").read_text().splitlines()
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
        kind, shown = ad.parse_stub(stub) or ("", "")
        assert kind == "claim" and len(shown) >= 8 and evicted.id.startswith(shown)
        # the stub scales with what it replaces, within the default budget
        assert ad.count_tokens(stub) <= min(120, evicted.tokens_before // 2 + 20)


def cuts(session: dict[str, Any]) -> list[int]:
    """Three points of a session where the agent is about to make a call."""
    messages = session["messages"]
    points = []
    for share in (0.3, 0.5, 0.7):
        at = int(len(messages) * share)
        while messages[at]["role"] != "assistant" or not messages[at].get("tool_calls"):
            at += 1
        points.append(at)
    return points


def test_later_calls_find_what_they_need_in_stubs_or_kept_results() -> None:
    """Compacted at three points of each session, the stubs and the kept results show the
    values the calls after that point take from the results before it. Placeholders
    that carry nothing (what hosted context editing leaves) would lose them all."""
    lost = needed = 0
    for session in SESSIONS:
        for at in cuts(session):
            before, after = session["messages"][:at], session["messages"][at:]
            need = needs.needed_from_results(before, after, session.get("system"))
            kit = ad.Toolkit(ad.open_store("memory://"))
            result = ad.compact(before, kit=kit, keep_last=3, system=session.get("system"))
            shown = needs.results_text(result.messages)
            missing = {value for value in need if value not in shown}
            if session["session_id"].startswith("taubench"):
                assert not missing, (session["session_id"], at, missing)  # ids, dates: all
            lost += len(missing)
            needed += len(need)
    assert needed >= 20  # the sessions do depend on what their results said
    assert lost * 5 <= needed, (lost, needed)


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
    before = {r.call_id: r.text for r in _messages.parse(row["messages"]).results}
    for evicted in result.evicted:
        assert kit.handle("replay_result", {"id": evicted.id}) == before[evicted.call_id]
