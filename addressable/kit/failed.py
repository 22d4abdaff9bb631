"""Whether a call `kit.handle` ran failed, from the text it gave: one rule for the SDK
helpers (each marks a failed call in its own terms) and the MCP server (`is_error`),
while the model sees the same text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import AddressableError
from ..core.records import Record, Status
from ..tools.replay import NAME as REPLAY

if TYPE_CHECKING:
    from .toolkit import Toolkit


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
