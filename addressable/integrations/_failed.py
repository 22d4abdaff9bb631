"""Whether a call the SDK helpers ran failed: each SDK marks it in its own terms (the
tool runner's `is_error`, LangGraph's `status="error"`, an error on the Agents SDK's
span), while the model sees the same text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._errors import AddressableError
from .._models import Status
from .._replaytool import NAME as REPLAY

if TYPE_CHECKING:
    from .._toolkit import Toolkit


def failed(kit: Toolkit, name: str, text: str) -> bool:
    """Whether the text `kit.handle` gave for a call of tool `name` says the call failed:
    an ``error: ...`` text, unless it is what a tool that succeeded returned (the record
    it shows says so)."""
    if not text.startswith("error: "):
        return False
    shown = kit.shown(text) if name != REPLAY else None
    if shown is None:  # refused before it ran, or replay_result's own error
        return True
    try:
        return kit.get(shown).status is Status.ERROR
    except AddressableError:
        return True
