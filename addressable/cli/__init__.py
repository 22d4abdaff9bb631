"""The `addressable` command: look into a store, replay, verify, collect garbage, move it.

`main` parses the command line, opens the store and runs the command, turning each
kind of error into its exit code; the parser, the commands and the output live in the
modules beside this one."""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import (
    EXIT_FAILURE,
    EXIT_INTEGRITY,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
    AddressableError,
    AmbiguousId,
    ArgumentError,
    BadId,
    IntegrityError,
    NoStore,
    NotFound,
    NotReplayable,
)
from .output import Printer, one_line, print_json, visible
from .parser import EPILOG, build_parser

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["EPILOG", "main"]


EXIT_INTERRUPTED = 130  # as a shell reports a command that SIGINT stopped


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Ctrl-C stops a command with one line,
    not a traceback: every record it acknowledged is already stored."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print(f"addressable: interrupted (exit {EXIT_INTERRUPTED})", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    fail = functools.partial(_fail, as_json=bool(getattr(args, "json", False)))
    if args.command == "bench":
        from rich.console import Console

        from ..bench.cli import run_bench

        try:
            return run_bench(args, Console(highlight=False, soft_wrap=True))
        except (AddressableError, OSError) as exc:
            return fail(exc, EXIT_FAILURE)
    out = Printer()
    try:
        store, made = _opened(args)
        code: int = EXIT_FAILURE  # until the command says otherwise
        try:
            code = args.run(store, args, out)
            return code
        finally:
            # A store this command made and then failed to fill (a refused bundle, an
            # upstream that never started) is not left behind as an empty folder.
            unmake = made is not None and code != EXIT_OK and _empty(store)
            store.close()
            if unmake:
                shutil.rmtree(str(made), ignore_errors=True)
    except NoStore as exc:
        return fail(
            f"no store at {visible(str(exc.path))}: {exc.why}; only import and mcp create "
            "a store: check --store and $ADDRESSABLE_STORE",
            EXIT_FAILURE,
        )
    except (BadId, AmbiguousId, NotReplayable, ArgumentError) as exc:
        return fail(exc, EXIT_USAGE)
    except NotFound as exc:
        return fail(exc, EXIT_NOT_FOUND)
    except IntegrityError as exc:
        return fail(exc, EXIT_INTEGRITY)
    except BrokenPipeError:  # output piped into `head` and the like
        return EXIT_OK
    except _failures() as exc:
        return fail(exc, EXIT_FAILURE)  # a re-run that could not reach its source, too


def _failures() -> tuple[type[Exception], ...]:
    """What a command that failed raises: ours, the system's, and httpx's errors if the
    command loaded httpx (where it did not, none can have been raised)."""
    httpx = sys.modules.get("httpx")
    return (AddressableError, OSError, *((httpx.HTTPError,) if httpx is not None else ()))


def _opened(args: argparse.Namespace) -> tuple[Store, Path | None]:
    from ..store import open_store

    """The store the command runs on, and the folder that opening it made (the
    outermost one that was not there), if it made one."""
    try:
        return open_store(args.store, create=False), None
    except NoStore as exc:
        if not args.creates:
            raise
        made = None
        for folder in (exc.path, *exc.path.parents):
            if folder.exists():
                break
            made = folder
        return open_store(args.store, create=True), made


def _empty(store: Store) -> bool:
    """Whether the store holds nothing at all."""
    try:
        stats = store.stats()
    except AddressableError:
        return False
    return stats.records == 0 and stats.blobs == 0


def _fail(exc: BaseException | str, code: int, as_json: bool = False) -> int:
    """Say why a command failed, in one line on stderr; with --json, also as the one
    JSON document on stdout that every command prints: `{"error": ..., "exit": ...}`."""
    said = one_line(str(exc)) or type(exc).__name__
    print(f"addressable: error: {said}", file=sys.stderr)
    if as_json:
        print_json({"error": said, "exit": code})
    return code
