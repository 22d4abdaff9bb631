"""The plain loops of docs/recipes.md, one for each API, run as written against the real SDK
clients with a scripted model behind a mocked transport: tool calls through
`kit.handle`, a compaction, a `replay_result` that gives back what was evicted."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

import addressable as ad
from tests.helpers.scripted_model import ANSWER, MODULES, ScriptedModel, lookup_text, make_kit

MODEL = "claude-sonnet-5-5"
TASK = "Describe the modules json, pathlib, sqlite3, logging and textwrap."
# The context a loop allows before it compacts (100_000, say, in docs/recipes.md): the
# scripted session is short, so here every request is over it.
TRIGGER = 1


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return make_kit(disk_kit)


def check(model: ScriptedModel, kit: ad.Toolkit) -> None:
    assert len(model.bodies) == len(MODULES) + 2  # the lookups, the replay, the answer
    assert model.stubs_sent > 0
    assert model.replayed is not None
    # What replay_result gave back is the whole evicted result.
    assert model.replay_text in {lookup_text(m) for m in MODULES}


def test_anthropic_messages_loop(kit: ad.Toolkit) -> None:
    import anthropic

    model = ScriptedModel()
    client = anthropic.Anthropic(
        api_key="x", http_client=httpx2.Client(transport=model.transport())
    )
    # -- docs/recipes.md: plain loop, Anthropic Messages -----------------------------
    # fmt: off
    messages: list[Any] = [{"role": "user", "content": TASK}]
    while True:
        resp = client.messages.create(model=MODEL, max_tokens=1024, messages=messages,
                                      tools=kit.tools("anthropic"))
        messages.append({"role": "assistant", "content": resp.content})
        if resp.stop_reason != "tool_use":
            break
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.id, "content": kit.handle(b.name, b.input)}
            for b in resp.content if b.type == "tool_use"]})
        messages = ad.compact(messages, kit=kit, keep_last=2, trigger_tokens=TRIGGER,
                              cache_prices=ad.CachePrices()).messages
    # fmt: on
    # ---------------------------------------------------------------------------------
    check(model, kit)
    assert resp.content[0].type == "text" and resp.content[0].text == ANSWER


def test_openai_chat_completions_loop(kit: ad.Toolkit) -> None:
    import openai

    model = ScriptedModel()
    client = openai.OpenAI(api_key="x", http_client=httpx2.Client(transport=model.transport()))
    # -- docs/recipes.md: plain loop, OpenAI Chat Completions ------------------------
    # fmt: off
    messages: list[Any] = [{"role": "user", "content": TASK}]
    while True:
        msg = client.chat.completions.create(model="gpt-4o", messages=messages,
                                             tools=kit.tools("openai")).choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            break
        messages += [{"role": "tool", "tool_call_id": c.id,
                      "content": kit.handle(c.function.name, c.function.arguments)}
                     for c in msg.tool_calls if c.type == "function"]
        messages = ad.compact(messages, kit=kit, keep_last=2, trigger_tokens=TRIGGER,
                              cache_prices=ad.CachePrices()).messages
    # fmt: on
    # ---------------------------------------------------------------------------------
    check(model, kit)
    assert msg.content == ANSWER


def test_openai_responses_loop(kit: ad.Toolkit) -> None:
    import openai

    model = ScriptedModel()
    client = openai.OpenAI(api_key="x", http_client=httpx2.Client(transport=model.transport()))
    # -- docs/recipes.md: plain loop, OpenAI Responses -------------------------------
    # fmt: off
    items: list[Any] = [{"role": "user", "content": TASK}]
    while True:
        resp = client.responses.create(model="gpt-4o", input=items,
                                       tools=kit.tools("openai-responses"))
        items += resp.output
        calls = [i for i in resp.output if i.type == "function_call"]
        if not calls:
            break
        items += [{"type": "function_call_output", "call_id": c.call_id,
                   "output": kit.handle(c.name, c.arguments)} for c in calls]
        items = ad.compact(items, kit=kit, keep_last=2, trigger_tokens=TRIGGER,
                           cache_prices=ad.CachePrices()).messages
    # fmt: on
    # ---------------------------------------------------------------------------------
    check(model, kit)
    assert resp.output_text == ANSWER
