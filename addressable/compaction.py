"""Compaction: old tool results replaced in place by one-line stubs (a `Reference` or a
`Claim`), when it pays, and with what gist.
"""

from .context.compaction import (
    PAYBACK,
    CachePrices,
    Compaction,
    Evicted,
    compact,
    compaction_pays,
    early_pays,
    requests_ahead,
    trim,
)
from .context.stubs import evict, parse_stub
from .context.summarize import MIN_BUDGET, DefaultSummarizer, Summarizer
from .core.records import Claim, Reference

__all__ = [
    "MIN_BUDGET",
    "PAYBACK",
    "CachePrices",
    "Claim",
    "Compaction",
    "DefaultSummarizer",
    "Evicted",
    "Reference",
    "Summarizer",
    "compact",
    "compaction_pays",
    "early_pays",
    "evict",
    "parse_stub",
    "requests_ahead",
    "trim",
]
