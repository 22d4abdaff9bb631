"""The first-sight cap: a result over `max_result_tokens` is recorded whole and handed to
the model as its head and tail, what was left out, what it holds and how to read the
rest; `replay_result` reads any part of the rest, each read within the cap; binary
content is named, never cut. Through `kit.handle`, `ahandle` and an SDK recipe."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

import addressable as ad
from addressable.integrations.anthropic import runner_tools

LINES = 70_000
BIG = "".join(f"row {n:05d}: the value of item {n} is {n * 37}\n" for n in range(LINES))
BIG = BIG[:3_000_000]  # a 3 MB text, as `head -c 3000000` gives it (its last line cut)
IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (5_000_000 // 256)


def test_a_3_mb_result_is_recorded_whole_and_handed_within_the_cap(
    disk_kit: ad.Toolkit,
) -> None:
    kit = disk_kit
    assert kit.max_result_tokens == 8_000

    @kit.tool
    def dump() -> str:
        """A large text."""
        return BIG

    shown = kit.handle("dump", {})
    assert ad.count_tokens(shown) <= 8_000
    record_id = kit.shown(shown)
    assert record_id is not None
    assert kit.replay(record_id).text == BIG  # recorded whole
    lines = shown.splitlines()
    assert lines[0].startswith(f"[result {record_id}: {len(BIG.splitlines()):,} lines, ")
    assert "3,000,000 characters" in lines[0]
    assert lines[1] == BIG.splitlines()[0]  # its head
    assert BIG.endswith(lines[-2])  # its tail, up to the last character
    left = next(line for line in lines if line.startswith("[… left out: line "))
    first_left, last_left = (int(n.replace(",", "")) for n in re.findall(r"line ([\d,]+)", left))
    assert lines[1 + first_left - 1 - 1] == BIG.splitlines()[first_left - 2]
    assert f'replay_result(id="{record_id}", start_line={first_left})' in lines[-1]

    # The rest, read in parts by line ranges: each read is within the cap.
    part = kit.handle(
        "replay_result", {"id": record_id, "start_line": first_left, "end_line": last_left}
    )
    assert ad.count_tokens(part) <= 8_000
    body = part.splitlines()[1:]
    assert body[0] == f"{first_left}: {BIG.splitlines()[first_left - 1]}"
    assert body[-1].startswith("[truncated at about 8000 tokens: ask with start_line=")
    # Anywhere in the middle, by a pattern: the match and its context, within the cap.
    found = kit.handle("replay_result", {"id": record_id, "pattern": "row 31337:"})
    assert "31338: row 31337: the value of item 31337 is 1159469" in found
    assert ad.count_tokens(found) <= 8_000
    # Asked whole, replay_result shows it as it was shown first.
    assert kit.handle("replay_result", {"id": record_id}) == shown
    # Compaction finds the record the capped text shows.
    assert (
        ad.compact(
            [
                {"role": "user", "content": "dump it"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "dump", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": shown}],
                },
                *[{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}] * 3,
            ],
            kit=kit,
            keep_last=0,
            trigger_tokens=1,
        )
        .evicted[0]
        .id
        == record_id
    )


def test_a_one_line_result_is_read_on_by_character(disk_kit: ad.Toolkit) -> None:
    kit = disk_kit
    document = {"rows": [{"id": n, "name": f"item-{n}"} for n in range(100_000)], "total": 1}
    text = json.dumps(document)

    @kit.tool
    def table() -> str:
        """A JSON document on one line."""
        return text

    shown = kit.handle("table", {})
    assert ad.count_tokens(shown) <= 8_000
    record_id = kit.shown(shown)
    assert '[it holds a JSON object of 2 keys: "rows" (100,000 rows of id, name), "total" ' in shown
    at = int(re.search(r"start_char=(\d+)", shown.splitlines()[-1]).group(1))  # type: ignore[union-attr]
    assert text.startswith(shown.splitlines()[2])
    assert len(shown.splitlines()[2]) == at
    # Read on from there, read after read, until a part from the middle is reached.
    read = kit.handle("replay_result", {"id": record_id, "start_line": 1, "start_char": at})
    assert ad.count_tokens(read) <= 8_000
    got = read.splitlines()[1].removeprefix("1: ")
    assert text[at:].startswith(got) and len(got) > 1000
    goes_on = int(re.search(r"start_char=(\d+)", read.splitlines()[-1]).group(1))  # type: ignore[union-attr]
    assert goes_on == at + len(got)
    # A pattern on the one long line shows a window of characters around the match.
    found = kit.handle("replay_result", {"id": record_id, "pattern": '"id": 54321,'})
    window = re.search(r"\[characters (\d+)-(\d+) of the line\] (.*)", found)
    assert window is not None
    start, end = int(window.group(1)), int(window.group(2))
    assert text[start:end] == window.group(3) and '"id": 54321,' in window.group(3)


def test_an_image_is_named_never_cut(disk_kit: ad.Toolkit) -> None:
    kit = disk_kit

    @kit.tool(media_type="image/png")
    def screenshot() -> bytes:
        """A 5 MB image."""
        return IMAGE

    shown = kit.handle("screenshot", {})
    record_id = kit.shown(shown)
    assert record_id is not None and kit.replay(record_id).payload == IMAGE
    assert shown == (
        f"[binary content: {len(IMAGE):,} bytes of image/png, kept in result {record_id}; "
        "it cannot be shown as text]"
    )


def test_the_cap_is_set_per_tool_and_turned_off_with_none(disk_kit: ad.Toolkit) -> None:
    kit = disk_kit
    text = "word " * 4_000  # about 4,000 tokens

    @kit.tool(max_result_tokens=1_000)
    def small() -> str:
        """Capped at 1,000."""
        return text

    @kit.tool
    def free() -> str:
        """Not capped."""
        return text * 10

    kit.set_max_result_tokens("free", None)
    assert ad.count_tokens(kit.handle("small", {})) <= 1_000
    assert kit.handle("free", {}) == text * 10
    kit.max_result_tokens = 2_000  # the default of the others
    assert kit.result_cap("small") == 1_000 and kit.result_cap("replay_result") == 2_000
    with pytest.raises(ad.AddressableError, match="at least 200 tokens"):
        kit.max_result_tokens = 50
    with pytest.raises(ad.AddressableError, match="whole number of tokens or None"):
        ad.Toolkit("memory://", max_result_tokens="many")  # type: ignore[arg-type]

    def other() -> str:
        return "x"

    with pytest.raises(ad.AddressableError, match="max_result_tokens of 'other'"):
        kit.tool(max_result_tokens=10)(other)
    assert "other" not in [t["name"] for t in kit.tools()]  # nothing was registered
    assert kit.handle("free", {}) == text * 10  # its own cap is its own
    off = ad.Toolkit("memory://", max_result_tokens=None)

    @off.tool
    def whole() -> str:
        """No cap on the kit."""
        return text * 10

    assert off.handle("whole", {}) == text * 10


def test_ahandle_and_an_sdk_recipe_hand_no_more_than_the_cap(disk_kit: ad.Toolkit) -> None:
    kit = disk_kit

    @kit.tool
    async def dump() -> str:
        """A large text, from an async tool."""
        return BIG

    shown = asyncio.run(kit.ahandle("dump", {}))
    assert ad.count_tokens(shown) <= 8_000 and kit.shown(shown) is not None
    # The Anthropic tool runner's tools: what the runner sends back as the tool result.
    (tool,) = [t for t in runner_tools(kit) if t.to_dict()["name"] == "dump"]
    sent = tool.call({})
    assert isinstance(sent, str) and ad.count_tokens(sent) <= 8_000
    assert kit.replay(kit.shown(sent) or "").text == BIG
