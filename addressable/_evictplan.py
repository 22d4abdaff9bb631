"""Which tool results compaction may evict, and in what order.

Not evicted: the newest `keep_last` results (but an exact copy of a later result), a
replay's result, a stub, what the caller pins, a small result, an Action whose outcome
is unknown, and the newest result of each key a pending step depends on. The others go
least needed first: those a later result superseded (the same key or the same call
again), then those whose values the agent's latest messages use least, oldest first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._blocks import BLOCKS, encode_blocks
from ._compactkit import Toolkit
from ._errors import AddressableError
from ._messages import Conversation, Shape, ToolCall, ToolResult, said
from ._models import Determinism, Outcome, Record, Status
from ._recorder import RecordOptions
from ._replaytool import NAME as REPLAY_TOOL
from ._stubs import parse_stub
from ._tokens import count_tokens
from .ids import canonical_args, content_hash, result_id

MIN_EVICT_TOKENS = 30  # a result smaller than this stays: its stub would save too little
RECENT = 3  # the agent's latest messages that say which results are still in use
_VALUE = re.compile(r"[\w./:@#?=&%+~-]{8,}")


@dataclass(frozen=True)
class Candidate:
    """A result compaction may evict, the record its stub points to, and whether a
    later result superseded it."""

    result: ToolResult
    record: Record
    superseded: bool  # a later result has its key, or came from the same call again


def evictable(
    conversation: Conversation,
    kit: Toolkit,
    keep_last: int,
    pins: set[str],
    pending_keys: set[str],
    determinism_of: dict[str, Determinism],
) -> list[Candidate]:
    """The results that may be evicted (see the module docstring), oldest first, each
    with its record (ingested first when the kit did not make it)."""
    results = conversation.results
    older = results[: max(0, len(results) - keep_last)]
    # An exact copy of a later result (the same text read again) goes even among the
    # newest: its content stays whole, in the later copy.
    last_text = {r.text: r.index for r in results}
    older += [r for r in results[len(older) :] if last_text[r.text] > r.index and r.text.strip()]
    last_of: dict[str, int] = {}  # the newest result of each call (tool and arguments)
    for result in results:
        call = conversation.calls[result.call_id]
        last_of[_signature(call)] = result.index
    found: list[tuple[ToolResult, Record, str]] = []
    for result in older:
        call = conversation.calls[result.call_id]
        if (
            call.name == REPLAY_TOOL
            or parse_stub(result.text) is not None
            or result.call_id in pins
            or (result.content is None and count_tokens(result.text) < MIN_EVICT_TOKENS)
        ):
            continue
        try:
            record = _record_of(
                kit,
                result,
                call.name,
                call.arguments,
                determinism_of.get(call.name, Determinism.NONDETERMINISTIC),
                conversation.shape,
            )
        except AddressableError:
            continue  # the store could not take it: the original stays
        if record.id in pins or _unsettled(kit, record):
            continue
        found.append((result, record, _signature(call)))
    last_key: dict[str, int] = {}  # the newest candidate of each key
    pending: dict[str, str] = {}  # the newest candidate of each key a pending step needs
    for result, record, _ in found:
        if record.key and not record.key.startswith("call:"):
            last_key[record.key] = result.index
        if record.key in pending_keys:
            pending[record.key] = result.call_id
    return [
        Candidate(
            result,
            record,
            last_of[signature] > result.index or last_key.get(str(record.key), -1) > result.index,
        )
        for result, record, signature in found
        if result.call_id not in pending.values()  # it stays whole
    ]


def least_needed_first(
    conversation: Conversation,
    messages: Sequence[Mapping[str, Any]],
    candidates: list[Candidate],
) -> list[Candidate]:
    """Superseded results first, oldest first; then the others by how many of their
    values the agent's latest messages use (none first), oldest first."""
    recent = "\n".join(
        said(m, conversation.shape)
        for m in [m for m in messages if m.get("role") == "assistant"][-RECENT:]
    )
    task = next((said(m, conversation.shape) for m in messages if m.get("role") == "user"), "")

    def rank(candidate: Candidate) -> tuple[int, int, int]:
        index = candidate.result.index
        if candidate.superseded:
            return (0, 0, index)
        values = set(_VALUE.findall(candidate.result.text))
        return (1, sum(1 for v in values if v in recent and v not in task), index)

    return sorted(candidates, key=rank)


def _signature(call: ToolCall) -> str:
    """The same call again: the same tool and arguments (or the same text, for
    arguments the model wrote that are not JSON)."""
    shown = call.arguments if call.unparsed is None else call.unparsed
    return json.dumps([call.name, shown], sort_keys=True, ensure_ascii=False, default=str)


def _record_of(
    kit: Toolkit,
    result: ToolResult,
    tool: str,
    arguments: dict[str, Any],
    determinism: Determinism,
    shape: Shape,
) -> Record:
    if result.content is not None:  # an image or another part that is not text
        return _record_of_blocks(kit, result, tool, arguments, determinism, shape)
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


def _record_of_blocks(
    kit: Toolkit,
    result: ToolResult,
    tool: str,
    arguments: dict[str, Any],
    determinism: Determinism,
    shape: Shape,
) -> Record:
    """The record of a result's whole content (text, images, files), keyed by its
    tool-call id: stored once, found again when the list is compacted again."""
    assert result.content is not None
    payload = encode_blocks(result.content, shape)
    key = f"call:{result.call_id}"
    if determinism is not Determinism.SIDE_EFFECT:
        known = result_id(tool, canonical_args(arguments), key, content_hash(payload))
        try:
            return kit.get(known)
        except AddressableError:
            pass  # not stored yet
    options: RecordOptions = {
        "key": key,
        "media_type": BLOCKS,
        "meta": {"tool_call_id": result.call_id},
    }
    if result.is_error:
        options["status"] = Status.ERROR
        options["error"] = result.text.strip().splitlines()[0][:200] if result.text else "error"
    return kit.record(tool, arguments, payload, determinism=determinism, **options).record


def _unsettled(kit: Toolkit, record: Record) -> bool:
    """An Action whose effect is not known: it must stay in sight."""
    if record.determinism is not Determinism.SIDE_EFFECT:
        return False
    outcome = kit.outcome(record.id)
    return outcome is None or outcome is Outcome.UNKNOWN
