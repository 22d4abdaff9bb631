"""`addressable mcp serve` and `addressable mcp proxy`: their options, and running them.
Nothing here imports the `mcp` SDK until a command runs."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from typing import TYPE_CHECKING, Any

from ..core.errors import EXIT_OK, EXIT_USAGE, ConfigError

if TYPE_CHECKING:
    from ..store import Store
    from .config import McpConfig

# Where `mcp serve --http` reads its bearer token; without it, one is made at start.
TOKEN_VARIABLE = "ADDRESSABLE_MCP_TOKEN"
DESCRIPTION = (
    "Serve the toolkit over the Model Context Protocol, or stand in front of another MCP "
    "server so that its results are recorded: every tool result gets an id and a link to "
    "addressable://result/ID, readable as an MCP resource and by replay_result."
)
SERVE = (
    "serve adapters and replay_result as an MCP server on stdio "
    "(or streamable HTTP on 127.0.0.1 with --http PORT)"
)
PROXY = (
    "start an upstream MCP server (COMMAND ARGS... after --) and serve its tools on stdio, "
    "every result recorded, plus replay_result"
)


def add_arguments(parser: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """The `serve` and `proxy` subcommands, under the `mcp` command's parser."""
    sub = parser.add_subparsers(dest="mcp_command", required=True, metavar="SUBCOMMAND")
    p = sub.add_parser("serve", parents=[common], help=SERVE, description=SERVE)
    p.set_defaults(run=run_serve, creates=True)
    p.add_argument(
        "adapters",
        nargs="*",
        metavar="ADAPTER",
        help="adapters to serve: fetch, search, shell, files, memory (added to the config's)",
    )
    p.add_argument("--config", help="a TOML config file (see the README)")
    p.add_argument("--root", help="the folder files reads and shell runs in (default: .)")
    p.add_argument("--memory-dir", help="the memory tool's folder (default: ./memories)")
    p.add_argument("--index", help="search: a local SQLite FTS5 index file")
    p.add_argument("--searxng", metavar="URL", help="search: a SearXNG instance instead")
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="shell: run commands with this process's rights, not in a sandbox",
    )
    _add_cap(p)
    p.add_argument(
        "--http",
        type=_port,
        metavar="PORT",
        help="serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio, to "
        f"clients that send the bearer token it prints at start (or ${TOKEN_VARIABLE})",
    )

    p = sub.add_parser("proxy", parents=[common], help=PROXY, description=PROXY)
    p.set_defaults(run=run_proxy, creates=True)
    p.add_argument("--config", help="a TOML config file: timeout and [[tools]] rules")
    p.add_argument("--timeout", type=float, help="seconds an upstream call may take (60)")
    _add_cap(p)
    p.add_argument("upstream", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")


def _add_cap(p: argparse.ArgumentParser) -> None:
    """`--max-result-tokens`, which serve and proxy both take."""
    p.add_argument(
        "--max-result-tokens",
        type=_cap,
        metavar="N",
        help="the first-sight cap: a result over N tokens is handed as its head and tail, "
        "with how to read the rest (default 8000; 0: off)",
    )


def run_serve(store: Store, args: argparse.Namespace, out: Any) -> int:
    import anyio

    from ..kit import Toolkit
    from .config import load_config

    try:
        whole = _with_cap(load_config(args.config), args.max_result_tokens)
        config = whole.serve
        updates: dict[str, Any] = {}
        # How each value an adapter checks at start was given, for its error to name.
        where = f"config {args.config}: serve." if args.config else "serve."
        fields = ("files.root", "shell.cwd", "memory.root", "search.index", "search.searxng")
        given = {field: where + field for field in fields}
        if args.root:
            updates["files"] = config.files.model_copy(update={"root": args.root})
            updates["shell"] = config.shell.model_copy(update={"cwd": args.root})
            given |= {"files.root": "--root", "shell.cwd": "--root"}
        if args.no_sandbox:
            shell = updates.get("shell", config.shell)
            updates["shell"] = shell.model_copy(update={"sandbox": False})
        if args.memory_dir:
            updates["memory"] = config.memory.model_copy(update={"root": args.memory_dir})
            given["memory.root"] = "--memory-dir"
        if args.index or args.searxng:
            search = {"index": args.index, "searxng": args.searxng}
            updates["search"] = config.search.model_copy(update=search)
            given |= {"search.index": "--index", "search.searxng": "--searxng"}
        config = config.model_copy(update=updates)
        from .server import add_adapters, build_server, serve_http, serve_stdio

        kit = Toolkit(store, max_result_tokens=whole.max_result_tokens or None)
        add_adapters(kit, [*config.adapters, *args.adapters], config, given)
        for tool in kit.tools("anthropic"):  # the rules that give a tool its own cap
            rule = whole.rule_for(tool["name"])
            if rule is not None and rule.max_result_tokens is not None:
                kit.set_max_result_tokens(tool["name"], whole.cap_of(tool["name"]))
    except ConfigError as exc:
        return _usage(str(exc))
    server = build_server(kit)
    if args.http is not None:
        token = os.environ.get(TOKEN_VARIABLE) or secrets.token_urlsafe(32)
        said = f"the token in ${TOKEN_VARIABLE}" if os.environ.get(TOKEN_VARIABLE) else token
        print(
            f"addressable: serving MCP at http://127.0.0.1:{args.http}/mcp; clients send "
            f"the header Authorization: Bearer {said}",
            file=sys.stderr,
            flush=True,
        )
        anyio.run(serve_http, server, args.http, token)
    else:
        anyio.run(serve_stdio, server)
    return EXIT_OK


def run_proxy(store: Store, args: argparse.Namespace, out: Any) -> int:
    from .config import load_config

    command = list(args.upstream)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        return _usage("mcp proxy needs the upstream server's command after --")
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        return _usage(str(exc))
    if args.timeout is not None:
        if not args.timeout > 0:
            return _usage(f"--timeout must be more than 0 seconds, not {args.timeout}")
        config = config.model_copy(update={"timeout": args.timeout})
    config = _with_cap(config, args.max_result_tokens)
    from .proxystart import run

    return run(store, config, command)


def _usage(message: str) -> int:
    print(f"addressable: error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_USAGE


def _with_cap(config: McpConfig, cap: int | None) -> McpConfig:
    """`config` with the cap `--max-result-tokens` gave, if it gave one."""
    return config if cap is None else config.model_copy(update={"max_result_tokens": cap})


def _cap(text: str) -> int:
    from ..tools.firstsight import MIN_RESULT_TOKENS

    try:
        cap = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of tokens: {text!r}") from None
    if cap != 0 and cap < MIN_RESULT_TOKENS:
        raise argparse.ArgumentTypeError(
            f"at least {MIN_RESULT_TOKENS} tokens, or 0 for no cap, not {cap}"
        )
    return cap


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"a port is 1 to 65535, not {port}")
    return port
