"""The benchmark's settings in one place: their defaults, their checks, and what the
`addressable` strategies pass to `ad.compact`. The cache prices default to
`ad.CachePrices()`'s, which compaction prices its own timing with."""

from __future__ import annotations

import reprlib
from typing import Any

from .. import ArgumentError

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_CACHE_READ",
    "DEFAULT_CACHE_WRITE",
    "DEFAULT_CLEAR_AT_LEAST",
    "DEFAULT_KEEP",
    "DEFAULT_OUT",
    "DEFAULT_TRIGGER",
    "DEFAULT_WINDOW",
    "TRIM_SHARE",
    "check_settings",
    "compact_options",
]

DEFAULT_BUDGET = 120  # tokens a stub may take: compact's own default (a test holds them equal)
DEFAULT_WINDOW = 200_000  # input tokens a request may have before the API refuses it
DEFAULT_CACHE_READ = 0.1  # price of a cached input token, in input tokens: CachePrices().read
DEFAULT_CACHE_WRITE = 1.25  # price of a token written to the cache: CachePrices().write
DEFAULT_TRIGGER = 100_000  # input tokens, as hosted context editing defaults
DEFAULT_KEEP = 3  # tool results kept whole
DEFAULT_CLEAR_AT_LEAST = 0  # tokens `clear` must free to act
DEFAULT_OUT = "addressable-bench"  # the folder `addressable bench` writes its outputs to
# What the `addressable` strategies pass as `compact(trim_to=)`, as a share of the
# trigger: when stubs alone leave a request over it, the agent's old words are cut, in
# one batch, down to it (the next compaction many turns away).
TRIM_SHARE = 0.5


def check_settings(
    *,
    trigger: Any,
    keep: Any,
    window: Any = DEFAULT_WINDOW,
    cache_read: Any = DEFAULT_CACHE_READ,
    cache_write: Any = DEFAULT_CACHE_WRITE,
    budget: Any = None,
    clear_at_least: Any = DEFAULT_CLEAR_AT_LEAST,
    flags: bool = False,
) -> None:
    """Raise `ArgumentError` naming every setting that makes no sense (each with its
    value, on one line); `flags` names them as the command line's options."""

    def name(setting: str) -> str:
        return "--" + setting.replace("_", "-") if flags else setting

    from ..compaction import MIN_BUDGET, CachePrices  # the engine's, loaded when used

    problems = []
    whole = {
        "trigger": (trigger, 1),
        "keep": (keep, 0),
        "window": (window, 1),
        "budget": (budget, MIN_BUDGET),  # what compact takes
        "clear_at_least": (clear_at_least, 0),
    }
    for setting, (value, least) in whole.items():
        if value is None and setting == "budget":
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"{name(setting)} must be a whole number, not {value!r}")
        elif value < least:
            problems.append(f"{name(setting)} must be {least} or more, not {value}")
    for setting, price in (("cache_read", cache_read), ("cache_write", cache_write)):
        fault = CachePrices.fault(price)
        if fault == "type":
            problems.append(f"{name(setting)} must be a number, not {price!r}")
        elif fault == "range":
            shown = reprlib.repr(price)
            problems.append(f"{name(setting)} must be a finite price of 0 or more, not {shown}")
    if problems:
        raise ArgumentError("; ".join(problems))


def compact_options(trigger: int, budget: int | None, system: str | None) -> dict[str, Any]:
    """What the `addressable` strategies pass to `ad.compact` besides the messages, the
    kit, `keep_last` and `format`. The system prompt counts in the request's tokens."""
    options: dict[str, Any] = {"system": system, "trim_to": int(TRIM_SHARE * trigger)}
    if budget is not None:
        options["budget"] = budget
    return options
