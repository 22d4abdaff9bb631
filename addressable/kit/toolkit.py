"""The Toolkit: wraps an agent's tools so every call is recorded and addressable.

A facade: recording (`Recorder`, `Calls`, offered through `RecordingFacade`), the
model's tools (`ToolRegistry`) and the continuity features (`Continuity`, offered
through `ContinuityFacade`) each live in their own class; `Toolkit` composes them and
is the one object users hold.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import uuid
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar, overload

if TYPE_CHECKING:
    from anthropic.types import ToolParam as AnthropicToolParam
    from openai.types.chat import ChatCompletionFunctionToolParam as ChatToolParam
    from openai.types.responses import FunctionToolParam as ResponsesToolParam

from ..core.errors import ArgumentError
from ..core.records import Determinism, Result, member
from ..core.secrets import Secrets
from ..recording.calls import Calls
from ..recording.recorder import Clock, Recorder, RecordOptions, checked_time, utc_now
from ..recording.spec import KeyFn
from ..state.continuity import Continuity, StalePolicy
from ..store import Store, open_store
from ..tools.definitions import FunctionTool, ModelTool
from ..tools.registry import ToolRegistry
from ..tools.replay import ReplayTool
from ..tools.wrapping import function_spec
from .continuity import ContinuityFacade
from .recording import RecordingFacade

__all__ = ["Clock", "RecordOptions", "Toolkit", "utc_now"]

F = TypeVar("F", bound=Callable[..., Any])


class Toolkit(RecordingFacade, ContinuityFacade):
    """Records every call of the tools it wraps in a store, and replays them by id.

    `store` is a `Store`, or what `open_store` takes (a URL such as ``"memory://"`` or
    ``"redis://..."``, a folder), or None for the default disk store. `session` groups
    the calls of one agent run (a fresh name when none is given).
    `clock` and `nonce` can be injected for deterministic tests; a clock's times must be
    timezone-aware (a naive one raises `ArgumentError`). `stale_policy` says whether an
    action on stale facts is refused (the default) or only warned of.

    `close()`, or the end of a `with` (`async with`) block, closes its store and the
    clients its adapters made.
    """

    def __init__(
        self,
        store: Store | str | os.PathLike[str] | None = None,
        *,
        session: str | None = None,
        clock: Clock | None = None,
        nonce: Callable[[], bytes] | None = None,
        stale_policy: StalePolicy = "refuse",
    ) -> None:
        clock = clock or utc_now
        started = checked_time(clock())  # a clock giving naive times fails here, not mid-run
        if store is None or isinstance(store, str | os.PathLike):
            store = open_store(store)  # a URL or a folder, as open_store takes it
        elif not callable(getattr(store, "put", None)):
            kind = type(store).__name__
            raise ArgumentError(f"Toolkit: store must be a Store or a store URL, not {kind}")
        self._recorder = Recorder(
            store,
            session=session or f"s-{started:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}",
            clock=clock,
            nonce=nonce or (lambda: os.urandom(16)),
            secrets=Secrets(),
        )
        self._calls = Calls(self._recorder)
        self._registry = ToolRegistry(self._recorder)
        self._continuity = Continuity(self._recorder, self._calls, stale_policy)
        self._closed = False
        self.register(ReplayTool(self))

    # -- closing -----------------------------------------------------------------------

    def close(self) -> None:
        """Close what the kit holds: the clients its adapters made (not ones they were
        given: each registered tool's own `close()`), then its store, given or opened.
        The kit is not to be used after; closing it again does nothing."""
        if self._closed:
            return
        self._closed = True
        with contextlib.ExitStack() as stack:
            stack.callback(self._recorder.store.close)  # run last, even if a tool's fails
            self._registry.close()

    async def aclose(self) -> None:
        """`close` from async code: adapters' async clients are closed too."""
        if self._closed:
            return
        self._closed = True
        with contextlib.ExitStack() as stack:
            stack.callback(self._recorder.store.close)
            await self._registry.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- what the parts share ------------------------------------------------------

    @property
    def store(self) -> Store:
        return self._recorder.store

    @store.setter
    def store(self, store: Store) -> None:
        self._recorder.store = store

    @property
    def session(self) -> str:
        return self._recorder.session

    @session.setter
    def session(self, session: str) -> None:
        self._recorder.session = session

    @property
    def clock(self) -> Clock:
        return self._recorder.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self._recorder.clock = clock

    @property
    def secrets(self) -> Secrets:
        return self._recorder.secrets

    # -- wrapping --------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> Callable[..., Any]: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        determinism: Determinism | str = Determinism.NONDETERMINISTIC,
        key: KeyFn | None = None,
        max_age: timedelta | None = None,
        media_type: str | None = None,
    ) -> Callable[[F], Callable[..., Any]]: ...

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        determinism: Determinism | str = Determinism.NONDETERMINISTIC,
        key: KeyFn | None = None,
        max_age: timedelta | None = None,
        media_type: str | None = None,
    ) -> Any:
        """Wrap a sync or async callable so that each call returns a recorded `Result`.

        `determinism` declares how results are recovered (nondeterministic unless said
        otherwise: the safe assumption). `key` is called with the tool's arguments and
        gives the addressable key (a URL, `path@rev`, ...). Return values may be str,
        bytes or JSON-serialisable; `media_type` overrides the one inferred.

        The JSON Schema is pydantic's, from the annotations and the docstring's `Args:`.
        Arguments are validated before the function runs (a model's strictly, as JSON; a
        Python call's as `pydantic.validate_call` does); one that does not fit, or a key
        that is not text, raises `ArgumentError` and the function never runs. The record
        holds the validated values as JSON, so the same call gets the same id however it
        was spelt. A return value that cannot be stored is recorded as an error (an
        action's outcome `unknown`), then raises `ArgumentError`: a call that ran is never
        unrecorded.
        """
        determinism = member(Determinism, determinism, "determinism")
        # Where the tool is defined: its annotations may name classes local to it.
        caller = sys._getframe(1)
        namespace = dict(caller.f_locals) if caller.f_locals is not caller.f_globals else None

        def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
            spec = function_spec(
                f,
                name=name,
                determinism=determinism,
                key=key,
                max_age=max_age,
                media_type=media_type,
                namespace=namespace,
                registry=self._registry,
            )
            wrapped = functools.wraps(f)(self._calls.wrap(spec))
            self.register(FunctionTool(spec, self._calls.validated_caller(spec)))
            return wrapped

        return wrap(fn) if fn is not None else wrap

    # -- the model's side --------------------------------------------------------------

    def register(self, tool: ModelTool) -> None:
        """Offer a tool to the model: `tools()` lists it, `handle()` runs it."""
        self._registry.register(tool)

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
        """Definitions of every registered tool, `replay_result` included, in the shape of
        the "anthropic", "openai" (Chat Completions) or "openai-responses" API."""
        return self._registry.tools(format)

    def handle(self, name: str, arguments: Mapping[str, Any] | str | None) -> str:
        """Run a model's tool call and return the text for its tool result. `arguments`
        may be the JSON string the OpenAI APIs give. Nothing raises: an unknown tool, bad
        arguments or a failing tool come back as a short `error: ...` text."""
        return self._registry.handle(name, arguments)

    async def ahandle(self, name: str, arguments: Mapping[str, Any] | str | None) -> str:
        """`handle` from async code: a tool with an async `ahandle` of its own (async
        functions, adapters such as Fetch) is awaited; the others run in a thread."""
        return await self._registry.ahandle(name, arguments)

    def shown(self, text: str) -> str | None:
        """The id of the record a text `handle` returned shows, if this kit, or another
        on the same store, showed it."""
        return self._registry.shown(text)

    def has_renderer(self, tool: str) -> bool:
        """Whether `tool` shows its results its own way (see `render`)."""
        return self._registry.has_renderer(tool)

    def render(self, result: Result) -> str:
        """The text the model is shown for a result: its tool's own rendering (a page's
        readable text, a search's hit list), else the payload as text."""
        return self._registry.render(result)
