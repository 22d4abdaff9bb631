"""A real MCP server, written with the SDK, that adds a tool after it has listed its
tools: for the proxy's test that a tool added later is found, not refused."""

from __future__ import annotations

import mcp_types as types
from mcp.server.mcpserver import MCPServer

server = MCPServer("growing")


def planted(name: str) -> str:
    """A tool that exists only once `grow` has run."""
    return f"planted {name}"


@server.tool()
def grow() -> str:
    """Add the tool `planted`, a destructive one."""
    server.add_tool(planted, annotations=types.ToolAnnotations(destructive_hint=True))
    return "grown"


if __name__ == "__main__":
    server.run()
