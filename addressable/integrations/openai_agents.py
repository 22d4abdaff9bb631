"""The OpenAI Agents SDK (`openai-agents`): the kit's tools as `FunctionTool`s, and
compaction of each model call's input (`RunConfig(call_model_input_filter=...)`).

A call that failed (its text is `kit.handle`'s ``error: ...``) is sent to the model as
that text, as the SDK's own tools send a handled failure, and marked failed as they
are: an error on the call's function span in the run's trace."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..context.compaction import compact
from ..core.errors import MissingDependency
from ..kit import failed
from ..tools.replay import handle_content

if TYPE_CHECKING:
    from ..kit import Toolkit


def _agents() -> Any:
    try:
        import agents
    except ImportError as exc:
        raise MissingDependency("the OpenAI Agents SDK helpers", "agents", "openai-agents") from exc
    return agents


def tools(kit: Toolkit) -> list[Any]:
    """Every tool of the kit (`replay_result` included) as an Agents SDK `FunctionTool`;
    each call goes through `kit.ahandle`, a replayed result that held images comes back
    as Responses content."""
    agents = _agents()

    def make(definition: dict[str, Any]) -> Any:
        name = definition["name"]

        async def invoke(context: Any, arguments: str) -> Any:
            if name != "replay_result":
                content: str | list[Any] = await kit.ahandle(name, arguments)
            else:
                content = await asyncio.to_thread(
                    handle_content, kit, name, arguments, "openai-responses"
                )
            if not isinstance(content, str):
                return [_output(p) for p in content]
            if failed(kit, name, content):
                _mark_failed(agents, context, name, content)
            return content

        return agents.FunctionTool(
            name=name,
            description=definition.get("description", ""),
            params_json_schema=definition["parameters"],
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    return [make(dict(d)) for d in kit.tools("openai-responses")]


def _mark_failed(agents: Any, context: Any, name: str, text: str) -> None:
    """Set the error of the call's function span, as the SDK does for a tool failure
    it handles: its text only where the run lets the trace hold sensitive data."""
    config = getattr(context, "run_config", None)
    sensitive = config is None or config.trace_include_sensitive_data
    detail = text if sensitive else "Error details are redacted."
    span = agents.tracing.get_current_span()
    if span is not None:
        data = {"tool_name": name, "error": detail}
        span.set_error(
            agents.tracing.SpanError(message="Error running tool (non-fatal)", data=data)
        )


def _output(part: Any) -> Any:
    """A Responses content part as the Agents SDK's tool output dict."""
    if isinstance(part, dict) and part.get("type") == "input_text":
        return {"type": "text", "text": part.get("text", "")}
    if isinstance(part, dict) and part.get("type") == "input_image":
        return {"type": "image", "image_url": part.get("image_url")}
    return part


def input_filter(kit: Toolkit, **options: Any) -> Any:
    """A `call_model_input_filter` that compacts the input of every model call
    (`ad.compact` with `options`, such as `keep_last` or `trigger_tokens`)."""
    agents = _agents()

    def filter(data: Any) -> Any:
        model_data = data.model_data
        compacted = compact(model_data.input, kit=kit, **options).messages
        return agents.run.ModelInputData(input=compacted, instructions=model_data.instructions)

    return filter
