"""The first-sight cap over MCP, with the SDK's own client over stdio: `mcp serve` and
`mcp proxy` hand a client no result over `max_result_tokens` (a 1 MB text, a 1.5 MB
image), record it whole, and `replay_result` reads any part of the rest."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import mcp_types as types

import addressable as ad
from tests.helpers import SCRIPTS
from tests.helpers.mcp_client import link_of, run, session, texts

BIG = SCRIPTS / "mcp_big_upstream.py"
TEXT = "".join(f"row {n:05d}: the value of item {n} is {n * 37}\n" for n in range(27_000))
TEXT = TEXT[:1_000_000]
IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (1_500_000 // 256)


def handed(result: types.CallToolResult) -> int:
    """The tokens of what a client hands its model: every block but the link."""
    assert all(not isinstance(c, types.ImageContent) for c in result.content)
    return sum(ad.count_tokens(t) for t in texts(result))


def test_serve_hands_a_large_result_within_the_cap(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "big.txt").write_text(TEXT)
    (work / "photo.png").write_bytes(IMAGE)
    store = tmp_path / "store"

    async def scenario() -> None:
        async with session(store, "serve", "files", "--root", str(work)) as client:
            result = await client.call_tool("files", {"command": "read", "path": "big.txt"})
            assert handed(result) <= 8_000
            (shown,) = texts(result)
            record_id = link_of(result).uri.rsplit("/", 1)[1]
            assert shown.startswith(f"[result {record_id}: ")
            assert shown.splitlines()[1] == TEXT.splitlines()[0]
            start = int(re.findall(r"start_line=(\d+)", shown)[-1])
            part = await client.call_tool(
                "replay_result", {"id": record_id, "start_line": start, "end_line": start + 5}
            )
            assert texts(part)[0].splitlines()[1:] == [
                f"{n}: {TEXT.splitlines()[n - 1]}" for n in range(start, start + 6)
            ]
            found = await client.call_tool(
                "replay_result", {"id": record_id, "pattern": "item 20000 "}
            )
            assert "20001: row 20000: the value of item 20000 is 740000" in texts(found)[0]

            photo = await client.call_tool("files", {"command": "read", "path": "photo.png"})
            assert handed(photo) < 100
            photo_id = link_of(photo).uri.rsplit("/", 1)[1]
            assert texts(photo) == [  # as the files adapter records it
                f"[application/octet-stream, {len(IMAGE):,} bytes: not shown; it is kept in "
                f"result {photo_id}]"
            ]

        capped = ("serve", "files", "--root", str(work), "--max-result-tokens", "0")
        async with session(store, *capped) as client:
            result = await client.call_tool("files", {"command": "read", "path": "big.txt"})
            assert texts(result) == [TEXT]  # the cap turned off

    run(scenario)


def test_proxy_hands_a_large_result_within_the_cap(tmp_path: Path) -> None:
    store = tmp_path / "store"
    config = tmp_path / "proxy.toml"
    config.write_text(
        'max_result_tokens = 3000\n\n[[tools]]\nmatch = "hello"\nmax_result_tokens = 0\n'
    )

    async def scenario() -> None:
        upstream = ("--", sys.executable, str(BIG))
        async with session(store, "proxy", "--config", str(config), *upstream) as client:
            result = await client.call_tool("dump", {})
            assert handed(result) <= 3_000
            (shown,) = texts(result)
            record_id = link_of(result).uri.rsplit("/", 1)[1]
            assert shown.startswith(f"[result {record_id}: ")
            assert TEXT.endswith(shown.splitlines()[-2])
            start = int(re.findall(r"start_line=(\d+)", shown)[-1])
            part = await client.call_tool(
                "replay_result", {"id": record_id, "start_line": start, "end_line": 27_000}
            )
            assert handed(part) <= 3_000
            body = texts(part)[0].splitlines()
            assert body[1] == f"{start}: {TEXT.splitlines()[start - 1]}"
            found = await client.call_tool(
                "replay_result", {"id": record_id, "pattern": "item 20000 "}
            )
            assert "20001: row 20000: the value of item 20000 is 740000" in texts(found)[0]
            whole = await client.call_tool("replay_result", {"id": record_id})
            assert texts(whole) == [shown]

            photo = await client.call_tool("photo", {})
            assert handed(photo) < 200
            photo_id = link_of(photo).uri.rsplit("/", 1)[1]
            caption, image = texts(photo)
            assert caption == "a photo"
            assert (
                image
                == f"[image/png, {len(IMAGE):,} bytes: not shown; it is kept in result {photo_id}]"
            )

            assert texts(await client.call_tool("hello", {})) == ["hello"]

    run(scenario)
