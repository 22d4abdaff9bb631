"""The parts a state document is made of (the task, findings, open items, artifacts,
observations, hypotheses, actions, a checkpoint) and the problems its checks name;
`state.document` holds the document and the checks."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ..core.ids import lone_surrogate
from ..core.records import Outcome
from ..recording.argerrors import CheckedModel

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
