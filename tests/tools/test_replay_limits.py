"""`replay_result` at its limits: a cap on one long line, ranges that cannot be met,
ids megabytes long, and hints that stay within the session that asks."""

from __future__ import annotations

import json

import pytest

import addressable as ad
from addressable.context.stubs import short_id
from tests.helpers import FakeClock, put_two_sharing_a_prefix

# Minified JSON: 2,000 items, one line of about 270,000 characters.
ONE_LINE = json.dumps(
    [{"id": i, "name": f"item-{i}", "desc": "lorem ipsum " * 8} for i in range(2000)]
)
FORTY = "\n".join(f"l{i}" for i in range(1, 41))


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def record(kit: ad.Toolkit, text: str) -> ad.Result:
    return kit.record("api", {"q": text[:10]}, text.encode(), determinism="nondeterministic")


def replay(kit: ad.Toolkit, **arguments: object) -> str:
    return kit.handle("replay_result", arguments)


def test_a_cap_cuts_inside_a_line_longer_than_the_cap(kit: ad.Toolkit) -> None:
    stored = record(kit, ONE_LINE + "\nsecond line")
    out = replay(kit, id=stored.id, max_tokens=50)
    header, body, note = out.split("\n")
    assert header == "[lines 1-2 of 2]"
    assert body.startswith('1: [{"id": 0, "name": "item-0"') and ONE_LINE.startswith(body[3:])
    assert ad.count_tokens(body) <= 55
    shown = len(body) - len("1: ")
    assert note == (
        f"[line 1 cut at about 50 tokens: start_line=1, start_char={shown} goes on from "
        "there; start_line=2 gives the lines after it]"
    )
    more = replay(kit, id=stored.id, start_line=1, start_char=shown, max_tokens=50)
    assert more.split("\n")[1][3:] == ONE_LINE[shown : shown + len(more.split("\n")[1]) - 3]
    assert ad.count_tokens(out) < 120  # was the whole line: over 70,000 tokens


def test_a_cap_of_a_single_line_payload_says_it_is_cut(kit: ad.Toolkit) -> None:
    stored = record(kit, ONE_LINE)
    out = replay(kit, id=stored.id, max_tokens=10)
    assert out.splitlines()[-1].startswith("[line 1 cut at about 10 tokens: start_line=1, ")
    assert "start_line=2" not in out  # there is no line after it
    assert ad.count_tokens(out) < 80
    kit.set_max_result_tokens("replay_result", None)  # no first-sight cap above it
    whole = replay(kit, id=stored.id, max_tokens=200_000)  # a cap over the line: all of it
    assert whole == f"[lines 1-1 of 1]\n1: {ONE_LINE}"


def test_a_cap_after_a_separator_still_says_where_to_go_on(kit: ad.Toolkit) -> None:
    text = "\n".join(f"row {n}: {'hit' if n in (3, 30) else 'x'}" for n in range(1, 41))
    # Room for the five lines around line 3 and not for the "--" after them.
    around = [f"{n}: row {n}: {'hit' if n == 3 else 'x'}" for n in range(1, 6)]
    cap = sum(ad.count_tokens(line) + 1 for line in around) + 1
    out = replay(kit, id=record(kit, text).id, pattern="hit", max_tokens=cap)
    lines = out.splitlines()
    assert lines[1:-1] == around
    assert lines[-1] == f"[truncated at about {cap} tokens: ask with start_line=28 for more]"


def test_an_end_before_the_start_is_an_error(kit: ad.Toolkit) -> None:
    stored = record(kit, FORTY)
    out = replay(kit, id=stored.id, start_line=5, end_line=2)
    assert out == (
        "error: replay_result: end_line is before start_line; give a range "
        "that ends at or after its start"
    )
    content = ad.handle_content(
        kit, "replay_result", {"id": stored.id, "start_line": 5, "end_line": 2}
    )
    assert content == out  # the SDK integrations' path says the same
    assert replay(kit, id=stored.id, start_line=5, end_line=5) == "[lines 5-5 of 40]\n5: l5"


def test_a_start_past_the_end_says_how_many_lines_there_are(kit: ad.Toolkit) -> None:
    stored = record(kit, FORTY)
    expected = "[start_line is past the end: the text has 40 lines]"
    assert replay(kit, id=stored.id, start_line=500) == expected
    assert replay(kit, id=stored.id, start_line=41, end_line=60) == expected
    assert replay(kit, id=stored.id, start_line=10**30, pattern="l") == expected
    assert replay(kit, id=stored.id, start_line=40, end_line=60) == "[lines 40-40 of 40]\n40: l40"


def test_a_pattern_that_runs_too_long_is_a_text_through_handle_content(kit: ad.Toolkit) -> None:
    slow = kit.record("t", {}, b"a" * 60 + b"!\nplain\n", determinism="deterministic")
    out = ad.handle_content(kit, "replay_result", {"id": slow.id, "pattern": "(a|aa)+$"})
    assert isinstance(out, str)
    assert out.startswith("error: ArgumentError: the pattern '(a|aa)+$' took over")


@pytest.mark.parametrize(
    "given",
    [
        pytest.param("x" * 10_000_000, id="not-hex"),
        pytest.param("a" * 1_000_000, id="hex-too-long"),
        pytest.param(" " * 1_000_000 + "abc", id="short-prefix-in-spaces"),
    ],
)
def test_a_huge_id_gives_a_short_error(kit: ad.Toolkit, given: str) -> None:
    out = replay(kit, id=given)
    assert out.startswith("error: ") and "\n" not in out
    assert len(out) < 300


@pytest.mark.parametrize(
    ("given", "said"),
    [
        pytest.param(
            "x" * 1_000_000,
            f"{'x' * 40!r}… (1,000,000 characters) is not a result id",
            id="not-hex",
        ),
        pytest.param(
            "a" * 1_000_000,
            f"{'a' * 40!r}… (1,000,000 characters) is too long for a result id",
            id="too-long",
        ),
        pytest.param(
            " " * 1_000_000 + "abc",
            f"id prefix {' ' * 40!r}… (1,000,003 characters) is too short",
            id="too-short",
        ),
        pytest.param(
            "abcdef" + " " * 1_000_000,
            f"{'abcdef' + ' ' * 34!r}… (1,000,006 characters) is a prefix, not a full",
            id="a-prefix",
        ),
    ],
)
def test_the_id_errors_quote_the_start_of_what_was_given(given: str, said: str) -> None:
    with pytest.raises(ad.BadId) as raised:
        ad.ids.check_id(given)
    assert said in str(raised.value)
    assert len(str(raised.value)) < 200


def test_a_short_bad_id_is_quoted_whole(kit: ad.Toolkit) -> None:
    with pytest.raises(ad.BadId, match=r"^'zz-not-an-id' is not a result id"):
        ad.ids.check_prefix("zz-not-an-id")
    with pytest.raises(ad.BadId, match=r"^'abcdef' is a prefix, not a full result id"):
        ad.ids.check_id("abcdef")


def test_close_ids_come_only_from_the_asking_session(store: ad.Store, clock: FakeClock) -> None:
    mine = ad.Toolkit(store, session="tenant-a", clock=clock)
    other = ad.Toolkit(store, session="tenant-b", clock=clock)
    theirs = other.record("notes", {"q": "x"}, b"private", determinism="nondeterministic")
    guess = theirs.id[:3] + ("0" if theirs.id[3] != "0" else "1") + "000"

    out = mine.handle("replay_result", {"id": guess})
    assert out.startswith(f"error: no result with id {guess}.")
    assert theirs.id not in out and "Close ids" not in out
    # In its own session, the same guess names it.
    assert f"Close ids: {theirs.id}." in other.handle("replay_result", {"id": guess})

    # Ids are shared across sessions by design: the full id itself still replays. A
    # prefix, which a model can guess, names only what its own session has seen.
    assert mine.handle("replay_result", {"id": theirs.id}) == "private"
    by_prefix = mine.handle("replay_result", {"id": theirs.id[:8]})
    assert by_prefix.startswith(f"error: no result with id {theirs.id[:8]}.")
    assert other.handle("replay_result", {"id": theirs.id[:8]}) == "private"

    own = mine.record("notes", {"q": "y"}, b"mine", determinism="nondeterministic")
    near = own.id[:10] + ("0" if own.id[10] != "0" else "1") + own.id[11:]
    assert f"Close ids: {own.id}." in mine.handle("replay_result", {"id": near})


def test_a_prefix_names_only_the_asking_session_s_records(
    store: ad.Store, clock: FakeClock
) -> None:
    # A 6-hex prefix replayed another session's record, and an ambiguous one listed its
    # full ids: a model could walk the store with them.
    theirs = put_two_sharing_a_prefix(store, clock.now, "tenant-b")
    mine = ad.Toolkit(store, session="tenant-a", clock=clock)
    out = mine.handle("replay_result", {"id": "abcdef"})
    assert out.startswith("error: no result with id abcdef.")
    assert not any(i in out for i in theirs)
    own = put_shared_prefix(store, clock, "tenant-a")
    out = mine.handle("replay_result", {"id": "abcdef"})
    assert (
        out
        == f"error: 'abcdef' matches several results ({', '.join(own)}); ask again with a full id."
    )
    assert mine.handle("replay_result", {"id": own[0][:7]}) == "p"
    # Seen again in this session, another's record is this session's too.
    store.put(store.get(theirs[0]).model_copy(update={"session": "tenant-a"}), b"p")
    out = mine.handle("replay_result", {"id": "abcdef"})
    assert f"({theirs[0]}, {own[0]}, {own[1]})" in out and theirs[1] not in out
    # A full id, which is not guessed, replays whatever session made it.
    assert mine.handle("replay_result", {"id": theirs[1]}) == "p"


def test_a_stub_s_prefix_names_its_record_in_any_session(store: ad.Store, clock: FakeClock) -> None:
    # A conversation compacted in one session and taken up in another (a new process is
    # a new session) replays its stubs by the prefix they show.
    before = ad.Toolkit(store, session="monday", clock=clock)
    stored = before.record("notes", {"q": "x"}, b"kept for later", determinism="deterministic")
    shown = short_id(store, stored.id)
    after = ad.Toolkit(store, session="tuesday", clock=clock)
    assert after.handle("replay_result", {"id": shown}) == "kept for later"
    assert after.handle("replay_result", {"id": stored.id[:7]}).startswith("error: no result")


def put_shared_prefix(store: ad.Store, clock: FakeClock, session: str) -> tuple[str, str]:
    """Two records of `session` whose ids start with abcdef too."""
    ids = ("abcdef1000000001", "abcdef2000000002")
    for record_id in ids:
        base = store.get(store.resolve("abcdef0000000001"))
        store.put(base.model_copy(update={"id": record_id, "session": session}), b"p")
    return ids
