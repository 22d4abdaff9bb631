"""What every adapter shares: the kit it records into, and how it is offered to a model."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import (
    ConfigDict,
    Field,
    field_validator,
)

import addressable as ad
from addressable.recording.argerrors import CheckedModel
from addressable.tools.arguments import check_arguments

from ._urls import checked_origins


class Adapter:
    """An adapter records through `kit` and offers itself to the model under `name`.

    Subclasses set `name`, `description` and `input_schema`, and implement `handle`
    (a model's call to text). Creating one registers it with the kit; pass `name` to
    offer a second adapter of the same kind under another name.
    """

    name: str = ""
    description: str = ""
    input_schema: dict[str, Any]

    def __init__(self, kit: ad.Toolkit, name: str | None = None) -> None:
        self.kit = kit
        if name is not None:
            self.name = name
        kit.register(self)

    def handle(self, arguments: dict[str, Any]) -> str:
        raise NotImplementedError

    def checked(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """A model's arguments, checked against `input_schema` before anything runs: each
        required one given, none the schema does not name (an argument a model may not
        choose, such as an identity, is refused, not passed on), each of its type (a
        string is not an int). A `null` stands for an argument left out. Raises
        `ArgumentError` naming the argument."""
        return check_arguments(self.input_schema, arguments, self.name)

    def act(
        self,
        args: dict[str, Any],
        change: Callable[[], tuple[str, dict[str, Any] | None]],
        refused: tuple[type[BaseException], ...],
        written: Sequence[str] = (),
    ) -> ad.Result:
        """Carry out a change that either happens whole or not at all, and record it as
        an Action: `completed` with the summary and artifact `change` returns, or, when
        it raises one of `refused` (nothing was changed), `not_applied` and re-raised; when
        it raises anything else (it may have changed part of the world), `unknown` and
        re-raised. Arguments that cannot be recorded are refused before `change` runs.
        `written` names the arguments that carry written content (reported to the state
        document, which leaves them out of the operation)."""
        ad.ids.canonical_args(args)  # ArgumentError, naming the argument, before any change
        reported: dict[str, Any] = {ad.Report.WRITTEN: list(written)} if written else {}
        try:
            summary, artifact = change()
        except refused as exc:
            self.kit.record_failure(
                self.name,
                args,
                exc,
                determinism="side_effect",
                outcome=ad.Outcome.NOT_APPLIED,
                meta=reported,
            )
            raise
        except Exception as exc:
            self.kit.record_failure(
                self.name,
                args,
                exc,
                determinism="side_effect",
                outcome=ad.Outcome.UNKNOWN,
                meta=reported,
            )
            raise
        if artifact:
            reported[ad.Report.ARTIFACT] = artifact
        return self.kit.record(
            self.name,
            args,
            summary.encode(),
            determinism="side_effect",
            outcome=ad.Outcome.COMPLETED,
            meta=reported,
        )


class Identity(CheckedModel):
    """Who a request is sent as: a name, and headers whose credentials are secret
    references (``Bearer secret:env:API_TOKEN``), resolved only when sending. The
    headers are the user's: their references are resolved whoever names the identity,
    a model included, and every one of them is dropped when a redirect leaves the
    origin of the request.

    `origins` (``("https://api.github.com",)``) are the only origins its headers may be
    sent to; a request elsewhere is a `ScopeError` and sends nothing. Without them, the
    code that names the identity chooses where it goes, and a re-run of a recorded
    call (`replay(id, verify=True)`, whose URL may have come from an imported bundle)
    may send it only where this process already sent it."""

    model_config = ConfigDict(frozen=True)

    name: str
    headers: Mapping[str, str] = Field(default_factory=dict)
    origins: tuple[str, ...] | None = None

    @field_validator("origins", mode="before")
    @classmethod
    def _check_origins(cls, value: object) -> object:
        return None if value is None else checked_origins(value, "Identity origins")

    def check_origin(self, where: str) -> None:
        """`ScopeError` unless this identity may be sent to the origin `where`."""
        if self.origins is not None and where not in self.origins:
            raise ad.ScopeError(
                f"identity {self.name!r} is not sent to {where} (its origins: "
                f"{', '.join(self.origins) or 'none'}); nothing was sent"
            )

    def resolved_headers(self, secrets: ad.Secrets) -> dict[str, str]:
        """The headers with their secret references replaced by the values: for sending
        only, never for keeping."""
        resolved = {k: secrets.resolve_all(v) for k, v in self.headers.items()}
        for name, value in resolved.items():
            if any(c in value for c in "\r\n\0"):
                # Said here, without the value: HTTP's own error would quote it.
                raise ad.ArgumentError(
                    f"identity {self.name!r}: header {name!r} holds a line break or NUL "
                    "once its secrets are resolved, which HTTP cannot send"
                )
        return resolved


def schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A JSON Schema object for a tool's input: these properties and no others."""
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
