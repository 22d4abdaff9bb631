"""Export and import: a store's contents as one self-contained, reproducible file.

A bundle is JSON lines, each line canonical JSON:

    {"format": "addressable-bundle", "version": 1}
    {"record": {...}, "observations": [...], "pinned": false}     one per record, by id
        a pinned record's line adds its pin: "pinned": true, "pin": {"reason",
        "sessions", "until"}
    {"blob": "<blake3>", "data": "<base64>"}                     one per payload, by hash
    {"end": true, "records": N, "blobs": M}

Nothing in it depends on when or where it was written, so exporting, importing into an
empty store and exporting again gives the same bytes. The end line makes a truncated
bundle detectable; import checks the whole file before it writes anything. A line is at
most `MAX_LINE` bytes: import reads one line at a time, so that bounds what it holds.

Each line is read and written here: one canonical JSON object a line, a blob line's
payload decoded straight from the line's bytes, and no line longer than `MAX_LINE`
held at all.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Container, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, NamedTuple

from pydantic import BaseModel, ValidationError

from ..core.errors import BundleError, IntegrityError, NotFound
from ..core.ids import ID_LENGTH, canonical_json, content_hash
from ..core.records import Observation, Record
from ..store import Store
from ..store.codec import one_line
from ..store.index import USER_PIN, refs
from ..store.models import Pin

# The longest line a bundle may have, its newline included: room for a payload of 512 MiB
# (the most a Redis store keeps in one value, by default) in base64: 715,827,884
# characters.
MAX_LINE = 720_000_000
# A blob line as export writes it: its payload is decoded straight from the line's bytes,
# never parsed into a string first.
_BLOB_HEAD = re.compile(rb'\{"blob":"([0-9a-f]{64})","data":"')
_BLOB_TAIL = b'"}'
_PIECE = 1 << 16  # bytes of a line read at once while its end is looked for


def kind_of(item: dict[str, Any]) -> str:
    """What a line after the first is: "record", "blob", "end" or "unknown". Both
    readings of a bundle take each line alike: a record line that also gives "blob" and
    "data" is a record, never a payload the first reading did not check."""
    if "record" in item:
        return "record"
    if "blob" in item:
        return "blob"
    return "end" if item.get("end") is True else "unknown"


def words(exc: object) -> str:
    return " ".join(str(exc).split())[:300]


def blob_of(path: Path, number: int, item: dict[str, Any]) -> tuple[str, bytes]:
    """A blob line's hash and payload, which `lines` decoded."""
    data = item.get("data")
    if not isinstance(data, bytes):  # `lines` said why it could not decode it
        raise BundleError(f"{path}:{number}: malformed blob line: {data}")
    return str(item["blob"]), data


def lines(path: Path, only: Container[int] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line of the bundle (or the lines numbered in `only`) as a JSON object, a
    blob line's data decoded to bytes; `BundleError` for a line longer than `MAX_LINE`
    or not a JSON object. One line is held at a time, and let go before its payload is
    used."""
    try:
        with path.open("rb") as f:
            number = 0
            while raw := _read_line(f, path, number + 1):
                number += 1
                if only is not None and number not in only:
                    continue
                item = _item(path, number, raw)
                del raw
                yield number, item
    except OSError as exc:
        raise BundleError(f"cannot read bundle {path}: {exc}") from exc


def _read_line(f: IO[bytes], path: Path, number: int) -> bytes:
    """The next line of `f`, or b"" at its end. A long line is measured before it is
    read, then read in one piece: never held twice while it is put together, and never
    held at all when it is longer than `MAX_LINE`."""
    piece = f.readline(_PIECE)
    length = len(piece)
    if length == _PIECE and not piece.endswith(b"\n"):
        start = f.tell() - length
        while len(piece) == _PIECE and not piece.endswith(b"\n") and length <= MAX_LINE:
            piece = f.readline(_PIECE)
            length += len(piece)
        if length <= MAX_LINE:
            f.seek(start)
            piece = f.read(length)
    if length > MAX_LINE:
        raise BundleError(
            f"{path}:{number}: the line is longer than {MAX_LINE:,} bytes, the most a "
            "bundle line may be"
        )
    return piece


def _item(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    """One line as a JSON object. A blob line's data is decoded to bytes, or replaced by
    why it cannot be (a string, which `blob_of` refuses); a blob line as export writes it
    is decoded from `raw` itself, without parsing its base64 into a string first."""
    end = len(raw) - raw.endswith(b"\n")
    head = _BLOB_HEAD.match(raw, 0, end)
    if head is not None and raw.endswith(_BLOB_TAIL, head.end(), end):
        with memoryview(raw) as view:
            try:
                data = binascii.a2b_base64(
                    view[head.end() : end - len(_BLOB_TAIL)], strict_mode=True
                )
            except binascii.Error:
                pass  # not as export writes it: read as JSON below, which says why
            else:
                return {"blob": head[1].decode("ascii"), "data": data}
    try:
        item = json.loads(raw)
    except RecursionError as exc:
        raise BundleError(f"{path}:{number}: nests too deeply to parse") from exc
    except ValueError as exc:
        raise BundleError(f"{path}:{number}: not JSON: {words(exc)}") from exc
    if not isinstance(item, dict):
        raise BundleError(f"{path}:{number}: not a JSON object")
    if kind_of(item) == "blob":
        try:
            item["data"] = binascii.a2b_base64(item["data"], strict_mode=True)
        except (KeyError, TypeError, ValueError) as exc:  # binascii.Error is a ValueError
            item["data"] = words(exc)
    return item


def line_of(item: dict[str, Any]) -> bytes:
    return canonical_json(item) + b"\n"


FORMAT = "addressable-bundle"
VERSION = 1
_ID = re.compile(f"[0-9a-f]{{{ID_LENGTH}}}")
_NONCE_LENGTH = 32  # hex characters: the 16 random bytes of an Action's id
_NONCE = re.compile(f"[0-9a-f]{{{_NONCE_LENGTH}}}")
# How far past the importing machine's clock a record's time or a sighting may be: the
# clocks of two machines differ. Later is refused: the last sighting says how fresh a
# record is, and one in the year 9999 would keep a read fresh for ever (`require_fresh`,
# an Api write that `depends_on` it).
CLOCK_SKEW = timedelta(days=1)


class BundleSummary(BaseModel):
    """What an export wrote or an import took in."""

    records: int
    blobs: int  # payloads written; on import, those of the records it added
    skipped: int = 0  # records the importing store already had
    left_out: list[str] = []  # on export with skip_damaged: the damaged records' ids


def export_bundle(store: Store, out: IO[bytes], *, skip_damaged: bool = False) -> BundleSummary:
    """Write every record and payload of `store` to `out`; a damaged record or payload
    raises `IntegrityError` rather than be exported. With `skip_damaged`, the damaged
    records (unreadable, or their payload gone or not matching its hash) are left out,
    named in `left_out`, and the others written (their payloads are then read twice:
    checked before any record line is written, and written)."""
    left_out: list[str] = []
    records = sorted(store.records(damaged=left_out if skip_damaged else None), key=lambda r: r.id)
    if skip_damaged:
        bad = set()
        for digest, record in {r.content_hash: r for r in records}.items():
            try:
                store.read(record)
            except IntegrityError:
                bad.add(digest)
        left_out += [r.id for r in records if r.content_hash in bad]
        records = [r for r in records if r.content_hash not in bad]
        left_out.sort()
    out.write(line_of({"format": FORMAT, "version": VERSION}))
    for record in records:
        pin = store.pin_info(record.id)  # as held, ended or not: nothing depends on when
        line: dict[str, Any] = {
            "record": record.model_dump(mode="json"),
            "observations": [o.model_dump(mode="json") for o in store.observations(record.id)[1:]],
            "pinned": pin is not None,
        }
        if pin is not None:  # `under` only where a user pin was put over another
            line["pin"] = pin.model_dump(mode="json", exclude=None if pin.under else {"under"})
        out.write(line_of(line))
    by_hash = {r.content_hash: r for r in records}
    for digest in sorted(by_hash):
        data = store.read(by_hash[digest])
        out.write(line_of({"blob": digest, "data": base64.b64encode(data).decode("ascii")}))
    out.write(line_of({"end": True, "records": len(records), "blobs": len(by_hash)}))
    return BundleSummary(records=len(records), blobs=len(by_hash), left_out=left_out)


def import_bundle(store: Store, path: str | Path) -> BundleSummary:
    """Add the records and payloads of the bundle at `path` to `store`.

    The file is read twice: once to check all of it, then to write. A bundle with any
    line the store could not take as it is (malformed, longer than `MAX_LINE`, untrue to
    its ids or hashes, timed more than `CLOCK_SKEW` past now: docs/security.md, "Bundles
    and the store", lists them) is refused whole with a `BundleError` naming the line,
    and nothing is written. Records the store already has gain only the sightings they
    lack: importing the same bundle twice adds nothing. A record's token count is kept
    only for a payload the store has not counted. Pins come back as they were exported,
    joined to a pin the store holds as `Store.pin` joins them. Each record written is
    marked as one that came in a bundle (`Store.mark_imported`).
    """
    path = Path(path)
    entries, blobs = _check(store, path)
    imported = skipped = 0
    read_again = 0
    brought: set[str] = set()  # the payloads of the records imported
    for number, item in lines(path, only=blobs):
        digest, data = blob_of(path, number, item)
        if digest != blobs[number] or content_hash(data) != digest:
            # Not the bytes checked: the file was changed between the two readings.
            raise BundleError(f"{path}:{number}: the bundle changed while it was imported")
        read_again += 1
        for entry in entries.get(digest, []):
            record = entry.record
            if _held(store, record.id) is None and store.put(_uncounted(record), data):
                store.mark_imported(record.id)
                imported += 1
                brought.add(digest)
                _count(store, record)
            else:
                skipped += 1
            known = {(o.at, o.session) for o in store.observations(record.id)}
            for sighting in (
                Observation(at=record.observed_at, session=record.session),
                *entry.observations,
            ):
                if (sighting.at, sighting.session) not in known:
                    store.add_observation(record.id, sighting)
                    known.add((sighting.at, sighting.session))
            if entry.pin is not None:
                _restore(store, record.id, entry.pin)
    if read_again != len(blobs):  # cut short since it was checked
        raise BundleError(
            f"{path}: the bundle changed while it was imported: {len(blobs) - read_again} of "
            f"its {len(blobs)} payloads were no longer there ({imported} records written)"
        )
    return BundleSummary(records=imported, blobs=len(brought), skipped=skipped)


class _Entry(NamedTuple):
    number: int  # the line of the bundle it came from
    record: Record
    observations: list[Observation]
    pin: Pin | None


def _check(store: Store, path: Path) -> tuple[dict[str, list[_Entry]], dict[int, str]]:
    """Every entry by content hash, and the hash of every blob line by its line number;
    or `BundleError`."""
    entries: dict[str, list[_Entry]] = {}
    sizes: dict[str, int] = {}
    lines_of: dict[str, int] = {}  # record id -> the line that gave it
    blobs: dict[int, str] = {}  # blob line -> the hash it gives
    blob_lines: dict[str, int] = {}  # hash -> the blob line that gave it
    ended = False
    count = 0
    for number, item in lines(path):
        where = f"{path}:{number}"
        kind = kind_of(item)
        if ended:
            raise BundleError(f"{where}: content after the end line")
        if number == 1:
            if item.get("format") != FORMAT or item.get("version") != VERSION:
                raise BundleError(f"{path} is not an addressable bundle of version {VERSION}")
        elif kind == "record":
            entry = _entry(store, where, number, item)
            first = lines_of.setdefault(entry.record.id, number)
            if first != number:
                raise BundleError(
                    f"{where}: duplicate id {entry.record.id}, already given on line {first}"
                )
            entries.setdefault(entry.record.content_hash, []).append(entry)
            count += 1
        elif kind == "blob":
            digest, data = blob_of(path, number, item)
            if content_hash(data) != digest:
                raise BundleError(f"{where}: blob {digest[:16]} does not match its hash")
            first = blob_lines.setdefault(digest, number)
            if first != number:
                raise BundleError(
                    f"{where}: duplicate blob {digest[:16]}, already given on line {first}"
                )
            sizes[digest], blobs[number] = len(data), digest
        elif kind == "end":
            if item.get("records") != count or item.get("blobs") != len(sizes):
                raise BundleError(f"{where}: the end line's counts do not match the file")
            ended = True
        else:
            raise BundleError(f"{where}: unknown line")
    if not ended:
        raise BundleError(f"{path} is truncated: it has no end line")
    for digest, group in entries.items():
        for entry in group:
            where, record = f"{path}:{entry.number}", entry.record
            if digest not in sizes:
                raise BundleError(f"{where}: the payload of {record.id} is not in the bundle")
            if record.size != sizes[digest]:
                raise BundleError(
                    f"{where}: record {record.id} gives size {record.size}, but its payload "
                    f"is {sizes[digest]} bytes"
                )
    _settles_only_its_own(store, path, entries, lines_of)
    return entries, blobs


def _settles_only_its_own(
    store: Store, path: Path, entries: dict[str, list[_Entry]], lines_of: dict[str, int]
) -> None:
    """`BundleError` for the first record whose meta names an Action the store holds and
    the bundle does not bring. Record ids cover neither meta nor outcome, so a read that
    says it verifies such an action (`Report.VERIFIES`) would settle its outcome with
    whatever the bundle's author wrote: say `not_applied` of a payment that went through.
    The store finds a verification by the ids its meta's values name (`refers_to`), so
    every one of them is checked, not `verifies` alone. An action in neither the bundle
    nor the store is settled by nothing here: it is let be."""
    for entry in sorted((e for group in entries.values() for e in group), key=lambda e: e.number):
        record = entry.record
        for value in refs(record):  # the ids its meta names, as the store finds them
            if value in lines_of:
                continue
            held = _held(store, value)
            if held is not None and held.is_action:
                name = next(k for k, v in record.meta.items() if v == value)
                raise BundleError(
                    f"{path}:{entry.number}: record {record.id} names the action {value} "
                    f"(meta {words(repr(name))}), which this store holds and the bundle "
                    "does not bring: a bundle settles only the actions it brings"
                )


def _entry(store: Store, where: str, number: int, item: dict[str, Any]) -> _Entry:
    """One record line, checked against itself and against what the store holds."""
    try:
        record = Record.model_validate(item["record"])
        observations = [Observation.model_validate(o) for o in item["observations"]]
        record.model_dump_json()  # what a store writes: it must serialise
    except ValidationError as exc:
        raise BundleError(f"{where}: malformed record: {one_line(exc)}") from exc
    except (KeyError, TypeError) as exc:
        raise BundleError(f"{where}: malformed record: {words(exc)}") from exc
    except (ValueError, RecursionError) as exc:
        raise BundleError(
            f"{where}: the record cannot be stored (nested too deeply, or text that is not "
            f"Unicode): {words(exc)}"
        ) from exc
    pin = _pin(where, item)
    sightings = [("observed_at", record.observed_at)]
    sightings += [("an observation", o.at) for o in observations]
    for name, when in [
        *sightings,
        *([("the pin's until", pin.until)] if pin is not None and pin.until is not None else []),
    ]:
        if when.utcoffset() is None:
            raise BundleError(
                f"{where}: {name} {when.isoformat()} has no time zone; bundle times must be "
                "timezone-aware (for example 2026-03-11T09:00:00+00:00)"
            )
        if not _in_utc(when):
            raise BundleError(
                f"{where}: {name} {when.isoformat()} is no time in UTC (it falls past the "
                "year 9999 or before the year 1 there)"
            )
    latest = datetime.now(UTC) + CLOCK_SKEW
    for name, when in sightings:
        if when > latest:
            raise BundleError(
                f"{where}: {name} {when.isoformat()} is in the future (past now by more "
                f"than {CLOCK_SKEW.days} day): a record seen then would never be stale"
            )
    if not _ID.fullmatch(record.id):
        raise BundleError(
            f"{where}: {record.id[:40]!r} is not a result id: "
            f"ids are {ID_LENGTH} lowercase hex characters"
        )
    if record.is_action and (record.nonce is None or not _NONCE.fullmatch(record.nonce)):
        # Without its nonce an Action's id cannot be checked, and an id that cannot be
        # checked could be one a later result will get: refused.
        raise BundleError(
            f"{where}: the action {record.id} has no nonce ({_NONCE_LENGTH} lowercase hex), "
            "so its id cannot be checked"
        )
    if not record.is_action and record.nonce is not None:
        raise BundleError(f"{where}: {record.id} is a result: it carries no nonce")
    try:
        derived = record.derived_id()
    except (ValueError, RecursionError) as exc:  # ArgumentError is a ValueError
        raise BundleError(
            f"{where}: the args of {record.id} are not canonical JSON: {words(exc)}"
        ) from exc
    if derived != record.id:
        raise BundleError(
            f"{where}: the id {record.id} does not follow from the record's tool, args, key, "
            f"content hash and nonce (they give {derived}): the record was altered"
        )
    held = _held(store, record.id)
    if held is not None and _call(held) != _call(record):
        raise BundleError(
            f"{where}: the store already holds {record.id} for another call "
            f"({held.tool} {held.key or ''}); the bundle's record would not be the one replayed"
        )
    return _Entry(number, record, observations, pin)


def _in_utc(when: datetime) -> bool:
    """Whether an aware time is also a time in UTC: 9999-12-31T23:00:00-14:00 is not (it
    is in the year 10000 there), and what shows times in UTC could not show it."""
    try:
        when.astimezone(UTC)
    except OverflowError:
        return False
    return True


def _pin(where: str, item: dict[str, Any]) -> Pin | None:
    """The pin a record line gives: its "pin"; None when it is not pinned. A pin the
    store would refuse, or a line pinned without one, is a `BundleError`."""
    pinned = item.get("pinned", False)
    if not isinstance(pinned, bool):
        raise BundleError(
            f"{where}: malformed record: pinned is {words(repr(pinned))}, not true or false"
        )
    given = item.get("pin")
    if given is None:
        if pinned:
            raise BundleError(f"{where}: malformed pin: pinned is true, but it gives no pin")
        return None
    try:
        pin = Pin.model_validate(given)
    except ValidationError as exc:
        raise BundleError(f"{where}: malformed pin: {one_line(exc)}") from exc
    if not pinned:
        problem = "it gives a pin, but pinned is false"
    elif not pin.reason.isidentifier():
        problem = f"its reason must be a word, not {words(repr(pin.reason))}"
    elif pin.reason == USER_PIN and (pin.sessions or pin.until is not None):
        problem = "a user pin lasts until unpinned: it has no sessions or until"
    elif not all(pin.sessions):
        problem = "its sessions must be named"
    elif pin.under is not None and (
        pin.reason != USER_PIN
        or pin.under.under is not None
        or pin.under.reason == USER_PIN
        or not pin.under.reason.isidentifier()
        or not all(pin.under.sessions)
    ):
        problem = "only a user pin is put over another, a pin that is not a user's"
    else:
        return pin
    raise BundleError(f"{where}: malformed pin: {problem}")


def _restore(store: Store, record_id: str, pin: Pin) -> None:
    """Pin the record as `pin` says: one pin per session, which `Store.pin` joins."""
    if pin.reason == USER_PIN:
        if pin.under is not None:
            _restore(store, record_id, pin.under)
        store.pin(record_id)
        return
    sessions: list[str | None] = [*pin.sessions] or [None]
    for session in sessions:
        store.pin(record_id, reason=pin.reason, session=session, until=pin.until)


def _uncounted(record: Record) -> Record:
    """The record without its token count: a store keeps one count a payload, shared by
    every record of it, and `put` would write the bundle's over the one it holds."""
    return record if record.tokens is None else record.model_copy(update={"tokens": None})


def _count(store: Store, record: Record) -> None:
    """Keep the bundle's token count of a record just imported, unless the store already
    counted its payload: a count the store holds is never replaced by a bundle's."""
    if record.tokens is not None and store.get(record.id).tokens is None:
        store.set_tokens(record.content_hash, record.tokens)


def _held(store: Store, record_id: str) -> Record | None:
    """The store's record with this id, if it has one (an expired id has none)."""
    try:
        return store.get(record_id)
    except NotFound:
        return None


def _call(record: Record) -> tuple[object, ...]:
    """What makes two records the same call with the same result."""
    return (record.tool, record.args, record.key, record.content_hash, record.determinism)
