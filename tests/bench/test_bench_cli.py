"""`addressable bench` as a command: what it prints when piped, where it says its files
went, and what its plot shows of a trace of several sessions."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import accumulate
from pathlib import Path

from addressable.bench import BenchReport, bench, read_sessions
from addressable.bench.report import plot_series
from tests import helpers

FIXTURES = helpers.FIXTURES / "sessions.jsonl"
TRIGGER = ("--trigger", "2000")


def bench_piped(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    out = tmp_path / "out"
    command = [sys.executable, "-m", "addressable", "bench", "--trace", str(FIXTURES)]
    return subprocess.run(
        [*command, *TRIGGER, "--out", str(out), *options],
        capture_output=True,  # stdout and stderr are pipes, not a terminal
        text=True,
        timeout=300,
    )


def test_piped_bench_prints_the_table_and_says_where_the_files_went(tmp_path: Path) -> None:
    extra = tmp_path / "extra.md"
    proc = bench_piped(tmp_path, "--markdown", str(extra))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("4 sessions, trigger 2,000 tokens")
    assert "| addressable |" in proc.stdout
    out = tmp_path / "out"
    wrote = [line for line in proc.stderr.splitlines() if line.startswith("addressable: wrote ")]
    assert len(wrote) == 1
    for path in (out / "report.md", out / "report.json", out / "plot.png", extra):
        assert str(path) in wrote[0] and path.is_file()
    # piped, where no bar is drawn, it says where it is in plain lines, at each tenth
    told = [line for line in proc.stderr.splitlines() if " strategy runs" in line]
    assert 5 <= len(told) <= 12 and told[-1] == "addressable: replayed 24 of 24 strategy runs"


def test_piped_bench_json_keeps_stdout_one_document(tmp_path: Path) -> None:
    proc = bench_piped(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sessions"] == 4  # nothing but the JSON on stdout
    assert f"addressable: wrote {tmp_path / 'out' / 'report.md'}" in proc.stderr


def test_the_plot_adds_up_every_session_as_the_table_does() -> None:
    report = bench(read_sessions(FIXTURES), trigger=2000, keep=3)
    assert report.sessions == 4
    title, lines = plot_series(report)
    assert "summed over 4 sessions" in title
    longest = max(len(s.per_turn["none"]) for s in report.per_session)
    for name, figures in report.strategies.items():
        assert len(lines[name]) == longest
        assert lines[name][-1] == figures.net  # the table's total, not one session's
        assert lines[name] == list(accumulate(_turn_sums(report, name)))
    first = report.per_session[0].per_turn["none"]
    assert lines["none"][-1] > sum(first)  # more than the first session alone


def _turn_sums(report: BenchReport, name: str) -> list[int]:
    per_session = report.per_session
    sums = [0] * max(len(s.per_turn[name]) for s in per_session)
    for s in per_session:
        for turn, tokens in enumerate(s.per_turn[name]):
            sums[turn] += tokens
    return sums
