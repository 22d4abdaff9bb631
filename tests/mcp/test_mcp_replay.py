"""`replay_result` and resources/read through `addressable mcp proxy` and `serve`, as
real subprocesses: a range, a pattern or a cap works on the text the upstream sent, not
on the JSON it is stored as; an id megabytes long is a short error."""

from __future__ import annotations

import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

import addressable as ad
from tests.helpers.mcp_client import UPSTREAM, link_of, run, session, texts

ROWS = "\n".join(f"row {k}: alpha beta gamma {k * 7}" for k in range(200))


def test_proxy_replay_selects_on_the_upstream_text(tmp_path: Path) -> None:
    upstream = ("--", sys.executable, str(UPSTREAM))

    async def scenario() -> None:
        async with session(tmp_path / "store", "proxy", *upstream) as client:
            await client.list_tools()
            echoed = await client.call_tool("echo", {"text": ROWS})  # the upstream upper-cases
            record_id = link_of(echoed).uri.rsplit("/", 1)[1]

            ranged = await client.call_tool(
                "replay_result", {"id": record_id, "start_line": 3, "end_line": 5}
            )
            assert not ranged.is_error
            assert texts(ranged) == [
                "[lines 3-5 of 200]\n3: ROW 2: ALPHA BETA GAMMA 14\n"
                "4: ROW 3: ALPHA BETA GAMMA 21\n5: ROW 4: ALPHA BETA GAMMA 28"
            ]
            assert link_of(ranged).uri.endswith(record_id)

            found = await client.call_tool("replay_result", {"id": record_id, "pattern": "ROW 17:"})
            lines = texts(found)[0].splitlines()
            assert lines[0] == "[1 lines match 'ROW 17:' of 200]"
            assert lines[3] == "18: ROW 17: ALPHA BETA GAMMA 119" and len(lines) == 6

            capped = await client.call_tool("replay_result", {"id": record_id, "max_tokens": 20})
            (text,) = texts(capped)
            assert text.startswith("[lines 1-200 of 200]\n1: ROW 0: ALPHA BETA GAMMA 0\n")
            assert text.endswith("for more]") and len(text) < 200

            bad = await client.call_tool(
                "replay_result", {"id": record_id, "start_line": 5, "end_line": 2}
            )
            assert bad.is_error
            assert texts(bad)[0].startswith("error: replay_result: end_line is")  # as kit.handle

            picture = await client.call_tool("picture", {})
            picture_id = link_of(picture).uri.rsplit("/", 1)[1]
            part = await client.call_tool("replay_result", {"id": picture_id, "pattern": "pic"})
            assert texts(part) == [
                "[1 lines match 'pic' of 1]\n1: a picture\n"
                "[with it: 1 image (image/png, 768 bytes), not shown as text]"
            ]
            # asked whole, it is the upstream's result as it came
            whole = await client.call_tool("replay_result", {"id": picture_id})
            assert whole.content == picture.content

    run(scenario)


def test_a_huge_id_or_uri_is_a_short_error(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")

    async def scenario() -> None:
        async with session(tmp_path / "store", "serve", "files", "--root", str(work)) as client:
            answer = await client.call_tool("replay_result", {"id": "a" * 1_000_000})
            assert answer.is_error
            (text,) = texts(answer)
            assert text.startswith(
                "error: replay_result: argument 'id' does not fit: "
                "String should have at most 64 characters (got 'aaaa"
            )
            assert len(text) < 200
            for uri in ("addressable://result/" + "a" * 1_000_000, "file:///" + "x" * 1_000_000):
                with pytest.raises(MCPError) as raised:
                    await client.read_resource(uri)
                assert "(1,000,0" in raised.value.message and len(raised.value.message) < 200
            named = await client.call_tool("n" * 1_000_000, {})
            assert named.is_error and len(texts(named)[0]) < 200
            assert isinstance(named.content[0], types.TextContent)

    run(scenario)


def test_a_prefix_through_the_proxy_names_only_its_own_session_s_records(tmp_path: Path) -> None:
    # Each proxy process is a session of its own; another's results replay by full id only.
    upstream = ("--", sys.executable, str(UPSTREAM))
    made: list[str] = []

    async def first() -> None:
        async with session(tmp_path / "store", "proxy", *upstream) as client:
            await client.list_tools()
            echoed = await client.call_tool("echo", {"text": "private rows"})
            made.append(link_of(echoed).uri.rsplit("/", 1)[1])
            mine = await client.call_tool("replay_result", {"id": made[0][:8]})
            assert texts(mine) == ["PRIVATE ROWS"]

    async def second() -> None:
        async with session(tmp_path / "store", "proxy", *upstream) as client:
            await client.list_tools()
            theirs = await client.call_tool("replay_result", {"id": made[0][:8]})
            assert theirs.is_error
            assert texts(theirs)[0].startswith(f"error: no result with id {made[0][:8]}.")
            assert made[0] not in texts(theirs)[0]
            whole = await client.call_tool("replay_result", {"id": made[0]})
            assert texts(whole) == ["PRIVATE ROWS"]

    run(first)
    run(second)


def test_resources_keep_to_the_servers_session_as_replay_result_does(tmp_path: Path) -> None:
    # Another session's record in the same store: listed nowhere, not found by a prefix
    # (a prefix is guessed), read by its whole id only (an id is not).
    with ad.DiskStore(tmp_path / "store") as store:
        theirs = ad.Toolkit(store, session="someone-else").record(
            "t", {}, b"not yours", determinism="deterministic"
        )
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")

    async def scenario() -> None:
        async with session(tmp_path / "store", "serve", "files", "--root", str(work)) as client:
            mine = await client.call_tool("files", {"command": "read", "path": "notes.txt"})
            mine_uri = link_of(mine).uri
            listed = {r.uri for r in (await client.list_resources()).resources}
            assert mine_uri in listed and f"addressable://result/{theirs.id}" not in listed
            own_prefix = mine_uri.rsplit("/", 1)[1][:8]
            read = await client.read_resource(f"addressable://result/{own_prefix}")
            assert read.contents[0].text == "hello\n"  # type: ignore[union-attr]
            with pytest.raises(MCPError) as raised:
                await client.read_resource(f"addressable://result/{theirs.id[:8]}")
            assert raised.value.message == f"no result id starts with '{theirs.id[:8]}'"
            whole = await client.read_resource(f"addressable://result/{theirs.id}")
            assert whole.contents[0].text == "not yours"  # type: ignore[union-attr]

    run(scenario)
