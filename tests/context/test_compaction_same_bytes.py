"""Compaction is a function of the messages and the store: the same list gives the same
bytes in any kit on the same store (a second worker, a restarted harness), and a stub
made once is the same stub when the list, grown since, is compacted again."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import addressable as ad
from addressable.store.keys import STUB


def looking_up(store: ad.Store) -> ad.Toolkit:
    """A kit (one of many on `store`) with a lookup that shows an order and 40 rows."""
    kit = ad.Toolkit(store, session="s")

    @kit.tool(determinism="nondeterministic")
    def lookup(name: str) -> str:
        head = f"Order ORD-{name}1 shipped to cus_{name}AbC on 2025-01-04. "
        return head + "\n".join(f"row {i} of {name}: code K{name}{i:03d}" for i in range(40))

    return kit


def lookups(kit: ad.Toolkit, names: list[str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n, name in enumerate(names):
        call = {"id": f"c{n}", "type": "function"}
        call["function"] = {"name": "lookup", "arguments": json.dumps({"name": name})}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        text = kit.handle("lookup", {"name": name})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": text})
    return messages


def test_another_kit_on_the_store_gives_the_same_bytes() -> None:
    store = ad.open_store("memory://")
    first = looking_up(store)
    messages = lookups(first, ["aa", "bb", "cc"])
    early = ad.compact(messages, kit=first, keep_last=1).messages
    # The agent then names what the first result showed: the list grows.
    later = [*messages, {"role": "assistant", "content": "cus_aaAbC and ORD-aa1 matter"}]
    again = ad.compact(later, kit=first, keep_last=1).messages
    elsewhere = ad.compact(later, kit=looking_up(store), keep_last=1).messages

    assert early[2]["content"].startswith("[claim:")
    assert again[:5] == early[:5]  # the same stubs, whatever was said since
    assert elsewhere == again  # in another kit too


def test_a_superseded_result_keeps_the_stub_it_had_in_another_kit() -> None:
    store = ad.open_store("memory://")
    first = looking_up(store)
    messages = lookups(first, ["aa", "bb", "cc"])
    early = ad.compact(messages, kit=first, keep_last=1).messages
    # The same call again, later: the first result is superseded now.
    later = messages + lookups(first, ["aa"])[1:]
    later[-2]["tool_calls"][0]["id"] = later[-1]["tool_call_id"] = "c9"
    again = ad.compact(later, kit=first, keep_last=1).messages
    elsewhere = ad.compact(later, kit=looking_up(store), keep_last=1).messages

    assert "later" not in early[2]["content"]
    assert again[:5] == early[:5]
    assert elsewhere == again
    # Never compacted before it was superseded: the short stub of a superseded result.
    fresh = ad.compact(later, kit=looking_up(ad.open_store("memory://")), keep_last=1)
    assert fresh.messages[2]["content"].endswith("run again later")


def test_a_disk_store_keeps_the_stubs_made_and_gc_drops_them_with_their_records(
    tmp_path: Path,
) -> None:
    first = looking_up(ad.DiskStore(tmp_path / "store"))
    messages = lookups(first, ["aa", "bb", "cc"])
    early = ad.compact(messages, kit=first, keep_last=1).messages
    later = [*messages, {"role": "assistant", "content": "cus_aaAbC and ORD-aa1 matter"}]
    # Another process's kit: the store opened again.
    reopened = ad.DiskStore(tmp_path / "store")
    assert ad.compact(later, kit=looking_up(reopened), keep_last=1).messages[:5] == early[:5]
    assert reopened._backend.keys(STUB)

    reopened.end_session("s")  # the stubs' pins end with their session
    report = reopened.gc(max_age=timedelta(seconds=1), now=datetime.now(UTC) + timedelta(days=1))
    assert report.removed_records
    assert reopened._backend.keys(STUB) == []


def test_a_stub_made_under_another_system_prompt_is_not_taken() -> None:
    store = ad.open_store("memory://")
    first = looking_up(store)
    messages = lookups(first, ["aa", "bb", "cc"])
    system = "Customer cus_aaAbC, order ORD-aa1, since 2025-01-04"
    under = ad.compact(messages, kit=first, keep_last=1, system=system).messages[2]["content"]
    assert "cus_aaAbC" not in under  # the system prompt shows it
    plain = ad.compact(messages, kit=looking_up(store), keep_last=1).messages[2]["content"]
    assert "cus_aaAbC" in plain  # without that prompt, only the stub can
