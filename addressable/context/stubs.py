"""The one-line stubs that stand in for evicted results: written and read here only.

Format 2 (what `stub_for` writes):

    [ref:ID KEY · N tok · YYYY-MM-DD] GIST
    [claim:ID LABEL] CLAIM

ID is the shortest prefix of the record's id (8 hex characters or more) that named it
alone when the stub was made; `replay_result` takes it. KEY (of a Reference) is left out
when the call that asked for the result, which stands right before the stub, shows it
whole; LABEL (what a Claim answers: a query, a command) likewise.

Format 1 (read, for lists compacted by earlier versions):

    [ref TOOL KEY · N tok · YYYY-MM-DD] GIST · replay_result(id="ID")
    [claim TOOL LABEL] CLAIM · evidence replay_result(id="ID")
"""

from __future__ import annotations

import re

from ..core.errors import AddressableError, AmbiguousId
from ..core.ids import ID_LENGTH, SHORT_ID
from ..core.records import Claim, Reference
from ..core.tokens import count_tokens
from ..store import Store
from ..store.keys import prefix_mark
from .gistparts import one_line

REPLAY_TOOL = "replay_result"  # the tool a model calls to get a result back by its id

STUB_FORMAT = 2
LABEL_SHARE = 0.3  # at most this share of a stub's budget goes to its key or label
_STUB = re.compile(r"^\[(ref|claim):([0-9a-f]{8,16})[ \]]")
_STUB_1 = re.compile(r'^\[(ref|claim) [^\n]*replay_result\(id="([0-9a-f]{16})"\)$')


def stub_for(
    item: Reference | Claim,
    budget: int | None = None,
    *,
    id: str | None = None,
    key: bool = True,
) -> str:
    """The stub line of an evicted result. `id` is the id it shows (a unique prefix; by
    default the first `SHORT_ID` characters of the item's id); with `key=False` a
    Reference leaves out its key (the call right before it shows it). With `budget`, the
    key or label is cut (at a word or a path separator) to leave room for the gist."""
    shown = id or item.id[:SHORT_ID]
    if isinstance(item, Reference):
        where = f" {_cut(item.key, budget)}" if key and item.key else ""
        head = f"[ref:{shown}{where} · {item.tokens:,} tok · {item.observed_at:%Y-%m-%d}]"
        return f"{head} {one_line(item.gist)}".rstrip()
    label = f" {_cut(item.label, budget)}" if item.label else ""
    return f"[claim:{shown}{label}] {one_line(item.text)}".rstrip()


def short_id(store: Store, record_id: str) -> str:
    """The id a stub shows for a record: the shortest prefix of `SHORT_ID` characters or
    more that named it alone when its first stub was made, and the same one ever after.

    The store remembers which record each prefix a stub showed stands for (as text shown
    to a model), so that the prefix stays the same when the store later holds another
    record that shares it, and `replay_result` still finds the record by it then."""
    for length in range(SHORT_ID, ID_LENGTH):
        prefix = record_id[:length]
        owner = store.shown(prefix_mark(prefix))
        if owner == record_id:
            return prefix  # shown before: the same text again
        if owner is not None:
            continue  # another record's stub shows this prefix
        try:
            alone = store.resolve(prefix) == record_id
        except AmbiguousId:
            continue
        except AddressableError:
            return record_id
        if alone:
            store.set_shown(prefix_mark(prefix), record_id)
            return prefix
    return record_id


STUB_CHARS = 8000  # characters a stub has at most (a budget of some 2,000 tokens)


def parse_stub(text: str) -> tuple[str, str] | None:
    """("ref" or "claim", the id or id prefix it shows) when `text` is a stub, else None."""
    stripped = text.strip()
    # A stub is one line of at most its budget: a long line that starts like one (a page
    # written to look like a stub, never to be compacted) is not one.
    if "\n" in stripped or len(stripped) > STUB_CHARS:
        return None
    match = _STUB.match(stripped) or _STUB_1.match(stripped)
    return (match[1], match[2]) if match else None


def _cut(text: str, budget: int | None) -> str:
    shown = one_line(text)  # a key or a label can hold any character: a stub is plain text
    if budget is None:
        return shown
    room = max(6, int(budget * LABEL_SHARE))
    if count_tokens(shown) <= room:
        return shown
    # Whole words (or path parts) only, then an ellipsis: never a word cut in two.
    parts = re.split(r"(?<=[ /?&])", shown)
    while len(parts) > 1 and count_tokens("".join(parts) + "…") > room:
        parts.pop()
    return "".join(parts).rstrip() + "…"
