"""The MCP proxy reads what it was told: an upstream's error that carries the codes the
client uses for its own timeout and closed connection (-32001, -32000, JSON-RPC's
generic server error) is the upstream's error, not a timeout or a dead server; and a
long error is redacted before it is cut, so no start of a password is left."""

from __future__ import annotations

import mcp_types as types
from mcp.shared.exceptions import MCPError

from addressable.mcp.proxy import _first_text, _said_by_client


def test_only_the_client_s_own_words_are_a_timeout_or_a_closed_connection() -> None:
    assert _said_by_client(MCPError(code=types.CONNECTION_CLOSED, message="Connection closed"))
    timed_out = MCPError(code=types.REQUEST_TIMEOUT, message="Request 'tools/call' timed out")
    assert _said_by_client(timed_out)
    quota = MCPError(code=types.CONNECTION_CLOSED, message="Server error: quota exceeded")
    assert not _said_by_client(quota)
    assert not _said_by_client(MCPError(code=types.REQUEST_TIMEOUT, message="busy, try later"))


def test_a_long_error_is_redacted_before_it_is_cut() -> None:
    text = "x" * 282 + " https://bob:hunter2pw@api.example/x"
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=True
    )
    said = _first_text(result)
    assert said is not None and "hunte" not in said and len(said) <= 300
