"""Compaction of real message lists: a model loop over real adapters, in every shape."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import Api, Fetch, Identity, LocalIndex, Scope, Search, Shell
from addressable.context import messages as _messages
from tests.helpers import modelloop, needs
from tests.helpers.httpserver import LocalServer, Page, Reply
from tests.helpers.modelloop import SDK_TYPES, grep_session

SHAPES = ["anthropic", "openai", "flat", "openai-responses"]
MODULES = [
    "threading",
    "queue",
    "json",
    "pathlib",
    "sqlite3",
    "logging",
    "heapq",
    "bisect",
    "textwrap",
    "shlex",
    "fnmatch",
    "glob",
    "difflib",
    "csv",
    "struct",
    "zlib",
]


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture(scope="module")
def pages() -> dict[str, bytes]:
    return {m: modelloop.pydoc_page(m) for m in MODULES}


def research(kit: ad.Toolkit, server: LocalServer, pages: dict[str, bytes]) -> list[Any]:
    """For each module: search the local index, then fetch the page found. 32 calls."""
    fetch = Fetch(kit)
    index = LocalIndex()
    for module, html in pages.items():
        server.pages[f"/library/{module}.html"] = Page(html)
        index.add_page(fetch(server.url(f"/library/{module}.html")))
    Search(kit, index, limit=3)
    steps: list[modelloop.Step] = []
    for module in MODULES:
        steps.append(("search", {"query": f"{module} module documentation"}))
        steps.append(("fetch", {"url": server.url(f"/library/{module}.html")}))
    return steps


@pytest.mark.parametrize("shape", SHAPES)
def test_a_long_session_compacts_and_every_stub_replays(
    kit: ad.Toolkit, server: LocalServer, pages: dict[str, bytes], shape: str
) -> None:
    steps = research(kit, server, pages)
    messages = modelloop.run(kit, shape, steps, "Which of these modules are thread-safe?")
    assert len(messages) >= 60
    result = ad.compact(messages, kit=kit, keep_last=3)
    assert result.shape == shape
    if shape in SDK_TYPES:  # both lists fit the official SDK's request types
        SDK_TYPES[shape].validate_python(messages)
        SDK_TYPES[shape].validate_python(result.messages)
    assert len(result.messages) == len(messages)
    assert result.tokens_after <= 0.15 * result.tokens_before
    assert result.tokens_before == ad.message_tokens(messages)
    conversation = _messages.parse(messages)
    originals = {r.call_id: r.text for r in conversation.results}
    compacted = {r.call_id: r.text for r in _messages.parse(result.messages).results}
    assert len(result.evicted) >= 25
    for evicted in result.evicted:
        stub = compacted[evicted.call_id]
        kind, shown = ad.parse_stub(stub) or ("", "")
        assert kind == ("ref" if evicted.kind == "reference" else "claim")
        assert len(shown) >= 8 and evicted.id.startswith(shown)
        assert ad.count_tokens(stub) <= 120  # the default budget
        # replay_result gives back exactly what the model had seen, by the id shown
        assert kit.handle("replay_result", {"id": shown}) == originals[evicted.call_id]
        assert kit.store.is_pinned(evicted.id, now=kit.clock())  # live by the kit's clock
    kept = [r.call_id for r in conversation.results][-3:]
    assert all(compacted[c] == originals[c] for c in kept)
    # Fetched pages are References keyed by their URL; searches are Claims.
    kinds = {conversation.calls[e.call_id].name: e.kind for e in result.evicted}
    assert kinds == {"fetch": "reference", "search": "claim"}
    # Every URL a fetch used came from a search: the search's stub still shows it.
    shown = needs.results_text(result.messages)
    for call in conversation.calls.values():
        if call.name == "fetch":
            assert call.arguments["url"] in shown


@pytest.mark.parametrize("shape", SHAPES)
def test_compacting_twice_changes_nothing(
    kit: ad.Toolkit, server: LocalServer, pages: dict[str, bytes], shape: str
) -> None:
    messages = modelloop.run(kit, shape, research(kit, server, pages)[:8], "task")
    once = ad.compact(messages, kit=kit, keep_last=3)
    twice = ad.compact(once.messages, kit=kit, keep_last=3)
    assert twice.messages == once.messages
    assert twice.evicted == [] and twice.tokens_before == once.tokens_after
    assert messages != once.messages  # the input itself was not changed...
    assert ad.compact(messages, kit=kit, keep_last=3).messages == once.messages  # ...and pure


def test_the_trigger(kit: ad.Toolkit, server: LocalServer, pages: dict[str, bytes]) -> None:
    messages = modelloop.run(kit, "anthropic", research(kit, server, pages)[:6], "task")
    total = ad.message_tokens(messages)
    assert ad.compact(messages, kit=kit, trigger_tokens=total).evicted == []
    assert ad.compact(messages, kit=kit, trigger_tokens=total - 1).evicted != []


def test_what_is_never_evicted(
    kit: ad.Toolkit, server: LocalServer, tmp_path: Path, pages: dict[str, bytes], secret_env: Any
) -> None:
    secret_env("OPS_TOKEN")
    steps = research(kit, server, pages)[:6]
    server.routes[("PATCH", "/orders/1")] = lambda r: Reply(503, b'{"error": "busy"}' * 40)
    Api(
        kit,
        identities=[Identity(name="ops", headers={"Authorization": "Bearer secret:env:OPS_TOKEN"})],
        scope=Scope(origins=(server.url(),), actions=frozenset({"write", "read"})),
    )
    Shell(kit, cwd=tmp_path)
    steps += [
        (
            "api",
            {
                "method": "PATCH",
                "url": server.url("/orders/1"),
                "identity": "ops",
                "body": {"status": "shipped"},
            },
        ),
        ("shell", {"command": "echo short"}),
        ("replay_result", {"id": "0000000000000000"}),
    ]
    steps += [("fetch", {"url": server.url("/library/json.html")})] * 3
    messages = modelloop.run(kit, "anthropic", steps, "task")
    conversation = _messages.parse(messages)
    first_page = next(
        r for r in conversation.results if conversation.calls[r.call_id].name == "fetch"
    )
    pinned_id = kit.shown(first_page.text)
    assert pinned_id is not None
    result = ad.compact(
        messages,
        kit=kit,
        keep_last=3,
        pins=[pinned_id],
        pending_keys=[server.url("/library/queue.html")],
    )
    names = {conversation.calls[e.call_id].name for e in result.evicted}
    evicted_calls = {e.call_id for e in result.evicted}
    api_call = next(c for c in conversation.calls.values() if c.name == "api")
    assert api_call.call_id not in evicted_calls  # outcome unknown: stays in sight
    assert "replay_result" not in names and "shell" not in names  # replays, small results
    assert first_page.call_id not in evicted_calls  # pinned
    fetched = [
        conversation.calls[e.call_id].arguments["url"]
        for e in result.evicted
        if conversation.calls[e.call_id].name == "fetch"
    ]
    # threading.html is pinned, queue.html is the newest of a pending key: only
    # json.html goes: the older read, and two of its three newer twins (the newest
    # results), exact copies of the last one, which stays whole.
    assert fetched == [server.url("/library/json.html")] * 3
    last = conversation.results[-1]
    assert result.messages[last.index]["content"][last.block]["content"] == last.text
    assert names == {"search", "fetch"}


def test_foreign_results_are_ingested_and_replay(kit: ad.Toolkit) -> None:
    messages = grep_session()
    result = ad.compact(messages, kit=kit, keep_last=3)
    assert len(result.evicted) == 2
    for evicted in result.evicted:
        record = kit.get(evicted.id)
        assert record.key == f"call:{evicted.call_id}"
        assert record.determinism is ad.Determinism.NONDETERMINISTIC
        assert evicted.kind == "claim"
        original = messages[evicted.index]["content"]
        assert kit.handle("replay_result", {"id": evicted.id}) == original
    # What they listed, the three kept results list too: their stubs need not.
    assert all("module_" not in result.messages[e.index]["content"] for e in result.evicted)
    # On a store that has made no stub of them (on this one, another kit would give the
    # stubs made above: the same bytes), with none kept whole:
    every = ad.compact(messages, kit=ad.Toolkit(ad.open_store("memory://")), keep_last=0)
    first, *others = (every.messages[e.index]["content"] for e in every.evicted)
    assert others
    assert "src/module_0.py" in first  # the identifiers a next step reuses...
    assert not any("src/module_0.py" in other for other in others)  # ...shown once


def test_in_flight_calls_are_left_alone(kit: ad.Toolkit) -> None:
    big = "x " * 400
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for k in range(4):
        messages += modelloop.assistant("openai", k, "bash", {"command": f"cmd {k}"})
        messages.append(modelloop.result("openai", k, "bash", big + str(k)))
    messages += modelloop.assistant("openai", 9, "bash", {"command": "still running"})
    result = ad.compact(messages, kit=kit, keep_last=3)
    assert [e.call_id for e in result.evicted] == ["call_0000"]
    assert result.messages[-1] == messages[-1]


@pytest.mark.parametrize(
    ("messages", "index", "message"),
    [
        pytest.param(
            [{"role": "user", "content": "a"}, "oops"],
            1,
            "expected a message: a dict, an SDK message object or a LangChain message, got str",
            id="not-an-object",
        ),
        pytest.param(
            [
                {"role": "assistant", "tool_calls": [{"id": "c1", "name": "t", "arguments": {}}]},
                {"role": "user", "content": "no result"},
                {"role": "assistant", "content": "later"},
            ],
            0,
            "tool call 'c1' (t) has no result",
            id="missing-result",
        ),
        pytest.param(
            [{"role": "tool", "tool_call_id": "zz", "content": "x"}],
            0,
            "answers no earlier tool call",
            id="orphan-result",
        ),
        pytest.param([{"role": "robot", "content": "x"}], 0, "unknown role", id="bad-role"),
        pytest.param(
            [
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "t", "arguments": 5}}
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "x"},
            ],
            0,
            "arguments are not an object",
            id="arguments-not-text",
        ),
        pytest.param(
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "again"}],
                },
            ],
            2,
            "a second tool result for 't1'",
            id="duplicate-result",
        ),
    ],
)
def test_a_malformed_list_names_the_offending_message(
    kit: ad.Toolkit, messages: list[Any], index: int, message: str
) -> None:
    with pytest.raises(ad.MalformedMessages) as info:
        ad.compact(messages, kit=kit)
    assert info.value.index == index
    assert str(info.value).startswith(f"message {index}: ")
    assert message in str(info.value)


def test_compacting_again_adds_no_observations(kit: ad.Toolkit) -> None:
    messages = grep_session()
    first = ad.compact(messages, kit=kit, keep_last=3)
    ad.compact(messages, kit=kit, keep_last=3)  # the same list, compacted again
    for evicted in first.evicted:
        assert len(kit.store.observations(evicted.id)) == 1


def test_another_process_on_the_same_store_still_points_stubs_at_the_records(
    disk_store: ad.DiskStore, clock: Any, server: LocalServer, pages: dict[str, bytes]
) -> None:
    runner = ad.Toolkit(disk_store, session="run", clock=clock)
    messages = modelloop.run(runner, "anthropic", research(runner, server, pages)[:8], "task")
    compactor = ad.Toolkit(disk_store, session="compactor", clock=clock)  # knows no tools
    result = ad.compact(messages, kit=compactor, keep_last=3)
    fetched = [e for e in result.evicted if e.kind == "reference"]
    assert fetched  # the pages are References to the fetch records, not ingested Claims
    for evicted in fetched:
        assert compactor.get(evicted.id).tool == "fetch"
    for evicted in fetched:
        disk_store.unpin(evicted.id)
    report = disk_store.gc(max_age=timedelta(seconds=1), now=clock.now + timedelta(days=1))
    assert set(report.removed_records) >= {e.id for e in fetched}
    # What pointed at the removed records went with them: compacting again ingests.
    again = ad.compact(messages, kit=ad.Toolkit(disk_store, clock=clock), keep_last=3)
    assert all(e.kind == "claim" for e in again.evicted)


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_a_call_id_given_again_after_its_result_is_a_new_call(kit: ad.Toolkit, shape: str) -> None:
    # Some models number their calls afresh each turn: `call_0` again, once the first
    # `call_0` has its result. A result answers the latest call with its id.
    pages = [" ".join(f"page{k}-word{n}" for n in range(900)) for k in range(3)]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read three pages"}]
    for k, page in enumerate(pages):
        if shape == "openai":
            call = {"id": "call_0", "type": "function"}
            call["function"] = {"name": "read", "arguments": json.dumps({"page": k})}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": "call_0", "content": page})
        else:
            use = {"type": "tool_use", "id": "call_0", "name": "read", "input": {"page": k}}
            answer = {"type": "tool_result", "tool_use_id": "call_0", "content": page}
            messages.append({"role": "assistant", "content": [use]})
            messages.append({"role": "user", "content": [answer]})
    messages.append({"role": "assistant", "content": "done"})
    conversation = ad.parse_messages(messages)
    assert list(conversation.calls) == ["call_0", "call_0#2", "call_0#3"]
    assert [r.call_id for r in conversation.results] == ["call_0", "call_0#2", "call_0#3"]
    made = ad.compact(messages, kit=kit, keep_last=1)
    # what compact reports names each call as the list does, told apart by its message
    assert [(e.index, e.call_id) for e in made.evicted] == [(2, "call_0"), (4, "call_0")]
    texts = [r.text for r in ad.parse_messages(made.messages).results]
    assert texts[2] == pages[2] and texts[0] != pages[0] and texts[1] != pages[1]
    for k in (0, 1):  # each stub gives back its own page, not the other's
        stub_id = texts[k].split("]")[0].split(":")[1]
        assert kit.handle("replay_result", {"id": stub_id}) == pages[k]
    assert made.messages[1:] != messages[1:] and len(made.messages) == len(messages)
    wire = [m.get("tool_call_id") for m in made.messages if m.get("role") == "tool"]
    assert wire in ([], ["call_0"] * 3)  # the ids as written stay as written


def test_a_call_id_given_twice_before_a_result_is_still_refused(kit: ad.Toolkit) -> None:
    calls = [
        {"id": "c", "type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"id": "c", "type": "function", "function": {"name": "b", "arguments": "{}"}},
    ]
    messages = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c", "content": "one"},
        {"role": "tool", "tool_call_id": "c", "content": "two"},
    ]
    with pytest.raises(ad.MalformedMessages, match="used twice before a result answers it"):
        ad.compact(messages, kit=kit)


def test_a_written_id_given_to_several_calls_pins_them_all_and_names_its_own(
    kit: ad.Toolkit,
) -> None:
    pages = [" ".join(f"p{k}-w{n}" for n in range(900)) for k in range(3)]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read"}]
    for k, (call_id, page) in enumerate(zip(["a#2", "a", "a"], pages, strict=True)):
        call = {"id": call_id, "type": "function"}
        call["function"] = {"name": "read", "arguments": json.dumps({"page": k})}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": page})
    messages.append({"role": "assistant", "content": "done"})
    conversation = ad.parse_messages(messages)
    assert len(set(conversation.calls)) == 3  # a list may spell `ID#2` itself
    assert [r.written_id or r.call_id for r in conversation.results] == ["a#2", "a", "a"]
    made = ad.compact(messages, kit=kit, keep_last=0, pins=["a"])
    texts = [r.text for r in ad.parse_messages(made.messages).results]
    assert texts[1:] == pages[1:] and texts[0] != pages[0]
    cut = [*messages[:6], {"role": "user", "content": "next"}]  # the third `a` unanswered
    with pytest.raises(ad.MalformedMessages, match="tool call 'a' \\(read\\) has no result"):
        ad.parse_messages(cut)
