"""`addressable bench --encoding`: the benchmark counts in the encoding named, and says
which in its JSON and its table's header."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import addressable as ad
from addressable.bench import bench, read_sessions

# Text the two encodings split differently: prose, code, and words outside English.
OUTPUT = "\n".join(
    f"{n}: Привет, мир! こんにちは世界 — def handler_{n}(request): return {{'ok': True}}"
    for n in range(60)
)


def write_trace(path: Path) -> Path:
    """One small session: three shell calls, each with a long result."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "summarise the logs"}]
    for k in range(3):
        call = {"id": f"c{k}", "name": "bash", "arguments": {"command": f"cat log{k}"}}
        messages.append({"role": "assistant", "content": f"step {k}", "tool_calls": [call]})
        messages.append(
            {"role": "tool", "tool_call_id": f"c{k}", "name": "bash", "content": OUTPUT}
        )
    messages.append({"role": "assistant", "content": "done"})
    path.write_text(json.dumps({"session_id": "s", "messages": messages}) + "\n")
    return path


def run_bench(tmp_path: Path, name: str, *options: str) -> subprocess.CompletedProcess[str]:
    """`addressable bench` on a small trace, its outputs in `tmp_path / name`."""
    trace = write_trace(tmp_path / "trace.jsonl")
    out = tmp_path / name
    command = [sys.executable, "-m", "addressable", "bench", "--trace", str(trace)]
    return subprocess.run(
        [*command, "--out", str(out), "--trigger", "2000", *options],
        capture_output=True,
        text=True,
        timeout=300,
    )


def requests(report: dict[str, Any]) -> dict[str, int]:
    return {name: figures["requests"] for name, figures in report["strategies"].items()}


def test_o200k_counts_differently_and_the_json_names_the_encoding(tmp_path: Path) -> None:
    assert ad.tokens_exact("o200k_base"), "needs tiktoken: the counts would be estimates"
    default = run_bench(tmp_path, "default", "--json")
    cl100k = run_bench(tmp_path, "cl100k", "--json", "--encoding", "cl100k_base")
    o200k = run_bench(tmp_path, "o200k", "--json", "--encoding", "o200k_base")
    for proc in (default, cl100k, o200k):
        assert proc.returncode == 0, proc.stderr
    reports = [json.loads(p.stdout) for p in (default, cl100k, o200k)]
    assert [r["encoding"] for r in reports] == ["cl100k_base", "cl100k_base", "o200k_base"]
    assert requests(reports[0]) == requests(reports[1])  # cl100k_base is the default
    assert requests(reports[2]) != requests(reports[1])
    tokens = [ad.count_tokens(OUTPUT, e) for e in ("cl100k_base", "o200k_base")]
    assert tokens[0] != tokens[1]
    none = [r["strategies"]["none"]["requests"] for r in reports[1:]]
    assert (none[0] < none[1]) == (tokens[0] < tokens[1])  # the same way round


def test_the_table_header_names_the_encoding(tmp_path: Path) -> None:
    proc = run_bench(tmp_path, "o200k", "--encoding", "o200k_base")
    assert proc.returncode == 0, proc.stderr
    assert "tokens are exact o200k." in proc.stdout.splitlines()[0]
    assert json.loads((tmp_path / "o200k" / "report.json").read_text())["encoding"] == "o200k_base"
    default = run_bench(tmp_path, "default")
    assert "tokens are exact cl100k." in default.stdout.splitlines()[0]


def test_an_unknown_encoding_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = run_bench(tmp_path, "bad", "--encoding", "p50k_base")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("addressable: error: ")
    assert "p50k_base" in proc.stderr and "o200k_base" in proc.stderr
    assert not (tmp_path / "bad").exists()  # refused before anything ran


def test_the_python_api_says_what_it_counted_in(tmp_path: Path) -> None:
    sessions = list(read_sessions(write_trace(tmp_path / "trace.jsonl")))
    assert bench(sessions, trigger=2000, keep=3).encoding == "cl100k_base"
    counter = ad.token_counter("o200k_base")
    assert bench(sessions, trigger=2000, keep=3, tokenizer=counter).encoding == "o200k_base"
    assert bench(sessions, trigger=2000, keep=3, tokenizer=len).encoding is None
