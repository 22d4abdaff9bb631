"""The state document: the position of the work, carried across compactions, checked
by program. A compaction's reader is the next model call, which must decide what to do
next: it needs what was established, what is open and why, what was already tried and
what was done to the world, not an account of activity.

`StateDocument.problems()` finds what prose never shows: items lost or doubled, findings
that vanished since the last document, evidence that resolves to nothing, an action
whose stated outcome is not what the store knows, a hypothesis confirmed without an
observation after the action it depends on (or on an action the document does not
list), a secret's value or a credential in a URL written down, a document too large to
be a position rather than a dump.

The parts a document is made of (the task, findings, open items, artifacts,
observations, hypotheses, actions, a checkpoint) and the problems its checks name are
here with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ..core.credentials import has_credential
from ..core.errors import AddressableError
from ..core.ids import ID_LENGTH, expect, lone_surrogate
from ..core.records import Outcome, Report
from ..core.secrets import resolved_values
from ..core.tokens import count_tokens
from ..recording.argerrors import CheckedModel
from ..recording.recorder import model_resolve
from ..store import Store

ProblemKind = Literal[
    "missing_item",
    "duplicate_item",
    "unknown_item",
    "regression",
    "unresolved_evidence",
    "action_mismatch",
    "unsupported_hypothesis",
    "secret",
    "too_large",
    "malformed",
]  # malformed: the answer is not a document


class DocumentPart(CheckedModel):
    """A part of a state document: no field it does not name, no lone surrogate. Built
    by hand, one that does not fit is a one-line `ArgumentError`; read from a model's
    answer (`model_validate`), pydantic's error, which `compact_state` turns into a
    `Problem`."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*")
    @classmethod
    def _utf8(cls, value: Any, info: ValidationInfo) -> Any:
        """Refuse a lone surrogate in any string: Python holds it, but it cannot be
        written as UTF-8, so the document could be neither shown to a model nor saved."""
        found = lone_surrogate(value, info.field_name or "a field")
        if found:
            raise ValueError(found)
        return value


class Task(DocumentPart):
    text: str
    items: list[str]


class Finding(DocumentPart):
    item: str
    status: str  # e.g. "found", "not found": a negative result is a finding too
    established: str
    evidence: list[str] = Field(default_factory=list)  # result ids or URLs
    written_to: str | None = None  # the artifact it was written to, if any


class OpenItem(DocumentPart):
    item: str
    blocked_on: str
    tried: list[str] = Field(default_factory=list)


class Artifact(DocumentPart):
    path: str
    rev: str
    contains: str = ""


class StateObservation(DocumentPart):
    id: str
    source: str
    value: str
    observed_at: str  # ISO 8601; a time without a UTC offset is read as UTC
    evidence: list[str] = Field(default_factory=list)


class Hypothesis(DocumentPart):
    id: str
    claim: str
    based_on: list[str] = Field(default_factory=list)  # observation ids
    status: Literal["unverified", "confirmed", "refuted"] = "unverified"
    depends_on: str | None = None  # the action whose effect it is about, if any


class StateAction(DocumentPart):
    id: str
    operation: str
    marker: str | None = None
    idempotency_key: str | None = None
    outcome: Outcome
    observed_at: str  # ISO 8601; a time without a UTC offset is read as UTC


class Checkpoint(DocumentPart):
    step: str
    refs: list[str] = Field(default_factory=list)


class Problem(BaseModel):
    """One thing wrong with a state document, named."""

    kind: ProblemKind
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


_ID_LIKE = re.compile(r"[0-9a-f]{6,16}")

# How large a document may be: it is the position of the work, read by the next model
# call in its context, not a dump of it. Generous for real work; `state_schema()` states
# them to the model, and a document over any of them is a `too_large` problem.
MAX_ENTRIES = 1_000  # entries in any one list (task items, findings, tried, ...)
MAX_CHARS = 10_000  # characters in any one string (about 2,500 tokens)
MAX_CONTEXT_CHARS = 2_000  # characters of relational_context: short prose
MAX_TOKENS = 50_000  # tokens of the whole document as JSON: a quarter of a 200k window
_PROBLEMS_SHOWN = 20  # problems of one kind listed at most (each is asked to be fixed)
_SHOWN_CHARS = 40  # characters of a model's text quoted in a problem, at most


class StateDocument(DocumentPart):
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
        session: str | None = None,
    ) -> list[Problem]:
        """Every problem found, each naming what is wrong; [] when the document is sound.
        `store` lets evidence and actions be checked; with `session` (a document a
        model wrote), a cited prefix names only records that session has seen. No
        secret's value may appear in the document: those any kit in this process
        resolved are looked for, and `secrets`, values given besides. A document too
        large is told only that: the rest would be judged on what must be written again
        anyway."""
        texts = list(_texts(self.model_dump(mode="json"), ""))
        found = _size(texts, self.model_dump_json)
        if found:
            return found
        found = self._coverage()
        if previous is not None:
            expect(previous, StateDocument, "problems: previous")
            found += self._regressions(previous)
        if store is not None:
            found += self._evidence(store, session) + self._actions(store, session)
        found += self._hypotheses()
        found += self._secrets([*secrets, *resolved_values()]) + _credentials(texts)
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

    def _evidence(self, store: Store, session: str | None) -> list[Problem]:
        out = []
        cited = [(f"finding {f.item!r}", e) for f in self.findings for e in f.evidence]
        cited += [(f"observation {o.id!r}", e) for o in self.observations for e in o.evidence]
        for where, ref in cited:
            if ref.startswith(("http://", "https://")):
                continue
            if _resolved(store, ref, session) is None:
                out.append(
                    Problem(
                        kind="unresolved_evidence",
                        message=f"evidence {ref!r} of {where} is not in the store",
                    )
                )
        return out

    def _actions(self, store: Store, session: str | None) -> list[Problem]:
        out = []
        for action in self.actions:
            full = _resolved(store, action.id, session)
            if full is None:
                out.append(
                    Problem(
                        kind="action_mismatch", message=f"action {action.id!r} is not in the store"
                    )
                )
                continue
            record = store.get(full)
            if not record.is_action:
                out.append(
                    Problem(
                        kind="action_mismatch",
                        message=f"action {action.id!r} cites a {record.tool!r} result, "
                        "not an action: cite the id of the call that changed the world",
                    )
                )
                continue
            # An action whose outcome was never recorded is unknown: never guessed.
            known = outcome_in(store, record.id) or Outcome.UNKNOWN
            if known is not action.outcome:
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
            if h.depends_on and action is None:
                out.append(
                    Problem(
                        kind="unsupported_hypothesis",
                        message=f"hypothesis {h.id!r} is confirmed, but the action it "
                        f"depends on, {_shown(h.depends_on)}, is not in the document's actions",
                    )
                )
                continue
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


def _texts(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every string and every list in a JSON value, with where it is (`open[0].tried`)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        yield where, value
        for i, v in enumerate(value):
            yield from _texts(v, f"{where}[{i}]")
    elif isinstance(value, str):
        yield where, value


def _size(texts: list[tuple[str, Any]], as_json: Callable[[], str]) -> list[Problem]:
    """What makes the document too large (see MAX_ENTRIES and the rest), or a string
    that is not UTF-8 text (a document made or changed without validation)."""
    out = []
    for where, value in texts:
        if isinstance(value, list):
            most, unit = MAX_ENTRIES, "entries"
        elif found := lone_surrogate(value, where):
            out.append(Problem(kind="malformed", message=found))
            continue
        else:
            short = where == "relational_context"
            most, unit = (MAX_CONTEXT_CHARS if short else MAX_CHARS), "characters"
        if len(value) > most:
            out.append(
                Problem(
                    kind="too_large",
                    message=f"{where} has {len(value):,} {unit}; at most {most:,}",
                )
            )
    if out:
        return out[:_PROBLEMS_SHOWN]
    text = as_json()
    # Never more tokens than UTF-8 bytes: a small document is not counted.
    if len(text.encode()) > MAX_TOKENS and (tokens := count_tokens(text)) > MAX_TOKENS:
        return [
            Problem(
                kind="too_large",
                message=f"the document is {tokens:,} tokens; at most {MAX_TOKENS:,}: keep "
                "the position of the work, cite results by id instead of copying them",
            )
        ]
    return []


def _credentials(texts: list[tuple[str, Any]]) -> list[Problem]:
    """A URL written with a credential in it (the document is shown to a model and
    saved: no credential may be in it), named by where it is, never by its value."""
    out = []
    for where, value in texts:
        if not isinstance(value, str) or "://" not in value:
            continue
        if has_credential(value):
            out.append(
                Problem(
                    kind="secret",
                    message=f"the URL in {where} has a credential written in it: write it "
                    "without the credential, or name the credential as secret:env:NAME",
                )
            )
    return out[:_PROBLEMS_SHOWN]


def _shown(text: str) -> str:
    """`text` fit for a problem's message: quoted, at most about 40 characters."""
    return repr(text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "...")


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


def _resolved(store: Store, ref: str, session: str | None) -> str | None:
    """The full id of the record `ref` cites, if the store holds it; with `session`, a
    prefix names only what that session has seen (as `replay_result` reads it: a
    document a model wrote must not find another session's records by guessing)."""
    if not _ID_LIKE.fullmatch(ref.lower()) or len(ref) > ID_LENGTH:
        return None
    try:
        full = store.resolve(ref) if session is None else model_resolve(store, session, ref)
        store.get(full)
    except AddressableError:
        return None
    return full


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
