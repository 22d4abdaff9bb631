"""When compaction pays before the trigger, under prompt caching.

A provider that caches prompts bills a request's prefix that the previous request
shared at a low price (`CachePrices.read`) and the rest at a higher one
(`CachePrices.write`). Compaction changes the first result it stubs, so everything after
that result is written again once; in return, every later request reads fewer tokens.
Waiting for a fixed trigger can carry old results for many turns after they stopped
paying their way, when the results are large.

So the decision is rent or buy: each request that carries an old result (one older than
the newest `keep_last`, not yet a stub) pays to read it; compacting is worth it once what
those old results have cost in reads since they left the newest `keep_last` is
`PAYBACK` times what compacting now would cost to write again. `PAYBACK` is above 1
because a result stubbed early is more likely to be needed again (a round trip), and
because the next turns may be few.

The figures come from the message list alone: a result left the newest `keep_last` when
the `keep_last`-th result after it came, and each agent message since was a request.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._errors import ArgumentError
from ._evictplan import agent_turns, small
from ._messages import message_tokens, parse
from ._replaytool import NAME as REPLAY_TOOL
from ._sdkviews import views
from ._stubs import parse_stub
from ._tokens import count_tokens
from .ids import whole_number

__all__ = ["PAYBACK", "CachePrices", "compaction_pays"]

# Measured with `addressable bench` (keep 3) on the recorded coding sessions at a 16,000
# trigger, the customer-service ones at 4,000 and the bundled scenario: at 1, early
# compactions stubbed results the coding agents still needed (lost results 1 -> 6); from
# 2 up they did not. The research scenario's large pages went early at every value, its
# net falling from 0.184 of `none` (no early compaction) to 0.159 at 12, 0.145 at 8,
# 0.128 at 4 and 0.109 at 2. 4 sits between the two edges.
PAYBACK = 4.0


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
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ArgumentError(f"CachePrices.{name} must be a number, not {value!r}")
            if not math.isfinite(value) or value < 0:
                raise ArgumentError(f"CachePrices.{name} must be finite and 0 or more, not {value}")


def compaction_pays(
    messages: Sequence[Any],
    *,
    keep_last: int = 3,
    prices: CachePrices | None = None,
    format: str = "auto",
) -> bool:
    """Whether compacting `messages` now pays under prompt caching (see the module
    docstring): the old results it would stub have cost, in cache reads since they
    left the newest `keep_last`, `PAYBACK` times what it costs to write again the list
    from the first of them. False when there is none. The system prompt is not written again: it
    comes before every result."""
    whole_number("keep_last", keep_last, 0)
    prices = prices or CachePrices()
    messages = views(messages)[0]
    conversation = parse(messages, format)
    results = conversation.results
    if len(results) <= keep_last:
        return False
    starts = [turn[0] for turn in agent_turns(conversation, messages)]  # in order
    held = 0.0  # token-requests: each old result, times the requests that carried it
    old_tokens = 0
    first: int | None = None
    for n, result in enumerate(results[: len(results) - keep_last]):
        call = conversation.calls[result.call_id]
        if call.name == REPLAY_TOOL or parse_stub(result.text) is not None or small(result):
            continue
        tokens = count_tokens(result.text)
        left = results[n + keep_last].index  # the message it left the newest keep_last at
        carried = 1 + len(starts) - bisect.bisect_right(starts, left)  # the next one too
        held += tokens * carried
        old_tokens += tokens
        first = result.index if first is None else first
    if first is None:
        return False
    rewrite = message_tokens(messages[first:]) - old_tokens
    return prices.read * held >= PAYBACK * prices.write * max(rewrite, 0)
