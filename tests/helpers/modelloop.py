"""A model loop without a model: a recorded list of tool calls, run through kit.handle,
written as the message list of each API shape."""

from __future__ import annotations

import importlib
import json
import pydoc
from typing import Any

from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter

import addressable as ad

Step = tuple[str, dict[str, Any]]

# The official SDKs' request types for a message list of each shape they take.
SDK_TYPES: dict[str, Any] = {
    "anthropic": TypeAdapter(list[MessageParam]),
    "openai": TypeAdapter(list[ChatCompletionMessageParam]),
    "openai-responses": TypeAdapter(ResponseInputParam),
}


def call_id(shape: str, k: int) -> str:
    return f"toolu_{k:04}" if shape == "anthropic" else f"call_{k:04}"


def assistant(shape: str, k: int, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    cid = call_id(shape, k)
    if shape == "anthropic":
        return [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Step {k}: {name}."},
                    {"type": "tool_use", "id": cid, "name": name, "input": args},
                ],
            }
        ]
    if shape == "openai":
        return [
            {
                "role": "assistant",
                "content": f"Step {k}: {name}.",
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        ]
    if shape == "flat":
        return [
            {
                "role": "assistant",
                "content": f"Step {k}: {name}.",
                "tool_calls": [{"id": cid, "name": name, "arguments": args}],
            }
        ]
    return [{"type": "function_call", "call_id": cid, "name": name, "arguments": json.dumps(args)}]


def result(shape: str, k: int, name: str, text: str) -> dict[str, Any]:
    cid = call_id(shape, k)
    if shape == "anthropic":
        return {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": cid, "content": text}],
        }
    if shape == "openai":
        return {"role": "tool", "tool_call_id": cid, "content": text}
    if shape == "flat":
        return {"role": "tool", "tool_call_id": cid, "name": name, "content": text}
    return {"type": "function_call_output", "call_id": cid, "output": text}


def run(kit: ad.Toolkit, shape: str, steps: list[Step], task: str) -> list[dict[str, Any]]:
    """The message list of a session that made `steps`, each answered by kit.handle."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for k, (name, args) in enumerate(steps):
        messages += assistant(shape, k, name, args)
        messages.append(result(shape, k, name, kit.handle(name, args)))
    return messages


def pydoc_page(module: str) -> bytes:
    """The HTML documentation pydoc renders for a standard library module."""
    mod = importlib.import_module(module)
    return pydoc.html.page(pydoc.describe(mod), pydoc.html.document(mod, module)).encode()


def as_shape(row: dict[str, Any], shape: str) -> dict[str, Any]:
    """A flattened session rewritten in the OpenAI Chat or the Anthropic shape."""
    out: list[dict[str, Any]] = []
    for m in row["messages"]:
        if m["role"] == "assistant" and m.get("tool_calls"):
            if shape == "openai":
                out.append(
                    {
                        "role": "assistant",
                        "content": m.get("content"),
                        "tool_calls": [
                            {
                                "id": c["id"],
                                "type": "function",
                                "function": {
                                    "name": c["name"],
                                    "arguments": json.dumps(c["arguments"]),
                                },
                            }
                            for c in m["tool_calls"]
                        ],
                    }
                )
            else:
                out.append(
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": m.get("content") or "..."},
                            *(
                                {
                                    "type": "tool_use",
                                    "id": c["id"],
                                    "name": c["name"],
                                    "input": c["arguments"],
                                }
                                for c in m["tool_calls"]
                            ),
                        ],
                    }
                )
        elif m["role"] == "tool":
            if shape == "openai":
                out.append(
                    {"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]}
                )
            else:
                block = {
                    "type": "tool_result",
                    "tool_use_id": m["tool_call_id"],
                    "content": m["content"],
                }
                if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                    out[-1]["content"].append(block)
                else:
                    out.append({"role": "user", "content": [block]})
        else:
            out.append({"role": m["role"], "content": m.get("content") or "..."})
    return {**row, "messages": out}


def grep_session() -> list[dict[str, Any]]:
    """Five greps a foreign harness ran, each listing the same 40 handlers."""
    text = "\n".join(f"src/module_{i}.py:{i}: def handler_{i}(request):" for i in range(40))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "find the handlers"}]
    for k in range(5):
        messages += assistant("flat", k, "bash", {"command": f"grep -rn def{k} src"})
        messages.append(result("flat", k, "bash", text + f"\n# {k}"))
    return messages
