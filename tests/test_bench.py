"""The token-savings benchmark: its strategies and measures on small sessions, recorded
sessions, bad input, and the bundled scenario's acceptance figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable._bench import bench, read_sessions
from addressable._bench._sessions import Session
from addressable._bench._simulate import PLACEHOLDER, simulate
from addressable._cli import main

from . import modelloop

FIXTURES = Path(__file__).parent / "fixtures" / "sessions.jsonl"


def session(
    results: list[str], calls: list[dict[str, Any]] | None = None, task: ad.Task | None = None
) -> Session:
    """A flattened session: one call per result; `calls` gives each call's arguments."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "the task"}]
    for k, text in enumerate(results):
        args = (calls or [{}] * len(results))[k] or {"command": f"step {k}"}
        messages.append(
            {
                "role": "assistant",
                "content": f"step {k}",
                "tool_calls": [{"id": f"c{k}", "name": "bash", "arguments": args}],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "name": "bash", "content": text})
    messages.append({"role": "assistant", "content": "done"})
    return Session(session_id="s", messages=messages, shape="flat", task=task)


def fresh_kit(s: Session) -> ad.Toolkit:
    return ad.Toolkit(ad.open_store("memory://"))


BIG = ["\n".join(f"line {k}.{n}: some output of step {k}" for n in range(120)) for k in range(8)]


def test_none_sends_everything_every_turn() -> None:
    s = session(BIG)
    run = simulate(s, "none", trigger=1000, keep=2, kit_for=fresh_kit)
    turns = [i for i, m in enumerate(s.messages) if m["role"] == "assistant"]
    expected = [ad.message_tokens(s.messages[:i]) for i in turns]
    assert run.per_turn == expected
    assert run.figures.requests == sum(expected) and run.figures.peak == max(expected)
    assert run.figures.lost == 0 and run.figures.net == run.figures.requests


def test_clear_leaves_placeholders_and_the_newest_results() -> None:
    s = session(BIG)
    run = simulate(s, "clear", trigger=3000, keep=2, kit_for=fresh_kit)
    none = simulate(s, "none", trigger=3000, keep=2, kit_for=fresh_kit)
    assert run.figures.requests < none.figures.requests
    assert run.figures.artifact > 0 and run.figures.artifact % ad.count_tokens(PLACEHOLDER) == 0
    assert run.figures.peak < none.figures.peak


def test_a_value_from_a_cleared_result_is_a_lost_dependency() -> None:
    listing = "\n".join(f"src/pkg/module_{n}.py" for n in range(200))
    results = [listing, *BIG[:5]]
    calls = [
        {"command": "find src"},
        *({"command": f"step {k}"} for k in range(1, 5)),
        {"command": "cat src/pkg/module_7.py"},
    ]
    s = session(results, calls)
    clear = simulate(s, "clear", trigger=2500, keep=2, kit_for=fresh_kit)
    assert clear.figures.lost == 1  # src/pkg/module_7.py was only in the cleared listing
    assert clear.figures.recovery == ad.count_tokens(listing)
    assert clear.figures.net == clear.figures.requests + clear.figures.recovery
    addressable = simulate(s, "addressable", trigger=2500, keep=2, kit_for=fresh_kit, budget=200)
    assert addressable.figures.lost == 0  # the stub kept the path
    assert simulate(s, "none", trigger=2500, keep=2, kit_for=fresh_kit).figures.lost == 0


def test_window_drops_the_oldest_turns_and_keeps_the_task() -> None:
    s = session(BIG)
    run = simulate(s, "window", trigger=4000, keep=3, kit_for=fresh_kit)
    assert max(run.per_turn) <= 4000
    none = simulate(s, "none", trigger=4000, keep=3, kit_for=fresh_kit)
    assert run.figures.requests < none.figures.requests


def test_repeated_identical_calls_are_counted() -> None:
    s = session(
        BIG[:4], [{"command": "ls"}, {"command": "ls"}, {"command": "pwd"}, {"command": "ls"}]
    )
    run = simulate(s, "none", trigger=10**9, keep=3, kit_for=fresh_kit)
    assert run.figures.repeated_calls == 2


def test_recorded_sessions_give_the_same_figures_on_every_run() -> None:
    first = bench(read_sessions(FIXTURES), trigger=4000, keep=3)
    again = bench(read_sessions(FIXTURES), trigger=4000, keep=3)
    assert first.to_json() == again.to_json()
    assert first.sessions == 4
    totals = first.strategies
    assert set(totals) == {"none", "clear", "window", "addressable", "addressable+state"}
    assert totals["addressable"].requests < totals["none"].requests
    assert totals["none"].lost == 0
    data = first.to_json()
    assert [p["session_id"] for p in data["per_session"]][:1] == [
        "swebv-minisweagent-gemini3pro-django__django-11141"
    ]
    assert set(data) == {"sessions", "trigger", "keep", "strategies", "per_session"}
    assert set(data["strategies"]["none"]) == {
        "requests",
        "peak",
        "artifact",
        "lost",
        "recovery",
        "net",
        "repeated_calls",
    }


def test_a_malformed_line_is_named_and_the_others_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = FIXTURES.read_text().splitlines()
    trace = tmp_path / "trace.jsonl"
    broken = json.loads(lines[2])
    first_call = next(m for m in broken["messages"] if m.get("tool_calls"))
    first_call["tool_calls"][0]["id"] = "nowhere"  # now its result answers no call
    trace.write_text("\n".join([lines[0], "{not json", json.dumps(broken), lines[3]]) + "\n")
    out = tmp_path / "out"
    code = main(["bench", "--trace", str(trace), "--trigger", "4000", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    assert "addressable: line 2: not JSON" in captured.err
    assert "addressable: line 3: message " in captured.err
    assert "answers no earlier tool call" in captured.err
    report = json.loads((out / "report.json").read_text())
    assert report["sessions"] == 2
    assert [e["line"] for e in report["errors"]] == [2, 3]
    assert captured.out.startswith("2 sessions, trigger 4,000 tokens, keep 3")
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_hundred_sessions_run(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in FIXTURES.read_text().splitlines()]
    trace = tmp_path / "many.jsonl"
    with trace.open("w") as f:
        for n in range(100):
            row = dict(rows[n % len(rows)], session_id=f"s{n:03}")
            f.write(json.dumps(row) + "\n")
    report = bench(read_sessions(trace), trigger=8000, keep=3)
    assert report.sessions == 100 and not report.errors
    assert report.strategies["none"].requests == 25 * sum(
        p.strategies["none"].requests for p in report.per_session[:4]
    )


def test_the_bundled_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["bench", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    figures = report["strategies"]
    assert report["trigger"] == 100_000 and report["keep"] == 3
    assert figures["addressable"]["net"] <= 0.20 * figures["none"]["net"]
    assert figures["addressable"]["lost"] == 0
    assert figures["clear"]["lost"] >= 1
    trajectory = [json.loads(line) for line in (out / "scenario.jsonl").read_text().splitlines()]
    (scenario,) = trajectory
    assert len(scenario["task"]["items"]) >= 12
    statuses = {f["status"] for f in scenario["findings"]}
    assert statuses == {"found", "not found"}  # negative findings too
    # the trajectory reads back as a recorded session and gives the same request totals
    again = bench(read_sessions(out / "scenario.jsonl"), trigger=100_000, keep=3)
    assert again.strategies["none"].requests == figures["none"]["requests"]
    assert "| addressable |" in (out / "report.md").read_text()


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_every_input_shape_is_read(tmp_path: Path, shape: str) -> None:
    rows = [json.loads(line) for line in FIXTURES.read_text().splitlines()]
    trace = tmp_path / f"{shape}.jsonl"
    trace.write_text("\n".join(json.dumps(modelloop.as_shape(r, shape)) for r in rows) + "\n")
    sessions = list(read_sessions(trace))
    assert [s.shape for s in sessions] == [shape] * 4  # type: ignore[union-attr]
    report = bench(sessions, trigger=4000, keep=3)
    flat = bench(read_sessions(FIXTURES), trigger=4000, keep=3)
    assert report.sessions == 4
    for name in ("none", "addressable"):
        ratio = report.strategies[name].requests / flat.strategies[name].requests
        assert 0.9 < ratio < 1.1  # the same session, in another shape
    assert report.strategies["addressable"].requests < report.strategies["none"].requests


def test_a_missing_trace_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["bench", "--trace", str(tmp_path / "nope.jsonl"), "--out", str(out)]) == 5
    assert f"no trace file at {tmp_path / 'nope.jsonl'}" in capsys.readouterr().err
    assert not out.exists()
