"""Eviction: the smallest thing that lets a result leave the context, by the test of
whether the operation that recovers it is a function of its key alone."""

from __future__ import annotations

import json

from ._models import Claim, Determinism, Record, Reference
from ._payload import decode_text
from ._stores import Store
from ._stubs import stub_for
from ._summarize import DEFAULT_BUDGET, DefaultSummarizer, Summarizer, fit
from ._tokens import count_tokens


def evict(
    record: Record,
    *,
    store: Store,
    summarizer: Summarizer | None = None,
    budget: int = DEFAULT_BUDGET,
    tokens: int | None = None,
    label: bool = True,
) -> Reference | Claim:
    """A `Reference` for a deterministic result (its key replays it: the stub keeps the
    key and a one-line gist), else a `Claim` (what it established, extracted now, since
    running it again would not give the same answer). The whole stub stays within
    `budget` tokens. `tokens` is what the model was shown of it, when that differs from
    the payload (a page shown as readable text); by default the payload's count. With
    `label=False` a Claim does not repeat what was asked (the query, the command): for
    stubs that stand right after the call that asked it."""
    payload = store.read(record)
    tokens = tokens if tokens is not None else record.tokens
    if tokens is None:
        tokens = count_tokens(decode_text(payload, record.media_type))
        store.set_tokens(record.content_hash, tokens)
    summarize = summarizer or DefaultSummarizer()
    if record.determinism is Determinism.DETERMINISTIC:
        skeleton: Reference | Claim = Reference(
            id=record.id,
            tool=record.tool,
            key=record.key or _args_label(record),
            gist="",
            tokens=tokens,
            observed_at=record.observed_at,
        )
    else:
        skeleton = Claim(
            id=record.id,
            tool=record.tool,
            text="",
            label=_label(record) if label else "",
            observed_at=record.observed_at,
        )
    room = max(8, budget - count_tokens(stub_for(skeleton, budget)))
    gist = fit([summarize(record, payload, room)], room)
    if record.outcome is not None:
        gist = f"{record.outcome.value}: {gist}" if gist else record.outcome.value
    field = "gist" if isinstance(skeleton, Reference) else "text"
    item = skeleton.model_copy(update={field: gist})
    # The whole stub must fit: shorten the gist from its end until it does.
    while gist and count_tokens(stub_for(item, budget)) > budget:
        gist = _shorter(gist)
        item = skeleton.model_copy(update={field: gist})
    return item


def _shorter(text: str) -> str:
    """`text` less its last part ("; "-separated), or else its last word."""
    for sep in ("; ", ", ", " "):
        if sep in text:
            return text.rsplit(sep, 1)[0].rstrip(" ;,")
    return ""


def _label(record: Record) -> str:
    """What was asked, shortly: the query of a search, the command of a shell."""
    for name in ("query", "command", "q", "url", "path"):
        value = record.args.get(name)
        if isinstance(value, str):
            return json.dumps(value, ensure_ascii=False) if name in ("query", "q") else value
    return _args_label(record)


def _args_label(record: Record) -> str:
    if not record.args:
        return "()"
    return json.dumps(record.args, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
