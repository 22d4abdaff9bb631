"""Export and import: a store's contents as one self-contained, reproducible file.

A bundle is JSON lines, each line canonical JSON:

    {"format": "addressable-bundle", "version": 1}
    {"record": {...}, "observations": [...], "pinned": false}     one per record, by id
    {"blob": "<blake3>", "data": "<base64>"}                     one per payload, by hash
    {"end": true, "records": N, "blobs": M}

Nothing in it depends on when or where it was written, so exporting, importing into an
empty store and exporting again gives the same bytes. The end line makes a truncated
bundle detectable; import checks the whole file before it writes anything.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ValidationError

from ._errors import BundleError
from ._models import Observation, Record
from ._stores import Store
from .ids import canonical_json, content_hash

FORMAT = "addressable-bundle"
VERSION = 1


class BundleSummary(BaseModel):
    """What an export wrote or an import took in."""

    records: int
    blobs: int
    skipped: int = 0  # records the importing store already had


def export_bundle(store: Store, out: IO[bytes]) -> BundleSummary:
    """Write every record and payload of `store` to `out`; damaged payloads raise
    `IntegrityError` rather than be exported."""
    records = sorted(store.records(), key=lambda r: r.id)
    out.write(_line({"format": FORMAT, "version": VERSION}))
    for record in records:
        out.write(
            _line(
                {
                    "record": record.model_dump(mode="json"),
                    "observations": [
                        o.model_dump(mode="json") for o in store.observations(record.id)[1:]
                    ],
                    "pinned": store.is_pinned(record.id),
                }
            )
        )
    by_hash = {r.content_hash: r for r in records}
    for digest in sorted(by_hash):
        data = store.read(by_hash[digest])
        out.write(_line({"blob": digest, "data": base64.b64encode(data).decode("ascii")}))
    out.write(_line({"end": True, "records": len(records), "blobs": len(by_hash)}))
    return BundleSummary(records=len(records), blobs=len(by_hash))


def import_bundle(store: Store, path: str | Path) -> BundleSummary:
    """Add the records and payloads of the bundle at `path` to `store`.

    The file is read twice: once to check all of it (structure, every hash, the end
    line), then to write. A bad bundle raises `BundleError` and writes nothing.
    Records the store already has keep theirs, and gain any observations they lacked.
    """
    path = Path(path)
    entries, hashes = _check(path)
    imported = skipped = 0
    for digest, data in _blobs(path):
        for record, observations, pinned in entries.get(digest, []):
            if store.put(record, data):
                imported += 1
            else:
                skipped += 1
            known = {o.at for o in store.observations(record.id)}
            for observation in observations:
                if observation.at not in known:
                    store.add_observation(record.id, observation)
            if pinned:
                store.pin(record.id)
    return BundleSummary(records=imported, blobs=len(hashes), skipped=skipped)


_Entry = tuple[Record, list[Observation], bool]


def _check(path: Path) -> tuple[dict[str, list[_Entry]], set[str]]:
    entries: dict[str, list[_Entry]] = {}
    hashes: set[str] = set()
    ended = False
    count = 0
    for number, item in _lines(path):
        if ended:
            raise BundleError(f"{path}:{number}: content after the end line")
        if number == 1:
            if item.get("format") != FORMAT or item.get("version") != VERSION:
                raise BundleError(f"{path} is not an addressable bundle of version {VERSION}")
        elif "record" in item:
            try:
                record = Record.model_validate(item["record"])
                observations = [Observation.model_validate(o) for o in item["observations"]]
            except (ValidationError, KeyError, TypeError) as exc:
                raise BundleError(f"{path}:{number}: malformed record: {exc}") from exc
            entries.setdefault(record.content_hash, []).append(
                (record, observations, bool(item.get("pinned")))
            )
            count += 1
        elif "blob" in item:
            digest, data = _blob(path, number, item)
            if content_hash(data) != digest:
                raise BundleError(f"{path}:{number}: blob {digest[:16]} does not match its hash")
            hashes.add(digest)
        elif item.get("end") is True:
            if item.get("records") != count or item.get("blobs") != len(hashes):
                raise BundleError(f"{path}:{number}: the end line's counts do not match the file")
            ended = True
        else:
            raise BundleError(f"{path}:{number}: unknown line")
    if not ended:
        raise BundleError(f"{path} is truncated: it has no end line")
    missing = set(entries) - hashes
    if missing:
        raise BundleError(f"{path} lacks the payloads of {len(missing)} records")
    return entries, hashes


def _blobs(path: Path) -> Iterator[tuple[str, bytes]]:
    for number, item in _lines(path):
        if "blob" in item:
            yield _blob(path, number, item)


def _blob(path: Path, number: int, item: dict[str, Any]) -> tuple[str, bytes]:
    try:
        return str(item["blob"]), base64.b64decode(item["data"], validate=True)
    except (KeyError, TypeError, binascii.Error) as exc:
        raise BundleError(f"{path}:{number}: malformed blob line: {exc}") from exc


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with path.open("rb") as f:
            for number, raw in enumerate(f, start=1):
                try:
                    item = json.loads(raw)
                except ValueError as exc:
                    raise BundleError(f"{path}:{number}: not JSON: {exc}") from exc
                if not isinstance(item, dict):
                    raise BundleError(f"{path}:{number}: not a JSON object")
                yield number, item
    except OSError as exc:
        raise BundleError(f"cannot read bundle {path}: {exc}") from exc


def _line(item: dict[str, Any]) -> bytes:
    return canonical_json(item) + b"\n"
