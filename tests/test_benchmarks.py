"""The benchmarks run and write the figures they print (their speed is not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_overhead_benchmark_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "overhead.json"
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "overhead.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(out.read_text())
    assert [r["size_bytes"] for r in figures["results"]] == [1 << 10, 10 << 10, 100 << 10, 1 << 20]
    for r in figures["results"]:
        for part in ("floor", "tuned_floor", "wrapped", "replay"):
            assert 0 < r[part]["p10_us"] <= r[part]["median_us"] <= r[part]["p90_us"]
        pooled = r["wrapped"]["median_us"] / r["floor"]["median_us"]
        assert 0.5 * pooled < r["ratio"] < 2 * pooled  # a median of rounds, near the pooled one
        assert r["label"] in proc.stdout
