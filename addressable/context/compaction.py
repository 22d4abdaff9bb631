"""Compaction of a message list: old tool results become one-line stubs, in place.

It is a function of the messages and the store, and the input is never changed. What
is never evicted: the newest `keep_last` results (but an exact copy of a later result:
its content stays whole in the later copy); an Action whose outcome is still unknown
(its stub would hide that the world may have changed); the newest result of each key a
pending step depends on; what the caller pins; results of `replay_result`; small
results, but after an older result that goes (see below); calls still in flight. If
the store cannot take a result, the original stays: compaction never drops what it
could not save.

With `target_tokens` (a low-water mark) it evicts only until the list is that small,
least needed first: a result a later one superseded (the same key read again, the same
command run again), then results the agent's latest messages do not use, oldest first;
the results whose values the latest messages still use go last. Evicting in one batch
down to a mark well under the trigger keeps the next compaction many turns away, and
the prompt cache whole in between.

Results smaller than `MIN_EVICT_TOKENS` go only when an older result goes in the same
compaction: the prompt cache is broken before them then, and their stubs save a little.
With `trim_to`, the agent's old words are cut too when stubs alone leave the list over
it (see `context.trim`).

A stub leaves out the values the list shows outside tool results and in the stubs
before it, and shows the short id the store gave its record. Once made, it is
remembered by the store: the same result compacted again gives the same bytes, in any
kit on the same store.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel

from ..core.blocks import blocks_text
from ..core.errors import ArgumentError
from ..core.ids import expect, listed, quoted, whole_number
from ..core.records import Determinism, member
from ..core.tokens import Tokenizer, count_tokens, using_tokenizer
from .compactstubs import Stub, make_stubs
from .conversation import nested_too_deep
from .kit import Toolkit
from .messages import Shape, parse, set_result_text
from .messagetokens import message_tokens
from .plan import Candidate, evictable, least_needed_first
from .sdkviews import Source, restore, views
from .summarize import DEFAULT_BUDGET, MIN_BUDGET, Summarizer, check_summarizer
from .timing import CachePrices, checked_prices, estimated, pays
from .trim import cut_dialogue


class Evicted(BaseModel):
    """One result that became a stub."""

    index: int  # the message it is in
    call_id: str  # as the list gives it (an id given to several calls names each)
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
    cut: list[int] = []  # the messages whose text `trim_to` cut


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
    trim_to: int | None = None,
    format: str = "auto",
    budget: int = DEFAULT_BUDGET,
    summarizer: Summarizer | None = None,
    pins: Iterable[str] = (),
    pending_keys: Iterable[str] = (),
    system: str | list[Any] | None = None,
    determinism_of: Mapping[str, Determinism | str] | None = None,
    tokenizer: Tokenizer | None = None,
    cache_prices: CachePrices | None = None,
) -> Compaction:
    """Replace tool results older than the newest `keep_last` with stubs (a Reference
    or a Claim, see `evict`) that name their id, so that `replay_result` gets them back.

    With `trigger_tokens`, nothing is evicted until the list is over that many tokens.
    With `cache_prices` (what an input token costs read from a prompt cache and written
    to it, see `CachePrices`), a list under the trigger (and `target_tokens`) is also
    compacted once that pays: when the results it may stub have cost in cache reads
    `PAYBACK` times what compacting writes again (see `compaction_pays`). Such an early
    compaction stubs every one of them, as the rule priced, and cuts nothing
    (`target_tokens` and `trim_to` shape a compaction over the trigger). Without either
    limit, prices alone decide. Until the list alone says it may pay (stubs estimated),
    the store is not touched; then the stubs are made, and priced as they are.
    With `target_tokens`, results are evicted, least needed first, only until the list
    is at most that many tokens (or nothing is left to evict); without it, every result
    but the newest `keep_last` is. With `trim_to`, a list still over that many tokens
    once its results are stubs has the agent's oldest messages cut too (see `context.trim`):
    each becomes `[…]` and the values it quotes from tool results, until the list is at
    most `trim_to`; user messages, tool calls and the newest `keep_last` turns stay
    whole, and `Compaction.cut` lists the messages cut. Each stub takes at most
    `budget` tokens, and less for a small result. `pins` are record or tool-call ids to
    keep whole; `pending_keys` are keys a pending step depends on (the newest result of
    each stays). Results the kit did not make are ingested first, keyed by their
    tool-call id, as Claims unless `determinism_of` names their tool; a side effect is
    then an Action whose outcome is `unknown`, which stays whole (nobody said what it
    did). `system` (text, or Anthropic's list of text blocks) counts in the tokens.
    Raises `MalformedMessages` naming the offending message index when the list is not
    well formed, and `ArgumentError` for a limit that cannot be obeyed.

    Each record a stub points to is pinned (reason "stub", see `STUB_PIN_AGE`), so that
    gc keeps it while the stub can be in use: the pin ends `STUB_PIN_AGE` after the last
    compaction that made the stub, or when `kit.store.end_session(kit.session)` is
    called, whichever comes first.

    `tokenizer` (any callable `str -> int`) makes every count: `tokens_before`/`after`,
    the stub budgets and the `trigger_tokens`/`target_tokens`/`trim_to` comparisons. Without it,
    `count_tokens` (cl100k_base) counts.
    """
    _check(kit, keep_last, budget, trigger_tokens, target_tokens, trim_to)
    if cache_prices is not None:
        checked_prices(cache_prices)
    determinisms = _determinisms(determinism_of)
    pins, pending_keys = listed(pins, "ids to pin"), listed(pending_keys, "keys")
    if system is not None and not isinstance(system, str):  # Anthropic's list of blocks
        expect(system, list, "compact: system")
        system = blocks_text(system)
    check_summarizer(summarizer, "compact")
    with using_tokenizer(tokenizer), _not_too_deep(messages):
        return _compact(
            messages,
            kit=kit,
            keep_last=keep_last,
            trigger_tokens=trigger_tokens,
            target_tokens=target_tokens,
            trim_to=trim_to,
            format=format,
            budget=budget,
            summarizer=summarizer,
            pins=pins,
            pending_keys=pending_keys,
            system=system,
            determinism_of=determinisms,
            cache_prices=cache_prices,
        )


def _compact(
    messages: Sequence[Any],
    *,
    kit: Toolkit,
    keep_last: int,
    trigger_tokens: int | None,
    target_tokens: int | None,
    trim_to: int | None,
    format: str,
    budget: int,
    summarizer: Summarizer | None,
    pins: Iterable[str],
    pending_keys: Iterable[str],
    system: str | None,
    determinism_of: Mapping[str, Determinism] | None,
    cache_prices: CachePrices | None,
) -> Compaction:
    originals = messages
    messages, source = views(originals)
    conversation = parse(messages, format)
    before = message_tokens(messages, system)
    out = copy.deepcopy([dict(m) for m in messages])
    plan = (conversation, kit, keep_last, set(pins), set(pending_keys), dict(determinism_of or {}))
    under = [t for t in (trigger_tokens, target_tokens) if t is not None]
    over = before > max(under) if under else cache_prices is None
    # Under the trigger, with prices: early, once stubbing every old result pays. The
    # list alone says when it may; only then are the stubs made (results ingested) and
    # priced as they are.
    early = False
    if (
        not over
        and cache_prices is not None
        and pays(
            conversation,
            messages,
            estimated(conversation, keep_last, budget),
            keep_last,
            cache_prices,
        )
    ):
        candidates = evictable(*plan)
        stubs = make_stubs(conversation, messages, candidates, kit, budget, summarizer, system)
        made = {call_id: count_tokens(line) for call_id, (_, line) in stubs.items()}
        early = pays(conversation, messages, made, keep_last, cache_prices)
    if not over and not early:
        return Compaction(
            messages=restore(originals, out, set(), source),
            evicted=[],
            tokens_before=before,
            tokens_after=before,
            shape=conversation.shape,
            source=source,
        )
    # Stubs first: with trim_to, the agent's words are cut only when stubs are not enough.
    # An early compaction stubs every old result, as the rule priced, and cuts nothing.
    goal = None if early else target_tokens
    if goal is not None and trim_to is not None:
        goal = min(goal, trim_to)
    if early:
        trim_to = None
    else:
        candidates = evictable(*plan)
        stubs = make_stubs(conversation, messages, candidates, kit, budget, summarizer, system)
    evicted: list[Evicted] = []
    ordered = least_needed_first(conversation, messages, candidates)
    tokens = _evict(ordered, stubs, out, evicted, before, goal, kit, conversation.shape)
    if evicted and (goal is None or tokens > goal):
        # Small results after the first stub: the prompt cache is broken before them.
        small = evictable(*plan, small_after=min(e.index for e in evicted))
        if small:  # making stubs reads the whole list first: not for none
            stubs = make_stubs(conversation, messages, small, kit, budget, summarizer, system)
            tokens = _evict(small, stubs, out, evicted, tokens, goal, kit, conversation.shape)
    evicted.sort(key=lambda e: (e.index, e.call_id))
    cut: list[int] = []
    if trim_to is not None and tokens > trim_to:
        broken = evicted[0].index if evicted else len(out)  # the first message changed
        tokens, cut = cut_dialogue(out, conversation, keep_last, tokens, trim_to, broken)
    return Compaction(
        messages=restore(originals, out, {e.index for e in evicted} | set(cut), source),
        evicted=evicted,
        tokens_before=before,
        tokens_after=message_tokens(out, system),
        shape=conversation.shape,
        source=source,
        cut=cut,
    )


def _evict(
    candidates: list[Candidate],
    stubs: Mapping[str, Stub],
    out: list[dict[str, Any]],
    evicted: list[Evicted],
    tokens: int,
    goal: int | None,
    kit: Toolkit,
    shape: Shape,
) -> int:
    """Put the stub of each candidate in `out`, in order, while the list is over `goal`
    (every one without it); each goes in `evicted`. The list's tokens after."""
    for candidate in candidates:
        if goal is not None and tokens <= goal:
            break
        result, record = candidate.result, candidate.record
        made = stubs.get(result.call_id)
        if made is None:
            continue  # the store could not give it back, or the stub would save nothing
        item, stub = made
        # What the request loses: the result's text and what is not text (an image).
        was = message_tokens([out[result.index]])
        set_result_text(out, result, stub, shape)
        # A live stub keeps its record through gc, for as long as a stub can be in use:
        # until its session ends, or STUB_PIN_AGE after the last compaction that made it.
        kit.store.pin(
            record.id,
            reason=STUB_PIN,
            session=kit.session,
            until=kit.clock() + STUB_PIN_AGE,
        )
        tokens -= was - message_tokens([out[result.index]])
        evicted.append(
            Evicted(
                index=result.index,
                call_id=result.written_id or result.call_id,  # as the list gives it
                id=record.id,
                kind=item.kind,
                tokens_before=count_tokens(result.text),
                tokens_after=count_tokens(stub),
            )
        )
    return tokens


@contextmanager
def _not_too_deep(messages: Sequence[Any]) -> Iterator[None]:
    """A list within `MAX_NESTING` that compaction still cannot go through, called from
    deep in a stack (copying and counting recurse), is `MalformedMessages`, one line."""
    try:
        yield
    except RecursionError:
        raise nested_too_deep(messages) from None


def _check(
    kit: Any, keep_last: Any, budget: Any, trigger_tokens: Any, target_tokens: Any, trim_to: Any
) -> None:
    if not isinstance(kit, Toolkit):
        raise ArgumentError(
            f"compact needs kit=ad.Toolkit(store), got {type(kit).__name__}: "
            "the kit's store holds what the stubs point to"
        )
    whole_number("keep_last", keep_last, 0)
    whole_number("budget", budget, MIN_BUDGET)
    limits = ("trigger_tokens", trigger_tokens), ("target_tokens", target_tokens)
    for name, value in (*limits, ("trim_to", trim_to)):
        if value is not None:
            whole_number(name, value, 0)


def _determinisms(given: Any) -> dict[str, Determinism]:
    """`determinism_of` as checked: each value a `Determinism` (or its value), so that
    a misspelt one is said before anything is ingested, not met halfway through."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise ArgumentError(
            f"determinism_of maps tool names to determinisms, not a {type(given).__name__}"
        )
    return {
        tool: member(Determinism, value, f"determinism_of[{quoted(str(tool))}]")
        for tool, value in given.items()
    }
