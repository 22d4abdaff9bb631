"""`addressable mcp proxy` starts again an upstream that exited, on the next call, with a
bounded number of tries: a real upstream process, killed, with the SDK's client."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.helpers import SCRIPTS
from tests.helpers.mcp_client import run, session, texts

CRASHING = SCRIPTS / "mcp_crashing_upstream.py"


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


def test_a_killed_upstream_is_started_again_on_the_next_call(tmp_path: Path) -> None:
    store, log, refuse = tmp_path / "store", tmp_path / "starts.log", tmp_path / "refuse"
    config = tmp_path / "proxy.toml"
    config.write_text("restarts = 2\n")

    async def scenario() -> None:
        upstream = ("--", sys.executable, str(CRASHING), str(log), str(refuse))
        async with session(store, "proxy", "--config", str(config), *upstream) as client:
            first = int(texts(await client.call_tool("pid", {}))[0])
            _kill(first)  # the upstream crashes between two calls
            # The call sent to it fails, recorded: the proxy cannot know that it is gone.
            with pytest.raises(MCPError, match="closed the connection during 'pid'"):
                await client.call_tool("pid", {})
            # The next call starts it again, and runs on the new process.
            second = int(texts(await client.call_tool("pid", {}))[0])
            assert second != first
            assert log.read_text().split() == [str(first), str(second)]

            refuse.write_text("")  # from now on, every start fails
            _kill(second)
            with pytest.raises(MCPError, match="closed the connection during 'pid'"):
                await client.call_tool("pid", {})
            for _ in range(2):  # two tries, then never again
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("pid", {})
                assert raised.value.error.message.startswith(
                    "the upstream server has exited, and did not start again: "
                )
                assert raised.value.error.message.endswith(
                    "; it was not started again (2 tries failed); nothing was sent"
                )

    run(scenario)
    assert len(log.read_text().split()) == 2 + 2  # two that ran, two tries that failed
