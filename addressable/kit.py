"""`Toolkit`: the object users hold. It wraps an agent's tools so that every call is
recorded and addressable, and holds the parts that do the work: recording (`Recorder`,
`Calls`), the model's tools (`ToolRegistry`) and continuity (`Continuity`); each method
here passes to one of them.

Here too: what `kit.tool` makes of a user's function (the checks it passes before
anything is set up under its name, and the `ToolSpec` its calls run by), and whether a
call `kit.handle` ran failed, from the text it gave: one rule for the SDK helpers and
the MCP server, while the model sees the same text.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
import os
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar, Unpack, overload

from .core.errors import AddressableError, ArgumentError
from .core.ids import quoted
from .core.records import Determinism, Outcome, Record, Result, Status, member
from .core.secrets import Secrets
from .recording.calls import Calls, Rerun
from .recording.recorder import Clock, Recorder, RecordOptions, checked_time, utc_now
from .recording.spec import KeyFn, ToolSpec, named_parameters
from .state.continuity import Continuity, Recovery, Revalidation, StalePolicy
from .state.document import StateDocument, Task
from .store import Store, open_store
from .tools.definitions import FunctionTool, ModelTool
from .tools.firstsight import DEFAULT_MAX_RESULT_TOKENS, checked_cap
from .tools.registry import ToolRegistry, check_argument_names
from .tools.replay import NAME as REPLAY
from .tools.replay import ReplayTool

if TYPE_CHECKING:
    from anthropic.types import ToolParam as AnthropicToolParam
    from openai.types.chat import ChatCompletionFunctionToolParam as ChatToolParam
    from openai.types.responses import FunctionToolParam as ResponsesToolParam

__all__ = [
    "Clock",
    "RecordOptions",
    "Toolkit",
    "failed",
    "failed_with",
    "function_spec",
    "shown_record",
    "utc_now",
]


def function_spec(
    f: Callable[..., Any],
    *,
    name: str | None,
    determinism: Determinism,
    key: KeyFn | None,
    max_age: timedelta | None,
    media_type: str | None,
    namespace: dict[str, Any] | None,
    registry: ToolRegistry,
) -> ToolSpec:
    """The spec of `f` as a tool called `name` (its `__name__` without one), or
    `ArgumentError`: no name, a name `registry` already has, an argument's name the
    APIs refuse, or a method wrapped in its class's body."""
    called = name if name is not None else getattr(f, "__name__", None)
    if called is None:
        raise ArgumentError(f"{quoted(repr(f))} has no __name__: give the tool a name=")
    signature = inspect.signature(f)
    registry.check_free(called)  # before anything is set up under it
    check_argument_names(called, [p.name for p in named_parameters(signature)])
    if _unbound_method(f, signature):
        raise ArgumentError(
            f"{called!r} is a method in its class's body: its `self` is no "
            f"argument a model can give; wrap it bound (kit.tool(obj.{called})) "
            "or make it a staticmethod"
        )
    return ToolSpec(
        name=called,
        fn=f,
        determinism=determinism,
        key=key,
        max_age=max_age,
        media_type=media_type,
        signature=signature,
        description=inspect.getdoc(f) or "",
        namespace=namespace,
    )


def _unbound_method(f: Callable[..., Any], signature: inspect.Signature) -> bool:
    """Whether `f` is a function defined in a class's body whose first parameter is
    `self` or `cls`: wrapped there, it would be offered with that parameter."""
    first = next(iter(signature.parameters), None)
    parts = getattr(f, "__qualname__", "").split(".")
    return first in ("self", "cls") and len(parts) > 1 and parts[-2] != "<locals>"


F = TypeVar("F", bound=Callable[..., Any])


class Inherit(enum.Enum):
    """`kit.tool(max_result_tokens=...)` not given: the kit's cap applies."""

    INHERIT = "inherit"


INHERIT = Inherit.INHERIT


class Toolkit:
    """Records every call of the tools it wraps in a store, and replays them by id.

    `store` is a `Store`, or what `open_store` takes (a URL such as ``"memory://"`` or
    ``"redis://..."``, a folder), or None for the default disk store. `session` groups
    the calls of one agent run (a fresh name when none is given).
    `max_result_tokens` is the first-sight cap: a result longer than that many tokens
    is recorded whole, and the model is handed its head and tail, what was left out and
    how `replay_result` reads the rest (None: every result is handed whole).
    `clock` and `nonce` can be injected for deterministic tests; a clock's times must be
    timezone-aware (a naive one raises `ArgumentError`). `stale_policy` says whether an
    action on stale facts is refused (the default) or only warned of.

    `close()`, or the end of a `with` (`async with`) block, closes its store and the
    clients its adapters made."""

    def __init__(
        self,
        store: Store | str | os.PathLike[str] | None = None,
        *,
        session: str | None = None,
        clock: Clock | None = None,
        nonce: Callable[[], bytes] | None = None,
        stale_policy: StalePolicy = "refuse",
        max_result_tokens: int | None = DEFAULT_MAX_RESULT_TOKENS,
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
        self._registry.max_result_tokens = max_result_tokens
        self._continuity = Continuity(self._recorder, self._calls, stale_policy)
        self._closed = False
        self.register(ReplayTool(self))

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
        max_result_tokens: int | Inherit | None = INHERIT,
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
        max_result_tokens: int | Inherit | None = INHERIT,
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
        unrecorded. `max_result_tokens` is the tool's own first-sight cap (None: off);
        without it, the kit's applies.
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
            if not isinstance(max_result_tokens, Inherit):
                checked_cap(max_result_tokens, f"max_result_tokens of {spec.name!r}")
            wrapped = functools.wraps(f)(self._calls.wrap(spec))
            self.register(FunctionTool(spec, self._calls.validated_caller(spec)))
            if not isinstance(max_result_tokens, Inherit):
                self.set_max_result_tokens(spec.name, max_result_tokens)
            return wrapped

        return wrap(fn) if fn is not None else wrap

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

    @property
    def max_result_tokens(self) -> int | None:
        """The first-sight cap of every tool without one of its own (None: off)."""
        return self._registry.max_result_tokens

    @max_result_tokens.setter
    def max_result_tokens(self, tokens: int | None) -> None:
        self._registry.max_result_tokens = tokens

    def set_max_result_tokens(self, tool: str, tokens: int | None) -> None:
        """Give `tool` a first-sight cap of its own (None: its results are handed
        whole), whatever `max_result_tokens` says for the others."""
        self._registry.set_cap(tool, tokens)

    def result_cap(self, tool: str) -> int | None:
        """The most tokens a result of `tool` is handed to a model with."""
        return self._registry.cap_of(tool)

    def has_renderer(self, tool: str) -> bool:
        """Whether `tool` shows its results its own way (see `render`)."""
        return self._registry.has_renderer(tool)

    def render(self, result: Result) -> str:
        """The text the model is shown for a result: its tool's own rendering (a page's
        readable text, a search's hit list), else the payload as text."""
        return self._registry.render(result)

    # -- recording: record, ingest, read back and replay ---------------------------

    def record(
        self,
        tool: str,
        args: Mapping[str, Any],
        payload: bytes,
        *,
        determinism: Determinism | str,
        **options: Unpack[RecordOptions],
    ) -> Result:
        """Store one observation of a tool call and return it as a `Result`: the entry
        for adapters that build the payload themselves (`payload` the exact bytes, `args`
        JSON, `options` the `RecordOptions`). An action whose fields cannot be stored is
        still recorded, outcome `unknown`; then `ArgumentError` names that record."""
        return self._recorder.record(tool, args, payload, determinism=determinism, **options)

    def record_failure(
        self,
        tool: str,
        args: Mapping[str, Any],
        exc: BaseException,
        *,
        determinism: Determinism | str,
        **options: Unpack[RecordOptions],
    ) -> Result:
        """Record a call that raised: status error, the exception ("Type: message") as
        both the payload and the error. The caller re-raises it."""
        return self._recorder.record_failure(tool, args, exc, determinism=determinism, **options)

    def ingest(
        self,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        text: str,
        *,
        is_error: bool = False,
        determinism: Determinism | str = Determinism.NONDETERMINISTIC,
        content: Sequence[Any] | None = None,
        shape: str | None = None,
    ) -> Result:
        """Store a tool result this kit did not make (as found in a message list), keyed
        by its tool-call id, so that it too can be evicted and replayed: a Claim unless
        `determinism` says otherwise. Ingested again, it adds no observation. A result
        that held more than text is stored whole: its `content` list, in the list's
        `shape`."""
        return self._recorder.ingest(
            call_id,
            tool,
            arguments,
            text,
            is_error=is_error,
            determinism=determinism,
            content=content,
            shape=shape,
        )

    def get(self, id: str) -> Record:
        """The record for an id or unique prefix."""
        return self._recorder.get(id)

    def replay(self, id: str, *, verify: bool = False) -> Result:
        """The exact stored result for an id or unique prefix. With `verify=True` a
        deterministic call is run again, the new observation recorded and the result
        saying whether it `changed`; nondeterministic calls and actions raise
        `NotReplayable`."""
        return self._calls.replay(id, verify=verify)

    async def areplay(self, id: str, *, verify: bool = False) -> Result:
        """`replay` for async tools (and for sync ones, from async code)."""
        return await self._calls.areplay(id, verify=verify)

    def on_rerun(self, tool: str, rerun: Rerun) -> None:
        """Register how `replay(id, verify=True)` re-runs a deterministic result of `tool`:
        `rerun(record)` returns the fresh `Result` (or an awaitable of it)."""
        self._calls.on_rerun(tool, rerun)

    def tokens(self, id: str) -> int:
        """The token count of a stored result, counted once and kept in the store."""
        return self._recorder.tokens(id)

    # -- continuity: the state document, checkpoints and staleness ------------------

    @property
    def stale_ids(self) -> set[str]:
        return self._continuity.stale_ids

    @property
    def stale_policy(self) -> StalePolicy:
        return self._continuity.stale_policy

    @stale_policy.setter
    def stale_policy(self, policy: StalePolicy) -> None:
        self._continuity.stale_policy = policy

    def outcome(self, id: str) -> Outcome | None:
        """What is known now of an Action's effect: its own outcome when the call said
        (completed, not_applied); for an unknown one, the outcome of its latest
        verification (a record whose `meta.verifies` names it), if any."""
        return self._continuity.outcome(id)

    def state(self, *, task: Task, document: StateDocument | None = None) -> StateDocument:
        """A state document pre-filled with what the session's records say exactly
        (queries run, artifacts, actions and their outcome, the newest observations),
        merged under `document` when a model wrote one, so that it cannot drop them."""
        return self._continuity.state(task, document)

    def checkpoint(self, document: StateDocument) -> Result:
        """Save the document (credentials in its URLs redacted, secret values masked)
        and pin what it cites for the kit's session and seven days at most after
        the last checkpoint that cited it: a model's citation never pins for ever."""
        return self._continuity.checkpoint(document)

    def recover(self, session: str | None = None) -> Recovery:
        """Restore the newest checkpoint (the one saved last, even when it was saved
        before too); what it refers to is stale until re-read."""
        return self._continuity.recover(session)

    def revalidate(self, ids: Iterable[str]) -> Revalidation:
        """Re-read the deterministic facts among `ids`; mark the rest stale. A record
        that is gone is listed in `stale`; a malformed or ambiguous id raises before
        anything is re-read or marked."""
        return self._continuity.revalidate(ids)

    def require_fresh(self, ids: Iterable[str]) -> None:
        """Before an action: raise `Stale` (or warn, by `stale_policy`) if any fact it
        depends on is marked stale or older than its max age."""
        self._continuity.require_fresh(ids)

    def mark_stale(self, ids: Iterable[str]) -> None:
        """Mark facts stale: an action that depends on them waits until they are re-read.
        Every id is resolved first: one that does not resolve raises, and none is marked."""
        self._continuity.mark_stale(ids)

    def unmark_stale(self, ids: Iterable[str]) -> None:
        """Take the stale mark off facts that have been re-read."""
        self._continuity.unmark_stale(ids)


def shown_record(kit: Toolkit, name: str, text: str) -> Record | None:
    """The record of the call of tool `name` that `text` (what `kit.handle` gave) shows.
    None when nothing was recorded (an unknown tool, arguments refused), when the record
    cannot be read, and for `replay_result`, whose text shows an earlier call."""
    if name == REPLAY:
        return None
    try:
        shown = kit.shown(text)
        return kit.get(shown) if shown is not None else None
    except AddressableError:
        return None


def failed(kit: Toolkit, name: str, text: str) -> bool:
    """Whether the call of tool `name` that gave `text` (through `kit.handle`) failed:
    `failed_with` the record it shows."""
    return failed_with(shown_record(kit, name, text), text)


def failed_with(record: Record | None, text: str) -> bool:
    """Whether a call failed, given the record `shown_record` found for it. The record
    says so, whatever the text (a tool that succeeded may return ``error: ...``, and a
    command that timed out shows its output); with no record, an ``error: ...`` text
    says so (refused before it ran, or `replay_result`'s own error)."""
    if record is not None:
        return record.status is Status.ERROR
    return text.startswith("error: ")
