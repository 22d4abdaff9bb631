"""`addressable bench`: run the benchmark and write its table, JSON, plot and trajectory."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .._errors import MissingDependency
from . import STRATEGIES, bench, markdown, plot
from ._scenario import build, write_trajectory
from ._sessions import read_sessions


def run_bench(args: argparse.Namespace, out: Console) -> int:
    folder = Path(args.out)
    errors = Console(stderr=True)
    kits = {}
    if args.trace:
        if not Path(args.trace).is_file():
            print(f"addressable: error: no trace file at {args.trace}", file=sys.stderr)
            return 5
        items = list(read_sessions(args.trace))
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder.mkdir(parents=True, exist_ok=True)
        with errors.status(
            "building the bundled scenario (pydoc, a local server, the scripted agent)"
        ):
            session, kit = build()
        write_trajectory(session, str(folder / "scenario.jsonl"))
        items, kits = [session], {session.session_id: kit}
    runnable = sum(1 for i in items if not hasattr(i, "error"))
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=errors, transient=True) as bar:
        task = bar.add_task("replaying", total=runnable * len(STRATEGIES))
        report = bench(
            items,
            trigger=args.trigger,
            keep=args.keep,
            budget=args.budget,
            clear_at_least=args.clear_at_least,
            kits=kits,
            progress=lambda sid, done: bar.update(task, completed=done, description=sid[:40]),
        )
    # Plain lines on stderr (not rich's console, which would wrap them): one a problem.
    for bad in report.errors:
        print(f"addressable: line {bad.line}: {bad.error}", file=sys.stderr)
    if not report.sessions:
        print("addressable: error: no session could be read", file=sys.stderr)
        return 5
    table = markdown(report)
    data = json.dumps(report.to_json(), indent=2) + "\n"
    for path, text in (
        (folder / "report.md", table),
        (folder / "report.json", data),
        (args.markdown, table),
        (args.json_path, data),
    ):
        if path:
            Path(path).write_text(text, encoding="utf-8")
    for path in (folder / "plot.png", args.plot):
        if path:
            try:
                plot(report, path)
            except MissingDependency as exc:
                print(f"addressable: no plot: {exc}", file=sys.stderr)
                break
    sys.stdout.write(table)
    sys.stdout.flush()
    return 0
