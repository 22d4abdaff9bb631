"""The state document, its checks, and what carries the work across compactions:
checkpoints, recovery and staleness.
"""

from ..core.errors import Stale, StaleWarning
from .continuity import Recovery, Revalidation
from .document import (
    Artifact,
    Checkpoint,
    Finding,
    Hypothesis,
    OpenItem,
    Problem,
    StateAction,
    StateDocument,
    StateObservation,
    Task,
)
from .prompt import StateCompaction, compact_state, state_prompt, state_schema

__all__ = [
    "Artifact",
    "Checkpoint",
    "Finding",
    "Hypothesis",
    "OpenItem",
    "Problem",
    "Recovery",
    "Revalidation",
    "Stale",
    "StaleWarning",
    "StateAction",
    "StateCompaction",
    "StateDocument",
    "StateObservation",
    "Task",
    "compact_state",
    "state_prompt",
    "state_schema",
]
