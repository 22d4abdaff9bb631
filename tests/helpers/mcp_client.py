"""The `addressable` command and its MCP servers as real subprocesses, and the SDK's own
client talking to them over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

from . import ROOT, SCRIPTS

UPSTREAM = SCRIPTS / "mcp_upstream.py"  # a real MCP server, written with the SDK


def process_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("ADDRESSABLE_STORE", None)
    return env


def addressable(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "addressable", *args],
        capture_output=True,
        text=True,
        env=process_env(),
        timeout=60,
    )


def session(store: Path, *args: str, cwd: Path | None = None) -> Client:
    command = ["-m", "addressable", "mcp", *args[:1], "--store", str(store), *args[1:]]
    params = StdioServerParameters(command=sys.executable, args=command, env=process_env(), cwd=cwd)
    return Client(params, cache=None)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def link_of(result: types.CallToolResult) -> types.ResourceLink:
    links = [c for c in result.content if isinstance(c, types.ResourceLink)]
    assert len(links) == 1, result
    assert links[0].uri.startswith("addressable://result/")
    return links[0]


def texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def records(store: Path) -> list[dict[str, Any]]:
    """The store's records, as another process's `addressable ls --json` sees them."""
    listed = addressable("ls", "--store", str(store), "--json")
    assert listed.returncode == 0, listed.stderr
    found: list[dict[str, Any]] = json.loads(listed.stdout)
    return found
