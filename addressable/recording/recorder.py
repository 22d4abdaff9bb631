"""Recording: a tool call's observation, stored under its id, and read back.

Knows the store, the session, the clock and the secrets to mask; nothing of the
model's tools, messages, compaction or the state document.
"""

from __future__ import annotations

import codecs
import contextvars
import functools
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict, Unpack

from ..core.blocks import encode_blocks
from ..core.errors import (
    AddressableError,
    AmbiguousId,
    ArgumentError,
    Expired,
    NotFound,
    StoreError,
)
from ..core.ids import (
    ID_LENGTH,
    action_id_of,
    canonical_args,
    check_prefix,
    content_hash,
    read_args,
    result_id,
)
from ..core.payload import BLOCKS, TEXT, charset_of
from ..core.records import (
    Determinism,
    Outcome,
    Record,
    Result,
    Status,
    aware,
    member,
    stored_result,
)
from ..core.secrets import Secrets
from ..core.tokens import count_tokens
from ..store import KeyValueStore, Store
from ..store.backend import store_failure
from ..store.codec import NewFields, new_record
from ..store.keys import prefix_mark
from .unstorable import describe, escaped, record_unstored

Clock = Callable[[], datetime]
# The records made during one kit.handle() call, so that it knows which one it showed.
RECORDED: contextvars.ContextVar[list[Record] | None] = contextvars.ContextVar(
    "addressable_recorded", default=None
)


# The time now, in UTC: the default clock (a partial, not a function, to run no Python).
utc_now: Clock = functools.partial(datetime.now, UTC)


def checked_time(value: object) -> datetime:
    """`value` if it is a timezone-aware datetime, else `ArgumentError` naming it."""
    return aware(value, "the Toolkit's clock")


class RecordOptions(TypedDict, total=False):
    """What `Toolkit.record` takes beyond the call and its payload."""

    key: str | None  # the addressable key: a URL, `path@rev`, ...
    media_type: str  # of the payload; text/plain; charset=utf-8 when not given
    status: Status  # `error` when the tool raised
    error: str | None  # the exception, as "Type: message"
    outcome: Outcome | None  # of an Action
    idempotency_key: str | None  # sent with an Action, so that a retry is recognised
    max_age: timedelta | None  # how long the observation may be relied on
    meta: Mapping[str, Any] | None  # adapter facts: final URL, ETag, status code


class Recorder:
    """Stores observations of tool calls in `store`, under `session`, at `clock`'s
    time, with every credential `secrets` knows masked; and reads them back by id."""

    def __init__(
        self,
        store: Store,
        *,
        session: str,
        clock: Clock,
        nonce: Callable[[], bytes],
        secrets: Secrets,
    ) -> None:
        self.store = store
        self.session = session
        self.clock = clock
        self.nonce = nonce
        self.secrets = secrets

    def record(
        self,
        tool: str,
        args: Mapping[str, Any],
        payload: bytes,
        *,
        determinism: Determinism | str,
        **options: Unpack[RecordOptions],
    ) -> Result:
        """Store one observation of a tool call and return it as a `Result`.

        The low-level entry for adapters that build the payload themselves: `payload`
        is the exact bytes, `args` must be JSON (they are part of the id). `options`
        are the `RecordOptions`: key, media_type, status, error, outcome,
        idempotency_key, max_age and meta. An action (the change has happened) whose
        fields cannot be stored is still recorded, with them written as text, status
        error and outcome `unknown`; then `ArgumentError` names that record.
        """
        try:
            return self.write(tool, args, canonical_args(args), payload, determinism, options)
        except StoreError:
            raise
        except Exception as exc:
            error = self._unstorable(tool, args, payload, determinism, options, exc)
            if error is exc:
                raise
            raise error from exc

    def record_failure(
        self,
        tool: str,
        args: Mapping[str, Any],
        exc: BaseException,
        *,
        determinism: Determinism | str,
        **options: Unpack[RecordOptions],
    ) -> Result:
        """`Toolkit.record_failure` says what it does."""
        try:
            return self.write_failure(tool, args, canonical_args(args), exc, determinism, options)
        except StoreError:
            raise
        except Exception as failed:
            error = self._unstorable(tool, args, None, determinism, options, failed)
            if error is failed:
                raise
            raise error from failed

    def _unstorable(
        self,
        tool: str,
        args: Mapping[str, Any],
        payload: bytes | None,
        determinism: Determinism | str,
        options: RecordOptions,
        exc: Exception,
    ) -> Exception:
        """What to raise when a call's fields cannot be stored: for an action (it has
        happened) the error naming the record made of it anyway; for a field that cannot
        be encoded, an `ArgumentError`; else `exc` itself."""
        if determinism == Determinism.SIDE_EFFECT:
            what = "the arguments or options"
            return self.write_unstored(tool, args, payload, determinism, options, exc, what)
        if isinstance(exc, UnicodeError):
            return ArgumentError(f"{tool!r}: a field cannot be stored: {describe(exc)}")
        return exc

    def write_failure(
        self,
        tool: str,
        args: Mapping[str, Any],
        args_json: bytes,
        exc: BaseException,
        determinism: Determinism | str,
        options: RecordOptions,
    ) -> Result:
        try:
            message = f"{type(exc).__name__}: {exc}"
            payload = message.encode("utf-8")
        except Exception:  # an unprintable exception, or a lone surrogate in its text
            message = escaped(f"{type(exc).__name__}: {describe(exc)}")
            payload = message.encode("utf-8")
        failed: RecordOptions = {
            **options,
            "media_type": TEXT,
            "status": Status.ERROR,
            "error": message,
        }
        return self.write(tool, args, args_json, payload, determinism, failed)

    def write_unstored(
        self,
        tool: str,
        args: Mapping[str, Any],
        payload: bytes | None,
        determinism: Determinism | str,
        options: RecordOptions,
        exc: Exception,
        what: str,
    ) -> ArgumentError:
        """After a call has run and `what` it gave cannot be stored: record the call as
        an error (an action with outcome `unknown`) with every field made storable, and
        return the error for the caller to raise. Only the failure path comes here."""
        return record_unstored(
            self.write, self._now, tool, args, payload, determinism, options, exc, what
        )

    def _now(self) -> datetime:
        """The clock's time; the time now if the clock is what failed."""
        try:
            return checked_time(self.clock())
        except Exception:  # the clock is what failed: the record still gets a true time
            return utc_now()

    def write(
        self,
        tool: str,
        args: Mapping[str, Any],
        args_json: bytes,
        payload: bytes,
        determinism: Determinism | str,
        options: RecordOptions,
        *,
        at: datetime | None = None,
    ) -> Result:
        key = options.get("key")
        if type(determinism) is not Determinism:
            determinism = member(Determinism, determinism, "determinism")
        if self.secrets:
            # Credentials never reach the store: every value the toolkit has resolved is
            # masked, as written or encoded, in every field that can carry text.
            payload = masked_payload(self.secrets, payload, options.get("media_type"))
            masked = self.secrets.mask_json(args)
            if masked is not args:
                args, args_json = masked, canonical_args(masked)
            options = self.secrets.mask_json(options)  # key, error, media type, meta, ...
            key = options.get("key")
        digest = content_hash(payload)
        nonce = None
        if determinism is Determinism.SIDE_EFFECT:
            nonce = self.nonce().hex()
            rid = action_id_of(tool, args_json, key, digest, nonce)
        else:
            rid = result_id(tool, args_json, key, digest)
        now = self.clock() if at is None else at
        if type(now) is not datetime or now.tzinfo is None:
            now = checked_time(now)  # a naive time is refused, never guessed to be UTC
        fields = (rid, tool, args, args_json, key, determinism, digest, len(payload), now)
        made = new_record(fields, self.session, nonce, options)
        if made is None:  # a field not of its own type: pydantic converts it, or says why not
            record, value = _validated(fields, self.session, nonce, options), None
        else:
            record, value = made
        store = self.store
        try:
            if value is not None and isinstance(store, KeyValueStore):
                store.put(record, payload, value)
            else:
                store.put(record, payload)
        except AddressableError:
            raise
        except Exception as exc:
            # The store failed outside its own errors (a backend's library raised what
            # its backend does not translate): a StoreError, not a value said unstorable.
            raise store_failure(store.location, "writing", exc) from exc
        recorded = RECORDED.get()
        if recorded is not None:
            recorded.append(record)
        return stored_result(record, payload, False)

    def get(self, id: str) -> Record:
        """`Toolkit.get` says what it does."""
        return self.store.get(self._full_id(id))

    def fetch(self, id: str) -> tuple[Record, bytes]:
        """The record for an id or unique prefix, and its payload: a replay."""
        text, store = self._full_id(id), self.store
        if isinstance(store, KeyValueStore):  # one read for both, where it can
            return store.fetch(text)
        record = store.get(text)
        return record, store.read(record)

    def _full_id(self, id: str) -> str:
        """The full id an id or unique prefix names. A full id needs no resolving: the
        store's read itself says NotFound or Expired."""
        text = check_prefix(id)
        return text if len(text) == ID_LENGTH else self.store.resolve(text)

    def ingest(
        self,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        text: str,
        *,
        is_error: bool = False,
        determinism: Determinism | str = Determinism.NONDETERMINISTIC,
        content: Sequence[Any] | None = None,
        shape: str | None = None,
    ) -> Result:
        """Store a tool result this kit did not make (as found in a message list),
        keyed by its tool-call id, so that it too can be evicted and replayed. Where it
        came from is unknown, so it is a Claim unless `determinism` says otherwise; a
        side effect is an Action whose outcome is `unknown` (nobody said what it did).
        Ingesting the same result again (a list compacted twice) finds the first record
        and adds no observation: the result was not seen again, only read again. A result
        that held more than text (images, files) is stored whole: its `content` list, in
        the list's `shape` (`text` is then the part the model read as text)."""
        determinism = member(Determinism, determinism, "determinism")
        payload = text.encode("utf-8")
        if content is not None:
            if shape is None:
                raise ArgumentError("ingest: content= needs the shape= of its message list")
            payload = encode_blocks(content, shape)
        found = find_ingested(
            self.store, self.secrets, call_id, tool, arguments, payload, determinism
        )
        if found is not None:
            return Result(record=found, payload=self.store.read(found))
        options = ingested_options(call_id, text, is_error, determinism)
        if content is not None:
            options["media_type"] = BLOCKS
        return self.record(tool, arguments, payload, determinism=determinism, **options)

    def tokens(self, id: str) -> int:
        """`Toolkit.tokens` says what it does."""
        record = self.get(id)
        if record.tokens is None:
            n = count_tokens(self.store.read(record).decode("utf-8", errors="replace"))
            self.store.set_tokens(record.content_hash, n)
            return n
        return record.tokens


INGESTED_FROM = "tool_call_id"  # the meta key of a result ingested: the call it answered


def ingested_options(
    call_id: str, text: str, is_error: bool, determinism: Determinism
) -> RecordOptions:
    """How a result found in a message list is recorded: keyed by its tool-call id; an
    error with its first line; a side effect with its outcome `unknown` (nobody said
    what it did)."""
    options: RecordOptions = {"key": f"call:{call_id}", "meta": {INGESTED_FROM: call_id}}
    if is_error:
        options["status"] = Status.ERROR
        options["error"] = text.strip().splitlines()[0][:200] if text.strip() else "error"
    if determinism is Determinism.SIDE_EFFECT:
        options["outcome"] = Outcome.UNKNOWN
    return options


def masked_payload(secrets: Secrets, payload: bytes, media_type: object) -> bytes:
    """`payload` as it is stored: every value `secrets` resolved masked, in UTF-8, in
    the charset its media type names, and in the one its byte-order mark says (a
    reader takes UTF-16 from the mark when no charset is named)."""
    payload = secrets.mask_bytes(payload)
    charset = charset_of(media_type) if isinstance(media_type, str) else "utf-8"
    if codecs.lookup(charset).name != "utf-8":
        payload = secrets.mask_in(payload, charset)
    for mark, codec in _MARKS:
        if payload.startswith(mark):
            return mark + secrets.mask_in(payload[len(mark) :], codec)
    return payload


# Byte-order marks and the encodings they say; UTF-32's first, as UTF-32 LE's starts
# with UTF-16 LE's.
_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def find_ingested(
    store: Store,
    secrets: Secrets,
    call_id: str,
    tool: str,
    arguments: Mapping[str, Any],
    payload: bytes,
    determinism: Determinism,
) -> Record | None:
    """The record an earlier ingest (or compaction) made of a tool call's result found
    in a message list, if the store still has it: the same tool, arguments and payload
    (as stored: with the credentials masked), under the key `call:ID`."""
    key = f"call:{call_id}"
    args_json = canonical_args(arguments)
    if secrets:  # what was stored is masked: compare with that
        payload = masked_payload(secrets, payload, TEXT)
        args_json = canonical_args(secrets.mask_json(arguments))
    digest = content_hash(payload)
    if determinism is not Determinism.SIDE_EFFECT:
        try:
            return store.get(result_id(tool, args_json, key, digest))
        except AddressableError:
            return None  # not there yet (or expired)
    # An Action's id has a nonce of its own: it is found by its key instead.
    for record in store.records(key=key, tool=tool):
        if (
            record.determinism is Determinism.SIDE_EFFECT
            and record.content_hash == digest
            and canonical_args(record.args) == args_json
        ):
            return record
    return None


def _validated(
    fields: NewFields, session: str | None, nonce: str | None, options: RecordOptions
) -> Record:
    """The record of a call, validated by pydantic from its fields as given."""
    rid, tool, args, args_json, key, determinism, digest, size, now = fields
    # Only the options given (and not None) are passed: fewer fields to validate.
    given: dict[str, Any] = {"media_type": TEXT}
    given.update((k, v) for k, v in options.items() if v is not None and k != "key")
    # Said in one line, with the values each takes, rather than as pydantic says it.
    if "status" in given:
        given["status"] = member(Status, given["status"], "status")
    if "outcome" in given:
        given["outcome"] = member(Outcome, given["outcome"], "outcome")
    given.update(
        id=rid,
        tool=tool,
        args=read_args(args, args_json),
        key=key,
        determinism=determinism,
        content_hash=digest,
        size=size,
        observed_at=now,
        session=session,
    )
    if nonce is not None:
        given["nonce"] = nonce
    return Record.model_validate(given)


def model_resolve(store: Store, session: str | None, raw_id: str) -> str:
    """The full id a model names by `raw_id`: a full id names any session's record (ids
    are not guessed), a prefix one its own `session` has seen, or the record a stub
    showing that prefix stands for, wherever the stub is read now. A prefix never
    reaches another session's records, and the ids an `AmbiguousId` lists are the
    session's own: as with close ids, another session's would leak. `BadId`,
    `NotFound`, `AmbiguousId`. Every id a model gives goes through it: `replay_result`,
    a state document's citations, an Api `VERIFY`."""
    text = check_prefix(raw_id)
    if len(text) == ID_LENGTH:
        return text
    owner = store.shown(prefix_mark(text))
    if owner is not None and owner.startswith(text):
        return owner  # a stub showed this prefix: it stays its record's
    try:
        candidates = [store.resolve(text)]
    except AmbiguousId as exc:
        candidates = exc.candidates
    seen = [c for c in candidates if isinstance(session, str) and _seen(store, c, session)]
    if not seen:
        raise NotFound(f"no result id starts with {text!r}")
    if len(seen) > 1:
        raise AmbiguousId(text, seen)
    return seen[0]


def _seen(store: Store, record_id: str, session: str) -> bool:
    """Whether `session` made the record or saw it again (an expired one is seen by
    none: who saw it is gone with it)."""
    try:
        return any(o.session == session for o in store.observations(record_id))
    except (NotFound, Expired):
        return False
