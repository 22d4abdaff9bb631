"""The Anthropic SDK's tool runner (`client.beta.messages.tool_runner`): the kit's tools
as tools the runner runs, and compaction between its turns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._compaction import compact
from .._errors import MissingDependency
from .._replaytool import handle_content

if TYPE_CHECKING:
    from .._toolkit import Toolkit


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
            arguments = input if isinstance(input, dict) else {}
            return handle_content(kit, self.definition["name"], arguments, "anthropic")

    return [KitTool(dict(d)) for d in kit.tools("anthropic")]


def compact_runner(runner: Any, kit: Toolkit, **options: Any) -> None:
    """Compact the messages the runner sends next (`ad.compact` with `options`, such as
    `keep_last` or `trigger_tokens`): call it in the loop over the runner."""

    def compacted(params: Any) -> Any:
        return {**params, "messages": compact(params["messages"], kit=kit, **options).messages}

    runner.set_messages_params(compacted)
