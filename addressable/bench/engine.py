"""The engine: every session replayed under every strategy, into one report."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from .. import Toolkit, open_store, token_counter
from ..tokens import TokenCounter, Tokenizer, using_tokenizer
from .needs import Needs
from .report import BenchReport, SessionReport
from .sessions import BadLine, Session
from .settings import (
    DEFAULT_CACHE_READ,
    DEFAULT_CACHE_WRITE,
    DEFAULT_CLEAR_AT_LEAST,
    DEFAULT_KEEP,
    DEFAULT_TRIGGER,
    DEFAULT_WINDOW,
    VARIANTS,
    Options,
    check_settings,
    low_water,
)
from .simulate import STRATEGIES, Figures, Run, needs_of, simulate

__all__ = ["bench"]


def bench(
    sessions: Iterable[Session | BadLine],
    *,
    trigger: int = DEFAULT_TRIGGER,
    keep: int = DEFAULT_KEEP,
    budget: int | None = None,
    clear_at_least: int = DEFAULT_CLEAR_AT_LEAST,
    window: int = DEFAULT_WINDOW,
    cache_read: float = DEFAULT_CACHE_READ,
    cache_write: float = DEFAULT_CACHE_WRITE,
    first_sight: int | None = None,
    kits: dict[str, Toolkit] | None = None,
    progress: Callable[[str, int], None] | None = None,
    tokenizer: Tokenizer | None = None,
    ablate: bool = False,
) -> BenchReport:
    """Replay every session under every strategy. `kits` gives the kit that recorded a
    session (by id), so that its stubs point at the exact records; others get a fresh
    in-memory kit. `progress(session_id, steps_done)` is called as it goes. Settings
    that make no sense (a trigger under 1, a negative keep or price...) raise
    `ArgumentError` naming each, before anything runs.

    A session whose request goes over `window` for a strategy counts in that strategy's
    `failed`; its figures still count in the totals, for the whole session (see
    `bench.simulate`), so that every strategy's totals cover the same turns.

    Every strategy runs with the same `Options` (trimming and the early rule, both on).
    With `ablate`, each one but `none` also runs with each of `VARIANTS` (the options
    one at a time, and none), into the report's `ablation`.

    `first_sight`: every strategy, `none` included, shows the model a result over that
    many tokens as the first-sight cap does (`max_result_tokens`); None, whole.

    `tokenizer` (any callable `str -> int`) makes every count, as in `compact`; without
    it, `count_tokens` (cl100k_base) does. The report's `encoding` names the encoding
    counted in (a `token_counter(name)` counts in `name`), or is None for any other
    tokenizer."""
    check_settings(
        trigger=trigger,
        keep=keep,
        window=window,
        cache_read=cache_read,
        cache_write=cache_write,
        budget=budget,
        clear_at_least=clear_at_least,
        first_sight=first_sight,
    )
    with using_tokenizer(tokenizer):
        return _bench(
            sessions,
            trigger=trigger,
            keep=keep,
            budget=budget,
            clear_at_least=clear_at_least,
            window=window,
            cache_read=cache_read,
            cache_write=cache_write,
            first_sight=first_sight,
            kits=kits,
            progress=progress,
            encoding=_encoding_of(tokenizer),
            ablate=ablate,
        )


def _encoding_of(tokenizer: Tokenizer | None) -> str | None:
    """The encoding `tokenizer` counts in: the default one without a tokenizer, a token
    counter's own; None for a tokenizer that names none."""
    if tokenizer is None:
        return token_counter().encoding
    return tokenizer.encoding if isinstance(tokenizer, TokenCounter) else None


def _bench(
    sessions: Iterable[Session | BadLine],
    *,
    trigger: int,
    keep: int,
    budget: int | None,
    clear_at_least: int,
    window: int,
    cache_read: float,
    cache_write: float,
    first_sight: int | None,
    kits: dict[str, Toolkit] | None,
    progress: Callable[[str, int], None] | None,
    encoding: str | None,
    ablate: bool,
) -> BenchReport:
    totals = {name: Figures() for name in STRATEGIES}
    varied = [name for name in STRATEGIES if name != "none"] if ablate else []
    ablation = {name: {variant: Figures() for variant in VARIANTS} for name in varied}
    reports: list[SessionReport] = []
    errors: list[BadLine] = []
    done = 0
    settings: dict[str, Any] = {
        "trigger": trigger,
        "keep": keep,
        "budget": budget,
        "clear_at_least": clear_at_least,
        "window": window,
        "cache_read": cache_read,
        "cache_write": cache_write,
        "first_sight": first_sight,
    }
    for item in sessions:
        if isinstance(item, BadLine):
            errors.append(item)
            continue
        runs: dict[str, Run] = {}
        kit = (kits or {}).get(item.session_id) or Toolkit(
            open_store("memory://"), session=item.session_id
        )
        needs = needs_of(item)

        for name in STRATEGIES:
            runs[name] = _run(item, name, Options(), kit, needs, runs, settings)
            totals[name] = totals[name].add(runs[name].figures)
            done += 1
            if progress:
                progress(item.session_id, done)
        for variant, options in VARIANTS.items():
            alike: dict[str, Run] = {}
            for name in varied:
                same = options == Options()  # the default run, already made
                alike[name] = (
                    runs[name] if same else _run(item, name, options, kit, needs, alike, settings)
                )
                ablation[name][variant] = ablation[name][variant].add(alike[name].figures)
        reports.append(
            SessionReport(
                session_id=item.session_id,
                strategies={n: r.figures for n, r in runs.items()},
                per_turn={n: r.per_turn for n, r in runs.items()},
            )
        )
    return BenchReport(
        sessions=len(reports),
        trigger=trigger,
        keep=keep,
        window=window,
        cache_read=cache_read,
        cache_write=cache_write,
        first_sight=first_sight,
        encoding=encoding,
        low_water=low_water(trigger),
        options=dataclasses.asdict(Options()),
        strategies=totals,
        ablation=ablation,
        per_session=reports,
        errors=errors,
    )


def _run(
    session: Session,
    name: str,
    options: Options,
    kit: Toolkit,
    needs: Needs,
    earlier: dict[str, Run],
    settings: dict[str, Any],
) -> Run:
    """One strategy over one session; `earlier` the runs of the same options before it."""
    if name == "addressable+state" and session.task is None:
        return earlier["addressable"]  # no task list: no document to add
    return simulate(session, name, kit_for=_constant(kit), needs=needs, options=options, **settings)


def _constant(kit: Toolkit) -> Callable[[Session], Toolkit]:
    return lambda session: kit
