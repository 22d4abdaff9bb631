"""The one-line stubs that stand in for evicted results: written and read here only.

Format 1:

    [ref TOOL KEY · N tok · YYYY-MM-DD] GIST · replay_result(id="ID")
    [claim TOOL LABEL] CLAIM · evidence replay_result(id="ID")
"""

from __future__ import annotations

import re

from ._models import Claim, Reference
from ._tokens import count_tokens

STUB_FORMAT = 1
LABEL_SHARE = 0.3  # at most this share of a stub's budget goes to its key or label
_STUB = re.compile(r'^\[(ref|claim) [^\n]*replay_result\(id="([0-9a-f]{16})"\)$')


def stub_for(item: Reference | Claim, budget: int | None = None) -> str:
    """The stub line of an evicted result; with `budget`, the key or label is cut to
    leave room for the gist."""
    if isinstance(item, Reference):
        key = _cut(item.key, budget)
        head = f"[ref {item.tool} {key} · {item.tokens:,} tok · {item.observed_at:%Y-%m-%d}]"
        return f'{head}{_gap(item.gist)}· replay_result(id="{item.id}")'
    label = f" {_cut(item.label, budget)}" if item.label else ""
    return f'[claim {item.tool}{label}]{_gap(item.text)}· evidence replay_result(id="{item.id}")'


def _gap(text: str) -> str:
    return f" {text} " if text else " "


def parse_stub(text: str) -> tuple[str, str] | None:
    """("ref" or "claim", id) when `text` is a stub, else None."""
    match = _STUB.match(text.strip())
    return (match[1], match[2]) if match else None


def _cut(text: str, budget: int | None) -> str:
    one_line = " ".join(text.split())
    if budget is None:
        return one_line
    room = max(6, int(budget * LABEL_SHARE))
    if count_tokens(one_line) <= room:
        return one_line
    while one_line and count_tokens(one_line + "…") > room:
        one_line = one_line[: max(1, len(one_line) * 4 // 5)]
    return one_line + "…"
