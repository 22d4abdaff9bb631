"""The benchmark's outputs: a markdown table and a plot of cumulative request tokens."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING

from .. import MissingDependency, tokens_exact

if TYPE_CHECKING:
    from . import BenchReport

COLUMNS = (
    "requests",
    "peak",
    "artifact",
    "lost",
    "lost_results",
    "recovery",
    "net",
    "cached",
    "failed",
    "repeated_calls",
)


def markdown(report: BenchReport) -> str:
    """The totals as a markdown table, with each strategy's net and cached tokens as a
    share of `none`'s."""
    none = report.strategies.get("none")
    net_base = (none.net if none else 0) or 1
    cached_base = (none.cached if none else 0) or 1
    head = ["strategy", *COLUMNS, "net/none", "cached/none(cached)"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for name, figures in report.strategies.items():
        cells = [f"{getattr(figures, c):,}" for c in COLUMNS]
        cells += [f"{figures.net / net_base:.3f}", f"{figures.cached / cached_base:.3f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    plural = "s" if report.sessions != 1 else ""
    counted = "exact cl100k" if tokens_exact() else "estimated (4 bytes a token)"
    caption = (
        f"{report.sessions} session{plural}, trigger {report.trigger:,} tokens, keep "
        f"{report.keep}, window {report.window:,}; tokens are {counted}.\n"
        "net: requests + recovery, one more request (the context, and the result read "
        "again in full) for each result a turn lost values from. cached: each request's "
        f"prefix shared with the previous request at {report.cache_read:g}, the rest at "
        f"{report.cache_write:g}. failed: sessions with a request over the window (their "
        "figures still count)."
    )
    return caption + "\n\n" + "\n".join(lines) + "\n"


def plot(report: BenchReport, path: str | Path, session: int = 0) -> None:
    """A PNG of cumulative request tokens per turn, one line a strategy, for one session
    (the first by default). Needs matplotlib (the `bench` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError:
        raise MissingDependency("the benchmark's plot", "bench", "matplotlib") from None
    chosen = report.per_session[session]
    figure, axes = plt.subplots(figsize=(8, 4.5), dpi=110)
    styles = itertools.cycle(["-", "--", "-.", ":", "-"])
    for name, series in chosen.per_turn.items():
        cumulative = list(itertools.accumulate(series))
        axes.plot(
            range(1, len(cumulative) + 1), cumulative, next(styles), label=name, linewidth=1.8
        )
    axes.set_xlabel("assistant turn")
    axes.set_ylabel("cumulative request tokens")
    axes.set_title(f"{chosen.session_id}: trigger {report.trigger:,}, keep {report.keep}")
    axes.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:,.0f}"))
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
