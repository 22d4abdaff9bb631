"""Compaction: old tool results replaced in place by one-line stubs (a `Reference` or a
`Claim`), when it pays, and with what gist; and the first-sight cap, what a model is
handed of a result too long to be shown whole.
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
from .tools.firstsight import DEFAULT_MAX_RESULT_TOKENS, MIN_RESULT_TOKENS, capped

__all__ = [
    "DEFAULT_MAX_RESULT_TOKENS",
    "MIN_BUDGET",
    "MIN_RESULT_TOKENS",
    "PAYBACK",
    "CachePrices",
    "Claim",
    "Compaction",
    "DefaultSummarizer",
    "Evicted",
    "Reference",
    "Summarizer",
    "capped",
    "compact",
    "compaction_pays",
    "early_pays",
    "evict",
    "parse_stub",
    "requests_ahead",
    "trim",
]
