"""`bench --trace` over session files it cannot wholly read: a line that is not UTF-8,
JSON nested past what the parser goes through, a tool input nested past what compaction
copies. Each is a bad line, reported with its number; the others still run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from addressable.bench import read_sessions
from addressable.bench.sessions import BadLine, Session
from tests import helpers

FIXTURES = helpers.FIXTURES / "sessions.jsonl"


def nested_input(depth: int) -> bytes:
    given: dict[str, object] = {}
    for _ in range(depth):
        given = {"a": given}
    use = {"type": "tool_use", "id": "t1", "name": "s", "input": given}
    answer = {"type": "tool_result", "tool_use_id": "t1", "content": "x " * 3000}
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [answer]},
        {"role": "assistant", "content": "ok"},
    ]
    return json.dumps({"session_id": "deep", "messages": messages}).encode() + b"\n"


GOOD = b'{"session_id": "good", "messages": [{"role": "user", "content": "hello"}]}\n'
NOT_UTF8 = b'{"session_id":"b","messages":[{"role":"user","content":"\xff"}]}\n'
TOO_DEEP_TO_PARSE = b'{"session_id":"d","messages":[' + b"[" * 5000 + b"]" * 5000 + b"]}\n"
LISTS_TOO_DEEP = b'{"session_id":"l","messages":[{"role":"user","content":' + (
    b"[" * 900 + b"]" * 900 + b"}]}\n"
)


def bench_json(trace: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """`addressable bench --trace TRACE --json` at a trigger of 1,000, as a user runs it."""
    command = [sys.executable, "-m", "addressable", "bench", "--trace", str(trace), "--json"]
    return subprocess.run(
        [*command, "--trigger", "1000", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_each_unreadable_line_is_a_bad_line_and_the_others_are_read(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    lines = [GOOD, NOT_UTF8, GOOD, TOO_DEEP_TO_PARSE, LISTS_TOO_DEEP, nested_input(500), GOOD]
    trace.write_bytes(b"".join(lines))
    read = list(read_sessions(trace))
    assert [type(r) for r in read] == [
        Session,
        BadLine,
        Session,
        BadLine,
        BadLine,
        BadLine,
        Session,
    ]
    errors = {r.line: r.error for r in read if isinstance(r, BadLine)}
    assert errors[2].startswith("not UTF-8 text")
    assert "nests too deeply" in errors[4]
    assert errors[5].startswith("message 0: lists and objects nest more than")
    assert errors[6].startswith("message 1: lists and objects nest more than")


def test_bench_runs_the_sessions_it_can_read(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(FIXTURES.read_bytes() + NOT_UTF8 + nested_input(500))
    given = len(FIXTURES.read_bytes().splitlines())
    proc = bench_json(trace, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["sessions"] == given
    assert f"addressable: line {given + 1}: not UTF-8 text" in proc.stderr
    assert f"addressable: line {given + 2}: message 1: lists and objects nest" in proc.stderr


def with_findings(*findings: object) -> bytes:
    task = {"text": "t", "items": ["x"]}
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    line = {"session_id": "f", "task": task, "findings": list(findings), "messages": messages}
    return json.dumps(line).encode() + b"\n"


def test_a_finding_not_well_formed_is_a_bad_line_naming_its_field(tmp_path: Path) -> None:
    # They were read only mid-run, where one stopped the whole benchmark with a traceback.
    good = {"item": "x", "status": "found", "established": "y", "turn": 1}
    bad = [
        ({"item": "x", "turn": 1}, "findings.0.status: Field required"),
        ({**good, "turn": None}, "findings.0.turn: "),
        ({**good, "turn": "late"}, "findings.0.turn: "),
        ({**good, "status": 5}, "findings.0.status: "),
        ({**good, "established": None}, "findings.0.established: "),
        ({**good, "item": "\ud800"}, "findings.0.item: "),  # a state document refuses it
    ]
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(with_findings(good) + b"".join(with_findings(f) for f, _ in bad))
    read = list(read_sessions(trace))
    assert isinstance(read[0], Session) and read[0].findings[0].turn == 1
    for (_, says), got in zip(bad, read[1:], strict=True):
        assert isinstance(got, BadLine) and got.error.startswith(f"not a session: {says}")
        assert "\n" not in got.error
    proc = bench_json(trace, tmp_path / "out")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["sessions"] == 1


def test_a_byte_order_mark_before_the_first_line_is_not_part_of_it(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(b"\xef\xbb\xbf" + GOOD + GOOD)
    assert [type(r) for r in read_sessions(trace)] == [Session, Session]
