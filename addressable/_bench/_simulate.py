"""Replaying a recorded session under a context strategy, and what it costs.

Every assistant message in a session is a request: the system prompt and everything
before it, as the strategy has left it. When a request is over `trigger` tokens the
strategy acts first:

- ``none``: nothing; the context only grows.
- ``clear``: as hosted context editing does it: every tool result but the newest `keep`
  becomes a fixed placeholder, if that frees at least `clear_at_least` tokens.
- ``window``: the oldest turns (an assistant message and its results) are dropped, the
  task kept, until the request fits under the trigger.
- ``addressable``: `ad.compact`: References and Claims with the default summariser.
- ``addressable+state``: the same, plus the state document, placed after the task.
- ``oracle``: knows the future. At the same points as ``clear`` (a request over the
  trigger, the newest `keep` results spared, `clear_at_least` alike), every result that
  no call from this turn on needs becomes the placeholder; the others stay whole. It
  loses nothing: the floor, in lost values, for a policy that evicts whole results. It
  is not a floor in tokens: keeping a result whole for many turns until a late call
  needs it can cost more than dropping it and paying one round trip then.

What it costs, priced the way agents pay:

- A dependency is a value of 8 or more characters in a tool call's arguments that first
  appeared in an earlier tool result (its source). It is lost when it is not in the
  request that makes the call (stubs included): `lost` counts these values.
- Recovery is a round trip. For each result a turn lost values from (in the order the
  session showed them), the agent makes one more request: it runs the call that gave the
  result again (same tool, same arguments) and reads it in full, so that request is the
  context at that turn plus the call and the result. The result is then in the context
  like any other, until the strategy evicts it again; the turn's own message comes after
  it. `recovery` sums those requests, `lost_results` counts the distinct results read
  again, `requests` sums the recorded turns' requests, `net` is requests + recovery.
  The strategy acts only before the recorded turns' requests, not between round trips.
- Prompt caching. `cached` prices every request, round trips included, in order: the
  prefix it shares with the previous request at `cache_read`, the rest at `cache_write`
  (in input-token units, rounded to a whole token per session). The shared prefix is the
  system prompt, the messages equal to the previous request's at the same positions, and,
  of the first message that differs, when the role is the same, its text up to the last
  line break (at or before the first differing character) that both texts follow with a
  visible character: a boundary of cl100k's pre-tokeniser, so the tokens up to there are
  exact, and what is left of the shared text after it (part of a line, or a few indented
  lines) is not counted: conservative. The first request of a session shares nothing.
- The window is a hard limit. A request (round trips included) over `window` tokens is
  one a real API refuses: the session counts in `failed` for that strategy. Its figures
  still cover the whole session, as if the request had gone through, so that every
  strategy's totals cover the same turns and the ratios compare the same work; a
  strategy with failures cannot run those sessions, whatever its figures.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from .. import (
    MIN_BUDGET,
    ArgumentError,
    Conversation,
    Finding,
    OpenItem,
    StateDocument,
    Tokenizer,
    ToolCall,
    Toolkit,
    ToolResult,
    compact,
    compact_state,
    count_tokens,
    message_text,
    message_tokens,
    parse_messages,
    set_result_text,
    using_tokenizer,
)
from ._sessions import Session

STRATEGIES = ("none", "clear", "window", "addressable", "addressable+state", "oracle")
PLACEHOLDER = "[tool result cleared to save context]"
DEFAULT_TRIGGER = 100_000  # input tokens, as hosted context editing defaults
DEFAULT_KEEP = 3  # tool results kept whole
DEFAULT_WINDOW = 200_000  # input tokens a request may have before the API refuses it
DEFAULT_CACHE_READ = 0.1  # price of a cached input token, in input tokens
DEFAULT_CACHE_WRITE = 1.25  # price of an input token written to the cache
DEFAULT_CLEAR_AT_LEAST = 0  # tokens `clear` must free to act
MIN_VALUE = 8  # characters: shorter values are too common to count as dependencies
_VALUE = re.compile(r"[\w./:@#?=&%+~-]{8,}")
REREAD = "reread"  # the tool-call ids of round trips start with it


class Figures(BaseModel):
    """What one strategy cost on one session (or in total), in tokens or counts."""

    requests: int = 0  # request tokens summed over every recorded assistant turn
    peak: int = 0  # the largest request, round trips included
    artifact: int = 0  # tokens of the stubs, placeholders and state documents made
    lost: int = 0  # dependencies (values) not in the request when a call needed them
    lost_results: int = 0  # distinct results read again to get lost values back
    recovery: int = 0  # tokens of the round trips' requests
    net: int = 0  # requests + recovery
    cached: int = 0  # every request priced with prompt caching, in input-token units
    failed: int = 0  # sessions with a request over the window
    repeated_calls: int = 0  # calls identical to an earlier one

    def add(self, other: Figures) -> Figures:
        return Figures(
            **{
                k: getattr(self, k) + getattr(other, k) for k in Figures.model_fields if k != "peak"
            },
            peak=max(self.peak, other.peak),
        )


@dataclass
class Run:
    """One strategy over one session: the figures and the tokens sent per recorded turn
    (its request plus its round trips)."""

    figures: Figures
    per_turn: list[int] = field(default_factory=list)


def check_settings(
    *,
    trigger: Any,
    keep: Any,
    window: Any = DEFAULT_WINDOW,
    cache_read: Any = DEFAULT_CACHE_READ,
    cache_write: Any = DEFAULT_CACHE_WRITE,
    budget: Any = None,
    clear_at_least: Any = DEFAULT_CLEAR_AT_LEAST,
    flags: bool = False,
) -> None:
    """Raise `ArgumentError` naming every setting that makes no sense (each with its
    value, on one line); `flags` names them as the command line's options."""

    def name(setting: str) -> str:
        return "--" + setting.replace("_", "-") if flags else setting

    problems = []
    whole = {
        "trigger": (trigger, 1),
        "keep": (keep, 0),
        "window": (window, 1),
        "budget": (budget, MIN_BUDGET),  # what compact takes
        "clear_at_least": (clear_at_least, 0),
    }
    for setting, (value, least) in whole.items():
        if value is None and setting == "budget":
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"{name(setting)} must be a whole number, not {value!r}")
        elif value < least:
            problems.append(f"{name(setting)} must be {least} or more, not {value}")
    for setting, price in (("cache_read", cache_read), ("cache_write", cache_write)):
        if isinstance(price, bool) or not isinstance(price, int | float):
            problems.append(f"{name(setting)} must be a number, not {price!r}")
        elif not math.isfinite(price) or price < 0:
            problems.append(f"{name(setting)} must be a finite price of 0 or more, not {price}")
    if problems:
        raise ArgumentError("; ".join(problems))


def compact_options(trigger: int, budget: int | None, system: str | None) -> dict[str, Any]:
    """What the `addressable` strategies pass to `ad.compact` besides the messages, the
    kit, `keep_last` and `format`. The system prompt counts in the request's tokens."""
    options: dict[str, Any] = {"system": system}
    if budget is not None:
        options["budget"] = budget
    return options


# -- what each turn needs, worked out once a session ----------------------------------


@dataclass(frozen=True)
class Source:
    """A tool result of the recorded session that a value first appeared in, and the call
    that gave it (run again to read it again)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    text: str
    position: tuple[int, int]  # message index and block: the order the session showed it


@dataclass(frozen=True)
class Needs:
    """For each assistant turn, the values its calls take from earlier results (one entry
    a value a call, with its source); for each result, the last turn that needs it; the
    session's calls and results, as `parse_messages` found them; and the calls of each
    message that makes some, in its order."""

    by_turn: dict[int, list[tuple[str, Source]]]
    last_use: dict[str, int]
    conversation: Conversation
    calls_at: dict[int, list[ToolCall]]


def needs_of(session: Session) -> Needs:
    """What every turn of `session` needs; the same for every strategy."""
    messages = session.messages
    conversation = parse_messages(messages, session.shape)
    texts = [message_text(m) for m in messages]
    results_at: dict[int, list[ToolResult]] = {}
    for result in conversation.results:
        results_at.setdefault(result.index, []).append(result)
    calls_at: dict[int, list[ToolCall]] = {}
    for call in conversation.calls.values():
        calls_at.setdefault(call.index, []).append(call)
    sources: dict[str, Source] = {}
    by_turn: dict[int, list[tuple[str, Source]]] = {}
    last_use: dict[str, int] = {}
    for turn, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        for made in calls_at.get(turn, []):
            for value in sorted(values_in(made.arguments)):
                first = _first_seen_in_result(value, turn, texts, results_at)
                if first is None:
                    continue
                source = sources.get(first.call_id)
                if source is None:
                    call = conversation.calls[first.call_id]
                    source = Source(
                        first.call_id,
                        call.name,
                        call.arguments,
                        first.text,
                        (first.index, -1 if first.block is None else first.block),
                    )
                    sources[first.call_id] = source
                by_turn.setdefault(turn, []).append((value, source))
                last_use[source.call_id] = turn
    return Needs(by_turn, last_use, conversation, calls_at)


def _first_seen_in_result(
    value: str, turn: int, texts: list[str], results_at: dict[int, list[ToolResult]]
) -> ToolResult | None:
    """The first tool result before `turn` that holds `value`, if the value appeared
    there before anywhere else (the task, the model's own words)."""
    for index in range(turn):
        if value not in texts[index]:
            continue  # a result's text is part of its message's text
        for result in results_at.get(index, ()):
            if value in result.text:
                return result
        return None
    return None


# -- the replay -------------------------------------------------------------------------


class _Tokens:
    """Token counts of messages, each counted once however often it is sent."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Any, int]] = {}

    def of(self, message: dict[str, Any]) -> int:
        entry = self._seen.get(id(message))
        if entry is None or entry[0] is not message:
            entry = (message, message_tokens([message]))
            self._seen[id(message)] = entry
        return entry[1]


class _Cache:
    """Prompt caching: how much of each request was the previous request's prefix."""

    def __init__(self, system: int, tokens: _Tokens) -> None:
        self._system = system
        self._tokens = tokens
        self._previous: list[dict[str, Any]] | None = None
        self.read = 0  # tokens priced as cache reads
        self.written = 0  # tokens priced as cache writes

    def send(self, request: list[dict[str, Any]], total: int) -> None:
        shared = 0 if self._previous is None else self._shared(self._previous, request)
        self.read += shared
        self.written += total - shared
        self._previous = list(request)

    def _shared(self, before: list[dict[str, Any]], now: list[dict[str, Any]]) -> int:
        shared = self._system
        k = 0
        while k < min(len(before), len(now)) and (before[k] is now[k] or before[k] == now[k]):
            shared += self._tokens.of(now[k])
            k += 1
        if k < min(len(before), len(now)) and before[k].get("role") == now[k].get("role"):
            shared += shared_text_tokens(message_text(before[k]), message_text(now[k]))
        return shared


def shared_text_tokens(a: str, b: str) -> int:
    """Tokens of the longest prefix of `a` and `b` known to be the same tokens in both:
    up to a line break followed by a visible character (a boundary of cl100k's
    pre-tokeniser), before the first character that differs."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # the common prefix's length, by halving: slices compare in C
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    common = low
    if common == len(a) == len(b):
        return count_tokens(a)

    def starts_token(text: str, at: int) -> bool:
        return at < len(text) and not text[at].isspace()

    cut = a.rfind("\n", 0, common)
    while cut >= 0:
        start = cut + 1
        if starts_token(a, start) and starts_token(b, start):
            return count_tokens(a[:start])
        cut = a.rfind("\n", 0, cut)
    return 0


def reread_id(turn: int, n: int, call_id: str) -> str:
    """The tool-call id of the `n`th round trip at `turn`, reading `call_id`'s result again."""
    return f"{REREAD}-{turn}-{n}-{call_id}"


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
        self.tokens = _Tokens()
        self.system = message_tokens([], session.system)
        self.cache = _Cache(self.system, self.tokens)
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
                if request > self.settings.trigger and self.strategy != "none":
                    self._act(turn)
                    request = self._size()
                self._send(request)
                figures.requests += request
                spent = request
                for n, source in enumerate(self._lost(turn)):
                    call_id = reread_id(turn, n, source.call_id)
                    self.origin[call_id] = source.call_id
                    self.context = [*self.context, *_read_again(source, call_id, self.session)]
                    size = self._size()
                    self._send(size)
                    figures.recovery += size
                    spent += size
                    self.read_again.add(source.call_id)
                self.run.per_turn.append(spent)
                for call in self.needs.calls_at.get(turn, []):
                    signature = json.dumps([call.name, call.arguments], sort_keys=True)
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

    def _act(self, turn: int) -> None:
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
            made = self._compact(turn)
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

    def _compact(self, turn: int) -> _Made:
        assert self.kit is not None
        session, settings = self.session, self.settings
        base = [m for m in self.context if m is not self.note]
        done = compact(
            base,
            kit=self.kit,
            keep_last=settings.keep,
            format=session.shape,
            **compact_options(settings.trigger, settings.budget, session.system),
        )
        made = _Made(artifact=sum(e.tokens_after for e in done.evicted))
        out = done.messages
        if self.strategy == "addressable+state" and session.task is not None:
            document = _state_document(session, self.kit, turn, self.state, self.needs)
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


def _read_again(source: Source, call_id: str, session: Session) -> list[dict[str, Any]]:
    """A round trip in the session's shape: the call that gave `source`, run again, and
    its result in full."""
    if session.shape == "anthropic":
        return [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": source.name,
                        "input": source.arguments,
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call_id, "content": source.text}
                ],
            },
        ]
    if session.shape == "openai":
        call: dict[str, Any] = {
            "id": call_id,
            "type": "function",
            "function": {"name": source.name, "arguments": json.dumps(source.arguments)},
        }
        return [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": source.text},
        ]
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": call_id, "name": source.name, "arguments": source.arguments}],
        },
        {"role": "tool", "tool_call_id": call_id, "name": source.name, "content": source.text},
    ]


def _window(
    context: list[dict[str, Any]], trigger: int, system: int, tokens: _Tokens
) -> list[dict[str, Any]]:
    first = next((n for n, m in enumerate(context) if m.get("role") == "assistant"), len(context))
    head, body = context[:first], context[first:]
    turns: list[list[dict[str, Any]]] = []
    for message in body:
        if message.get("role") == "assistant" or not turns:
            turns.append([])
        turns[-1].append(message)
    while (
        turns
        and system + sum(tokens.of(m) for m in head) + sum(tokens.of(m) for t in turns for m in t)
        > trigger
    ):
        turns.pop(0)
    return head + [m for t in turns for m in t]


def _state_document(
    session: Session, kit: Toolkit, turn: int, previous: StateDocument | None, needs: Needs
) -> StateDocument | None:
    """The document a model would write at this turn, from the session's findings."""
    assert session.task is not None
    task = session.task
    known = [f for f in session.findings if int(f.get("turn", 0)) < turn]

    def generate(prompt: str) -> StateDocument:
        done = {f["item"] for f in known}
        return StateDocument(
            task=task,
            findings=[
                Finding(
                    item=f["item"],
                    status=f["status"],
                    established=f["established"],
                    evidence=list(f.get("evidence", [])),
                )
                for f in known
            ],
            open=[
                OpenItem(item=i, blocked_on="not looked at yet")
                for i in task.items
                if i not in done
            ],
        )

    result = compact_state(generate, kit=kit, task=task, previous=previous)
    if result.document is None:
        return None
    return _as_of(result.document, kit, needs.conversation, turn)


def _as_of(
    document: StateDocument, kit: Toolkit, conversation: Conversation, turn: int
) -> StateDocument:
    """The document without the harness facts a replay knows only from later turns: the
    store holds the whole recorded session, the agent at this turn did not."""
    seen: set[str] = set()
    for result in conversation.results:
        shown = kit.shown(result.text) if result.index < turn else None
        if shown:
            seen.add(shown)
    asked = {
        str(call.arguments.get("query", ""))
        for call in conversation.calls.values()
        if call.index < turn and call.name == "search"
    }
    return document.model_copy(
        update={
            "observations": [o for o in document.observations if o.id in seen],
            "actions": [a for a in document.actions if a.id in seen],
            "queries_run": [
                q
                for q in document.queries_run
                if any(q == a or q.startswith(f"{a} (") for a in asked)
            ],
        }
    )


def values_in(arguments: Any) -> set[str]:
    """The values of 8 or more characters in a call's arguments: whole strings and the
    words, paths and URLs inside them."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if MIN_VALUE <= len(value) <= 200:
                found.add(value)
            found.update(_VALUE.findall(value))
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(arguments)
    return found
