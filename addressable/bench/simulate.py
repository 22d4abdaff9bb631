"""Replaying a recorded session under a context strategy, and what it costs.

Every assistant message in a session is a request: the system prompt and everything
before it, as the strategy has left it. When a request is over `trigger` tokens the
strategy acts first, with its own step:

- ``none``: nothing; the context only grows.
- ``clear``: as hosted context editing does it: every tool result but the newest `keep`
  becomes a fixed placeholder, if that frees at least `clear_at_least` tokens.
- ``window``: the oldest turns (an assistant message and what follows it) are dropped,
  the task and the newest turn kept, down to the low-water mark (half the trigger), as
  truncation settings do; then it waits for the trigger again.
- ``addressable``: `ad.compact`: References and Claims with the default summariser.
- ``addressable+state``: the same, plus the state document, placed after the task.
- ``oracle``: knows the future. Where ``clear`` acts (the newest `keep` results spared,
  `clear_at_least` alike), every result that no call or message from this turn on needs
  becomes the placeholder; the others stay whole. It loses no result: the floor, in
  lost results, for a policy that evicts whole results. It is not a floor in tokens:
  keeping a result whole for many turns until a late call needs it can cost more than
  dropping it and paying one round trip then.

With `first_sight`, every strategy (`none` included) is handed a result over that many
tokens as the first-sight cap hands it to a model (`tools.firstsight.capped`): its head
and tail; a value a later call uses from the rest is lost, and costs its round trip.

Every strategy takes the same `Options`, the techniques that are not its own step:

- trim: when its step leaves the request over the low-water mark, the agent's older
  messages are cut down to it (`compaction.trim`), and when that is not enough, the
  newest results yield to the step too, oldest first, all but the newest, as
  `compact(trim_to=)` does;
- early: under the trigger, it takes its step once that pays under prompt caching
  (`compaction.early_pays`: what the step takes off each request still to come before
  the trigger, against what it writes to the cache again, the state document included).
  An early step trims nothing.

What it costs (requests, prompt caching, round trips, the window) is priced in `bench.costs`;
what each turn needs (its dependencies), in `bench.needs`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from blake3 import blake3

from .. import (
    ArgumentError,
    CachePrices,
    Compaction,
    StateDocument,
    Toolkit,
    compact,
    compaction_pays,
    count_tokens,
)
from ..compaction import capped, early_pays, trim
from ..messages import message_tokens, reading_once, set_result_text
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
    Options,
    check_settings,
    low_water,
)
from .statedoc import state_document

__all__ = ["PLACEHOLDER", "STRATEGIES", "Figures", "Options", "Run", "needs_of", "simulate"]

STRATEGIES = ("none", "clear", "window", "addressable", "addressable+state", "oracle")
PLACEHOLDER = "[tool result cleared to save context]"
# -- the replay -------------------------------------------------------------------------


@dataclass
class _Step:
    """What a strategy's step made of the context: the new one, and what it wrote."""

    context: list[dict[str, Any]]
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
    options: Options
    first_sight: int | None = None

    @property
    def low_water(self) -> int:
        return low_water(self.trigger)


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
        self.seen = _first_sight(session, settings.first_sight)
        # A message and the copy of it with one result cleared, by (message, block).
        self._cleared: dict[tuple[int, int | None], tuple[dict[str, Any], dict[str, Any]]] = {}

    def replay(self) -> Run:
        figures = self.run.figures
        seen_calls: set[str] = set()
        for turn, message in enumerate(self.session.messages):
            if message.get("role") == "assistant":
                request = self._size()
                if self.strategy != "none":
                    step = self._due(turn, request)
                    if step is not None:
                        self._take(step)
                        request = self._size()
                self._send(request)
                figures.requests += request
                spent = request
                for n, (read, source) in enumerate(self._lost(turn)):
                    call_id = reread_id(turn, n, read)
                    self.origin[call_id] = read
                    self.context = [*self.context, *read_again(source, call_id, self.session)]
                    size = self._size()
                    self._send(size)
                    figures.recovery += size
                    spent += size
                    if source.call_id is not None:
                        self.read_again.add(read)
                self.run.per_turn.append(spent)
                for call in self.needs.calls_at.get(turn, []):
                    asked = [call.name, call.arguments, call.unparsed]
                    signature = json.dumps(asked, sort_keys=True)
                    if signature in seen_calls:
                        figures.repeated_calls += 1
                    seen_calls.add(signature)
            self.context.append(self.seen.get(turn, message))
        figures.lost_results = len(self.read_again)
        figures.net = figures.requests + figures.recovery
        figures.cached = round(
            self.settings.cache_read * self.cache.read
            + self.settings.cache_write * self.cache.written
        )
        return self.run

    def _due(self, turn: int, request: int) -> _Step | None:
        """The step the strategy takes before this request, if any: over the trigger,
        its step (trimmed, with the option); under it, with the early option, its step
        untrimmed once that pays."""
        settings = self.settings
        if request > settings.trigger:
            return self._over(turn)
        if not settings.options.early or not self._may_pay():
            return None
        step = self._step(turn, settings.keep)
        if step is None:
            return None
        after = self._size(step.context)
        changed = _first_change(self.context, step.context)
        rewritten = self.tokens.total(step.context[changed:])
        pays = early_pays(
            saved=request - after,
            rewritten=rewritten,
            turns=sum(1 for m in self.context if m.get("role") == "assistant"),
            tokens=request,
            trigger=settings.trigger,
            prices=self._prices(),
        )
        return step if pays else None

    def _over(self, turn: int) -> _Step | None:
        """Its step over the trigger. With trim, the agent's older messages are cut when
        the step left the request over the low-water mark, and when that is not enough
        either, the newest results yield too, oldest first, all but the newest, as
        `compact(trim_to=)` does (`window` drops turns down to the mark itself)."""
        keep = self.settings.keep
        step = self._step(turn, keep)
        if not self.settings.options.trim or self.strategy == "window":
            return step
        if step is not None:
            step = self._trimmed(step, keep)
        keep = min(keep, len(parse_messages(self.context, self.session.shape).results))
        while keep > 1 and (step is None or self._size(step.context) > self.settings.low_water):
            keep -= 1
            relaxed = self._step(turn, keep)
            if relaxed is not None:
                step = self._trimmed(relaxed, keep)
        return step

    def _may_pay(self) -> bool:
        """For the addressable strategies, whether stubs may pay, as the list alone says
        (each stub counted at the least it takes): the store is not touched until then.
        The others' steps cost nothing to try."""
        if self.kit is None:
            return True
        settings = self.settings
        return compaction_pays(
            self._base(),
            keep_last=settings.keep,
            cache_prices=self._prices(),
            format=self.session.shape,
            budget=DEFAULT_BUDGET if settings.budget is None else settings.budget,
            trigger_tokens=settings.trigger,
            system=self.session.system,
        )

    def _take(self, step: _Step) -> None:
        self.context = step.context
        self.run.figures.artifact += step.artifact
        if step.state is not None:
            self.state, self.note = step.state, step.note

    def _trimmed(self, step: _Step, keep: int) -> _Step:
        """The step, and the agent's older messages cut down to the low-water mark when
        it left the request over it; what they quote from results as the list had them
        before the step stays."""
        done = trim(
            step.context,
            to=self.settings.low_water,
            keep_last=keep,
            format=self.session.shape,
            system=self.session.system,
            changed_from=_first_change(self.context, step.context),
            quoting=self.context,
        )
        if not done.cut:
            return step
        note = step.note
        if note is not None:  # the same message, as the trimmed list holds it
            note = done.messages[next(n for n, m in enumerate(step.context) if m is note)]
        return _Step(done.messages, step.artifact, step.state, note)

    def _base(self) -> list[dict[str, Any]]:
        """The context without the state document's message, which compaction leaves."""
        return [m for m in self.context if m is not self.note]

    def _prices(self) -> CachePrices:
        return CachePrices(read=self.settings.cache_read, write=self.settings.cache_write)

    def _size(self, context: list[dict[str, Any]] | None = None) -> int:
        """A request's tokens: the system prompt and `context` (by default, the one now)."""
        listed = self.context if context is None else context
        return self.system + self.tokens.total(listed)

    def _send(self, size: int) -> None:
        figures = self.run.figures
        figures.peak = max(figures.peak, size)
        if size > self.settings.window:
            figures.failed = 1
        self.cache.send(self.context, size)

    def _lost(self, turn: int) -> list[tuple[str, Source]]:
        """What to read or say again for the values this turn's calls and message need
        and its request does not show (results by call id, words by message), in the
        order the session showed them; counts the values in `lost`, and those only the
        agent's or the user's removed words held in `lost_said`."""
        needed = self.needs.by_turn.get(turn)
        if not needed:
            return []
        visible = "\n".join(self.tokens.text(m) for m in self.context)
        if self.session.system:
            visible += "\n" + self.session.system
        lost: dict[str, Source] = {}
        for value, source in needed:
            if value not in visible:
                self.run.figures.lost += 1
                if source.call_id is None:
                    self.run.figures.lost_said += 1
                    lost.setdefault(f"said-{source.position[0]}", source)
                else:
                    lost.setdefault(source.call_id, source)
        return sorted(lost.items(), key=lambda item: item[1].position)

    def _step(self, turn: int, keep: int) -> _Step | None:
        """The strategy's own step on the context, the newest `keep` results spared
        (None: it does nothing)."""
        if self.strategy == "clear":
            return self._clear(lambda call_id: False, keep)
        if self.strategy == "oracle":
            last_use = self.needs.last_use

            def needed(call_id: str) -> bool:
                return last_use.get(self.origin.get(call_id, call_id), -1) >= turn

            return self._clear(needed, keep)
        if self.strategy == "window":
            kept = _window(self.context, self.settings.low_water, self.system, self.tokens)
            return None if len(kept) == len(self.context) else _Step(kept)
        return self._compact(turn, keep)

    def _clear(self, spare: Callable[[str], bool], keep: int) -> _Step | None:
        """Every result but the newest `keep` (and those `spare` names) becomes the
        placeholder, if that frees at least `clear_at_least` tokens."""
        shape = self.session.shape
        results = parse_messages(self.context, shape).results
        older = results[: max(0, len(results) - keep)]
        out = list(self.context)
        freed = 0
        placeholders = 0
        for result in older:
            if result.text == PLACEHOLDER or spare(result.call_id):
                continue
            before = out[result.index]
            # The same message cleared the same way gives the same copy: a step is tried
            # on every turn under the trigger (the early rule), for the same old results.
            known = self._cleared.get((id(before), result.block))
            if known is not None and known[0] is before:
                out[result.index] = known[1]
            else:
                out[result.index] = json.loads(json.dumps(before))  # the session's stays
                set_result_text(out, result, PLACEHOLDER, shape)
                self._cleared[(id(before), result.block)] = (before, out[result.index])
            freed += self.tokens.of(before) - self.tokens.of(out[result.index])
            placeholders += 1
        if freed < self.settings.clear_at_least or not placeholders:
            return None
        return _Step(out, artifact=placeholders * count_tokens(PLACEHOLDER))

    def _compact(self, turn: int, keep: int) -> _Step | None:
        """Every old result a stub (trimming is the caller's), and the state document."""
        assert self.kit is not None
        session, settings = self.session, self.settings
        done: Compaction = compact(
            self._base(),
            kit=self.kit,
            keep_last=keep,
            format=session.shape,
            system=session.system,
            budget=DEFAULT_BUDGET if settings.budget is None else settings.budget,
        )
        if not done.evicted:
            return None
        step = _Step(done.messages, artifact=sum(e.tokens_after for e in done.evicted))
        if self.strategy == "addressable+state" and session.task is not None:
            document = state_document(session, self.kit, turn, self.state, self.needs)
            if document is not None:
                text = "State of the work so far:\n" + document.model_dump_json(
                    exclude_defaults=True
                )
                fresh = {"role": "user", "content": text}
                out = step.context
                first_user = next((n for n, m in enumerate(out) if m.get("role") == "user"), 0)
                step = _Step(
                    [*out[: first_user + 1], fresh, *out[first_user + 1 :]],
                    artifact=step.artifact + self.tokens.of(fresh),
                    state=document,
                    note=fresh,
                )
        return step


def _first_change(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
    """The first message of `after` that is not `before`'s at the same place: where the
    prompt cache breaks."""
    for n, (old, new) in enumerate(zip(before, after, strict=False)):
        if old is not new and old != new:  # compaction gives copies of what it keeps
            return n
    return min(len(before), len(after))


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
    options: Options | None = None,
    first_sight: int | None = None,
) -> Run:
    """Replay `session` under `strategy` with `options` (every one on, by default); see
    the module docstring. `needs` is what `needs_of(session)` gives, when it is already
    known. `tokenizer` (any callable `str -> int`) makes every count; without it,
    `count_tokens` does. `first_sight`: the cap results are shown with (None: whole)."""
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
        first_sight=first_sight,
    )
    settings = _Settings(
        trigger,
        keep,
        budget,
        clear_at_least,
        window,
        cache_read,
        cache_write,
        Options() if options is None else options,
        first_sight,
    )
    kit = kit_for(session) if strategy.startswith("addressable") else None
    with using_tokenizer(tokenizer), reading_once():
        return _Replay(session, strategy, settings, kit, needs or needs_of(session)).replay()


def _first_sight(session: Session, cap: int | None) -> dict[int, dict[str, Any]]:
    """The messages of `session` that hold a result over `cap` tokens, by position, as
    a model is first handed them: each such result capped (`tools.firstsight.capped`),
    named by a stand-in record id made from its call's."""
    if cap is None:
        return {}
    seen: dict[int, dict[str, Any]] = {}
    shape = session.shape
    for result in parse_messages(session.messages, shape).results:
        shown = capped(result.text, cap, blake3(result.call_id.encode()).hexdigest()[:16])
        if shown == result.text:
            continue
        if result.index not in seen:  # the session's stays as it is
            seen[result.index] = json.loads(json.dumps(session.messages[result.index]))
        set_result_text([seen[result.index]], replace(result, index=0), shown, shape)
    return seen


def _window(
    context: list[dict[str, Any]], goal: int, system: int, tokens: Tokens
) -> list[dict[str, Any]]:
    """The context with its oldest turns dropped until it is at most `goal` tokens; the
    task (what comes before the first assistant message) and the newest turn stay."""
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
        > goal
    ):
        turns.pop(0)
    return head + [m for t in turns for m in t]
