"""Which tool results compaction may evict, and in what order.

Not evicted: the newest `keep_last` results (but an exact copy of a later result), a
replay's result, a stub, what the caller pins, a small result, an Action whose outcome
is unknown (or a result whose text such an Action could have shown too), and the newest
result of each key a pending step depends on. The others go
least needed first: those a later result superseded (the same key or the same call
again), then those whose values the agent's latest messages use least, oldest first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.blocks import encode_blocks
from ..core.errors import AddressableError
from ..core.payload import BLOCKS
from ..core.records import Determinism, Outcome, Record
from ..core.tokens import count_tokens
from ..recording.recorder import find_ingested, ingested_options
from .kit import Toolkit
from .messages import Conversation, Shape, ToolCall, ToolResult, said
from .stubs import REPLAY_TOOL, parse_stub

MIN_EVICT_TOKENS = 30  # a result smaller than this stays: its stub would save too little
RECENT = 3  # the agent's latest messages that say which results are still in use
# A value a call may pass back, as it stands in a result or a message: 8 characters or
# more without a space.
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
    small_after: int | None = None,
) -> list[Candidate]:
    """The results that may be evicted (see the module docstring), oldest first, each
    with its record (ingested first when the kit did not make it). Results under
    `MIN_EVICT_TOKENS` are left out; with `small_after`, only they are given, those
    after that message (where an older result went: the prompt cache is broken before
    them, and their stubs save a little)."""
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
            kept_whole(conversation, result)
            or result.call_id in pins
            or result.written_id in pins  # an id the list gives several calls: all of them
            or small(result) != (small_after is not None)
            or (small_after is not None and result.index <= small_after)
        ):
            continue
        try:
            record = _record_of(
                kit,
                result,
                call,
                determinism_of.get(call.name, Determinism.NONDETERMINISTIC),
                conversation.shape,
            )
        except AddressableError:
            continue  # the store could not take it: the original stays
        if record is None or record.id in pins or _unsettled(kit, record):
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


def kept_whole(conversation: Conversation, result: ToolResult) -> bool:
    """What the list alone says is never evicted: a replay's result, or a stub."""
    return (
        conversation.calls[result.call_id].name == REPLAY_TOOL
        or parse_stub(result.text) is not None
    )


def small(result: ToolResult) -> bool:
    """A result of text only, under `MIN_EVICT_TOKENS`: its stub would save little."""
    return result.content is None and count_tokens(result.text) < MIN_EVICT_TOKENS


def least_needed_first(
    conversation: Conversation,
    messages: Sequence[Mapping[str, Any]],
    candidates: list[Candidate],
) -> list[Candidate]:
    """Superseded results first, oldest first; then the others by how many of their
    values the agent's latest messages use (none first), oldest first."""
    recent = "\n".join(
        said(messages[i], conversation.shape)
        for turn in agent_turns(conversation, messages)[-RECENT:]
        for i in turn
    )
    task = next((said(m, conversation.shape) for m in messages if m.get("role") == "user"), "")

    def rank(candidate: Candidate) -> tuple[int, int, int]:
        index = candidate.result.index
        if candidate.superseded:
            return (0, 0, index)
        values = set(_VALUE.findall(candidate.result.text))
        return (1, sum(1 for v in values if v in recent and v not in task), index)

    return sorted(candidates, key=rank)


def agent_turns(
    conversation: Conversation, messages: Sequence[Mapping[str, Any]]
) -> list[list[int]]:
    """The indices of the agent's messages, one list a message: each assistant message,
    and each message that holds a call, as `parse` found them (a Responses call is an
    item with no role). A call item with no role right after another of the agent's
    items is part of that message: the items one Responses turn gives out."""
    calls = {c.index for c in conversation.calls.values()}
    turns: list[list[int]] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role != "assistant" and i not in calls:
            continue
        if role is None and turns and turns[-1][-1] == i - 1:
            turns[-1].append(i)
        else:
            turns.append([i])
    return turns


def _signature(call: ToolCall) -> str:
    """The same call again: the same tool and arguments (or the same text, for
    arguments the model wrote that are not JSON)."""
    shown = call.arguments if call.unparsed is None else call.unparsed
    return json.dumps([call.name, shown], sort_keys=True, ensure_ascii=False, default=str)


def _record_of(
    kit: Toolkit,
    result: ToolResult,
    call: ToolCall,
    determinism: Determinism,
    shape: Shape,
) -> Record | None:
    """The record a result shows: the kit's own when it made it, else one ingested now.
    None when the result must stay whole: a record that could be what it shows is an
    Action whose effect is not known."""
    if result.content is not None:  # an image or another part that is not text
        return _record_of_blocks(kit, result, call, determinism, shape)
    shown = _shown_record(kit, result.text)
    if shown is not None:
        if shown.determinism is not Determinism.SIDE_EFFECT and _same_call(shown, call, kit):
            return shown  # the common case: this call's record, and not an Action
        found = _call_record(kit, shown, call, determinism)
        if not isinstance(found, Determinism):
            return found
        determinism = found
    return kit.ingest(
        result.call_id,
        call.name,
        call.arguments,
        result.text,
        is_error=result.is_error,
        determinism=determinism,
    ).record


def _shown_record(kit: Toolkit, text: str) -> Record | None:
    """The record the kit remembers showing `text`: the last call that showed it."""
    shown = kit.shown(text)
    if shown is None:
        return None
    try:
        return kit.get(shown)
    except AddressableError:
        return None  # gone since (gc): the text is kept as it was shown instead


def _call_record(
    kit: Toolkit, shown: Record, call: ToolCall, determinism: Determinism
) -> Record | Determinism | None:
    """The record of `call` when the record the kit remembers for its text is an Action,
    or another call's (two calls showed the same text, an error message say: the kit
    remembers the last). None if any record that could show the text is an Action whose
    effect is not known; else, when none is the call's, the determinism to ingest it
    with (`determinism`, but an Action's if the tool's records are). Rare: the store's
    records of the call's tool are read only then."""
    twins: list[Record] = []  # the tool's records with the same payload as `shown`
    same: list[Record] = []  # the tool's records of the same arguments
    for record in kit.store.records(tool=call.name):
        if record.content_hash == shown.content_hash:
            twins.append(record)
        elif _same_call(record, call, kit):
            same.append(record)
    mine = shown.tool == call.name and _same_call(shown, call, kit)
    doubtful = twins if mine else [shown, *twins, *same]
    if any(_unsettled(kit, r) for r in doubtful):
        return None
    own = [r for r in twins if _same_call(r, call, kit)]
    if own:
        return shown if shown in own else own[-1]
    if any(r.determinism is Determinism.SIDE_EFFECT for r in twins + same):
        return Determinism.SIDE_EFFECT  # ingested as an Action: its outcome is unknown
    return determinism


def _same_call(record: Record, call: ToolCall, kit: Toolkit) -> bool:
    """Whether `record` can be the record of `call`: the same tool, and each argument
    the call gave that the record holds (a tool records its arguments validated, with
    its defaults; an adapter, its own) the same value, or the same written as text."""
    if record.tool != call.name:
        return False
    if call.unparsed is not None:
        return True  # arguments that are not JSON: the tool alone says
    given = kit.secrets.mask_json(call.arguments) if kit.secrets else call.arguments
    return all(
        _same_value(record.args[name], value)
        for name, value in given.items()
        if name in record.args
    )


def _same_value(recorded: Any, given: Any) -> bool:
    if recorded == given:
        return True
    scalars = (str, int, float)
    return (
        isinstance(recorded, scalars)
        and isinstance(given, scalars)
        and (str(recorded) == str(given))
    )


def _record_of_blocks(
    kit: Toolkit,
    result: ToolResult,
    call: ToolCall,
    determinism: Determinism,
    shape: Shape,
) -> Record:
    """The record of a result's whole content (text, images, files), keyed by its
    tool-call id: stored once, found again when the list is compacted again."""
    assert result.content is not None
    payload = encode_blocks(result.content, shape)
    store, secrets = kit.store, kit.secrets
    found = find_ingested(
        store, secrets, result.call_id, call.name, call.arguments, payload, determinism
    )
    if found is not None:
        return found
    options = ingested_options(result.call_id, result.text, result.is_error, determinism)
    options["media_type"] = BLOCKS
    return kit.record(call.name, call.arguments, payload, determinism=determinism, **options).record


def _unsettled(kit: Toolkit, record: Record) -> bool:
    """An Action whose effect is not known: it must stay in sight."""
    if record.determinism is not Determinism.SIDE_EFFECT:
        return False
    outcome = kit.outcome(record.id)
    return outcome is None or outcome is Outcome.UNKNOWN
