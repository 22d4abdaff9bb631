"""How the time `ad.compact` takes grows with the size of the results it stubs.

One old tool result, then the message that answers it, compacted with `keep_last=0` on
a fresh in-memory store, so that the result is stored and stubbed each time. Three kinds
of output, each at 1x, 4x and 16x a base size:

    paths       a `grep -rn` of a large tree: a path at the start of every line, so
                that the default summariser lists paths and names (the case that grew
                with the square of the size)
    log         a build log: prose lines with numbers and a few names
    json        an API's answer: a list of objects

Each figure is the median of a few compactions. The figure that matters is the time per
megabyte at each size, as a ratio to the same kind at 1x in the same run: flat (1.0) is
linear, 4 at 4x would be quadratic.

    python benchmarks/compaction_speed.py [--quick] [--json PATH]

The figures go to benchmarks/compaction_speed.json (`--quick`: only with `--json`).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import addressable as ad

BASE_LINES = 5_000
QUICK_BASE_LINES = 500
SCALES = (1, 4, 16)


def paths(lines: int) -> str:
    return "".join(f"src/pkg/sub_{i % 97}/mod_{i}.py:{i % 400}: import os\n" for i in range(lines))


def log(lines: int) -> str:
    return "".join(
        f"[{i:06d}] step {i % 13} of target build_{i % 31} finished in {i % 997} ms\n"
        for i in range(lines)
    )


def api_json(lines: int) -> str:
    items = [{"id": f"item_{i}", "price": i % 500, "status": "ok"} for i in range(lines)]
    return json.dumps(items)


KINDS: dict[str, Callable[[int], str]] = {"paths": paths, "log": log, "json": api_json}


def messages(output: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "name": "bash", "arguments": {"command": "run"}}
    return [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": output},
        {"role": "assistant", "content": "done"},
    ]


def compact_seconds(output: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        kit = ad.Toolkit(ad.open_store("memory://"))
        given = messages(output)
        start = time.perf_counter()
        made = ad.compact(given, kit=kit, keep_last=0)
        times.append(time.perf_counter() - start)
        if len(made.evicted) != 1:
            raise SystemExit("the result was not stubbed: nothing was measured")
    return statistics.median(times)


def run(base: int, rounds: int, progress: Callable[[str], None]) -> dict[str, Any]:
    compact_seconds(paths(10), 1)  # the tokenizer's tables load once, not in a figure
    results = []
    for kind, make in KINDS.items():
        first = None
        for scale in SCALES:
            output = make(base * scale)
            progress(f"{kind} x{scale}: {len(output) / 1e6:.2f} MB")
            seconds = compact_seconds(output, rounds)
            per_mb = seconds / (len(output) / 1e6)
            first = per_mb if first is None else first
            results.append(
                {
                    "kind": kind,
                    "scale": scale,
                    "bytes": len(output),
                    "seconds": round(seconds, 4),
                    "seconds_per_mb": round(per_mb, 4),
                    "ratio": round(per_mb / first, 2),
                }
            )
    return {
        "benchmark": "compaction_speed",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "base_lines": base,
        "rounds": rounds,
        "results": results,
    }


def table(figures: dict[str, Any]) -> Table:
    out = Table(title="ad.compact of one old result; ratio: time per MB to the same kind at 1x")
    for name in ("output", "size", "time", "per MB", "ratio"):
        out.add_column(name, justify="left" if name == "output" else "right")
    for r in figures["results"]:
        out.add_row(
            f"{r['kind']} x{r['scale']}",
            f"{r['bytes'] / 1e6:.2f} MB",
            f"{r['seconds']:.3f} s",
            f"{r['seconds_per_mb']:.3f} s",
            f"{r['ratio']:.2f}",
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small outputs, one round each")
    parser.add_argument("--json", metavar="PATH", help="where to write the figures")
    args = parser.parse_args(argv)
    console = Console(stderr=True)
    base, rounds = (QUICK_BASE_LINES, 1) if args.quick else (BASE_LINES, 3)
    figures = run(base, rounds, console.log)
    Console(width=120).print(table(figures))
    default = None if args.quick else str(Path(__file__).with_name("compaction_speed.json"))
    out = args.json or default
    if out:
        Path(out).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
