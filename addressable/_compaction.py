"""Compaction of a message list: old tool results become one-line stubs, in place.

It is a function of the messages and the store, and the input is never changed. What
is never evicted: the newest `keep_last` results (but an exact copy of a later result:
its content stays whole in the later copy); an Action whose outcome is still unknown
(its stub would hide that the world may have changed); the newest result of each key a
pending step depends on; what the caller pins; results of `replay_result`; small
results (a stub would save little); calls still in flight. If the store cannot take a
result, the original stays: compaction never drops what it could not save.

With `target_tokens` (a low-water mark) it evicts only until the list is that small,
least needed first: a result a later one superseded (the same key read again, the same
command run again), then results the agent's latest messages do not use, oldest first;
the results whose values the latest messages still use go last. Evicting in one batch
down to a mark well under the trigger keeps the next compaction many turns away, and
the prompt cache whole in between.

A stub leaves out the values the list shows outside tool results and in the stubs
before it, and shows the short id the store gave its record. Once made, it is
remembered by the kit: the same result compacted again gives the same bytes.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal, Protocol, Unpack, runtime_checkable

from pydantic import BaseModel

from ._blocks import BLOCKS, encode_blocks
from ._errors import AddressableError, ArgumentError
from ._evict import make_stub
from ._messages import (
    Conversation,
    Shape,
    Source,
    ToolResult,
    message_tokens,
    parse,
    restore,
    said,
    set_result_text,
    views,
)
from ._models import Claim, Determinism, Outcome, Record, Reference, Result, Status
from ._recorder import Clock, RecordOptions
from ._replaytool import NAME as REPLAY_TOOL
from ._stores import Store
from ._stubs import parse_stub, short_id
from ._summarize import DEFAULT_BUDGET, Summarizer
from ._tokens import Tokenizer, count_tokens, using_tokenizer
from .ids import canonical_args, content_hash, result_id


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


MIN_EVICT_TOKENS = 30  # a result smaller than this stays: its stub would save too little
MIN_BUDGET = 32  # tokens: a stub's id, kind and size take about 20 of them
RECENT = 3  # the agent's latest messages that say which results are still in use
_VALUE = re.compile(r"[\w./:@#?=&%+~-]{8,}")


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
    before and after (exact cl100k with the `tokens` extra).

    `messages` is in the kind the list came in (`source`): dicts for dicts; LangChain
    messages for LangChain messages (the same ids, so that LangGraph's replace-by-id
    works; a compacted `ToolMessage` is the original with its new content); for SDK
    objects, each message compaction did not change is a copy of the object, and each
    one it changed is the dict the same SDK accepts in its place."""

    messages: list[Any]
    evicted: list[Evicted]
    tokens_before: int
    tokens_after: int
    shape: Shape
    source: Source = "dicts"


STUB_PIN = "stub"
"""The reason of the pins compaction makes on the records its stubs point to."""
STUB_PIN_AGE = timedelta(days=7)
"""How long a stub's pin lasts after the last compaction that made the stub (each one
pins again, so the age restarts), unless the kit's session is ended before."""


def compact(
    messages: Sequence[Any],
    *,
    kit: Toolkit,
    keep_last: int = 3,
    trigger_tokens: int | None = None,
    target_tokens: int | None = None,
    format: str = "auto",
    budget: int = DEFAULT_BUDGET,
    summarizer: Summarizer | None = None,
    pins: Iterable[str] = (),
    pending_keys: Iterable[str] = (),
    system: str | None = None,
    determinism_of: Mapping[str, Determinism] | None = None,
    tokenizer: Tokenizer | None = None,
) -> Compaction:
    """Replace tool results older than the newest `keep_last` with stubs (a Reference
    or a Claim, see `evict`) that name their id, so that `replay_result` gets them back.

    With `trigger_tokens`, nothing is evicted until the list is over that many tokens.
    With `target_tokens`, results are evicted, least needed first, only until the list
    is at most that many tokens (or nothing is left to evict); without it, every result
    but the newest `keep_last` is. Each stub takes at most `budget` tokens, and less for
    a small result. `pins` are record or tool-call ids to keep whole; `pending_keys` are
    keys a pending step depends on (the newest result of each stays). Results the kit
    did not make are ingested first, keyed by their tool-call id, as Claims unless
    `determinism_of` names their tool. `system` counts in the tokens. Raises
    `MalformedMessages` naming the offending message index when the list is not well
    formed, and `ArgumentError` for a limit that cannot be obeyed.

    Each record a stub points to is pinned (reason "stub", see `STUB_PIN_AGE`), so that
    gc keeps it while the stub can be in use: the pin ends `STUB_PIN_AGE` after the last
    compaction that made the stub, or when `kit.store.end_session(kit.session)` is
    called, whichever comes first.

    `tokenizer` (any callable `str -> int`) makes every count: `tokens_before`/`after`,
    the stub budgets and the `trigger_tokens`/`target_tokens` comparisons. Without it,
    `count_tokens` (cl100k_base) counts.
    """
    _check(kit, keep_last, budget, trigger_tokens, target_tokens)
    with using_tokenizer(tokenizer):
        return _compact(
            messages,
            kit=kit,
            keep_last=keep_last,
            trigger_tokens=trigger_tokens,
            target_tokens=target_tokens,
            format=format,
            budget=budget,
            summarizer=summarizer,
            pins=pins,
            pending_keys=pending_keys,
            system=system,
            determinism_of=determinism_of,
        )


def _compact(
    messages: Sequence[Any],
    *,
    kit: Toolkit,
    keep_last: int,
    trigger_tokens: int | None,
    target_tokens: int | None,
    format: str,
    budget: int,
    summarizer: Summarizer | None,
    pins: Iterable[str],
    pending_keys: Iterable[str],
    system: str | None,
    determinism_of: Mapping[str, Determinism] | None,
) -> Compaction:
    originals = messages
    messages, source = views(originals)
    conversation = parse(messages, format)
    before = message_tokens(messages, system)
    out = copy.deepcopy([dict(m) for m in messages])
    under = [t for t in (trigger_tokens, target_tokens) if t is not None]
    if under and before <= max(under):
        return Compaction(
            messages=restore(originals, out, set(), source),
            evicted=[],
            tokens_before=before,
            tokens_after=before,
            shape=conversation.shape,
            source=source,
        )
    candidates = _candidates(
        conversation,
        kit,
        keep_last,
        set(pins),
        set(pending_keys),
        dict(determinism_of or {}),
    )
    stubs = _stubs(conversation, messages, candidates, kit, budget, summarizer, system)
    evicted = []
    tokens = before
    for candidate in _least_needed_first(conversation, messages, candidates):
        if target_tokens is not None and tokens <= target_tokens:
            break
        result, record = candidate.result, candidate.record
        made = stubs.get(result.call_id)
        if made is None:
            continue  # the store could not give it back, or the stub would save nothing
        item, stub = made
        set_result_text(out, result, stub, conversation.shape)
        # A live stub keeps its record through gc, for as long as a stub can be in use:
        # until its session ends, or STUB_PIN_AGE after the last compaction that made it.
        kit.store.pin(
            record.id,
            reason=STUB_PIN,
            session=kit.session,
            until=kit.clock() + STUB_PIN_AGE,
        )
        tokens -= count_tokens(result.text) - count_tokens(stub)
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
    evicted.sort(key=lambda e: (e.index, e.call_id))
    return Compaction(
        messages=restore(originals, out, {e.index for e in evicted}, source),
        evicted=evicted,
        tokens_before=before,
        tokens_after=message_tokens(out, system),
        shape=conversation.shape,
        source=source,
    )


def _check(kit: Any, keep_last: Any, budget: Any, trigger_tokens: Any, target_tokens: Any) -> None:
    if not isinstance(kit, Toolkit):
        raise ArgumentError(
            f"compact needs kit=ad.Toolkit(store), got {type(kit).__name__}: "
            "the kit's store holds what the stubs point to"
        )
    _count("keep_last", keep_last, 0)
    _count("budget", budget, MIN_BUDGET)
    for name, value in (("trigger_tokens", trigger_tokens), ("target_tokens", target_tokens)):
        if value is not None:
            _count(name, value, 0)


def _count(name: str, value: Any, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(f"{name} must be a whole number, got {value!r}")
    if value < least:
        raise ArgumentError(f"{name} must be at least {least}, got {value}")


@dataclass(frozen=True)
class _Candidate:
    result: ToolResult
    record: Record
    superseded: bool  # a later result has its key, or came from the same call again


def _candidates(
    conversation: Conversation,
    kit: Toolkit,
    keep_last: int,
    pins: set[str],
    pending_keys: set[str],
    determinism_of: dict[str, Determinism],
) -> list[_Candidate]:
    results = conversation.results
    older = results[: max(0, len(results) - keep_last)]
    # An exact copy of a later result (the same text read again) goes even among the
    # newest: its content stays whole, in the later copy.
    last_text = {r.text: r.index for r in results}
    older += [r for r in results[len(older) :] if last_text[r.text] > r.index and r.text.strip()]
    last_of: dict[str, int] = {}  # the newest result of each call (tool and arguments)
    for result in results:
        call = conversation.calls[result.call_id]
        last_of[_signature(call.name, call.arguments)] = result.index
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
        found.append((result, record, _signature(call.name, call.arguments)))
    last_key: dict[str, int] = {}  # the newest candidate of each key
    pending: dict[str, str] = {}  # the newest candidate of each key a pending step needs
    for result, record, _ in found:
        if record.key and not record.key.startswith("call:"):
            last_key[record.key] = result.index
        if record.key in pending_keys:
            pending[record.key] = result.call_id
    return [
        _Candidate(
            result,
            record,
            last_of[signature] > result.index or last_key.get(str(record.key), -1) > result.index,
        )
        for result, record, signature in found
        if result.call_id not in pending.values()  # it stays whole
    ]


def _least_needed_first(
    conversation: Conversation,
    messages: Sequence[Mapping[str, Any]],
    candidates: list[_Candidate],
) -> list[_Candidate]:
    """Superseded results first, oldest first; then the others by how many of their
    values the agent's latest messages use (none first), oldest first."""
    recent = "\n".join(
        said(m, conversation.shape)
        for m in [m for m in messages if m.get("role") == "assistant"][-RECENT:]
    )
    task = next((said(m, conversation.shape) for m in messages if m.get("role") == "user"), "")

    def rank(candidate: _Candidate) -> tuple[int, int, int]:
        index = candidate.result.index
        if candidate.superseded:
            return (0, 0, index)
        values = set(_VALUE.findall(candidate.result.text))
        return (1, sum(1 for v in values if v in recent and v not in task), index)

    return sorted(candidates, key=rank)


def _stubs(
    conversation: Conversation,
    messages: Sequence[Mapping[str, Any]],
    candidates: list[_Candidate],
    kit: Toolkit,
    budget: int,
    summarizer: Summarizer | None,
    system: str | None,
) -> dict[str, tuple[Reference | Claim, str]]:
    """The stub of every candidate, by tool-call id, made oldest first.

    What a stub leaves out is what stays in sight without it: the values the list shows
    outside tool results (the task, the agent's words, the calls' arguments), in the
    results kept whole, and in the stubs of the results before it (those already in the
    list, and those the candidates before it get). A stub, once made, is remembered (by
    the kit, for the same result at the same place of the same conversation), so that
    compacting the list again later gives the same bytes, whatever was said since."""
    by_call = {c.result.call_id: c for c in candidates}
    # What stays in sight whatever this compaction does: the text outside tool results,
    # and the results it keeps whole (the newest, the small, the pinned). A kept result
    # that is evicted later gets its own stub then, which carries what it showed.
    kept = [
        r.text
        for r in conversation.results
        if r.call_id not in by_call and parse_stub(r.text) is None
    ]
    said_text = "\n".join([system or "", *(said(m, conversation.shape) for m in messages), *kept])
    made = _made_by(kit)
    before: list[str] = []  # the stubs of the results before the one at hand
    prefix = hashlib.blake2b(digest_size=16)  # the conversation up to the result at hand
    stubs: dict[str, tuple[Reference | Claim, str]] = {}
    at = 0
    for result in conversation.results:
        for message in messages[at : result.index + 1]:
            prefix.update(said(message, conversation.shape).encode("utf-8", "replace"))
        at = result.index + 1
        if parse_stub(result.text) is not None:
            before.append(result.text)
            continue
        candidate = by_call.get(result.call_id)
        if candidate is None:
            continue
        memo = (candidate.record.id, result.call_id, budget, prefix.hexdigest())
        stub = made.get(memo) if summarizer is None else None
        if stub is None:
            try:
                stub = make_stub(
                    candidate.record,
                    store=kit.store,
                    summarizer=summarizer,
                    budget=budget,
                    tokens=count_tokens(result.text),
                    label=False,  # the call that asked it stands right before its stub
                    known="\n".join([said_text, *before]),
                    short_id=short_id(kit.store, candidate.record.id),
                    superseded=candidate.superseded,
                )
            except AddressableError:
                continue  # the store could not give it back: the original stays
            if summarizer is None:
                _remember(made, memo, stub)
        if result.content is None and count_tokens(stub[1]) >= count_tokens(result.text):
            continue  # it would save nothing: the original stays
        stubs[result.call_id] = stub
        before.append(stub[1])
    return stubs


_MADE: weakref.WeakKeyDictionary[Any, dict[tuple[str, str, int, str], Any]] = (
    weakref.WeakKeyDictionary()
)
MADE_KEPT = 20_000  # stubs a kit remembers


def _made_by(kit: Toolkit) -> dict[tuple[str, str, int, str], tuple[Reference | Claim, str]]:
    return _MADE.setdefault(kit, {})


def _remember(
    made: dict[tuple[str, str, int, str], tuple[Reference | Claim, str]],
    key: tuple[str, str, int, str],
    stub: tuple[Reference | Claim, str],
) -> None:
    if len(made) >= MADE_KEPT:
        del made[next(iter(made))]  # the oldest
    made[key] = stub


def _signature(tool: str, arguments: Mapping[str, Any]) -> str:
    return json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False, default=str)


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
