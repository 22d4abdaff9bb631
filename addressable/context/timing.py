"""When compaction pays before the trigger, under prompt caching.

A provider that caches prompts bills a request's prefix that the previous request
shared at a low price (`CachePrices.read`) and the rest at a higher one
(`CachePrices.write`). Compaction changes the first result it stubs, so everything after
that result is written again once; in return, every later request reads fewer tokens.
Waiting for a fixed trigger can carry old results for many turns after they stopped
paying their way, when the results are large.

So the decision is rent or buy: each request that carries an old result (one older than
the newest `keep_last`, not yet a stub) pays to read what its stub would save;
compacting is worth it once what those old results have cost in reads since they left
the newest `keep_last` is `PAYBACK` times what compacting now would cost to write again
(the list from the first of them, their stubs in their place). `PAYBACK` is above 1
because a result stubbed early is more likely to be needed again (a round trip), and
because the next turns may be few.

The turns come from the message list alone: a result left the newest `keep_last` when
the `keep_last`-th result after it came, and each agent message since was a request.
`compaction_pays` estimates the stubs from the list; `compact` prices the stubs it made.
"""

from __future__ import annotations

import bisect
import math
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..core.errors import ArgumentError
from ..core.ids import whole_number
from ..core.tokens import Tokenizer, count_tokens, using_tokenizer
from .messages import Conversation, ToolResult, parse
from .messagetokens import MESSAGE_OVERHEAD, message_tokens
from .plan import agent_turns, kept_whole, small
from .sdkviews import views
from .summarize import DEFAULT_BUDGET, MIN_BUDGET, stub_budget

__all__ = [
    "PAYBACK",
    "STUB_HEAD",
    "CachePrices",
    "checked_prices",
    "compaction_pays",
    "estimated",
    "pays",
    "result_tokens",
]

# Measured with `addressable bench` (keep 3) on the recorded coding sessions at a 16,000
# trigger, the customer-service ones at 4,000 and the bundled scenario: at 1, early
# compactions stubbed results the coding agents still needed (lost results 1 -> 4, where
# `clear` loses 5); from 2 up they did not. The research scenario's large pages went
# early at every value, its net falling from 0.184 of `none` (no early compaction) to
# 0.178 at 12, 0.151 at 8, 0.144 at 6, 0.128 at 4 and 0.111 at 2. 4 sits between.
PAYBACK = 4.0
STUB_HEAD = 20  # tokens a stub takes besides its gist: its id, kind and size


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
    tokenizer: Tokenizer | None = None,
) -> bool:
    """Whether compacting `messages` now pays under prompt caching (see the module
    docstring), worked out from the list alone: each old result's stub is estimated at
    `STUB_HEAD` tokens and a gist of `stub_budget` (within `budget`). False when there
    is none. A result `compact` would keep (pinned, an Action whose outcome is unknown,
    one whose stub would save nothing) counts here; `compact(cache_prices=)` decides
    on the stubs it can make. `tokenizer` counts, as in `compact`."""
    whole_number("keep_last", keep_last, 0)
    whole_number("budget", budget, MIN_BUDGET)
    prices = CachePrices() if cache_prices is None else checked_prices(cache_prices)
    messages = views(messages)[0]
    with using_tokenizer(tokenizer):
        conversation = parse(messages, format)
        stubs = estimated(conversation, keep_last, budget)
        return pays(conversation, messages, stubs, keep_last, prices)


def estimated(conversation: Conversation, keep_last: int, budget: int) -> dict[str, int]:
    """The old results compaction may stub, as the list alone shows them (not a replay's,
    a stub or a small one), by call id, each with its stub's estimated tokens."""
    results = conversation.results[: max(0, len(conversation.results) - keep_last)]
    return {
        r.call_id: STUB_HEAD + stub_budget(result_tokens(r), budget)
        for r in results
        if not kept_whole(conversation, r) and not small(r)
    }


def pays(
    conversation: Conversation,
    messages: Sequence[Mapping[str, Any]],
    stubs: Mapping[str, int],
    keep_last: int,
    prices: CachePrices,
) -> bool:
    """The rule, for the old results `stubs` names (by call id), each with its stub's
    tokens: what it saves a request (its tokens less its stub's), times the requests
    that carried it since it left the newest `keep_last`, against what compacting
    writes again. A result still among the newest `keep_last` is not counted."""
    results = conversation.results
    starts = [turn[0] for turn in agent_turns(conversation, messages)]  # in order
    held = 0  # token-requests: what each stub saves, times the requests that carried it
    saved = 0  # what the stubs take out of the list
    first: int | None = None
    for n, result in enumerate(results[: max(0, len(results) - keep_last)]):
        stub = stubs.get(result.call_id)
        if stub is None:
            continue
        saving = result_tokens(result) - stub
        if saving <= 0:
            continue  # its stub would save nothing: it stays, and writes nothing again
        left = results[n + keep_last].index  # the message it left the newest keep_last at
        carried = 1 + len(starts) - bisect.bisect_right(starts, left)  # the next one too
        held += saving * carried
        saved += saving
        first = result.index if first is None else first
    if first is None:
        return False
    rewrite = message_tokens(messages[first:]) - saved
    return prices.read * held >= PAYBACK * prices.write * max(rewrite, 0)


def result_tokens(result: ToolResult) -> int:
    """A result's tokens as a request counts them: its text, and its image or file."""
    if result.content is None:
        return count_tokens(result.text)
    return message_tokens([{"content": list(result.content)}]) - MESSAGE_OVERHEAD
