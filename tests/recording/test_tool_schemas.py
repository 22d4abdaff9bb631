"""`kit.tool` derives its JSON Schema with pydantic and validates the model's arguments.

This module uses `from __future__ import annotations`, so every annotation below is a
string that must be resolved, some of them against classes local to a test.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import anthropic
import pytest
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import BaseModel, Field, TypeAdapter

import addressable as ad


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Filters(BaseModel):
    lang: str = "en"
    year: int | None = None


def search(
    query: Annotated[str, Field(description="what to look for")],
    color: Color,
    filters: Filters,
    limit: int = 10,
    *,
    exact: bool = False,
) -> str:
    """Search the catalogue.

    Finds items by colour.

    Args:
        query: ignored here, the Annotated description wins.
        color: the colour of the items.
        filters: narrows the search,
            by language and year.
        limit: at most this many.

    Returns:
        The matching items, one a line.
    """
    return f"{query}|{color.value}|{filters.lang}|{filters.year}|{limit}|{exact}"


@pytest.fixture
def kit() -> Iterator[ad.Toolkit]:
    store = ad.open_store("memory://")
    yield ad.Toolkit(store, session="schemas")
    store.close()


def definition(kit: ad.Toolkit, name: str, format: str = "anthropic") -> dict[str, Any]:
    (found,) = [
        t
        for t in kit.tools(format)
        if t.get("name", t.get("function", {}).get("name")) == name  # type: ignore[union-attr]
    ]
    return found


def test_the_schema_is_the_one_pydantic_gives(kit: ad.Toolkit) -> None:
    kit.tool(search)
    schema = definition(kit, "search")["input_schema"]
    # The Anthropic SDK's own @beta_tool derives a function's schema with pydantic and
    # the docstring's Args: the same function gives the same schema here.
    assert schema == anthropic.beta_tool(search).to_dict()["input_schema"]
    assert schema["$defs"]["Color"] == TypeAdapter(Color).json_schema()
    assert schema["$defs"]["Filters"] == Filters.model_json_schema()
    properties = schema["properties"]
    assert properties["query"]["description"] == "what to look for"
    assert properties["color"] == {
        "$ref": "#/$defs/Color",
        "description": "the colour of the items.",
    }
    assert properties["filters"]["description"] == "narrows the search,\nby language and year."
    assert properties["limit"] == {
        "default": 10,
        "description": "at most this many.",
        "title": "Limit",
        "type": "integer",
    }
    assert properties["exact"]["default"] is False
    assert schema["required"] == ["query", "color", "filters"]
    assert schema["additionalProperties"] is False


def test_the_description_is_the_docstring_without_its_args(kit: ad.Toolkit) -> None:
    kit.tool(search)
    description = definition(kit, "search")["description"]
    assert description == (
        "Search the catalogue.\n\nFinds items by colour.\n\n"
        "Returns:\n    The matching items, one a line."
    )


@pytest.mark.parametrize("format", ["anthropic", "openai", "openai-responses"])
def test_definitions_fit_the_sdk_types(kit: ad.Toolkit, format: str) -> None:
    kit.tool(search)
    typed: Any = {
        "anthropic": ToolParam,
        "openai": ChatCompletionToolParam,
        "openai-responses": FunctionToolParam,
    }[format]
    tool = definition(kit, "search", format)
    TypeAdapter(typed).validate_python(tool)
    parameters = tool.get("input_schema") or tool.get("parameters") or tool["function"]
    if format == "openai":
        parameters = parameters["parameters"]
    assert "$defs" in parameters and parameters["properties"]["color"]["$ref"]


def test_a_local_enum_and_model_resolve(kit: ad.Toolkit) -> None:
    class Size(enum.Enum):
        S = "s"
        L = "l"

    class Box(BaseModel):
        size: Size
        label: str

    @kit.tool
    def pack(box: Box, spare: Size = Size.S) -> str:
        return f"{box.label}:{box.size.value}:{spare.value}"

    schema = definition(kit, "pack")["input_schema"]
    assert schema["$defs"]["Size"]["enum"] == ["s", "l"]
    assert schema["properties"]["box"] == {"$ref": "#/$defs/Box"}
    assert kit.handle("pack", {"box": {"size": "l", "label": "x"}}) == "x:l:s"
    (rec,) = kit.store.records(tool="pack")
    assert rec.args == {"box": {"size": "l", "label": "x"}, "spare": "s"}


def test_a_string_for_an_int_is_refused_before_the_call(kit: ad.Toolkit) -> None:
    ran: list[Any] = []

    @kit.tool
    def twice(n: int) -> int:
        ran.append(n)
        return 2 * n

    text = kit.handle("twice", {"n": "7"})
    assert text == (
        "error: twice: argument 'n' does not fit: Input should be a valid integer (got '7')"
    )
    assert ran == []
    assert list(kit.store.records()) == []
    assert kit.handle("twice", '{"n": 7}') == "14"
    assert ran == [7] and type(ran[0]) is int


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(
            {"query": "q", "color": "green", "filters": {}},
            "error: search: argument 'color' does not fit: Input should be 'red' or 'blue'",
            id="enum",
        ),
        pytest.param(
            {"query": "q", "color": "red", "filters": {"year": "2020"}},
            "error: search: argument 'filters.year' does not fit: Input should be a valid integer",
            id="nested",
        ),
        pytest.param(
            {"query": "q", "color": "red"},
            "error: search: argument 'filters' is required",
            id="missing",
        ),
        pytest.param(
            {"query": "q", "color": "red", "filters": {}, "colour": "red"},
            "error: search: argument 'colour' is not an argument of this tool",
            id="unknown",
        ),
        pytest.param(
            {"query": 5, "color": "red", "filters": {}},
            "error: search: argument 'query' does not fit: Input should be a valid string",
            id="int-for-str",
        ),
    ],
)
def test_a_bad_argument_is_named_and_nothing_runs(
    kit: ad.Toolkit, arguments: dict[str, Any], expected: str
) -> None:
    kit.tool(search)
    text = kit.handle("search", arguments)
    assert text.startswith(expected), text
    assert "\n" not in text
    assert list(kit.store.records()) == []  # a call that ran, even one that raised, is recorded


def test_the_validated_arguments_are_recorded_and_give_one_id(kit: ad.Toolkit) -> None:
    wrapped = kit.tool(search)
    text = kit.handle(
        "search", {"query": "q", "color": "red", "filters": {"lang": "fr"}, "limit": 3}
    )
    assert text == "q|red|fr|None|3|False"
    (rec,) = kit.store.records(tool="search")
    assert rec.args == {
        "query": "q",
        "color": "red",
        "filters": {"lang": "fr", "year": None},
        "limit": 3,
        "exact": False,
    }
    # The same call from Python, with the objects the annotations name: the same id.
    same = wrapped("q", Color.RED, Filters(lang="fr"), 3)
    assert same.id == rec.id
    # And the same call as JSON the model spelled another way (a JSON string).
    kit.handle("search", '{"filters": {"lang": "fr"}, "color": "red", "query": "q", "limit": 3}')
    assert {r.id for r in kit.store.records(tool="search")} == {rec.id}


def test_a_recorded_call_with_an_enum_and_a_model_re_runs(kit: ad.Toolkit) -> None:
    seen: list[Any] = []

    @kit.tool(determinism="deterministic")
    def paint(color: Color, filters: Filters) -> str:
        seen.append((color, filters))
        return color.value

    first = paint(Color.BLUE, Filters(year=2020))
    again = kit.replay(first.id, verify=True)
    assert again.changed is False and again.id == first.id
    assert seen[-1] == (Color.BLUE, Filters(year=2020))


def test_python_calls_are_validated_as_pydantic_validate_call_does(kit: ad.Toolkit) -> None:
    ran: list[Any] = []

    @kit.tool
    def paint(color: Color, filters: Filters, n: int = 1) -> str:
        ran.append((color, filters, n))
        return "ok"

    # From Python, values are converted where pydantic's lax mode converts them ...
    res = paint("red", {"lang": "de"}, n="2")  # type: ignore[arg-type]
    assert ran == [(Color.RED, Filters(lang="de"), 2)]
    assert res.record.args == {
        "color": "red",
        "filters": {"lang": "de", "year": None},
        "n": 2,
    }
    assert paint(Color.RED, Filters(lang="de"), 2).id == res.id
    # ... and refused, naming the argument, where they cannot be.
    with pytest.raises(
        ad.ArgumentError,
        match=r"^paint: argument 'n' does not fit: Input should be a valid integer",
    ):
        paint(Color.RED, Filters(), n="two")  # type: ignore[arg-type]
    assert len(ran) == 2


def test_annotated_constraints_hold(kit: ad.Toolkit) -> None:
    @kit.tool
    def take(n: Annotated[int, Field(ge=1, description="how many")]) -> int:
        return n

    assert definition(kit, "take")["input_schema"]["properties"]["n"]["minimum"] == 1
    text = kit.handle("take", {"n": 0})
    assert text.startswith(
        "error: take: argument 'n' does not fit: Input should be greater than or equal to 1"
    )
    with pytest.raises(ad.ArgumentError, match="greater than or equal to 1"):
        take(0)
    assert list(kit.store.records()) == []


def test_ahandle_validates_too(kit: ad.Toolkit) -> None:
    ran: list[Any] = []

    @kit.tool
    async def paint(color: Color) -> str:
        ran.append(color)
        return color.value

    async def scenario() -> list[str]:
        return [
            await kit.ahandle("paint", {"color": "blue"}),
            await kit.ahandle("paint", {"color": 1}),
        ]

    ok, bad = asyncio.run(scenario())
    assert ok == "blue" and ran == [Color.BLUE]
    assert bad.startswith("error: paint: argument 'color' does not fit: Input should be 'red' or")


def test_plain_scalar_calls_keep_their_arguments_and_ids(kit: ad.Toolkit) -> None:
    @kit.tool
    def lookup(query: str, limit: int | None = None, ratio: float = 0.5) -> str:
        return query

    res = lookup("x", 3)
    assert res.record.args == {"query": "x", "limit": 3, "ratio": 0.5}
    # The arguments were canonical already: the id is the one derived from them as given.
    args_json = ad.ids.canonical_args({"query": "x", "limit": 3, "ratio": 0.5})
    assert res.id == ad.ids.result_id("lookup", args_json, None, res.record.content_hash)


def test_a_sloppy_default_is_not_validated(kit: ad.Toolkit) -> None:
    @kit.tool
    def count(n: int = None) -> str:  # type: ignore[assignment]  # noqa: RUF013
        return repr(n)

    assert count().text == "None"
    assert kit.handle("count", {}) == "None"
    assert kit.handle("count", {"n": 2}) == "2"


def test_unknown_annotations_leave_a_parameter_untyped(kit: ad.Toolkit) -> None:
    class Opaque:
        pass

    @kit.tool
    def f(a: Opaque, b: NoSuchName) -> str:  # type: ignore[name-defined]  # noqa: F821
        return "ran"

    schema = definition(kit, "f")["input_schema"]
    assert set(schema["properties"]) == {"a", "b"}
    assert schema["properties"]["a"].keys() <= {"title"}
    assert kit.handle("f", {"a": 1, "b": [2]}) == "ran"
    with pytest.raises(ad.ArgumentError, match="argument 'a' is of type Opaque"):
        f(Opaque(), 1)


def test_a_value_json_cannot_hold_is_refused_by_name(kit: ad.Toolkit) -> None:
    @kit.tool
    def later(when: Callable[[], int]) -> str:
        return str(when())

    with pytest.raises(ad.ArgumentError, match=r"^argument 'when' cannot be written as JSON"):
        later(lambda: 1)
    assert list(kit.store.records()) == []


def test_var_keyword_arguments_pass_through(kit: ad.Toolkit) -> None:
    @kit.tool
    def tag(name: str, **labels: str) -> str:
        return name + repr(sorted(labels.items()))

    schema = definition(kit, "tag")["input_schema"]
    assert "labels" not in schema["properties"]
    assert schema.get("additionalProperties") is not False
    assert kit.handle("tag", {"name": "n", "env": "prod"}) == "n[('env', 'prod')]"
    (rec,) = kit.store.records(tool="tag")
    assert rec.args == {"name": "n", "labels": {"env": "prod"}}


def test_an_argument_named_as_an_internal_field_is_refused(kit: ad.Toolkit) -> None:
    ran: list[tuple[int, int]] = []

    @kit.tool
    def two(a: int, b: int = 2) -> str:
        ran.append((a, b))
        return "ok"

    # "p1" is the name of the field that holds `b` inside the model that validates the
    # arguments: it must not be dropped without a word (b would then be 2).
    text = kit.handle("two", {"a": 1, "p1": 99})
    assert text == "error: two: argument 'p1' is not an argument of this tool (it takes: a, b)"
    assert ran == [] and list(kit.store.records()) == []
    assert kit.handle("two", {"a": 1, "b": 3}) == "ok" and ran == [(1, 3)]
