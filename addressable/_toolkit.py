"""The Toolkit: wraps an agent's tools so every call is recorded and addressable."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import math
import os
import reprlib
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar, Unpack, overload

if TYPE_CHECKING:
    from anthropic.types import ToolParam as AnthropicToolParam
    from openai.types.chat import ChatCompletionFunctionToolParam as ChatToolParam
    from openai.types.responses import FunctionToolParam as ResponsesToolParam

from ._continuity import (
    Recovery,
    Revalidation,
    StalePolicy,
    checkpoint,
    harness_state,
    recover,
    require_fresh,
    revalidate,
)
from ._errors import AddressableError, ArgumentError, NotReplayable, StoreError
from ._models import Determinism, Outcome, Record, Result, Status, aware
from ._modeltools import FunctionTool, ModelTool, definition, result_text
from ._payload import TEXT, encode_payload
from ._replaytool import ReplayTool
from ._secrets import Secrets
from ._spec import Call, KeyFn, ToolSpec
from ._state import StateDocument, Task, outcome_in
from ._stores import Store, open_store
from ._tokens import count_tokens
from .ids import (
    ID_LENGTH,
    action_id_of,
    canonical_args,
    check_prefix,
    content_hash,
    lone_surrogate,
    result_id,
)

Clock = Callable[[], datetime]
# The records made during one kit.handle() call, so that it knows which one it showed.
_RECORDED: contextvars.ContextVar[list[Record] | None] = contextvars.ContextVar(
    "addressable_recorded", default=None
)
Rerun = Callable[[Record], Any]  # gives a Result, or an awaitable of one
_SCALARS = frozenset({str, int, float, bool, type(None)})
F = TypeVar("F", bound=Callable[..., Any])


def utc_now() -> datetime:
    return datetime.now(UTC)


class RecordOptions(TypedDict, total=False):
    """What `Toolkit.record` takes beyond the call and its payload."""

    key: str | None  # the addressable key: a URL, `path@rev`, ...
    media_type: str  # of the payload; text/plain; charset=utf-8 when not given
    status: Status  # `error` when the tool raised
    error: str | None  # the exception, as "Type: message"
    outcome: Outcome | None  # of an Action
    idempotency_key: str | None  # sent with an Action, so that a retry is recognised
    max_age: timedelta | None  # how long the observation may be relied on
    meta: Mapping[str, Any] | None  # adapter facts: final URL, ETag, status code


class Toolkit:
    """Records every call of the tools it wraps in a store, and replays them by id.

    `session` groups the calls of one agent run (a fresh name is made when none is
    given). `clock` and `nonce` can be injected for deterministic tests; a clock must
    return timezone-aware datetimes: it is called once here, and a naive time, here or
    later, is refused with `ArgumentError` naming it. `stale_policy` says whether an
    action on stale facts is refused (the default) or only warned of.
    """

    def __init__(
        self,
        store: Store | None = None,
        *,
        session: str | None = None,
        clock: Clock | None = None,
        nonce: Callable[[], bytes] | None = None,
        stale_policy: StalePolicy = "refuse",
    ) -> None:
        self.store: Store = store if store is not None else open_store()
        self.clock: Clock = clock or utc_now
        started = _aware(self.clock())  # a clock giving naive times fails here, not mid-run
        self.session = session or f"s-{started:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
        self._nonce = nonce or (lambda: os.urandom(16))
        self.secrets = Secrets()
        self._reruns: dict[str, Rerun] = {}
        self._model_tools: dict[str, ModelTool] = {}
        self._shown: dict[str, str] = {}  # hash of a text handle() returned -> record id
        self.stale_ids: set[str] = set()
        self.stale_policy: StalePolicy = stale_policy
        self.register(ReplayTool(self))

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

        The arguments (JSON, UTF-8 text) and the key (a str or None, UTF-8 text) are
        checked before the function runs: a bad one raises `ArgumentError` and the
        function never runs. A return value that cannot be stored (not JSON, NaN, a lone
        surrogate) is recorded as an error, an action's outcome `unknown`, and then
        raises `ArgumentError` naming the record: a call that ran is never unrecorded.

        The tool's JSON Schema is pydantic's, from the annotations (enums, models,
        `Annotated[..., Field(description=...)]`, defaults) and the docstring's `Args:`.
        Arguments are validated before the function runs: a model's strictly, as JSON
        (`kit.handle`: a string where an int is wanted is refused); a Python call's as
        `pydantic.validate_call` does (lax: "7" becomes 7, a dict a model). A value that
        does not fit raises `ArgumentError` naming it. The function gets the validated
        values, and the record the same values as JSON (an enum by its value, a model
        as an object), so the same call gets the same id however it was spelt.
        """
        # Where the tool is defined: its annotations may name classes local to it.
        caller = sys._getframe(1)
        namespace = dict(caller.f_locals) if caller.f_locals is not caller.f_globals else None

        def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
            spec = ToolSpec(
                name=name or f.__name__,
                fn=f,
                determinism=Determinism(determinism),
                key=key,
                max_age=max_age,
                media_type=media_type,
                signature=inspect.signature(f),
                description=inspect.getdoc(f) or "",
                namespace=namespace,
            )
            maker = self._async_wrapper if spec.is_async else self._sync_wrapper
            wrapped = functools.wraps(f)(maker(spec))
            self.register(FunctionTool(spec, wrapped))
            if spec.is_async:
                self.on_rerun(spec.name, lambda r: self._arun(spec, *spec.unbind(r.args), r.key))
            else:
                self.on_rerun(spec.name, lambda r: self._run(spec, *spec.unbind(r.args), r.key))
            return wrapped

        return wrap(fn) if fn is not None else wrap

    def _sync_wrapper(self, spec: ToolSpec) -> Callable[..., Result]:
        def call(*args: Any, **kwargs: Any) -> Result:
            return self._run(spec, args, kwargs)

        return call

    def _async_wrapper(self, spec: ToolSpec) -> Callable[..., Awaitable[Result]]:
        async def call(*args: Any, **kwargs: Any) -> Result:
            return await self._arun(spec, args, kwargs)

        return call

    _NO_KEY: Any = object()  # marks "compute the key from the arguments"

    def _run(
        self, spec: ToolSpec, args: Sequence[Any], kwargs: Mapping[str, Any], key: Any = _NO_KEY
    ) -> Result:
        call = self._prepare(spec, args, kwargs, key)
        try:
            value = spec.fn(*call.args, **call.kwargs)
        except Exception as exc:
            self._record_raise(call, exc)
            raise
        return self._record_return(call, value)

    async def _arun(
        self, spec: ToolSpec, args: Sequence[Any], kwargs: Mapping[str, Any], key: Any = _NO_KEY
    ) -> Result:
        call = self._prepare(spec, args, kwargs, key)
        try:
            value = spec.fn(*call.args, **call.kwargs)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            self._record_raise(call, exc)
            raise
        return self._record_return(call, value)

    def _prepare(
        self, spec: ToolSpec, args: Sequence[Any], kwargs: Mapping[str, Any], key: Any
    ) -> Call:
        arguments = spec.bind(args, kwargs)
        checked = spec.check(arguments)  # None: plain values of their types, as given
        if checked is not None:
            values, arguments = checked
            args, kwargs = spec.unbind(values)
        # Canonical before the call: arguments that are not JSON fail before it runs.
        args_json = canonical_args(arguments)
        if key is self._NO_KEY:
            key = spec.key(*args, **kwargs) if spec.key else None
        if key is not None and (type(key) is not str or not key.isascii()):
            key = _checked_key(spec.name, key)  # before the call: a bad key never runs it
        return Call(spec, arguments, args_json, key, args, kwargs)

    def _record_return(self, call: Call, value: Any) -> Result:
        spec = call.spec
        options: RecordOptions = {"key": call.key, "max_age": spec.max_age}
        try:
            payload, media_type = encode_payload(value, spec.media_type)
            outcome = Outcome.COMPLETED if spec.determinism is Determinism.SIDE_EFFECT else None
            stored: RecordOptions = {**options, "media_type": media_type, "outcome": outcome}
            return self._store(
                spec.name, call.arguments, call.args_json, payload, spec.determinism, stored
            )
        except StoreError:
            raise  # the store itself failed: a second write would fail the same way
        except Exception as exc:  # the call ran: it is recorded, as an error, whatever it gave
            raise self._unstored(
                spec.name, call.arguments, None, spec.determinism, options, exc, "the return value"
            ) from exc

    def _record_raise(self, call: Call, exc: BaseException) -> Result:
        spec = call.spec
        # A side effect that raised may or may not have happened: never guess.
        outcome = Outcome.UNKNOWN if spec.determinism is Determinism.SIDE_EFFECT else None
        options: RecordOptions = {"key": call.key, "outcome": outcome, "max_age": spec.max_age}
        try:
            return self._failure(
                spec.name, call.arguments, call.args_json, exc, spec.determinism, options
            )
        except StoreError:
            raise
        except Exception as failed:
            what = "the record of its error"
            raise self._unstored(
                spec.name, call.arguments, None, spec.determinism, options, failed, what
            ) from failed

    # -- recording -------------------------------------------------------------------

    def record(
        self,
        tool: str,
        args: Mapping[str, Any],
        payload: bytes,
        *,
        determinism: Determinism | str,
        **options: Unpack[RecordOptions],
    ) -> Result:
        """Store one observation of a tool call and return it as a `Result`.

        The low-level entry for adapters that build the payload themselves: `payload`
        is the exact bytes, `args` must be JSON (they are part of the id). `options`
        are the `RecordOptions`: key, media_type, status, error, outcome,
        idempotency_key, max_age and meta. An action (the change has happened) whose
        fields cannot be stored is still recorded, with them written as text, status
        error and outcome `unknown`; then `ArgumentError` names that record.
        """
        try:
            return self._store(tool, args, canonical_args(args), payload, determinism, options)
        except StoreError:
            raise
        except Exception as exc:
            if determinism == Determinism.SIDE_EFFECT:
                # An action has happened: it is recorded, as an error, whatever it was given.
                what = "the arguments or options"
                raise self._unstored(tool, args, payload, determinism, options, exc, what) from exc
            if isinstance(exc, UnicodeError):
                raise ArgumentError(
                    f"{tool!r}: a field cannot be stored: {_describe(exc)}"
                ) from exc
            raise

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
        try:
            return self._failure(tool, args, canonical_args(args), exc, determinism, options)
        except StoreError:
            raise
        except Exception as failed:
            if determinism == Determinism.SIDE_EFFECT:
                what = "the arguments or options"
                raise self._unstored(
                    tool, args, None, determinism, options, failed, what
                ) from failed
            if isinstance(failed, UnicodeError):
                raise ArgumentError(
                    f"{tool!r}: a field cannot be stored: {_describe(failed)}"
                ) from failed
            raise

    def _failure(
        self,
        tool: str,
        args: Mapping[str, Any],
        args_json: bytes,
        exc: BaseException,
        determinism: Determinism | str,
        options: RecordOptions,
    ) -> Result:
        try:
            message = f"{type(exc).__name__}: {exc}"
            payload = message.encode("utf-8")
        except Exception:  # an unprintable exception, or a lone surrogate in its text
            message = _escaped(f"{type(exc).__name__}: {_describe(exc)}")
            payload = message.encode("utf-8")
        failed: RecordOptions = {
            **options,
            "media_type": TEXT,
            "status": Status.ERROR,
            "error": message,
        }
        return self._store(tool, args, args_json, payload, determinism, failed)

    def _unstored(
        self,
        tool: str,
        args: Mapping[str, Any],
        payload: bytes | None,
        determinism: Determinism | str,
        options: RecordOptions,
        exc: Exception,
        what: str,
    ) -> ArgumentError:
        """After a call has run and `what` it gave cannot be stored: record the call as
        an error (an action with outcome `unknown`) with every field made storable, and
        return the error for the caller to raise. Only the failure path comes here."""
        detail = _describe(exc)
        action = determinism == Determinism.SIDE_EFFECT
        error = f"{type(exc).__name__}: {what} could not be stored: {detail}"
        meta, max_age = options.get("meta"), options.get("max_age")
        media_type = options.get("media_type") if payload is not None else None
        fields: RecordOptions = {
            "key": _storable_text(options.get("key")),
            "media_type": _storable_text(media_type) or TEXT,
            "status": Status.ERROR,
            "error": error,
            "outcome": Outcome.UNKNOWN if action else None,
            "idempotency_key": _storable_text(options.get("idempotency_key")),
            "max_age": max_age if isinstance(max_age, timedelta) else None,
            "meta": _storable(meta) if isinstance(meta, Mapping) else None,
        }
        safe_args: dict[str, Any] = _storable(args) if isinstance(args, Mapping) else {}
        body = error.encode("utf-8") if payload is None else payload
        try:
            now = _aware(self.clock())
        except Exception:  # the clock is what failed: the record still gets a true time
            now = utc_now()
        try:
            result = self._store(
                _escaped(str(tool)),
                safe_args,
                canonical_args(safe_args),
                body,
                determinism,
                fields,
                at=now,
            )
        except Exception as again:
            return ArgumentError(
                f"{tool!r}: {what} could not be stored ({detail}), "
                f"nor could a record of the call ({_describe(again)})"
            )
        ran = "the action ran and is" if action else "the call ran and is"
        status = "status error, outcome unknown" if action else "status error"
        return ArgumentError(
            f"{tool!r}: {what} could not be stored ({detail}); "
            f"{ran} recorded as {result.id} ({status})"
        )

    def _store(
        self,
        tool: str,
        args: Mapping[str, Any],
        args_json: bytes,
        payload: bytes,
        determinism: Determinism | str,
        options: RecordOptions,
        *,
        at: datetime | None = None,
    ) -> Result:
        key = options.get("key")
        if type(determinism) is not Determinism:
            determinism = Determinism(determinism)
        if self.secrets:
            # Credentials never reach the store: every value the toolkit has resolved is
            # masked, as written or encoded, in every field that can carry text.
            payload = self.secrets.mask_bytes(payload)
            masked = self.secrets.mask_json(args)
            if masked is not args:
                args, args_json = masked, canonical_args(masked)
            options = self.secrets.mask_json(options)  # key, error, media type, meta, ...
            key = options.get("key")
        digest = content_hash(payload)
        nonce = None
        if determinism is Determinism.SIDE_EFFECT:
            nonce = self._nonce().hex()
            rid = action_id_of(tool, args_json, key, digest, nonce)
        else:
            rid = result_id(tool, args_json, key, digest)
        now = self.clock() if at is None else at
        if type(now) is not datetime or now.tzinfo is None:
            now = _aware(now)  # a naive time is refused, never guessed to be UTC
        # Only the options given (and not None) are passed: fewer fields to validate.
        fields: dict[str, Any] = {"media_type": TEXT}
        fields.update((k, v) for k, v in options.items() if v is not None and k != "key")
        fields.update(
            id=rid,
            tool=tool,
            args=_json_args(args, args_json),
            key=key,
            determinism=determinism,
            content_hash=digest,
            size=len(payload),
            observed_at=now,
            session=self.session,
        )
        if nonce is not None:
            fields["nonce"] = nonce
        record = Record.model_validate(fields)
        self.store.put(record, payload)
        made = _RECORDED.get()
        if made is not None:
            made.append(record)
        return Result(record=record, payload=payload)

    # -- reading back ----------------------------------------------------------------

    def get(self, id: str) -> Record:
        """The record for an id or unique prefix."""
        text = check_prefix(id)
        # A full id needs no resolving: `get` itself says NotFound or Expired.
        return self.store.get(text if len(text) == ID_LENGTH else self.store.resolve(text))

    def replay(self, id: str, *, verify: bool = False) -> Result:
        """The exact stored result for an id or unique prefix.

        With `verify=True` a deterministic call is run again (a wrapped function through
        its wrapper; an adapter its own way, such as a conditional GET): the new
        observation is recorded (a re-run that raises is recorded and re-raised) and the
        result says whether it `changed`. Nondeterministic calls and actions are refused
        with `NotReplayable`.
        """
        record = self.get(id)
        if not verify:
            return Result(record=record, payload=self.store.read(record), replayed=True)
        fresh = self._rerun_of(record)(record)
        if inspect.isawaitable(fresh):
            fresh.close()  # type: ignore[attr-defined]
            raise NotReplayable(
                f"tool {record.tool!r} is async: "
                f"use `await kit.areplay({record.id!r}, verify=True)`"
            )
        return _compared(fresh, record)

    async def areplay(self, id: str, *, verify: bool = False) -> Result:
        """`replay` for async tools (and for sync ones, from async code)."""
        record = self.get(id)
        if not verify:
            return Result(record=record, payload=self.store.read(record), replayed=True)
        fresh = self._rerun_of(record)(record)
        if inspect.isawaitable(fresh):
            fresh = await fresh
        return _compared(fresh, record)

    def on_rerun(self, tool: str, rerun: Rerun) -> None:
        """Register how `replay(id, verify=True)` re-runs a deterministic result of `tool`:
        `rerun(record)` returns the fresh `Result` (or an awaitable of it)."""
        self._reruns[tool] = rerun

    def _rerun_of(self, record: Record) -> Rerun:
        if record.determinism is Determinism.SIDE_EFFECT:
            raise NotReplayable(
                f"result {record.id} is an action of {record.tool!r} (a side effect): actions "
                "are never re-run; replay it without verify= to see what was recorded"
            )
        if record.determinism is Determinism.NONDETERMINISTIC:
            raise NotReplayable(
                f"result {record.id} of {record.tool!r} is nondeterministic: re-running it would "
                "not reproduce it; replay it without verify= to get the stored payload"
            )
        rerun = self._reruns.get(record.tool)
        if rerun is None:
            raise NotReplayable(
                f"cannot re-run result {record.id}: tool {record.tool!r} is not registered "
                "with this Toolkit; wrap it with kit.tool(...) or create its adapter first"
            )
        return rerun

    # -- the model's side --------------------------------------------------------------

    def register(self, tool: ModelTool) -> None:
        """Offer a tool to the model: `tools()` lists it, `handle()` runs it."""
        if tool.name in self._model_tools and tool.name != ReplayTool.name:
            existing = self._model_tools[tool.name]
            if existing is not tool and not isinstance(existing, FunctionTool):
                raise ArgumentError(f"a tool named {tool.name!r} is already registered")
        self._model_tools[tool.name] = tool

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
        token = _RECORDED.set(made)
        try:
            text = self._text(name, lambda: tool.handle(parsed))
        finally:
            _RECORDED.reset(token)
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
        token = _RECORDED.set(made)
        try:
            ahandle = getattr(tool, "ahandle", None)  # a tool's own async path, if it has one
            if ahandle is not None and inspect.iscoroutinefunction(ahandle):
                try:
                    text = self.secrets.mask(await ahandle(parsed))
                except Exception as exc:
                    text = self._failure_text(name, exc)
            else:
                text = await asyncio.to_thread(self._text, name, lambda: tool.handle(parsed))
        finally:
            _RECORDED.reset(token)
        return self._remember(name, text, made)

    def _callable(
        self, name: str, arguments: Mapping[str, Any] | str | None
    ) -> tuple[ModelTool, dict[str, Any]] | str:
        tool = self._model_tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._model_tools))
            return f"error: there is no tool named {name!r}; the tools are: {known}"
        parsed = _parse_arguments(arguments)
        return parsed if isinstance(parsed, str) else (tool, parsed)

    def _text(self, name: str, run: Callable[[], str]) -> str:
        try:
            return self.secrets.mask(run())
        except Exception as exc:
            return self._failure_text(name, exc)

    def _failure_text(self, name: str, exc: Exception) -> str:
        if isinstance(exc, TypeError):
            return self.secrets.mask(f"error: the arguments do not fit {name}: {exc}")
        return self.secrets.mask(f"error: {type(exc).__name__}: {exc}")

    def _remember(self, name: str, text: str, made: list[Record]) -> str:
        # Remember which record this text shows, so that compaction can point a stub
        # at it; the call's own record is the first one made under the tool's name.
        primary = next((r for r in made if r.tool == name), made[0] if made else None)
        if primary is not None and name != ReplayTool.name:
            digest = content_hash(text.encode("utf-8"))
            if self._shown.get(digest) != primary.id:
                self._shown[digest] = primary.id
                self.store.set_shown(digest, primary.id)  # for compaction in any process
        return text

    def shown(self, text: str) -> str | None:
        """The id of the record a text `handle` returned shows, if this kit, or another
        on the same store, showed it."""
        digest = content_hash(text.encode("utf-8"))
        return self._shown.get(digest) or self.store.shown(digest)

    def has_renderer(self, tool: str) -> bool:
        """Whether `tool` shows its results its own way (see `render`)."""
        return callable(getattr(self._model_tools.get(tool), "render", None))

    def render(self, result: Result) -> str:
        """The text the model is shown for a result: its tool's own rendering (a page's
        readable text, a search's hit list), else the payload as text."""
        if "tool_call_id" in result.record.meta:  # ingested: shown exactly as it was
            return result.text
        tool = self._model_tools.get(result.record.tool)
        render = getattr(tool, "render", None)
        return str(render(result)) if callable(render) else result_text(result)

    def ingest(
        self,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        text: str,
        *,
        is_error: bool = False,
        determinism: Determinism | str = Determinism.NONDETERMINISTIC,
    ) -> Result:
        """Store a tool result this kit did not make (as found in a message list),
        keyed by its tool-call id, so that it too can be evicted and replayed. Where it
        came from is unknown, so it is a Claim unless `determinism` says otherwise.
        Ingesting the same result again (a list compacted twice) finds the first record
        and adds no observation: the result was not seen again, only read again."""
        key = f"call:{call_id}"
        payload = text.encode("utf-8")
        if Determinism(determinism) is not Determinism.SIDE_EFFECT:
            known = result_id(tool, canonical_args(arguments), key, content_hash(payload))
            try:
                record = self.store.get(known)
            except AddressableError:
                pass  # not there yet (or expired): store it below
            else:
                return Result(record=record, payload=self.store.read(record))
        options: RecordOptions = {"key": key, "meta": {"tool_call_id": call_id}}
        if is_error:
            options["status"] = Status.ERROR
            options["error"] = text.strip().splitlines()[0][:200] if text.strip() else "error"
        return self.record(tool, arguments, payload, determinism=determinism, **options)

    def outcome(self, id: str) -> Outcome | None:
        """What is known now of an Action's effect: the outcome of its latest
        verification (a record whose `meta.verifies` names it), else its own."""
        return outcome_in(self.store, self.get(id).id)

    # -- continuity: the state document, checkpoints, staleness ------------------------

    def state(self, *, task: Task, document: StateDocument | None = None) -> StateDocument:
        """A state document pre-filled with what the session's records say exactly
        (queries run, artifacts, actions and their outcome, the newest observations),
        merged under `document` when a model wrote one, so that it cannot drop them."""
        return harness_state(self, task, document)

    def checkpoint(self, document: StateDocument) -> Result:
        """Save the document and pin what it refers to."""
        return checkpoint(self, document)

    def recover(self, session: str | None = None) -> Recovery:
        """Restore the newest checkpoint; what it refers to is stale until re-read."""
        return recover(self, session)

    def revalidate(self, ids: Iterable[str]) -> Revalidation:
        """Re-read the deterministic facts among `ids`; mark the rest stale."""
        return revalidate(self, ids)

    def require_fresh(self, ids: Iterable[str]) -> None:
        """Before an action: raise `Stale` (or warn, by `stale_policy`) if any fact it
        depends on is marked stale or older than its max age."""
        require_fresh(self, ids, self.stale_policy)

    def mark_stale(self, ids: Iterable[str]) -> None:
        self.stale_ids.update(self.store.resolve(i) for i in ids)

    def unmark_stale(self, ids: Iterable[str]) -> None:
        self.stale_ids.difference_update(self.store.resolve(i) for i in ids)

    def tokens(self, id: str) -> int:
        """The token count of a stored result, counted once and kept in the store."""
        record = self.get(id)
        if record.tokens is None:
            n = count_tokens(self.store.read(record).decode("utf-8", errors="replace"))
            self.store.set_tokens(record.content_hash, n)
            return n
        return record.tokens


def _parse_arguments(arguments: Mapping[str, Any] | str | None) -> dict[str, Any] | str:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            return f"error: the arguments are not valid JSON ({exc}); send a JSON object"
    if not isinstance(arguments, Mapping):
        return "error: the arguments must be a JSON object"
    return dict(arguments)


def _aware(value: object) -> datetime:
    """`value` if it is a timezone-aware datetime, else `ArgumentError` naming it."""
    return aware(value, "the Toolkit's clock")


def _checked_key(tool: str, key: object) -> str:
    """The key a key function gave, or `ArgumentError` if it is not UTF-8 text."""
    if not isinstance(key, str):
        raise ArgumentError(
            f"the key function of {tool!r} returned {reprlib.repr(key)} of type "
            f"{type(key).__name__}: a key is a str, or None for no key"
        )
    found = lone_surrogate(key, f"the key of {tool!r}")
    if found:
        raise ArgumentError(found)
    return str(key)


def _describe(exc: BaseException) -> str:
    """An exception's message on one line, whatever its text holds."""
    try:
        text = str(exc)
    except Exception:
        text = f"<{type(exc).__name__} whose message cannot be shown>"
    return _escaped(" ".join(text.split()))


def _escaped(text: str) -> str:
    """`text` with any lone surrogate written as its escape (\\ud800), so it is UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _storable_text(value: object) -> str | None:
    if value is None:
        return None
    return _escaped(value if isinstance(value, str) else repr(value))


def _storable(value: Any, depth: int = 0) -> Any:
    """A JSON value that stands for `value`: what is not JSON (objects, NaN, lone
    surrogates, non-string keys, cycles) is written as its text."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return _escaped(value)
    if depth < 32 and isinstance(value, Mapping):
        return {_escaped(str(k)): _storable(v, depth + 1) for k, v in value.items()}
    if depth < 32 and isinstance(value, list | tuple):
        return [_storable(v, depth + 1) for v in value]
    return _escaped(reprlib.repr(value))


def _json_args(args: Mapping[str, Any], args_json: bytes) -> dict[str, Any]:
    """The arguments as a reader of the canonical JSON sees them (tuples become lists)."""
    if all(type(v) in _SCALARS for v in args.values()):
        return dict(args)  # already plain JSON values: no need to parse them back
    parsed: dict[str, Any] = json.loads(args_json)
    return parsed


def _compared(fresh: Result, previous: Record) -> Result:
    changed = (
        fresh.record.content_hash != previous.content_hash
        or fresh.record.status is not previous.status
    )
    return fresh.model_copy(update={"changed": changed, "previous_id": previous.id})
