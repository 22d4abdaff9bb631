"""What `addressable mcp proxy` records of a call, and what it refuses before anything
is sent: a cancelled action is recorded (outcome unknown); a tool the upstream does not
list and arguments that cannot be recorded are one-line error results, sent nowhere and
stored nowhere; the credentials in a URL are not stored; a record that is not the
upstream result its meta says is an error result. Real subprocesses, over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.buffered import BufferedByteReceiveStream

import addressable as ad
from tests.helpers import SCRIPTS
from tests.helpers.mcp_client import (
    UPSTREAM,
    addressable,
    link_of,
    process_env,
    records,
    run,
    session,
    texts,
)

GROWING = SCRIPTS / "mcp_growing_upstream.py"
SLOW_LIST = SCRIPTS / "mcp_slowlist_upstream.py"


def test_a_cancelled_action_is_recorded_with_outcome_unknown(tmp_path: Path) -> None:
    store = tmp_path / "store"
    marker = tmp_path / "deleted-marker"

    async def scenario() -> None:
        async with session(store, "proxy", "--", sys.executable, str(UPSTREAM)) as client:
            await client.list_tools()
            with anyio.move_on_after(0.5) as stopped:  # the user presses Stop
                await client.call_tool("slow_delete", {"path": str(marker), "seconds": 1.5})
            assert stopped.cancelled_caught
            # the proxy goes on serving after a cancelled call
            assert texts(await client.call_tool("echo", {"text": "on"})) == ["ON"]
            with anyio.fail_after(20):
                while not marker.exists():  # the upstream did it all the same
                    await anyio.sleep(0.1)

    run(scenario)
    found = records(store)
    assert sorted(r["tool"] for r in found) == ["echo", "slow_delete"]  # each once
    by_tool = {r["tool"]: r for r in found}
    action = by_tool["slow_delete"]
    assert action["determinism"] == "side_effect"
    assert action["status"] == "error" and action["outcome"] == "unknown"
    assert action["error"] == (
        "CallCancelled: the call to 'slow_delete' was cancelled before the upstream server answered"
    )
    assert action["args"] == {"path": str(marker), "seconds": 1.5}


async def _raw_calls(
    store: Path, calls: list[tuple[str, str]], stderr: Path
) -> list[dict[str, Any]]:
    """The answers of the proxy to `tools/call`s whose arguments are written as given
    (JSON text): a client writing NaN or Infinity, which Python's `json` writes and the
    SDK's server reads. The SDK's own client writes null for them, so it cannot say it."""
    command = [sys.executable, "-m", "addressable", "mcp", "proxy", "--store", str(store)]
    command += ["--", sys.executable, str(UPSTREAM)]
    answers: list[dict[str, Any]] = []
    with stderr.open("wb") as errors:
        process = await anyio.open_process(command, env=process_env(), stderr=errors)
        async with process:
            assert process.stdin is not None and process.stdout is not None
            lines = BufferedByteReceiveStream(process.stdout)

            async def send(text: str) -> None:
                assert process.stdin is not None
                await process.stdin.send(text.encode("utf-8") + b"\n")

            async def answer(request_id: int) -> dict[str, Any]:
                with anyio.fail_after(30):
                    while True:
                        found: dict[str, Any] = json.loads(
                            await lines.receive_until(b"\n", 1 << 24)
                        )
                        if found.get("id") == request_id:
                            return found

            hello = {
                "protocolVersion": types.LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            }
            await send(
                json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
            )
            await answer(0)
            await send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
            for n, (name, arguments) in enumerate(calls, 1):
                params = f'{{"name": {json.dumps(name)}, "arguments": {arguments}}}'
                await send(
                    f'{{"jsonrpc": "2.0", "id": {n}, "method": "tools/call", "params": {params}}}'
                )
                answers.append(await answer(n))
            await process.stdin.aclose()
            with anyio.fail_after(30):
                await process.wait()
    return answers


def test_arguments_that_cannot_be_recorded_are_refused_before_the_call(tmp_path: Path) -> None:
    store = tmp_path / "store"
    marker = tmp_path / "deleted-marker"
    path = json.dumps(str(marker))
    calls = [
        ("echo", '{"text": "hi", "junk": NaN}'),
        ("slow_delete", f'{{"path": {path}, "seconds": 0.1, "at": [-Infinity]}}'),
    ]
    answers = anyio.run(_raw_calls, store, calls, tmp_path / "stderr")
    said = []
    for answer in answers:
        assert "error" not in answer, answer  # an error result, not a JSON-RPC error
        result = types.CallToolResult.model_validate(answer["result"])
        assert result.is_error
        (text,) = texts(result)
        said.append(text)
    assert said == [
        "error: ArgumentError: 'echo': argument 'junk' is nan, which JSON cannot represent; "
        "nothing was sent",
        "error: ArgumentError: 'slow_delete': argument 'at'[0] is -inf, which JSON cannot "
        "represent; nothing was sent",
    ]
    assert not marker.exists()  # the upstream never had the call (it answers when done)
    assert records(store) == []


def test_the_credentials_in_a_url_argument_are_not_stored(tmp_path: Path) -> None:
    store = tmp_path / "store"
    config = tmp_path / "proxy.toml"
    config.write_text(
        '[[tools]]\nmatch = "read_*"\ndeterminism = "deterministic"\nkey = "doc:{path}"\n'
    )
    url = "https://bob:hunter2pw@api.example/x?access_token=tok_SECRET&page=2"
    nested = {"links": ["see https://api.example/y?api_key=k3y_SECRET and ftp://h/z"], "n": 1}

    async def scenario() -> None:
        upstream = ("--", sys.executable, str(UPSTREAM))
        async with session(store, "proxy", "--config", str(config), *upstream) as client:
            await client.list_tools()
            result = await client.call_tool("read_doc", {"path": url, "refs": nested})
            assert not result.is_error
            # the upstream had the URL as the model gave it
            assert texts(result) == [f"document {url}: line one\nline two\n"]
            link_of(result)

    run(scenario)
    (record,) = records(store)
    kept = "https://bob:%5Bredacted%5D@api.example/x?access_token=[redacted]&page=2"
    assert record["args"] == {
        "path": kept,
        "refs": {"links": ["see https://api.example/y?api_key=[redacted] and ftp://h/z"], "n": 1},
    }
    assert record["key"] == f"doc:{kept}"
    # nowhere in the record's fields, nor in the payload, where the upstream echoed it
    fields = json.dumps(record)
    assert "hunter2pw" not in fields and "SECRET" not in fields
    payload = stored_payload(store, record["id"])  # the text the upstream sent
    assert payload == f"document {kept}: line one\nline two\n"


def test_an_upstream_error_quoting_a_credential_is_recorded_redacted(tmp_path: Path) -> None:
    store = tmp_path / "store"
    url = "https://bob:hunter2pw@api.example/x?access_token=tok_SECRET"

    async def scenario() -> None:
        async with session(store, "proxy", "--", sys.executable, str(UPSTREAM)) as client:
            await client.list_tools()
            failed = await client.call_tool("fails", {"reason": url})
            assert failed.is_error and url in texts(failed)[0]  # the client sees it as said

    run(scenario)
    (record,) = records(store)
    assert record["status"] == "error" and "access_token=[redacted]" in record["error"]
    fields = json.dumps(record) + stored_payload(store, record["id"])
    assert "hunter2pw" not in fields and "tok_SECRET" not in fields


def stored_payload(store: Path, record_id: str) -> str:
    """The payload a record keeps, as the store gives it back."""
    with ad.DiskStore(store) as opened:
        return opened.read(opened.get(record_id)).decode("utf-8")


def test_a_tool_not_listed_is_refused_within_the_timeout_when_the_list_is_slow(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        upstream = ("--", sys.executable, str(SLOW_LIST))
        # The timeout covers the upstream's start too (a Python process importing the
        # SDK: over 1 s at times on a busy machine); far under the list's 60 s.
        async with session(tmp_path / "store", "proxy", "--timeout", "5", *upstream) as client:
            await client.list_tools()
            with anyio.fail_after(15):  # the upstream's list would take 60 s
                refused = await client.call_tool("ehco", {})
            assert refused.is_error and "no tool named 'ehco'" in texts(refused)[0]

    run(scenario)
    assert records(tmp_path / "store") == []


def test_a_tool_the_upstream_does_not_list_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"

    async def scenario() -> None:
        upstream = ("--", sys.executable, str(GROWING))
        async with session(store, "proxy", *upstream) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["grow", "replay_result"]
            for name in ("planted", "n" * 1_000_000):
                refused = await client.call_tool(name, {"name": "a"})
                assert refused.is_error
                (text,) = texts(refused)
                assert len(text) < 300 and "\n" not in text
                assert text.startswith("error: the upstream server has no tool named ")
                assert text.endswith("; the tools are: grow, replay_result; nothing was sent")
            # a tool the upstream adds later is found, its definition with it
            assert texts(await client.call_tool("grow", {})) == ["grown"]
            planted = await client.call_tool("planted", {"name": "a"})
            assert texts(planted) == ["planted a"]

    run(scenario)
    by_tool = {r["tool"]: r for r in records(store)}
    assert set(by_tool) == {"grow", "planted"}  # nothing of the refused calls
    assert by_tool["planted"]["determinism"] == "side_effect"  # from its destructiveHint
    assert by_tool["planted"]["outcome"] == "completed"


def test_replaying_a_record_whose_payload_is_not_an_upstream_result(tmp_path: Path) -> None:
    store = tmp_path / "store"
    source = ad.open_store("memory://")
    forged = ad.Toolkit(source).record(
        "echo",
        {"text": "x"},
        b'{"content": "not a list", "shape": "mcp"}',
        determinism="nondeterministic",
        media_type="application/vnd.addressable.content+json",  # stored blocks
        meta={"mcp": "content"},
    )
    bundle = tmp_path / "b.jsonl"
    with bundle.open("wb") as out:
        ad.export_bundle(source, out)
    imported = addressable("import", "--store", str(store), str(bundle))
    assert imported.returncode == 0, imported.stderr
    rid = forged.id

    async def scenario() -> None:
        async with session(store, "proxy", "--", sys.executable, str(UPSTREAM)) as client:
            await client.list_tools()
            for asked in ({"id": rid}, {"id": rid, "start_line": 1}):
                answer = await client.call_tool("replay_result", asked)
                assert answer.is_error
                assert texts(answer) == [
                    f"error: record {rid} says it holds an upstream server's result, "
                    "but its payload is not one"
                ]
                assert len(answer.content) == 1  # no link to a result it could not give

    run(scenario)


def test_the_raw_client_gets_a_result_for_arguments_json_can_hold(tmp_path: Path) -> None:
    """The refusals above are the proxy's, not the raw client's."""
    (answer,) = anyio.run(_raw_calls, tmp_path / "s", [("echo", '{"text": "hi"}')], tmp_path / "e")
    result = types.CallToolResult.model_validate(answer["result"])
    assert not result.is_error and texts(result) == ["HI"]
    link_of(result)
