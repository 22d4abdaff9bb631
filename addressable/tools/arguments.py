"""A model's arguments to a tool, checked against the tool's JSON Schema by pydantic
before anything runs: the subset of JSON Schema the library's own tools declare (an
object of typed properties, required ones, enums, bounds, no others). What a schema says
beyond that subset (another type, `anyOf`, a list of types) is not checked, not refused:
a user's own tool may declare more."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
)

from ..recording.argerrors import argument_error


def check_arguments(
    input_schema: Mapping[str, Any], arguments: Mapping[str, Any], tool: str
) -> dict[str, Any]:
    """`arguments` checked against `input_schema`: each required one given, none it
    does not name, each of its type (strict: a string is not an int, a bool is not an
    int; JSON's 5.0 is the integer 5). A `null` stands for an argument left out. Returns
    the ones given, as checked; raises `ArgumentError` naming the argument, in one line,
    as a wrapped function's are named (`argument_error`)."""
    given = {k: v for k, v in arguments.items() if v is not None}
    model = _model_of(json.dumps(input_schema, sort_keys=True, default=str))
    if model is None:
        return given
    try:
        checked = model.model_validate(given)
    except ValidationError as exc:
        raise argument_error(tool, exc, tuple(model.model_fields), positions_only=True) from None
    return {k: getattr(checked, k) for k in given}


def _whole(value: object) -> object:
    """JSON Schema's integers include 5.0: as the int 5."""
    return int(value) if type(value) is float and value.is_integer() else value


_TYPES: dict[str, Any] = {
    "string": StrictStr,
    "integer": Annotated[StrictInt, BeforeValidator(_whole)],
    "number": StrictInt | StrictFloat,
    "boolean": StrictBool,
    "object": dict[str, Any],
    "array": list[Any],
}


@functools.cache
def _model_of(schema_json: str) -> type[BaseModel] | None:
    """A pydantic model for one input schema (kept: a tool's schema does not change);
    None for a schema that is not an object of properties."""
    input_schema = json.loads(schema_json)
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    if not isinstance(properties, dict):
        return None
    required = input_schema.get("required", [])
    fields: dict[str, Any] = {}
    for name, prop in properties.items():
        kind = _kind(prop)
        bounds: dict[str, Any] = (
            {
                "ge": prop.get("minimum"),
                "le": prop.get("maximum"),
                "max_length": prop.get("maxLength"),
            }
            if isinstance(prop, dict) and kind is not Any
            else {}
        )
        fields[name] = (
            (kind, Field(**bounds)) if name in required else (kind, Field(None, **bounds))
        )
    closed = input_schema.get("additionalProperties") is False
    config = ConfigDict(extra="forbid" if closed else "allow")
    return create_model("Arguments", __config__=config, **fields)


def _kind(prop: object) -> Any:
    """The type a property's schema names, or Any for what is not checked here."""
    if not isinstance(prop, dict):
        return Any
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return Literal[tuple(prop["enum"])]
    named = prop.get("type")
    kind = _TYPES.get(named) if isinstance(named, str) else None
    if kind is None:
        return Any
    items = prop.get("items")
    if named == "array" and isinstance(items, dict) and isinstance(items.get("type"), str):
        item = _TYPES.get(items["type"], Any)
        return list[item]  # type: ignore[valid-type]
    return kind
