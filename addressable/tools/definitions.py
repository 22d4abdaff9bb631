"""Tools as a model sees them: a name, a description, a JSON Schema, and text back.

`ModelTool` is the one protocol an adapter implements to be offered to a model;
`definition` writes it in the shape each API expects.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from ..core.errors import ArgumentError, EventLoopError
from ..core.payload import BLOCKS, payload_text
from ..core.records import Result
from ..recording.calls import run_to_end
from ..recording.spec import ToolSpec

Format = Literal["anthropic", "openai", "openai-responses"]
FORMATS: tuple[Format, ...] = ("anthropic", "openai", "openai-responses")


@runtime_checkable
class ModelTool(Protocol):
    """A tool a model can call: what `kit.tools()` lists and `kit.handle()` runs.

    A tool may also have `checked(arguments) -> dict`: `handle` is then given what it
    returns, and an `ArgumentError` it raises is the call's result, ``error: MESSAGE``,
    before anything ran (adapters and wrapped functions check a model's arguments
    against their `input_schema` so, the message ``TOOL: argument 'NAME' ...``)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> dict[str, Any]: ...

    def handle(self, arguments: dict[str, Any]) -> str:
        """Run a model's call and return the text for its tool result."""
        ...


def definition(tool: ModelTool, format: str) -> dict[str, Any]:
    """The tool's definition for the Anthropic Messages, OpenAI Chat or Responses API."""
    if format == "anthropic":
        return {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema,
        }
    if format == "openai":
        return {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
    if format == "openai-responses":
        return {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
            "strict": False,
        }
    raise ArgumentError(f"unknown tool format {format!r}: use one of {', '.join(FORMATS)}")


def result_text(result: Result) -> str:
    """What the model sees of a result: its text, plainly so when it is an error, and a
    note of its size and kind when it is not text (as `replay_result` gives it)."""
    if not result.ok:
        return f"error: {result.record.error or result.text}"
    text = readable_text(result)
    return binary_note(result) if text is None else text


def readable_text(result: Result) -> str | None:
    """The payload as text, decoded once; None when it is mostly bytes no text holds
    (an image, an archive). Text with a stray byte (a Latin-1 letter, NULs between
    names) is still text, and blocks of text with images beside them are their text."""
    if result.record.media_type == BLOCKS:
        return result.text
    return payload_text(result.payload, result.record.media_type, readable=True)


def binary_note(result: Result) -> str:
    """What stands for a payload `readable_text` does not read as text."""
    size, media_type = len(result.payload), result.record.media_type
    return (
        f"[binary content: {size:,} bytes of {media_type}, kept in result {result.record.id}; "
        "it cannot be shown as text]"
    )


class FunctionTool:
    """A function wrapped by `kit.tool`, offered to the model.

    Its description is the docstring without the `Args:` section (those descriptions
    are in the schema). A model's arguments are validated strictly, as JSON, by
    `checked`, before the function runs: one that does not fit raises `ArgumentError`
    naming it (which `kit.handle` gives back as ``error: TOOL: argument 'n' ...``) and
    nothing is run or recorded.
    """

    def __init__(self, spec: ToolSpec, call: Callable[..., Any]) -> None:
        self._spec = spec
        self._call = call  # takes what `parse` validated, without validating again

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def description(self) -> str:
        return self._spec.parameters.description or f"The {self._spec.name} tool."

    @property
    def input_schema(self) -> dict[str, Any]:
        return self._spec.input_schema

    def checked(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """A model's arguments validated (see `ToolSpec.parse`): what `handle` takes."""
        return self._spec.parse(arguments)

    def handle(self, arguments: dict[str, Any]) -> str:
        """Call the function with arguments `checked` gave (not validated again)."""
        args, kwargs = self._spec.unbind(arguments)
        outcome = self._call(*args, **kwargs)
        if inspect.isawaitable(outcome):
            outcome = run_to_end(outcome, _in_a_loop)
        return result_text(outcome)

    async def ahandle(self, arguments: dict[str, Any]) -> str:
        args, kwargs = self._spec.unbind(arguments)
        if not self._spec.is_async:  # a sync function runs in a thread: the loop goes on
            return result_text(await asyncio.to_thread(self._call, *args, **kwargs))
        outcome = self._call(*args, **kwargs)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        return result_text(outcome)


def _in_a_loop() -> EventLoopError:
    return EventLoopError("an async tool called from a running event loop: use `await kit.ahandle`")
