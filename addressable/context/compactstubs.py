"""The stubs compaction puts in place of the results it evicts, each made once: the
store remembers it (and the kit, to read it once), so that the same result compacted
again gives the same bytes, in any process on the same store."""

from __future__ import annotations

import contextlib
import hashlib
import json
import weakref
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from ..core.errors import AddressableError, IntegrityError, NotFound, StoreError
from ..core.ids import content_hash
from ..core.records import Claim, Reference
from ..core.tokens import count_tokens
from .evict import make_stub
from .kit import Toolkit
from .messages import Conversation, said
from .messagetokens import content_tokens
from .plan import Candidate
from .stubs import parse_stub, short_id
from .summarize import Summarizer


def make_stubs(
    conversation: Conversation,
    messages: Sequence[Mapping[str, Any]],
    candidates: list[Candidate],
    kit: Toolkit,
    budget: int,
    summarizer: Summarizer | None,
    system: str | None,
) -> dict[str, Stub]:
    """The stub of every candidate, by tool-call id, made oldest first.

    What a stub leaves out is what stays in sight without it: the values the list shows
    outside tool results (the task, the agent's words, the calls' arguments), in the
    results kept whole, and in the stubs of the results before it (those already in the
    list, and those the candidates before it get). A stub, once made, is remembered by
    the store (for the same result at the same place of the same conversation), so that
    compacting the list again later gives the same bytes, whatever was said since, in
    any kit on the same store (a second worker, a restarted harness)."""
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
    # The conversation up to the result at hand, the system prompt first (a stub leaves
    # out what that shows: one made under another prompt is not this one).
    prefix = hashlib.blake2b((system or "").encode("utf-8", "replace"), digest_size=16)
    stubs: dict[str, Stub] = {}
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
        stub = _remembered(kit, made, memo) if summarizer is None else None
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
                    secrets=kit.secrets,
                )
            except (StoreError, IntegrityError, NotFound):
                continue  # the store could not give it back: the original stays
            if summarizer is None:
                _remember(kit, made, memo, stub)
        shown = result.content
        if count_tokens(stub[1]) >= (
            count_tokens(result.text) if shown is None else content_tokens(shown)
        ):
            continue  # it would save nothing: the original stays
        stubs[result.call_id] = stub
        before.append(stub[1])
    return stubs


Stub = tuple[Reference | Claim, str]  # what is shown in place of a result, and its line
_Memo = tuple[str, str, int, str]  # record, call, budget, the conversation up to it
_STUB_ITEM: TypeAdapter[Reference | Claim] = TypeAdapter(
    Annotated[Reference | Claim, Field(discriminator="kind")]
)
_MADE: weakref.WeakKeyDictionary[Any, dict[_Memo, Stub]] = weakref.WeakKeyDictionary()
MADE_KEPT = 20_000  # stubs a kit remembers


def _made_by(kit: Toolkit) -> dict[_Memo, Stub]:
    return _MADE.setdefault(kit, {})


def _mark(memo: _Memo) -> str:
    """The hash the store keeps a stub under: of its record, call, budget and place."""
    return content_hash("\0".join(str(part) for part in memo).encode())


def _remembered(kit: Toolkit, made: dict[_Memo, Stub], memo: _Memo) -> Stub | None:
    """The stub made before for `memo`, by this kit or any on its store."""
    stub = made.get(memo)
    if stub is not None:
        return stub
    try:
        kept = kit.store.stub(_mark(memo), memo[0])
        if kept is None:
            return None
        data = json.loads(kept)
        item = _STUB_ITEM.validate_python(data["item"])
        stub = (item, str(data["line"]))
    except (AddressableError, ValueError, KeyError, TypeError):
        return None  # unreadable: made again
    _keep(made, memo, stub)
    return stub


def _remember(kit: Toolkit, made: dict[_Memo, Stub], memo: _Memo, stub: Stub) -> None:
    """Keep a stub just made, in the store (for every kit) and in this kit."""
    item, line = stub
    value = json.dumps({"item": item.model_dump(mode="json"), "line": line}).encode()
    # Not kept for other kits if the store fails: this one still gives the same bytes.
    with contextlib.suppress(AddressableError):
        kit.store.set_stub(_mark(memo), memo[0], value)
    _keep(made, memo, stub)


def _keep(made: dict[_Memo, Stub], memo: _Memo, stub: Stub) -> None:
    if len(made) >= MADE_KEPT:
        del made[next(iter(made))]  # the oldest
    made[memo] = stub
