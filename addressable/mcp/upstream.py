"""The upstream server of `addressable mcp proxy`: its process and the client that talks
to it, kept in a task of their own, and started again when asked after it exited.

A client's task group must be left in the task that entered it, so one task holds it
for the proxy's whole life: it starts the server, waits until a restart is asked, then
leaves the client (ending what is left of the process) and starts it again.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
from anyio.abc import TaskStatus

from .sdk import Client, MCPError, StdioServerParameters, types


class Upstream:
    """The upstream server's process and client; `run` in a task group holds them."""

    def __init__(self, params: StdioServerParameters, timeout: float) -> None:
        self.params = params
        self.timeout = timeout
        self.client: Client | None = None
        self.error: Exception | None = None  # why the last start failed
        self._wanted = anyio.Event()  # a restart was asked
        self._ready = anyio.Event()  # the start asked last has ended, well or not

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start the server, and again each time `restart` asks. The first start's
        failure is raised (the proxy does not start); a later one's is kept in `error`."""
        first = True
        while True:
            self.client = None
            held = False
            try:
                held = await self._hold(task_status if first else None)
            except Exception as exc:
                if first:
                    raise
                held = self.client is not None  # the end of a dead one, not a failed start
                if not held:
                    self.error = exc
            first = False
            self.client = None
            if not held:
                self._ready.set()  # a start that failed: `restart` says why
            await self._wanted.wait()
            self._wanted = anyio.Event()

    async def _hold(self, status: TaskStatus[None] | None) -> bool:
        """Start the server and hold its client until a restart is asked: True once it
        was held."""
        # The handshake gets the timeout a call gets; the scope is lifted once it is
        # done (the client's own tasks live inside it).
        with anyio.CancelScope(deadline=anyio.current_time() + self.timeout) as starting:
            async with Client(self.params, cache=None) as client:
                starting.deadline = math.inf
                self.client, self.error = client, None
                if status is not None:
                    status.started()
                self._ready.set()
                await self._wanted.wait()
        if starting.cancelled_caught and self.client is None:
            raise MCPError(
                code=types.INTERNAL_ERROR,
                message=f"it did not answer the MCP handshake within {self.timeout:g}s",
            )
        return self.client is not None

    async def restart(self) -> Exception | None:
        """Start the server again; None when it started, else why it did not."""
        self._ready = anyio.Event()
        self._wanted.set()
        await self._ready.wait()
        return None if self.client is not None else (self.error or _unknown())

    def current(self) -> Any:
        """The client of the running server."""
        if self.client is None:
            raise MCPError(code=types.INTERNAL_ERROR, message="the upstream server is not running")
        return self.client


def _unknown() -> Exception:
    return MCPError(code=types.INTERNAL_ERROR, message="the upstream server did not start")
