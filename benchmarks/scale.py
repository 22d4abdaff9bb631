"""How the cost of finding records grows with the size of the store.

A store is filled, through `Store.put` directly, with records shaped like the adapters'
(keyed fetches, searches with a record per hit, API writes with their verifications,
shell runs), a hundred to a session. At each size (1,000, 10,000, 100,000 records; the
store grows from one size to the next) the same lookups are timed, on targets that
exist at every size:

    records(key=)       the records of one URL
    records(session=)   the hundred records of one session
    replay prefix       kit.replay of an 8-hex prefix: resolve, read, re-hash
    get                 store.get of a full id
    outcome             kit.outcome of an Action that was verified
    search again        kit.handle("search") of a query run a moment before in the
                        session: served from the store, with the ids of its hits
    ls --limit 3 / 20   the command line, run in this process (store opened each time)
    show PREFIX         the command line: resolve an 8-hex prefix and print the record
    stats               the command line

Then gc, at each size: a tenth as many records again, older than every other, are
written, and gc removes them (it reads every record, then removes in batches) while a
writer in another process records a result every few milliseconds. gc runs again, on
as many old records written anew, until it has run 20 seconds in all (one run at
100,000 records, dozens at 1,000), so that the longest write is the largest of about as
many writes at every size. The figures are gc's time (its first run), the longest of
the writes that overlapped a gc, and that wait as a ratio to the same at the smallest
size: a writer waits for one batch at most, so the longest wait should stay flat as the
store grows. The same writer then runs alone for as long: its longest write is what a
write takes at that size with no gc.

Each figure is the lowest of five medians of repeated runs, the operations taking turns
(so that a burst of load on a shared machine moves one round, not the figure). The point
is the shape, so every operation
is also given as a ratio to the same operation at the smallest size in the same run
(flat is 1.0), and to a raw get of one value from the same database (a diskcache get
on disk, a Redis GET on Redis) measured alongside.

    python benchmarks/scale.py [--quick] [--sizes 1000,10000] [--redis URL | --no-redis]
                               [--json PATH]

With no `--redis`, a redis-server on the PATH is started on a free loopback port for the
run. The figures go to benchmarks/scale.json (`--quick`: only with `--json`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import diskcache
from rich.console import Console
from rich.table import Table

import addressable as ad
from addressable.adapters import Search
from addressable.adapters.search import HIT_TOOL, Hit
from addressable.ids import action_id_of, canonical_args, content_hash, result_id

# The `addressable` command as installed (its console script), run in this process.
_INSTALLED = entry_points(group="console_scripts", name="addressable")
if not _INSTALLED:
    sys.exit("scale.py runs the addressable command: install the project first (pip install -e .)")
cli: Callable[[list[str]], int] = next(iter(_INSTALLED)).load()
SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 5_000)
SESSION = 100  # records in a session of the filler
BUDGET = 1.0  # seconds spent timing one operation at one size, over all rounds
QUICK_BUDGET = 0.1
ROUNDS = 5
MIN_RUNS, MAX_RUNS = 2, 60  # runs of an operation in one round
T0 = datetime(2026, 1, 1, tzinfo=UTC)
OPERATIONS = (
    "records(key=)",
    "records(session=)",
    "replay prefix",
    "get",
    "outcome",
    "search again",
    "ls --limit 3",
    "ls --limit 20",
    "show PREFIX",
    "stats",
)


# -- filling ---------------------------------------------------------------------------


def _record(
    n: int, tool: str, args: dict[str, Any], payload: bytes, session: str, **fields: Any
) -> ad.Record:
    digest = content_hash(payload)
    args_json = canonical_args(args)
    key = fields.get("key")
    if fields.get("determinism") == "side_effect":
        nonce = f"{n:032x}"
        rid = action_id_of(tool, args_json, key, digest, nonce)
        fields["nonce"] = nonce
    else:
        rid = result_id(tool, args_json, key, digest)
    fields.setdefault("determinism", "nondeterministic")
    return ad.Record(
        id=rid,
        tool=tool,
        args=args,
        content_hash=digest,
        size=len(payload),
        media_type=fields.pop("media_type", "text/plain"),
        observed_at=T0 + timedelta(seconds=n),
        session=session,
        **fields,
    )


def _session(s: int) -> Iterator[tuple[ad.Record, bytes]]:
    """The hundred records of session `s`, as the adapters would write them: 60 keyed
    fetches, 5 searches of 5 hits each, 2 API writes and their verifications, 6 shell
    runs. Every payload differs."""
    n = s * SESSION
    session = f"s{s:06d}"
    pad = b" lorem ipsum" * 16  # about 200 bytes a payload

    def nxt() -> int:
        nonlocal n
        n += 1
        return n - 1

    for i in range(60):
        url = f"https://site{s % 97}.example/s{s}/page{i}"
        body = f"<html>{url} {s}/{i}</html>".encode() + pad
        yield (
            _record(
                nxt(), "fetch", {"url": url}, body, session, key=url, determinism="deterministic"
            ),
            body,
        )
    for q in range(5):
        query = f"topic {s}-{q}"
        hits = [
            {"title": f"hit {h}", "url": f"https://found.example/{s}/{q}/{h}", "snippet": "x"}
            for h in range(5)
        ]
        body = canonical_args({"query": query, "backend": "local", "hits": hits})
        args = {"query": query, "backend": "local", "limit": 10}
        meta = {"query": query, "backend": "local", "hits": 5}
        search = _record(
            nxt(), "search", args, body, session, media_type="application/json", meta=meta
        )
        yield search, body
        for rank, hit in enumerate(hits, start=1):
            hit_body = canonical_args(hit)
            yield (
                _record(
                    nxt(),
                    HIT_TOOL,
                    {"query": query, "backend": "local", "rank": rank},
                    hit_body,
                    session,
                    key=hit["url"],
                    media_type="application/json",
                    meta={"found_by": search.id, "rank": rank},
                ),
                hit_body,
            )
    for w in range(2):
        url = f"https://api.example/s{s}/items/{w}"
        body = f"201 created {s}/{w}".encode()
        write = _record(
            nxt(),
            "api",
            {"method": "POST", "url": url, "identity": "bot"},
            body,
            session,
            determinism="side_effect",
            outcome="unknown",
            idempotency_key=f"k-{s}-{w}",
        )
        yield write, body
        text = f"action {write.id}: completed".encode()
        yield (
            _record(
                nxt(),
                "api_verify",
                {"action": write.id, "read": url, "identity": "bot"},
                text,
                session,
                outcome="completed",
                meta={"verifies": write.id, "read": None},
            ),
            text,
        )
    for c in range(6):
        body = f"$ make test {s}.{c}\nok\n".encode() + pad
        yield _record(nxt(), "shell", {"command": f"make test {s}.{c}"}, body, session), body


def fill(store: ad.Store, start: int, stop: int) -> None:
    """Sessions start // SESSION up to stop // SESSION."""
    for s in range(start // SESSION, stop // SESSION):
        for record, payload in _session(s):
            store.put(record, payload)


class _Hits:
    """A search backend that always answers the same five hits."""

    name = "local"

    def search(self, query: str, limit: int) -> list[Hit]:
        return [Hit(title=f"{query} {i}", url=f"https://live.example/{i}") for i in range(5)]


# -- timing ----------------------------------------------------------------------------


def _median(run: Callable[[], object], budget: float) -> float:
    """Median seconds of `run`, repeated for about `budget` seconds."""
    times: list[float] = []
    spent = 0.0
    while len(times) < MIN_RUNS or (spent < budget and len(times) < MAX_RUNS):
        start = time.perf_counter()
        run()
        took = time.perf_counter() - start
        times.append(took)
        spent += took
    return statistics.median(times)


def _time(ops: dict[str, Callable[[], object]], budget: float) -> dict[str, float]:
    """Seconds per operation: the lowest of ROUNDS medians, the operations taking turns
    in every round, so that a burst of load on a shared machine moves a round, not the
    figure."""
    rounds: dict[str, list[float]] = {name: [] for name in ops}
    for _ in range(ROUNDS):
        for name, op in ops.items():
            rounds[name].append(_median(op, budget / ROUNDS))
    return {name: min(medians) for name, medians in rounds.items()}


def _quiet_cli(*args: str) -> Callable[[], None]:
    def run() -> None:
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        with contextlib.redirect_stdout(out):
            code = cli(list(args))
        out.flush()
        if code != 0 or not out.buffer.getvalue():
            raise RuntimeError(f"addressable {' '.join(args)} failed with exit {code}")

    return run


def measure(
    store: ad.Store, url: str, raw_get: Callable[[], object], budget: float
) -> dict[str, float]:
    """Seconds per operation, on targets from the first sessions (present at every size)."""
    target = list(_session(5))
    fetched = target[7][0]  # a fetch: its key, its id
    prefix = target[31][0].id[:8]  # a hit
    action = next(r for r, _ in target if r.tool == "api")
    kit = ad.Toolkit(store, session="live")
    search = Search(kit, _Hits())
    kit.handle("search", {"query": "what changed"})  # run once: the next ones are served
    again = kit.handle("search", {"query": "what changed"})
    assert again.startswith("[the same search ran at"), again
    assert kit.outcome(action.id) is ad.Outcome.COMPLETED
    assert [r.id for r in store.records(key=fetched.key)] == [fetched.id]
    assert len(list(store.records(session="s000005"))) == SESSION
    del search
    ops: dict[str, Callable[[], object]] = {
        "raw get": raw_get,
        "records(key=)": lambda: list(store.records(key=fetched.key)),
        "records(session=)": lambda: list(store.records(session="s000005")),
        "replay prefix": lambda: kit.replay(prefix),
        "get": lambda: store.get(fetched.id),
        "outcome": lambda: kit.outcome(action.id),
        "search again": lambda: kit.handle("search", {"query": "what changed"}),
        "ls --limit 3": _quiet_cli("ls", "--limit", "3", "--store", url),
        "ls --limit 20": _quiet_cli("ls", "--limit", "20", "--store", url),
        "show PREFIX": _quiet_cli("show", prefix, "--store", url),
        "stats": _quiet_cli("stats", "--store", url),
    }
    return _time(ops, budget)


# A writer beside gc: records a result every few milliseconds until the stop file
# appears, then prints when each write started and how long it took (perf_counter, the
# system's monotonic clock, which the benchmark's process reads too).
_WRITER = """
import json, os, sys, time
import addressable as ad
store = ad.open_store(sys.argv[1])
kit = ad.Toolkit(store, session="beside-gc")
writes, n = [], 0
print("ready", flush=True)
while not os.path.exists(sys.argv[2]):
    start = time.perf_counter()
    kit.record("write", {"n": n}, b"written while gc ran %d" % n, determinism="deterministic")
    writes.append((start, time.perf_counter() - start))
    n += 1
    time.sleep(0.005)
print(json.dumps(writes))
"""
OLD_FRACTION = 10  # gc removes a tenth as many records as the store holds
EXPOSURE = 20.0  # seconds of gc a writer is measured beside, at least, at every size
QUICK_EXPOSURE = 0.5


def measure_gc(
    store: ad.Store, url: str, size: int, tmp: Path, exposure: float
) -> dict[str, float]:
    """gc removing size // OLD_FRACTION records older than the others, with a writer
    process beside it: gc's seconds, and the writes that overlapped a gc (how many, the
    longest, the median, the 99th percentile, in seconds); then the same writer alone
    for as long, its longest write ("alone"): what a write takes at this size with no gc.

    gc runs again (on as many old records, written anew) until it has run `exposure`
    seconds: a longest write is the largest of the writes seen, so every size is
    measured over about as many of them, not a few hundred at a small size against ten
    thousand at a large one."""
    removed = size // OLD_FRACTION
    spans: list[tuple[float, float]] = []

    def run_gc() -> None:
        while not spans or sum(end - start for start, end in spans) < exposure:
            n = len(spans)
            for i in range(removed):
                payload = b"old %d %d %d" % (size, n, i)
                args = {"size": size, "round": n, "i": i}
                store.put(_record(-(10**8) - i, "old", args, payload, "old"), payload)
            start = time.perf_counter()
            report = store.gc(max_age=timedelta(days=365), now=T0 + timedelta(days=30))
            spans.append((start, time.perf_counter()))
            if len(report.removed_records) != removed:
                raise RuntimeError(f"gc removed {len(report.removed_records)}, not {removed}")

    beside = _beside(url, tmp, run_gc)
    during = sorted(
        took for at, took in beside if any(at <= end and at + took >= start for start, end in spans)
    )
    if not during:
        raise RuntimeError("the writer made no write while gc ran")
    ran = sum(end - start for start, end in spans)
    window: list[float] = []

    def wait() -> None:
        window.append(time.perf_counter())
        time.sleep(ran)
        window.append(time.perf_counter())

    alone = [took for at, took in _beside(url, tmp, wait) if window[0] <= at <= window[1]]
    count = len(during)
    return {
        "gc_s": spans[0][1] - spans[0][0],
        "rounds": len(spans),
        "exposure_s": ran,
        "writes": count,
        "longest": during[-1],
        "median": during[count // 2],
        "p99": during[count * 99 // 100],
        "alone": max(alone, default=0.0),
    }


def _beside(url: str, tmp: Path, work: Callable[[], None]) -> list[tuple[float, float]]:
    """The writer's writes (when each started, how long it took) while `work` ran, and
    0.2 s either side."""
    stop = tmp / f"stop-{uuid.uuid4().hex[:8]}"
    with subprocess.Popen(
        [sys.executable, "-c", _WRITER, url, str(stop)], stdout=subprocess.PIPE, text=True
    ) as writer:
        assert writer.stdout is not None
        if writer.stdout.readline().strip() != "ready":
            raise RuntimeError("the writer beside gc did not start")
        time.sleep(0.2)
        work()
        time.sleep(0.2)
        stop.touch()
        writes = json.loads(writer.communicate(timeout=600)[0].splitlines()[-1])
    return [(float(at), float(took)) for at, took in writes]


def _disk_raw_get(directory: Path) -> Callable[[], object]:
    cache = diskcache.Cache(str(directory))
    cache.set("scale-bench:raw", b"x" * 400)  # a record's size, as on Redis
    return lambda: cache.get("scale-bench:raw")


def _redis_raw_get(url: str) -> Callable[[], object]:
    import redis

    client = redis.Redis.from_url(url.split("?", 1)[0])
    client.set("scale-bench:raw", b"x" * 400)
    return lambda: client.get("scale-bench:raw")


def run_store(
    kind: str,
    sizes: tuple[int, ...],
    tmp: Path,
    redis_url: str | None,
    budget: float,
    exposure: float,
    log: Callable[[str], None],
) -> list[dict[str, Any]]:
    if kind == "disk":
        url = f"disk://{tmp / 'disk-store'}"
    else:
        assert redis_url is not None
        url = f"{redis_url}?namespace=scale-{uuid.uuid4().hex[:8]}"
    store = ad.open_store(url)
    rows = []
    filled = 0
    try:
        for size in sizes:
            log(f"{kind}: filling to {size:,} records")
            start = time.perf_counter()
            fill(store, filled, size)
            fill_s = time.perf_counter() - start
            filled = size
            raw = _disk_raw_get(tmp / "disk-store") if kind == "disk" else _redis_raw_get(url)
            log(f"{kind}: measuring at {size:,} records")
            seconds = measure(store, url, raw, budget)
            log(f"{kind}: gc beside a writer at {size:,} records")
            gc = measure_gc(store, url, size, tmp, exposure)
            rows.append(
                {
                    "store": kind,
                    "records": size,
                    "gc": {
                        "removed": size // OLD_FRACTION,
                        "gc_s": round(gc["gc_s"], 2),
                        "gc_rounds": gc["rounds"],
                        "gc_exposure_s": round(gc["exposure_s"], 2),
                        "writes_meanwhile": gc["writes"],
                        "longest_write_ms": round(gc["longest"] * 1e3, 1),
                        "median_write_ms": round(gc["median"] * 1e3, 2),
                        "p99_write_ms": round(gc["p99"] * 1e3, 1),
                        "longest_write_without_gc_ms": round(gc["alone"] * 1e3, 1),
                    },
                    "fill_s": round(fill_s, 2),
                    "fill_us_per_record": round(
                        fill_s / (size - (rows[-1]["records"] if rows else 0)) * 1e6, 1
                    ),
                    "us": {k: round(v * 1e6, 1) for k, v in seconds.items()},
                }
            )
    finally:
        store.close()
    base = rows[0]["us"]
    for row in rows:
        row["ratio_to_smallest"] = {
            k: round(v / base[k], 2) for k, v in row["us"].items() if k != "raw get"
        }
        row["ratio_to_raw_get"] = {
            k: round(v / row["us"]["raw get"], 1) for k, v in row["us"].items() if k != "raw get"
        }
        row["gc"]["longest_write_to_smallest"] = round(
            row["gc"]["longest_write_ms"] / rows[0]["gc"]["longest_write_ms"], 2
        )
    return rows


@contextlib.contextmanager
def _redis_server(workdir: Path) -> Iterator[str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(
        [*args, "--dir", str(workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def run(
    sizes: tuple[int, ...],
    *,
    redis: str | bool | None = True,
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """`redis`: a URL, True to start a local server if there is one, False for none."""
    log = progress or (lambda _: None)
    with tempfile.TemporaryDirectory(prefix="addressable-scale-") as tmp:
        budget = QUICK_BUDGET if quick else BUDGET
        exposure = QUICK_EXPOSURE if quick else EXPOSURE
        rows = run_store("disk", sizes, Path(tmp), None, budget, exposure, log)
        if redis is not False:
            with contextlib.ExitStack() as stack:
                url = (
                    redis
                    if isinstance(redis, str)
                    else stack.enter_context(_redis_server(Path(tmp)))
                )
                if url is None:
                    log("no redis-server on the PATH: Redis not measured")
                else:
                    rows += run_store("redis", sizes, Path(tmp), url, budget, exposure, log)
    return {
        "benchmark": "scale",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "quick": quick,
        "sizes": list(sizes),
        "results": rows,
    }


def _duration(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:,.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:,.1f} ms"
    return f"{us:,.0f} µs"


def table(figures: dict[str, Any]) -> Table:
    t = Table(
        title="per operation (lowest of 5 round medians); (xN): to the same operation at "
        "the smallest size, in the same run"
    )
    t.add_column("operation")
    rows = figures["results"]
    for row in rows:
        t.add_column(f"{row['store']} {row['records']:,}", justify="right")
    for op in ("raw get", *OPERATIONS):
        cells = []
        for row in rows:
            us = row["us"][op]
            ratio = row["ratio_to_smallest"].get(op)
            cells.append(_duration(us) + (f" (x{ratio:.1f})" if ratio is not None else ""))
        t.add_row(op, *cells)
    t.add_row("fill, per record", *(f"{row['fill_us_per_record']:,.0f} µs" for row in rows))
    t.add_row("gc of a tenth more", *(f"{row['gc']['gc_s']:,.2f} s" for row in rows))
    t.add_row(
        "gc runs, writes beside them",
        *(f"{row['gc']['gc_rounds']}, {row['gc']['writes_meanwhile']:,}" for row in rows),
    )
    t.add_row(
        "longest write, gc running",
        *(
            f"{gc['longest_write_ms']:,.1f} ms (x{gc['longest_write_to_smallest']:.1f})"
            for gc in (row["gc"] for row in rows)
        ),
    )
    t.add_row(
        "longest write, no gc",
        *(f"{row['gc']['longest_write_without_gc_ms']:,.1f} ms" for row in rows),
    )
    t.add_row(
        "median write, gc running", *(f"{row['gc']['median_write_ms']:,.2f} ms" for row in rows)
    )
    t.add_row(
        "99th pc. write, gc running", *(f"{row['gc']['p99_write_ms']:,.1f} ms" for row in rows)
    )
    return t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"1,000 and 5,000 records (unless --sizes), {QUICK_BUDGET:g} s an operation",
    )
    parser.add_argument("--sizes", help="comma-separated record counts, e.g. 1000,10000")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--redis", metavar="URL", help="a Redis server to measure on")
    where.add_argument("--no-redis", action="store_true", help="measure the disk store only")
    parser.add_argument(
        "--json",
        metavar="PATH",
        help="where to write the figures (default: scale.json beside this)",
    )
    args = parser.parse_args(argv)
    if args.sizes:
        sizes = tuple(sorted(int(s) for s in args.sizes.split(",")))
    else:
        sizes = QUICK_SIZES if args.quick else SIZES
    if any(s < SESSION or s % SESSION for s in sizes):
        parser.error(f"sizes must be multiples of {SESSION}")
    if sizes[0] < 6 * SESSION:
        parser.error(f"the smallest size must hold the target session: at least {6 * SESSION}")
    console = Console(stderr=True)
    redis: str | bool = False if args.no_redis else (args.redis or True)
    figures = run(sizes, redis=redis, quick=args.quick, progress=console.log)
    Console(width=200).print(table(figures))
    out = args.json or (None if args.quick else str(Path(__file__).with_name("scale.json")))
    if out:
        Path(out).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
