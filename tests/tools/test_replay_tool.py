"""`replay_result`: the exact payload back, parts of it on request, and errors as text."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

import addressable as ad
from tests.helpers import FakeClock, put_two_sharing_a_prefix

TEXT = "".join(f"line {n}: {'needle' if n in (20, 50) else 'hay'}\n" for n in range(1, 101))


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture
def stored(kit: ad.Toolkit) -> ad.Result:
    return kit.record(
        "shell", {"command": "cat big.txt"}, TEXT.encode(), determinism="nondeterministic"
    )


def replay(kit: ad.Toolkit, **arguments: object) -> str:
    return kit.handle("replay_result", arguments)


def test_no_range_pattern_or_cap_gives_the_whole_payload(
    kit: ad.Toolkit, stored: ad.Result
) -> None:
    assert replay(kit, id=stored.id) == TEXT
    assert replay(kit, id=stored.id[:8].upper()) == TEXT


def test_a_line_range(kit: ad.Toolkit, stored: ad.Result) -> None:
    out = replay(kit, id=stored.id, start_line=3, end_line=5)
    assert out == "[lines 3-5 of 100]\n3: line 3: hay\n4: line 4: hay\n5: line 5: hay"


def test_a_pattern_with_context(kit: ad.Toolkit, stored: ad.Result) -> None:
    out = replay(kit, id=stored.id, pattern="needle")
    lines = out.splitlines()
    assert lines[0] == "[2 lines match 'needle' of 100]"
    assert lines[1:6] == [f"{n}: line {n}: {'needle' if n == 20 else 'hay'}" for n in range(18, 23)]
    assert lines[6] == "--" and lines[9] == "50: line 50: needle"
    assert replay(kit, id=stored.id, pattern="[unclosed").startswith("[0 lines match")


def test_a_token_cap(kit: ad.Toolkit, stored: ad.Result) -> None:
    out = replay(kit, id=stored.id, max_tokens=40)
    assert ad.count_tokens(out) < 80
    assert out.splitlines()[-1].startswith("[truncated at about 40 tokens: ask with start_line=")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param("zzzz-not-an-id", "error: 'zzzz-not-an-id' is not a result id", id="bad"),
        pytest.param("", "error: replay_result needs the id a stub shows", id="empty"),
        pytest.param(
            "0000000000000000", "error: no result with id 0000000000000000.", id="unknown"
        ),
    ],
)
def test_errors_are_short_texts(
    kit: ad.Toolkit, stored: ad.Result, given: str, expected: str
) -> None:
    assert replay(kit, id=given).startswith(expected)


def test_an_unknown_id_names_close_ones(kit: ad.Toolkit, stored: ad.Result) -> None:
    near = stored.id[:10] + ("0" if stored.id[10] != "0" else "1") + stored.id[11:]
    out = replay(kit, id=near)
    assert out.startswith(f"error: no result with id {near}.")
    assert f"Close ids: {stored.id}." in out


def test_an_ambiguous_prefix_lists_candidates(kit: ad.Toolkit) -> None:
    put_two_sharing_a_prefix(kit.store, kit.clock(), kit.session)
    out = replay(kit, id="abcdef")
    assert "abcdef0000000001, abcdef0000000002" in out and "full id" in out


def test_an_expired_result_says_so(kit: ad.Toolkit, stored: ad.Result, clock: FakeClock) -> None:
    kit.store.gc(max_age=timedelta(seconds=1), now=clock.now + timedelta(days=1))
    assert replay(kit, id=stored.id).startswith(f"error: result {stored.id} expired")


def test_the_prefix_a_stub_showed_says_expired_once_gc_removed_its_record(
    store: ad.Store,
) -> None:
    kit = ad.Toolkit(store, session="work")  # stub pins end by the real time
    text = "".join(f"row {n}: {'x' * 40}\n" for n in range(300))
    call = {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": text},
        {"role": "assistant", "content": "done"},
    ]
    (evicted,) = ad.compact(messages, kit=kit, keep_last=0).evicted
    stub = ad.compact(messages, kit=kit, keep_last=0).messages[2]["content"]
    parsed = ad.parse_stub(stub)
    assert parsed is not None
    prefix = parsed[1]
    assert len(prefix) < 16 and evicted.id.startswith(prefix)
    store.end_session("work")
    store.gc(max_age=timedelta(seconds=1), now=datetime.now(UTC) + timedelta(days=1))
    said = replay(kit, id=prefix)
    assert said.startswith(f"error: result {evicted.id} expired"), said
    # A stub names its record wherever it is read: in another session too.
    elsewhere = replay(ad.Toolkit(store, session="other"), id=prefix)
    assert elsewhere.startswith(f"error: result {evicted.id} expired")


def test_binary_is_described_not_dumped(kit: ad.Toolkit) -> None:
    res = kit.record(
        "files",
        {"path": "logo.png"},
        b"\x89PNG\x00\xff\xfe",
        determinism="deterministic",
        media_type="image/png",
    )
    assert (
        replay(kit, id=res.id)
        == f"[binary content: 7 bytes of image/png, kept in result {res.id}; it cannot be "
        "shown as text]"
    )


def test_a_pattern_that_would_run_for_ever_is_stopped(kit: ad.Toolkit) -> None:
    # "(a|aa)+$" on 60 a's then "!" backtracks through every way to split the a's:
    # unbounded, it holds the interpreter for hours.
    slow = kit.record("t", {}, b"a" * 60 + b"!\nplain line\n", determinism="deterministic")
    answers: list[str] = []
    worker = threading.Thread(
        target=lambda: answers.append(replay(kit, id=slow.id, pattern="(a|aa)+$")), daemon=True
    )
    worker.start()
    worker.join(timeout=60)
    assert answers and answers[0].startswith("error: ArgumentError: the pattern '(a|aa)+$' took")
    assert "\n" not in answers[0]
    assert replay(kit, id=slow.id, pattern="plain").startswith("[1 lines match 'plain' of 2]")


def test_the_model_arguments_of_replay_are_checked(kit: ad.Toolkit, stored: ad.Result) -> None:
    assert replay(kit, id=stored.id, start_line="3") == (
        "error: replay_result: argument 'start_line' does not fit: "
        "Input should be a valid integer (got '3')"
    )
    assert replay(kit, id=stored.id, max_tokens=0).startswith(
        "error: replay_result: argument 'max_tokens' does not fit: "
    )
    assert replay(kit, id=stored.id, pattern="x" * 1001).startswith(
        "error: replay_result: argument 'pattern' does not fit: "
    )
    assert replay(kit, id=stored.id, lines="1-3") == (
        "error: replay_result: argument 'lines' is not an argument of this tool "
        "(it takes: end_line, id, max_tokens, pattern, start_char, start_line)"
    )


def test_content_blocks_replay_checks_the_arguments_too(kit: ad.Toolkit, stored: ad.Result) -> None:
    # The SDK integrations answer replay_result through handle_content, not kit.handle.
    for bad, said in (
        ({"start_line": "abc"}, "argument 'start_line' does not fit: "),
        ({"start_line": [1]}, "does not fit: Input should be a valid integer (got a list)"),
        ({"pattern": "x" * 5000}, "argument 'pattern' does not fit: "),
        ({"bogus": 1}, "argument 'bogus' is not an argument of this tool"),
    ):
        text = ad.handle_content(kit, "replay_result", {"id": stored.id, **bad})
        assert isinstance(text, str) and text.startswith("error: replay_result: "), text
        assert said in text
    assert ad.handle_content(kit, "replay_result", {"id": stored.id}) == TEXT
