"""`addressable mcp serve`: the toolkit's adapters, and `replay_result`, as an MCP server
on stdio or on streamable HTTP on loopback.

Every call goes through `await kit.ahandle(...)` on the server's own event loop: a tool
with an async path of its own (Fetch) is awaited there, the others run in a worker
thread; nothing synchronous that needs the loop is ever run inside it.
"""

from __future__ import annotations

import hmac
import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.errors import AddressableError, ArgumentError, ConfigError
from ..core.records import Record
from ..kit import Toolkit, failed_with, shown_record
from ..tools.replay import NAME as REPLAY
from ..tools.replay import ReplayTool
from . import results
from .config import ServeConfig
from .sdk import AccessToken, AuthSettings, Server, ServerRequestContext, types
from .stdio import serving_stdio

LOOPBACK = "127.0.0.1"
INSTRUCTIONS = (
    "Every tool result is stored under an id and carries a link to addressable://result/ID: "
    "replay_result(id=...) or resources/read gives it back exactly, after compaction too."
)


def add_adapters(
    kit: Toolkit,
    names: Sequence[str],
    config: ServeConfig,
    given: Mapping[str, str] | None = None,
) -> list[Any]:
    """Create the adapters named (each once, in the order given) on `kit`.

    A value an adapter cannot work with (a folder that is not there, a file that is not
    an index, a URL that is not http(s)) is a `ConfigError` before anything is served,
    one line naming the value as `given` says it was given (an option, a config file's
    field: "files.root" -> "--root"), else as ``serve.FIELD``."""

    def refused(field: str, problem: str) -> ConfigError:
        where = (given or {}).get(field, f"serve.{field}")
        return ConfigError(f"{where}: {problem}")

    # Imported by name, as the CLI does: the library below the CLI never imports them.
    adapters: Any = importlib.import_module("addressable.adapters")
    Fetch, Files, Memory, Search, Shell = (
        adapters.Fetch,
        adapters.Files,
        adapters.Memory,
        adapters.Search,
        adapters.Shell,
    )
    made: list[Any] = []
    for name in dict.fromkeys(names):
        if name == "fetch":
            fetch = config.fetch
            try:
                made.append(
                    Fetch(
                        kit, timeout=fetch.timeout, max_bytes=fetch.max_bytes, origins=fetch.origins
                    )
                )
            except ArgumentError as exc:  # an origin that is no http(s) URL
                raise refused("fetch.origins", str(exc)) from None
        elif name == "files":
            if (problem := _not_a_folder(config.files.root)) is not None:
                raise refused("files.root", problem)
            made.append(Files(kit, config.files.root, writable=config.files.writable))
        elif name == "memory":
            root = config.memory.root
            if (problem := _not_a_path(root)) is not None:
                raise refused("memory.root", problem)
            if Path(root).exists() and (problem := _not_a_folder(root)) is not None:
                raise refused("memory.root", problem)  # a folder not there yet is made
            try:
                made.append(Memory(kit, root))
            except OSError as exc:
                raise refused("memory.root", f"cannot make {root}: {exc.strerror}") from None
        elif name == "search":
            made.append(Search(kit, _backend(adapters, config, refused)))
        elif name == "shell":
            shell = config.shell
            if (problem := _not_a_folder(shell.cwd)) is not None:
                raise refused("shell.cwd", problem)
            options: dict[str, Any] = {"pure": shell.pure, "writes": shell.writes}
            options |= {"sandbox": shell.sandbox, "network": shell.network}
            options["read_only"] = shell.read_only
            if shell.env_allow is not None:
                options["env_allow"] = shell.env_allow
            if shell.allow is not None:
                options["allow"] = shell.allow
            try:
                made.append(
                    Shell(
                        kit,
                        cwd=shell.cwd,
                        timeout=shell.timeout,
                        max_bytes=shell.max_bytes,
                        **options,
                    )
                )
            except ArgumentError as exc:  # an entry of allow, pure, writes or env_allow
                raise refused("shell", str(exc).removeprefix("Shell: ")) from None
            except adapters.NoSandbox as exc:
                raise refused(
                    "shell",
                    f"{exc.why}; serve with --no-sandbox (or shell.sandbox = false in the "
                    "config) to run commands with the rights of this process",
                ) from None
        else:
            raise ConfigError(
                f"unknown adapter {name!r}: use fetch, search, shell, files or memory"
            )
    return made


def _backend(adapters: Any, config: ServeConfig, refused: Callable[[str, str], ConfigError]) -> Any:
    """The search backend the config names: a SearXNG instance, an index file, or an
    empty index in memory."""
    search = config.search
    if search.index and search.searxng:
        raise ConfigError("search: give an index or a SearXNG URL, not both")
    if search.searxng:
        try:
            return adapters.SearXNG(search.searxng)
        except ArgumentError as exc:  # its message shows the URL redacted
            raise refused("search.searxng", str(exc)) from None
    if not search.index:
        return adapters.LocalIndex(":memory:")
    if (problem := _not_a_path(search.index)) is not None:
        raise refused("search.index", problem)
    if not Path(search.index).is_file():
        raise refused("search.index", f"no index file at {search.index}")
    try:
        return adapters.LocalIndex(search.index)
    except ArgumentError as exc:  # not an index: refused, and the file left as it is
        raise refused("search.index", str(exc).removeprefix("LocalIndex: ")) from None


def _not_a_path(path: str) -> str | None:
    """Why `path` cannot name a file at all (the system refuses a NUL in one); None when
    it can."""
    return "a path cannot hold a NUL character" if "\0" in path else None


def _not_a_folder(path: str) -> str | None:
    """Why `path` is not a folder an adapter can work in; None when it is."""
    if (problem := _not_a_path(path)) is not None:
        return problem
    if Path(path).is_dir():
        return None
    if Path(path).exists():
        return f"{path} is not a folder"
    return f"no folder at {path}"


def build_server(kit: Toolkit, name: str = "addressable") -> Server[Any]:
    """An MCP server that offers every tool registered on `kit`."""
    server: Server[Any] = Server(name, instructions=INSTRUCTIONS)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [
            types.Tool(
                name=d["name"], description=d["description"], input_schema=dict(d["input_schema"])
            )
            for d in kit.tools("anthropic")
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        text = await kit.ahandle(params.name, arguments)
        record = _record_shown(kit, params.name, arguments, text)
        content: list[Any] = [types.TextContent(type="text", text=text)]
        if record is not None:
            content.append(results.link(record))
        # The record shown is the call's own (`shown_record`), but replay_result's: that
        # one shows an earlier call, whose status is not this call's.
        own = record if params.name != REPLAY else None
        return types.CallToolResult(content=content, is_error=failed_with(own, text))

    server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    results.install(server, kit)
    return server


def _record_shown(kit: Toolkit, tool: str, arguments: dict[str, Any], text: str) -> Record | None:
    """The record a tool result shows: the call's own, or for `replay_result` the one
    replayed. None when nothing was recorded (an unknown tool, arguments refused)."""
    if tool != REPLAY:
        return shown_record(kit, tool, text)
    wanted = arguments.get("id")
    if text.startswith("error: ") or not isinstance(wanted, str):
        return None
    try:  # the record replay_result replayed: a prefix names one of this session's
        return kit.get(ReplayTool(kit).resolve(wanted))
    except AddressableError:
        return None


async def serve_stdio(server: Server[Any]) -> None:
    async with serving_stdio() as (read, write):
        await server.run(read, write, server.create_initialization_options())


class _OneToken:
    """The SDK's bearer-token check, against the one token the server was started with:
    any process of the machine (or a page a browser shows) can reach loopback, and the
    tools may run commands."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id="addressable", scopes=[])


async def serve_http(server: Server[Any], port: int, token: str) -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp, bound to loopback only, for clients
    that send `Authorization: Bearer TOKEN`; each client has its own session."""
    import uvicorn

    origin = f"http://{LOOPBACK}:{port}"
    auth = AuthSettings(issuer_url=origin, resource_server_url=None)  # type: ignore[arg-type]
    app = server.streamable_http_app(host=LOOPBACK, auth=auth, token_verifier=_OneToken(token))
    config = uvicorn.Config(app, host=LOOPBACK, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
