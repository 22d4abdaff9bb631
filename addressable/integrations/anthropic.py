"""The Anthropic SDK's tool runner (`client.beta.messages.tool_runner`): the kit's tools
as tools the runner runs (`runner_tools` for an `Anthropic` client's runner,
`async_runner_tools` for an `AsyncAnthropic` one's, whose calls go through
`kit.ahandle`), and compaction between its turns; and exact token counts for Claude
models from Anthropic's counting endpoint.

A call that failed (its text is `kit.handle`'s ``error: ...``) is sent as a tool result
with ``is_error`` true, its text unchanged."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..context.compaction import compact
from ..core.errors import MissingDependency
from ..kit import failed
from ..tools.replay import NAME as REPLAY
from ..tools.replay import handle_content

if TYPE_CHECKING:
    from ..kit import Toolkit


def runner_tools(kit: Toolkit) -> list[Any]:
    """Every tool of the kit (`replay_result` included) as a tool the runner calls:
    each call goes through `kit.handle`, and a replayed result that held images comes
    back as content blocks."""
    try:
        from anthropic.lib.tools import BetaBuiltinFunctionTool
    except ImportError as exc:
        raise MissingDependency("the tool runner", "anthropic", "anthropic") from exc

    class KitTool(BetaBuiltinFunctionTool):
        def __init__(self, definition: dict[str, Any]) -> None:
            self.definition = definition

        def to_dict(self) -> Any:
            return self.definition

        def call(self, input: object) -> Any:
            name = self.definition["name"]
            arguments = input if isinstance(input, dict) else {}
            return _result(kit, name, handle_content(kit, name, arguments, "anthropic"))

    return [KitTool(dict(d)) for d in kit.tools("anthropic")]


def async_runner_tools(kit: Toolkit) -> list[Any]:
    """`runner_tools` for the runner of an `AsyncAnthropic` client: each call is awaited
    through `kit.ahandle` (`replay_result` runs in a thread)."""
    try:
        from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool
    except ImportError as exc:
        raise MissingDependency("the tool runner", "anthropic", "anthropic") from exc

    class AsyncKitTool(BetaAsyncBuiltinFunctionTool):
        def __init__(self, definition: dict[str, Any]) -> None:
            self.definition = definition

        def to_dict(self) -> Any:
            return self.definition

        async def call(self, input: object) -> Any:
            name = self.definition["name"]
            arguments = input if isinstance(input, dict) else {}
            if name == REPLAY:
                content = await asyncio.to_thread(handle_content, kit, name, arguments, "anthropic")
                return _result(kit, name, content)
            return _result(kit, name, await kit.ahandle(name, arguments))

    return [AsyncKitTool(dict(d)) for d in kit.tools("anthropic")]


def _result(kit: Toolkit, name: str, content: str | list[Any]) -> str | list[Any]:
    """A call's content for the runner; a failed call's is raised as the SDK's
    `ToolError`, which the runner sends as this content with ``is_error`` true."""
    if isinstance(content, str) and failed(kit, name, content):
        from anthropic.lib.tools import ToolError

        raise ToolError(content)
    return content


def compact_runner(runner: Any, kit: Toolkit, message: Any, **options: Any) -> None:
    """Compact what the runner sends next (`ad.compact` with `options`, such as
    `keep_last` or `trigger_tokens`), as a plain loop does once it has added the reply
    and its tool results: call it in the loop over the runner with the `message` it
    yielded. The reply's tools run here, once; the runner sends the results they gave."""
    _compact_next(runner, kit, message, runner.generate_tool_call_response(), options)


async def acompact_runner(runner: Any, kit: Toolkit, message: Any, **options: Any) -> None:
    """`compact_runner` for the runner of an `AsyncAnthropic` client."""
    _compact_next(runner, kit, message, await runner.generate_tool_call_response(), options)


def _compact_next(
    runner: Any, kit: Toolkit, message: Any, results: Any, options: dict[str, Any]
) -> None:
    """Compact the runner's history with the reply and its `results` (None: the reply
    was the last, no request follows) at its end, as the next request will have them;
    the runner adds those two itself, after what this leaves."""
    if results is None:
        return
    reply = message.to_param()

    def compacted(params: Any) -> Any:
        history = [*params["messages"], reply, results]
        done = compact(history, kit=kit, **options).messages
        return {**params, "messages": done[: len(done) - 2]}

    runner.set_messages_params(compacted)


def token_counter(client: Any, model: str) -> Callable[[str], int]:
    """Exact token counts of texts for a Claude model, from Anthropic's counting endpoint
    (`client.messages.count_tokens`), to pass as `tokenizer=` to `ad.compact` or the
    benchmark where cl100k_base's stand-in counts are not close enough. Each new text
    is one request (texts already counted are remembered), so it is for measuring, not
    for a hot loop. The framing a user message adds is counted once, on a one-character
    message, and taken off: a text counts as itself."""
    framing: list[int] = []

    def request(text: str) -> int:
        found = client.messages.count_tokens(
            model=model, messages=[{"role": "user", "content": text}]
        )
        return int(found.input_tokens)

    @functools.lru_cache(maxsize=4096)
    def count(text: str) -> int:
        if not text:
            return 0
        if not framing:
            framing.append(request(".") - 1)  # "." is one token
        return max(1, request(text) - framing[0])

    return count
