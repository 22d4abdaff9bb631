"""The state-document example in docs/state.md runs as written: a real Anthropic client
behind a mocked transport answers with the document, and the results a compaction evicts
are what the prompt carries."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx2

import addressable as ad
from tests.helpers import ROOT

STATE_PAGE = ROOT / "docs" / "state.md"


def _example() -> str:
    section = re.search(r"\A# The state document\n(.*)", STATE_PAGE.read_text(), re.S)
    assert section is not None
    blocks = re.findall(r"```python\n(.*?)```", section[1], re.S)
    assert blocks
    return str(blocks[0])


def test_the_state_document_example_runs(disk_kit: ad.Toolkit) -> None:
    import anthropic

    kit = disk_kit
    pages = {
        m: f"The {m} module: see {m}_notes.txt line {n}.\n" * 40
        for n, m in enumerate(["queue", "heapq", "json", "csv", "re"])
    }
    messages: list[Any] = [{"role": "user", "content": "Which modules are thread-safe?"}]
    for n, (module, text) in enumerate(pages.items()):
        result = kit.record(
            "read_doc",
            {"module": module},
            text.encode(),
            key=f"doc:{module}",
            determinism="deterministic",
        )
        call = {
            "type": "tool_use",
            "id": f"toolu_{n}",
            "name": "read_doc",
            "input": {"module": module},
        }
        messages.append({"role": "assistant", "content": [call]})
        answer = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": result.text}
        messages.append({"role": "user", "content": [answer]})

    task = ad.Task(text="Which stdlib modules document thread safety?", items=["queue", "heapq"])
    answer = ad.StateDocument(
        task=task,
        findings=[ad.Finding(item="queue", status="found", established="queue says so")],
        open=[ad.OpenItem(item="heapq", blocked_on="not read yet")],
    ).model_dump_json()
    prompts: list[str] = []

    def reply(request: httpx2.Request) -> httpx2.Response:
        prompts.append(json.loads(request.content)["messages"][0]["content"])
        body = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-5-5",
            "content": [{"type": "text", "text": answer}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }
        return httpx2.Response(200, json=body)

    client = anthropic.Anthropic(
        api_key="x", http_client=httpx2.Client(transport=httpx2.MockTransport(reply))
    )
    space: dict[str, Any] = {
        "ad": ad,
        "client": client,
        "MODEL": "claude-sonnet-5-5",
        "messages": messages,
        "kit": kit,
        "document": None,
        "log": [],
    }
    exec(_example(), space)

    assert space["result"].accepted
    assert space["document"] is not None and space["document"].findings[0].item == "queue"
    assert space["log"] == [space["result"].narrative]
    # The results the compaction evicted went to the model, whole.
    assert len(space["done"].evicted) == 2
    assert space["leaving"] == [pages["queue"], pages["heapq"]]
    assert pages["queue"].splitlines()[0] in prompts[0]
