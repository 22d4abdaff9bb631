"""With `target_tokens`, the results the agent's latest messages use go last, read the
same in every shape: its latest calls are read from the parsed conversation, in the
Responses API too, where a call is an item with no role."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import addressable as ad

ORDER = "ORD-77812345"


def page(tag: str, extra: str = "") -> str:
    return (
        "\n".join(f"{tag} row {i}: nothing in particular on this row {i}" for i in range(60))
        + extra
    )


RESULTS = [
    ("orders", page("orders", f"\norder {ORDER} is pending")),  # what the latest call uses
    ("weather", page("weather")),
    ("misc", page("misc")),
]
# The agent's latest turn: the call that uses the order id, and three more beside it.
LAST_TURN = [("c9", "cancel", {"order": ORDER})] + [(f"c9{k}", "noop", {"k": k}) for k in range(3)]

Messages = list[dict[str, Any]]


def chat() -> Messages:
    m: Messages = [{"role": "user", "content": "help with my order"}]
    for k, (q, text) in enumerate(RESULTS):
        m.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_chat_call(f"c{k}", "q", {"q": q})],
            }
        )
        m.append({"role": "tool", "tool_call_id": f"c{k}", "content": text})
    m.append(
        {"role": "assistant", "content": None, "tool_calls": [_chat_call(*c) for c in LAST_TURN]}
    )
    m += [{"role": "tool", "tool_call_id": c[0], "content": "ok"} for c in LAST_TURN]
    return m


def _chat_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"id": call_id, "type": "function", "function": function}


def anthropic() -> Messages:
    m: Messages = [{"role": "user", "content": "help with my order"}]
    for k, (q, text) in enumerate(RESULTS):
        use = {"type": "tool_use", "id": f"c{k}", "name": "q", "input": {"q": q}}
        m.append({"role": "assistant", "content": [use]})
        m.append({"role": "user", "content": [_anthropic_result(f"c{k}", text)]})
    uses = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in LAST_TURN]
    m.append({"role": "assistant", "content": uses})
    m.append({"role": "user", "content": [_anthropic_result(c[0], "ok") for c in LAST_TURN]})
    return m


def _anthropic_result(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text}


def responses() -> Messages:
    m: Messages = [{"role": "user", "content": "help with my order"}]
    for k, (q, text) in enumerate(RESULTS):
        m.append(_responses_call(f"c{k}", "q", {"q": q}))
        m.append({"type": "function_call_output", "call_id": f"c{k}", "output": text})
    # One turn: what the agent says, then its calls, items without a role.
    m.append({"type": "message", "role": "assistant", "content": "Cancelling it."})
    m += [_responses_call(*c) for c in LAST_TURN]
    m += [{"type": "function_call_output", "call_id": c[0], "output": "ok"} for c in LAST_TURN]
    return m


def _responses_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(args),
    }


@pytest.mark.parametrize("build", [chat, anthropic, responses], ids=lambda b: b.__name__)
def test_the_result_the_latest_calls_use_goes_last_in_every_shape(
    disk_kit: ad.Toolkit, build: Callable[[], Messages]
) -> None:
    messages = build()
    full = ad.compact(messages, kit=disk_kit, keep_last=1, trigger_tokens=10**9).tokens_before
    compacted = ad.compact(messages, kit=disk_kit, keep_last=1, target_tokens=full - 1500)
    assert [e.call_id for e in compacted.evicted] == ["c1", "c2"]
    # With room for none, it goes too: it was ranked last, not kept.
    deep = ad.compact(messages, kit=ad.Toolkit(disk_kit.store), keep_last=1, target_tokens=0)
    assert [e.call_id for e in deep.evicted] == ["c0", "c1", "c2"]
