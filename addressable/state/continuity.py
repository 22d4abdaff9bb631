"""What keeps the work going across compactions and restarts: the facts the harness
knows exactly (pre-filled into the state document), checkpoints, and staleness: a fact
has an age, and an action that depends on a stale one waits until it is re-read."""

from __future__ import annotations

import json
import reprlib
import warnings
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from ..context.stubs import evict
from ..core.credentials import redact_urls
from ..core.errors import (
    AddressableError,
    ArgumentError,
    BadId,
    NotFound,
    NotReplayable,
    Stale,
    StaleWarning,
)
from ..core.ids import content_hash, expect, listed
from ..core.records import Determinism, Outcome, Record, Report, Result, aware
from ..recording.recorder import model_resolve
from .document import Artifact, StateAction, StateDocument, StateObservation, Task, outcome_in

if TYPE_CHECKING:
    from ..core.secrets import Secrets
    from ..recording.calls import Calls
    from ..recording.recorder import Clock, Recorder
    from ..store import Store

CHECKPOINT_TOOL = "checkpoint"
CHECKPOINT_PIN = "checkpoint"
"""The reason of the pins a checkpoint makes on the records it cites."""
CHECKPOINT_PIN_AGE = timedelta(days=7)
"""How long a checkpoint's pin lasts after the last checkpoint that cited the record
(each one pins again, so the age restarts), unless the kit's session is ended before:
as a stub's pin, never for ever, since what a model cites is not the user's to keep."""
OBSERVATIONS_KEPT = 20  # the newest reads the harness lists in a state document
StalePolicy = Literal["refuse", "warn"]


class Revalidation(BaseModel):
    """What `kit.revalidate` did: fresh results by old id, and what it could only mark."""

    fresh: dict[str, str]  # old id -> id of the new observation
    changed: list[str]  # old ids whose content changed (they stay stale)
    stale: list[str]  # ids that cannot be re-read (nondeterministic, actions, gone)


class Recovery(BaseModel):
    """What `kit.recover` restored, and what must be read again before the next action."""

    document: StateDocument
    must_reread: list[str]


def harness_state(
    kit: Continuity, task: Task, document: StateDocument | None = None
) -> StateDocument:
    """The facts the store knows exactly for the kit's session (queries run, artifacts,
    actions with their outcome now, the newest observations), merged under `document`
    so that a model that wrote it cannot drop any of them."""
    records = list(kit.store.records(session=kit.session))
    queries = [q for r in records if isinstance(q := r.meta.get(Report.QUERY), str)]
    artifacts = {}
    for r in records:
        artifact = r.meta.get(Report.ARTIFACT)
        if isinstance(artifact, dict) and "path" in artifact:
            artifacts[str(artifact["path"])] = Artifact(
                path=str(artifact["path"]), rev=str(artifact.get("rev", ""))
            )
    actions = [
        StateAction(
            id=r.id,
            operation=_operation(r),
            marker=_str(r.meta.get(Report.MARKER)),
            idempotency_key=r.idempotency_key,
            outcome=outcome_in(kit.store, r.id) or r.outcome,
            observed_at=r.observed_at.isoformat(),
        )
        for r in records
        if r.determinism is Determinism.SIDE_EFFECT and r.outcome
    ]
    reads = [r for r in records if r.determinism is Determinism.DETERMINISTIC and r.key]
    observations = [
        StateObservation(
            id=r.id,
            source=r.key or r.tool,
            value=_gist(kit, r),
            observed_at=kit.store.last_seen(r).isoformat(),
            evidence=[r.id],
        )
        for r in reads[-OBSERVATIONS_KEPT:]
    ]
    base = document or StateDocument(task=task)
    merged = base.model_copy(deep=True)
    merged.task = task
    merged.queries_run = _union(merged.queries_run, queries)
    have = {a.path for a in merged.artifacts}
    merged.artifacts += [a for p, a in artifacts.items() if p not in have]
    truth = {a.id: a for a in actions}
    # The store's word on an action wins over the document's. A model may cite an
    # action by a prefix of its id: resolved, it is the same action, listed once.
    by_id: dict[str, StateAction] = {}
    for action in merged.actions:
        full = _full_id(kit, action.id)
        by_id.setdefault(full, truth.pop(full, action))
    merged.actions = [*by_id.values(), *truth.values()]
    for hypothesis in merged.hypotheses:  # one that depends on an action cites it so too
        if hypothesis.depends_on and (full := _full_id(kit, hypothesis.depends_on)) in by_id:
            hypothesis.depends_on = full
    seen = {_full_id(kit, o.id) for o in merged.observations}
    merged.observations += [o for o in observations if o.id not in seen]
    return merged


def _full_id(kit: Continuity, ref: str) -> str:
    """The full id `ref` names in the store as a model's citation names it (a prefix,
    only what the kit's session has seen), or `ref` itself when it names none (a
    document's problems say so)."""
    try:
        return model_resolve(kit.store, kit.session, ref)
    except AddressableError:
        return ref


def _operation(record: Record) -> str:
    written = record.meta.get(Report.WRITTEN)
    left_out = set(written) if isinstance(written, list) else set()
    args = {k: v for k, v in record.args.items() if k not in left_out}
    return f"{record.tool} {json.dumps(args, ensure_ascii=False, sort_keys=True)}"


def _gist(kit: Continuity, record: Record) -> str:
    # A record never changes, so its gist is made once; a secret learnt since masks it again.
    key = (record.id, len(kit.secrets.known()))
    if key not in kit.gists:
        try:
            item = evict(record, store=kit.store, budget=40, secrets=kit.secrets)
        except AddressableError:
            return ""
        kit.gists[key] = getattr(item, "gist", "") or getattr(item, "text", "")
    return kit.gists[key]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _union(first: list[str], second: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def checkpoint(kit: Continuity, document: StateDocument) -> Result:
    """Save the document and pin it and the records it refers to, for the kit's session
    and at most `CHECKPOINT_PIN_AGE`. The document is stored with every credential
    written in a URL redacted and (as in every record) every known secret value masked."""
    expect(document, StateDocument, "checkpoint: document")
    document = _without_url_credentials(document)
    saved = kit.record(
        CHECKPOINT_TOOL,
        {"session": kit.session},
        document.model_dump_json().encode(),
        determinism="nondeterministic",
        key=f"checkpoint:{kit.session}",
        media_type="application/json",
    )
    # The one saved last, whatever the clock says (it may not move between two saves).
    kit.store.set_shown(_latest_mark(kit.session), saved.id)
    now = aware(kit.clock(), "the Toolkit's clock")
    _pin_cited(kit, saved.id, now)  # what `recover` reads: kept as long as what it cites
    for ref in sorted(_refs(document)):
        try:
            _pin_cited(kit, kit.store.resolve(ref), now)
        except AddressableError:
            continue  # a URL, or evidence the store does not have: nothing to pin
    return saved


def _latest_mark(session: str | None) -> str:
    """Under what the store keeps the id of a session's checkpoint saved last."""
    return content_hash(f"checkpoint saved last\0{session}".encode())


def _refs(document: StateDocument) -> set[str]:
    refs = set(document.checkpoint.refs if document.checkpoint else [])
    refs |= {e for f in document.findings for e in f.evidence}
    return refs | {o.id for o in document.observations}


def _pin_cited(kit: Continuity, record_id: str, now: datetime) -> None:
    """Pin a record a checkpoint cites, for the kit's session and `CHECKPOINT_PIN_AGE`.

    A record holds one pin. The store never weakens a user pin, and joins this one to a
    live pin of another reason (a stub's, for other sessions): the sessions of both, the
    later end. So the other pin does not end with this session, nor this one with
    theirs."""
    until = now + CHECKPOINT_PIN_AGE
    kit.store.pin(record_id, reason=CHECKPOINT_PIN, session=kit.session, until=until)


# -- credentials in URLs --------------------------------------------------------------------


def _without_url_credentials(document: StateDocument) -> StateDocument:
    """`document` with the credentials in every URL it holds, in any field, redacted (a
    model writes the document, and may cite a URL with a password or a token in it)."""
    dumped = document.model_dump(mode="json")
    redacted = redact_urls(dumped)
    return document if redacted == dumped else StateDocument.model_validate(redacted)


def recover(kit: Continuity, session: str | None = None) -> Recovery:
    """Restore the newest checkpoint of `session` (the kit's by default). A checkpoint
    does not freeze the world it describes: every fact it refers to is stale until
    re-read, and `must_reread` lists them.

    The newest is the one saved last: a document saved again (the work went back to an
    earlier position) is the same record seen again. The store keeps which was saved
    last; where it does not know (checkpoints imported from a bundle, which carries no
    such mark), checkpoints are ordered by their latest sighting, and those seen last at
    the same instant by their first."""
    key = f"checkpoint:{session or kit.session}"
    saved = list(kit.store.records(tool=CHECKPOINT_TOOL, key=key))
    if not saved:
        raise NotFound(f"no checkpoint for session {session or kit.session!r}")
    latest = kit.store.shown(_latest_mark(session or kit.session))
    newest = (
        next((r for r in saved if r.id == latest), None)
        or max(enumerate(saved), key=lambda n: (kit.store.last_seen(n[1]), n[0]))[1]
    )
    document = StateDocument.model_validate_json(kit.store.read(newest))
    refs = list(document.checkpoint.refs if document.checkpoint else [])
    refs += [o.id for o in document.observations]
    must = []
    for ref in dict.fromkeys(refs):
        try:
            record = kit.store.get(kit.store.resolve(ref))
        except AddressableError:
            continue
        if record.determinism is not Determinism.SIDE_EFFECT:
            must.append(record.id)
    kit.mark_stale(must)
    return Recovery(document=document, must_reread=must)


def revalidate(kit: Continuity, ids: Iterable[str]) -> Revalidation:
    """Re-read what is deterministic (a new observation; unchanged content makes the
    fact fresh again); mark the rest stale. A record that is gone is listed as stale;
    an id that is malformed or ambiguous is an error, raised before anything changes."""
    found: list[tuple[str, Record | None]] = []
    for ref in listed(ids):
        try:
            found.append((ref, kit.get(ref)))
        except BadId:  # a NotFound too, but the caller's mistake: said, not listed stale
            raise
        except NotFound:  # expired, or never stored: nothing can be re-read
            found.append((ref, None))
    fresh: dict[str, str] = {}
    changed: list[str] = []
    stale: list[str] = []
    for ref, record in found:
        if record is None:
            stale.append(ref)
            continue
        try:
            result = kit.replay(record.id, verify=True)
        except (NotReplayable, AddressableError):
            stale.append(record.id)
            kit.stale_ids.add(record.id)
            continue
        fresh[record.id] = result.id
        if result.changed:
            changed.append(record.id)  # the fact it recorded no longer holds
        else:
            kit.stale_ids.discard(record.id)
    return Revalidation(fresh=fresh, changed=changed, stale=stale)


def stale_among(kit: Continuity, ids: Iterable[str], now: datetime) -> list[str]:
    """The ids whose facts may no longer hold: marked stale, or older than their max age.
    `now` must be timezone-aware, as every stored time is (`ArgumentError` if not)."""
    now = aware(now, "the time given as now")
    out = []
    for ref in listed(ids):
        record = kit.get(ref)
        if record.id in kit.stale_ids or (
            record.max_age is not None and now - kit.store.last_seen(record) > record.max_age
        ):
            out.append(record.id)
    return out


def require_fresh(kit: Continuity, ids: Iterable[str], policy: StalePolicy) -> None:
    stale = stale_among(kit, ids, aware(kit.clock(), "the Toolkit's clock"))
    if not stale:
        return
    if policy == "warn":
        warnings.warn(
            str(Stale(stale)).replace("refused", "going ahead"), StaleWarning, stacklevel=3
        )
        return
    raise Stale(stale)


class Continuity:
    """The continuity features over a recorder: the state document, checkpoints, and
    which facts are stale (and whether an action on them is refused or warned of)."""

    def __init__(self, recorder: Recorder, calls: Calls, stale_policy: StalePolicy) -> None:
        self._rec = recorder
        self.record = recorder.record
        self.get = recorder.get
        self.replay = calls.replay
        self.stale_ids: set[str] = set()
        self.stale_policy = stale_policy
        self.gists: dict[tuple[str, int], str] = {}  # a state document's observations

    @property
    def stale_policy(self) -> StalePolicy:
        """ "refuse" or "warn": what an action on a stale fact gets."""
        return self._stale_policy

    @stale_policy.setter
    def stale_policy(self, policy: StalePolicy) -> None:
        if policy not in ("refuse", "warn"):  # anything else would refuse, unsaid
            raise ArgumentError(f"stale_policy is one of refuse, warn, not {reprlib.repr(policy)}")
        self._stale_policy: StalePolicy = policy

    @property
    def store(self) -> Store:
        return self._rec.store

    @property
    def session(self) -> str:
        return self._rec.session

    @property
    def clock(self) -> Clock:
        return self._rec.clock

    @property
    def secrets(self) -> Secrets:
        return self._rec.secrets

    def state(self, task: Task, document: StateDocument | None = None) -> StateDocument:
        return harness_state(self, task, document)

    def checkpoint(self, document: StateDocument) -> Result:
        return checkpoint(self, document)

    def recover(self, session: str | None = None) -> Recovery:
        return recover(self, session)

    def revalidate(self, ids: Iterable[str]) -> Revalidation:
        return revalidate(self, ids)

    def require_fresh(self, ids: Iterable[str]) -> None:
        require_fresh(self, ids, self.stale_policy)

    def mark_stale(self, ids: Iterable[str]) -> None:
        # Every id resolved before any is marked: a bad one changes nothing.
        self.stale_ids.update([self.store.resolve(i) for i in listed(ids)])

    def unmark_stale(self, ids: Iterable[str]) -> None:
        self.stale_ids.difference_update([self.store.resolve(i) for i in listed(ids)])

    def outcome(self, id: str) -> Outcome | None:
        return outcome_in(self.store, self.get(id).id)
