"""The parts of the `mcp` SDK used here, imported in one place: without the extra,
importing this raises `MissingDependency` naming it."""

from __future__ import annotations

from ..core.errors import MissingDependency

try:
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError
    from mcp.shared.message import SessionMessage
except ImportError as exc:  # pragma: no cover - the dev extra installs it
    raise MissingDependency("addressable mcp", "mcp", "mcp") from exc

__all__ = [
    "AccessToken",
    "AuthSettings",
    "Client",
    "MCPError",
    "Server",
    "ServerRequestContext",
    "SessionMessage",
    "StdioServerParameters",
    "stdio_server",
    "types",
]
