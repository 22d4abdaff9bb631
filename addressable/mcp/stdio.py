"""stdio for `mcp serve` and `mcp proxy`: the SDK's transport, with an answer to a
request it cannot read.

The SDK drops a line whose JSON it cannot parse, one nested past its parser's limit
(about 200 levels) among them, and a client that sent a request there would wait for
its answer for good. Here such a request gets one: a tool call an error result of one
line, as any refused call gets, and any other request a JSON-RPC error."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from pydantic import ValidationError

from .sdk import SessionMessage, stdio_server, types

TOO_DEEP = "error: the request is nested too deeply to be read; send flatter arguments"

Incoming = SessionMessage | Exception


@asynccontextmanager
async def serving_stdio() -> AsyncIterator[
    tuple[ObjectReceiveStream[Incoming], ObjectSendStream[SessionMessage]]
]:
    """The SDK's `stdio_server`, each request it cannot read answered."""
    async with stdio_server() as (read, write), anyio.create_task_group() as tasks:
        send, receive = anyio.create_memory_object_stream[Incoming](0)
        tasks.start_soon(_relay, read, send, write)
        yield receive, write
        tasks.cancel_scope.cancel()


async def _relay(
    read: ObjectReceiveStream[Incoming],
    out: ObjectSendStream[Incoming],
    write: ObjectSendStream[SessionMessage],
) -> None:
    """Pass on what the SDK read; answer a request it could not read instead."""
    async with out:
        async for item in read:
            answer = _answer(item) if isinstance(item, ValidationError) else None
            if answer is None:
                await out.send(item)
            else:
                await write.send(SessionMessage(answer))


def _answer(exc: ValidationError) -> types.JSONRPCResponse | types.JSONRPCError | None:
    """The answer to the request whose line `exc` could not read; None when the line
    is not a request (nothing to answer) or cannot be read here either."""
    errors = exc.errors(include_url=False)
    line = errors[0].get("input") if errors and errors[0]["type"] == "json_invalid" else None
    if not isinstance(line, str):
        return None
    try:
        request: Any = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(request, dict) or not isinstance(request.get("method"), str):
        return None
    rid = request.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return None  # a notification: nothing waits for an answer
    if request["method"] == "tools/call":
        text = types.TextContent(type="text", text=TOO_DEEP)
        result = types.CallToolResult(content=[text], is_error=True)
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return types.JSONRPCResponse(jsonrpc="2.0", id=rid, result=dumped)
    error = types.ErrorData(code=types.INVALID_PARAMS, message=TOO_DEEP.removeprefix("error: "))
    return types.JSONRPCError(jsonrpc="2.0", id=rid, error=error)
