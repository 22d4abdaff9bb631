"""`addressable mcp serve` and `addressable mcp proxy`, as real subprocesses, talked to
with the SDK's own client over stdio; the proxy in front of a real upstream server
(tests/scripts/mcp_upstream.py) written with the SDK."""

from __future__ import annotations

import base64
import select
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

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


def test_serve_gives_every_result_an_id_readable_as_a_resource(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("first line\nsecond line: é\n", encoding="utf-8")
    (work / "blob.bin").write_bytes(bytes(range(256)))
    store = tmp_path / "store"

    async def scenario() -> None:
        async with session(store, "serve", "files", "memory", "--root", str(work)) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert sorted(names) == ["files", "memory", "replay_result"]

            result = await client.call_tool("files", {"command": "read", "path": "notes.txt"})
            assert not result.is_error
            assert texts(result) == ["first line\nsecond line: é\n"]
            link = link_of(result)
            record_id = link.uri.rsplit("/", 1)[1]
            read = await client.read_resource(link.uri)
            (contents,) = read.contents
            assert isinstance(contents, types.TextResourceContents)
            assert contents.text.encode("utf-8") == (work / "notes.txt").read_bytes()
            assert contents.mime_type == link.mime_type

            binary = await client.call_tool("files", {"command": "read", "path": "blob.bin"})
            read = await client.read_resource(link_of(binary).uri)
            (blob,) = read.contents
            assert isinstance(blob, types.BlobResourceContents)
            assert base64.b64decode(blob.blob) == bytes(range(256))

            for asked in (record_id, record_id[:8]):
                again = await client.call_tool("replay_result", {"id": asked})
                assert not again.is_error
                assert texts(again) == ["first line\nsecond line: é\n"]
                assert link_of(again).uri == link.uri

            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == [
                "addressable://result/{id}"
            ]
            listed = await client.list_resources()
            assert link.uri in {r.uri for r in listed.resources}

            with pytest.raises(MCPError) as raised:
                await client.read_resource("addressable://result/0123456789abcdef")
            assert "no result with id 0123456789abcdef" in raised.value.message
            assert "Internal server error" not in raised.value.message
            with pytest.raises(MCPError) as raised:
                await client.read_resource("addressable://result/not-an-id")
            assert "not a result id" in raised.value.message

            unknown = await client.call_tool("replay_result", {"id": "0123456789abcdef"})
            assert unknown.is_error
            assert texts(unknown)[0].startswith("error: no result with id 0123456789abcdef")

            refused = await client.call_tool("files", {"command": "read", "path": "../../etc"})
            assert refused.is_error

    run(scenario)
    seen = {r["id"]: r for r in records(store)}
    assert any(r["tool"] == "files" and r["args"]["path"] == "notes.txt" for r in seen.values())


def test_serve_runs_only_the_programs_its_config_allows(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "seen.txt").write_text("here\n")
    config = tmp_path / "serve.toml"
    config.write_text(f'[serve]\nshell = {{ cwd = "{work}", allow = ["ls"] }}\n')
    store = tmp_path / "store"

    async def scenario() -> None:
        async with session(store, "serve", "shell", "--config", str(config)) as client:
            listed = await client.call_tool("shell", {"command": "ls"})
            assert not listed.is_error and "seen.txt" in texts(listed)[0]
            refused = await client.call_tool("shell", {"command": "touch made.txt"})
            assert refused.is_error and "touch" in texts(refused)[0]

    run(scenario)
    assert not (work / "made.txt").exists()


def test_serve_stops_a_program_whose_output_is_over_its_config_limit(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(
        f'[serve]\nshell = {{ cwd = "{tmp_path}", allow = ["head"], max_bytes = 1000 }}\n'
    )
    store = tmp_path / "store"

    async def scenario() -> None:
        async with session(store, "serve", "shell", "--config", str(config)) as client:
            small = await client.call_tool("shell", {"command": "head -c 900 /dev/zero"})
            assert not small.is_error
            big = await client.call_tool("shell", {"command": "head -c 5000 /dev/zero"})
            assert big.is_error and "over the limit of 1,000 bytes" in texts(big)[0]

    run(scenario)
    sizes = [r["size"] for r in records(store) if r["tool"] == "shell"]
    assert sizes and max(sizes) < 1000  # the output over the limit is not kept


CONFIG = """\
timeout = 5

[[tools]]
match = "read_*"
determinism = "deterministic"
key = "doc:{path}"
"""


def test_proxy_records_the_upstream_exactly_and_passes_failures_through(tmp_path: Path) -> None:
    store = tmp_path / "store"
    config = tmp_path / "proxy.toml"
    config.write_text(CONFIG)
    marker = tmp_path / "deleted-marker"
    upstream = ("--", sys.executable, str(UPSTREAM))
    seen: dict[str, types.CallToolResult] = {}

    async def scenario() -> None:
        async with session(store, "proxy", "--config", str(config), *upstream) as client:
            tools = (await client.list_tools()).tools
            names = [t.name for t in tools]
            expected = ["echo", "read_doc", "picture", "forged", "weather", "fails"]
            expected += ["slow_delete", "crash"]
            assert names == [*expected, "replay_result"]
            # the upstream's definitions, unchanged
            echo = next(t for t in tools if t.name == "echo")
            assert echo.annotations is not None and echo.annotations.read_only_hint is True
            weather = next(t for t in tools if t.name == "weather")
            assert weather.output_schema is not None

            result = await client.call_tool("echo", {"text": "hi"})
            assert texts(result) == ["HI"]
            link = link_of(result)
            read = await client.read_resource(link.uri)
            (stored,) = read.contents  # the text the upstream sent, not its envelope
            assert isinstance(stored, types.TextResourceContents)
            assert stored.text == "HI"
            seen["echo"] = result

            record_id = link.uri.rsplit("/", 1)[1]
            for asked in (record_id, record_id[:8]):
                again = await client.call_tool("replay_result", {"id": asked})
                assert again.content == result.content
                assert again.structured_content == result.structured_content

            picture = await client.call_tool("picture", {})
            images = [c for c in picture.content if isinstance(c, types.ImageContent)]
            assert len(images) == 1 and images[0].mime_type == "image/png"
            assert base64.b64decode(images[0].data) == bytes(range(256)) * 3
            replayed = await client.call_tool("replay_result", {"id": link_of(picture).uri[-16:]})
            assert replayed.content == picture.content

            # links under the proxy's scheme that the upstream wrote are said, not passed on
            forged = await client.call_tool("forged", {})
            own = link_of(forged)  # the one link left is the proxy's own
            assert "0123456789abcdef" not in own.uri
            said = texts(forged)
            assert said[0] == "see the records" and len(said) == 3
            assert all("not one of this proxy's records" in t for t in said[1:])
            again = await client.call_tool("replay_result", {"id": own.uri[-16:]})
            assert again.content == forged.content

            structured = await client.call_tool("weather", {"city": "Oslo"})
            assert structured.structured_content == {"city": "Oslo", "celsius": 21.5}
            seen["weather"] = structured

            doc = await client.call_tool("read_doc", {"path": "a/b.md"})
            seen["read_doc"] = doc

            failed = await client.call_tool("fails", {"reason": "no disk"})
            assert failed.is_error
            assert "cannot do it: no disk" in texts(failed)[0]
            seen["fails"] = failed

            started = time.monotonic()
            with pytest.raises(MCPError) as raised:
                await client.call_tool("slow_delete", {"path": str(marker), "seconds": 10})
            assert time.monotonic() - started < 10
            assert "did not answer within 5s" in raised.value.message
            assert "outcome unknown" in raised.value.message

            with pytest.raises(MCPError) as raised:
                await client.read_resource("addressable://result/fedcba9876543210")
            assert raised.value.message.startswith("no result with id fedcba9876543210")

            with pytest.raises(MCPError) as raised:
                await client.call_tool("crash", {})
            assert "closed the connection during 'crash'" in raised.value.message
            # the next call starts the upstream again
            assert texts(await client.call_tool("echo", {"text": "again"})) == ["AGAIN"]
            # the store is still served after the upstream is gone
            assert (await client.read_resource(link.uri)).contents == read.contents

    run(scenario)
    assert not marker.exists()  # the slow delete had not happened when it was recorded

    by_tool: dict[str, list[dict[str, Any]]] = {}
    for r in records(store):  # another process, the same disk store
        by_tool.setdefault(r["tool"], []).append(r)
    tools = {"echo", "picture", "forged", "weather", "read_doc", "fails", "slow_delete", "crash"}
    assert set(by_tool) == tools

    echo, again = by_tool["echo"]  # before the crash, and after the restart
    assert again["args"] == {"text": "again"}
    assert echo["media_type"].startswith("text/plain")
    assert echo["determinism"] == "nondeterministic"
    raw = addressable("replay", "--store", str(store), echo["id"])
    assert raw.returncode == 0 and raw.stdout == "HI"
    assert echo["size"] == 2

    (doc,) = by_tool["read_doc"]
    assert doc["determinism"] == "deterministic" and doc["key"] == "doc:a/b.md"
    (fails,) = by_tool["fails"]
    assert fails["status"] == "error" and "cannot do it: no disk" in fails["error"]
    (slow,) = by_tool["slow_delete"]
    assert slow["determinism"] == "side_effect"  # from the upstream's destructiveHint
    assert slow["outcome"] == "unknown" and slow["status"] == "error"
    (crash,) = by_tool["crash"]
    assert crash["status"] == "error" and "closed the connection" in crash["error"]


def test_a_bad_config_or_command_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[[tools]]\nmatch = "x"\ndeterminism = "sometimes"\n')
    done = addressable(
        "mcp", "proxy", "--store", str(tmp_path / "s"), "--config", str(config), "--", "true"
    )
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"addressable: error: config {config}: tools.0.determinism:")

    config.write_text('[[tools]]\nmatch = "x"\ndeterminism = "deterministic"\nkey = "{a b}"\n')
    done = addressable("mcp", "proxy", "--config", str(config), "--", "true")
    assert done.returncode == 2 and "key template" in done.stderr

    done = addressable("mcp", "proxy", "--store", str(tmp_path / "s"))
    assert done.returncode == 2
    assert "needs the upstream server's command after --" in done.stderr

    done = addressable("mcp", "serve", "teleport", "--store", str(tmp_path / "s"))
    assert done.returncode == 2 and "unknown adapter 'teleport'" in done.stderr


@pytest.mark.parametrize("key", ["doc:{path:d}", "{path!r}", "{path:>{width}}", "{path!s:.3}"])
def test_a_key_template_with_a_format_spec_or_conversion_is_refused_at_load(
    tmp_path: Path, key: str
) -> None:
    from addressable.core.errors import ConfigError
    from addressable.mcp.config import load_config

    config = tmp_path / "proxy.toml"
    config.write_text(
        f'[[tools]]\nmatch = "read_doc"\ndeterminism = "deterministic"\nkey = "{key}"\n'
    )
    with pytest.raises(ConfigError) as refused:
        load_config(config)
    (line,) = str(refused.value).splitlines()
    assert line.startswith(f"config {config}: tools.0.key: the rule for 'read_doc': key template")
    assert "no format spec or conversion" in line
    config.write_text(
        '[[tools]]\nmatch = "read_doc"\ndeterminism = "deterministic"\nkey = "doc:{path}"\n'
    )
    assert load_config(config).tools[0].key_of({"path": 7}) == "doc:7"


def _serve_case(tmp: Path, case: str) -> tuple[list[str], dict[str, Any], str, str]:
    """An adapter, the serve config that sets it up, the field named, what is said."""
    (tmp / "afile").write_text("x")
    (tmp / "empty").write_bytes(b"")
    cases: dict[str, tuple[list[str], dict[str, Any], str, str]] = {
        "files-root-missing": (
            ["files"],
            {"files": {"root": str(tmp / "nope")}},
            "files.root",
            f"no folder at {tmp / 'nope'}",
        ),
        "files-root-a-file": (
            ["files"],
            {"files": {"root": str(tmp / "afile")}},
            "files.root",
            "is not a folder",
        ),
        "shell-cwd-missing": (
            ["shell"],
            {"shell": {"cwd": str(tmp / "nope")}},
            "shell.cwd",
            "no folder at",
        ),
        "memory-root-a-file": (
            ["memory"],
            {"memory": {"root": str(tmp / "afile")}},
            "memory.root",
            "is not a folder",
        ),
        "searxng-not-a-url": (
            ["search"],
            {"search": {"searxng": "not a url"}},
            "search.searxng",
            "only http and https URLs",
        ),
        "index-a-text-file": (
            ["search"],
            {"search": {"index": str(tmp / "afile")}},
            "search.index",
            "is not an index (not an SQLite database)",
        ),
        "index-an-empty-file": (
            ["search"],
            {"search": {"index": str(tmp / "empty")}},
            "search.index",
            "is an empty file, not an index",
        ),
        "env-allow-a-value": (
            ["shell"],
            {"shell": {"cwd": str(tmp), "env_allow": ["A=B"]}},
            "shell",
            "not a variable's name",
        ),
        "memory-root-with-nul": (
            ["memory"],
            {"memory": {"root": str(tmp / "mem\0ory")}},
            "memory.root",
            "cannot hold a NUL character",
        ),
        "files-root-with-nul": (
            ["files"],
            {"files": {"root": str(tmp / "fi\0les")}},
            "files.root",
            "cannot hold a NUL character",
        ),
        "index-with-nul": (
            ["search"],
            {"search": {"index": str(tmp / "in\0dex")}},
            "search.index",
            "cannot hold a NUL character",
        ),
        "fetch-origin-not-http": (
            ["fetch"],
            {"fetch": {"origins": ["ftp://files.example"]}},
            "fetch.origins",
            "ftp://files.example",
        ),
    }
    return cases[case]


@pytest.mark.parametrize(
    "case",
    [
        "files-root-missing",
        "files-root-a-file",
        "shell-cwd-missing",
        "memory-root-a-file",
        "searxng-not-a-url",
        "index-a-text-file",
        "index-an-empty-file",
        "env-allow-a-value",
        "memory-root-with-nul",
        "files-root-with-nul",
        "index-with-nul",
        "fetch-origin-not-http",
    ],
)
def test_serve_refuses_at_start_a_value_its_adapter_cannot_work_with(
    tmp_path: Path, case: str
) -> None:
    import addressable as ad
    from addressable.core.errors import ConfigError
    from addressable.mcp.config import ServeConfig
    from addressable.mcp.server import add_adapters

    names, values, field, said = _serve_case(tmp_path, case)
    before = {f: f.read_bytes() for f in tmp_path.iterdir() if f.is_file()}
    kit = ad.Toolkit(ad.open_store("memory://"))
    with pytest.raises(ConfigError) as refused:
        add_adapters(kit, names, ServeConfig.model_validate(values), {field: "--given"})
    (line,) = str(refused.value).splitlines()
    assert line.startswith("--given: ") and said in line
    assert {f: f.read_bytes() for f in tmp_path.iterdir() if f.is_file()} == before
    with pytest.raises(ConfigError, match=f"^serve.{field}: "):
        add_adapters(kit, names, ServeConfig.model_validate(values))


def test_serve_names_the_option_or_the_config_field_refused_and_exits_2(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    store = str(tmp_path / "store")
    command = ["mcp", "serve", "search", "--index", str(empty), "--store", store]
    done = subprocess.run(
        [sys.executable, "-m", "addressable", *command],
        input="",
        capture_output=True,
        text=True,
        env=process_env(),
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"addressable: error: --index: {empty} is an empty file, not an index "
        "(a new index is made only where no file is)"
    ]
    assert empty.read_bytes() == b""  # not made an index over

    config = tmp_path / "serve.toml"
    config.write_text(f'[serve]\nadapters = ["memory"]\nmemory = {{ root = "{empty}" }}\n')
    done = addressable("mcp", "serve", "--store", store, "--config", str(config))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"addressable: error: config {config}: serve.memory.root: {empty} is not a folder"
    ]


def test_proxy_refuses_an_upstream_whose_list_of_tools_never_ends(tmp_path: Path) -> None:
    pager = SCRIPTS / "mcp_pager_upstream.py"
    store = str(tmp_path / "s")
    done = addressable("mcp", "proxy", "--store", store, "--", sys.executable, str(pager))
    assert done.returncode == 5, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("addressable: error: the upstream server: ")
    assert "list of tools does not end" in line


RAW = SCRIPTS / "mcp_raw_upstream.py"


@pytest.mark.parametrize(
    ("upstream", "said"),
    [
        # answers nothing, not even the handshake
        (["sleep", "60"], "it did not answer the MCP handshake within 2s"),
        # lists its tools in a shape MCP does not have
        ([sys.executable, str(RAW), "badlist"], "its list of tools is not as MCP has it: tools.0"),
        # refuses to list them with an error of several lines
        ([sys.executable, str(RAW), "errorlist"], "no tools today Traceback"),
    ],
)
def test_an_upstream_that_cannot_start_the_proxy_is_one_line(
    tmp_path: Path, upstream: list[str], said: str
) -> None:
    store = str(tmp_path / "s")
    done = addressable("mcp", "proxy", "--store", store, "--timeout", "2", "--", *upstream)
    assert done.returncode == 5, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("addressable: error: the upstream server: ")
    assert said in line


def test_serve_over_http_on_loopback_takes_only_its_token(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "addressable", "mcp", "serve", "memory", "--http", str(port)]
    command += ["--store", str(tmp_path / "store"), "--memory-dir", str(tmp_path / "mem")]
    env = process_env()
    env.pop("ADDRESSABLE_MCP_TOKEN", None)
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        ready, _, _ = select.select([server.stderr], [], [], 20)
        assert ready, "nothing said at start"
        first = server.stderr.readline()  # said at start: where, and the token
        url = f"http://127.0.0.1:{port}/mcp"
        assert first.startswith(f"addressable: serving MCP at {url}; clients send the header")
        token = first.rsplit("Bearer ", 1)[1].strip()
        assert len(token) >= 32
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert server.poll() is None
                assert time.monotonic() < deadline
                time.sleep(0.1)
        for given in (None, "Bearer wrong", f"Bearer {token}x"):
            headers = {"Authorization": given} if given else {}
            answer = httpx.post(url, headers=headers, json={}, timeout=10)
            assert answer.status_code == 401, (given, answer.text)

        async def scenario() -> None:
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http), cache=None) as client,
            ):
                made = await client.call_tool(
                    "memory", {"command": "create", "path": "/memories/a.md", "file_text": "x"}
                )
                assert not made.is_error, made
                read = await client.read_resource(link_of(made).uri)
                assert read.contents

        run(scenario)
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stderr is not None:
            server.stderr.close()


def test_without_the_extra_the_error_names_it() -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "import addressable as ad\n"
        "try:\n"
        "    import addressable.mcp.server\n"
        "except ad.MissingDependency as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=process_env()
    )
    assert "from the 'mcp' extra: pip install 'mcp'" in done.stdout


def test_a_damaged_record_is_left_out_of_the_listing_of_resources(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    (work / "b.txt").write_text("beta\n")
    store = tmp_path / "store"

    async def scenario() -> None:
        async with session(store, "serve", "files", "--root", str(work)) as client:
            first = await client.call_tool("files", {"command": "read", "path": "a.txt"})
            second = await client.call_tool("files", {"command": "read", "path": "b.txt"})
            damaged, kept = link_of(first).uri, link_of(second).uri
            # Another hand edits one record's stored bytes while the server runs.
            record_id = damaged.rsplit("/", 1)[1]
            with sqlite3.connect(store / "cache.db") as db:
                sql = "SELECT value FROM addressable_records WHERE id = ?"
                (value,) = db.execute(sql, (record_id,)).fetchone()
                changed = bytes(value).replace(b'"path":"a.txt"', b'"path":"c.txt"')
                assert changed != value
                sql = "UPDATE addressable_records SET value = ? WHERE id = ?"
                db.execute(sql, (changed, record_id))
            listed = {r.uri for r in (await client.list_resources()).resources}
            assert listed == {kept}
            with pytest.raises(MCPError) as raised:  # read by itself, it is named damaged
                await client.read_resource(damaged)
            assert "\n" not in raised.value.message

    run(scenario)


@pytest.mark.parametrize("command", ["serve", "proxy"])
def test_a_call_nested_past_what_the_sdk_reads_is_answered_in_one_line(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / "x.txt").write_text("x\n")
    store = tmp_path / "store"
    args = ("files", "--root", str(tmp_path)) if command == "serve" else ("--", sys.executable)
    args = args if command == "serve" else (*args, str(UPSTREAM))
    nested: Any = 1
    for _ in range(210):  # the SDK's parser reads about 200 levels; its client writes more
        nested = {"a": nested}

    async def scenario() -> None:
        async with session(store, command, *args) as client:
            tool = "files" if command == "serve" else "echo"
            with anyio.fail_after(20):  # the SDK alone never answered it
                result = await client.call_tool(tool, {"text": nested, "path": "x.txt"})
            assert result.is_error
            assert texts(result) == [
                "error: the request is nested too deeply to be read; send flatter arguments"
            ]
            # The session goes on.
            listed = await client.list_tools()
            assert tool in {t.name for t in listed.tools}

    run(scenario)
    assert records(store) == []  # nothing ran, nothing was recorded


def test_serve_without_a_sandbox_says_how_to_go_on_in_one_line(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = process_env() | {"PATH": str(tmp_path / "no-programs")}  # no bwrap to find
    command = [sys.executable, "-m", "addressable", "mcp", "serve", "shell", "--root", str(work)]
    command += ["--store", str(tmp_path / "store")]
    done = subprocess.run(command, input="", capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "bwrap is not installed" in line and "--no-sandbox" in line
    assert "sandbox=False" not in line  # the command line's words, not Python's
    done = subprocess.run(
        [*command, "--no-sandbox"], input="", capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr  # it started, and ended with its input
