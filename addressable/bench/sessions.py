"""Recorded sessions for the benchmark: one JSON object a line.

    {"session_id": "...", "system": "..."?, "task": {"text", "items"}?,
     "findings": [{"item", "status", "established", "evidence", "turn"}]?,
     "messages": [...]}

Messages are in the OpenAI Chat shape (`function.arguments` a JSON string), the same
flattened (`tool_calls: [{"id", "name", "arguments": {...}}]`, `role: "tool"` with
`tool_call_id` and `name`), or the Anthropic Messages shape. A line that cannot be read
is reported with its line number and skipped; the others still run.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .. import AddressableError, Task
from ..messages import Shape as MessageShape
from ..messages import parse as parse_messages
from ..state import Finding


class RecordedFinding(Finding):
    """A finding a session records, and the message index it was established at: what
    the `addressable+state` strategy's model would write from that turn on. Checked as
    a state document's finding is (no lone surrogate); other fields are let be."""

    model_config = ConfigDict(extra="ignore")

    turn: int = 0


class Session(BaseModel):
    """One recorded session, checked well formed."""

    session_id: str
    system: str | None = None
    task: Task | None = None
    findings: list[RecordedFinding] = []
    messages: list[dict[str, Any]]
    shape: MessageShape = "openai"


class BadLine(BaseModel):
    """A line of the input that could not be read, and why."""

    line: int
    error: str


def read_sessions(path: str | Path) -> Iterator[Session | BadLine]:
    """Each line of a JSONL file as a `Session`, or a `BadLine` naming what was wrong.
    Lines are decoded one by one: a line that is not UTF-8 is a `BadLine`, and the
    lines before and after it are still read."""
    with Path(path).open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if number == 1:
                raw = raw.removeprefix(codecs.BOM_UTF8)  # as Windows tools often write
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                error = f"not UTF-8 text: {exc.reason} at byte {exc.start}"
                yield BadLine(line=number, error=error)
                continue
            yield session_from(text, number)


def session_from(raw: str, number: int = 1) -> Session | BadLine:
    """One line as a `Session`, or a `BadLine` naming what was wrong: not JSON, nested
    past what the parser goes through, not a session, or messages not well formed."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return BadLine(line=number, error=f"not JSON: {exc}")
    except RecursionError:
        return BadLine(line=number, error="not JSON that can be read: it nests too deeply")
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return BadLine(line=number, error='not a session: expected {"session_id", "messages"}')
    try:
        session = Session.model_validate(
            {**data, "session_id": str(data.get("session_id") or f"line-{number}")}
        )
        conversation = parse_messages(session.messages)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return BadLine(line=number, error=f"not a session: {where}: {first['msg']}")
    except AddressableError as exc:
        return BadLine(line=number, error=str(exc))
    if conversation.shape == "openai-responses":
        return BadLine(line=number, error="the Responses shape is not read by the benchmark")
    return session.model_copy(update={"shape": conversation.shape})
