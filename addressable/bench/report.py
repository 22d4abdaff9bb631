"""The benchmark's outputs: its figures (`BenchReport`), a markdown table and a plot of
cumulative net tokens (requests and round trips) per turn, summed over the sessions."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .. import MissingDependency
from ..tokens import tokens_exact
from .costs import Figures
from .sessions import BadLine
from .settings import DEFAULT_CACHE_READ, DEFAULT_CACHE_WRITE, DEFAULT_WINDOW

COLUMNS = (
    "requests",
    "peak",
    "artifact",
    "lost",
    "lost_results",
    "lost_said",
    "recovery",
    "net",
    "cached",
    "failed",
    "repeated_calls",
)


class SessionReport(BaseModel):
    session_id: str
    strategies: dict[str, Figures]
    per_turn: dict[str, list[int]]


class BenchReport(BaseModel):
    """The figures of a run: in total, per session, and the lines that could not be read."""

    sessions: int
    trigger: int
    keep: int
    window: int = DEFAULT_WINDOW
    cache_read: float = DEFAULT_CACHE_READ
    cache_write: float = DEFAULT_CACHE_WRITE
    first_sight: int | None = None  # the first-sight cap every strategy ran with
    encoding: str | None  # the encoding tokens were counted in; None: a tokenizer's own
    low_water: int = 0  # where window drops to and trimming cuts to: half the trigger
    options: dict[str, bool] = {}  # what every strategy ran with: trim, early
    strategies: dict[str, Figures]
    ablation: dict[str, dict[str, Figures]] = {}  # strategy -> variant -> figures
    per_session: list[SessionReport]
    errors: list[BadLine] = []

    def to_json(self) -> dict[str, Any]:
        """The JSON the benchmark writes (per-turn series left out: they are for the plot;
        `ablation` only when it was run)."""
        data = self.model_dump(mode="json", exclude={"per_session": {"__all__": {"per_turn"}}})
        if not self.errors:
            data.pop("errors")
        if not self.ablation:
            data.pop("ablation")
        return data


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
    counted = _counted(report.encoding)
    caption = (
        f"{report.sessions} session{plural}, trigger {report.trigger:,} tokens, keep "
        f"{report.keep}, window {report.window:,}; tokens are {counted}.\n"
        "net: requests + recovery, one more request (the context, and the result read "
        "again in full) for each result a turn lost values from. cached: each request's "
        f"prefix shared with the previous request at {report.cache_read:g}, the rest at "
        f"{report.cache_write:g}. failed: sessions with a request over the window (their "
        "figures still count). peak: the largest request. artifact: the tokens of the "
        "stubs, placeholders and state documents a strategy wrote. lost: values a later "
        "call or message used that the context no longer showed; lost_results: the "
        "results read again for them; lost_said: those only removed words had held. "
        "repeated_calls: calls identical to an earlier one in the session (the same for "
        "every strategy: the agent made them). Every strategy ran with the same options: "
        f"{_options(report.options)}."
    )
    if report.first_sight is not None:
        caption += (
            f" Every strategy, none included, showed a result over {report.first_sight:,} "
            "tokens as the first-sight cap does: its head and tail, and how to read the rest "
            "(a value a later call used from what was left out counts as lost)."
        )
    text = caption + "\n\n" + "\n".join(lines) + "\n"
    if report.ablation:
        text += "\n" + ablation_table(report, net_base, cached_base)
    return text


ABLATION_COLUMNS = ("net", "cached", "lost", "lost_results", "lost_said", "peak")


def ablation_table(report: BenchReport, net_base: int, cached_base: int) -> str:
    """What each option is worth on its own: every strategy but `none` with each
    variant of the options, its net and cached tokens as a share of `none`'s."""
    head = ["strategy", "options", *ABLATION_COLUMNS, "net/none", "cached/none(cached)"]
    lines = ["| " + " | ".join(head) + " |", "|---|---" + "|---:" * (len(head) - 2) + "|"]
    for name, variants in report.ablation.items():
        for variant, figures in variants.items():
            cells = [f"{getattr(figures, c):,}" for c in ABLATION_COLUMNS]
            cells += [f"{figures.net / net_base:.3f}", f"{figures.cached / cached_base:.3f}"]
            lines.append(f"| {name} | {variant} | " + " | ".join(cells) + " |")
    caption = (
        "Ablation: each strategy with none of the options (plain), with trimming the "
        "agent's older messages to the low-water mark (trim), with the early rule "
        "(early), and with both (trim+early, the table above)."
    )
    return caption + "\n\n" + "\n".join(lines) + "\n"


def _options(options: dict[str, bool]) -> str:
    on = [name for name, value in options.items() if value]
    return ", ".join(on) if on else "none"


def _counted(encoding: str | None) -> str:
    """How the report's tokens were counted, for its caption."""
    if encoding is None:
        return "counted by the tokenizer given"
    if not tokens_exact(encoding):
        return "estimated (4 bytes a token)"
    return f"exact {encoding.removesuffix('_base')}"


def plot_series(report: BenchReport) -> tuple[str, dict[str, list[int]]]:
    """What the plot shows, and its title: for each strategy, cumulative net tokens (the
    requests and their round trips) per assistant turn, summed over every session, the
    sessions aligned by turn (turn 1 of each, then turn 2, ...; a session that has
    ended adds nothing more). The last point of each line is that strategy's `net` in
    the table."""
    summed: dict[str, list[int]] = {}
    for one in report.per_session:
        for name, series in one.per_turn.items():
            total = summed.setdefault(name, [])
            total.extend([0] * (len(series) - len(total)))
            for turn, tokens in enumerate(series):
                total[turn] += tokens
    plural = "s" if report.sessions != 1 else ""
    title = (
        f"net tokens (requests + round trips), cumulative by turn, summed over "
        f"{report.sessions} session{plural}\n(aligned by turn, as the table's net); "
        f"trigger {report.trigger:,}, keep {report.keep}"
    )
    return title, {name: list(itertools.accumulate(s)) for name, s in summed.items()}


def plot(report: BenchReport, path: str | Path) -> None:
    """A PNG of cumulative net tokens per turn, one line a strategy, summed over
    every session as the table is (see `plot_series`). Needs matplotlib (the `bench`
    extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError:
        raise MissingDependency("the benchmark's plot", "bench", "matplotlib") from None
    title, lines = plot_series(report)
    figure, axes = plt.subplots(figsize=(8, 4.5), dpi=110)
    styles = itertools.cycle(["-", "--", "-.", ":", "-"])
    for name, cumulative in lines.items():
        axes.plot(
            range(1, len(cumulative) + 1), cumulative, next(styles), label=name, linewidth=1.8
        )
    axes.set_xlabel("assistant turn")
    axes.set_ylabel("cumulative net tokens, all sessions")
    axes.set_title(title, fontsize=10)
    axes.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:,.0f}"))
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
