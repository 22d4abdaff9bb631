"""The state document: the position of the work, carried across compactions, checked
by program. A compaction's reader is the next model call, which must decide what to do
next: it needs what was established, what is open and why, what was already tried and
what was done to the world, not an account of activity.

`StateDocument.problems()` finds what prose never shows: items lost or doubled, findings
that vanished since the last document, evidence that resolves to nothing, an action
whose stated outcome is not what the store knows, a hypothesis confirmed without an
observation after the action it depends on, a secret's value written down.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._errors import AddressableError
from ._models import Outcome
from ._reports import Report
from ._stores import Store
from .ids import ID_LENGTH

ProblemKind = Literal[
    "missing_item",
    "duplicate_item",
    "unknown_item",
    "regression",
    "unresolved_evidence",
    "action_mismatch",
    "unsupported_hypothesis",
    "secret",
    "malformed",
]  # malformed: the answer is not a document
_ID_LIKE = re.compile(r"[0-9a-f]{6,16}")


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Task(_Part):
    text: str
    items: list[str]


class Finding(_Part):
    item: str
    status: str  # e.g. "found", "not found": a negative result is a finding too
    established: str
    evidence: list[str] = Field(default_factory=list)  # result ids or URLs
    written_to: str | None = None  # the artifact it was written to, if any


class OpenItem(_Part):
    item: str
    blocked_on: str
    tried: list[str] = Field(default_factory=list)


class Artifact(_Part):
    path: str
    rev: str
    contains: str = ""


class StateObservation(_Part):
    id: str
    source: str
    value: str
    observed_at: str  # ISO 8601; a time without a UTC offset is read as UTC
    evidence: list[str] = Field(default_factory=list)


class Hypothesis(_Part):
    id: str
    claim: str
    based_on: list[str] = Field(default_factory=list)  # observation ids
    status: Literal["unverified", "confirmed", "refuted"] = "unverified"
    depends_on: str | None = None  # the action whose effect it is about, if any


class StateAction(_Part):
    id: str
    operation: str
    marker: str | None = None
    idempotency_key: str | None = None
    outcome: Outcome
    observed_at: str  # ISO 8601; a time without a UTC offset is read as UTC


class Checkpoint(_Part):
    step: str
    refs: list[str] = Field(default_factory=list)


class Problem(BaseModel):
    """One thing wrong with a state document, named."""

    kind: ProblemKind
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class StateDocument(_Part):
    """The position of the work; see the module docstring. Field names are a format:
    documents written by one version are read by the next."""

    task: Task
    findings: list[Finding] = Field(default_factory=list)
    open: list[OpenItem] = Field(default_factory=list)
    queries_run: list[str] = Field(default_factory=list)
    commitments: list[str] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(default_factory=list)
    observations: list[StateObservation] = Field(default_factory=list)
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    actions: list[StateAction] = Field(default_factory=list)
    pending: list[str] = Field(default_factory=list)
    checkpoint: Checkpoint | None = None
    relational_context: str = ""  # short prose, kept apart from the commitments

    def problems(
        self,
        previous: StateDocument | None = None,
        store: Store | None = None,
        *,
        secrets: Iterable[str] = (),
    ) -> list[Problem]:
        """Every problem found, each naming what is wrong; [] when the document is sound.
        `store` lets evidence and actions be checked; `secrets` are values that must
        never appear in the document."""
        found = self._coverage()
        if previous is not None:
            found += self._regressions(previous)
        if store is not None:
            found += self._evidence(store) + self._actions(store)
        found += self._hypotheses()
        found += self._secrets(secrets)
        return found

    def _coverage(self) -> list[Problem]:
        items = set(self.task.items)
        done = [f.item for f in self.findings]
        waiting = [o.item for o in self.open]
        out = []
        for item in self.task.items:
            if item not in done and item not in waiting:
                out.append(
                    Problem(
                        kind="missing_item",
                        message=f"item {item!r} is in neither findings nor open",
                    )
                )
            elif item in done and item in waiting:
                out.append(
                    Problem(
                        kind="duplicate_item", message=f"item {item!r} is in both findings and open"
                    )
                )
        for item in sorted(set(done) | set(waiting)):
            if item not in items:
                out.append(
                    Problem(kind="unknown_item", message=f"item {item!r} is not in the task")
                )
        for name, listed in (("findings", done), ("open", waiting)):
            for item in sorted({i for i in listed if listed.count(i) > 1}):
                out.append(
                    Problem(
                        kind="duplicate_item", message=f"item {item!r} is in {name} more than once"
                    )
                )
        return out

    def _regressions(self, previous: StateDocument) -> list[Problem]:
        before = {f.item for f in previous.findings}
        now = {f.item for f in self.findings}
        vanished = sorted(before - now)
        if len(now) >= len(before) and not vanished:
            return []
        names = ", ".join(repr(v) for v in vanished)
        return [
            Problem(
                kind="regression",
                message=f"{len(now)} resolved findings after {len(before)}: "
                f"{len(vanished)} vanished ({names})",
            )
        ]

    def _evidence(self, store: Store) -> list[Problem]:
        out = []
        cited = [(f"finding {f.item!r}", e) for f in self.findings for e in f.evidence]
        cited += [(f"observation {o.id!r}", e) for o in self.observations for e in o.evidence]
        for where, ref in cited:
            if ref.startswith(("http://", "https://")):
                continue
            if not _resolves(store, ref):
                out.append(
                    Problem(
                        kind="unresolved_evidence",
                        message=f"evidence {ref!r} of {where} is not in the store",
                    )
                )
        return out

    def _actions(self, store: Store) -> list[Problem]:
        out = []
        for action in self.actions:
            if not _resolves(store, action.id):
                out.append(
                    Problem(
                        kind="action_mismatch", message=f"action {action.id!r} is not in the store"
                    )
                )
                continue
            known = outcome_in(store, store.resolve(action.id))
            if known is not None and known is not action.outcome:
                out.append(
                    Problem(
                        kind="action_mismatch",
                        message=f"action {action.id!r} says {action.outcome.value}, "
                        f"the store says {known.value}",
                    )
                )
        return out

    def _hypotheses(self) -> list[Problem]:
        seen = {o.id: o for o in self.observations}
        done = {a.id: a for a in self.actions}
        out = []
        for h in self.hypotheses:
            if h.status != "confirmed":
                continue
            support = [seen[o] for o in h.based_on if o in seen]
            action = done.get(h.depends_on) if h.depends_on else None
            if action is not None:
                acted = _instant(action.observed_at)
                support = [o for o in support if _after(_instant(o.observed_at), acted)]
            if not support:
                after = f" after action {h.depends_on!r}" if h.depends_on else ""
                out.append(
                    Problem(
                        kind="unsupported_hypothesis",
                        message=f"hypothesis {h.id!r} is confirmed with no observation{after}",
                    )
                )
        return out

    def _secrets(self, secrets: Iterable[str]) -> list[Problem]:
        # The strings as they read, not as JSON writes them: a value with a quote, a
        # backslash or a tab is escaped in JSON, and would not be found there.
        text = "\n".join(_strings(self.model_dump(mode="json")))
        return [
            Problem(
                kind="secret",
                message="the document holds the value of a secret; "
                "name it by its reference (secret:env:NAME) instead",
            )
            for value in secrets
            if value and value in text
        ][:1]


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _instant(text: str) -> datetime | None:
    """An ISO 8601 time as an aware instant, read as UTC when it names no offset (so
    that times are compared as instants, never as text, nor naive with aware); None
    when the text is not a time."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return when if when.utcoffset() is not None else when.replace(tzinfo=UTC)


def _after(when: datetime | None, then: datetime | None) -> bool:
    """Whether `when` is known to be after `then`: never when either is not a time."""
    return when is not None and then is not None and when > then


def _resolves(store: Store, ref: str) -> bool:
    if not _ID_LIKE.fullmatch(ref.lower()) or len(ref) > ID_LENGTH:
        return False
    try:
        store.get(store.resolve(ref))
    except AddressableError:
        return False
    return True


def outcome_in(store: Store, action_id: str) -> Outcome | None:
    """What the store knows of an Action's effect: its own outcome when that is known
    (completed, not_applied: a later read cannot undo what the call itself said), else
    its latest verification's (a record whose `meta.verifies` names it), else unknown."""
    record = store.get(action_id)
    if record.outcome is not Outcome.UNKNOWN:
        return record.outcome
    checks = [
        r
        for r in store.records(refers_to=record.id)
        if r.meta.get(Report.VERIFIES) == record.id and r.outcome is not None
    ]
    return checks[-1].outcome if checks else record.outcome
