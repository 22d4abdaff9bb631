"""What every adapter shares: the kit it records into, and how it is offered to a model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import addressable as ad


class Adapter:
    """An adapter records through `kit` and offers itself to the model under `name`.

    Subclasses set `name`, `description` and `input_schema`, and implement `handle`
    (a model's call to text). Creating one registers it with the kit; pass `name` to
    offer a second adapter of the same kind under another name.
    """

    name: str = ""
    description: str = ""
    input_schema: dict[str, Any]

    def __init__(self, kit: ad.Toolkit, name: str | None = None) -> None:
        self.kit = kit
        if name is not None:
            self.name = name
        kit.register(self)

    def handle(self, arguments: dict[str, Any]) -> str:
        raise NotImplementedError


class Identity(BaseModel):
    """Who a request is sent as: a name, and headers whose credentials are secret
    references (``Bearer secret:env:API_TOKEN``), resolved only when sending."""

    model_config = ConfigDict(frozen=True)

    name: str
    headers: Mapping[str, str] = Field(default_factory=dict)

    def resolved_headers(self, secrets: ad.Secrets) -> dict[str, str]:
        """The headers with their secret references replaced by the values: for sending
        only, never for keeping."""
        return {k: secrets.resolve_all(v) for k, v in self.headers.items()}


def schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A JSON Schema object for a tool's input."""
    return {"type": "object", "properties": properties, "required": required}
