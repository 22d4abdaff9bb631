"""LangChain v1 agents (`langchain.agents.create_agent`) and LangGraph: the kit's tools as
LangChain tools, and compaction of the graph's messages before each model call, as a
`middleware` for `create_agent` or a `pre_model_hook` for LangGraph's older
`create_react_agent`.

Both give the compacted messages back under their own ids, so LangGraph's
`add_messages` replaces each evicted `ToolMessage` in the state, in place: the state
stays compacted, and the next compaction starts from it.

A call that failed (its text is `kit.handle`'s ``error: ...``) gives a `ToolMessage`
with ``status="error"``, its text unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..context.compaction import compact
from ..core.errors import MissingDependency
from ..kit import failed

if TYPE_CHECKING:
    from ..kit import Toolkit


def tools(kit: Toolkit) -> list[Any]:
    """Every tool of the kit (`replay_result` included) as a LangChain tool whose calls go
    through `kit.handle` (`kit.ahandle` when the graph runs async), with the model's
    arguments as given, whatever their names; a failed call's `ToolMessage` has
    ``status="error"``."""
    try:
        from langchain_core.tools import BaseTool, ToolException
    except ImportError as exc:
        raise MissingDependency("the LangGraph helpers", "langgraph", "langchain-core") from exc

    def checked(name: str, text: str) -> str:
        # A raised ToolException is LangChain's way of saying a call failed: with
        # `handle_tool_error=True` its text is the ToolMessage's, status "error".
        if failed(kit, name, text):
            raise ToolException(text)
        return text

    class KitTool(BaseTool):
        # Not a StructuredTool: LangChain passes `config` and `run_manager` to a `_run`
        # that declares them, so StructuredTool's `_run` takes those names out of the
        # arguments, and a `self` argument clashes with its own `self`. This `_run`
        # declares only `**arguments` (`self` positional-only), so LangChain adds
        # nothing and a tool parameter of any name reaches the kit.
        def _run(self, /, **arguments: Any) -> str:
            return checked(self.name, kit.handle(self.name, arguments))

        async def _arun(self, /, **arguments: Any) -> str:
            return checked(self.name, await kit.ahandle(self.name, arguments))

    definitions: list[dict[str, Any]] = [dict(d) for d in kit.tools("anthropic")]
    return [
        KitTool(
            name=d["name"],
            description=d.get("description", ""),
            args_schema=d["input_schema"],
            handle_tool_error=True,
        )
        for d in definitions
    ]


def middleware(kit: Toolkit, **options: Any) -> Any:
    """A middleware for `create_agent(..., middleware=[...])`: before each model call,
    compacts the state's messages (`ad.compact` with `options`, such as `keep_last` or
    `trigger_tokens`) and gives back those it changed, which replace the originals by
    id."""
    try:
        from langchain.agents.middleware import AgentMiddleware
    except ImportError as exc:
        raise MissingDependency("the LangChain middleware", "langgraph", "langchain") from exc

    class CompactionMiddleware(AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            return _compacted(kit, state, options) or None

    return CompactionMiddleware()


def pre_model_hook(kit: Toolkit, **options: Any) -> Any:
    """A `pre_model_hook` for LangGraph's `create_react_agent`: compacts the state's
    messages (`ad.compact` with `options`) and gives back those it changed, which
    replace the originals by id."""

    def hook(state: Any) -> dict[str, Any]:
        return _compacted(kit, state, options) or {"messages": []}

    return hook


def _compacted(kit: Toolkit, state: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The state update that puts the compacted messages in place of the originals
    (empty: nothing was evicted)."""
    messages = state["messages"] if isinstance(state, dict) else state.messages
    result = compact(messages, kit=kit, **options)
    evicted = [result.messages[e.index] for e in result.evicted]
    return {"messages": evicted} if evicted else {}
