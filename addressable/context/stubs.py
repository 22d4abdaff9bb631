"""The one-line stubs that stand in for evicted results: written and read here only.

The format (what `stub_for` writes and `parse_stub` reads):

    [ref:ID KEY · N tok · YYYY-MM-DD] GIST
    [claim:ID LABEL] CLAIM

ID is the shortest prefix of the record's id (8 hex characters or more) that named it
alone when the stub was made; `replay_result` takes it. KEY (of a Reference) is left out
when the call that asked for the result, which stands right before the stub, shows it
whole; LABEL (what a Claim answers: a query, a command) likewise.

Eviction: the smallest thing that lets a result leave the context, by the test of
whether the operation that recovers it is a function of its key alone.
"""

from __future__ import annotations

import json
import re

from ..core.blocks import blocks_text, decode_blocks, describe
from ..core.errors import AddressableError, AmbiguousId, ArgumentError
from ..core.ids import ID_LENGTH, SHORT_ID, expect
from ..core.payload import BLOCKS, TEXT, decode_text
from ..core.records import Claim, Determinism, Record, Reference
from ..core.secrets import Secrets
from ..core.tokens import count_tokens
from ..store import Store
from ..store.keys import prefix_mark
from .summarize import (
    DEFAULT_BUDGET,
    DefaultSummarizer,
    Summarizer,
    check_summarizer,
    one_line,
    stub_budget,
)

REPLAY_TOOL = "replay_result"  # the tool a model calls to get a result back by its id

LABEL_SHARE = 0.3  # at most this share of a stub's budget goes to its key or label
_STUB = re.compile(r"^\[(ref|claim):([0-9a-f]{8,16})[ \]]")


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
    match = _STUB.match(stripped)
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


def evict(
    record: Record,
    *,
    store: Store,
    summarizer: Summarizer | None = None,
    budget: int = DEFAULT_BUDGET,
    tokens: int | None = None,
    label: bool = True,
    known: str = "",
    secrets: Secrets | None = None,
) -> Reference | Claim:
    """A `Reference` for a deterministic result (its key replays it: the stub keeps the
    key and a one-line gist), else a `Claim` (what it established, extracted now, since
    running it again would not give the same answer).

    The stub scales with what it replaces: it takes a share of the result's tokens
    (`stub_budget`), never more than `budget` tokens in all; a search keeps at least its
    query and its first hits' URLs. `tokens` is what the model was shown of it, when that
    differs from the payload (a page shown as readable text); by default the payload's
    count. With `label=False` a Claim does not repeat what was asked (the query, the
    command): for stubs that stand right after the call that asked it. `known` is text
    the conversation already shows; the default summariser does not repeat its values.
    `secrets` (a kit's `kit.secrets`): every value it resolved is masked in the stub, as
    the store masks it in the payload; a gist reads the payload as text (HTML decoded,
    markup dropped), which can spell a value the stored bytes held only escaped or split."""
    return make_stub(
        record,
        store=store,
        summarizer=summarizer,
        budget=budget,
        tokens=tokens,
        label=label,
        known=known,
        secrets=secrets,
    )[0]


# Where a sentence ends and the next begins, within a gist.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
# A word that is a value (a path, an id, a dotted or snake_case name, a number), not prose.
_VALUE = re.compile(r"[\d_./:@#=-]|[a-z][A-Z]")


def make_stub(
    record: Record,
    *,
    store: Store,
    summarizer: Summarizer | None = None,
    budget: int = DEFAULT_BUDGET,
    tokens: int | None = None,
    label: bool = True,
    known: str = "",
    short_id: str | None = None,
    superseded: bool = False,
    secrets: Secrets | None = None,
) -> tuple[Reference | Claim, str]:
    """`evict`, and the stub line it makes (showing `short_id`, when given)."""
    expect(record, Record, "evict: record")
    check_summarizer(summarizer, "evict")
    if not callable(getattr(store, "read", None)):
        raise ArgumentError(f"evict: store= must be a Store, not {type(store).__name__}")
    payload = store.read(record)
    beside = ""  # what the result held beside its text: images, files
    if record.media_type == BLOCKS:
        content, _ = decode_blocks(payload)
        beside = one_line(describe(content))
        payload = blocks_text(content).encode("utf-8")
        record = record.model_copy(update={"media_type": TEXT})
    if tokens is None:
        tokens = record.tokens
    if tokens is None:
        tokens = count_tokens(decode_text(payload, record.media_type))
        store.set_tokens(record.content_hash, tokens)
    summarize = summarizer or DefaultSummarizer(known, tokens)
    shown_id = short_id or record.id[:SHORT_ID]
    # A record without a key shows its arguments as its key: the call right before it
    # shows them too.
    show_key = label or not (record.key is None or _asked_with(record, record.key))
    if record.determinism is Determinism.DETERMINISTIC:
        skeleton: Reference | Claim = Reference(
            id=record.id,
            tool=record.tool,
            key=record.key or _args_label(record),
            gist="",
            tokens=tokens,
            observed_at=record.observed_at,
        )
    else:
        skeleton = Claim(
            id=record.id,
            tool=record.tool,
            text="",
            label=_label(record) if label else "",
            observed_at=record.observed_at,
        )

    def line(item: Reference | Claim, room: int | None) -> str:
        return stub_for(item, room, id=shown_id, key=show_key)

    # The default summariser scales its gist itself (with the result and with the
    # values it carries); another gets a share of the result's tokens.
    room = budget
    if summarizer is not None:
        room = min(budget, stub_budget(tokens, budget) + count_tokens(line(skeleton, None)))

    left = room - count_tokens(line(skeleton, room)) - (count_tokens(beside) + 2 if beside else 0)
    if superseded:  # what a later result of the same call or key says instead
        gist = "read again later" if isinstance(skeleton, Reference) else "run again later"
    else:
        gist = _summary(summarize(record, payload, left)) if left > 0 else ""
    if record.outcome is not None:
        gist = f"{record.outcome.value}: {gist}" if gist else record.outcome.value
    field = "gist" if isinstance(skeleton, Reference) else "text"

    def with_beside(gist: str) -> str:
        return " · ".join(part for part in (gist, beside) if part)

    item = skeleton.model_copy(update={field: with_beside(gist)})
    if isinstance(summarize, DefaultSummarizer) and summarize.floor > left:
        # A search keeps its query and its first hits' URLs, over the budget if need be.
        room = max(room, count_tokens(line(item, None)))
    # The whole stub must fit: leave out the gist's last parts until it does.
    while gist and count_tokens(line(item, room)) > room:
        gist = _shorter(gist)
        item = skeleton.model_copy(update={field: with_beside(gist)})
    made = line(item, room)
    return (item, made) if secrets is None else _masked(item, made, secrets)


def _masked(item: Reference | Claim, line: str, secrets: Secrets) -> tuple[Reference | Claim, str]:
    """The stub and its line with every value `secrets` resolved masked."""
    masked = secrets.mask(line)
    if masked == line:
        return item, line
    fields = secrets.mask_json(item.model_dump(mode="json"))
    return type(item).model_validate(fields), masked


def _shorter(text: str) -> str:
    """`text` less its last whole part: a "; "-separated part, else a sentence, else what
    follows a head (`"query", 4 hits: URL` keeps `"query", 4 hits`), else a value of a
    list of values; else nothing. Never a word of prose: a gist ends in no fragment."""
    if "; " in text:
        return text.rsplit("; ", 1)[0].rstrip(" ;,")
    sentences = _SENTENCE_END.split(text)
    if len(sentences) > 1:
        return " ".join(sentences[:-1])
    if ": " in text:
        return text.rsplit(": ", 1)[0].rstrip(" ;,")
    words = text.split(" ")
    if len(words) > 1 and all(_VALUE.search(word) for word in words):
        return " ".join(words[:-1])
    return ""


def _asked_with(record: Record, key: str | None) -> bool:
    """Whether the call's arguments show `key`: whole (a fetch's URL), or each of its
    words (an API read's method, URL and identity)."""
    if not key:
        return False
    values = {v for v in record.args.values() if isinstance(v, str)}
    return key in values or all(word in values for word in key.split() if len(word) > 2)


def _label(record: Record) -> str:
    """What was asked, shortly: the query of a search, the command of a shell."""
    for name in ("query", "command", "q", "url", "path"):
        value = record.args.get(name)
        if isinstance(value, str):
            shown = json.dumps(value, ensure_ascii=False) if name in ("query", "q") else value
            return one_line(shown)
    return one_line(_args_label(record))


def _args_label(record: Record) -> str:
    if not record.args:
        return "()"
    return json.dumps(record.args, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _summary(said: object) -> str:
    """What a summariser gave, as one line; `ArgumentError` if it is not text."""
    expect(said, str, "the summarizer's answer")
    assert isinstance(said, str)
    return one_line(said)
