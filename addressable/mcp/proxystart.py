"""How `addressable mcp proxy` starts and stops: the upstream server as a subprocess,
its handshake and first list of tools within the timeout, then the proxy in front of
it on stdio. What stops it early is one line on stderr and exit code 5."""

from __future__ import annotations

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
from .sdk import MCPError, StdioServerParameters
from .stdio import serving_stdio
from .upstream import Upstream


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
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    upstream = Upstream(params, config.timeout)
    async with anyio.create_task_group() as group:
        await group.start(upstream.run)  # its first start's failure stops the proxy
        proxy = Proxy(kit, config, upstream)
        # The first list of tools gets the timeout a call gets, as the handshake did.
        await proxy.list_tools()
        server = proxy.server()
        async with serving_stdio() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        group.cancel_scope.cancel()  # the upstream's task: the client is left, the process ended
