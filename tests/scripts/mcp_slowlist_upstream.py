"""An upstream whose first two tools/list (the proxy's at its start, and its client's)
are quick and whose later ones take 60 s (a server that builds its list lazily, from a
remote registry, say)."""

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server: Server[Any] = Server("slowlist")
TOOL = types.Tool(name="echo", description="echo", input_schema={"type": "object"})
listed = [0]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    listed[0] += 1
    if listed[0] > 2:
        await anyio.sleep(60)
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="echoed")])


server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
