"""How long the library and its command take to start, as whole processes.

Each command runs in a fresh process, in turn with the others (so that a machine that
slows down slows all of them alike), after one warm-up each:

    python -c pass                                    the floor: Python itself
    python -c 'import pydantic, diskcache, blake3'    the library's core dependencies
    python -c 'import addressable'                    the package
    addressable --version                             the command, reading its options
    addressable ls --store STORE                      a command on a small store (20 records)

The figures are medians of wall time, and the ratios that matter are taken in the same
run: `--version` against `python -c pass`, the import and `ls` against the dependencies.
Every module runs from its compiled bytecode, as on a machine where pip installed it: a
machine that forbids writing bytecode (PYTHONDONTWRITEBYTECODE) would time the package's
compiling against dependencies already compiled, so the warm-up writes it.

    python benchmarks/startup.py [--runs N] [--json PATH]

The figures go to benchmarks/startup.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = 15
QUICK_RUNS = 3


def _command() -> list[str]:
    """The `addressable` command, or the module run as one where it is not installed."""
    found = shutil.which("addressable")
    return [found] if found else [sys.executable, "-m", "addressable"]


def _small_store(folder: Path) -> Path:
    """A disk store of 20 records, made in a process of its own."""
    store = folder / "store"
    code = (
        "import addressable as ad\n"
        f"kit = ad.Toolkit(ad.open_store({f'disk://{store}'!r}))\n"
        "@kit.tool\n"
        "def echo(text: str) -> str:\n"
        "    return text * 10\n"
        "for i in range(20):\n"
        "    echo(str(i))\n"
        "kit.close()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    return store


_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, check=True, env=_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


Figures = tuple[dict[str, dict[str, float]], dict[str, float]]


def measure(runs: int) -> Figures:
    """Each command's median, fastest and slowest wall time, and the ratios."""
    with tempfile.TemporaryDirectory() as folder:
        store = _small_store(Path(folder))
        commands = {
            "python": [sys.executable, "-c", "pass"],
            "dependencies": [sys.executable, "-c", "import pydantic, diskcache, blake3"],
            "import": [sys.executable, "-c", "import addressable"],
            "version": [*_command(), "--version"],
            "ls": [*_command(), "ls", "--store", str(store)],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for command in commands.values():
            _wall(command)  # warm-up: the files are read once before any is timed
        for _ in range(runs):
            for name, command in commands.items():
                times[name].append(_wall(command))
    median = {name: statistics.median(values) for name, values in times.items()}
    seconds = {
        name: {"median": median[name], "min": min(v), "max": max(v)} for name, v in times.items()
    }
    ratios = {
        "version / python": median["version"] / median["python"],
        "import / dependencies": median["import"] / median["dependencies"],
        "ls / dependencies": median["ls"] / median["dependencies"],
    }
    return seconds, ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help=f"timed runs of each ({RUNS})")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_RUNS} runs, for tests")
    parser.add_argument("--json", type=Path, default=None, help="where the figures go")
    args = parser.parse_args(argv)
    runs = QUICK_RUNS if args.quick else args.runs
    seconds, ratios = measure(runs)
    for name, row in seconds.items():
        low, high = row["min"] * 1000, row["max"] * 1000
        print(f"{name:<14} {row['median'] * 1000:8.1f} ms  ({low:.1f}-{high:.1f})")
    for name, ratio in ratios.items():
        print(f"{name:<24} {ratio:5.2f}x")
    figures = {"python": platform.python_version(), "runs": runs, "seconds": seconds}
    figures["ratios"] = ratios
    out = args.json or (None if args.quick else HERE / "startup.json")
    if out is not None:
        out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
