"""The `addressable` command: look into a store, replay, verify, collect garbage, move it.

`main` parses the command line, opens the store and runs the command, turning each
kind of error into its exit code; the parser, the commands and the output live in the
modules beside this one."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import httpx
from rich.console import Console

from .._errors import (
    AddressableError,
    AmbiguousId,
    ArgumentError,
    BadId,
    IntegrityError,
    NoStore,
    NotFound,
    NotReplayable,
)
from .._exitcodes import (
    EXIT_FAILURE,
    EXIT_INTEGRITY,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
)
from .._stores import open_store
from ._inspect import HEAD_BYTES, HEAD_LINES
from ._output import one_line, visible
from ._parser import EPILOG, build_parser

__all__ = ["EPILOG", "HEAD_BYTES", "HEAD_LINES", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "bench":
        from .._bench.cli import run_bench

        try:
            return run_bench(args, Console(highlight=False, soft_wrap=True))
        except (AddressableError, OSError) as exc:
            return _fail(exc, EXIT_FAILURE)
    # Nothing printed here is markup: what tools wrote must show as written.
    out = Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
    try:
        store = open_store(args.store, create=args.creates)
        try:
            code: int = args.run(store, args, out)
            return code
        finally:
            store.close()
    except NoStore as exc:
        return _fail(
            f"no store at {visible(str(exc.path))}: {exc.why}; only import and mcp create "
            "a store: check --store and $ADDRESSABLE_STORE",
            EXIT_FAILURE,
        )
    except (BadId, AmbiguousId, NotReplayable, ArgumentError) as exc:
        return _fail(exc, EXIT_USAGE)
    except NotFound as exc:
        return _fail(exc, EXIT_NOT_FOUND)
    except IntegrityError as exc:
        return _fail(exc, EXIT_INTEGRITY)
    except BrokenPipeError:  # output piped into `head` and the like
        return EXIT_OK
    except (AddressableError, OSError, httpx.HTTPError) as exc:
        return _fail(exc, EXIT_FAILURE)  # a re-run that could not reach its source, too


def _fail(exc: BaseException | str, code: int) -> int:
    print(f"addressable: error: {one_line(str(exc)) or type(exc).__name__}", file=sys.stderr)
    return code
