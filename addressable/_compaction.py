"""Compaction of a message list: old tool results become one-line stubs, in place.

It is a pure function of the messages and the store: `plan` decides which results
become which stubs, `render` writes the new list, and the input is never changed.
What is never evicted: the newest `keep_last` results; an Action whose outcome is still
unknown (its stub would hide that the world may have changed); the newest result of
each key a pending step depends on; what the caller pins; results of `replay_result`;
small results (a stub would save little); calls still in flight. If the store cannot
take a result, the original stays: compaction never drops what it could not save.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from ._errors import AddressableError
from ._evict import evict
from ._messages import Conversation, Shape, ToolResult, message_tokens, parse, set_result_text
from ._models import Claim, Determinism, Outcome, Record, Reference
from ._replaytool import NAME as REPLAY_TOOL
from ._stubs import parse_stub, stub_for
from ._summarize import DEFAULT_BUDGET, Summarizer
from ._tokens import count_tokens

if TYPE_CHECKING:
    from ._toolkit import Toolkit

MIN_EVICT_TOKENS = 100  # a result smaller than this stays: its stub would save too little


class Evicted(BaseModel):
    """One result that became a stub."""

    index: int  # the message it is in
    call_id: str
    id: str  # the record the stub points to
    kind: Literal["reference", "claim"]
    tokens_before: int
    tokens_after: int


class Compaction(BaseModel):
    """What `compact` did: the new list, what it evicted, and the request's tokens
    before and after (exact cl100k with the `tokens` extra)."""

    messages: list[dict[str, Any]]
    evicted: list[Evicted]
    tokens_before: int
    tokens_after: int
    shape: Shape


def compact(
    messages: Sequence[Mapping[str, Any]],
    *,
    kit: Toolkit,
    keep_last: int = 3,
    trigger_tokens: int | None = None,
    format: str = "auto",
    budget: int = DEFAULT_BUDGET,
    summarizer: Summarizer | None = None,
    pins: Iterable[str] = (),
    pending_keys: Iterable[str] = (),
    system: str | None = None,
    determinism_of: Mapping[str, Determinism] | None = None,
) -> Compaction:
    """Replace every tool result but the newest `keep_last` with a stub (a Reference or
    a Claim, see `evict`) that names its id, so that `replay_result` gets it back.

    With `trigger_tokens`, nothing is evicted until the list is over that many tokens.
    `pins` are record or tool-call ids to keep whole; `pending_keys` are keys a pending
    step depends on (the newest result of each stays). Results the kit did not make are
    ingested first, keyed by their tool-call id, as Claims unless `determinism_of`
    names their tool. `system` counts in the tokens. Raises `MalformedMessages` naming
    the offending message index when the list is not well formed.
    """
    conversation = parse(messages, format)
    before = message_tokens(messages, system)
    out = copy.deepcopy([dict(m) for m in messages])
    if trigger_tokens is not None and before <= trigger_tokens:
        return Compaction(
            messages=out,
            evicted=[],
            tokens_before=before,
            tokens_after=before,
            shape=conversation.shape,
        )
    plan = _plan(
        conversation,
        kit,
        keep_last,
        budget,
        summarizer,
        set(pins),
        set(pending_keys),
        dict(determinism_of or {}),
    )
    evicted = []
    for result, item, record in plan:
        stub = stub_for(item, budget)
        set_result_text(out, result, stub, conversation.shape)
        kit.store.pin(record.id)  # a live stub keeps its record through gc
        evicted.append(
            Evicted(
                index=result.index,
                call_id=result.call_id,
                id=record.id,
                kind=item.kind,
                tokens_before=count_tokens(result.text),
                tokens_after=count_tokens(stub),
            )
        )
    return Compaction(
        messages=out,
        evicted=evicted,
        tokens_before=before,
        tokens_after=message_tokens(out, system),
        shape=conversation.shape,
    )


def _plan(
    conversation: Conversation,
    kit: Toolkit,
    keep_last: int,
    budget: int,
    summarizer: Summarizer | None,
    pins: set[str],
    pending_keys: set[str],
    determinism_of: dict[str, Determinism],
) -> list[tuple[ToolResult, Reference | Claim, Record]]:
    results = conversation.results
    older = results[: max(0, len(results) - keep_last)]
    candidates: list[tuple[ToolResult, Record]] = []
    for result in older:
        call = conversation.calls[result.call_id]
        if (
            call.name == REPLAY_TOOL
            or parse_stub(result.text) is not None
            or result.call_id in pins
            or count_tokens(result.text) < MIN_EVICT_TOKENS
        ):
            continue
        try:
            record = _record_of(
                kit,
                result,
                call.name,
                call.arguments,
                determinism_of.get(call.name, Determinism.NONDETERMINISTIC),
            )
        except AddressableError:
            continue  # the store could not take it: the original stays
        if record.id in pins or _unsettled(kit, record):
            continue
        candidates.append((result, record))
    # The newest result of each key a pending step depends on stays whole.
    newest: dict[str, int] = {}
    for position, (_, record) in enumerate(candidates):
        if record.key in pending_keys:
            newest[record.key] = position
    keep = set(newest.values())
    plan = []
    for position, (result, record) in enumerate(candidates):
        if position in keep:
            continue
        try:
            item = evict(
                record,
                store=kit.store,
                summarizer=summarizer,
                budget=budget,
                tokens=count_tokens(result.text),
                label=False,  # the call that asked it stands right before its stub
            )
        except AddressableError:
            continue
        plan.append((result, item, record))
    return plan


def _record_of(
    kit: Toolkit, result: ToolResult, tool: str, arguments: dict[str, Any], determinism: Determinism
) -> Record:
    shown = kit.shown(result.text)
    if shown is not None:
        try:
            return kit.get(shown)
        except AddressableError:
            pass  # gone since (gc): keep the text as it was shown instead
    return kit.ingest(
        result.call_id,
        tool,
        arguments,
        result.text,
        is_error=result.is_error,
        determinism=determinism,
    ).record


def _unsettled(kit: Toolkit, record: Record) -> bool:
    """An Action whose effect is not known: it must stay in sight."""
    if record.determinism is not Determinism.SIDE_EFFECT:
        return False
    outcome = kit.outcome(record.id)
    return outcome is None or outcome is Outcome.UNKNOWN
