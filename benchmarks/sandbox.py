"""What the sandbox adds to a Shell call: the same commands, recorded by the same kit,
run with `sandbox=True` (bubblewrap) and `sandbox=False`, one for one in turn, so that a
machine that slows down slows both alike.

    true                the floor: starting a program and recording its output
    ls -la              a small listing
    git status          git in a repository of 200 files

The figure that matters is the ratio of the medians, sandboxed over not.

    python benchmarks/sandbox.py [--runs N] [--quick] [--json PATH]

The figures go to benchmarks/sandbox.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import addressable as ad
from addressable.adapters import Shell

HERE = Path(__file__).resolve().parent
RUNS = 60
QUICK_RUNS = 5
COMMANDS = {"true": ["true"], "ls -la": ["ls", "-la"], "git status": ["git", "status"]}


def _repository(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    for n in range(200):
        (folder / f"file{n:03}.txt").write_text(f"line {n}\n")
    subprocess.run(["git", "-C", str(folder), "add", "."], check=True)


def measure(runs: int) -> dict[str, dict[str, float]]:
    """Each command's median time a call, in the sandbox and out of it, and the ratio."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name) / "work"
        folder.mkdir()
        _repository(folder)
        kit = ad.Toolkit(ad.open_store(f"disk://{Path(name) / 'store'}"))
        shells = {
            "sandboxed": Shell(kit, cwd=folder, name="boxed"),
            "plain": Shell(kit, cwd=folder, sandbox=False, name="plain"),
        }
        figures: dict[str, dict[str, float]] = {}
        for label, command in COMMANDS.items():
            times: dict[str, list[float]] = {kind: [] for kind in shells}
            for shell in shells.values():
                shell(command)  # warm-up
            for _ in range(runs):
                for kind, shell in shells.items():
                    start = time.perf_counter()
                    shell(command)
                    times[kind].append(time.perf_counter() - start)
            sandboxed = statistics.median(times["sandboxed"])
            plain = statistics.median(times["plain"])
            figures[label] = {
                "sandboxed_ms": sandboxed * 1000,
                "plain_ms": plain * 1000,
                "ratio": sandboxed / plain,
            }
        kit.close()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help=f"calls of each ({RUNS})")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_RUNS} calls, for tests")
    parser.add_argument("--json", type=Path, default=None, help="where the figures go")
    args = parser.parse_args(argv)
    runs = QUICK_RUNS if args.quick else args.runs
    figures = measure(runs)
    for label, row in figures.items():
        print(
            f"{label:<12} sandboxed {row['sandboxed_ms']:7.2f} ms  plain "
            f"{row['plain_ms']:7.2f} ms  {row['ratio']:5.2f}x"
        )
    out = args.json or (None if args.quick else HERE / "sandbox.json")
    if out is not None:
        document = {"python": platform.python_version(), "runs": runs, "commands": figures}
        out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
