"""Compaction: old tool results replaced in place by one-line stubs (a `Reference` or a
`Claim`), when it pays, and with what gist.
"""

from .context.compaction import Compaction, Evicted, compact
from .context.evict import evict
from .context.stubs import parse_stub
from .context.summarize import MIN_BUDGET, DefaultSummarizer, Summarizer
from .context.timing import PAYBACK, CachePrices, compaction_pays
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
    "evict",
    "parse_stub",
]
