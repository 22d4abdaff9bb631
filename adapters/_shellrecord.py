"""What a command leaves in the store: its output as the model sees it and how it ended,
or the failure that stopped it; for a write, the outcome that is known."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import addressable as ad
from addressable.core.credentials import redact_urls

from ._http import ResponseTooLarge
from ._process import Ran

SHOWN = 60  # characters of a program's name an error shows


@dataclass(frozen=True)
class ShellCall:
    """One command as it is recorded: the tool, its arguments, and what it is (a Claim,
    a pure read under a key, or an Action)."""

    kit: ad.Toolkit
    tool: str
    args: dict[str, Any]
    determinism: ad.Determinism
    key: str | None

    @property
    def writes(self) -> bool:
        return self.determinism is ad.Determinism.SIDE_EFFECT

    def failed(self, exc: BaseException, outcome: ad.Outcome | None) -> None:
        """Record a call that did not run to its end, as `exc` says."""
        self.kit.record_failure(
            self.tool, self.args, exc, determinism=self.determinism, key=self.key, outcome=outcome
        )

    def ended(self, ran: Ran, limit: float) -> ad.Result:
        """Record a run that ended (or timed out) with its output whole."""
        # Output that quotes a URL with its credentials (git's and curl's errors do) is
        # kept redacted, as the command is.
        payload = redact_urls(render(ran.out, ran.err, ran.code, ran.timed_out, limit))
        outcome = None
        if self.writes:
            # Exit 0 is done; a failure or a timeout may have done part of it: unknown.
            done = ran.code == 0 and not ran.timed_out
            outcome = ad.Outcome.COMPLETED if done else ad.Outcome.UNKNOWN
        return self.kit.record(
            self.tool,
            self.args,
            payload.encode(),
            determinism=self.determinism,
            key=self.key,
            status=ad.Status.ERROR if ran.timed_out else ad.Status.OK,
            error=f"timed out after {limit:g} s" if ran.timed_out else None,
            outcome=outcome,
            meta={ad.Report.EXIT_CODE: ran.code, "timed_out": ran.timed_out},
        )

    def over(self, ran: Ran, program: str, max_bytes: int) -> ad.Result:
        """Record a run stopped for output over `max_bytes`, whose output is not kept.
        A Claim is a failure, raised as `ResponseTooLarge` (as Fetch's); a write has
        run, stopped part way: its Action is returned, with its outcome unknown."""
        exc = ResponseTooLarge(
            f"{self.tool}: the output of {program[:SHOWN]!r} is over the limit of "
            f"{max_bytes:,} bytes, so it was stopped; raise max_bytes on the Shell "
            "adapter to take it"
        )
        if not self.writes:
            self.failed(exc, None)
            raise exc
        meta = {ad.Report.EXIT_CODE: ran.code, "timed_out": ran.timed_out, "output_over": max_bytes}
        return self.kit.record(
            self.tool,
            self.args,
            f"[{exc}]".encode(),
            determinism=self.determinism,
            status=ad.Status.ERROR,
            error=str(exc),
            outcome=ad.Outcome.UNKNOWN,
            meta=meta,
        )


def render(out: bytes, err: bytes, code: int, timed_out: bool, limit: float) -> str:
    """A run's output as stored and shown: stdout, stderr marked, and how it ended."""
    text = out.decode("utf-8", errors="replace")
    if err:
        text += ("" if not text or text.endswith("\n") else "\n") + "[stderr]\n"
        text += err.decode("utf-8", errors="replace")
    if text and not text.endswith("\n"):
        text += "\n"
    if timed_out:
        return text + f"[timed out after {limit:g} s; the output above is what came before]"
    return text + f"[exit {code}]"
