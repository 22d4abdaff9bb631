"""The state document of the ``addressable+state`` strategy: the one a model would
write at a turn, from the session's findings, as the agent at that turn could know it."""

from __future__ import annotations

from .. import StateDocument, Toolkit, compact_state
from ..messages import Conversation
from ..state import Finding, OpenItem
from .needs import Needs
from .sessions import Session


def state_document(
    session: Session, kit: Toolkit, turn: int, previous: StateDocument | None, needs: Needs
) -> StateDocument | None:
    """The document a model would write at this turn, from the session's findings."""
    assert session.task is not None
    task = session.task
    known = [f for f in session.findings if f.turn < turn]

    def generate(prompt: str) -> StateDocument:
        done = {f.item for f in known}
        return StateDocument(
            task=task,
            findings=[
                Finding(
                    item=f.item,
                    status=f.status,
                    established=f.established,
                    evidence=list(f.evidence),
                )
                for f in known
            ],
            open=[
                OpenItem(item=i, blocked_on="not looked at yet")
                for i in task.items
                if i not in done
            ],
        )

    result = compact_state(generate, kit=kit, task=task, previous=previous)
    if result.document is None:
        return None
    return _as_of(result.document, kit, needs.conversation, turn)


def _as_of(
    document: StateDocument, kit: Toolkit, conversation: Conversation, turn: int
) -> StateDocument:
    """The document without the harness facts a replay knows only from later turns: the
    store holds the whole recorded session, the agent at this turn did not."""
    seen: set[str] = set()
    for result in conversation.results:
        shown = kit.shown(result.text) if result.index < turn else None
        if shown:
            seen.add(shown)
    asked = {
        str(call.arguments.get("query", ""))
        for call in conversation.calls.values()
        if call.index < turn and call.name == "search"
    }
    return document.model_copy(
        update={
            "observations": [o for o in document.observations if o.id in seen],
            "actions": [a for a in document.actions if a.id in seen],
            "queries_run": [
                q
                for q in document.queries_run
                if any(q == a or q.startswith(f"{a} (") for a in asked)
            ],
        }
    )
