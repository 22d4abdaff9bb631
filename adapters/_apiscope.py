"""What an Api adapter may do: the actions there are, which HTTP methods are writes, and
the `Scope` of origins, identities and actions a call must be within."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

import addressable as ad
from addressable.recording.argerrors import CheckedModel

from ._urls import check_url, origin

Action = Literal["read", "replay", "reversible-write", "write"]
WRITES = {
    "POST": "write",
    "DELETE": "write",
    "PUT": "reversible-write",
    "PATCH": "reversible-write",
}


class Scope(CheckedModel):
    """What an Api adapter may do: which origins, as which identities, which actions.
    A call outside it raises `ScopeError` and nothing is sent. "write" allows
    reversible writes too, and "read" the re-read of a recorded read
    (`replay(id, verify=True)`); "replay" alone allows only that re-read."""

    model_config = ConfigDict(frozen=True)

    origins: tuple[str, ...]
    identities: tuple[str, ...] | None = None  # None: every identity the adapter knows
    actions: frozenset[Action] = frozenset({"read", "replay"})

    def check(self, url: str, identity: str, action: Action) -> None:
        where = check_url(url)  # a URL that does not parse is an ArgumentError
        if where not in {origin(o) for o in self.origins}:
            raise ad.ScopeError(f"{where} is not an allowed origin; nothing was sent")
        if self.identities is not None and identity not in self.identities:
            raise ad.ScopeError(
                f"identity {ad.ids.quoted(identity)} is outside the scope; nothing was sent"
            )
        allowed = set(self.actions)
        if "write" in allowed:
            allowed.add("reversible-write")
        if "read" in allowed:  # a re-read is a read
            allowed.add("replay")
        if action not in allowed:
            raise ad.ScopeError(f"{action} is outside the scope; nothing was sent")
