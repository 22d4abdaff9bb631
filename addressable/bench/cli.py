"""`addressable bench`: its options, and running it to write its table, JSON, plot and
trajectory."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from .. import ArgumentError
from ..core.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from .settings import (
    DEFAULT_BUDGET,
    DEFAULT_CACHE_READ,
    DEFAULT_CACHE_WRITE,
    DEFAULT_CLEAR_AT_LEAST,
    DEFAULT_KEEP,
    DEFAULT_OUT,
    DEFAULT_TRIGGER,
    DEFAULT_WINDOW,
    check_settings,
)

if TYPE_CHECKING:
    from rich.console import Console

DESCRIPTION = (
    "Replay recorded sessions under each context strategy (none, clear, window, "
    "addressable, addressable+state, oracle) and price what the agent pays: the request "
    "tokens of every turn, a round trip (one more request, the result read again in "
    "full) for each result a turn lost values from, every request again with prompt "
    "caching, and the sessions that went over the context window. With no --trace, "
    "runs the bundled scenario: a scripted research agent over the standard library's "
    "documentation, served and indexed locally."
)


def add_arguments(
    p: argparse.ArgumentParser, *, encodings: Sequence[str], default_encoding: str
) -> None:
    """The options of `addressable bench`; `encodings` are the names `--encoding` takes
    (those `count_tokens` counts in), `default_encoding` the one counted in without it."""
    p.add_argument("--trace", help="JSONL of recorded sessions, one a line")
    p.add_argument(
        "--trigger",
        type=int,
        default=DEFAULT_TRIGGER,
        help=f"compact when a request is over this many tokens ({DEFAULT_TRIGGER})",
    )
    p.add_argument(
        "--keep", type=int, default=DEFAULT_KEEP, help=f"tool results kept whole ({DEFAULT_KEEP})"
    )
    p.add_argument(
        "--budget",
        type=int,
        help=f"tokens a stub may take (compact's default, {DEFAULT_BUDGET})",
    )
    p.add_argument(
        "--clear-at-least",
        type=int,
        default=DEFAULT_CLEAR_AT_LEAST,
        help=f"clear only if it frees this many tokens ({DEFAULT_CLEAR_AT_LEAST})",
    )
    p.add_argument(
        "--window",
        type=int,
        default=DEFAULT_WINDOW,
        help="the context window: a request over this many tokens fails, and the session "
        f"counts as failed for that strategy ({DEFAULT_WINDOW})",
    )
    p.add_argument(
        "--cache-read",
        type=float,
        default=DEFAULT_CACHE_READ,
        help="price of a token of a request's prefix shared with the previous request, "
        f"in input tokens ({DEFAULT_CACHE_READ})",
    )
    p.add_argument(
        "--cache-write",
        type=float,
        default=DEFAULT_CACHE_WRITE,
        help=f"price of every other token, in input tokens ({DEFAULT_CACHE_WRITE})",
    )
    p.add_argument(
        "--first-sight",
        type=int,
        metavar="N",
        help="show the model a result over N tokens as the first-sight cap does "
        "(max_result_tokens), for every strategy; a value a later call uses from what the "
        "cap left out counts as lost (off)",
    )
    p.add_argument(
        "--encoding",
        choices=encodings,
        help=f"count tokens in this encoding ({default_encoding})",
    )
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        help="folder for report.md, report.json, plot.png and, for the bundled "
        f"scenario, its trajectory scenario.jsonl (./{DEFAULT_OUT})",
    )
    p.add_argument(
        "--ablate",
        action="store_true",
        help="also run each strategy without trimming, without the early rule and "
        "without both, into the report's ablation table",
    )
    p.add_argument("--plot", metavar="PATH", help="also write the plot here")
    p.add_argument("--markdown", metavar="PATH", help="also write the table here")


def _said(line: str) -> None:
    print(f"addressable: {line}", file=sys.stderr, flush=True)


class _Told:
    """Where the replay is, said as plain lines when stderr is no terminal (a pipe, a
    CI log): at each tenth of the runs, so that a log shows it moving."""

    def __init__(self, total: int, terminal: bool) -> None:
        self.total, self.quiet = total, terminal
        self.step = max(1, total // 10)
        self.next = self.step

    def __call__(self, done: int) -> None:
        if self.quiet or done < min(self.next, self.total):
            return
        _said(f"replayed {done:,} of {self.total:,} strategy runs")
        self.next = done + self.step


class _CtrlC:
    """Ctrl-C while the benchmark runs: a KeyboardInterrupt at once, as Python raises it,
    and again at the next step should the code it was raised in have swallowed it (pydoc
    takes reprs under a bare `except:`; an object's finalizer drops what it raises)."""

    def __init__(self) -> None:
        self.pressed = False
        self._before: Any = None

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread():  # signals go there only
            self._before = signal.signal(signal.SIGINT, self._press)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._before is not None:
            signal.signal(signal.SIGINT, self._before)

    def _press(self, number: int, frame: FrameType | None) -> None:
        self.pressed = True
        raise KeyboardInterrupt

    def check(self) -> None:
        if self.pressed:
            raise KeyboardInterrupt


def run_bench(args: argparse.Namespace, out: Console) -> int:
    with _CtrlC() as ctrl_c:
        return _run_bench(args, ctrl_c)


def _run_bench(args: argparse.Namespace, ctrl_c: _CtrlC) -> int:
    # The engine and the progress bar, loaded when the benchmark runs, not to read options.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .. import MissingDependency, token_counter
    from .engine import bench
    from .report import markdown, plot
    from .sessions import read_sessions
    from .simulate import STRATEGIES

    try:  # before anything is built or written
        check_settings(
            trigger=args.trigger,
            keep=args.keep,
            window=args.window,
            cache_read=args.cache_read,
            cache_write=args.cache_write,
            budget=args.budget,
            clear_at_least=args.clear_at_least,
            first_sight=args.first_sight,
            flags=True,
        )
    except ArgumentError as exc:
        print(f"addressable: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from .scenario import build, write_trajectory

    folder = Path(args.out)
    errors = Console(stderr=True)
    kits = {}
    if args.trace:
        if not Path(args.trace).is_file():
            print(f"addressable: error: no trace file at {args.trace}", file=sys.stderr)
            return EXIT_FAILURE
        items = list(read_sessions(args.trace))
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder.mkdir(parents=True, exist_ok=True)
        if errors.is_terminal:
            with errors.status("building the bundled scenario") as status:

                def show(step: str) -> None:
                    ctrl_c.check()
                    status.update(f"bundled scenario: {step}")

                session, kit = build(show)
        else:  # piped: plain lines, one a step

            def say(step: str) -> None:
                ctrl_c.check()
                _said(f"bundled scenario: {step}")

            session, kit = build(say)
        ctrl_c.check()
        write_trajectory(session, str(folder / "scenario.jsonl"))
        items, kits = [session], {session.session_id: kit}
    runnable = sum(1 for i in items if not hasattr(i, "error"))
    columns = (
        TextColumn("{task.description}", markup=False),  # session ids are data
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    total = runnable * len(STRATEGIES)
    with Progress(*columns, console=errors, transient=True, disable=not errors.is_terminal) as bar:
        task = bar.add_task("replaying", total=total)
        told = _Told(total, errors.is_terminal)

        def progress(session_id: str, done: int) -> None:
            ctrl_c.check()
            bar.update(task, completed=done, description=session_id[:40])
            told(done)

        report = bench(
            items,
            trigger=args.trigger,
            keep=args.keep,
            budget=args.budget,
            clear_at_least=args.clear_at_least,
            window=args.window,
            cache_read=args.cache_read,
            cache_write=args.cache_write,
            first_sight=args.first_sight,
            kits=kits,
            tokenizer=token_counter(args.encoding) if args.encoding else None,
            ablate=args.ablate,
            progress=progress,
        )
    # Plain lines on stderr (not rich's console, which would wrap them): one a problem.
    for bad in report.errors:
        print(f"addressable: line {bad.line}: {bad.error}", file=sys.stderr)
    if not report.sessions:
        print("addressable: error: no session could be read", file=sys.stderr)
        return EXIT_FAILURE
    table = markdown(report)
    data = json.dumps(report.to_json(), indent=2) + "\n"
    written: list[str] = []
    if not args.trace:
        written.append(str(folder / "scenario.jsonl"))
    for path, text in (
        (folder / "report.md", table),
        (folder / "report.json", data),
        (args.markdown, table),
    ):
        if path:
            Path(path).write_text(text, encoding="utf-8")
            written.append(str(path))
    for path in (folder / "plot.png", args.plot):
        if path:
            try:
                plot(report, path)
            except MissingDependency as exc:
                print(f"addressable: no plot: {exc}", file=sys.stderr)
                break
            written.append(str(path))
    # The report on stdout, to a terminal or a pipe alike (--json: the JSON document);
    # where the files went on stderr, so that stdout stays the report.
    sys.stdout.write(data if getattr(args, "json", False) else table)
    sys.stdout.flush()
    print(f"addressable: wrote {', '.join(written)}", file=sys.stderr)
    return EXIT_OK
