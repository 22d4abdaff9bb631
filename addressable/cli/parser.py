"""The command line's parser: the commands, their options, and --store and --json given
before the command or after it."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from .. import __version__
from ..core.errors import EXIT_USAGE
from ..core.tokens import DEFAULT_ENCODING, ENCODINGS
from .output import one_line, print_json
from .values import count, duration, size, when

EPILOG = """\
store:
  --store URL, or $ADDRESSABLE_STORE: memory://, disk:///path, or a directory.
  The default is a disk store in $ADDRESSABLE_HOME, or ./.addressable when unset.
  Only import and mcp create a store; every other command needs one that exists.

output:
  What tools and models wrote (names, keys, arguments, errors, content) is printed as
  plain text, with control characters shown escaped (\\x1b, \\u202e). To a pipe or a
  file, replay and show --raw write the exact stored bytes; to a terminal they escape
  control characters too, and leave binary content out.

options:
  --store and --json go before the command or after it (after it wins if given twice).
  --json prints one JSON document on stdout, for every command; export without -o,
  whose stdout is the bundle, prints it on stderr.

sizes:
  Powers of 1000, parsed and printed alike: 500MB is 500,000,000 bytes (B, KB, MB, GB,
  TB). Powers of 1024 are parsed when named so: 1KiB is 1,024 bytes (KiB, MiB, GiB).

ids:
  A result id is 16 hex characters; any unique prefix of 6 or more works, as in git.

exit codes:
  0  success
  1  verify found damage: corrupt or missing payloads, unreadable records, wrong
     indexes (verify --repair rebuilds those)
  2  bad usage: unknown option, a bad value (a limit, size, duration or store URL),
     malformed or ambiguous id, a re-run that is refused
  3  no result with that id, or it expired (removed by gc)
  4  a payload no longer matches its hash: it is not served
  5  no store at that path (nothing is created), the store or a bundle failed (disk,
     database, malformed file), or a re-run could not reach its source
  6  replay: the result is a tool's error (the tool raised); its stored bytes are
     still written, and stderr (or --json's "status" and "error") says so
  130  interrupted (Ctrl-C): what was recorded before it stays recorded

Errors go to stderr as one line: "addressable: error: <what was wrong and what to do>".
"""


class _Parser(argparse.ArgumentParser):
    """argparse with the house's one-line errors, and values such as ``-1d`` given to the
    option they follow (to be refused there, by name) rather than read as options."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> NoReturn:
        said = f"{one_line(message)}; see {self.prog} --help"
        if self.json_asked:  # the one JSON document on stdout, a usage error's too
            print_json({"error": said, "exit": EXIT_USAGE})
        self.exit(EXIT_USAGE, f"addressable: error: {said}\n")

    # Whether the command line asks for --json: a usage error is found before the
    # options are known, so it is read off the words (`parse_args` sets it).
    json_asked = False

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        words = sys.argv[1:] if args is None else list(args)
        _Parser.json_asked = "--json" in words
        return super().parse_args(words, namespace)


def _later(module: str, name: str) -> Callable[..., int]:
    """A command's function, loaded when the command runs: reading the command line
    (`--version`, `--help`) loads none of them."""

    def run(*args: Any) -> int:
        found: Callable[..., int] = getattr(
            importlib.import_module(f"addressable.cli.{module}"), name
        )
        return found(*args)

    return run


def build_parser() -> argparse.ArgumentParser:
    """The `addressable` parser: every command, with its options and the global ones."""
    parser = _Parser(
        prog="addressable",
        description="Inspect and maintain a store of addressable tool results.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"addressable {__version__}")
    _global_options(parser, after=False)
    common = _Parser(add_help=False)
    _global_options(common, after=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, run: Callable[..., int], help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            parents=[common],
            help=help,
            description=help,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(run=run, creates=False)
        return p

    p = command("ls", _later("listing", "run_ls"), "list records, oldest first")
    p.add_argument("--tool", help="only this tool")
    p.add_argument("--key", help="only this key")
    p.add_argument("--session", help="only records seen in this session")
    p.add_argument(
        "--since",
        type=when,
        help="only records seen since: a duration ago (30m, 2h, 7d) or an ISO time",
    )
    p.add_argument("--limit", type=count, help="show only the newest N (1 or more)")

    p = command(
        "show",
        _later("inspect", "run_show"),
        "show a record's metadata and content (of a long one, the first 100 lines or 64 KB; "
        "--raw or replay for all of it)",
    )
    p.add_argument("id")
    p.add_argument("--raw", action="store_true", help="write the exact stored bytes to stdout")

    p = command(
        "replay", _later("inspect", "run_replay"), "write a result's exact stored bytes to stdout"
    )
    p.add_argument("id")
    p.add_argument(
        "--verify",
        action="store_true",
        help="re-run a deterministic call and report change (public fetches and shell "
        "commands re-run from here; other tools only in the process that registers them)",
    )
    p.add_argument(
        "--run",
        action="store_true",
        dest="run_command",
        help="with --verify of a shell result, or of any record that came in a bundle: run "
        "it again (without --run, the call is only shown: a record is data, not your "
        "order); a fetch from a bundle never goes to this machine or its network",
    )

    p = command(
        "verify",
        _later("inspect", "run_verify"),
        "re-hash every payload and check the indexes; exit 1 naming each damaged record "
        "and each wrong index",
    )
    p.add_argument(
        "--repair",
        action="store_true",
        help="build wrong indexes (and the counts stats reads) again from the records",
    )
    command("stats", _later("inspect", "run_stats"), "counts and sizes of what the store holds")

    p = command(
        "gc", _later("maintain", "run_gc"), "remove old unpinned records and unreferenced payloads"
    )
    p.add_argument("--max-age", type=duration, help="remove records last seen longer ago (7d)")
    p.add_argument(
        "--max-bytes",
        type=size,
        help="then remove the oldest until payloads take at most this (500MB)",
    )

    p = command(
        "export",
        _later("maintain", "run_export"),
        "write the whole store as a self-contained bundle",
    )
    p.add_argument("-o", "--output", help="file to write (default: stdout)")
    p.add_argument(
        "--skip-damaged",
        action="store_true",
        help="leave out damaged records (named on stderr) rather than fail",
    )

    p = command(
        "import",
        _later("maintain", "run_import"),
        "add a bundle's records and payloads to the store",
    )
    p.add_argument("bundle", help="bundle file, or - for stdin")
    p.set_defaults(creates=True)  # the one command that may create the store

    from ..bench.cli import DESCRIPTION as BENCH
    from ..bench.cli import add_arguments as bench_arguments

    p = sub.add_parser(
        "bench",
        parents=[common],
        help="the token-savings benchmark (the bundled scenario by default)",
        description=BENCH,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(run=None)
    bench_arguments(p, encodings=ENCODINGS, default_encoding=DEFAULT_ENCODING)

    from ..mcp.cli import DESCRIPTION as MCP
    from ..mcp.cli import add_arguments as mcp_arguments

    p = sub.add_parser("mcp", help="serve the toolkit, or proxy a server, over MCP")
    p.description = MCP
    mcp_arguments(p, common)

    p = command(
        "rm",
        _later("maintain", "run_rm"),
        "remove records, pinned or not, and the payloads no other record points to",
    )
    p.add_argument("ids", nargs="+", metavar="ID")
    p = command("pin", _later("maintain", "run_pin"), "keep a record through every gc")
    p.add_argument("id")
    p = command("unpin", _later("maintain", "run_unpin"), "let gc remove a record again")
    p.add_argument("id")
    return parser


def _global_options(parser: argparse.ArgumentParser, *, after: bool) -> None:
    """--store and --json, on the main parser and (`after`) on every command's. After the
    command their default is to set nothing, so that they never undo what was given
    before it."""
    parser.add_argument(
        "--store",
        # set but empty: unset
        default=argparse.SUPPRESS if after else os.environ.get("ADDRESSABLE_STORE") or None,
        help="store URL or directory (default: $ADDRESSABLE_STORE, "
        "else $ADDRESSABLE_HOME, else ./.addressable)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if after else False,
        help="print one JSON document on stdout, for scripts",
    )
