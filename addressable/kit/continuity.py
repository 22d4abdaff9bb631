"""The continuity side of `Toolkit`: the state document, checkpoints and staleness.

Each is passed to the kit's `Continuity`; a base class of its own keeps the facade's
module to what the kit composes and wraps.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.records import Outcome, Result
from ..state.continuity import Continuity, Recovery, Revalidation, StalePolicy
from ..state.document import StateDocument
from ..state.parts import Task

__all__ = ["ContinuityFacade"]


class ContinuityFacade:
    """What a kit offers to keep the work going across compactions and restarts; the
    kit sets `state.continuity`."""

    _continuity: Continuity

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
