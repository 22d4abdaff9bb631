"""A model without a model: answers the APIs' requests, in their wire formats, with a
script: look up some modules one by one, then take back an evicted result by the id its
stub shows (`replay_result`), then answer. Served through a mocked transport
(`httpx2.MockTransport`, what the SDKs use), so the SDKs' own code paths run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2

import addressable as ad

MODULES = ["json", "pathlib", "sqlite3", "logging", "textwrap"]
ANSWER = "All five modules are described."


def lookup_text(name: str) -> str:
    return "\n".join(
        f"{name} line {n}: the module {name} does thing {n} of many." for n in range(40)
    )


def make_kit(kit: ad.Toolkit) -> ad.Toolkit:
    @kit.tool(determinism="nondeterministic")
    def lookup(name: str) -> str:
        """Describe a Python module."""
        return lookup_text(name)

    return kit


class ScriptedModel:
    """Plays the script against any of the three APIs; keeps every request body."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.replayed: str | None = None  # the id it asked replay_result for
        self.replay_text: str | None = None  # what the replay_result call returned

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        path = request.url.path
        self.bodies.append(body)
        self.paths.append(path)
        n = len(self.bodies) - 1
        results = list(_results(path, body))
        if n < len(MODULES):
            action: tuple[str, dict[str, Any]] | None = ("lookup", {"name": MODULES[n]})
        elif n == len(MODULES):
            stubs = [ad.parse_stub(text) for text in results]
            found = [s[1] for s in stubs if s is not None]
            assert found, "no stub in the request: nothing was compacted"
            self.replayed = found[0]
            action = ("replay_result", {"id": found[0]})
        else:
            self.replay_text = results[-1]
            action = None
        return httpx2.Response(200, json=_reply(path, n, action))

    def stubbed(self) -> list[list[bool]]:
        """For each request, which of the results it carried were stubs, in order."""
        return [
            [ad.parse_stub(text) is not None for text in _results(path, body)]
            for path, body in zip(self.paths, self.bodies, strict=True)
        ]

    @property
    def stubs_sent(self) -> int:
        """How many stubs the requests carried, in all."""
        return sum(
            1
            for path, body in zip(self.paths, self.bodies, strict=True)
            for text in _results(path, body)
            if ad.parse_stub(text) is not None
        )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _results(path: str, body: dict[str, Any]) -> Iterator[str]:
    if path.endswith("/responses"):
        for item in body.get("input", []):
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                yield _text(item.get("output"))
    elif path.endswith("/chat/completions"):
        for message in body.get("messages", []):
            if message.get("role") == "tool":
                yield _text(message.get("content"))
    else:
        for message in body.get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result":
                    yield _text(block.get("content"))


def chat_body(message: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI Chat Completions answer (what `POST /chat/completions` returns) of one
    assistant `message`, ending in its tool calls when it makes some."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def responses_body(id: str, output: list[dict[str, Any]], tokens: int = 1) -> dict[str, Any]:
    """An OpenAI Responses API answer (what `POST /responses` returns) holding `output`."""
    return {
        "id": id,
        "object": "response",
        "created_at": 1700000000,
        "model": "gpt-4o",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": output,
        "usage": {
            "input_tokens": tokens,
            "output_tokens": tokens,
            "total_tokens": 2 * tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _reply(path: str, n: int, action: tuple[str, dict[str, Any]] | None) -> dict[str, Any]:
    if path.endswith("/responses"):
        output: list[dict[str, Any]]
        if action:
            output = [
                {
                    "type": "function_call",
                    "id": f"fc_{n}",
                    "call_id": f"call_{n}",
                    "name": action[0],
                    "arguments": json.dumps(action[1]),
                    "status": "completed",
                }
            ]
        else:
            output = [
                {
                    "type": "message",
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
                }
            ]
        return responses_body(f"resp_{n}", output, tokens=10)
    if path.endswith("/chat/completions"):
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if action:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}",
                    "type": "function",
                    "function": {"name": action[0], "arguments": json.dumps(action[1])},
                }
            ]
        else:
            message["content"] = ANSWER
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if action else "stop",
                    "logprobs": None,
                    "message": message,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }
    content: list[dict[str, Any]] = [{"type": "text", "text": f"Step {n}."}]
    if action:
        content.append(
            {"type": "tool_use", "id": f"toolu_{n}", "name": action[0], "input": action[1]}
        )
    else:
        content = [{"type": "text", "text": ANSWER}]
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": content,
        "stop_reason": "tool_use" if action else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }
