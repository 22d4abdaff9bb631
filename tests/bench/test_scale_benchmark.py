"""benchmarks/scale.py runs and writes the figures it prints (its speed is not asserted:
speed is measured in benchmarks/, as ratios)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

BENCHMARKS = ROOT / "benchmarks"


def test_scale_benchmark_writes_its_figures(tmp_path: Path, redis_url: str) -> None:
    out = tmp_path / "scale.json"
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "scale.py"), "--quick", "--sizes", "600,1200",
         "--redis", redis_url, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(out.read_text())
    assert figures["sizes"] == [600, 1200]
    rows = figures["results"]
    assert [(r["store"], r["records"]) for r in rows] == [
        ("disk", 600), ("disk", 1200), ("redis", 600), ("redis", 1200)
    ]  # fmt: skip
    for row in rows:
        assert set(row["us"]) == {
            "raw get", "records(key=)", "records(session=)", "replay prefix", "get",
            "outcome", "search again", "ls --limit 3", "ls --limit 20", "show PREFIX", "stats",
        }  # fmt: skip
        assert all(v > 0 for v in row["us"].values())
        gc = row["gc"]  # a tenth more records, older than the others, removed beside a writer
        assert gc["removed"] == row["records"] // 10 and gc["writes_meanwhile"] > 0
        assert 0 < gc["median_write_ms"] <= gc["p99_write_ms"] <= gc["longest_write_ms"]
        assert gc["longest_write_without_gc_ms"] > 0  # the same writer alone, as long
        for op, ratio in row["ratio_to_smallest"].items():
            smallest = next(r for r in rows if r["store"] == row["store"])
            assert ratio == round(row["us"][op] / smallest["us"][op], 2)
    assert "records(session=)" in proc.stdout and "redis 1,200" in proc.stdout
    assert "longest write, gc running" in proc.stdout and "longest write, no gc" in proc.stdout


def test_scale_benchmark_refuses_sizes_too_small_for_its_targets() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "scale.py"), "--sizes", "100,200", "--no-redis"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "at least 600" in proc.stderr
