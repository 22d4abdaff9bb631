"""A stored upstream result is its content, not the envelope it came in: with the SDK's
own client over stdio, `resources/read` of a text result gives exactly the text the
upstream sent, of an image exactly its bytes as a blob with its media type, each
marked as the upstream's; `replay` and `show --raw` print the text; the envelope is
kept beside the payload, and the same content keeps its id whatever `_meta` says."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import mcp_types as types

from addressable.mcp.content import ORIGIN
from tests.helpers import SCRIPTS
from tests.helpers.mcp_client import UPSTREAM, addressable, link_of, records, run, session

BIG = SCRIPTS / "mcp_big_upstream.py"
TEXT = "".join(f"row {n:05d}: the value of item {n} is {n * 37}\n" for n in range(27_000))
TEXT = TEXT[:1_000_000]
IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (1_500_000 // 256)
UPSTREAM_MARK = {ORIGIN: "upstream"}


def test_resources_read_gives_the_upstream_content_exactly(tmp_path: Path) -> None:
    store = tmp_path / "store"
    ids: dict[str, str] = {}

    async def scenario() -> None:
        async with session(store, "proxy", "--", sys.executable, str(BIG)) as client:
            dump = link_of(await client.call_tool("dump", {}))
            (text,) = (await client.read_resource(dump.uri)).contents
            assert isinstance(text, types.TextResourceContents)
            assert text.text == TEXT and text.mime_type == "text/plain"
            assert text.meta == UPSTREAM_MARK

            photo = link_of(await client.call_tool("photo", {}))
            caption, image = (await client.read_resource(photo.uri)).contents
            assert isinstance(caption, types.TextResourceContents) and caption.text == "a photo"
            assert isinstance(image, types.BlobResourceContents)
            assert image.mime_type == "image/png" and base64.b64decode(image.blob) == IMAGE
            assert image.meta == UPSTREAM_MARK

            first = link_of(await client.call_tool("stamped", {}))
            second = link_of(await client.call_tool("stamped", {}))
            assert first.uri == second.uri  # the envelope's _meta takes no part in the id
            ids.update(dump=dump.uri[-16:], stamped=first.uri[-16:])

        async with session(store, "proxy", "--", sys.executable, str(UPSTREAM)) as client:
            weather = link_of(await client.call_tool("weather", {"city": "Oslo"}))
            (structured,) = (await client.read_resource(weather.uri)).contents
            assert isinstance(structured, types.TextResourceContents)  # its text is the JSON
            assert structured.mime_type == "application/json"
            assert json.loads(structured.text) == {"city": "Oslo", "celsius": 21.5}
            # Replayed whole, the result comes back as the upstream sent it.
            again = await client.call_tool("replay_result", {"id": weather.uri[-16:]})
            assert again.structured_content == {"city": "Oslo", "celsius": 21.5}
            echo = link_of(await client.call_tool("echo", {"text": "hi"}))
            ids["echo"] = echo.uri[-16:]

    run(scenario)
    raw = addressable("replay", "--store", str(store), ids["echo"])
    assert raw.returncode == 0 and raw.stdout == "HI"
    shown = addressable("show", "--store", str(store), "--raw", ids["echo"])
    assert shown.returncode == 0 and shown.stdout == "HI"
    by_id = {r["id"]: r for r in records(store)}
    assert by_id[ids["dump"]]["size"] == len(TEXT.encode("utf-8"))  # the text alone
    envelope = by_id[ids["stamped"]]["meta"]["envelope"]
    assert envelope["_meta"]["call"] == 1 and envelope["isError"] is False  # the first's
