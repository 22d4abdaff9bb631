"""The wrapped-call machinery: a wrapped function's call checked, run and recorded;
and replay by id, re-running a deterministic call to verify it."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import reprlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from ..core.errors import ArgumentError, NotReplayable, StoreError
from ..core.frozen import thawed
from ..core.ids import canonical_args, lone_surrogate
from ..core.payload import BINARY, encode_payload
from ..core.records import Determinism, Outcome, Record, Result, stored_result
from .recorder import Recorder, RecordOptions
from .spec import ToolSpec

Rerun = Callable[[Record], Any]  # gives a Result, or an awaitable of one
# A call on its way to the store: its arguments as recorded (the validated values, as
# JSON), their canonical JSON, its key, and the arguments the function is called with.
_Call = tuple[dict[str, Any], bytes, str | None, Sequence[Any], Mapping[str, Any]]

T = TypeVar("T")


def run_to_end(awaitable: Awaitable[T], refused: Callable[[], Exception]) -> T:
    """Run `awaitable` from sync code, on an event loop of its own (as `asyncio.run`):
    how `kit.handle` and `kit.replay(verify=True)` run an async tool. Where a loop runs in
    this thread already, the sync caller would block it: `awaitable` is closed unrun and
    `refused()` is raised, naming the async form to use."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(awaitable))
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()  # no "never awaited" warning for a coroutine that was not to run
    raise refused()


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


class Calls:
    """Runs wrapped functions and records each call through `recorder`; replays
    results, re-running deterministic ones with the reruns registered for their tool."""

    def __init__(self, recorder: Recorder) -> None:
        self._rec = recorder
        self._reruns: dict[str, Rerun] = {}

    def wrap(self, spec: ToolSpec) -> Callable[..., Any]:
        """The function that runs `spec` and records it; `replay(verify=True)` re-runs
        its results the same way."""
        if spec.is_async:
            self.on_rerun(
                spec.name, lambda r: self._arun(spec, *spec.unbind(thawed(r.args)), r.key)
            )
            return self._async_wrapper(spec)
        self.on_rerun(spec.name, lambda r: self._run(spec, *spec.unbind(thawed(r.args)), r.key))
        return self._sync_wrapper(spec)

    def _sync_wrapper(self, spec: ToolSpec) -> Callable[..., Result]:
        def call(*args: Any, **kwargs: Any) -> Result:
            return self._run(spec, args, kwargs)

        return call

    def _async_wrapper(self, spec: ToolSpec) -> Callable[..., Awaitable[Result]]:
        async def call(*args: Any, **kwargs: Any) -> Result:
            return await self._arun(spec, args, kwargs)

        return call

    _NO_KEY: Any = object()  # marks "compute the key from the arguments"

    def validated_caller(self, spec: ToolSpec) -> Callable[..., Any]:
        """What `wrap` gives, for arguments `spec.parse` validated already (a model's):
        they are recorded and passed on as they are, not validated again."""
        if spec.is_async:

            async def acall(*args: Any, **kwargs: Any) -> Result:
                return await self._arun(spec, args, kwargs, validated=True)

            return acall

        def call(*args: Any, **kwargs: Any) -> Result:
            return self._run(spec, args, kwargs, validated=True)

        return call

    def _run(
        self,
        spec: ToolSpec,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        key: Any = _NO_KEY,
        validated: bool = False,
    ) -> Result:
        arguments, args_json, key, args, kwargs = self._prepare(spec, args, kwargs, key, validated)
        try:
            value = spec.fn(*args, **kwargs)
        except BaseException as exc:
            self._record_stopped(spec, arguments, args_json, key, exc)
            raise
        return self._record_return(spec, arguments, args_json, key, value)

    async def _arun(
        self,
        spec: ToolSpec,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        key: Any = _NO_KEY,
        validated: bool = False,
    ) -> Result:
        arguments, args_json, key, args, kwargs = self._prepare(spec, args, kwargs, key, validated)
        try:
            value = spec.fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
        except BaseException as exc:
            self._record_stopped(spec, arguments, args_json, key, exc)
            raise
        return self._record_return(spec, arguments, args_json, key, value)

    def _prepare(
        self,
        spec: ToolSpec,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        key: Any,
        validated: bool = False,
    ) -> _Call:
        """The call's arguments as recorded, their canonical JSON and its key, and the
        arguments the function gets."""
        arguments, args, kwargs = spec.arguments(args, kwargs, validated)
        # Canonical before the call: arguments that are not JSON fail before it runs.
        args_json = canonical_args(arguments)
        if key is self._NO_KEY:
            key = _key_of(spec, args, kwargs) if spec.key else None
        if key is not None and (type(key) is not str or not key.isascii()):
            key = _checked_key(spec.name, key)  # before the call: a bad key never runs it
        return arguments, args_json, key, args, kwargs

    def _record_return(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        args_json: bytes,
        key: str | None,
        value: Any,
    ) -> Result:
        try:
            if type(value) is bytes:  # the common case, as `encode_payload` gives it
                payload, media_type = value, spec.media_type or BINARY
            else:
                payload, media_type = encode_payload(value, spec.media_type)
            outcome = Outcome.COMPLETED if spec.determinism is Determinism.SIDE_EFFECT else None
            stored: RecordOptions = {
                "key": key,
                "max_age": spec.max_age,
                "media_type": media_type,
                "outcome": outcome,
            }
            return self._rec.write(
                spec.name, arguments, args_json, payload, spec.determinism, stored
            )
        except StoreError:
            raise  # the store itself failed: a second write would fail the same way
        except Exception as exc:  # the call ran: it is recorded, as an error, whatever it gave
            options: RecordOptions = {"key": key, "max_age": spec.max_age}
            raise self._rec.write_unstored(
                spec.name, arguments, None, spec.determinism, options, exc, "the return value"
            ) from exc

    def _record_stopped(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        args_json: bytes,
        key: str | None,
        exc: BaseException,
    ) -> None:
        """Record a call that raised. One interrupted (Ctrl-C, a cancelled task) is
        recorded only if it is a side effect, which may have begun (an Action is never
        lost), and then without letting a failure to record it stop the interrupt."""
        if isinstance(exc, Exception):
            self._record_raise(spec, arguments, args_json, key, exc)
        elif spec.determinism is Determinism.SIDE_EFFECT:
            with contextlib.suppress(Exception):
                self._record_raise(spec, arguments, args_json, key, exc)

    def _record_raise(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        args_json: bytes,
        key: str | None,
        exc: BaseException,
    ) -> Result:
        # A side effect that raised may or may not have happened: never guess.
        outcome = Outcome.UNKNOWN if spec.determinism is Determinism.SIDE_EFFECT else None
        options: RecordOptions = {"key": key, "outcome": outcome, "max_age": spec.max_age}
        try:
            return self._rec.write_failure(
                spec.name, arguments, args_json, exc, spec.determinism, options
            )
        except StoreError:
            raise
        except Exception as failed:
            what = "the record of its error"
            raise self._rec.write_unstored(
                spec.name, arguments, None, spec.determinism, options, failed, what
            ) from failed

    def replay(self, id: str, *, verify: bool = False) -> Result:
        """The exact stored result for an id or unique prefix.

        With `verify=True` a deterministic call is run again (a wrapped function through
        its wrapper; an adapter its own way, such as a conditional GET): the new
        observation is recorded (a re-run that raises is recorded and re-raised) and the
        result says whether it `changed`. An async tool is run on a loop of its own (see
        `run_to_end`). Nondeterministic calls and actions are refused with
        `NotReplayable`.
        """
        if not verify:
            record, payload = self._rec.fetch(id)
            return stored_result(record, payload, True)
        record = self._rec.get(id)
        fresh = self.rerun_of(record)(record)
        if inspect.isawaitable(fresh):
            fresh = run_to_end(
                fresh,
                lambda: NotReplayable(
                    f"tool {record.tool!r} is async and an event loop runs here: "
                    f"use `await kit.areplay({record.id!r}, verify=True)`"
                ),
            )
        return _compared(fresh, record)

    async def areplay(self, id: str, *, verify: bool = False) -> Result:
        """`Toolkit.areplay` says what it does."""
        if not verify:
            record, payload = self._rec.fetch(id)
            return stored_result(record, payload, True)
        record = self._rec.get(id)
        fresh = self.rerun_of(record)(record)
        if inspect.isawaitable(fresh):
            fresh = await fresh
        return _compared(fresh, record)

    def on_rerun(self, tool: str, rerun: Rerun) -> None:
        """`Toolkit.on_rerun` says what it does."""
        self._reruns[tool] = rerun

    def rerun_of(self, record: Record) -> Rerun:
        if record.determinism is Determinism.SIDE_EFFECT:
            raise NotReplayable(
                f"result {record.id} is an action of {record.tool!r} (a side effect): actions "
                "are never re-run; replay it without verify= to see what was recorded",
                "action",
            )
        if record.determinism is Determinism.NONDETERMINISTIC:
            raise NotReplayable(
                f"result {record.id} of {record.tool!r} is nondeterministic: re-running it would "
                "not reproduce it; replay it without verify= to get the stored payload",
                "nondeterministic",
            )
        rerun = self._reruns.get(record.tool)
        if rerun is None:
            raise NotReplayable(
                f"cannot re-run result {record.id}: tool {record.tool!r} is not registered "
                "with this Toolkit; wrap it with kit.tool(...) or create its adapter first",
                "unregistered",
            )
        return rerun


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


def _compared(fresh: Result, previous: Record) -> Result:
    changed = (
        fresh.record.content_hash != previous.content_hash
        or fresh.record.status is not previous.status
    )
    return fresh.model_copy(update={"changed": changed, "previous_id": previous.id})


def _key_of(spec: ToolSpec, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    """The key `spec.key` gives for a call's arguments (as the function gets them); an
    `ArgumentError` naming the key function when it cannot give one, before the call."""
    assert spec.key is not None
    try:
        return spec.key(*args, **kwargs)
    except Exception as exc:
        raise ArgumentError(
            f"{spec.name}: its key function failed on these arguments, so it was not "
            f"called: {type(exc).__name__}: {exc}"
        ) from exc
