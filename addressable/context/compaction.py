"""What compaction needs of the kit, as a protocol: `ad.Toolkit` is one, and compaction
does not import it (it sits above).

Which tool results compaction may evict, and in what order.

Not evicted: the newest `keep_last` results (but an exact copy of a later result), a
replay's result, a stub, what the caller pins, a small result, an Action whose outcome
is unknown (or a result whose text such an Action could have shown too), and the newest
result of each key a pending step depends on. The others go
least needed first: those a later result superseded (the same key or the same call
again), then those whose values the agent's latest messages use least, oldest first.

When compaction pays before the trigger, under prompt caching.

A provider that caches prompts bills a request's prefix that the previous request
shared at a low price (`CachePrices.read`) and the rest at a higher one
(`CachePrices.write`). Compaction changes the first result it stubs, so everything after
that result is written again once; in return, every later request reads fewer tokens.
Waiting for a fixed trigger can carry old results for many turns after they stopped
paying their way, when the results are large.

So the decision is rent or buy: each request that carries an old result (one older than
the newest `keep_last`, not yet a stub) pays to read what its stub would save;
compacting now is worth it when what the stubs save, over the requests still to come
before the trigger would compact anyway, is `PAYBACK` times what compacting now would
cost to write again (the list from the first of them, their stubs in their place).
`PAYBACK` is above 1 because a result stubbed early is more likely to be needed again
(a round trip), and because the requests to come are a guess.

That guess comes from the message list alone (`requests_ahead`): as many requests as
the session has made so far, and no more than are left before the list, growing at its
pace so far, reaches the trigger. A session that has just begun, or is close to its
trigger, waits.
`compaction_pays` counts each stub at the least it takes; `compact` prices the stubs it
made.

The agent's older words cut short, when stubs alone leave a list too large.

Once every result that may go is a stub, what is left of an old turn is the agent's own
text: its reasoning, the plan it wrote before a call. When the list is still over the
goal (`compact(trim_to=)`), the oldest of those messages become `[…]` and the values
they quote from tool results (a path, an id, a test name: a later call may need them),
until the list is small enough. What stays whole: every user message (the task, and
what the user said: it cannot be asked of a tool again), tool calls and results, system
messages, thinking, and the newest turns.

The prompt cache is read up to the first byte that changed. Messages after the first
result this compaction made a stub are cut first: the cache is broken there anyway.
Older ones are cut only when that frees at least `EARLY_SHARE` of the goal, enough to
pay for the cache it breaks.

The stubs compaction puts in place of the results it evicts, each made once: the
store remembers it (and the kit, to read it once), so that the same result compacted
again gives the same bytes, in any process on the same store.

Compaction of a message list: old tool results become one-line stubs, in place.

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
it (see `trim`).

A stub leaves out the values the list shows outside tool results and in the stubs
before it, and shows the short id the store gave its record. Once made, it is
remembered by the store: the same result compacted again gives the same bytes, in any
kit on the same store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import reprlib
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, TypeAdapter

from ..core.blocks import TEXT_TYPES, blocks_text
from ..core.errors import AddressableError, ArgumentError, IntegrityError, NotFound, StoreError
from ..core.ids import content_hash, expect, listed, quoted, whole_number
from ..core.records import Claim, Determinism, Outcome, Record, Reference, Result, member
from ..core.secrets import Secrets
from ..core.tokens import Tokenizer, count_tokens, using_tokenizer
from ..recording.recorder import Clock
from ..store import Store
from .messages import (
    MESSAGE_OVERHEAD,
    Conversation,
    Shape,
    Source,
    ToolCall,
    ToolResult,
    content_tokens,
    message_tokens,
    nested_too_deep,
    own,
    parse,
    restore,
    said,
    set_result_text,
    view_tokens,
    views,
    writable,
)
from .stubs import REPLAY_TOOL, make_stub, parse_stub, short_id
from .summarize import (
    DEFAULT_BUDGET,
    GIST_FLOOR,
    MIN_BUDGET,
    Summarizer,
    check_summarizer,
)


class Listing:
    """A message list as compaction reads it, once: its dicts (`views`), its calls and
    results (`parse`), and what each message says and weighs, each worked out when first
    asked for and kept, so that no message is read or counted twice."""

    def __init__(self, messages: Sequence[Any], format: str = "auto", system: str | None = None):
        self.originals = messages
        self.messages, self.source = views(messages)
        self.conversation = parse(self.messages, format)
        self.shape = self.conversation.shape
        self.system = system
        self._said: dict[int, str] = {}
        self._tokens: dict[int, int] = {}
        self._results: dict[tuple[int, int | None], int] = {}
        self._lines: dict[str, int] = {}

    def said(self, index: int) -> str:
        """What message `index` says (see `said`)."""
        if index not in self._said:
            self._said[index] = said(self.messages[index], self.shape)
        return self._said[index]

    def tokens(self, index: int) -> int:
        """Message `index`'s tokens, as `message_tokens` counts a request's."""
        if index not in self._tokens:
            self._tokens[index] = view_tokens(self.messages[index])
        return self._tokens[index]

    def total(self) -> int:
        """The request's tokens: every message, and the system prompt."""
        system = count_tokens(self.system) + MESSAGE_OVERHEAD if self.system else 0
        return system + sum(self.tokens(i) for i in range(len(self.messages)))

    def text_tokens(self, result: ToolResult) -> int:
        """The tokens of a result's text."""
        return self.count(result.text)

    def result_tokens(self, result: ToolResult) -> int:
        """A result's tokens as a request counts them: its text, and its image or file."""
        if result.content is None:
            return self.text_tokens(result)
        where = (result.index, result.block)
        if where not in self._results:
            self._results[where] = content_tokens(result.content)
        return self._results[where]

    def count(self, text: str) -> int:
        """`count_tokens(text)`, once for each text (a result's, a stub's line)."""
        if text not in self._lines:
            self._lines[text] = count_tokens(text)
        return self._lines[text]


@dataclass(frozen=True)
class CompactOptions:
    """What `compact` is asked to do, as checked (see `compact` for each)."""

    keep_last: int = 3
    trigger_tokens: int | None = None
    target_tokens: int | None = None
    trim_to: int | None = None
    format: str = "auto"
    budget: int = DEFAULT_BUDGET
    summarizer: Summarizer | None = None
    pins: frozenset[str] = frozenset()
    pending_keys: frozenset[str] = frozenset()
    system: str | None = None
    determinism_of: Mapping[str, Determinism] = field(default_factory=dict)
    cache_prices: CachePrices | None = None


@runtime_checkable
class Toolkit(Protocol):
    """What compaction needs of the kit: the store, ingesting results and the tools'
    record of what was shown. `ad.Toolkit` is one; compaction does not import it (it sits above)."""

    @property
    def store(self) -> Store: ...

    @property
    def session(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def secrets(self) -> Secrets: ...

    def get(self, id: str) -> Record: ...

    def ingest(
        self,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        text: str,
        *,
        is_error: bool = False,
        determinism: Determinism | str = Determinism.NONDETERMINISTIC,
        content: Sequence[Any] | None = None,
        shape: str | None = None,
    ) -> Result: ...

    def shown(self, text: str) -> str | None: ...

    def outcome(self, id: str) -> Outcome | None: ...


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
    listing: Listing, kit: Toolkit, options: CompactOptions, small_after: int | None = None
) -> list[Candidate]:
    """The results that may be evicted (see the module docstring), oldest first, each
    with its record (ingested first when the kit did not make it). Results under
    `MIN_EVICT_TOKENS` are left out; with `small_after`, only they are given, those
    after that message (where an older result went: the prompt cache is broken before
    them, and their stubs save a little)."""
    conversation, pins = listing.conversation, options.pins
    results = conversation.results
    older = results[: max(0, len(results) - options.keep_last)]
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
            or small(listing, result) != (small_after is not None)
            or (small_after is not None and result.index <= small_after)
        ):
            continue
        try:
            record = _record_of(
                kit,
                result,
                call,
                options.determinism_of.get(call.name, Determinism.NONDETERMINISTIC),
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
        if record.key in options.pending_keys:
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


def small(listing: Listing, result: ToolResult) -> bool:
    """A result of text only, under `MIN_EVICT_TOKENS`: its stub would save little."""
    return result.content is None and listing.text_tokens(result) < MIN_EVICT_TOKENS


def least_needed_first(listing: Listing, candidates: list[Candidate]) -> list[Candidate]:
    """Superseded results first, oldest first; then the others by how many of their
    values the agent's latest messages use (none first), oldest first."""
    messages = listing.messages
    recent = "\n".join(
        listing.said(i)
        for turn in agent_turns(listing.conversation, messages)[-RECENT:]
        for i in turn
    )
    users = (i for i, m in enumerate(messages) if m.get("role") == "user")
    task = next((listing.said(i) for i in users), "")

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
    """The record a result shows: the kit's own when it made it, else one ingested now
    (a result that held more than text, whole). None when the result must stay whole: a
    record that could be what it shows is an Action whose effect is not known."""
    if result.content is None:
        # The call's arguments as its record holds them: with the credentials masked.
        given = kit.secrets.mask_json(call.arguments) if kit.secrets else call.arguments
        shown = _shown_record(kit, result.text)
        if shown is not None:
            if shown.determinism is not Determinism.SIDE_EFFECT and _same_call(shown, call, given):
                return shown  # the common case: this call's record, and not an Action
            found = _call_record(kit, shown, call, given, determinism)
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
        content=result.content,
        shape=shape,
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
    kit: Toolkit,
    shown: Record,
    call: ToolCall,
    given: Mapping[str, Any],
    determinism: Determinism,
) -> Record | Determinism | None:
    """The record of `call` (its arguments `given` as stored) when the record the kit
    remembers for its text is an Action, or another call's (two calls showed the same
    text, an error message say: the kit remembers the last). None if any record that
    could show the text is an Action whose effect is not known; else, when none is the
    call's, the determinism to ingest it with (`determinism`, but an Action's if the
    tool's records are). Rare: the store's records of the call's tool are read only then."""
    twins: list[Record] = []  # the tool's records with the same payload as `shown`
    same: list[Record] = []  # the tool's records of the same arguments
    for record in kit.store.records(tool=call.name):
        if record.content_hash == shown.content_hash:
            twins.append(record)
        elif _same_call(record, call, given):
            same.append(record)
    mine = shown.tool == call.name and _same_call(shown, call, given)
    doubtful = twins if mine else [shown, *twins, *same]
    if any(_unsettled(kit, r) for r in doubtful):
        return None
    own = [r for r in twins if _same_call(r, call, given)]
    if own:
        return shown if shown in own else own[-1]
    if any(r.determinism is Determinism.SIDE_EFFECT for r in twins + same):
        return Determinism.SIDE_EFFECT  # ingested as an Action: its outcome is unknown
    return determinism


def _same_call(record: Record, call: ToolCall, given: Mapping[str, Any]) -> bool:
    """Whether `record` can be the record of `call`, whose arguments are `given` as a
    record holds them: the same tool, and each argument the call gave that the record
    holds (a tool records its arguments validated, with its defaults; an adapter, its
    own) the same value, or the same written as text."""
    if record.tool != call.name:
        return False
    if call.unparsed is not None:
        return True  # arguments that are not JSON: the tool alone says
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


def _unsettled(kit: Toolkit, record: Record) -> bool:
    """An Action whose effect is not known: it must stay in sight."""
    if record.determinism is not Determinism.SIDE_EFFECT:
        return False
    outcome = kit.outcome(record.id)
    return outcome is None or outcome is Outcome.UNKNOWN


# A stub that saves must pay back its rewrite several times over: a result stubbed early
# is likelier to be read again, and the requests to come are a guess (`requests_ahead`).
PAYBACK = 4.0
STUB_HEAD = 8  # tokens of a stub's head at the least: a Claim's kind and id, "[claim:1a2b3c4d]"


@dataclass(frozen=True)
class CachePrices:
    """What one input token costs with prompt caching, in units of an uncached one: a
    prefix the previous request shared is `read` from the cache, the rest is `write`n
    to it. The defaults are Anthropic's (a cache read at 0.1, a 5-minute cache write at
    1.25). A price that is not a finite number of 0 or more is `ArgumentError`."""

    read: float = 0.1
    write: float = 1.25

    def __post_init__(self) -> None:
        for name in ("read", "write"):
            value: object = getattr(self, name)
            fault = self.fault(value)
            if fault == "type":
                raise ArgumentError(f"CachePrices.{name} must be a number, not {value!r}")
            if fault == "range":
                shown = reprlib.repr(value)
                raise ArgumentError(f"CachePrices.{name} must be finite and 0 or more, not {shown}")

    @staticmethod
    def fault(value: object) -> Literal["type", "range"] | None:
        """Why `value` cannot be a price: "type" (not an int or float, or a bool),
        "range" (not finite, negative, or an int too large for a float), else None."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "type"
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an int too large for a float
            return "range"
        return None if finite and value >= 0 else "range"


def checked_prices(prices: object) -> CachePrices:
    """`prices` if it is a `CachePrices`, else `ArgumentError`, one line."""
    if not isinstance(prices, CachePrices):
        raise ArgumentError(
            f"cache prices are ad.CachePrices(read=, write=), not {type(prices).__name__}"
        )
    return prices


def compaction_pays(
    messages: Sequence[Any],
    *,
    keep_last: int = 3,
    cache_prices: CachePrices | None = None,
    format: str = "auto",
    budget: int = DEFAULT_BUDGET,
    trigger_tokens: int | None = None,
    system: str | None = None,
    tokenizer: Tokenizer | None = None,
) -> bool:
    """Whether compacting `messages` now may pay under prompt caching (see the module
    docstring), worked out from the list alone: each old result's stub is counted at
    about the least a stub takes, a Claim's head (`STUB_HEAD` tokens) and the least
    room a gist is given (`GIST_FLOOR`), whatever the `budget` (which is checked as
    `compact` checks it). False: stubs that small would not pay yet, and
    `compact(cache_prices=)` does not read the store; True: stubs may pay, and it makes
    them and decides on what they take (a gist leaves out what the list shows, and
    often takes far less than its budget). False when there is no old result. A result
    `compact` would keep (pinned, an Action whose outcome is unknown, one whose stub
    would save nothing) counts here. `trigger_tokens` is where the list would be
    compacted anyway (see `requests_ahead`); `system` counts in the list's tokens, and
    `tokenizer` counts, as in `compact`."""
    whole_number("keep_last", keep_last, 0)
    whole_number("budget", budget, MIN_BUDGET)
    if trigger_tokens is not None:
        whole_number("trigger_tokens", trigger_tokens, 1)
    prices = CachePrices() if cache_prices is None else checked_prices(cache_prices)
    with using_tokenizer(tokenizer):
        listing = Listing(messages, format, system)
        return pays(listing, least(listing, keep_last), keep_last, prices, trigger_tokens)


def least(listing: Listing, keep_last: int) -> dict[str, int]:
    """The old results compaction may stub, as the list alone shows them (not a replay's,
    a stub or a small one), by call id, each with the least its stub takes."""
    conversation = listing.conversation
    results = conversation.results[: max(0, len(conversation.results) - keep_last)]
    return {
        r.call_id: STUB_HEAD + GIST_FLOOR
        for r in results
        if not kept_whole(conversation, r) and not small(listing, r)
    }


def pays(
    listing: Listing,
    stubs: Mapping[str, int],
    keep_last: int,
    prices: CachePrices,
    trigger: int | None = None,
) -> bool:
    """The rule, for the old results `stubs` names (by call id), each with its stub's
    tokens: `early_pays` for what the stubs save and what compacting writes again (the
    list from the first of them). A result still among the newest `keep_last` is not
    counted; nor is one whose stub would save nothing (it stays, and writes nothing)."""
    results = listing.conversation.results
    saved = 0  # what the stubs take out of every request from now on
    first: int | None = None
    for result in results[: max(0, len(results) - keep_last)]:
        stub = stubs.get(result.call_id)
        if stub is None:
            continue
        saving = listing.result_tokens(result) - stub
        if saving <= 0:
            continue
        saved += saving
        first = result.index if first is None else first
    if first is None:
        return False
    rewritten = sum(listing.tokens(i) for i in range(first, len(listing.messages))) - saved
    return early_pays(
        saved=saved,
        rewritten=max(rewritten, 0),
        turns=len(agent_turns(listing.conversation, listing.messages)),
        tokens=listing.total(),
        trigger=trigger,
        prices=prices,
    )


def requests_ahead(turns: int, tokens: int, trigger: int | None) -> float:
    """The requests an early compaction saves on: as many as the session has made so
    far (`turns`; one that has run n requests is as likely as not to run n more), but
    no more than are left before the list, growing as it has, reaches `trigger`, where
    it would be compacted anyway."""
    if trigger is None or turns == 0:
        return float(turns)
    growth = tokens / turns  # what a request has added, on average
    return min(float(turns), max(0, trigger - tokens) / growth)


def early_pays(
    *,
    saved: int,
    rewritten: int,
    turns: int,
    tokens: int,
    trigger: int | None = None,
    prices: CachePrices | None = None,
) -> bool:
    """Whether acting on a list under its trigger pays, under prompt caching: what
    it takes off each request (`saved` tokens, read from the cache), for the requests
    still to come before the trigger (`requests_ahead`), against `PAYBACK` times what
    it writes to the cache again (`rewritten`: the list from the first message it
    changed, a state document put back near the start included). `turns` is the
    requests made so far and `tokens` the list's size now. The same rule for any
    strategy: stubs, placeholders, dropped turns."""
    prices = CachePrices() if prices is None else checked_prices(prices)
    if saved <= 0:
        return False
    ahead = requests_ahead(turns, tokens, trigger)
    return prices.read * saved * ahead >= PAYBACK * prices.write * rewritten


CUT = "[…]"
EARLY_SHARE = 0.2  # of the goal: what cutting before the cache break must free
MIN_QUOTED = 8  # characters: a plain word this long may be a value a call passes back
# A word of a message, and what makes a shorter one a value (a stub may have left it
# out because the message showed it): a digit, `_./:@#`, or a capital after a small.
_WORD = re.compile(r"[\w./:@#?=&%+~-]{3,}")
_MARKED = re.compile(r"[\d_./:@#]|[a-z][A-Z]")


def cut_dialogue(
    out: list[dict[str, Any]],
    conversation: Conversation,
    keep_turns: int,
    tokens: int,
    goal: int,
    broken: int,
) -> tuple[int, list[int]]:
    """Cut the agent's older messages in `out` (in place) while the list is over
    `goal` tokens; `tokens` is its size now, `broken` the first message this compaction
    changed. The newest `keep_turns` assistant messages, and all after them, stay. The
    list's size after, and the messages cut."""
    turns = [i for i, m in enumerate(out) if m.get("role") == "assistant"]
    stop = len(out) if keep_turns == 0 else turns[-keep_turns] if keep_turns <= len(turns) else 0
    candidates = [i for i in turns if i < stop and _speaks(out[i], conversation.shape)]
    seen = "\n".join(r.text for r in conversation.results)
    cut: list[int] = []
    tokens = _cut(out, [i for i in candidates if i >= broken], seen, tokens, goal, cut)
    if tokens > goal:
        # Before the break, nearest it first: the cached prefix stays as long as it can.
        trial = list(out)
        early: list[int] = []
        before = [i for i in reversed(candidates) if i < broken]
        after = _cut(trial, before, seen, tokens, goal, early)
        if tokens - after >= EARLY_SHARE * goal:
            out[:] = trial
            tokens = after
            cut += early
    return tokens, sorted(cut)


def trim(
    messages: Sequence[Any],
    *,
    to: int,
    keep_last: int = 3,
    format: str = "auto",
    system: str | None = None,
    changed_from: int | None = None,
    quoting: Sequence[Any] | None = None,
    tokenizer: Tokenizer | None = None,
) -> Compaction:
    """The agent's older messages cut while the list is over `to` tokens, as
    `compact(trim_to=)` cuts them once its stubs are not enough: for a list another step
    made smaller first (results cleared, turns dropped). `changed_from` is the first
    message that step changed (the prompt cache breaks there, so the messages after it
    are cut first); `quoting` is the list as it was before it, whose tool results hold
    the values a cut message keeps (by default, `messages`'). `Compaction.cut` lists the
    messages cut; nothing is evicted."""
    whole_number("to", to, 0)
    whole_number("keep_last", keep_last, 0)
    with using_tokenizer(tokenizer), _not_too_deep(messages):
        listing = Listing(messages, format, system)
        before = listing.total()
        out = writable(listing.messages)  # cutting replaces a message: none is changed
        tokens, cut = before, list[int]()
        if before > to:
            quoted_from = listing.conversation
            if quoting is not None:
                quoted_from = parse(views(quoting)[0], listing.shape)
            broken = len(out) if changed_from is None else changed_from
            tokens, cut = cut_dialogue(out, quoted_from, keep_last, before, to, broken)
        return Compaction(
            messages=restore(listing.originals, out, set(cut), listing.source),
            evicted=[],
            tokens_before=before,
            tokens_after=tokens,
            shape=listing.shape,
            source=listing.source,
            cut=cut,
        )


def _cut(
    out: list[dict[str, Any]],
    indexes: list[int],
    seen: str,
    tokens: int,
    goal: int,
    cut: list[int],
) -> int:
    for i in indexes:
        if tokens <= goal:
            break
        before = out[i]
        after = _shortened(before, seen)
        saved = message_tokens([before]) - message_tokens([after])
        if saved > 0:
            out[i] = after
            tokens -= saved
            cut.append(i)
    return tokens


def _speaks(message: Mapping[str, Any], shape: str) -> bool:
    """Whether `message`, one of the agent's, is a message with text of its own."""
    if shape == "openai-responses" and message.get("type", "message") != "message":
        return False
    return any(True for _ in _texts(message))


def _texts(message: Mapping[str, Any]) -> Iterator[tuple[int | None, str]]:
    """The texts of a message: its content when that is a string (None), else each
    text part's index and text."""
    content = message.get("content")
    if isinstance(content, str):
        if content and not content.startswith(CUT):
            yield None, content
        return
    if isinstance(content, list):
        for n, part in enumerate(content):
            if isinstance(part, Mapping) and part.get("type") in TEXT_TYPES:
                text = part.get("text")
                if isinstance(text, str) and text and not text.startswith(CUT):
                    yield n, text


def _value(word: str) -> bool:
    return len(word) >= MIN_QUOTED or _MARKED.search(word) is not None


def _shortened(message: dict[str, Any], seen: str) -> dict[str, Any]:
    """`message` (one that `_speaks`) with each of its texts cut to `[…]` and the values
    it quotes from `seen` (the results' text)."""
    texts = list(_texts(message))
    new = dict(message)
    content = message.get("content")
    parts = list(content) if isinstance(content, list) else None
    for n, text in texts:
        # A value as it ends a sentence or a clause: without that stop.
        quoted = (v.rstrip(".:?") for v in _WORD.findall(text))
        values = [v for v in dict.fromkeys(quoted) if _value(v) and v in seen]
        short = " ".join([CUT, *values])
        if n is None:
            new["content"] = short
        else:
            assert parts is not None
            part = {**parts[n], "text": short}
            if part.get("annotations"):
                part["annotations"] = []  # their offsets were into the text cut
            part.pop("logprobs", None)
            parts[n] = part
    if parts is not None:
        new["content"] = parts
    return new


def make_stubs(
    listing: Listing, candidates: list[Candidate], kit: Toolkit, options: CompactOptions
) -> dict[str, Stub]:
    """The stub of every candidate, by tool-call id, made oldest first.

    What a stub leaves out is what stays in sight without it: the values the list shows
    outside tool results (the task, the agent's words, the calls' arguments), in the
    results kept whole, and in the stubs of the results before it (those already in the
    list, and those the candidates before it get). A stub, once made, is remembered by
    the store (for the same result at the same place of the same conversation), so that
    compacting the list again later gives the same bytes, whatever was said since, in
    any kit on the same store (a second worker, a restarted harness)."""
    conversation, system = listing.conversation, listing.system
    budget, summarizer = options.budget, options.summarizer
    by_call = {c.result.call_id: c for c in candidates}
    # What stays in sight whatever this compaction does: the text outside tool results,
    # and the results it keeps whole (the newest, the small, the pinned). A kept result
    # that is evicted later gets its own stub then, which carries what it showed.
    kept = [
        r.text
        for r in conversation.results
        if r.call_id not in by_call and parse_stub(r.text) is None
    ]
    said_text = "\n".join(
        [system or "", *(listing.said(i) for i in range(len(listing.messages))), *kept]
    )
    made = _made_by(kit)
    before: list[str] = []  # the stubs of the results before the one at hand
    # The conversation up to the result at hand, the system prompt first (a stub leaves
    # out what that shows: one made under another prompt is not this one).
    prefix = hashlib.blake2b((system or "").encode("utf-8", "replace"), digest_size=16)
    stubs: dict[str, Stub] = {}
    at = 0
    for result in conversation.results:
        for i in range(at, result.index + 1):
            prefix.update(listing.said(i).encode("utf-8", "replace"))
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
                    tokens=listing.text_tokens(result),
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
        if listing.count(stub[1]) >= listing.result_tokens(result):
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
    before and after (exact cl100k).

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
    limit, prices alone decide. Until the list alone says it may pay (each stub counted
    at the least it takes), the store is not touched; then the stubs are made, and
    priced as they are.
    With `target_tokens`, results are evicted, least needed first, only until the list
    is at most that many tokens (or nothing is left to evict); without it, every result
    but the newest `keep_last` is. With `trim_to`, a list still over that many tokens
    once its results are stubs has the agent's oldest messages cut too (see `trim`):
    each becomes `[…]` and the values it quotes from tool results, until the list is at
    most `trim_to`; user messages, tool calls and the newest `keep_last` turns stay
    whole, and `Compaction.cut` lists the messages cut. A list still over `trim_to`
    then has the newest `keep_last` results stubbed too, oldest first, all but the
    newest, until it is at most `trim_to` (its cut made again for the turns kept). Each
    stub takes at most `budget` tokens, and less for a small result. `pins` are record
    or tool-call ids to keep whole; `pending_keys` are keys a pending step depends on
    (the newest result of each stays). Results the kit did not make are ingested first,
    keyed by their tool-call id, as Claims unless `determinism_of` names their tool; a
    side effect is then an Action whose outcome is `unknown`, which stays whole (nobody
    said what it did). `system` (text, or Anthropic's list of text blocks) counts in the tokens.
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
    options = CompactOptions(
        keep_last=keep_last,
        trigger_tokens=trigger_tokens,
        target_tokens=target_tokens,
        trim_to=trim_to,
        format=format,
        budget=budget,
        summarizer=summarizer,
        pins=frozenset(pins),
        pending_keys=frozenset(pending_keys),
        system=system,
        determinism_of=determinisms,
        cache_prices=cache_prices,
    )
    with using_tokenizer(tokenizer), _not_too_deep(messages):
        listing = Listing(messages, format, system)
        done = _compact(listing, kit, options)
        if trim_to is None or not _over(listing.total(), options):
            return done
        # A list that stubs and cuts leave over `trim_to` would stay over it on every
        # turn to come: the newest results yield, oldest first, all but the newest.
        keep = min(keep_last, len(listing.conversation.results))
        while done.tokens_after > trim_to and keep > 1:
            keep -= 1
            done = _compact(listing, kit, replace(options, keep_last=keep))
        return done


def _over(tokens: int, options: CompactOptions) -> bool:
    """Whether a list of `tokens` is over the limits `options` set (with none, and no
    prices, always: prices alone decide otherwise)."""
    under = [t for t in (options.trigger_tokens, options.target_tokens) if t is not None]
    return tokens > max(under) if under else options.cache_prices is None


def _compact(listing: Listing, kit: Toolkit, options: CompactOptions) -> Compaction:
    """The list read once, the evictions planned, each stub made once, the list written."""
    before = listing.total()
    out = writable(listing.messages)
    sizes = [listing.tokens(i) for i in range(len(out))]  # each message's tokens, as in `out`
    keep_last, prices = options.keep_last, options.cache_prices
    over = _over(before, options)
    # Under the trigger, with prices: early, once stubbing every old result pays. The
    # list alone says when it may; only then are the stubs made (results ingested) and
    # priced as they are.
    early = False
    if (
        not over
        and prices is not None
        and pays(listing, least(listing, keep_last), keep_last, prices, options.trigger_tokens)
    ):
        candidates = evictable(listing, kit, options)
        stubs = make_stubs(listing, candidates, kit, options)
        made = {call_id: listing.count(line) for call_id, (_, line) in stubs.items()}
        early = pays(listing, made, keep_last, prices, options.trigger_tokens)
    if not over and not early:
        return Compaction(
            messages=restore(listing.originals, out, set(), listing.source),
            evicted=[],
            tokens_before=before,
            tokens_after=before,
            shape=listing.shape,
            source=listing.source,
        )
    # Stubs first: with trim_to, the agent's words are cut only when stubs are not enough.
    # An early compaction stubs every old result, as the rule priced, and cuts nothing.
    goal = None if early else options.target_tokens
    trim_to = None if early else options.trim_to
    if goal is not None and trim_to is not None:
        goal = min(goal, trim_to)
    if not early:
        candidates = evictable(listing, kit, options)
        stubs = make_stubs(listing, candidates, kit, options)
    evicted: list[Evicted] = []
    ordered = least_needed_first(listing, candidates)
    tokens = _evict(listing, ordered, stubs, out, sizes, evicted, before, goal, kit)
    if evicted and (goal is None or tokens > goal):
        # Small results after the first stub: the prompt cache is broken before them.
        small = evictable(listing, kit, options, small_after=min(e.index for e in evicted))
        if small:
            stubs = make_stubs(listing, small, kit, options)
            tokens = _evict(listing, small, stubs, out, sizes, evicted, tokens, goal, kit)
    evicted.sort(key=lambda e: (e.index, e.call_id))
    cut: list[int] = []
    if trim_to is not None and tokens > trim_to:
        broken = evicted[0].index if evicted else len(out)  # the first message changed
        tokens, cut = cut_dialogue(out, listing.conversation, keep_last, tokens, trim_to, broken)
    return Compaction(
        messages=restore(
            listing.originals, out, {e.index for e in evicted} | set(cut), listing.source
        ),
        evicted=evicted,
        tokens_before=before,
        tokens_after=tokens,
        shape=listing.shape,
        source=listing.source,
        cut=cut,
    )


def _evict(
    listing: Listing,
    candidates: list[Candidate],
    stubs: Mapping[str, Stub],
    out: list[dict[str, Any]],
    sizes: list[int],
    evicted: list[Evicted],
    tokens: int,
    goal: int | None,
    kit: Toolkit,
) -> int:
    """Put the stub of each candidate in `out`, in order, while the list is over `goal`
    (every one without it); each goes in `evicted`. `sizes` are the tokens of the
    messages of `out`, kept as they change. The list's tokens after."""
    for candidate in candidates:
        if goal is not None and tokens <= goal:
            break
        result, record = candidate.result, candidate.record
        made = stubs.get(result.call_id)
        if made is None:
            continue  # the store could not give it back, or the stub would save nothing
        item, stub = made
        own(out, result.index)
        set_result_text(out, result, stub, listing.shape)
        # A live stub keeps its record through gc, for as long as a stub can be in use:
        # until its session ends, or STUB_PIN_AGE after the last compaction that made it.
        kit.store.pin(
            record.id,
            reason=STUB_PIN,
            session=kit.session,
            until=kit.clock() + STUB_PIN_AGE,
        )
        # What the request loses: the result's text and what is not text (an image).
        now = message_tokens([out[result.index]])
        tokens -= sizes[result.index] - now
        sizes[result.index] = now
        evicted.append(
            Evicted(
                index=result.index,
                call_id=result.written_id or result.call_id,  # as the list gives it
                id=record.id,
                kind=item.kind,
                tokens_before=listing.text_tokens(result),
                tokens_after=listing.count(stub),
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
