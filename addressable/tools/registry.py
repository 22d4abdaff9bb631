"""The model's side: the tools offered to a model, their definitions, and `handle`,
which runs a model's tool call and gives the text of its tool result."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

if TYPE_CHECKING:
    from anthropic.types import ToolParam as AnthropicToolParam
    from openai.types.chat import ChatCompletionFunctionToolParam as ChatToolParam
    from openai.types.responses import FunctionToolParam as ResponsesToolParam

from ..context.stubs import REPLAY_TOOL
from ..core.errors import ArgumentError
from ..core.ids import content_hash, quoted
from ..core.records import Record, Result
from ..core.secrets import Secrets
from ..recording.recorder import INGESTED_FROM, RECORDED, Recorder
from ..recording.unstorable import message
from .definitions import FunctionTool, ModelTool, definition, result_text
from .firstsight import (
    DEFAULT_MAX_RESULT_TOKENS,
    binary_part,
    capped,
    checked_cap,
    is_binary,
    size_within,
)

# What the APIs take as a tool's name (Anthropic's and OpenAI's rule alike), and as the
# name of one of its arguments (a key of its input schema's properties).
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ARGUMENT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def check_tool_name(name: object) -> str:
    """`name`, or `ArgumentError` unless the APIs take it as a tool's name: 1 to 64
    letters, digits, `_` or `-` (a request offering one they refuse fails whole)."""
    if not isinstance(name, str):
        raise ArgumentError(f"a tool's name is a str, not {type(name).__name__}")
    if not _TOOL_NAME.fullmatch(name):
        raise ArgumentError(
            f"a tool's name is 1 to 64 ASCII letters, digits, _ or -, not {quoted(name)}"
        )
    return name


def check_argument_names(tool: str, names: Iterable[str]) -> None:
    """`ArgumentError` unless the APIs take each of `names` as an argument's name."""
    for name in names:
        if not _ARGUMENT_NAME.fullmatch(name):
            raise ArgumentError(
                f"tool {tool!r}: an argument's name is 1 to 64 ASCII letters, digits, _, . "
                f"or -, not {quoted(name)}: the APIs refuse the tool otherwise"
            )


class ToolRegistry:
    """The tools offered to the model, by name; `handle` runs one and masks what it
    gives with the recorder's secrets."""

    def __init__(self, recorder: Recorder) -> None:
        self._rec = recorder
        self._model_tools: dict[str, ModelTool] = {}
        self._shown: dict[str, str] = {}  # hash of a text handle() returned -> record id
        self._default_cap: int | None = DEFAULT_MAX_RESULT_TOKENS
        self._caps: dict[str, int | None] = {}  # a tool's own cap, where it has one

    @property
    def max_result_tokens(self) -> int | None:
        """The first-sight cap of every tool without one of its own."""
        return self._default_cap

    @max_result_tokens.setter
    def max_result_tokens(self, tokens: int | None) -> None:
        self._default_cap = checked_cap(tokens)

    def set_cap(self, tool: str, tokens: int | None) -> None:
        """`tool`'s own first-sight cap (None: none), whatever the default."""
        self._caps[tool] = checked_cap(tokens, f"max_result_tokens of {tool!r}")

    def cap_of(self, tool: str) -> int | None:
        """The first-sight cap of what `tool` gives a model."""
        return self._caps.get(tool, self._default_cap)

    def register(self, tool: ModelTool) -> None:
        """Offer a tool to the model: `tools()` lists it, `handle()` runs it. A function
        wrapped again under its name replaces the one before; an adapter, and
        `replay_result` (which stubs point models to), are never replaced."""
        if self._model_tools.get(tool.name) is not tool:
            self.check_free(tool.name)
        self._model_tools[tool.name] = tool

    def check_free(self, name: str) -> None:
        """`ArgumentError` unless a new tool may take `name`: a name the APIs take, and
        no tool's but a wrapped function's (which a new one replaces)."""
        check_tool_name(name)
        existing = self._model_tools.get(name)
        if existing is None or isinstance(existing, FunctionTool):
            return
        if name == REPLAY_TOOL:
            raise ArgumentError(
                f"{REPLAY_TOOL!r} is the toolkit's own tool, which stubs point models to: "
                "give your tool another name"
            )
        raise ArgumentError(f"a tool named {name!r} is already registered")

    # Typed as the SDKs' own parameter types, so that `tools=kit.tools(...)` type-checks
    # where it is passed to them; the SDKs are needed only by a type checker.
    @overload
    def tools(self, format: Literal["anthropic"] = ...) -> list[AnthropicToolParam]: ...
    @overload
    def tools(self, format: Literal["openai"]) -> list[ChatToolParam]: ...
    @overload
    def tools(self, format: Literal["openai-responses"]) -> list[ResponsesToolParam]: ...
    @overload
    def tools(self, format: str) -> list[Any]: ...
    def tools(self, format: str = "anthropic") -> list[Any]:
        """`Toolkit.tools` says what it does."""
        return [definition(t, format) for t in self._model_tools.values()]

    def handle(self, name: str, arguments: Mapping[str, Any] | str | None) -> str:
        """Run a model's tool call and return the text for its tool result.

        `arguments` may be the JSON string the OpenAI APIs give. Nothing raises: an
        unknown tool, arguments that do not fit, or a tool that fails come back as a
        short `error: ...` text the model can act on.
        """
        found = self._callable(name, arguments)
        if isinstance(found, str):
            return found
        tool, parsed = found
        made: list[Record] = []
        token = RECORDED.set(made)
        try:
            text = self._text(lambda: tool.handle(parsed))
        finally:
            RECORDED.reset(token)
        return self._remember(name, text, made)

    async def ahandle(self, name: str, arguments: Mapping[str, Any] | str | None) -> str:
        """`handle` from async code: a tool with an async `ahandle` of its own (async
        functions, adapters such as Fetch, which then use their async client) is awaited;
        the others run in a thread."""
        found = self._callable(name, arguments)
        if isinstance(found, str):
            return found
        tool, parsed = found
        made: list[Record] = []
        token = RECORDED.set(made)
        try:
            ahandle = getattr(tool, "ahandle", None)  # a tool's own async path, if it has one
            if ahandle is not None and inspect.iscoroutinefunction(ahandle):
                try:
                    text = self._rec.secrets.mask(await ahandle(parsed))
                except Exception as exc:
                    text = failure_text(self._rec.secrets, exc)
            else:
                text = await asyncio.to_thread(self._text, lambda: tool.handle(parsed))
        finally:
            RECORDED.reset(token)
        return self._remember(name, text, made)

    def close(self) -> None:
        """Call `close()` on each tool that has one (an adapter closes the clients it
        made); every tool is closed even if one raises."""
        with contextlib.ExitStack() as stack:
            for tool in self._model_tools.values():
                close = getattr(tool, "close", None)
                if callable(close):
                    stack.callback(close)

    async def aclose(self) -> None:
        """`close` from async code: a tool's `aclose()` is awaited where it has one (it
        closes async clients too), else its `close()` is called."""
        async with contextlib.AsyncExitStack() as stack:
            for tool in self._model_tools.values():
                aclose = getattr(tool, "aclose", None)
                close = getattr(tool, "close", None)
                if inspect.iscoroutinefunction(aclose):
                    stack.push_async_callback(aclose)
                elif callable(close):
                    stack.callback(close)

    def _callable(
        self, name: str, arguments: Mapping[str, Any] | str | None
    ) -> tuple[ModelTool, dict[str, Any]] | str:
        # A model's name may be anything its API let through: not a string (unhashable,
        # even), or megabytes long; the error quotes only the start of it.
        tool = self._model_tools.get(name) if isinstance(name, str) else None
        if tool is None:
            known = ", ".join(sorted(self._model_tools))
            if not isinstance(name, str):
                return (
                    f"error: a tool's name is a string, not {type(name).__name__}; "
                    f"the tools are: {known}"
                )
            return f"error: there is no tool named {quoted(name)}; the tools are: {known}"
        parsed = _parse_arguments(arguments)
        if isinstance(parsed, str):
            return parsed
        checked = getattr(tool, "checked", None)  # see ModelTool: before anything runs
        if callable(checked):
            try:
                parsed = checked(parsed)
            except ArgumentError as exc:
                return refused_text(self._rec.secrets, exc)
        return tool, parsed

    def _text(self, run: Callable[[], str]) -> str:
        try:
            return self._rec.secrets.mask(run())
        except Exception as exc:
            return failure_text(self._rec.secrets, exc)

    def _remember(self, name: str, text: str, made: list[Record]) -> str:
        # Remember which record this text shows, so that compaction can point a stub
        # at it; the call's own record is the first one made under the tool's name.
        primary = next((r for r in made if r.tool == name), made[0] if made else None)
        if name != REPLAY_TOOL:  # which caps what it reads itself
            text = _first_sight(text, self.cap_of(name), primary)
        if primary is not None and name != REPLAY_TOOL:
            digest = content_hash(text.encode("utf-8"))
            if self._shown.get(digest) != primary.id:
                self._shown[digest] = primary.id
                self._rec.store.set_shown(digest, primary.id)  # for compaction in any process
        return text

    def shown(self, text: str) -> str | None:
        """`Toolkit.shown` says what it does."""
        digest = content_hash(text.encode("utf-8"))
        return self._shown.get(digest) or self._rec.store.shown(digest)

    def has_renderer(self, tool: str) -> bool:
        """`Toolkit.has_renderer` says what it does."""
        return callable(getattr(self._model_tools.get(tool), "render", None))

    def render(self, result: Result) -> str:
        """`Toolkit.render` says what it does."""
        if INGESTED_FROM in result.record.meta:  # ingested: shown exactly as it was
            return result.text
        tool = self._model_tools.get(result.record.tool)
        render = getattr(tool, "render", None)
        return str(render(result)) if callable(render) else result_text(result)


def _first_sight(text: str, cap: int | None, record: Record | None) -> str:
    """What a model is handed of `text`, the text of a call that made `record`: within
    `cap`. The text of an image, audio or other bytes is never cut: over the cap, it is
    named by its record's id and media type."""
    if cap is None or record is None or not is_binary(record.media_type):
        return capped(text, cap, record.id if record else None)
    if size_within(text, cap)[0]:
        return text
    return binary_part(record.id, record.media_type, record.size)


def refused_text(secrets: Secrets, exc: ArgumentError) -> str:
    """The answer to a call whose arguments a tool's `checked` refused: its message
    alone, ``error: TOOL: argument 'NAME' ...`` (README's Security section); nothing
    ran, so there is no exception type to name."""
    return secrets.mask(f"error: {exc}")


def failure_text(secrets: Secrets, exc: Exception) -> str:
    """The answer to a call that raised as it ran: ``error: Type: message``. The
    arguments were checked against the tool's schema before it ran: a TypeError now is
    the tool's own, named as it is."""
    return secrets.mask(f"error: {type(exc).__name__}: {message(exc)}")


def _parse_arguments(arguments: Mapping[str, Any] | str | None) -> dict[str, Any] | str:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            return f"error: the arguments are not valid JSON ({exc}); send a JSON object"
        except RecursionError:
            return "error: the arguments are nested too deeply; send a flat JSON object"
    if not isinstance(arguments, Mapping):
        return "error: the arguments must be a JSON object"
    return dict(arguments)
