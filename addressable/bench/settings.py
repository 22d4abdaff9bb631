"""The benchmark's settings in one place: their defaults, their checks, and the options
every strategy takes alike. The cache prices default to `ad.CachePrices()`'s, which
compaction prices its own timing with."""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
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
    "LOW_WATER_SHARE",
    "VARIANTS",
    "Options",
    "check_settings",
    "low_water",
]

DEFAULT_BUDGET = 120  # tokens a stub may take: compact's own default (a test holds them equal)
DEFAULT_WINDOW = 200_000  # input tokens a request may have before the API refuses it
DEFAULT_CACHE_READ = 0.1  # price of a cached input token, in input tokens: CachePrices().read
DEFAULT_CACHE_WRITE = 1.25  # price of a token written to the cache: CachePrices().write
DEFAULT_TRIGGER = 100_000  # input tokens, as hosted context editing defaults
DEFAULT_KEEP = 3  # tool results kept whole
DEFAULT_CLEAR_AT_LEAST = 0  # tokens `clear` must free to act
DEFAULT_OUT = "addressable-bench"  # the folder `addressable bench` writes its outputs to
# The low-water mark, as a share of the trigger: `window` drops old turns down to it,
# and trimming cuts the agent's old words down to it when a strategy's own step leaves
# the request over it (one batch: the next compaction many turns away).
LOW_WATER_SHARE = 0.5


@dataclass(frozen=True)
class Options:
    """The techniques that are not a strategy's own step, which every strategy takes
    alike: `trim`, the agent's older messages cut down to the low-water mark when the
    step leaves the request over it (`compact(trim_to=)`, `compaction.trim`); `early`,
    acting under the trigger when prompt caching makes it pay (`compaction.early_pays`)."""

    trim: bool = True
    early: bool = True


# What `--ablate` runs each strategy with besides the default (every option on).
VARIANTS = {
    "plain": Options(trim=False, early=False),
    "trim": Options(trim=True, early=False),
    "early": Options(trim=False, early=True),
    "trim+early": Options(trim=True, early=True),
}


def check_settings(
    *,
    trigger: Any,
    keep: Any,
    window: Any = DEFAULT_WINDOW,
    cache_read: Any = DEFAULT_CACHE_READ,
    cache_write: Any = DEFAULT_CACHE_WRITE,
    budget: Any = None,
    clear_at_least: Any = DEFAULT_CLEAR_AT_LEAST,
    first_sight: Any = None,
    flags: bool = False,
) -> None:
    """Raise `ArgumentError` naming every setting that makes no sense (each with its
    value, on one line); `flags` names them as the command line's options."""

    def name(setting: str) -> str:
        return "--" + setting.replace("_", "-") if flags else setting

    from ..compaction import (  # the engine's, loaded when used
        MIN_BUDGET,
        MIN_RESULT_TOKENS,
        CachePrices,
    )

    problems = []
    whole = {
        "trigger": (trigger, 1),
        "keep": (keep, 0),
        "window": (window, 1),
        "budget": (budget, MIN_BUDGET),  # what compact takes
        "clear_at_least": (clear_at_least, 0),
        "first_sight": (first_sight, MIN_RESULT_TOKENS),
    }
    for setting, (value, least) in whole.items():
        if value is None and setting in ("budget", "first_sight"):
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


def low_water(trigger: int) -> int:
    """The low-water mark of a trigger (see `LOW_WATER_SHARE`)."""
    return int(LOW_WATER_SHARE * trigger)
