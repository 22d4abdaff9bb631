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

A lost dependency is a value of 8 or more characters in a tool call's arguments that
first appeared in an earlier tool result and is not in that request (stubs included);
recovering it costs the tokens of the result it came from (re-run or replayed), once.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from .._compaction import compact
from .._messages import MESSAGE_OVERHEAD, _all_text, parse
from .._state import Finding, OpenItem, StateDocument
from .._stateprompt import compact_state
from .._tokens import count_tokens
from .._toolkit import Toolkit
from ._sessions import Session

STRATEGIES = ("none", "clear", "window", "addressable", "addressable+state")
PLACEHOLDER = "[tool result cleared to save context]"
DEFAULT_TRIGGER = 100_000  # input tokens, as hosted context editing defaults
DEFAULT_KEEP = 3  # tool results kept whole
MIN_VALUE = 8  # characters: shorter values are too common to count as dependencies
_VALUE = re.compile(r"[\w./:@#?=&%+~-]{8,}")


class Figures(BaseModel):
    """What one strategy cost on one session (or in total), in tokens or counts."""

    requests: int = 0  # request tokens summed over every assistant turn
    peak: int = 0  # the largest request
    artifact: int = 0  # tokens of the stubs, placeholders and state documents made
    lost: int = 0  # dependencies not in the request when a call needed them
    recovery: int = 0  # tokens to get back the results those came from
    net: int = 0  # requests + recovery
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
    """One strategy over one session: the figures and the request tokens per turn."""

    figures: Figures
    per_turn: list[int] = field(default_factory=list)


class _Tokens:
    """Token counts of messages, each counted once however often it is sent."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Any, int]] = {}

    def of(self, message: dict[str, Any]) -> int:
        entry = self._seen.get(id(message))
        if entry is None or entry[0] is not message:
            entry = (message, MESSAGE_OVERHEAD + count_tokens(_all_text(message)))
            self._seen[id(message)] = entry
        return entry[1]


def simulate(
    session: Session,
    strategy: str,
    *,
    trigger: int,
    keep: int,
    kit_for: Callable[[Session], Toolkit],
    budget: int | None = None,
    clear_at_least: int = 0,
) -> Run:
    """Replay `session` under `strategy`; see the module docstring."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    tokens = _Tokens()
    system = count_tokens(session.system) + MESSAGE_OVERHEAD if session.system else 0
    messages = session.messages
    conversation = parse(messages, session.shape)
    result_at: dict[int, list[Any]] = {}
    for r in conversation.results:
        result_at.setdefault(r.index, []).append(r)
    kit = kit_for(session) if strategy.startswith("addressable") else None
    context: list[dict[str, Any]] = []
    run = Run(Figures())
    recovered: set[tuple[int, int | None]] = set()
    seen_calls: set[str] = set()
    state: StateDocument | None = None
    note: dict[str, Any] | None = None  # the state document's message, when there is one
    for i, message in enumerate(messages):
        if message.get("role") == "assistant":
            request = system + sum(tokens.of(m) for m in context)
            if request > trigger and strategy != "none":
                context, made = _act(
                    strategy,
                    context,
                    session,
                    kit,
                    keep,
                    budget,
                    clear_at_least,
                    trigger,
                    system,
                    tokens,
                    i,
                    state,
                    note,
                )
                run.figures.artifact += made.artifact
                if made.state is not None:
                    state, note = made.state, made.note
                request = system + sum(tokens.of(m) for m in context)
            run.per_turn.append(request)
            run.figures.requests += request
            run.figures.peak = max(run.figures.peak, request)
            _dependencies(
                run.figures, message, i, messages, context, result_at, recovered, tokens, session
            )
            for call in _calls(message):
                signature = json.dumps([call[0], call[1]], sort_keys=True)
                if signature in seen_calls:
                    run.figures.repeated_calls += 1
                seen_calls.add(signature)
        context.append(message)
    run.figures.net = run.figures.requests + run.figures.recovery
    return run


@dataclass
class _Made:
    artifact: int = 0
    state: StateDocument | None = None
    note: dict[str, Any] | None = None  # the state document's message, when there is one


def _act(
    strategy: str,
    context: list[dict[str, Any]],
    session: Session,
    kit: Toolkit | None,
    keep: int,
    budget: int | None,
    clear_at_least: int,
    trigger: int,
    system: int,
    tokens: _Tokens,
    turn: int,
    state: StateDocument | None,
    note: dict[str, Any] | None,
) -> tuple[list[dict[str, Any]], _Made]:
    if strategy == "clear":
        return _clear(context, session, keep, clear_at_least, tokens)
    if strategy == "window":
        return _window(context, trigger, system, tokens), _Made()
    assert kit is not None
    options: dict[str, Any] = {} if budget is None else {"budget": budget}
    base = [m for m in context if m is not note]
    done = compact(base, kit=kit, keep_last=keep, format=session.shape, **options)
    made = _Made(artifact=sum(e.tokens_after for e in done.evicted))
    out = done.messages
    if strategy == "addressable+state" and session.task is not None:
        document = _state_document(session, kit, turn, state)
        if document is not None:
            text = "State of the work so far:\n" + document.model_dump_json(exclude_defaults=True)
            fresh = {"role": "user", "content": text}
            made = _Made(artifact=made.artifact + tokens.of(fresh), state=document, note=fresh)
            first_user = next((n for n, m in enumerate(out) if m.get("role") == "user"), 0)
            out = [*out[: first_user + 1], fresh, *out[first_user + 1 :]]
    return out, made


def _clear(
    context: list[dict[str, Any]], session: Session, keep: int, at_least: int, tokens: _Tokens
) -> tuple[list[dict[str, Any]], _Made]:
    results = parse(context, session.shape).results
    older = results[: max(0, len(results) - keep)]
    out = list(context)
    freed = 0
    placeholders = 0
    for result in older:
        if result.text == PLACEHOLDER:
            continue
        message = json.loads(json.dumps(out[result.index]))
        if session.shape == "anthropic":
            message["content"][result.block]["content"] = PLACEHOLDER
        else:
            message["content"] = PLACEHOLDER
        freed += tokens.of(out[result.index]) - tokens.of(message)
        out[result.index] = message
        placeholders += 1
    if freed < at_least or not placeholders:
        return context, _Made()
    return out, _Made(artifact=placeholders * count_tokens(PLACEHOLDER))


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
    session: Session, kit: Toolkit, turn: int, previous: StateDocument | None
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
    return _as_of(result.document, kit, session.messages[:turn])


def _as_of(document: StateDocument, kit: Toolkit, before: list[dict[str, Any]]) -> StateDocument:
    """The document without the harness facts a replay knows only from later turns: the
    store holds the whole recorded session, the agent at this turn did not."""
    seen: set[str] = set()
    asked: set[str] = set()
    for message in before:
        if message.get("role") == "tool" and isinstance(message.get("content"), str):
            shown = kit.shown(message["content"])
            if shown:
                seen.add(shown)
        for name, args in _calls(message):
            if name == "search" and isinstance(args, dict):
                asked.add(str(args.get("query", "")))
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


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []
    for call in message.get("tool_calls") or []:
        if "function" in call:
            args: Any = call["function"].get("arguments", "{}")
            with contextlib.suppress(ValueError):
                args = json.loads(args) if isinstance(args, str) else args
            calls.append((str(call["function"].get("name")), args))
        else:
            calls.append((str(call.get("name")), call.get("arguments", {})))
    content = message.get("content")
    if isinstance(content, list):
        calls += [
            (str(b.get("name")), b.get("input", {}))
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
    return calls


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


def _dependencies(
    figures: Figures,
    message: dict[str, Any],
    turn: int,
    messages: list[dict[str, Any]],
    context: list[dict[str, Any]],
    result_at: dict[int, list[Any]],
    recovered: set[tuple[int, int | None]],
    tokens: _Tokens,
    session: Session,
) -> None:
    calls = _calls(message)
    if not calls:
        return
    seen_text = None
    for _, args in calls:
        for value in values_in(args):
            source = _first_seen_in_result(value, turn, messages, result_at)
            if source is None:
                continue
            if seen_text is None:
                seen_text = "\n".join(_all_text(m) for m in context)
                if session.system:
                    seen_text += "\n" + session.system
            if value in seen_text:
                continue
            figures.lost += 1
            if (source.index, source.block) not in recovered:
                recovered.add((source.index, source.block))
                figures.recovery += count_tokens(source.text)


def _first_seen_in_result(
    value: str, turn: int, messages: list[dict[str, Any]], result_at: dict[int, list[Any]]
) -> Any | None:
    """The first tool result before `turn` that holds `value`, if the value appeared
    there before anywhere else (the task, the model's own words)."""
    for index in range(turn):
        results = result_at.get(index)
        if results:
            for result in results:
                if value in result.text:
                    return result
        if value in _all_text(messages[index]):
            return None
    return None
