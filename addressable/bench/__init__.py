"""The token-savings benchmark: what an agent's requests cost over the turns after a
compaction, under each context strategy, on the bundled scenario or recorded sessions.

    addressable bench
    addressable bench --trace sessions.jsonl --trigger 16000 --keep 3 --out DIR --json
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "DEFAULT_CACHE_READ",
    "DEFAULT_CACHE_WRITE",
    "DEFAULT_CLEAR_AT_LEAST",
    "DEFAULT_KEEP",
    "DEFAULT_TRIGGER",
    "DEFAULT_WINDOW",
    "STRATEGIES",
    "BenchReport",
    "Figures",
    "SessionReport",
    "bench",
    "check_settings",
    "markdown",
    "plot",
    "read_sessions",
]

# Where each name lives: loaded when first used, so that the command line can read the
# benchmark's options without loading the engine.
_HOMES = {
    "DEFAULT_CACHE_READ": "addressable.bench.settings",
    "DEFAULT_CACHE_WRITE": "addressable.bench.settings",
    "DEFAULT_CLEAR_AT_LEAST": "addressable.bench.settings",
    "DEFAULT_KEEP": "addressable.bench.settings",
    "DEFAULT_TRIGGER": "addressable.bench.settings",
    "DEFAULT_WINDOW": "addressable.bench.settings",
    "STRATEGIES": "addressable.bench.simulate",
    "BenchReport": "addressable.bench.report",
    "Figures": "addressable.bench.simulate",
    "SessionReport": "addressable.bench.report",
    "bench": "addressable.bench.engine",
    "check_settings": "addressable.bench.settings",
    "markdown": "addressable.bench.report",
    "plot": "addressable.bench.report",
    "read_sessions": "addressable.bench.sessions",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'addressable.bench' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from .engine import bench as bench
    from .report import BenchReport as BenchReport
    from .report import SessionReport as SessionReport
    from .report import markdown as markdown
    from .report import plot as plot
    from .sessions import read_sessions as read_sessions
    from .settings import DEFAULT_CACHE_READ as DEFAULT_CACHE_READ
    from .settings import DEFAULT_CACHE_WRITE as DEFAULT_CACHE_WRITE
    from .settings import DEFAULT_CLEAR_AT_LEAST as DEFAULT_CLEAR_AT_LEAST
    from .settings import DEFAULT_KEEP as DEFAULT_KEEP
    from .settings import DEFAULT_TRIGGER as DEFAULT_TRIGGER
    from .settings import DEFAULT_WINDOW as DEFAULT_WINDOW
    from .settings import check_settings as check_settings
    from .simulate import STRATEGIES as STRATEGIES
    from .simulate import Figures as Figures
