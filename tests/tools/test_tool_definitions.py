"""Every tool's definition fits the official SDKs' types, and kit.handle runs each by name."""

from __future__ import annotations

import enum
import typing
from pathlib import Path
from typing import Annotated, Any

import pytest
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import BaseModel, Field, TypeAdapter

import addressable as ad
from addressable.adapters import Api, Fetch, Files, LocalIndex, Memory, Scope, Search, Shell
from tests.helpers.httpserver import LocalServer, Page


class Finish(enum.Enum):
    MATT = "matt"
    GLOSS = "gloss"


class Surface(BaseModel):
    width: float
    height: float


@pytest.fixture
def full_kit(disk_kit: ad.Toolkit, tmp_path: Path, server: LocalServer) -> ad.Toolkit:
    kit = disk_kit

    @kit.tool(determinism="deterministic")
    def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b

    @kit.tool
    def paint(
        surface: Surface,
        finish: Finish = Finish.MATT,
        coats: Annotated[int, Field(ge=1, description="layers of paint")] = 2,
    ) -> str:
        """Paint a surface.

        Args:
            surface: what to paint.
        """
        return f"{surface.width * surface.height * coats} m2 {finish.value}"

    Fetch(kit)
    index = LocalIndex()
    index.add("https://docs.example/a", "Alpha", "alpha beta gamma")
    Search(kit, index)
    Shell(kit, cwd=tmp_path)
    Files(kit, tmp_path)
    Memory(kit, tmp_path / "memories")
    Api(kit, identities=[], scope=Scope(origins=(server.url(),)))
    return kit


def keys_of(typed: Any) -> set[str]:
    return set(typing.get_type_hints(typed, include_extras=True))


NAMES = ["add", "api", "fetch", "files", "memory", "paint", "replay_result", "search", "shell"]


def test_anthropic_definitions(full_kit: ad.Toolkit) -> None:
    tools = full_kit.tools("anthropic")
    assert sorted(t["name"] for t in tools) == NAMES
    adapter = TypeAdapter(ToolParam)
    for tool in tools:
        adapter.validate_python(tool, strict=False)
        assert set(tool) <= keys_of(ToolParam)
        assert tool["input_schema"]["type"] == "object"


def test_openai_chat_definitions(full_kit: ad.Toolkit) -> None:
    tools = full_kit.tools("openai")
    adapter = TypeAdapter(ChatCompletionToolParam)
    for tool in tools:
        adapter.validate_python(tool)
        assert tool["type"] == "function"
        assert set(tool["function"]) <= {"name", "description", "parameters", "strict"}
    assert sorted(t["function"]["name"] for t in tools) == NAMES


def test_openai_responses_definitions(full_kit: ad.Toolkit) -> None:
    adapter = TypeAdapter(FunctionToolParam)
    for tool in full_kit.tools("openai-responses"):
        adapter.validate_python(tool)
        assert set(tool) <= keys_of(FunctionToolParam)


def test_unknown_format_is_a_clear_error(full_kit: ad.Toolkit) -> None:
    with pytest.raises(ValueError, match="unknown tool format 'gemini'"):
        full_kit.tools("gemini")


def test_a_function_schema_comes_from_its_signature(full_kit: ad.Toolkit) -> None:
    (add,) = [t for t in full_kit.tools() if t["name"] == "add"]
    assert add["description"] == "Add two numbers."
    assert add["input_schema"] == {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"title": "A", "type": "integer"},
            "b": {"default": 2, "title": "B", "type": "integer"},
        },
        "additionalProperties": False,
    }
    (paint,) = [t for t in full_kit.tools() if t["name"] == "paint"]
    assert paint["description"] == "Paint a surface."
    schema = paint["input_schema"]
    assert schema["$defs"] == {
        "Finish": TypeAdapter(Finish).json_schema(),
        "Surface": Surface.model_json_schema(),
    }
    assert schema["properties"]["surface"] == {
        "$ref": "#/$defs/Surface",
        "description": "what to paint.",
    }
    assert schema["properties"]["finish"] == {"$ref": "#/$defs/Finish", "default": "matt"}
    assert schema["properties"]["coats"]["description"] == "layers of paint"


def test_handle_runs_each_tool_by_name(
    full_kit: ad.Toolkit, server: LocalServer, tmp_path: Path
) -> None:
    server.pages["/p"] = Page(b"<p>page text</p>")
    (tmp_path / "f.txt").write_text("file text\n")
    calls = {
        "add": {"a": 40},
        "paint": {"surface": {"width": 2, "height": 1.5}, "finish": "gloss"},
        "fetch": {"url": server.url("/p")},
        "search": {"query": "beta"},
        "shell": {"command": "echo shell text"},
        "files": {"command": "read", "path": "f.txt"},
        "memory": {"command": "create", "path": "/memories/m.md", "file_text": "memo"},
    }
    outputs = {name: full_kit.handle(name, args) for name, args in calls.items()}
    assert outputs["add"] == "42"
    assert outputs["paint"] == "6.0 m2 gloss"
    assert outputs["fetch"] == "page text"
    assert "Alpha - https://docs.example/a" in outputs["search"]
    assert outputs["shell"] == "shell text\n[exit 0]"
    assert outputs["files"] == "file text\n"
    assert outputs["memory"] == "created /memories/m.md"
    first = next(full_kit.store.records(tool="fetch"))
    # replay_result gives back what the model was shown; kit.replay the exact bytes.
    assert full_kit.handle("replay_result", {"id": first.id}) == outputs["fetch"]
    assert full_kit.replay(first.id).payload == b"<p>page text</p>"
    for name, text in outputs.items():
        shown = full_kit.shown(text)
        assert shown is not None, name
        assert full_kit.handle("replay_result", {"id": shown}) == text, name
    assert full_kit.handle(
        "api", {"method": "GET", "url": server.url("/x"), "identity": "nobody"}
    ).startswith("error: ScopeError")


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        pytest.param(
            "nope",
            {},
            "error: there is no tool named 'nope'; the tools are: add,",
            id="unknown-tool",
        ),
        pytest.param("add", "{not json", "error: the arguments are not valid JSON", id="bad-json"),
        pytest.param("add", "[1, 2]", "error: the arguments must be a JSON object", id="array"),
        pytest.param("add", {"z": 1}, "error: add: argument ", id="wrong-args"),
        pytest.param(
            "add",
            {"a": "1"},
            "error: add: argument 'a' does not fit: Input should be a valid integer",
            id="str-for-int",
        ),
        pytest.param(
            "paint",
            {"surface": {"width": 1}, "coats": 0},
            "error: paint: argument 'surface.height' is required; "
            "argument 'coats' does not fit: Input should be greater than or equal to 1",
            id="paint",
        ),
        pytest.param("add", '{"a": 1}', "3", id="json-string"),
    ],
)
def test_handle_never_raises(
    full_kit: ad.Toolkit, name: str, arguments: Any, expected: str
) -> None:
    assert full_kit.handle(name, arguments).startswith(expected)


def test_ahandle_awaits_async_tools_and_runs_the_others(full_kit: ad.Toolkit) -> None:
    import asyncio

    @full_kit.tool(determinism="deterministic")
    async def double(n: int) -> int:
        """Double a number."""
        await asyncio.sleep(0)
        return 2 * n

    async def scenario() -> list[str]:
        return [
            await full_kit.ahandle("double", {"n": 21}),
            await full_kit.ahandle("add", {"a": 1}),
            await full_kit.ahandle("nope", {}),
            await full_kit.ahandle("double", {"m": 1}),
        ]

    out = asyncio.run(scenario())
    assert out[:2] == ["42", "3"]
    assert out[2].startswith("error: there is no tool named 'nope'")
    assert out[3].startswith("error: double: ")
    assert "argument 'm' is not an argument of this tool (it takes: n)" in out[3]
    assert "argument 'n' is required" in out[3]
    assert full_kit.shown("42") is not None
    assert full_kit.handle("double", {"n": 5}) == "10"  # sync handle runs it too
