"""An MCP server, written with the SDK's low-level server, whose list of tools never
ends: every page names a next one. For the proxy's test of a list that does not end."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server: Server[Any] = Server("pager")
TOOL = types.Tool(name="echo", description="echo", input_schema={"type": "object"})


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL], next_cursor="again")


server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
