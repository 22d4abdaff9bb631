"""`addressable mcp serve`: the toolkit's adapters, and `replay_result`, as an MCP server
on stdio or on streamable HTTP on loopback.

Every call goes through `await kit.ahandle(...)` on the server's own event loop: a tool
with an async path of its own (Fetch) is awaited there, the others run in a worker
thread; nothing synchronous that needs the loop is ever run inside it.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._errors import AddressableError, ConfigError
from .._failed import failed, shown_record
from .._models import Record
from .._replaytool import NAME as REPLAY
from .._toolkit import Toolkit
from . import results
from ._sdk import Server, ServerRequestContext, stdio_server, types
from .config import ServeConfig

LOOPBACK = "127.0.0.1"
INSTRUCTIONS = (
    "Every tool result is stored under an id and carries a link to addressable://result/ID: "
    "replay_result(id=...) or resources/read gives it back exactly, after compaction too."
)


def add_adapters(kit: Toolkit, names: Sequence[str], config: ServeConfig) -> list[Any]:
    """Create the adapters named (each once, in the order given) on `kit`."""
    # Imported by name, as the CLI does: the library below the CLI never imports them.
    adapters: Any = importlib.import_module("addressable.adapters")
    Fetch, Files, Memory, Search, Shell = (
        adapters.Fetch,
        adapters.Files,
        adapters.Memory,
        adapters.Search,
        adapters.Shell,
    )
    made: list[Any] = []
    for name in dict.fromkeys(names):
        if name == "fetch":
            made.append(Fetch(kit, timeout=config.fetch.timeout, max_bytes=config.fetch.max_bytes))
        elif name == "files":
            made.append(Files(kit, config.files.root, writable=config.files.writable))
        elif name == "memory":
            made.append(Memory(kit, config.memory.root))
        elif name == "search":
            search = config.search
            if search.index and search.searxng:
                raise ConfigError("search: give an index or a SearXNG URL, not both")
            if search.searxng:
                made.append(Search(kit, adapters.SearXNG(search.searxng)))
            else:
                if search.index and not Path(search.index).is_file():
                    raise ConfigError(f"search: no index file at {search.index}")
                made.append(Search(kit, adapters.LocalIndex(search.index or ":memory:")))
        elif name == "shell":
            shell = config.shell
            options: dict[str, Any] = {"pure": shell.pure, "writes": shell.writes}
            if shell.env_allow is not None:
                options["env_allow"] = shell.env_allow
            if shell.allow is not None:
                options["allow"] = shell.allow
            made.append(
                Shell(
                    kit,
                    cwd=shell.cwd,
                    timeout=shell.timeout,
                    max_bytes=shell.max_bytes,
                    **options,
                )
            )
        else:
            raise ConfigError(
                f"unknown adapter {name!r}: use fetch, search, shell, files or memory"
            )
    return made


def build_server(kit: Toolkit, name: str = "addressable") -> Server[Any]:
    """An MCP server that offers every tool registered on `kit`."""
    server: Server[Any] = Server(name, instructions=INSTRUCTIONS)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [
            types.Tool(
                name=d["name"], description=d["description"], input_schema=dict(d["input_schema"])
            )
            for d in kit.tools("anthropic")
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        text = await kit.ahandle(params.name, arguments)
        record = _record_shown(kit, params.name, arguments, text)
        content: list[Any] = [types.TextContent(type="text", text=text)]
        if record is not None:
            content.append(results.link(record))
        return types.CallToolResult(content=content, is_error=failed(kit, params.name, text))

    server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    results.install(server, kit)
    return server


def _record_shown(kit: Toolkit, tool: str, arguments: dict[str, Any], text: str) -> Record | None:
    """The record a tool result shows: the call's own, or for `replay_result` the one
    replayed. None when nothing was recorded (an unknown tool, arguments refused)."""
    if tool != REPLAY:
        return shown_record(kit, tool, text)
    wanted = arguments.get("id")
    if text.startswith("error: ") or not isinstance(wanted, str):
        return None
    try:
        return kit.get(wanted)
    except AddressableError:
        return None


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(server: Server[Any], port: int) -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp, bound to loopback only."""
    import uvicorn

    app = server.streamable_http_app(host=LOOPBACK)
    config = uvicorn.Config(app, host=LOOPBACK, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
