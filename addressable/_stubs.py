"""The one-line stubs that stand in for evicted results: written and read here only.

Format 1:

    [ref:ID TOOL KEY · N tok · YYYY-MM-DD] GIST · replay_result(id="ID")
    [claim:ID TOOL LABEL] CLAIM · evidence replay_result(id="ID")
"""

from __future__ import annotations

import re

from ._models import Claim, Reference

STUB_FORMAT = 1
KEY_WIDTH = 90  # characters of a key or label shown in a stub; longer ones are cut
_STUB = re.compile(r"^\[(ref|claim):([0-9a-f]{16}) ")


def reference_stub(ref: Reference) -> str:
    head = (
        f"[ref:{ref.id} {ref.tool} {_cut(ref.key)} · {ref.tokens:,} tok · "
        f"{ref.observed_at:%Y-%m-%d}]"
    )
    return f'{head} {ref.gist} · replay_result(id="{ref.id}")'


def claim_stub(claim: Claim) -> str:
    label = f" {_cut(claim.label)}" if claim.label else ""
    head = f"[claim:{claim.id} {claim.tool}{label}]"
    return f'{head} {claim.text} · evidence replay_result(id="{claim.id}")'


def stub_for(item: Reference | Claim) -> str:
    """The stub line of an evicted result."""
    return reference_stub(item) if isinstance(item, Reference) else claim_stub(item)


def parse_stub(text: str) -> tuple[str, str] | None:
    """("ref" or "claim", id) when `text` is a stub, else None."""
    match = _STUB.match(text)
    return (match[1], match[2]) if match else None


def _cut(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= KEY_WIDTH else one_line[: KEY_WIDTH - 1] + "…"
