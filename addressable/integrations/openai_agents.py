"""The OpenAI Agents SDK (`openai-agents`): the kit's tools as `FunctionTool`s, and
compaction of each model call's input (`RunConfig(call_model_input_filter=...)`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .._compaction import compact
from .._errors import MissingDependency
from .._replaytool import handle_content

if TYPE_CHECKING:
    from .._toolkit import Toolkit


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
                return await kit.ahandle(name, arguments)
            content = await asyncio.to_thread(
                handle_content, kit, name, arguments, "openai-responses"
            )
            return content if isinstance(content, str) else [_output(p) for p in content]

        return agents.FunctionTool(
            name=name,
            description=definition.get("description", ""),
            params_json_schema=definition["parameters"],
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    return [make(dict(d)) for d in kit.tools("openai-responses")]


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
