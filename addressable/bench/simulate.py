"""Replaying a recorded session under a context strategy, and what it costs.

Every assistant message in a session is a request: the system prompt and everything
before it, as the strategy has left it. When a request is over `trigger` tokens the
strategy acts first:

- ``none``: nothing; the context only grows.
- ``clear``: as hosted context editing does it: every tool result but the newest `keep`
  becomes a fixed placeholder, if that frees at least `clear_at_least` tokens.
- ``window``: the oldest turns (an assistant message and its results) are dropped, the
  task and the newest turn kept, until the request fits under the trigger.
- ``addressable``: `ad.compact`: References and Claims with the default summariser, at
  a request over the trigger, or before it once compacting pays at the cache prices
  (`ad.compaction_pays`: the old results have cost in cache reads `PAYBACK` times what
  compacting costs to write again).
- ``addressable+state``: the same, plus the state document, placed after the task.
- ``oracle``: knows the future. At the same points as ``clear`` (a request over the
  trigger, the newest `keep` results spared, `clear_at_least` alike), every result that
  no call from this turn on needs becomes the placeholder; the others stay whole. It
  loses nothing: the floor, in lost values, for a policy that evicts whole results. It
  is not a floor in tokens: keeping a result whole for many turns until a late call
  needs it can cost more than dropping it and paying one round trip then.

What it costs (requests, prompt caching, round trips, the window) is priced in `bench.costs`;
what each turn needs (its dependencies), in `bench.needs`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import (
    ArgumentError,
    CachePrices,
    StateDocument,
    Toolkit,
    compact,
    compaction_pays,
    count_tokens,
)
from ..messages import message_text, message_tokens, set_result_text
from ..messages import parse as parse_messages
from ..tokens import Tokenizer, using_tokenizer
from .costs import (
    Figures,
    PromptCache,
    Run,
    Tokens,
    read_again,
    reread_id,
)
from .needs import Needs, Source, needs_of
from .sessions import Session
from .settings import (
    DEFAULT_BUDGET,
    DEFAULT_CACHE_READ,
    DEFAULT_CACHE_WRITE,
    DEFAULT_CLEAR_AT_LEAST,
    DEFAULT_WINDOW,
    check_settings,
    compact_options,
)
from .statedoc import state_document

__all__ = ["PLACEHOLDER", "STRATEGIES", "Figures", "Run", "needs_of", "simulate"]

STRATEGIES = ("none", "clear", "window", "addressable", "addressable+state", "oracle")
PLACEHOLDER = "[tool result cleared to save context]"
# -- the replay -------------------------------------------------------------------------


@dataclass
class _Made:
    artifact: int = 0
    state: StateDocument | None = None
    note: dict[str, Any] | None = None  # the state document's message, when there is one


@dataclass(frozen=True)
class _Settings:
    trigger: int
    keep: int
    budget: int | None
    clear_at_least: int
    window: int
    cache_read: float
    cache_write: float


class _Replay:
    """One strategy over one session."""

    def __init__(
        self,
        session: Session,
        strategy: str,
        settings: _Settings,
        kit: Toolkit | None,
        needs: Needs,
    ) -> None:
        self.session = session
        self.strategy = strategy
        self.settings = settings
        self.kit = kit
        self.needs = needs
        self.tokens = Tokens()
        self.system = message_tokens([], session.system)
        self.cache = PromptCache(self.system, self.tokens)
        self.context: list[dict[str, Any]] = []
        self.run = Run(Figures())
        self.origin: dict[str, str] = {}  # round trip's call id -> the result it read again
        self.read_again: set[str] = set()
        self.state: StateDocument | None = None
        self.note: dict[str, Any] | None = None

    def replay(self) -> Run:
        figures = self.run.figures
        seen_calls: set[str] = set()
        for turn, message in enumerate(self.session.messages):
            if message.get("role") == "assistant":
                request = self._size()
                due = self._due(request)
                if due:
                    self._act(turn, early=due == "early")
                    request = self._size()
                self._send(request)
                figures.requests += request
                spent = request
                for n, source in enumerate(self._lost(turn)):
                    call_id = reread_id(turn, n, source.call_id)
                    self.origin[call_id] = source.call_id
                    self.context = [*self.context, *read_again(source, call_id, self.session)]
                    size = self._size()
                    self._send(size)
                    figures.recovery += size
                    spent += size
                    self.read_again.add(source.call_id)
                self.run.per_turn.append(spent)
                for call in self.needs.calls_at.get(turn, []):
                    asked = [call.name, call.arguments, call.unparsed]
                    signature = json.dumps(asked, sort_keys=True)
                    if signature in seen_calls:
                        figures.repeated_calls += 1
                    seen_calls.add(signature)
            self.context.append(message)
        figures.lost_results = len(self.read_again)
        figures.net = figures.requests + figures.recovery
        figures.cached = round(
            self.settings.cache_read * self.cache.read
            + self.settings.cache_write * self.cache.written
        )
        return self.run

    def _due(self, request: int) -> str | None:
        """Whether the strategy acts before this request: "trigger" over the trigger;
        "early" under it, for the addressable strategies, once compacting may pay (the
        list says so; `compact` decides on the results it may stub)."""
        settings = self.settings
        if self.strategy == "none":
            return None
        if request > settings.trigger:
            return "trigger"
        if self.kit is not None and compaction_pays(
            self._base(),
            keep_last=settings.keep,
            cache_prices=self._prices(),
            format=self.session.shape,
            budget=DEFAULT_BUDGET if settings.budget is None else settings.budget,
        ):
            return "early"
        return None

    def _base(self) -> list[dict[str, Any]]:
        """The context without the state document's message, which compaction leaves."""
        return [m for m in self.context if m is not self.note]

    def _prices(self) -> CachePrices:
        return CachePrices(read=self.settings.cache_read, write=self.settings.cache_write)

    def _size(self) -> int:
        return self.system + sum(self.tokens.of(m) for m in self.context)

    def _send(self, size: int) -> None:
        figures = self.run.figures
        figures.peak = max(figures.peak, size)
        if size > self.settings.window:
            figures.failed = 1
        self.cache.send(self.context, size)

    def _lost(self, turn: int) -> list[Source]:
        """The sources of the values this turn's calls need and its request does not
        show, in the order the session showed them; counts the values in `lost`."""
        needed = self.needs.by_turn.get(turn)
        if not needed:
            return []
        visible = "\n".join(message_text(m) for m in self.context)
        if self.session.system:
            visible += "\n" + self.session.system
        lost: dict[str, Source] = {}
        for value, source in needed:
            if value not in visible:
                self.run.figures.lost += 1
                lost.setdefault(source.call_id, source)
        return sorted(lost.values(), key=lambda s: s.position)

    def _act(self, turn: int, early: bool = False) -> None:
        if self.strategy == "clear":
            made = self._clear(lambda call_id: False)
        elif self.strategy == "oracle":
            last_use = self.needs.last_use

            def needed(call_id: str) -> bool:
                return last_use.get(self.origin.get(call_id, call_id), -1) >= turn

            made = self._clear(needed)
        elif self.strategy == "window":
            self.context = _window(self.context, self.settings.trigger, self.system, self.tokens)
            made = _Made()
        else:
            made = self._compact(turn, early)
        self.run.figures.artifact += made.artifact
        if made.state is not None:
            self.state, self.note = made.state, made.note

    def _clear(self, spare: Callable[[str], bool]) -> _Made:
        """Every result but the newest `keep` (and those `spare` names) becomes the
        placeholder, if that frees at least `clear_at_least` tokens."""
        shape = self.session.shape
        results = parse_messages(self.context, shape).results
        older = results[: max(0, len(results) - self.settings.keep)]
        out = list(self.context)
        freed = 0
        placeholders = 0
        for result in older:
            if result.text == PLACEHOLDER or spare(result.call_id):
                continue
            before = out[result.index]
            out[result.index] = json.loads(json.dumps(before))  # the session's stays as is
            set_result_text(out, result, PLACEHOLDER, shape)
            freed += self.tokens.of(before) - self.tokens.of(out[result.index])
            placeholders += 1
        if freed < self.settings.clear_at_least or not placeholders:
            return _Made()
        self.context = out
        return _Made(artifact=placeholders * count_tokens(PLACEHOLDER))

    def _compact(self, turn: int, early: bool) -> _Made:
        assert self.kit is not None
        session, settings = self.session, self.settings
        options = compact_options(settings.trigger, settings.budget, session.system)
        if early:  # compact decides, and cuts nothing under the trigger
            options = {k: v for k, v in options.items() if k != "trim_to"}
            options["cache_prices"] = self._prices()
        done = compact(
            self._base(), kit=self.kit, keep_last=settings.keep, format=session.shape, **options
        )
        if early and not done.evicted:  # it did not pay after all: the list stays as it was
            return _Made()
        made = _Made(artifact=sum(e.tokens_after for e in done.evicted))
        out = done.messages
        if self.strategy == "addressable+state" and session.task is not None:
            document = state_document(session, self.kit, turn, self.state, self.needs)
            if document is not None:
                text = "State of the work so far:\n" + document.model_dump_json(
                    exclude_defaults=True
                )
                fresh = {"role": "user", "content": text}
                made = _Made(
                    artifact=made.artifact + self.tokens.of(fresh), state=document, note=fresh
                )
                first_user = next((n for n, m in enumerate(out) if m.get("role") == "user"), 0)
                out = [*out[: first_user + 1], fresh, *out[first_user + 1 :]]
        self.context = out
        return made


def simulate(
    session: Session,
    strategy: str,
    *,
    trigger: int,
    keep: int,
    kit_for: Callable[[Session], Toolkit],
    budget: int | None = None,
    clear_at_least: int = DEFAULT_CLEAR_AT_LEAST,
    window: int = DEFAULT_WINDOW,
    cache_read: float = DEFAULT_CACHE_READ,
    cache_write: float = DEFAULT_CACHE_WRITE,
    needs: Needs | None = None,
    tokenizer: Tokenizer | None = None,
) -> Run:
    """Replay `session` under `strategy`; see the module docstring. `needs` is what
    `needs_of(session)` gives, when it is already known. `tokenizer` (any callable
    `str -> int`) makes every count; without it, `count_tokens` does."""
    if strategy not in STRATEGIES:
        raise ArgumentError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    check_settings(
        trigger=trigger,
        keep=keep,
        window=window,
        cache_read=cache_read,
        cache_write=cache_write,
        budget=budget,
        clear_at_least=clear_at_least,
    )
    settings = _Settings(trigger, keep, budget, clear_at_least, window, cache_read, cache_write)
    kit = kit_for(session) if strategy.startswith("addressable") else None
    with using_tokenizer(tokenizer):
        return _Replay(session, strategy, settings, kit, needs or needs_of(session)).replay()


def _window(
    context: list[dict[str, Any]], trigger: int, system: int, tokens: Tokens
) -> list[dict[str, Any]]:
    first = next((n for n, m in enumerate(context) if m.get("role") == "assistant"), len(context))
    head, body = context[:first], context[first:]
    turns: list[list[dict[str, Any]]] = []
    for message in body:
        if message.get("role") == "assistant" or not turns:
            turns.append([])
        turns[-1].append(message)
    while (
        len(turns) > 1  # the newest turn holds what the next message answers: never dropped
        and system + sum(tokens.of(m) for m in head) + sum(tokens.of(m) for t in turns for m in t)
        > trigger
    ):
        turns.pop(0)
    return head + [m for t in turns for m in t]
