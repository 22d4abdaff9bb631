"""A tool parameter typed with `typing.TypedDict` is described and checked on Python
3.11 as on 3.12 (where pydantic takes it as it is): nested in another, in a list,
optional, with keys that are not required."""

from __future__ import annotations

from typing import Optional, TypedDict

import addressable as ad


class Point(TypedDict):
    x: int
    y: int


class Options(TypedDict, total=False):
    label: str


class Route(TypedDict):
    stops: list[Point]
    options: Options


def test_a_typing_typeddict_parameter_is_described_and_checked() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))

    @kit.tool
    def plan(route: Route, start: Optional[Point] = None) -> str:  # noqa: UP045
        return f"{len(route['stops'])} stops from {start}"

    schema = next(t for t in kit.tools("anthropic") if t["name"] == "plan")["input_schema"]
    point = schema["$defs"]["Point"]
    assert point["required"] == ["x", "y"] and point["properties"]["x"]["type"] == "integer"
    assert "required" not in schema["$defs"]["Options"]  # total=False: no key required
    stops = [{"x": 1, "y": 2}]
    ok = kit.handle("plan", {"route": {"stops": stops, "options": {}}, "start": stops[0]})
    assert ok == "1 stops from {'x': 1, 'y': 2}"
    refused = kit.handle("plan", {"route": {"stops": [{"x": "1"}], "options": {}}})
    assert refused.startswith("error: plan: argument 'route.stops.0.x' does not fit: Input should")
    assert "; argument 'route.stops.0.y' is required" in refused
    assert kit.handle("plan", {"route": "nowhere"}).startswith("error: plan: argument 'route' ")
    assert plan({"stops": stops, "options": {"label": "a"}}).text == "1 stops from None"
