"""A real MCP server, written with the SDK, whose results are large: a 1 MB text, a
1.5 MB image beside a line of text; and two short texts, one with a `_meta` that changes
with every call."""

from __future__ import annotations

import base64

import mcp_types as types
from mcp.server.mcpserver import MCPServer

TEXT = "".join(f"row {n:05d}: the value of item {n} is {n * 37}\n" for n in range(27_000))
TEXT = TEXT[:1_000_000]
IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (1_500_000 // 256)
server = MCPServer("big")


@server.tool()
def dump() -> str:
    """A 1 MB text."""
    return TEXT


@server.tool()
def photo() -> types.CallToolResult:
    """A 1.5 MB image, and a caption."""
    data = base64.b64encode(IMAGE).decode("ascii")
    return types.CallToolResult(
        content=[
            types.TextContent(type="text", text="a photo"),
            types.ImageContent(type="image", data=data, mime_type="image/png"),
        ]
    )


CALLS = [0]


@server.tool()
def stamped() -> types.CallToolResult:
    """The same text each time, with a `_meta` that counts the calls."""
    CALLS[0] += 1
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="same")], _meta={"call": CALLS[0]}
    )


@server.tool()
def hello() -> str:
    """A short text."""
    return "hello"


if __name__ == "__main__":
    server.run()
