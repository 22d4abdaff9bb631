"""The recording side of `Toolkit`: record, ingest, read back and replay.

Each is passed to the kit's `Recorder` or `Calls`; a base class of its own keeps the
facade's module to what the kit composes and wraps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from ..core.records import Determinism, Record, Result
from ..recording.calls import Calls, Rerun
from ..recording.recorder import Recorder, RecordOptions

__all__ = ["RecordingFacade"]


class RecordingFacade:
    """What a kit offers to record calls and read them back; the kit sets `recording.recorder`
    and `recording.calls`."""

    _recorder: Recorder
    _calls: Calls

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
    ) -> Result:
        """Store a tool result this kit did not make (as found in a message list), keyed
        by its tool-call id, so that it too can be evicted and replayed: a Claim unless
        `determinism` says otherwise. Ingested again, it adds no observation."""
        return self._recorder.ingest(
            call_id, tool, arguments, text, is_error=is_error, determinism=determinism
        )

    # -- reading back ----------------------------------------------------------------

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
