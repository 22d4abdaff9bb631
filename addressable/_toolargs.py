"""A model's arguments to a tool, checked against the tool's JSON Schema by pydantic
before anything runs: the subset of JSON Schema the library's own tools declare (an
object of typed properties, required ones, enums, integer bounds, no others)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
)

from ._errors import ArgumentError


def check_arguments(
    input_schema: Mapping[str, Any], arguments: Mapping[str, Any], tool: str
) -> dict[str, Any]:
    """`arguments` checked against `input_schema`: each required one given, none it
    does not name, each of its type (strict: a string is not an int, a bool not an
    int). A `null` stands for an argument left out. Returns the ones given, `null`s left
    out; raises `ArgumentError` naming the argument, in one line."""
    model = _model_of(json.dumps(input_schema, sort_keys=True))
    try:
        model.model_validate(arguments)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "the arguments"
        what = {
            "missing": "is missing",
            "extra_forbidden": "is not an argument of this tool",
        }.get(first["type"], f"does not fit ({type(first['input']).__name__}): {first['msg']}")
        raise ArgumentError(f"{tool}: argument {where!r} {what}") from None
    return {k: v for k, v in arguments.items() if v is not None}


_TYPES: dict[str, Any] = {
    "string": StrictStr,
    "integer": StrictInt,
    "boolean": StrictBool,
    "object": dict[str, Any],
    "array": list[Any],
}


@functools.cache
def _model_of(schema_json: str) -> type[BaseModel]:
    """A pydantic model for one input schema (kept: a tool's schema does not change)."""
    input_schema = json.loads(schema_json)
    fields: dict[str, Any] = {}
    for name, prop in input_schema["properties"].items():
        kind: Any = _TYPES[prop["type"]]
        if "enum" in prop:
            kind = Literal[tuple(prop["enum"])]
        elif prop["type"] == "array" and "items" in prop:
            item = _TYPES[prop["items"]["type"]]
            kind = list[item]  # type: ignore[valid-type]
        bounds = {
            "ge": prop.get("minimum"),
            "le": prop.get("maximum"),
            "max_length": prop.get("maxLength"),
        }
        required = name in input_schema.get("required", [])
        fields[name] = (kind, Field(**bounds)) if required else (kind | None, Field(None, **bounds))
    config = ConfigDict(extra="forbid")
    return create_model("Arguments", __config__=config, **fields)
