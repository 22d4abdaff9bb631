"""A model's arguments are checked against the tool's declared schema before anything
runs: an argument the schema does not name (an identity Fetch keeps for its user) is
refused, not passed on; a value of the wrong type, a missing argument, JSON nested past
what can be read, each come back as one line naming the argument, and nothing ran."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest

import addressable as ad
from addressable.adapters import Adapter, Api, Fetch, Files, Identity, Memory, Scope, Search, Shell
from tests.helpers import ROOT
from tests.helpers.httpserver import LocalServer, Page


def test_an_identity_a_model_names_is_not_sent(
    kit: ad.Toolkit, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPS_TOKEN", "tok-never-sent-1234")
    server.pages["/collect"] = Page(b"<p>hello</p>")
    ops = Identity(name="ops", headers={"Authorization": "Bearer secret:env:OPS_TOKEN"})
    Fetch(kit, identities=[ops])
    text = kit.handle("fetch", {"url": server.url("/collect"), "identity": "ops"})
    assert text == (
        "error: fetch: argument 'identity' is not an argument of this tool (it takes: url)"
    )
    assert server.requests == [] and list(kit.store.records()) == []
    assert "hello" in kit.handle("fetch", {"url": server.url("/collect")})
    assert all("Authorization" not in r.headers for r in server.requests)


def test_a_value_of_the_wrong_type_is_refused_before_the_call(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    Files(kit, tmp_path)
    text = kit.handle("files", {"command": "write", "path": "a.txt", "content": 7})
    assert text.startswith("error: files: argument 'content' does not fit: ")
    assert text.endswith("(got 7)")
    assert "\n" not in text
    assert not (tmp_path / "a.txt").exists() and list(kit.store.records()) == []
    missing = kit.handle("files", json.dumps({"command": "read"}))
    assert missing == "error: files: argument 'path' is required"
    wrong = kit.handle("files", {"command": "delete", "path": "a.txt"})
    assert wrong.startswith("error: files: argument 'command' does not fit: ")


def test_json_whole_numbers_are_integers_and_a_null_is_a_missing_argument(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    Search(kit)
    assert not kit.handle("search", {"query": "q", "limit": 5.0}).startswith("error")
    assert kit.handle("search", {"query": "q", "limit": 5.5}).startswith(
        "error: search: argument 'limit' does not fit: Input should be a valid integer (got 5.5)"
    )
    Files(kit, tmp_path)
    assert kit.handle("files", {"command": "read", "path": None}) == (
        "error: files: argument 'path' is required"
    )


def test_a_user_tool_whose_schema_says_more_is_checked_as_far_as_it_is_understood(
    kit: ad.Toolkit,
) -> None:
    class Ratio(Adapter):
        name = "ratio"
        input_schema: ClassVar[dict[str, Any]] = {
            "type": "object",
            "properties": {
                "ratio": {"type": "number"},
                "unit": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "n": {"type": ["integer", "null"]},
            },
            "required": ["ratio"],
        }

        def handle(self, arguments: dict[str, object]) -> str:
            return f"got {sorted(arguments.items())}"

    Ratio(kit)
    text = kit.handle("ratio", {"ratio": 0.5, "unit": "m", "n": 3, "other": True})
    assert text == "got [('n', 3), ('other', True), ('ratio', 0.5), ('unit', 'm')]"
    assert kit.handle("ratio", {"ratio": "half"}).startswith(
        "error: ratio: argument 'ratio' does not fit: "
    )


def test_null_stands_for_an_argument_left_out(kit: ad.Toolkit, tmp_path: Path) -> None:
    # OpenAI's strict function calling sends every property, null when not wanted.
    Files(kit, tmp_path)
    text = kit.handle("files", {"command": "write", "path": "b.txt", "content": None})
    assert not text.startswith("error"), text
    assert (tmp_path / "b.txt").read_text() == ""


def test_a_bool_is_not_an_int_and_a_string_is_not_a_bool(kit: ad.Toolkit) -> None:
    Search(kit)
    assert kit.handle("search", {"query": "q", "limit": True}).startswith(
        "error: search: argument 'limit' does not fit: Input should be a valid integer (got True)"
    )
    assert kit.handle("search", {"query": "q", "fresh": "yes"}).startswith(
        "error: search: argument 'fresh' does not fit: Input should be a valid boolean (got 'yes')"
    )


def test_arguments_nested_past_reading_are_one_line(kit: ad.Toolkit, tmp_path: Path) -> None:
    Files(kit, tmp_path)
    deep = '{"command": "read", "path": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert kit.handle("files", deep) == (
        "error: the arguments are nested too deeply; send a flat JSON object"
    )


def test_every_adapter_schema_names_all_it_takes(kit: ad.Toolkit, tmp_path: Path) -> None:
    Fetch(kit)
    Files(kit, tmp_path)
    Search(kit)
    Memory(kit, tmp_path / "memories")
    Shell(kit, cwd=tmp_path)
    Api(kit, scope=Scope(origins=("http://127.0.0.1:1",)))
    adapters = [t for t in kit.tools() if t["name"] != "replay_result"]
    assert len(adapters) == 6
    for tool in adapters:
        schema = tool["input_schema"]
        assert schema["additionalProperties"] is False, tool["name"]
        # Every required argument given, of its type: only the extra one is wrong.
        given = {name: _a_value(schema["properties"][name]) for name in schema["required"]}
        extra = kit.handle(tool["name"], {**given, "no_such_argument": 1})
        assert extra.startswith(
            f"error: {tool['name']}: argument 'no_such_argument' is not an "
            "argument of this tool (it takes: "
        ), extra


def _a_value(prop: dict[str, object]) -> object:
    if isinstance(prop.get("enum"), list):
        return prop["enum"][0]  # type: ignore[index]
    return {"string": "x", "integer": 1, "boolean": False, "object": {}}[str(prop["type"])]


def test_an_api_body_that_is_not_json_is_refused_before_sending(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    api = Api(
        kit,
        identities=[Identity(name="a", headers={})],
        scope=Scope(origins=(server.url(),), actions=frozenset({"read", "write"})),
    )
    with pytest.raises(ad.ArgumentError, match="the body"):
        api.post(server.url("/items"), identity="a", json_body={"v": float("nan")})
    sent = json.dumps({"method": "POST", "url": server.url(), "identity": "a"})
    text = kit.handle("api", sent[:-1] + ', "body": {"v": NaN}}')  # JSON as Python writes NaN
    assert text.startswith("error: ArgumentError: ") and "the body" in text
    assert server.requests == [] and list(kit.store.records()) == []


def test_a_bad_argument_is_answered_as_the_readme_says_whatever_the_tool(
    kit: ad.Toolkit,
) -> None:
    # The Security page (docs/security.md): "The answer is one line, `error: TOOL: argument
    # 'NAME' ...`, and nothing ran or was recorded": an adapter's, a wrapped function's alike.
    readme = (ROOT / "docs" / "security.md").read_text()
    assert re.search(r"`error: TOOL: argument\s+'NAME'\s+\.\.\.`", readme)
    ran: list[int] = []
    Fetch(kit)

    @kit.tool
    def double(n: int) -> int:
        ran.append(n)
        return 2 * n

    url = "https://x.test/"
    for name, arguments, said in [
        ("fetch", {"url": url, "identity": "ops"}, "'identity' is not an argument of this tool"),
        ("double", {"n": 1, "m": 2}, "'m' is not an argument of this tool"),
        ("fetch", {}, "'url' is required"),
        ("double", {}, "'n' is required"),
        ("fetch", {"url": None}, "'url' is required"),  # null: an argument left out
        ("double", {"n": None}, "'n' is required"),
        ("fetch", {"url": 5}, "'url' does not fit: Input should be a valid string (got 5)"),
        ("double", {"n": "7"}, "'n' does not fit: Input should be a valid integer (got '7')"),
    ]:
        takes = " (it takes: url)" if name == "fetch" else " (it takes: n)"
        expected = f"error: {name}: argument {said}" + (takes if "not an" in said else "")
        assert kit.handle(name, arguments) == expected
        assert asyncio.run(kit.ahandle(name, arguments)) == expected
    assert ran == [] and list(kit.store.records()) == []
