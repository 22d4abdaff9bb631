"""How `addressable mcp proxy` starts and stops: the upstream server as a subprocess,
its handshake and first list of tools within the timeout, then the proxy in front of
it on stdio. What stops it early is one line on stderr and exit code 5."""

from __future__ import annotations

import math
import os
import sys

import anyio

from ..core.errors import EXIT_FAILURE, EXIT_OK
from ..kit import Toolkit
from ..recording.argerrors import one_line
from ..store import Store
from ..tools.replay import NAME as REPLAY
from .config import McpConfig
from .proxy import Proxy
from .sdk import Client, MCPError, StdioServerParameters, types
from .stdio import serving_stdio


def run(store: Store, config: McpConfig, command: list[str]) -> int:
    """Start `command` as the upstream and serve in front of it on stdio."""
    try:
        anyio.run(_main, store, config, command)
    except OSError as exc:
        print(f"addressable: error: cannot start {command[0]!r}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except (MCPError, BaseExceptionGroup) as exc:
        found = _mcp_error(exc)
        if found is None:
            raise
        # The upstream's words, on one line: they may hold a traceback of its own.
        said = one_line(found.error.message)
        print(f"addressable: error: the upstream server: {said}", file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK


def _mcp_error(exc: BaseException) -> MCPError | None:
    """The MCP error `exc` is, or the first one a group of errors holds."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _mcp_error(inner)) is not None:
                return found
    return None


async def _main(store: Store, config: McpConfig, command: list[str]) -> None:
    kit = Toolkit(store, max_result_tokens=config.cap_of(REPLAY))
    upstream = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    # The handshake and the first list of tools get the timeout a call gets: an upstream
    # that never answers `initialize` would keep the proxy waiting for good. The scope
    # is lifted once they are done (the client's own tasks live inside it).
    with anyio.CancelScope(deadline=anyio.current_time() + config.timeout) as starting:
        async with Client(upstream, cache=None) as client:
            proxy = Proxy(kit, config, client)
            await proxy.list_tools()
            starting.deadline = math.inf
            server = proxy.server()
            async with serving_stdio() as (read, write):
                await server.run(read, write, server.create_initialization_options())
    if starting.cancelled_caught:
        raise MCPError(
            code=types.INTERNAL_ERROR,
            message=f"it did not answer the MCP handshake within {config.timeout:g}s",
        )
