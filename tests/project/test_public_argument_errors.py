"""The public functions take what their users are likely to hand them, and answer a
wrong kind of argument with one line from the library's error tree, not an
AttributeError or a TypeError from deep inside."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import addressable as ad

WORDS = " ".join(f"word{i}" for i in range(3000))


def messages(text: str = WORDS) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    return [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": text},
        {"role": "assistant", "content": "ok"},
    ]


def task() -> ad.Task:
    return ad.Task(text="t", items=["a"])


@pytest.fixture
def kit() -> ad.Toolkit:
    return ad.Toolkit(ad.open_store("memory://"))


CASES: dict[str, tuple[Callable[[ad.Toolkit], object], str]] = {
    "compact pins=None": (
        lambda kit: ad.compact(messages(), kit=kit, pins=None),
        "give a list of ids to pin, not NoneType",
    ),
    "compact pending_keys=7": (
        lambda kit: ad.compact(messages(), kit=kit, pending_keys=7),
        "give a list of keys, not int",
    ),
    "compact system=7": (
        lambda kit: ad.compact(messages(), kit=kit, system=7),
        "compact: system must be a list, not int",
    ),
    "a summarizer that answers None": (
        lambda kit: ad.compact(messages(), kit=kit, keep_last=0, summarizer=lambda r, p, b: None),
        "the summarizer's answer must be a str, not NoneType",
    ),
    "compact summarizer=5": (
        lambda kit: ad.compact(messages(), kit=kit, keep_last=0, summarizer=5),
        "compact: summarizer must be a callable (record, payload, budget) -> str, not int",
    ),
    "a summarizer of one argument": (
        lambda kit: ad.compact(messages(), kit=kit, keep_last=0, summarizer=lambda r: "x"),
        "compact: summarizer must take (record, payload, budget); it takes (r)",
    ),
    "evict summarizer=5": (
        lambda kit: ad.evict(
            kit.record("t", {}, WORDS.encode(), determinism="deterministic").record,
            store=kit.store,
            summarizer=5,
        ),
        "evict: summarizer must be a callable (record, payload, budget) -> str, not int",
    ),
    "evict an id": (
        lambda kit: ad.evict(
            kit.record("t", {}, WORDS.encode(), determinism="deterministic").id, store=kit.store
        ),
        "evict: record must be a Record, not str",
    ),
    "evict without a store": (
        lambda kit: ad.evict(
            kit.record("t", {}, WORDS.encode(), determinism="deterministic").record, store=None
        ),
        "evict: store= must be a Store, not NoneType",
    ),
    "Toolkit(5)": (
        lambda kit: ad.Toolkit(5),
        "Toolkit: store must be a Store or a store URL, not int",
    ),
    "count_tokens(None)": (
        lambda kit: ad.count_tokens(None),
        "count_tokens: text must be a str, not NoneType",
    ),
    "count_tokens(bytes)": (
        lambda kit: ad.count_tokens(b"abc"),
        "count_tokens: text must be a str, not bytes",
    ),
    "problems(previous=dict)": (
        lambda kit: ad.StateDocument(task=task()).problems(previous={"task": {}}),
        "problems: previous must be a StateDocument, not dict",
    ),
    "checkpoint(None)": (
        lambda kit: kit.checkpoint(None),
        "checkpoint: document must be a StateDocument, not NoneType",
    ),
    "require_fresh(None)": (
        lambda kit: kit.require_fresh(None),
        "give a list of ids, not NoneType",
    ),
    "state_prompt(None)": (
        lambda kit: ad.state_prompt(None),
        "state_prompt: task must be a Task, not NoneType",
    ),
    "compact_state(None)": (
        lambda kit: ad.compact_state(None, kit=kit, task=task()),
        "compact_state: generate must be callable, not NoneType",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_wrong_kind_of_argument_is_one_line_from_the_error_tree(
    kit: ad.Toolkit, case: str
) -> None:
    call, says = CASES[case]
    with pytest.raises(ad.ArgumentError) as caught:
        call(kit)
    assert str(caught.value) == says or str(caught.value).startswith(says)
    assert "\n" not in str(caught.value)


def test_compact_takes_anthropic_s_system_blocks_as_their_text(kit: ad.Toolkit) -> None:
    system = "You are careful.\nCite your sources."
    blocks = [
        {"type": "text", "text": "You are careful."},
        {"type": "text", "text": "Cite your sources.", "cache_control": {"type": "ephemeral"}},
    ]
    as_text = ad.compact(messages(), kit=kit, keep_last=0, system=system)
    as_blocks = ad.compact(messages(), kit=kit, keep_last=0, system=blocks)
    assert as_blocks.tokens_before == as_text.tokens_before
    assert as_blocks.tokens_after == as_text.tokens_after
    assert as_blocks.messages == as_text.messages


def test_a_toolkit_opens_the_store_a_url_names() -> None:
    kit = ad.Toolkit("memory://")
    result = kit.record("t", {}, b"hello", determinism="deterministic")
    assert kit.replay(result.id).text == "hello"
    assert isinstance(kit.store, ad.MemoryStore)


def test_a_binary_result_reads_the_same_to_the_model_from_handle_and_from_replay(
    kit: ad.Toolkit,
) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))

    @kit.tool(determinism="deterministic", key=lambda n: f"img/{n}")
    def image(n: int) -> bytes:
        """An image."""
        return png

    shown = kit.handle("image", {"n": 1})
    (record,) = [r for r in kit.store.records() if r.tool == "image"]
    replayed = kit.handle("replay_result", {"id": record.id})
    assert shown == replayed
    assert shown.startswith(f"[binary content: {len(png):,} bytes of ")
    assert "\ufffd" not in shown and "\x00" not in shown


@pytest.mark.parametrize(
    "payload", [b"caf\xe9 latte, total 12 files\n", b"a.txt\x00b.txt\x00c.txt\x00"]
)
def test_text_with_a_stray_byte_is_still_shown_as_text(kit: ad.Toolkit, payload: bytes) -> None:
    @kit.tool(determinism="nondeterministic")
    def listing() -> bytes:
        """Some output."""
        return payload

    shown = kit.handle("listing", {})
    assert ("binary content" not in shown and "txt" in shown) or "latte" in shown
    (record,) = [r for r in kit.store.records() if r.tool == "listing"]
    assert kit.handle("replay_result", {"id": record.id}) == shown


@pytest.mark.parametrize("label", ["Result: ", "```\n"])
def test_a_labelled_python_literal_with_bytes_or_sets_compacts(kit: ad.Toolkit, label: str) -> None:
    text = label + repr({b"key": b"v" * 3000, "tags": {1, 2}, "id": "ord_5581"})
    made = ad.compact(messages(text), kit=kit, keep_last=0)
    assert len(made.evicted) == 1 and "ord_5581" in made.messages[2]["content"]
