"""What compaction needs of the kit, as a protocol: `ad.Toolkit` is one, and compaction
does not import it (it sits above)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, Unpack, runtime_checkable

from ..core.records import Determinism, Outcome, Record, Result
from ..core.secrets import Secrets
from ..recording.recorder import Clock, RecordOptions
from ..store import Store


@runtime_checkable
class Toolkit(Protocol):
    """What compaction needs of the kit: the store, recording and the tools' record of
    what was shown. `ad.Toolkit` is one; compaction does not import it (it sits above)."""

    @property
    def store(self) -> Store: ...

    @property
    def session(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def secrets(self) -> Secrets: ...

    def get(self, id: str) -> Record: ...

    def record(
        self,
        tool: str,
        args: Mapping[str, Any],
        payload: bytes,
        *,
        determinism: Determinism | str,
        **options: Unpack[RecordOptions],
    ) -> Result: ...

    def ingest(
        self,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        text: str,
        *,
        is_error: bool = False,
        determinism: Determinism | str = Determinism.NONDETERMINISTIC,
    ) -> Result: ...

    def shown(self, text: str) -> str | None: ...

    def outcome(self, id: str) -> Outcome | None: ...
