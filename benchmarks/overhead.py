"""Per-call cost of a wrapped tool call, against the floor of storing the same payload.

The floor is what any content-addressed cache must pay: blake3 of the payload, a raw
diskcache set and a get of it, on a `diskcache.Cache` with its default settings (values
of 32 KB and up handed over as a file object, the faster way). A second, stricter floor
uses the settings `DiskStore` itself opens diskcache with (no eviction, no culling,
files only from 128 KB), so that the tuning is not counted as a saving.
The wrapped call is a `kit.tool` function returning the payload, recorded in a
`DiskStore`: binding and canonicalising its arguments, hashing, deriving the id, and
storing blob and record in one transaction. Every call gets fresh random bytes, so
nothing is deduplicated. Floor and wrapped calls alternate one for one (then the tuned
floor and wrapped calls, in a second pass), so that drift on a noisy machine hits both
alike and neither kind runs after itself; the figure that matters is the ratio: the
median, over five rounds of calls, of the ratio of the medians.

Replay by id (record, payload, re-hash) is set against a diskcache get of a stored
payload of the same size, and against such a get followed by a blake3 of the bytes it
read (replay re-hashes every payload it reads: at 1 MB the hash is most of a get), in
turn, the ratios taken the same way: once in the process that wrote the records, and
once "cold", on a second `DiskStore` opened on the same directory.

    python benchmarks/overhead.py [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3
import diskcache
from rich.console import Console
from rich.table import Table

import addressable as ad

SIZES = {"1 KB": 1 << 10, "10 KB": 10 << 10, "100 KB": 100 << 10, "1 MB": 1 << 20}
CALLS = {1 << 10: 2000, 10 << 10: 2000, 100 << 10: 400, 1 << 20: 80}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(size: int, calls: int, workdir: Path) -> dict[str, Any]:
    raw = diskcache.Cache(str(workdir / f"floor-{size}"))
    tuned = diskcache.Cache(str(workdir / f"tuned-{size}"), **ad.DiskStore.DISKCACHE_SETTINGS)
    store = ad.DiskStore(workdir / f"store-{size}")
    kit = ad.Toolkit(store, session="bench")
    payloads: list[bytes] = []

    @kit.tool(determinism="deterministic", key=lambda i: f"bench/{size}/{i}")
    def produce(i: int) -> bytes:
        return payloads[i]

    def floor(cache: diskcache.Cache, data: bytes) -> str:
        digest = blake3.blake3(data).hexdigest()
        if len(data) >= cache.disk_min_file_size:  # a file from there on: the faster way
            cache.set(digest, io.BytesIO(data), read=True)
        else:
            cache.set(digest, data)
        cache.get(digest)
        return digest

    times: dict[str, list[float]] = {
        "floor": [],
        "wrapped": [],
        "tuned": [],
        "wrapped_tuned": [],
    }
    ids: list[str] = []
    stored: list[str] = []  # what the floor stored in `raw`

    def run_floor(i: int) -> None:
        stored.append(floor(raw, payloads[i]))

    def run_tuned(i: int) -> None:
        floor(tuned, payloads[i])

    def run_wrapped(i: int) -> None:
        ids.append(produce(i).id)

    timer = time.perf_counter
    # Two passes, each of two kinds of call one for one, the order swapped every call:
    # each call follows the other kind, so neither finds its own code warm from the
    # call before. (Three kinds in one rotation put the wrapped call always after
    # diskcache's code, warm for the floor half the time: +0.15-0.3 on the ratio.)
    passes = [
        (("floor", run_floor), ("wrapped", run_wrapped)),
        (("tuned", run_tuned), ("wrapped_tuned", run_wrapped)),
    ]
    for pair in passes:
        for i in range(calls):
            for name, runner in pair if i % 2 == 0 else pair[::-1]:
                payloads.append(os.urandom(size))  # fresh bytes just before each timed call
                start = timer()
                runner(len(payloads) - 1)
                times[name].append(timer() - start)

    # Replay by id against a diskcache get of a payload of the same size (one the floor
    # stored), alternating, in the same order rotation as above.
    cold_kit = ad.Toolkit(ad.DiskStore(workdir / f"store-{size}"))

    # Replay re-hashes what it reads, so its bar for large payloads is a get plus a
    # blake3 of the same bytes: a third call, in the same rotation.
    def replays(on: ad.Toolkit, chosen: list[str]) -> tuple[list[float], list[float], list[float]]:
        replay_times: list[float] = []
        get_times: list[float] = []
        hashed_times: list[float] = []
        for i, rid in enumerate(chosen):
            for turn in range(3):
                kind = (i + turn) % 3
                start = timer()
                if kind == 0:
                    on.replay(rid)
                    replay_times.append(timer() - start)
                elif kind == 1:
                    raw.get(stored[i])
                    get_times.append(timer() - start)
                else:
                    blake3.blake3(raw.get(stored[i])).digest()
                    hashed_times.append(timer() - start)
        return replay_times, get_times, hashed_times

    # The latest written, then the same on the second store.
    chosen = ids[-min(len(stored), 500) :]
    replay_times, get_times, hashed_times = replays(kit, chosen)
    cold_times, cold_get_times, _ = replays(cold_kit, chosen)
    raw.close()
    tuned.close()
    store.close()
    cold_kit.store.close()

    def us(values: list[float]) -> dict[str, float]:
        return {
            "median_us": round(statistics.median(values) * 1e6, 1),
            "p10_us": round(_percentile(values, 0.10) * 1e6, 1),
            "p90_us": round(_percentile(values, 0.90) * 1e6, 1),
        }

    floor_stats, tuned_stats = us(times["floor"]), us(times["tuned"])
    wrapped_stats = us(times["wrapped"])
    return {
        "size_bytes": size,
        "calls": calls,
        "floor": floor_stats,
        "tuned_floor": tuned_stats,
        "wrapped": wrapped_stats,
        "replay": us(replay_times),
        "get": us(get_times),
        "replay_ratio": _ratio(replay_times, get_times),
        "get_and_hash": us(hashed_times),
        "replay_hash_ratio": _ratio(replay_times, hashed_times),
        "cold_replay": us(cold_times),
        "cold_replay_ratio": _ratio(cold_times, cold_get_times),
        "ratio": _ratio(times["wrapped"], times["floor"]),
        "ratio_tuned": _ratio(times["wrapped_tuned"], times["tuned"]),
    }


ROUNDS = 5  # the calls are cut into rounds; a ratio is the median of the rounds' ratios


def _ratio(wrapped: list[float], floor: list[float]) -> float:
    """The median over rounds of (median wrapped / median floor): a burst of load on a
    shared machine moves one round, not the figure."""
    size = max(1, len(wrapped) // ROUNDS)
    ratios = [
        statistics.median(wrapped[i : i + size]) / statistics.median(floor[i : i + size])
        for i in range(0, len(wrapped) - size + 1, size)
    ]
    return round(statistics.median(ratios), 3)


def run(quick: bool = False, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    results = []
    with tempfile.TemporaryDirectory(prefix="addressable-overhead-") as tmp:
        for label, size in SIZES.items():
            if progress:
                progress(label)
            calls = max(20, CALLS[size] // 10) if quick else CALLS[size]
            results.append({"label": label, **measure(size, calls, Path(tmp))})
    return {
        "benchmark": "overhead",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "quick": quick,
        "results": results,
    }


def table(figures: dict[str, Any]) -> Table:
    t = Table(title="per call, median (p10-p90), µs; floor = blake3 + diskcache set + get")
    for column in (
        "payload",
        "floor",
        "wrapped",
        "ratio",
        "tuned floor",
        "ratio to tuned",
        "replay by id",
        "diskcache get",
        "replay ratio",
        "get + blake3",
        "replay / get+blake3",
        "cold replay",
        "cold ratio",
    ):
        t.add_column(column, justify="right")

    def spread(s: dict[str, float]) -> str:
        return f"{s['median_us']:,.0f} ({s['p10_us']:,.0f}-{s['p90_us']:,.0f})"

    for r in figures["results"]:
        t.add_row(
            r["label"],
            spread(r["floor"]),
            spread(r["wrapped"]),
            f"{r['ratio']:.2f}",
            spread(r["tuned_floor"]),
            f"{r['ratio_tuned']:.2f}",
            spread(r["replay"]),
            spread(r["get"]),
            f"{r['replay_ratio']:.2f}",
            spread(r["get_and_hash"]),
            f"{r['replay_hash_ratio']:.2f}",
            spread(r["cold_replay"]),
            f"{r['cold_replay_ratio']:.2f}",
        )
    return t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the calls")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    console = Console(stderr=True)
    figures = run(args.quick, progress=lambda label: console.log(f"measuring {label}"))
    # Piped or written to a file: wide enough for every column, not cut at 80.
    Console(width=None if sys.stdout.isatty() else 200).print(table(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
