"""LangGraph (`langgraph.prebuilt.create_react_agent`): the kit's tools as LangChain
tools, and a `pre_model_hook` that compacts the graph's messages before each model call.

The hook gives the compacted messages back under their own ids, so LangGraph's
`add_messages` replaces each evicted `ToolMessage` in the state, in place: the state
stays compacted, and the next compaction starts from it.

A call that failed (its text is `kit.handle`'s ``error: ...``) gives a `ToolMessage`
with ``status="error"``, its text unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._compaction import compact
from .._errors import MissingDependency
from .._failed import failed

if TYPE_CHECKING:
    from .._toolkit import Toolkit


def tools(kit: Toolkit) -> list[Any]:
    """Every tool of the kit (`replay_result` included) as a LangChain `StructuredTool`
    whose calls go through `kit.handle` (`kit.ahandle` when the graph runs async); a
    failed call's `ToolMessage` has ``status="error"``."""
    try:
        from langchain_core.tools import StructuredTool, ToolException
    except ImportError as exc:
        raise MissingDependency("the LangGraph helpers", "langgraph", "langchain-core") from exc

    def make(definition: dict[str, Any]) -> Any:
        name = definition["name"]

        def checked(text: str) -> str:
            # A raised ToolException is LangChain's way of saying a call failed: with
            # `handle_tool_error=True` its text is the ToolMessage's, status "error".
            if failed(kit, name, text):
                raise ToolException(text)
            return text

        def run(**arguments: Any) -> str:
            return checked(kit.handle(name, arguments))

        async def arun(**arguments: Any) -> str:
            return checked(await kit.ahandle(name, arguments))

        return StructuredTool.from_function(
            func=run,
            coroutine=arun,
            name=name,
            description=definition.get("description", ""),
            args_schema=definition["input_schema"],
            handle_tool_error=True,
        )

    return [make(dict(d)) for d in kit.tools("anthropic")]


def pre_model_hook(kit: Toolkit, **options: Any) -> Any:
    """A `pre_model_hook` for `create_react_agent`: compacts the state's messages
    (`ad.compact` with `options`, such as `keep_last` or `trigger_tokens`) and gives back
    those it changed, which replace the originals by id."""

    def hook(state: Any) -> dict[str, Any]:
        messages = state["messages"] if isinstance(state, dict) else state.messages
        result = compact(messages, kit=kit, **options)
        return {"messages": [result.messages[e.index] for e in result.evicted]}

    return hook
