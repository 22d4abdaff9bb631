"""A real MCP server, written with the SDK, for the proxy's restarts: each start is
written to a log file, and a start refuses (exits at once) while a marker file is there.
`pid` gives the process's id, for a test to kill it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

LOG, REFUSE = Path(sys.argv[1]), Path(sys.argv[2])
with LOG.open("a") as log:
    log.write(f"{os.getpid()}\n")
if REFUSE.exists():
    sys.exit(4)
server = MCPServer("crashing")


@server.tool()
def pid() -> str:
    """The id of this server's process."""
    return str(os.getpid())


if __name__ == "__main__":
    server.run()
