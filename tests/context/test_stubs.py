"""Stubs that pay for themselves: short ids that stay and replay, the same bytes when
compacted again, sizes that scale with what they replace, values the conversation
already shows left out, gists made of whole parts, least needed results evicted first
down to a low-water mark, and limits that cannot be obeyed refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

import addressable as ad
from addressable.context.stubs import prefix_mark, short_id
from tests.helpers import FakeClock, modelloop


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def put(store: ad.Store, record_id: str, payload: bytes, when: Any) -> None:
    store.put(
        ad.Record(
            id=record_id,
            tool="bash",
            args={"command": record_id},
            determinism="nondeterministic",
            content_hash=ad.ids.content_hash(payload),
            size=len(payload),
            media_type="text/plain",
            observed_at=when,
            session="test",  # the kit's: a prefix names only its own session's records
        ),
        payload,
    )


def test_a_stub_id_is_short_stays_the_same_and_still_replays_once_shared(
    kit: ad.Toolkit, clock: FakeClock
) -> None:
    first, second = "abcdef0123456789", "abcdef01fedcba98"  # the same first 8 characters
    put(kit.store, first, b"the first payload", clock.now)
    assert short_id(kit.store, first) == "abcdef01"
    put(kit.store, second, b"the second payload", clock.now)
    # The prefix a stub showed stays the stub's, and the new record gets a longer one.
    assert short_id(kit.store, first) == "abcdef01"
    assert short_id(kit.store, second) == "abcdef01f"
    # replay_result takes both: the older one although its prefix is now shared.
    assert kit.handle("replay_result", {"id": "abcdef01"}) == "the first payload"
    assert kit.handle("replay_result", {"id": "abcdef01f"}) == "the second payload"
    # Another kit (another process) on the same store knows which is which.
    other = ad.Toolkit(kit.store)
    assert other.handle("replay_result", {"id": "abcdef01"}) == "the first payload"
    # A prefix no stub showed is still ambiguous: the model is asked for more.
    assert "matches several results" in kit.handle("replay_result", {"id": "abcdef0"})


def test_a_prefix_a_stub_never_showed_is_not_guessed(kit: ad.Toolkit, clock: FakeClock) -> None:
    put(kit.store, "abcdef0123456789", b"one", clock.now)
    put(kit.store, "abcdef01fedcba98", b"two", clock.now)
    assert kit.store.shown(prefix_mark("abcdef01")) is None
    assert "matches several results" in kit.handle("replay_result", {"id": "abcdef01"})


def session(outputs: list[str], commands: list[str] | None = None) -> list[dict[str, Any]]:
    """A flat list: one bash call a turn, with the given outputs."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the failing test"}]
    for k, output in enumerate(outputs):
        command = (commands or [])[k] if commands else f"step {k}"
        messages += modelloop.assistant("flat", k, "bash", {"command": command})
        messages.append(modelloop.result("flat", k, "bash", output))
    return messages


def listing(n: int, names: str = "handler") -> str:
    return "\n".join(
        f"src/pkg_{n}/mod_{i}.py:{i}: def {names}_{n}_{i}(request):" for i in range(60)
    )


def test_compacting_the_list_again_later_gives_the_same_stubs(kit: ad.Toolkit) -> None:
    messages = session([listing(n) for n in range(6)])
    once = ad.compact(messages, kit=kit, keep_last=2)
    assert len(once.evicted) == 4
    # The agent goes on, and its words now show values the stubs carried.
    words = "Looking at src/pkg_0/mod_0.py:0 and handler_1_3."
    longer = [*messages, {"role": "assistant", "content": words}]
    later = ad.compact(longer, kit=kit, keep_last=2)
    for evicted in once.evicted:
        assert later.messages[evicted.index] == once.messages[evicted.index]  # byte for byte


def test_a_stub_scales_with_what_it_replaces(kit: ad.Toolkit) -> None:
    small = "\n".join(f"line {i}: nothing much here to see today" for i in range(12))
    large = "\n".join(listing(n) for n in range(8))
    result = ad.compact(session([small, large, "x", "y"]), kit=kit, keep_last=2)
    by_size = sorted(result.evicted, key=lambda e: e.tokens_before)
    assert [e.tokens_before < 200 for e in by_size] == [True, False]
    small_stub, large_stub = (e.tokens_after for e in by_size)
    assert small_stub <= 25  # a small result gets a small stub...
    assert small_stub < large_stub <= 120  # ...a large one more room, within the budget
    assert large_stub <= 0.05 * by_size[1].tokens_before


def test_values_the_conversation_shows_are_left_out(kit: ad.Toolkit) -> None:
    output = "\n".join(
        ["Traceback (most recent call last):", "ValueError: RetryPolicyError in mod"]
        + [f"  File 'src/app/worker_{i}.py', line {i}, in run_job_{i}" for i in range(30)]
    )
    said = session([output, "a", "b"])
    said.insert(1, {"role": "user", "content": "RetryPolicyError again, see src/app/worker_0.py"})
    silent = session([output, "a", "b"])
    stub_said = ad.compact(said, kit=kit, keep_last=2).messages[3]["content"]
    stub_silent = ad.compact(silent, kit=ad.Toolkit(kit.store), keep_last=2).messages[2]["content"]
    assert "RetryPolicyError" in stub_silent and "src/app/worker_0.py" in stub_silent
    assert "RetryPolicyError" not in stub_said and "src/app/worker_0.py" not in stub_said
    assert "src/app/worker_1.py" in stub_said  # the room goes to what is not in sight


PAGE = (
    "<html><head><title>Locks and queues</title></head><body>"
    "<p>Queues are safe to share between threads, locks are not needed around them, "
    "and their methods block, with or without a timeout, as documented below in detail "
    "for every method of every class, with examples for each of the common cases.</p>"
    + "".join(f"<p>Paragraph {n} of the page.</p>" for n in range(300))
    + "<p>Copyright 2026 Example Org. All rights reserved.</p></body></html>"
)


def test_no_gist_ends_in_a_broken_fragment(kit: ad.Toolkit, clock: FakeClock) -> None:
    page = kit.record(
        "fetch",
        {"url": "https://docs.example/locks.html"},
        PAGE.encode(),
        determinism="deterministic",
        key="https://docs.example/locks.html",
        media_type="text/html",
    )
    text_page = kit.record(
        "fetch",
        {"url": "https://docs.example/locks.txt"},
        "\n".join(f"Paragraph {n} of the page, in plain text." for n in range(200)).encode()
        + b"\nCopyright 2026 Example Org. All rights reserved.",
        determinism="nondeterministic",
    )
    for record in (page.record, text_page.record):
        for budget in (32, 60, 120):
            item = ad.evict(record, store=kit.store, budget=budget)
            gist = item.gist if isinstance(item, ad.Reference) else item.text
            assert "…" not in gist and not gist.endswith((",", ";", ":"))
            assert "last:" not in gist  # a page's last line says nothing of how it ended
            # The first sentence whole, or not at all: never cut at one of its commas.
            assert "Queues are safe" not in gist or "common cases." in gist


def test_a_result_run_again_later_is_superseded(kit: ad.Toolkit) -> None:
    failing = "\n".join(["FAILED tests/test_x.py::test_one - AssertionError"] * 20)
    passing = "\n".join(["tests/test_x.py::test_one PASSED"] * 20)
    messages = session(
        [failing, "patched", passing, "x", "y"],
        ["pytest tests/test_x.py", "apply patch", "pytest tests/test_x.py", "a", "b"],
    )
    result = ad.compact(messages, kit=kit, keep_last=2)
    stubs = {e.index: result.messages[e.index]["content"] for e in result.evicted}
    assert stubs[2].endswith("] run again later")  # the earlier test run
    assert "run again later" not in stubs[6]  # the latest run stays described


def test_target_tokens_evicts_the_least_needed_first(kit: ad.Toolkit) -> None:
    outputs = [listing(n, names) for n, names in enumerate(["alpha", "beta", "gamma", "delta"])]
    messages = session([*outputs, "tail"], ["ls a", "ls b", "ls a", "ls d", "tail"])
    # The agent's latest words use what the second result listed.
    messages.append(
        {"role": "assistant", "content": "I will edit beta_1_3 and beta_1_4 in src/pkg_1/mod_3.py."}
    )
    everything = ad.compact(messages, kit=kit, keep_last=1)
    assert [e.index for e in everything.evicted] == [2, 4, 6, 8]
    total = everything.tokens_before
    one = ad.compact(messages, kit=ad.Toolkit(kit.store), keep_last=1, target_tokens=total - 10)
    assert [e.index for e in one.evicted] == [2]  # "ls a" was run again: superseded
    three = ad.compact(
        messages, kit=ad.Toolkit(kit.store), keep_last=1, target_tokens=one.tokens_after - 10
    )
    assert [e.index for e in three.evicted] == [2, 6]  # then the oldest the agent does not use
    assert three.tokens_after <= one.tokens_after - 10
    deep = ad.compact(messages, kit=ad.Toolkit(kit.store), keep_last=1, target_tokens=0)
    assert [e.index for e in deep.evicted] == [2, 4, 6, 8]  # the one in use goes last
    under = ad.compact(messages, kit=kit, keep_last=1, target_tokens=total)
    assert under.evicted == [] and under.messages == messages  # already under the mark


@pytest.mark.parametrize(
    ("options", "named"),
    [
        pytest.param({"keep_last": -1}, "keep_last must be at least 0, got -1", id="keep"),
        pytest.param({"budget": 0}, "budget must be at least 32, got 0", id="budget"),
        pytest.param({"target_tokens": -5}, "target_tokens must be at least 0", id="target"),
        pytest.param({"trigger_tokens": "9"}, "trigger_tokens must be a whole number", id="type"),
        pytest.param({"keep_last": True}, "keep_last must be a whole number", id="bool"),
        # One str is read as its letters: it would pin nothing and keep nothing whole.
        pytest.param({"pins": "call_1"}, "a list of ids to pin, not one str", id="pins"),
        pytest.param({"pending_keys": "k"}, "a list of keys, not one str", id="pending"),
    ],
)
def test_limits_that_cannot_be_obeyed_are_refused(
    kit: ad.Toolkit, options: dict[str, Any], named: str
) -> None:
    with pytest.raises(ad.ArgumentError) as info:
        ad.compact(session(["x " * 200, "y"]), kit=kit, **options)
    assert named in str(info.value) and "\n" not in str(info.value)


def test_a_kit_that_is_not_a_kit_is_refused() -> None:
    for wrong in (None, "kit", ad.open_store("memory://")):
        with pytest.raises(ad.ArgumentError) as info:
            ad.compact(session(["x " * 200, "y"]), kit=wrong)  # type: ignore[arg-type]
        assert type(wrong).__name__ in str(info.value) and "\n" not in str(info.value)


def test_stubs_are_read_and_left_alone(kit: ad.Toolkit) -> None:
    old = "[claim:0123456789abcdef bash] exit 0; 3 files"
    assert ad.parse_stub(old) == ("claim", "0123456789abcdef")
    assert ad.parse_stub("[claim:0123abcd] exit 0") == ("claim", "0123abcd")
    assert ad.parse_stub("[claim:0123abc] too short an id") is None
    messages = session([old, "x " * 300, "y", "z"])
    result = ad.compact(messages, kit=kit, keep_last=2)
    assert result.messages[2] == messages[2]
    assert [e.index for e in result.evicted] == [4]


def test_a_json_stub_keeps_ids_dates_and_codes(kit: ad.Toolkit) -> None:
    user = {
        "name": {"first_name": "Sofia", "last_name": "Kim"},
        "address": {"city": "Houston", "zip": "77243"},
        "dob": "1950-06-24",
        "payment_methods": {
            f"gift_card_{n}": {"source": "gift_card", "amount": n % 300, "id": f"gift_card_{n}"}
            for n in (7091239, 6276644, 7480005)
        },
        "reservations": ["OI5L9G", "AQLBTL", "KA7I60"],
        "membership": "silver",
    }
    messages: list[dict[str, Any]] = [{"role": "user", "content": "change my flight"}]
    messages += modelloop.assistant("flat", 0, "get_user_details", {"user_id": "sofia_kim_7287"})
    messages.append(modelloop.result("flat", 0, "get_user_details", json.dumps(user)))
    messages += modelloop.assistant("flat", 1, "think", {"thought": "ok"})
    messages.append(modelloop.result("flat", 1, "think", "ok"))
    stub = ad.compact(messages, kit=kit, keep_last=1).messages[2]["content"]
    for value in ("gift_card_7091239", "gift_card_7480005", "OI5L9G", "KA7I60", "1950-06-24"):
        assert value in stub
    assert "sofia_kim_7287" not in stub  # the call shows it


def test_an_exact_copy_among_the_newest_is_a_stub_the_last_copy_stays(kit: ad.Toolkit) -> None:
    page = listing(7)
    messages = session(["x " * 300, page, page, page], ["a", "cat f", "cat f", "cat f"])
    result = ad.compact(messages, kit=kit, keep_last=3)
    assert [e.index for e in result.evicted] == [2, 4, 6]
    for index in (4, 6):  # among the newest three, but the same text comes again
        assert result.messages[index]["content"].endswith("] run again later")
    assert result.messages[8] == messages[8]  # the last copy, whole
    # A result that differs stays whole among the newest, as keep_last says.
    varied = session(["x " * 300, page, page + "\nchanged", page], ["a", "b", "c", "d"])
    kept = ad.compact(varied, kit=ad.Toolkit(kit.store), keep_last=3)
    assert [e.index for e in kept.evicted] == [2, 4]


def test_a_first_sentence_starts_where_a_sentence_starts(kit: ad.Toolkit) -> None:
    page = (
        "<html><head><title>multiprocessing</title></head><body>"
        "<p>analogous to the same API) of threading.py but using processes.</p>"
        "<p>It runs workers as separate processes, e.g. with fork, on every platform.</p>"
        + "".join(f"<p>Paragraph {n}.</p>" for n in range(400))
        + "</body></html>"
    )
    res = kit.record(
        "fetch",
        {"url": "https://docs.example/mp.html"},
        page.encode(),
        determinism="deterministic",
        key="https://docs.example/mp.html",
        media_type="text/html",
    )
    gist = ad.evict(res.record, store=kit.store).gist  # type: ignore[union-attr]
    assert gist.startswith(
        '"multiprocessing": It runs workers as separate processes, e.g. with fork, '
        "on every platform."
    )


def test_a_reference_leaves_out_a_key_the_call_shows(kit: ad.Toolkit) -> None:
    body = json.dumps({"id": "ord_8f3KQ2", "customer": "cus_51Lh7A", "notes": "x " * 200})
    asked = {"method": "GET", "url": "https://api.shop.example/v1/orders/1", "identity": "shop"}
    read = kit.record(
        "api",
        asked,
        body.encode(),
        determinism="deterministic",
        key="GET https://api.shop.example/v1/orders/1 as shop",
    )
    file = kit.record(
        "files",
        {"path": "src/app.py"},
        ("def main():\n    return run_all_jobs()\n" * 40).encode(),
        determinism="deterministic",
        key="src/app.py#0f3a9c21",
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    steps = [("api", asked, read), ("files", {"path": "src/app.py"}, file)]
    for k, (name, args, result) in enumerate(steps):
        messages += modelloop.assistant("flat", k, name, args)
        # what kit.handle showed the model, remembered as such
        kit.store.set_shown(ad.ids.content_hash(result.payload), result.id)
        messages.append(modelloop.result("flat", k, name, result.payload.decode()))
    messages += modelloop.assistant("flat", 2, "x", {})
    messages.append(modelloop.result("flat", 2, "x", "ok"))
    stubs = ad.compact(messages, kit=kit, keep_last=1)
    assert [e.kind for e in stubs.evicted] == ["reference", "reference"]
    api_stub, file_stub = (stubs.messages[i]["content"] for i in (2, 4))
    assert api_stub.startswith("[ref:") and "api.shop.example" not in api_stub
    assert "cus_51Lh7A" in api_stub
    assert "src/app.py#0f3a9c21" in file_stub  # the revision is more than the call shows
